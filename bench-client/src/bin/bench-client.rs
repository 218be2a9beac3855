//! `bench-client`: the full comparison by default; `--help` explains the experiment.

use std::path::Path;
use std::process::ExitCode;

use bench_client::cli::{Cli, Command};
use bench_client::command::{self, Ran};
use bench_client::progress::Progress;
use bench_client::{job, stale};
use clap::Parser as _;
use tokio::signal::unix::{SignalKind, signal};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Each burst request holds a socket here and one in the server: 10,000 of them need more
    // open files than the usual soft limit of 1024. Raise ours to the hard limit; the servers
    // we spawn inherit it.
    if let Err(error) = rlimit::increase_nofile_limit(u64::MAX) {
        eprintln!(
            "bench-client: cannot raise the open-file limit ({error}); large bursts may fail"
        );
    }
    if let Some(Command::Redraw(args)) = &cli.command {
        return exit(command::redraw(args).map(|()| 0));
    }
    // Two workers: the pinger's answers are read promptly while the burst is in flight.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(until_signalled(async {
        match &cli.command {
            Some(Command::All(args)) => {
                let done = match args.stale {
                    true => stale::run(Path::new(".")).await,
                    false => job::run().await,
                };
                Ok(done.iter().filter(|done| !done.complete()).count())
            }
            _ => run_one(&cli).await,
        }
    }))
}

/// One experiment, shown in a progress view of its own.
async fn run_one(cli: &Cli) -> Result<usize, String> {
    let planned = command::plan(cli).expect("a command that measures");
    let mut progress = Progress::single(planned.stage(command::title(cli)));
    let ran = planned.run(command_line(), &mut progress, true).await;
    progress.finish();
    let Ran { wrote, failures } = ran?;
    eprintln!("wrote {wrote}");
    Ok(failures)
}

/// Runs `work` unless SIGINT or SIGTERM comes first. Leaving early drops every spawned
/// server, which stops it: none is left behind, and results/ keeps its previous, complete
/// files.
async fn until_signalled(work: impl Future<Output = Result<usize, String>>) -> ExitCode {
    let (mut interrupt, mut terminate) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(interrupt), Ok(terminate)) => (interrupt, terminate),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("bench-client: cannot handle signals: {error}");
            return ExitCode::FAILURE;
        }
    };
    tokio::select! {
        outcome = work => exit(outcome),
        _ = interrupt.recv() => interrupted("SIGINT", 130),
        _ = terminate.recv() => interrupted("SIGTERM", 143),
    }
}

/// Success if nothing failed; the error, or how many targets failed, otherwise.
fn exit(outcome: Result<usize, String>) -> ExitCode {
    match outcome {
        Ok(0) => ExitCode::SUCCESS,
        Ok(failed) => {
            eprintln!("bench-client: {failed} failed (see the report)");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("bench-client: {error}");
            ExitCode::FAILURE
        }
    }
}

fn interrupted(signal: &str, code: u8) -> ExitCode {
    eprintln!("\nbench-client: {signal}: servers stopped, nothing more written");
    ExitCode::from(code)
}

/// How this process was invoked, for the reports.
fn command_line() -> String {
    std::iter::once("bench-client".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}
