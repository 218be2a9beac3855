//! The main job: every experiment whose results are committed ([`MAIN_JOB`], in
//! `list.rs`), one after another, under one progress view, each experiment's duration
//! recorded in [`RECORD`]. `--stale` runs only those whose code changed since their
//! results were written ([`crate::stale::run`]).
//!
//! Each experiment is written as the command line that runs it alone
//! (`scripts/run.sh ARGS`, or `bench-client ARGS` with the binaries built), parsed by the
//! same parser: what the job runs and what a reader types are the same thing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser as _;

use crate::cli::Cli;
use crate::command::{self, Ran};
use crate::experiments::scripts;
use crate::measure::environment::{Environment, current_stamp};
use crate::progress::{Progress, Stage};
use crate::report::{readme, write_atomically};

mod list;
mod record;

pub use list::MAIN_JOB;
pub use record::{readme_sentence, record};

/// Where the job records how long each experiment took.
pub const RECORD: &str = "results/main-job.md";

/// The README, whose results block the comparison rewrites and whose sentence on the job's
/// duration the job rewrites, between [`BEGIN`] and [`END`].
pub const README: &str = "README.md";
pub const BEGIN: &str = "<!-- main-job:begin (written by bench-client all; do not edit) -->";
pub const END: &str = "<!-- main-job:end -->";

/// The name of the job's own record in `src/stamps.rs`' terms: it records every
/// experiment's stamp in its table, and this word where one stamp would stand.
pub const RECORD_STAMP: &str = "per experiment, in the table";

/// One experiment of the main job.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// What it is, and the folder it writes.
    pub name: &'static str,
    pub run: Run,
}

/// How an experiment runs.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// `bench-client` with these arguments.
    Command(&'static [&'static str]),
    /// A script of the repository, run from its root, with the file it writes, its entry in
    /// `src/stamps.rs` and what it should take: for the criterion benches, which are not
    /// this binary's to run.
    Script {
        path: &'static str,
        writes: &'static str,
        stamp: &'static str,
        estimate: Duration,
    },
}

/// One experiment as the job ran it, for [`RECORD`].
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub name: &'static str,
    pub command: String,
    /// The code stamp its results record.
    pub stamp: &'static str,
    pub took: Duration,
    /// What it wrote, or why it did not finish.
    pub outcome: Result<Ran, String>,
}

impl Done {
    /// Whether it wrote its results with nothing failed.
    pub fn complete(&self) -> bool {
        matches!(&self.outcome, Ok(ran) if ran.failures == 0)
    }
}

impl Experiment {
    /// The command line that runs it alone.
    pub fn command_line(&self) -> String {
        match self.run {
            Run::Command(args) => std::iter::once("bench-client")
                .chain(args.iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
            Run::Script { path, .. } => path.to_owned(),
        }
    }

    /// Its command line, parsed as the binary parses its own; `None` for a script.
    pub fn parse(&self) -> Option<Result<Cli, clap::Error>> {
        match self.run {
            Run::Command(args) => {
                let argv = std::iter::once("bench-client").chain(args.iter().copied());
                Some(Cli::try_parse_from(argv))
            }
            Run::Script { .. } => None,
        }
    }

    /// Its name in `src/stamps.rs`, and where its results are: the folder a command
    /// writes, or the file a script does.
    ///
    /// # Panics
    /// If its command line does not parse to an experiment (a unit test checks them all).
    pub fn results(&self) -> (&'static str, PathBuf) {
        match (self.parse(), self.run) {
            (_, Run::Script { writes, stamp, .. }) => (stamp, PathBuf::from(writes)),
            (Some(Ok(cli)), _) => {
                let planned = command::plan(&cli).expect("an experiment");
                (planned.stamp_name(), planned.out().to_owned())
            }
            _ => panic!("{}: not an experiment's command line", self.name),
        }
    }
}

/// An experiment of the job with its command line parsed once.
struct Parsed {
    experiment: &'static Experiment,
    cli: Option<Result<Cli, clap::Error>>,
}

impl Parsed {
    fn new(experiment: &'static Experiment) -> Parsed {
        let cli = experiment.parse();
        Parsed { experiment, cli }
    }

    /// Its stage in the progress view.
    fn stage(&self) -> Stage {
        let name = self.experiment.name.to_owned();
        match (&self.cli, self.experiment.run) {
            (Some(Ok(cli)), _) => match command::plan(cli) {
                Some(planned) => planned.stage(&name),
                None => Stage::empty(name),
            },
            (_, Run::Script { estimate, .. }) => Stage {
                name,
                steps: 1,
                estimate,
            },
            _ => Stage::empty(name),
        }
    }

    /// Runs it, shown in `progress`; returns the code stamp its results record (none if it
    /// could not start) and what it did.
    async fn run(&self, progress: &mut Progress) -> (&'static str, Result<Ran, String>) {
        let experiment = self.experiment;
        match (&self.cli, experiment.run) {
            (
                _,
                Run::Script {
                    path,
                    writes,
                    stamp,
                    estimate,
                },
            ) => {
                progress.step("", path, estimate);
                let outcome = scripts::run(Path::new(path), current_stamp(stamp)).await;
                let outcome = outcome.map(|()| Ran {
                    wrote: writes.to_owned(),
                    failures: 0,
                });
                (current_stamp(stamp), outcome)
            }
            (Some(Ok(cli)), _) => match command::plan(cli) {
                Some(planned) => (current_stamp(planned.stamp_name()), {
                    let line = experiment.command_line();
                    planned.run(line, progress, false).await
                }),
                None => ("", Err("measures nothing".to_owned())),
            },
            (Some(Err(error)), _) => ("", Err(format!("bad command line: {error}"))),
            (None, Run::Command(_)) => unreachable!("a command always parses to something"),
        }
    }
}

/// Runs `experiments` of the main job, each whatever the others did. Returns what each did.
pub async fn run_each(experiments: &[&'static Experiment]) -> Vec<Done> {
    let parsed: Vec<Parsed> = experiments.iter().map(|e| Parsed::new(e)).collect();
    let mut progress = Progress::new(parsed.iter().map(Parsed::stage).collect());
    let mut done = Vec::new();
    for one in &parsed {
        let started = Instant::now();
        let (stamp, outcome) = one.run(&mut progress).await;
        let took = started.elapsed();
        progress.print(&record::ended_line(one.experiment.name, took, &outcome));
        progress.next_stage();
        done.push(Done {
            name: one.experiment.name,
            command: one.experiment.command_line(),
            stamp,
            took,
            outcome,
        });
    }
    progress.finish();
    done
}

/// Runs the main job: every experiment, then the record and the README's sentence.
pub async fn run() -> Vec<Done> {
    let environment = Environment::with_stamp(RECORD_STAMP.to_owned());
    let done = run_each(&MAIN_JOB.iter().collect::<Vec<_>>()).await;
    if let Err(error) = write_atomically(Path::new(RECORD), record(&environment, &done).as_bytes())
    {
        eprintln!("bench-client: cannot write {RECORD}: {error}");
    }
    let sentence = readme_sentence(&done);
    if let Err(error) = readme::replace_block(Path::new(README), (BEGIN, END), &sentence) {
        eprintln!("bench-client: cannot refresh {README}: {error}");
    }
    eprintln!("wrote {RECORD}");
    refresh_pages();
    done
}

/// Rewrites the figures blocks of the README and the lesson pages from the results just
/// written, so that every page states what this run measured.
pub fn refresh_pages() {
    match crate::report::pages::refresh_all(Path::new(".")) {
        Ok(pages) => {
            (pages.iter()).for_each(|page| eprintln!("rewrote the figures of {}", page.display()))
        }
        Err(error) => eprintln!("bench-client: cannot refresh the pages' figures: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_of_the_job_is_a_valid_command_line() {
        for experiment in &MAIN_JOB {
            if let Some(parsed) = experiment.parse() {
                let cli = parsed.unwrap_or_else(|error| panic!("{}: {error}", experiment.name));
                assert!(command::plan(&cli).is_some(), "{}", experiment.name);
            }
        }
    }

    #[test]
    fn every_experiment_of_the_job_has_a_stamp_and_its_own_results() {
        let mut outs = Vec::new();
        for experiment in &MAIN_JOB {
            let (stamp, out) = experiment.results();
            assert!(crate::stamps::find(stamp).is_some(), "{}", experiment.name);
            assert!(
                !outs.contains(&out),
                "{}: {}",
                experiment.name,
                out.display()
            );
            outs.push(out);
        }
    }
}
