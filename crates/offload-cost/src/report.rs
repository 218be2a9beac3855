//! `results/offload-cost.md`: criterion's medians as one table, runtime × case.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::Path;

use crate::estimates::{self, Estimate};
use crate::{Case, IN_FLIGHT, Runtime, SETTINGS};

/// One runtime's medians, one per case in [`Case::ALL`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub runtime: Runtime,
    pub medians: Vec<Estimate>,
}

/// Every runtime's row, read from criterion's files under `criterion_dir`. Fails on the
/// first missing benchmark: a table with holes would look complete at a glance.
pub fn read_rows(criterion_dir: &Path) -> Result<Vec<Row>, estimates::Error> {
    Runtime::ALL
        .into_iter()
        .map(|runtime| {
            let medians = Case::ALL
                .into_iter()
                .map(|case| estimates::read_median(criterion_dir, case, runtime))
                .collect::<Result<_, _>>()?;
            Ok(Row { runtime, medians })
        })
        .collect()
}

/// What goes around the table.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    /// The machine and build, as `burst_meter::environment::Environment::to_markdown` lists
    /// them for every results file.
    pub environment: &'a str,
    /// `/proc/loadavg`'s three averages when the report was written, right after the run, if
    /// known: the run shares the cores with whatever else was running, and this hints at how
    /// much else there was.
    pub load_average: Option<&'a str>,
    /// Where criterion's files were read, for a reader who wants the raw samples.
    pub criterion_dir: &'a str,
    pub rows: &'a [Row],
}

/// The whole Markdown file: what it is, then one section per heading.
pub fn render(report: &Report<'_>) -> String {
    [
        INTRODUCTION.to_owned(),
        environment(report),
        how_it_was_measured(report.criterion_dir),
        results(report.rows),
        READING_NOTES.to_owned(),
    ]
    .concat()
}

/// The title and what the file is.
const INTRODUCTION: &str = "# The price of offloading\n\n\
    What one trip to the blocking pool and back costs on each runtime the demo servers use, \
    beside two baselines: awaiting an already-ready future, and a zero-length timer. Written \
    by `scripts/offload-cost.sh` from criterion's own output files; rerun it rather than edit \
    the figures.\n\n";

/// `## Environment`: the machine and build, and the load right after the run.
fn environment(report: &Report<'_>) -> String {
    let mut out = format!("## Environment\n\n{}", report.environment);
    if let Some(load) = report.load_average {
        let _ = writeln!(
            out,
            "- load average (1, 5, 15 min) right after the run: {load} (the bench's own threads \
             count in it; far above the core count means other work shared the CPU)"
        );
    }
    out
}

/// `## How it was measured`: each runtime's setup, what is timed, and criterion's settings.
fn how_it_was_measured(criterion_dir: &str) -> String {
    let mut out = "\n## How it was measured\n\n\
        - Each runtime gets one reactor thread, set up as its demo server sets it up with \
        `--threads 1`:\n"
        .to_owned();
    for runtime in Runtime::ALL {
        let _ = writeln!(
            out,
            "  - **{}**: {}; offload {}; timer {}.",
            runtime.id(),
            runtime.reactor(),
            runtime.offload(),
            runtime.timer()
        );
    }
    let _ = write!(
        out,
        "- Every iteration runs inside a task on that reactor thread, like a request handler. \
         The clock starts and stops inside the task, so handing the task over and its result \
         back is not counted, and the runtime is built once, before any timing.\n\
         - The offloaded closure does nothing: the figures are the trip alone. criterion's \
         warm-up leaves the pool with idle threads, and the in-flight case starts all {IN_FLIGHT} \
         offloads before it awaits the first.\n\
         - criterion: {warm_up} s warm-up, {measurement} s measurement, {samples} samples per \
         benchmark. Raw data: `{criterion_dir}/<case>/<runtime>/new/`.\n",
        warm_up = SETTINGS.warm_up.as_secs_f64(),
        measurement = SETTINGS.measurement.as_secs_f64(),
        samples = SETTINGS.sample_size,
    );
    out
}

/// `## Results`: how to read a cell, then the table.
fn results(rows: &[Row]) -> String {
    let level = rows
        .first()
        .and_then(|row| row.medians.first())
        .map_or(0.95, |median| median.confidence_interval.confidence_level);
    format!(
        "\n## Results\n\n\
         Median time per iteration; in brackets, criterion's {:.0} % confidence interval of \
         that median. \"per offload\" is the {IN_FLIGHT}-in-flight median divided by \
         {IN_FLIGHT}.\n\n{}",
        level * 100.0,
        table(rows),
    )
}

/// What the figures do not say by themselves: facts from the runtimes' sources, no numbers.
const READING_NOTES: &str = "
## Reading the table

- tokio's timer, and so actix-web's, counts in whole milliseconds: a zero-length sleep is \
rounded up to the next tick, and the reactor parks until that tick comes. async-io's timer \
(under async-std and smol) finds its deadline already passed and is ready at the first poll.
- `async_std::task::spawn_blocking` wraps the `blocking` crate's task, the one `smol::unblock` \
returns, in one more task on the async-std executor.
- An offload is two thread hand-offs (reactor to pool thread and back), and how long a \
sleeping thread takes to wake depends on the machine. With 64 in flight the pool threads \
and the reactor rarely sleep, which is why the per-offload figure can sit far below a single \
trip.
- The intervals describe one run. Thread wake-ups vary more between runs than within one: \
rerun before reading much into small differences between runtimes.
";

/// The runtime × case table, with a per-offload column after the in-flight case.
pub fn table(rows: &[Row]) -> String {
    let mut heads = vec!["runtime".to_owned()];
    for case in Case::ALL {
        heads.push(case.title().to_owned());
        if case.offloads() > 1 {
            heads.push("per offload".to_owned());
        }
    }

    let mut out = String::new();
    let _ = writeln!(out, "| {} |", heads.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(heads.len()));
    for row in rows {
        let mut cells = vec![row.runtime.id().to_owned()];
        for (case, median) in Case::ALL.into_iter().zip(&row.medians) {
            cells.push(format_estimate(*median));
            if case.offloads() > 1 {
                cells.push(format_estimate(median.per(case.offloads())));
            }
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// `10.3 µs (10.2–10.4)`: the median and its interval, all three in the median's unit and
/// with its number of decimals, so that they read as one quantity.
pub fn format_estimate(estimate: Estimate) -> String {
    let (scale, unit) = unit_for(estimate.point_estimate);
    let value = estimate.point_estimate / scale;
    // Three significant digits for the median; the bounds follow its precision.
    let decimals = match value {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        _ => 2,
    };
    let interval = estimate.confidence_interval;
    format!(
        "{value:.decimals$} {unit} ({:.decimals$}–{:.decimals$})",
        interval.lower_bound / scale,
        interval.upper_bound / scale,
    )
}

/// The unit that puts `nanos` between 1 and 1000 (below 1 ns stays in ns).
fn unit_for(nanos: f64) -> (f64, &'static str) {
    match nanos {
        n if n >= 1e9 => (1e9, "s"),
        n if n >= 1e6 => (1e6, "ms"),
        n if n >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    }
}

/// Writes `contents` to `path` so that readers see the old file or the new one, never half
/// of either: a temporary file in the same folder (a rename is atomic only within one file
/// system), flushed to disk, then renamed over `path`.
pub fn write_atomically(path: &Path, contents: &str) -> io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(folder)?;
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the output path names no file")
    })?;
    // The process id keeps two concurrent runs from writing into the same temporary file.
    let temp = folder.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&temp);
            Err(err)
        }
    }
}

/// The 1, 5 and 15 minute load averages (Linux), e.g. `0.52 0.61 0.40`.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let averages: Vec<&str> = text.split_whitespace().take(3).collect();
    (averages.len() == 3).then(|| averages.join(" "))
}

/// `path` as a results file names it: relative to the working directory (the repository's
/// root) when it lies inside it, e.g. `target/criterion`; otherwise (a target dir outside the
/// repository) as `<cargo target dir>/` and its last part, never one machine's absolute path.
pub fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    shown_from(path, &cwd)
}

fn shown_from(path: &Path, cwd: &Path) -> String {
    if let Ok(relative) = path.strip_prefix(cwd) {
        return relative.display().to_string();
    }
    let last = path.file_name().unwrap_or_default().to_string_lossy();
    format!("<cargo target dir>/{last}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_shown_from_the_repository_or_without_the_machines_folders() {
        let repo = Path::new("/home/someone/repo");
        let inside = Path::new("/home/someone/repo/target/criterion");
        assert_eq!(shown_from(inside, repo), "target/criterion");
        let outside = Path::new("/work/main/target/criterion");
        assert_eq!(shown_from(outside, repo), "<cargo target dir>/criterion");
    }
    use crate::estimates::ConfidenceInterval;

    fn estimate(point: f64, lower: f64, upper: f64) -> Estimate {
        Estimate {
            point_estimate: point,
            confidence_interval: ConfidenceInterval {
                confidence_level: 0.95,
                lower_bound: lower,
                upper_bound: upper,
            },
        }
    }

    #[test]
    fn each_figure_gets_the_unit_of_its_median() {
        let cases = [
            (0.312, 0.31, 0.315, "0.31 ns (0.31–0.32)"),
            (812.4, 790.0, 1020.0, "812 ns (790–1020)"),
            (10_283.0, 10_150.0, 10_420.0, "10.3 µs (10.2–10.4)"),
            (1_061_000.0, 1_058_000.0, 1_064_500.0, "1.06 ms (1.06–1.06)"),
            (2.5e9, 2.4e9, 2.6e9, "2.50 s (2.40–2.60)"),
        ];
        for (point, lower, upper, expected) in cases {
            assert_eq!(format_estimate(estimate(point, lower, upper)), expected);
        }
    }

    fn rows() -> Vec<Row> {
        Runtime::ALL
            .into_iter()
            .enumerate()
            .map(|(i, runtime)| {
                let i = i as f64;
                Row {
                    runtime,
                    medians: vec![
                        estimate(0.5 + i, 0.4 + i, 0.6 + i),
                        estimate(1_000_000.0 * (i + 1.0), 990_000.0, 1_010_000.0 * (i + 1.0)),
                        estimate(20_000.0 + i, 19_500.0, 21_000.0),
                        estimate(640_000.0 * (i + 1.0), 600_000.0, 700_000.0 * (i + 1.0)),
                    ],
                }
            })
            .collect()
    }

    #[test]
    fn the_table_has_one_row_per_runtime_and_divides_the_batch() {
        assert_eq!(
            table(&rows()),
            "\
| runtime | ready future | zero-length timer | 1 offload | 64 in flight | per offload |
|---|---|---|---|---|---|
| tokio | 0.50 ns (0.40–0.60) | 1.00 ms (0.99–1.01) | 20.0 µs (19.5–21.0) | 640 µs (600–700) | 10.0 µs (9.4–10.9) |
| actix-web | 1.50 ns (1.40–1.60) | 2.00 ms (0.99–2.02) | 20.0 µs (19.5–21.0) | 1.28 ms (0.60–1.40) | 20.0 µs (9.4–21.9) |
| async-std | 2.50 ns (2.40–2.60) | 3.00 ms (0.99–3.03) | 20.0 µs (19.5–21.0) | 1.92 ms (0.60–2.10) | 30.0 µs (9.4–32.8) |
| smol | 3.50 ns (3.40–3.60) | 4.00 ms (0.99–4.04) | 20.0 µs (19.5–21.0) | 2.56 ms (0.60–2.80) | 40.0 µs (9.4–43.8) |
| compio | 4.50 ns (4.40–4.60) | 5.00 ms (0.99–5.05) | 20.0 µs (19.5–21.0) | 3.20 ms (0.60–3.50) | 50.0 µs (9.4–54.7) |
| ntex | 5.50 ns (5.40–5.60) | 6.00 ms (0.99–6.06) | 20.0 µs (19.5–21.0) | 3.84 ms (0.60–4.20) | 60.0 µs (9.4–65.6) |
"
        );
    }

    #[test]
    fn the_report_has_environment_method_and_table() {
        let rows = rows();
        let text = render(&Report {
            environment: "- date: 2026-01-01T00:00:00Z\n",
            load_average: Some("0.50 0.40 0.30"),
            criterion_dir: "target/criterion",
            rows: &rows,
        });
        assert!(text.starts_with("# The price of offloading\n"), "{text}");
        assert!(text.contains("## Environment\n\n- date: 2026-01-01T00:00:00Z\n- load average (1, 5, 15 min) right after the run: 0.50 0.40 0.30 (the bench's own threads count in it; far above the core count means other work shared the CPU)\n"), "{text}");
        assert!(text.contains("  - **smol**: own `smol::Executor` run on one thread; offload `smol::unblock`; timer `smol::Timer::after`.\n"), "{text}");
        assert!(
            text.contains("Raw data: `target/criterion/<case>/<runtime>/new/`."),
            "{text}"
        );
        assert!(
            text.contains("criterion's 95 % confidence interval"),
            "{text}"
        );
        assert!(
            text.ends_with(&format!("{}{READING_NOTES}", table(&rows))),
            "{text}"
        );
    }

    #[test]
    fn reads_every_benchmark_of_a_run() {
        let dir = scratch_dir("read-rows");
        for case in Case::ALL {
            for runtime in Runtime::ALL {
                let path = estimates::estimates_path(&dir, case, runtime);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                let json = r#"{"median":{"confidence_interval":{"confidence_level":0.95,
                    "lower_bound":1.0,"upper_bound":3.0},"point_estimate":2.0,
                    "standard_error":0.5}}"#;
                std::fs::write(path, json).unwrap();
            }
        }
        let rows = read_rows(&dir).unwrap();
        assert_eq!(
            rows.iter().map(|row| row.runtime).collect::<Vec<_>>(),
            Runtime::ALL
        );
        assert!(
            rows.iter()
                .all(|row| row.medians == [estimate(2.0, 1.0, 3.0); 4])
        );

        std::fs::remove_file(estimates::estimates_path(
            &dir,
            Case::ZeroTimer,
            Runtime::Smol,
        ))
        .unwrap();
        let err = read_rows(&dir).unwrap_err().to_string();
        assert!(err.contains("zero-timer/smol/new/estimates.json"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn writing_replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = scratch_dir("atomic");
        let path = dir.join("results").join("offload-cost.md");
        write_atomically(&path, "old\n").unwrap();
        write_atomically(&path, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["offload-cost.md"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A fresh folder of this test's own, so that tests running in parallel never meet.
    fn scratch_dir(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("offload-cost-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
