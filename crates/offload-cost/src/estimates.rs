//! Reading criterion's own results, so that no figure in the report is copied by hand.
//!
//! For every benchmark criterion writes
//! `<criterion dir>/<group>/<function>/new/estimates.json`: for each statistic (mean, median,
//! ...) a point estimate and a bootstrap confidence interval, all in nanoseconds per
//! iteration. We report the median: the typical iteration, which a few slow samples (a
//! context switch, another process on one of the two cores) move less than the mean.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Case, Runtime};

/// One statistic as criterion estimated it, in nanoseconds per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Estimate {
    pub point_estimate: f64,
    pub confidence_interval: ConfidenceInterval,
}

/// The bootstrap confidence interval around a point estimate.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct ConfidenceInterval {
    /// 0.95 unless criterion was told otherwise.
    pub confidence_level: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
}

impl Estimate {
    /// The same estimate for one of `n` equal parts, e.g. per offload of a batch of 64.
    pub fn per(self, n: usize) -> Estimate {
        let n = n as f64;
        Estimate {
            point_estimate: self.point_estimate / n,
            confidence_interval: ConfidenceInterval {
                lower_bound: self.confidence_interval.lower_bound / n,
                upper_bound: self.confidence_interval.upper_bound / n,
                ..self.confidence_interval
            },
        }
    }
}

/// The part of `estimates.json` we read; serde skips the other statistics.
#[derive(Deserialize)]
struct Estimates {
    median: Estimate,
}

/// The median of one benchmark, from the text of its `estimates.json`.
pub fn parse_median(json: &str) -> serde_json::Result<Estimate> {
    serde_json::from_str::<Estimates>(json).map(|estimates| estimates.median)
}

/// Where criterion writes the estimates of the latest run of one benchmark.
///
/// Our ids contain none of the characters criterion replaces in directory names
/// (`/`, `:`, `*`, ...), so the path is the ids as they are.
pub fn estimates_path(criterion_dir: &Path, case: Case, runtime: Runtime) -> PathBuf {
    criterion_dir
        .join(case.id())
        .join(runtime.id())
        .join("new")
        .join("estimates.json")
}

/// The median of one benchmark, read from its `estimates.json` under `criterion_dir`.
pub fn read_median(criterion_dir: &Path, case: Case, runtime: Runtime) -> Result<Estimate, Error> {
    read_median_at(estimates_path(criterion_dir, case, runtime))
}

/// The median in the `estimates.json` at `path`.
pub fn read_median_at(path: PathBuf) -> Result<Estimate, Error> {
    let json = std::fs::read_to_string(&path).map_err(|source| Error::Unreadable {
        path: path.clone(),
        source,
    })?;
    parse_median(&json).map_err(|source| Error::Malformed { path, source })
}

/// Why a benchmark's estimates could not be read.
#[derive(Debug)]
pub enum Error {
    /// Missing, most likely: the benchmark has not run, or ran with another target dir.
    Unreadable { path: PathBuf, source: io::Error },
    /// Not criterion's format, or not the version of it we know.
    Malformed {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unreadable { path, source } => write!(
                f,
                "cannot read {}: {source} (run `cargo bench -p offload-cost` first, with the \
                 same CARGO_TARGET_DIR)",
                path.display()
            ),
            Error::Malformed { path, source } => write!(
                f,
                "{} is not a criterion estimates file we understand: {source}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Unreadable { source, .. } => Some(source),
            Error::Malformed { source, .. } => Some(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `estimates.json` as criterion 0.8 writes it (one line there, spread out here).
    const CRITERION_ESTIMATES: &str = r#"{
        "mean": {"confidence_interval": {"confidence_level": 0.95, "lower_bound": 10400.1,
                 "upper_bound": 11800.9}, "point_estimate": 11050.5, "standard_error": 360.2},
        "median": {"confidence_interval": {"confidence_level": 0.95, "lower_bound": 10150.0,
                   "upper_bound": 10420.5}, "point_estimate": 10283.25, "standard_error": 70.1},
        "median_abs_dev": {"confidence_interval": {"confidence_level": 0.95,
                           "lower_bound": 180.0, "upper_bound": 420.0},
                           "point_estimate": 300.0, "standard_error": 61.0},
        "slope": null,
        "std_dev": {"confidence_interval": {"confidence_level": 0.95, "lower_bound": 900.0,
                    "upper_bound": 3100.0}, "point_estimate": 2500.0, "standard_error": 560.0}
    }"#;

    #[test]
    fn reads_the_median_and_its_interval() {
        let median = parse_median(CRITERION_ESTIMATES).unwrap();
        assert_eq!(
            median,
            Estimate {
                point_estimate: 10283.25,
                confidence_interval: ConfidenceInterval {
                    confidence_level: 0.95,
                    lower_bound: 10150.0,
                    upper_bound: 10420.5,
                },
            }
        );
    }

    #[test]
    fn a_file_without_a_median_is_an_error() {
        let err = parse_median(r#"{"mean": {"point_estimate": 1.0}}"#).unwrap_err();
        assert!(err.to_string().contains("median"), "{err}");
    }

    #[test]
    fn per_part_divides_the_estimate_and_its_bounds_not_the_level() {
        let batch = parse_median(CRITERION_ESTIMATES).unwrap();
        let one = batch.per(4);
        assert_eq!(one.point_estimate, 10283.25 / 4.0);
        assert_eq!(one.confidence_interval.lower_bound, 10150.0 / 4.0);
        assert_eq!(one.confidence_interval.upper_bound, 10420.5 / 4.0);
        assert_eq!(one.confidence_interval.confidence_level, 0.95);
    }

    #[test]
    fn the_path_is_group_then_function_then_new() {
        let path = estimates_path(Path::new("target/criterion"), Case::InFlight, Runtime::Smol);
        assert_eq!(
            path,
            Path::new("target/criterion/offload-64/smol/new/estimates.json")
        );
    }

    #[test]
    fn a_missing_file_says_which_and_what_to_run() {
        let dir = Path::new("/nonexistent/criterion");
        let err = read_median(dir, Case::OneOffload, Runtime::Tokio).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("/nonexistent/criterion/offload-1/tokio/new/estimates.json"),
            "{message}"
        );
        assert!(message.contains("cargo bench -p offload-cost"), "{message}");
    }
}
