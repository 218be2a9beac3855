//! The experiments, one room each: its command line with its defaults, its plan, its run,
//! the record it keeps and the views drawn from that record. Each measures with
//! [`burst_meter`] and draws with [`crate::report`] and [`crate::plot`].
//!
//! An experiment is a type that implements [`Experiment`], in a folder of its own, and one
//! line in [`ALL`]. Everything around the experiments reads that list: the command line's
//! subcommands ([`crate::cli`]), the main job and its record ([`crate::job`]), which results
//! are stale ([`crate::stale`]), `redraw`'s records, and the code stamps ([`Code`]).
//!
//! - [`comparison`]: the original experiment, each work route beside the health check; the
//!   connect-before, thread-matrix, CPU-bound, hidden-blocker and detector on/off runs are
//!   this experiment with other parameters;
//! - [`race`]: the `/bad` case repeated to count whether the health check gets in, with the
//!   ping's arrival controlled and the variants that flip it;
//! - [`detectors`]: the ways of catching a blocked reactor, each on the same workload;
//! - [`sweep`]: the concurrency sweep (and the scale, staircase and detector-at-scale runs);
//! - [`rest`]: at rest, a lone `/ping` and the thread wake-ups behind it;
//! - [`uring`]: where io_uring differs, held answers and the order of service, with the
//!   variants that change them;
//! - [`health`]: the health check under a block, the stock `/ping` beside reactor-watch's
//!   `/health`, probed as a kubelet does;
//! - [`tokio`]: tokio's own answers, `block_in_place` on `current_thread`, a timer joined
//!   beside it against `spawn_blocking`, and the task held in a worker's LIFO slot, stock and
//!   with the slot off;
//! - [`probe`]: a verdict per route on any server, the reader's included, from outside;
//!   without a URL, its own check on stub servers, the FastAPI app and the demo servers;
//! - [`scripts`]: the criterion benches and the static checks, which scripts of the
//!   repository run: the offload's price, the stall detector's price per poll, catching it
//!   before it ships.

pub mod claims;
pub mod comparison;
pub mod detectors;
pub mod flags;
pub mod health;
pub mod probe;
pub mod race;
pub mod rest;
pub mod scripts;
pub mod sweep;
pub mod tokio;
pub mod uring;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::progress::{Progress, Stage};
use crate::report::files;
pub use crate::stamps::Code;
use crate::stamps::Digest;
use burst_meter::environment::Environment;
use burst_meter::session::Event;

/// Every source a code stamp may cover, with its digest, as this binary was built from them
/// (`build.rs`, with `stamps::digests`).
pub const DIGESTS: &[Digest<'static>] = include!(concat!(env!("OUT_DIR"), "/digests.rs"));

/// The stamp of the experiment whose code is `code`, over the sources of this build.
pub fn current_stamp(code: &Code) -> String {
    code.stamp(DIGESTS)
}

/// Every experiment, in the order the main job runs them.
pub static ALL: &[&dyn Entry] = &[
    &comparison::Comparison,
    &race::Race,
    &detectors::Detectors,
    &sweep::Sweep,
    &rest::Rest,
    &uring::Uring,
    &health::Health,
    &tokio::Tokio,
    &probe::Probe,
    &scripts::OFFLOAD_COST,
    &scripts::POLL_COST,
    &scripts::STATIC,
];

/// The experiment named `name` in [`ALL`].
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    ALL.iter().copied().find(|entry| entry.name() == name)
}

/// The sleep of the main job's variations of the comparison (threads, CPU work) and of the
/// pools at scale, in ms: over the servers' 100 ms stall limit, and ten of them serialised
/// still hold a reactor thread for 1.5 s, past a liveness probe's 1 s timeout, in under a
/// third of the comparison's time; at scale, ⌈N / pool⌉ sleeps of it still dwarf what sending
/// ten thousand requests costs (the sweep's 10 ms points).
pub const SHORT_SLEEP_MS: &str = "150";

/// One run of an experiment in the main job: what it is (and the folder it writes, in
/// words), and the arguments that run it alone, after its subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRun {
    pub name: &'static str,
    pub args: &'static [&'static str],
}

/// A run of the main job with `args`: a `const` constructor, so that a job's list reads as
/// its runs.
pub const fn job_run(name: &'static str, args: &'static [&'static str]) -> JobRun {
    JobRun { name, args }
}

/// One experiment the bench client runs itself: what the command line, the main job,
/// `redraw` and the stamps need to know of it. Implemented once per experiment, in its
/// folder; listed in [`ALL`].
pub trait Experiment: Sync + 'static {
    /// Its subcommand, and its name in the code stamps and the main job.
    const NAME: &'static str;
    /// What the progress view calls it.
    const TITLE: &'static str;
    /// The record it writes into its folder: `redraw` knows a folder of its results by it.
    const RECORD: &'static str;
    /// The code that measures it: what its stamp covers.
    const CODE: Code;
    /// Its runs in the main job, in order.
    const JOB: &'static [JobRun];
    /// Whether it is the bare command line (the comparison, the original experiment) rather
    /// than a subcommand.
    const BARE: bool = false;
    /// What the pages say its results showed, each checked against them ([`claims`]): in
    /// groups, one per file where an experiment has more than one file can hold.
    const CLAIMS: &'static [&'static [claims::Claim<Self::Record>]] = &[];

    /// Its command line, each flag with its default.
    type Args: clap::Args + clap::FromArgMatches + 'static;
    /// Its arguments turned into what it runs, on which targets.
    type Plan: 'static;
    /// What one of its steps measures, as the progress view hears of it.
    type Step;
    /// Everything one run produced: its record, the JSON file [`Experiment::RECORD`].
    type Record: Serialize + DeserializeOwned + 'static;

    /// Chooses its targets and makes its plan; the notes say which targets were left out and
    /// why.
    fn plan(args: &Self::Args) -> (Self::Plan, Vec<String>);

    /// The folder its results go into.
    fn out(args: &Self::Args) -> &Path;

    /// Its stage in the progress view, named `title`.
    fn stage(plan: &Self::Plan, title: &str) -> Stage;

    /// Runs it, from its first step to its record; `on` hears of every step.
    fn run(
        plan: Self::Plan,
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Self::Step>),
    ) -> impl Future<Output = Self::Record>;

    /// The files drawn from its record (tables, plots), each as its name and contents.
    fn views(record: &Self::Record) -> Result<Vec<(String, String)>, Error>;

    /// How many targets or steps of its record could not be measured.
    fn failures(record: &Self::Record) -> usize;

    /// Its plan's floor, `planned`, with what `record` measured of the machine where the plan
    /// could only assume it (the comparison: how fast a file is read); `planned` by default.
    fn floor_measured(planned: Duration, _record: &Self::Record) -> Duration {
        planned
    }

    /// What a run of it alone prints on stdout as an event comes (the comparison: the
    /// original bench's block per case); nothing by default.
    fn told(_event: &Event<'_, Self::Step>) -> Option<String> {
        None
    }

    /// Whether its parsed command line keeps stdout for a record a script reads (the probe's
    /// `--json`): what [`Experiment::told`] says then goes to stderr.
    fn stdout_taken(_args: &Self::Args) -> bool {
        false
    }

    /// Why its parsed command line cannot run, beyond what clap checks (e.g. a combination
    /// of values); `None` if it can.
    fn refused(_args: &Self::Args) -> Option<String> {
        None
    }

    /// What it does once its results are written, and what it says of it (the comparison:
    /// the README's block); nothing by default.
    fn after(_args: &Self::Args, _record: &Self::Record) -> Result<Option<String>, Error> {
        Ok(None)
    }
}

/// What a command that ran left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// What it wrote, and where, in a few words.
    pub wrote: String,
    /// Targets or steps that could not be measured (each is in the report).
    pub failures: usize,
    /// Its floor ([`Planned::floor`]) with what the run measured of the machine
    /// ([`Experiment::floor_measured`]).
    pub floor: Duration,
}

/// An experiment of [`ALL`], whatever its types: what the lists around the experiments read.
/// Every [`Experiment`] is one; so is each [`scripts::Script`].
pub trait Entry: Sync {
    /// Its name: its subcommand, and its name in the stamps and the main job.
    fn name(&self) -> &'static str;
    /// What the progress view calls it.
    fn title(&self) -> &'static str;
    /// The code that measures it.
    fn code(&self) -> Code;
    /// Its runs in the main job.
    fn job(&self) -> &'static [JobRun];
    /// The command line that runs `run` of its job alone, word by word.
    fn argv(&self, run: &JobRun) -> Vec<&'static str>;
    /// The command line that runs `run` of its job alone.
    fn command_line(&self, run: &JobRun) -> String {
        self.argv(run).join(" ")
    }
    /// Its subcommand's arguments, `None` where it has none (the comparison is the bare
    /// command line; a script is no command of this binary).
    fn subcommand(&self) -> Option<clap::Command>;
    /// The record it writes, `None` for a script.
    fn record(&self) -> Option<&'static str>;
    /// Rewrites the views in `dir` from the record there.
    fn redraw(&self, dir: &Path) -> Result<(), Error>;
    /// Its claims ([`claims`]); none for a script.
    fn claims(&self) -> Vec<claims::About> {
        Vec::new()
    }
    /// Where its claim `name` stands against the results folder `results`; `None` if it
    /// has no claim of that name.
    fn check(&self, _name: &str, _on: &[String], _results: &Path) -> Option<claims::Standing> {
        None
    }

    /// Its plan from its parsed command line (`matches`: its subcommand's, or the bare
    /// command line's for the comparison).
    fn planned(&self, matches: &clap::ArgMatches) -> Result<Box<dyn Planned>, clap::Error>;
    /// The plan of `run` of its job, its arguments parsed by its own command line's parser.
    fn planned_run(&self, run: &JobRun) -> Result<Box<dyn Planned>, clap::Error>;
}

/// An experiment planned from its command line, ready to run.
pub trait Planned {
    /// Its stage in the progress view.
    fn stage(&self) -> Stage;
    /// Where its results go.
    fn out(&self) -> &Path;
    /// The code stamp its results will record.
    fn stamp(&self) -> String;
    /// The time its plan takes with its sleeps as the protocol's ideals place them, its CPU
    /// work on the cores, its trials and fixed waits (each step's
    /// [`Step::floor`](burst_meter::session::Step::floor) and pause): what no quicker client
    /// could save. The job's record sets each run's time beside it, with what the run
    /// measured of the machine ([`Ran::floor`]).
    fn floor(&self) -> Duration {
        self.stage().estimate
    }
    /// Runs it and writes its results; `command` is the command line its record says wrote
    /// it; `alone`: it is the only experiment of this process, and may print on stdout.
    fn run<'a>(
        self: Box<Self>,
        command: String,
        progress: &'a mut Progress,
        alone: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Ran, Error>> + 'a>>;
}

impl<E: Experiment> Entry for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn title(&self) -> &'static str {
        E::TITLE
    }

    fn code(&self) -> Code {
        E::CODE
    }

    fn job(&self) -> &'static [JobRun] {
        E::JOB
    }

    fn argv(&self, run: &JobRun) -> Vec<&'static str> {
        let subcommand = (!E::BARE).then_some(E::NAME);
        (std::iter::once("bench-client").chain(subcommand))
            .chain(run.args.iter().copied())
            .collect()
    }

    fn subcommand(&self) -> Option<clap::Command> {
        let command = clap::Command::new(E::NAME);
        (!E::BARE).then(|| <E::Args as clap::Args>::augment_args(command))
    }

    fn record(&self) -> Option<&'static str> {
        Some(E::RECORD)
    }

    fn redraw(&self, dir: &Path) -> Result<(), Error> {
        write_views::<E>(dir, &read_record::<E>(dir)?)
    }

    fn claims(&self) -> Vec<claims::About> {
        (E::CLAIMS.iter().copied().flatten())
            .map(claims::About::of::<E>)
            .collect()
    }

    fn check(&self, name: &str, on: &[String], results: &Path) -> Option<claims::Standing> {
        claims::check_one::<E>(name, on, results)
    }

    fn planned(&self, matches: &clap::ArgMatches) -> Result<Box<dyn Planned>, clap::Error> {
        let args = <E::Args as clap::FromArgMatches>::from_arg_matches(matches)?;
        if let Some(reason) = E::refused(&args) {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                reason,
            ));
        }
        let (plan, notes) = <E as Experiment>::plan(&args);
        Ok(Box::new(PlannedRun::<E> { args, plan, notes }))
    }

    fn planned_run(&self, run: &JobRun) -> Result<Box<dyn Planned>, clap::Error> {
        let command = <E::Args as clap::Args>::augment_args(clap::Command::new(E::NAME));
        let argv = std::iter::once(E::NAME).chain(run.args.iter().copied());
        self.planned(&command.try_get_matches_from(argv)?)
    }
}

/// An [`Experiment`] with its command line parsed and its plan made.
struct PlannedRun<E: Experiment> {
    args: E::Args,
    plan: E::Plan,
    notes: Vec<String>,
}

impl<E: Experiment> Planned for PlannedRun<E> {
    fn stage(&self) -> Stage {
        E::stage(&self.plan, E::TITLE)
    }

    fn out(&self) -> &Path {
        E::out(&self.args)
    }

    fn stamp(&self) -> String {
        current_stamp(&E::CODE)
    }

    fn run<'a>(
        self: Box<Self>,
        command: String,
        progress: &'a mut Progress,
        alone: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Ran, Error>> + 'a>> {
        Box::pin(run_and_write::<E>(*self, command, progress, alone))
    }
}

/// Runs `E` as planned, shown in `progress`, and writes its record and views into its
/// folder: the record first, so that a view that cannot be drawn loses no measurement.
async fn run_and_write<E: Experiment>(
    PlannedRun { args, plan, notes }: PlannedRun<E>,
    command: String,
    progress: &mut Progress,
    alone: bool,
) -> Result<Ran, Error> {
    for note in notes {
        progress.print(&format!("bench-client: {note}"));
    }
    let environment = Environment::with_stamp(current_stamp(&E::CODE));
    let planned = E::stage(&plan, E::TITLE).estimate;
    let stdout_taken = E::stdout_taken(&args);
    let on = &mut |event: Event<'_, E::Step>| {
        match E::told(&event).filter(|_| alone) {
            Some(text) if stdout_taken => progress.print(&text),
            Some(text) => progress.print_out(&text),
            None => {}
        }
        progress.on_event(&event);
    };
    let record = E::run(plan, environment, command, on).await;
    let out = E::out(&args);
    let json = [(E::RECORD.to_owned(), files::json(&record))];
    files::write_all(out, &json).map_err(Error::write(out))?;
    let views = E::views(&record)?;
    files::write_all(out, &views).map_err(Error::write(out))?;
    if let Some(said) = E::after(&args, &record)? {
        progress.print(&said);
    }
    let written: Vec<&str> = std::iter::once(E::RECORD)
        .chain(views.iter().map(|(name, _)| name.as_str()))
        .collect();
    Ok(Ran {
        wrote: format!("{} into {}", written.join(", "), out.display()),
        failures: E::failures(&record),
        floor: E::floor_measured(planned, &record),
    })
}

/// The record of `E` in `dir`.
pub(crate) fn read_record<E: Experiment>(dir: &Path) -> Result<E::Record, Error> {
    let path = dir.join(E::RECORD);
    let json = std::fs::read_to_string(&path).map_err(Error::read(&path))?;
    serde_json::from_str(&json).map_err(|source| Error::Record { path, source })
}

/// Writes the views of `record` into `dir`.
fn write_views<E: Experiment>(dir: &Path, record: &E::Record) -> Result<(), Error> {
    files::write_all(dir, &E::views(record)?).map_err(Error::write(dir))
}
