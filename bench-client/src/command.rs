//! One command of the command line, run: the experiment it names, from its plan to its
//! written report, shown in the progress view. The binary runs one; the main job
//! ([`crate::job`]) runs each of its experiments through here too.

use std::path::{Path, PathBuf};

use crate::cli::{
    Cli, Command, DetectorsArgs, HealthArgs, RaceArgs, RedrawArgs, RestArgs, SweepArgs, UringArgs,
};
use crate::experiments::detectors::{self, DetectorRun};
use crate::experiments::race::FlipRun;
use crate::experiments::uring::{self, Setting};
use crate::experiments::{comparison, health, race, rest, sweep};
use crate::measure::session::Event;
use crate::measure::target::{self, SERVERS, Target, all_servers};
use crate::progress::{Progress, Stage};
use crate::report::{self, Report};
use crate::stamps;

/// What a command that ran left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// What it wrote, and where, in a few words.
    pub wrote: String,
    /// Targets or steps that could not be measured (each is in the report).
    pub failures: usize,
}

/// An experiment the command line names, its targets chosen once: what its stage in the
/// progress view and its run both read.
#[derive(Debug)]
pub enum Planned<'a> {
    Comparison {
        cli: &'a Cli,
        targets: Vec<Target>,
        notes: Vec<String>,
    },
    Sweep(&'a SweepArgs, Vec<Target>),
    Rest(&'a RestArgs, Vec<Target>),
    Race(&'a RaceArgs, Vec<Target>, Vec<FlipRun>),
    Detectors(&'a DetectorsArgs, Vec<DetectorRun>),
    /// Its settings, and the folder of their servers.
    Uring(&'a UringArgs, Vec<Setting>, PathBuf),
    Health(&'a HealthArgs, Vec<Target>),
}

/// The experiment `cli` names, planned; `None` for a command that measures nothing
/// (`redraw`, `all`).
pub fn plan(cli: &Cli) -> Option<Planned<'_>> {
    Some(match &cli.command {
        None => {
            let (targets, notes) = cli.targets();
            Planned::Comparison {
                cli,
                targets,
                notes,
            }
        }
        Some(Command::Sweep(args)) => Planned::Sweep(args, args.spawn.targets(&SERVERS).0),
        Some(Command::Rest(args)) => {
            let targets = target::for_rest(&args.spawn.servers, &args.spawn.folders());
            Planned::Rest(args, targets)
        }
        Some(Command::Race(args)) => {
            let (targets, flips) = race_targets(args);
            Planned::Race(args, targets, flips)
        }
        Some(Command::Detectors(args)) => {
            Planned::Detectors(args, detectors::runs(&args.spawn.targets(&all_servers()).0))
        }
        Some(Command::Uring(args)) => {
            let servers: Vec<&str> = args.servers.iter().map(String::as_str).collect();
            let bin_dir = (args.bin_dir.clone()).unwrap_or_else(target::default_bin_dir);
            Planned::Uring(args, uring::settings_of(&servers), bin_dir)
        }
        Some(Command::Health(args)) => Planned::Health(args, args.spawn.targets(&SERVERS).0),
        Some(Command::Redraw(_) | Command::All(_)) => return None,
    })
}

/// What the experiment `cli` names is called in the progress view.
pub fn title(cli: &Cli) -> &'static str {
    match &cli.command {
        None => "the comparison",
        Some(Command::Sweep(_)) => "the sweep",
        Some(Command::Rest(_)) => "at rest",
        Some(Command::Race(_)) => "the race",
        Some(Command::Detectors(_)) => "the detectors",
        Some(Command::Uring(_)) => "where io_uring differs",
        Some(Command::Health(_)) => "the health check under a block",
        Some(Command::Redraw(_)) => "redraw",
        Some(Command::All(_)) => "the main job",
    }
}

impl Planned<'_> {
    /// The name, in `src/stamps.rs`, of the experiment whose stamp its results record.
    pub fn stamp_name(&self) -> &'static str {
        match self {
            Planned::Comparison { .. } => stamps::COMPARISON,
            Planned::Sweep(..) => stamps::SWEEP,
            Planned::Rest(..) => stamps::REST,
            Planned::Race(..) => stamps::RACE,
            Planned::Detectors(..) => stamps::DETECTORS,
            Planned::Uring(..) => stamps::URING,
            Planned::Health(..) => stamps::HEALTH,
        }
    }

    /// The folder it writes its results into.
    pub fn out(&self) -> &Path {
        match self {
            Planned::Comparison { cli, .. } => &cli.out,
            Planned::Sweep(args, _) => &args.out,
            Planned::Rest(args, _) => &args.out,
            Planned::Race(args, ..) => &args.out,
            Planned::Detectors(args, _) => &args.out,
            Planned::Uring(args, ..) => &args.out,
            Planned::Health(args, _) => &args.out,
        }
    }

    /// Its stage in the progress view, named `name`.
    pub fn stage(&self, name: &str) -> Stage {
        match self {
            Planned::Comparison { cli, targets, .. } => cli.plan().stage(name, targets),
            Planned::Sweep(args, targets) => args.plan().stage(name, targets),
            Planned::Rest(args, targets) => args.plan().stage(name, targets),
            Planned::Race(args, targets, flips) => args.plan().stage(name, targets, flips),
            Planned::Detectors(args, runs) => args.plan().stage(name, runs),
            Planned::Uring(args, settings, bin_dir) => args.plan().stage(name, settings, bin_dir),
            Planned::Health(args, targets) => args.plan().stage(name, targets),
        }
    }

    /// Runs it; `command` is the command line its report says wrote it. The comparison
    /// prints each case's block as it ends if `case_blocks`.
    pub async fn run(
        self,
        command: String,
        progress: &mut Progress,
        case_blocks: bool,
    ) -> Result<Ran, String> {
        let (out, written, failures) = match self {
            Planned::Comparison {
                cli,
                targets,
                notes,
            } => {
                return compare(cli, (targets, notes), command, progress, case_blocks).await;
            }
            Planned::Sweep(args, targets) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let report = sweep::sweep(&targets, args.plan(), command, &args.out, on).await?;
                let written = "SWEEP.md, sweep.json and the plots";
                (&args.out, written, report.failures.len())
            }
            Planned::Rest(args, targets) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let report = rest::at_rest(&targets, args.plan(), command, &args.out, on).await?;
                (&args.out, "REST.md and rest.json", report.failures.len())
            }
            Planned::Race(args, targets, flips) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let plan = args.plan();
                let report = race::race(&targets, &flips, plan, command, &args.out, on).await?;
                let written = "RACE.md, race.json and the plot";
                (&args.out, written, report.failures.len())
            }
            Planned::Detectors(args, runs) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let plan = args.plan();
                let report = detectors::detectors(&runs, plan, command, &args.out, on).await?;
                let written = "DETECTORS.md and detectors.json";
                (&args.out, written, report.failures.len())
            }
            Planned::Uring(args, settings, bin_dir) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let (plan, out) = (args.plan(), &args.out);
                let report = uring::uring(&settings, &bin_dir, plan, command, out, on).await?;
                (&args.out, "URING.md and uring.json", report.failures.len())
            }
            Planned::Health(args, targets) => {
                let on = &mut |event: Event<'_, _>| progress.on_event(&event);
                let (plan, out) = (args.plan(), &args.out);
                let report = health::health(&targets, plan, command, out, on).await?;
                (
                    &args.out,
                    "HEALTH.md and health.json",
                    report.failures.len(),
                )
            }
        };
        Ok(ran(out, written, failures))
    }
}

/// The comparison, then the README's block if asked for and if this run may stand for it.
async fn compare(
    cli: &Cli,
    (targets, notes): (Vec<Target>, Vec<String>),
    command: String,
    progress: &mut Progress,
    case_blocks: bool,
) -> Result<Ran, String> {
    for note in notes {
        progress.print(&format!("bench-client: {note}"));
    }
    let mut on = |event: Event<'_, comparison::Case>| {
        match (&event, case_blocks) {
            (Event::Starting { target, threads }, true) => {
                let threads = report::text::reactor_threads(*threads);
                progress.print_out(&format!("\n##### {target} ({threads})"));
            }
            (Event::Measured(case), true) => progress.print_out(&report::terminal::block(case)),
            _ => {}
        }
        progress.on_event(&event);
    };
    let report = comparison::compare(&targets, cli.plan(), command, &cli.out, &mut on).await?;
    if let Some(readme) = &cli.readme {
        progress.print(&refresh_readme(cli, &report, readme)?);
    }
    Ok(ran(
        &cli.out,
        "RESULTS.md, results.json and the plots",
        report.failures.len(),
    ))
}

/// Rewrites the README's results block if this run may stand for it: only a complete run of
/// the full default comparison does. Says what it did.
fn refresh_readme(cli: &Cli, report: &Report, readme: &Path) -> Result<String, String> {
    if !cli.is_full_comparison() || !report::readme::stands_for_readme(report) {
        let why = report::readme::ONLY_COMPLETE;
        return Ok(format!("left {} as it was: {why}", readme.display()));
    }
    report::readme::refresh(report, readme)
        .map_err(|error| format!("cannot refresh {}: {error}", readme.display()))?;
    Ok(format!(
        "refreshed the results block of {}",
        readme.display()
    ))
}

/// The race's targets, and its flips on those of them that have a variant.
fn race_targets(args: &RaceArgs) -> (Vec<Target>, Vec<FlipRun>) {
    let mut targets = args.spawn.targets(&all_servers()).0;
    targets.retain(|target| target.runs_at(args.threads, true));
    let bin_dir = (args.spawn.bin_dir.clone()).unwrap_or_else(target::default_bin_dir);
    let flips = match args.no_flips || args.threads != 1 {
        true => Vec::new(),
        false => race::flip_runs(&targets, &bin_dir),
    };
    (targets, flips)
}

fn ran(out: &Path, what: &str, failures: usize) -> Ran {
    Ran {
        wrote: format!("{what} into {}", out.display()),
        failures,
    }
}

/// `redraw`: rewrites the views of the folders asked for (or of every results folder, the
/// README's block and the pages' figures) from their records, measuring nothing.
pub fn redraw(args: &RedrawArgs) -> Result<(), String> {
    args.plan().run(Path::new("."))
}
