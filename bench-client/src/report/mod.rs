//! Reports: what a run measured, as records (the JSON schema), and every output made from
//! them, one module per output:
//!
//! - [`terminal`]: the original bench's block per case, as each case ends;
//! - [`tables`]: the Markdown tables, `RESULTS.md` and `SWEEP.md`;
//! - [`findings`]: plain sentences read from the figures;
//! - [`readme`]: the README's results block;
//! - [`plots`]: which figures a report draws, and from which figures;
//! - [`files`]: writing it all, atomically;
//! - [`text`]: how numbers and names are printed in all of them.

pub mod files;
pub mod findings;
pub mod plots;
pub mod readme;
pub mod tables;
pub mod terminal;
pub mod text;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use files::write_atomically;

use crate::bench::{Case, Plan};
use crate::environment::Environment;
use crate::rest::{RestPlan, RestPoint};
use crate::session::Failure;
use crate::sweep::{Point, SweepPlan};

/// Everything one comparison run produced: what `results.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub environment: Environment,
    pub plan: Plan,
    /// The command line that produced this report.
    pub command: String,
    pub cases: Vec<Case>,
    pub failures: Vec<Failure>,
    pub timing: Timing,
}

/// Where the run's time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// From start to the last server stopped.
    pub total_s: f64,
    /// The bursts' wall times added up: the sleeps themselves, as each server served them.
    pub bursts_s: f64,
    /// The protocol's fixed waits: head start and pause per case.
    pub protocol_waits_s: f64,
}

impl Timing {
    /// The share of the run that is neither a burst nor a fixed wait: starting, warming up
    /// and stopping servers, and the client's own work.
    pub fn overhead_percent(&self) -> f64 {
        let rest = self.total_s - self.bursts_s - self.protocol_waits_s;
        if self.total_s > 0.0 {
            100.0 * rest.max(0.0) / self.total_s
        } else {
            0.0
        }
    }
}

/// Everything one sweep produced: `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub environment: Environment,
    pub plan: SweepPlan,
    pub command: String,
    pub points: Vec<Point>,
    pub failures: Vec<Failure>,
}

/// Everything one at-rest run produced: `rest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestReport {
    pub environment: Environment,
    pub plan: RestPlan,
    pub command: String,
    pub points: Vec<RestPoint>,
    pub failures: Vec<Failure>,
}

impl RestReport {
    /// Writes `REST.md` and `rest.json` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let outputs = [
            ("rest.json".to_owned(), files::json(self)),
            ("REST.md".to_owned(), tables::rest_markdown(self)),
        ];
        files::write_all(dir, &outputs)
    }
}

impl Report {
    /// The targets that have cases, in the order they were measured.
    pub fn targets(&self) -> Vec<&str> {
        let mut targets: Vec<&str> = self.cases.iter().map(|case| case.target.as_str()).collect();
        targets.dedup();
        targets
    }

    /// `RESULTS.md`.
    pub fn to_markdown(&self) -> String {
        tables::results_markdown(self)
    }

    /// `results.json`: every figure and the raw samples.
    pub fn to_json(&self) -> String {
        files::json(self)
    }

    /// Writes `RESULTS.md`, `results.json`, a latency CDF per route and the timeline into
    /// `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("results.json".to_owned(), self.to_json())])?;
        self.write_views(dir)
    }

    /// Writes what is drawn from `results.json`, `RESULTS.md`, the CDFs and the timeline, into `dir`,
    /// leaving `results.json` as it is.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let mut outputs = plots::latency_cdfs(self).map_err(std::io::Error::other)?;
        if let Some(timeline) = plots::timeline(self) {
            let svg = timeline.map_err(std::io::Error::other)?;
            outputs.push((plots::TIMELINE.to_owned(), svg));
        }
        outputs.push(("RESULTS.md".to_owned(), self.to_markdown()));
        files::write_all(dir, &outputs)
    }
}

impl SweepReport {
    /// Writes `SWEEP.md`, `sweep.json` and one plot per route into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let mut outputs = plots::sweep_plots(self).map_err(std::io::Error::other)?;
        outputs.push(("sweep.json".to_owned(), files::json(self)));
        outputs.push(("SWEEP.md".to_owned(), tables::sweep_markdown(self)));
        files::write_all(dir, &outputs)
    }
}
