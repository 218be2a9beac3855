//! Turns a finished `cargo bench -p reactor-watch` run into `results/poll-cost.md`.
//!
//! Every figure comes from criterion's own `estimates.json` files; the environment header is
//! the one every results file of the project carries.

use std::path::PathBuf;
use std::process::ExitCode;

use bench_client::experiments::current_stamp;
use burst_meter::environment::Environment;
use clap::Parser;
use offload_cost::poll_cost::{self, Medians};
use offload_cost::report;

/// Writes results/poll-cost.md from criterion's output of reactor-watch's bench.
#[derive(Debug, Parser)]
struct Args {
    /// Where criterion wrote its results: `<CARGO_TARGET_DIR>/criterion`.
    #[arg(long, default_value = "target/criterion")]
    criterion_dir: PathBuf,
    /// The Markdown file to (re)write.
    #[arg(long, default_value = "results/poll-cost.md")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let medians = match Medians::read(&args.criterion_dir) {
        Ok(medians) => medians,
        Err(err) => {
            eprintln!("poll-cost-report: {err}");
            return ExitCode::FAILURE;
        }
    };
    let text = poll_cost::render(
        &Environment::with_stamp(current_stamp(
            &bench_client::experiments::scripts::POLL_COST.code,
        ))
        .to_markdown(),
        report::load_average().as_deref(),
        &report::shown(&args.criterion_dir),
        &medians,
    );
    if let Err(err) = report::write_atomically(&args.out, &text) {
        eprintln!(
            "poll-cost-report: cannot write {}: {err}",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    eprintln!("poll-cost-report: wrote {}", args.out.display());
    ExitCode::SUCCESS
}
