//! The runs of the main job: each experiment's runs as its own folder lists them
//! ([`Experiment::JOB`](crate::experiments::Experiment)), and running a list of them under one
//! progress view. The whole job ([`super::run`]) and the stale runs alone
//! ([`crate::stale::run`]) both run their lists here.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::record;
use crate::Error;
use crate::experiments::{self, Code, Entry, JobRun, Planned, Ran};
use crate::progress::{Progress, Stage};

/// Where the job records how long each run took.
pub const RECORD: &str = "results/main-job.md";

/// What the job's own record says where one stamp would stand: it records every run's stamp
/// in its table.
pub const RECORD_STAMP: &str = "per experiment, in the table";

/// One run of the main job: its experiment, and its arguments there.
#[derive(Clone, Copy)]
pub struct Run {
    pub experiment: &'static dyn Entry,
    pub run: &'static JobRun,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.run.name, self.experiment.name())
    }
}

impl Run {
    /// What it is, and the folder it writes.
    pub fn name(&self) -> &'static str {
        self.run.name
    }

    /// The command line that runs it alone.
    pub fn command_line(&self) -> String {
        self.experiment.command_line(self.run)
    }

    /// The command that measures it again, building first: `scripts/run.sh` with its
    /// arguments for an experiment of the bench client, the script itself for a script.
    pub fn rerun(&self) -> String {
        let line = self.command_line();
        match line.strip_prefix("bench-client") {
            Some(args) => format!("scripts/run.sh{args}"),
            None => line,
        }
    }

    /// Its plan, its arguments parsed as its command line gives them.
    pub fn plan(&self) -> Result<Box<dyn Planned>, Error> {
        Ok(self.experiment.planned_run(self.run)?)
    }

    /// The code its stamp covers, and where its results are: the folder it writes, or the
    /// file a script does.
    ///
    /// # Panics
    /// If its arguments do not parse (a unit test parses every run of the job).
    pub fn results(&self) -> (Code, PathBuf) {
        let planned = self
            .plan()
            .unwrap_or_else(|error| panic!("{}: {error}", self.name()));
        (self.experiment.code(), planned.out().to_owned())
    }
}

/// Every run of the main job, in order: each experiment of [`experiments::ALL`] in turn,
/// with its runs.
pub fn main_job() -> Vec<Run> {
    (experiments::ALL.iter())
        .flat_map(|&experiment| {
            experiment
                .job()
                .iter()
                .map(move |run| Run { experiment, run })
        })
        .collect()
}

/// One run as the job ran it, for [`RECORD`].
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub name: &'static str,
    pub command: String,
    /// The code stamp its results record.
    pub stamp: String,
    pub took: Duration,
    /// Its plan's floor ([`Planned::floor`]), with what the run measured of the machine
    /// ([`Ran::floor`]) if it finished: `took` is set beside it.
    pub floor: Duration,
    /// What it wrote, or why it did not finish.
    pub outcome: Result<Ran, String>,
}

impl Done {
    /// Whether it wrote its results with nothing failed.
    pub fn complete(&self) -> bool {
        matches!(&self.outcome, Ok(ran) if ran.failures == 0)
    }
}

/// Runs `runs`, each whatever the others did. Returns what each did.
pub async fn run_each(runs: &[Run]) -> Vec<Done> {
    let planned: Vec<Result<Box<dyn Planned>, Error>> = runs.iter().map(Run::plan).collect();
    let stages = (runs.iter().zip(&planned)).map(|(run, planned)| match planned {
        Ok(planned) => Stage {
            name: run.name().to_owned(),
            ..planned.stage()
        },
        Err(_) => Stage::empty(run.name().to_owned()),
    });
    let mut progress = Progress::new(stages.collect());
    let mut done = Vec::new();
    for (run, planned) in runs.iter().zip(planned) {
        let started = Instant::now();
        let (stamp, floor, outcome) = match planned {
            Ok(planned) => {
                let (stamp, floor) = (planned.stamp(), planned.floor());
                let outcome = planned.run(run.command_line(), &mut progress, false).await;
                let floor = outcome.as_ref().map_or(floor, |ran| ran.floor);
                (stamp, floor, outcome.map_err(|error| error.to_string()))
            }
            Err(error) => (String::new(), Duration::ZERO, Err(error.to_string())),
        };
        let took = started.elapsed();
        progress.print(&record::ended_line(run.name(), took, &outcome));
        progress.next_stage();
        done.push(Done {
            name: run.name(),
            command: run.command_line(),
            stamp,
            took,
            floor,
            outcome,
        });
    }
    progress.finish();
    done
}
