//! Turns a finished `cargo bench -p offload-cost` run into `results/offload-cost.md`.
//!
//! Every figure comes from criterion's own `estimates.json` files; the environment header is
//! the one every results file of the project carries.

use std::path::PathBuf;
use std::process::ExitCode;

use bench_client::experiments::current_stamp;
use burst_meter::environment::Environment;
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

    let environment = Environment::with_stamp(current_stamp(
        &bench_client::experiments::scripts::OFFLOAD_COST.code,
    ))
    .to_markdown();
    let load_average = report::load_average();
    let text = report::render(&Report {
        environment: &environment,
        load_average: load_average.as_deref(),
        criterion_dir: &report::shown(&args.criterion_dir),
        rows: &rows,
    });
    if let Err(err) = report::write_atomically(&args.out, &text) {
        eprintln!("offload-report: cannot write {}: {err}", args.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("offload-report: wrote {}", args.out.display());
    ExitCode::SUCCESS
}
