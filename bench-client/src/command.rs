//! One command of the command line, run: the experiment it names, from its plan to its
//! written report, shown in the progress view. The binary runs one; the main job
//! ([`crate::job`]) runs each of its experiments through here too.

use std::path::Path;

use demo_contract::variant::VARIANTS;

use crate::cli::{Cli, Command, DetectorsArgs, RaceArgs, RedrawArgs, RestArgs};
use crate::detectors::{self, DetectorRun};
use crate::progress::{Progress, Stage};
use crate::race::FlipRun;
use crate::report::{self, Report};
use crate::session::Event;
use crate::target::{self, SERVERS, Target, all_servers};
use crate::{bench, race, rest, sweep};

/// What a command that ran left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// What it wrote, and where, in a few words.
    pub wrote: String,
    /// Targets or steps that could not be measured (each is in the report).
    pub failures: usize,
}

/// What a command line runs, as one stage of the progress view named `name`; `None` for a
/// command that measures nothing (`redraw`, `all`).
pub fn stage(cli: &Cli, name: &str) -> Option<Stage> {
    match &cli.command {
        None => Some(cli.plan().stage(name, &cli.targets().0)),
        Some(Command::Sweep(args)) => {
            Some(args.plan().stage(name, &args.spawn.targets(&SERVERS).0))
        }
        Some(Command::Rest(args)) => Some(args.plan().stage(name, &rest_targets(args))),
        Some(Command::Race(args)) => {
            let (targets, flips) = race_targets(args);
            Some(args.plan().stage(name, &targets, &flips))
        }
        Some(Command::Detectors(args)) => Some(args.plan().stage(name, &detector_runs(args))),
        Some(Command::Redraw(_) | Command::All) => None,
    }
}

/// What the experiment `cli` names is called in the progress view.
pub fn title(cli: &Cli) -> &'static str {
    match &cli.command {
        None => "the comparison",
        Some(Command::Sweep(_)) => "the sweep",
        Some(Command::Rest(_)) => "at rest",
        Some(Command::Race(_)) => "the race",
        Some(Command::Detectors(_)) => "the detectors",
        Some(Command::Redraw(_)) => "redraw",
        Some(Command::All) => "the main job",
    }
}

/// Runs the experiment `cli` names; `command` is the command line its report says wrote it.
/// The comparison prints each case's block as it ends if `case_blocks`.
pub async fn run(
    cli: &Cli,
    command: String,
    progress: &mut Progress,
    case_blocks: bool,
) -> Result<Ran, String> {
    match &cli.command {
        None => compare(cli, command, progress, case_blocks).await,
        Some(Command::Sweep(args)) => {
            let targets = args.spawn.targets(&SERVERS).0;
            let on = &mut |event: Event<'_, _>| progress.on_event(&event);
            let report = sweep::sweep(&targets, args.plan(), command, &args.out, on).await?;
            Ok(ran(
                &args.out,
                "SWEEP.md, sweep.json and the plots",
                report.failures.len(),
            ))
        }
        Some(Command::Rest(args)) => {
            let targets = rest_targets(args);
            let on = &mut |event: Event<'_, _>| progress.on_event(&event);
            let report = rest::at_rest(&targets, args.plan(), command, &args.out, on).await?;
            Ok(ran(
                &args.out,
                "REST.md and rest.json",
                report.failures.len(),
            ))
        }
        Some(Command::Race(args)) => {
            let (targets, flips) = race_targets(args);
            let on = &mut |event: Event<'_, _>| progress.on_event(&event);
            let plan = args.plan();
            let report = race::race(&targets, &flips, plan, command, &args.out, on).await?;
            Ok(ran(
                &args.out,
                "RACE.md, race.json and the plot",
                report.failures.len(),
            ))
        }
        Some(Command::Detectors(args)) => {
            let runs = detector_runs(args);
            let on = &mut |event: Event<'_, _>| progress.on_event(&event);
            let report = detectors::detectors(&runs, args.plan(), command, &args.out, on).await?;
            Ok(ran(
                &args.out,
                "DETECTORS.md and detectors.json",
                report.failures.len(),
            ))
        }
        Some(Command::Redraw(_) | Command::All) => {
            Err("redraw and all measure nothing: the binary runs them".to_owned())
        }
    }
}

/// The comparison, then the README's block if asked for and if this run may stand for it.
async fn compare(
    cli: &Cli,
    command: String,
    progress: &mut Progress,
    case_blocks: bool,
) -> Result<Ran, String> {
    let (targets, notes) = cli.targets();
    for note in notes {
        progress.print(&format!("bench-client: {note}"));
    }
    let mut on = |event: Event<'_, bench::Case>| {
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
    let report = bench::compare(&targets, cli.plan(), command, &cli.out, &mut on).await?;
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

/// At rest's targets: the servers asked for, or by default the stock servers beside the
/// variants that add or take away a thread's hop.
fn rest_targets(args: &RestArgs) -> Vec<Target> {
    let (mut targets, _) = args.spawn.targets(&SERVERS);
    if args.spawn.servers.is_empty() {
        let bin_dir = (args.spawn.bin_dir.clone()).unwrap_or_else(target::default_bin_dir);
        targets.extend(
            VARIANTS
                .iter()
                .map(|variant| Target::variant(variant, &bin_dir)),
        );
    }
    targets
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

/// Each detector on each of the servers asked for that it runs on.
fn detector_runs(args: &DetectorsArgs) -> Vec<DetectorRun> {
    detectors::runs(&args.spawn.targets(&all_servers()).0)
}

fn ran(out: &Path, what: &str, failures: usize) -> Ran {
    Ran {
        wrote: format!("{what} into {}", out.display()),
        failures,
    }
}

/// `redraw`: rewrites each folder's RESULTS.md and plots from its results.json, which it
/// leaves as it is, and the README's block from the first folder's, if asked to.
pub fn redraw(args: &RedrawArgs) -> Result<(), String> {
    for (index, dir) in args.dirs.iter().enumerate() {
        let cannot = |error: String| format!("cannot redraw {}: {error}", dir.display());
        let json = std::fs::read_to_string(dir.join("results.json"))
            .map_err(|error| cannot(error.to_string()))?;
        let report: Report =
            serde_json::from_str(&json).map_err(|error| cannot(error.to_string()))?;
        (report.write_views(dir)).map_err(|error| cannot(error.to_string()))?;
        if let (Some(readme), 0) = (&args.readme, index) {
            redraw_readme(&report, readme).map_err(cannot)?;
        }
        eprintln!("redrew {}", dir.display());
    }
    if args.pages {
        for page in report::pages::refresh_all(Path::new("."))? {
            eprintln!("redrew the figures of {}", page.display());
        }
    }
    Ok(())
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
