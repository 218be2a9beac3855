//! Turns a finished `cargo bench -p offload-cost` run into `results/offload-cost.md`.
//!
//! Every figure comes from criterion's own `estimates.json` files; the environment header is
//! the one every results file of the project carries.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bench_client::environment::Environment;
use clap::Parser;
use offload_cost::report::{self, Report};

/// Writes results/offload-cost.md from criterion's output of the offload-cost benches.
#[derive(Debug, Parser)]
struct Args {
    /// Where criterion wrote its results: `<CARGO_TARGET_DIR>/criterion`.
    #[arg(long, default_value = "target/criterion")]
    criterion_dir: PathBuf,
    /// The Markdown file to (re)write.
    #[arg(long, default_value = "results/offload-cost.md")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rows = match report::read_rows(&args.criterion_dir) {
        Ok(rows) => rows,
        Err(err) => {
            eprintln!("offload-report: {err}");
            return ExitCode::FAILURE;
        }
    };

    let environment = Environment::capture().to_markdown();
    let load_average = load_average();
    let text = report::render(&Report {
        environment: &environment,
        load_average: load_average.as_deref(),
        criterion_dir: &shown(&args.criterion_dir),
        rows: &rows,
    });
    if let Err(err) = report::write_atomically(&args.out, &text) {
        eprintln!("offload-report: cannot write {}: {err}", args.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("offload-report: wrote {}", args.out.display());
    ExitCode::SUCCESS
}

/// The 1, 5 and 15 minute load averages (Linux), e.g. `0.52 0.61 0.40`.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let averages: Vec<&str> = text.split_whitespace().take(3).collect();
    (averages.len() == 3).then(|| averages.join(" "))
}

/// `path` relative to the working directory when it lies inside it: the committed report
/// then names `target-…/criterion`, not one machine's absolute path.
fn shown(path: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}
