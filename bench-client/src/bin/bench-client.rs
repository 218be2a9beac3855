//! `bench-client`: the full comparison by default; `--help` explains the experiment.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use bench_client::bench::{self, HEAD_START};
use bench_client::cli::{Cli, Command, RedrawArgs, RestArgs, SweepArgs};
use bench_client::environment::Environment;
use bench_client::report::{self, Report, RestReport, SweepReport, Timing};
use bench_client::session::{Event, Outcome, PAUSE};
use bench_client::target::{self, SERVERS, Target};
use bench_client::{rest, sweep};
use clap::Parser as _;
use demo_contract::variant::VARIANTS;
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
    let (targets, notes) = cli.targets();
    for note in notes {
        eprintln!("bench-client: {note}");
    }
    // Two workers: the pinger's answers are read promptly while the burst is in flight.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
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
        // Leaving `run` early drops every spawned server, which stops it: none is left behind,
        // and results/ keeps its previous, complete files.
        let work = async {
            match &cli.command {
                Some(Command::Sweep(sweep)) => run_sweep(sweep).await,
                Some(Command::Rest(rest)) => run_rest(rest).await,
                Some(Command::Redraw(redraw)) => run_redraw(redraw),
                None => run(&cli, &targets).await,
            }
        };
        tokio::select! {
            code = work => code,
            _ = interrupt.recv() => interrupted("SIGINT", 130),
            _ = terminate.recv() => interrupted("SIGTERM", 143),
        }
    })
}

fn interrupted(signal: &str, code: u8) -> ExitCode {
    eprintln!("\nbench-client: {signal}: servers stopped, nothing written");
    ExitCode::from(code)
}

/// Progress on stderr, for the runs that print no block per case.
fn progress<T>(event: Event<'_, T>) {
    match event {
        Event::Running { target, step } => eprintln!("{target} {step}"),
        Event::Failed(failure) => eprintln!("FAILED {}: {}", failure.target, failure.reason),
        Event::Starting { .. } | Event::Measured(_) => {}
    }
}

/// The exit of a run that wrote `written` into `out`: failure if the files could not be
/// written or a target failed.
fn finish(out: &Path, written: std::io::Result<()>, what: &str, all_measured: bool) -> ExitCode {
    if let Err(error) = written {
        eprintln!("bench-client: cannot write {}: {error}", out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("wrote {what} into {}", out.display());
    if all_measured {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn run_sweep(args: &SweepArgs) -> ExitCode {
    let plan = args.plan();
    let (targets, _) = args.spawn.targets(&SERVERS);
    let Outcome { measured, failures } = sweep::run(&targets, &plan, &mut progress).await;
    let report = SweepReport {
        environment: Environment::capture(),
        plan,
        command: command_line(),
        points: measured,
        failures,
    };
    let all_measured = report.failures.is_empty();
    let what = "SWEEP.md, sweep.json and the plots";
    finish(&args.out, report.write(&args.out), what, all_measured)
}

async fn run_rest(args: &RestArgs) -> ExitCode {
    let plan = args.plan();
    let (mut targets, _) = args.spawn.targets(&SERVERS);
    if args.spawn.servers.is_empty() {
        // The stock servers beside the variants that add or take away a thread's hop.
        let bin_dir = args
            .spawn
            .bin_dir
            .clone()
            .unwrap_or_else(target::default_bin_dir);
        targets.extend(
            VARIANTS
                .iter()
                .map(|variant| Target::variant(variant, &bin_dir)),
        );
    }
    let Outcome { measured, failures } = rest::run(&targets, &plan, &mut progress).await;
    let report = RestReport {
        environment: Environment::capture(),
        plan,
        command: command_line(),
        points: measured,
        failures,
    };
    let all_measured = report.failures.is_empty();
    finish(
        &args.out,
        report.write(&args.out),
        "REST.md and rest.json",
        all_measured,
    )
}

/// Rewrites each folder's RESULTS.md and plots from its results.json, which it leaves as it is,
/// and the README's block from the first folder's, if asked to.
fn run_redraw(args: &RedrawArgs) -> ExitCode {
    for (index, dir) in args.dirs.iter().enumerate() {
        let report = std::fs::read_to_string(dir.join("results.json"))
            .map_err(|error| error.to_string())
            .and_then(|json| serde_json::from_str::<Report>(&json).map_err(|e| e.to_string()));
        let redrawn = report.and_then(|report| {
            report.write_views(dir).map_err(|error| error.to_string())?;
            match &args.readme {
                Some(readme) if index == 0 => redraw_readme(&report, readme),
                _ => Ok(()),
            }
        });
        if let Err(error) = redrawn {
            eprintln!("bench-client: cannot redraw {}: {error}", dir.display());
            return ExitCode::FAILURE;
        }
        eprintln!("redrew {}", dir.display());
    }
    ExitCode::SUCCESS
}

/// The README's block from a report read back, which must be a complete default comparison.
fn redraw_readme(report: &Report, readme: &Path) -> Result<(), String> {
    if !report::readme::stands_for_readme(report) {
        let why = report::readme::ONLY_COMPLETE;
        return Err(format!("{} stays as it was: {why}", readme.display()));
    }
    report::readme::refresh(report, readme)
        .map_err(|error| format!("cannot refresh {}: {error}", readme.display()))
}

/// How this process was invoked, for the reports.
fn command_line() -> String {
    std::iter::once("bench-client".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

async fn run(cli: &Cli, targets: &[bench_client::target::Target]) -> ExitCode {
    let started = Instant::now();
    let environment = Environment::capture();
    let plan = cli.plan();
    let mut done = 0;
    let total = bench::case_count(targets, &plan);
    let mut on = |event: Event<'_, bench::Case>| match event {
        Event::Starting { target, threads } => {
            println!(
                "\n##### {target} ({})",
                report::text::reactor_threads(threads)
            )
        }
        Event::Running { target, step } => {
            done += 1;
            eprintln!("[{done}/{total}] {target} {step} ...");
        }
        Event::Measured(case) => println!("{}", report::terminal::block(case)),
        Event::Failed(failure) => eprintln!("FAILED {}: {}", failure.target, failure.reason),
    };
    let Outcome {
        measured: cases,
        failures,
    } = bench::run_plan(targets, &plan, &mut on).await;
    let bursts_s = cases.iter().map(|case| case.wall_ms / 1000.0).sum();
    let report = Report {
        environment,
        command: command_line(),
        plan,
        timing: Timing {
            total_s: started.elapsed().as_secs_f64(),
            bursts_s,
            protocol_waits_s: cases.len() as f64 * (HEAD_START + PAUSE).as_secs_f64(),
        },
        cases,
        failures,
    };
    if let Err(error) = report.write(&cli.out) {
        eprintln!("bench-client: cannot write {}: {error}", cli.out.display());
        return ExitCode::FAILURE;
    }
    if let Err(error) = refresh_readme(cli, &report) {
        eprintln!("bench-client: {error}");
        return ExitCode::FAILURE;
    }
    eprintln!(
        "\nwrote {}/RESULTS.md and results.json in {:.1} s ({:.1}% beyond the bursts and fixed waits)",
        cli.out.display(),
        report.timing.total_s,
        report.timing.overhead_percent()
    );
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Rewrites the README's results block, if asked to and if this run may stand for it: only a
/// complete run of the full default comparison does.
fn refresh_readme(cli: &Cli, report: &Report) -> Result<(), String> {
    let Some(readme) = &cli.readme else {
        return Ok(());
    };
    if !cli.is_full_comparison() || !report::readme::stands_for_readme(report) {
        eprintln!(
            "left {} as it was: {}",
            readme.display(),
            report::readme::ONLY_COMPLETE
        );
        return Ok(());
    }
    report::readme::refresh(report, readme)
        .map_err(|error| format!("cannot refresh {}: {error}", readme.display()))?;
    eprintln!("refreshed the results block of {}", readme.display());
    Ok(())
}
