//! `bench-client`: the full comparison by default; `--help` explains the experiment. Every
//! error of the library is reported here, once.

use std::path::Path;
use std::process::ExitCode;

use bench_client::audit::Audit;
use bench_client::cli::{self, Builtin, Parsed};
use bench_client::experiments::{Entry, Planned};
use bench_client::progress::Progress;
use bench_client::{Error, job, stale};
use tokio::signal::unix::{SignalKind, signal};

fn main() -> ExitCode {
    let parsed = cli::parse();
    // Each burst request holds a socket here and one in the server: 10,000 of them need more
    // open files than the usual soft limit of 1024. Raise ours to the hard limit; the servers
    // we spawn inherit it.
    if let Err(error) = rlimit::increase_nofile_limit(u64::MAX) {
        eprintln!(
            "bench-client: cannot raise the open-file limit ({error}); large bursts may fail"
        );
    }
    if let Parsed::Builtin(Builtin::Redraw(args)) = &parsed {
        return exit(args.plan().run(Path::new(".")).map(|()| 0));
    }
    if let Parsed::Builtin(Builtin::Audit(args)) = &parsed {
        return audit(args);
    }
    if let Parsed::Builtin(Builtin::All(args)) = &parsed
        && args.plan
    {
        print!("{}", job::floors(&job::main_job()));
        return ExitCode::SUCCESS;
    }
    // Two workers: the pinger's answers are read promptly while the burst is in flight.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(until_signalled(async {
        match parsed {
            Parsed::Builtin(Builtin::All(args)) => {
                let done = match args.stale {
                    true => stale::run(Path::new(".")).await,
                    false => job::run().await,
                };
                Ok(done.iter().filter(|done| !done.complete()).count())
            }
            Parsed::Experiment { entry, planned } => run_one(entry, planned).await,
            Parsed::Builtin(Builtin::Redraw(_) | Builtin::Audit(_)) => {
                unreachable!("measures nothing: done above")
            }
        }
    }))
}

/// Audits the results folder `args` names against this build and the pages: the audit on
/// stdout; exit 1 if it failed, 2 if the folder is not there.
fn audit(args: &cli::AuditArgs) -> ExitCode {
    if !args.results.is_dir() {
        eprintln!(
            "bench-client: audit: no results folder at {}",
            args.results.display()
        );
        return ExitCode::from(2);
    }
    let audit = Audit::of(Path::new("."), &args.results);
    print!("{}", audit.text(args.brief));
    match audit.fails() {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    }
}

/// One experiment, shown in a progress view of its own; how many of its steps failed.
async fn run_one(entry: &dyn Entry, planned: Box<dyn Planned>) -> Result<usize, Error> {
    let mut progress = Progress::single(planned.stage());
    let ran = planned.run(command_line(), &mut progress, true).await;
    progress.finish();
    let ran = ran?;
    eprintln!("{}: wrote {}", entry.title(), ran.wrote);
    Ok(ran.failures)
}

/// Runs `work` unless SIGINT or SIGTERM comes first. Leaving early drops every spawned
/// server, which stops it: none is left behind, and results/ keeps its previous, complete
/// files.
async fn until_signalled(work: impl Future<Output = Result<usize, Error>>) -> ExitCode {
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

/// Success if nothing failed; the error, or how many steps failed, otherwise.
fn exit(outcome: Result<usize, Error>) -> ExitCode {
    match outcome {
        Ok(0) => ExitCode::SUCCESS,
        Ok(failed) => {
            eprintln!("bench-client: {failed} failed (see the report)");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("bench-client: {error}");
            ExitCode::from(error.exit_status())
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
