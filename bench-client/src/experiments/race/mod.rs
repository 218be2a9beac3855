//! The race: does a health check get in between blocked requests? During `/bad` every
//! request blocks the reactor for one sleep, and whether the original's pinger is answered
//! between two of them, or only after all of them, depends on what the server does between
//! two handlers: a race between the client's connections and the server's loop, which one
//! run cannot settle. So this repeats the `/bad` case, the comparison's own measurement,
//! `trials` times per target and connect mode, each trial on fresh connections, and counts
//! the outcomes.
//!
//! A trial's outcome is read from the slowest wait of the closed-loop ping, in sleeps:
//! under 1.5, it got in between every sleep ([`GotIn::Interleaved`]); over 0.8 × (N − 1),
//! it waited behind every queued request ([`GotIn::WaitedForAll`]); between, it got in
//! somewhere ([`GotIn::Partly`]). A trial whose burst or ping failed has no verdict
//! ([`GotIn::Failed`]). Beside it, the share of open-loop pings over 1 s: Kubernetes'
//! default liveness probe times out after 1 s.

use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use arrival::{ArrivalPlan, ArrivalTally, ArrivalTrial};
use burst_meter::burst::Connect;
use burst_meter::case::{self, HEAD_START, Plan};
use burst_meter::environment::Environment;
use burst_meter::probe::ProbeChoice;
use burst_meter::session::{self, Event, Failure, Running, Step};
use burst_meter::target::{self, Target, all_servers};
use burst_meter::work::WorkPath;
pub use trial::{GotIn, INTERLEAVED_BELOW, Tally, Trial, WAITED_FOR_ALL_SHARE, tally};

mod args;
pub mod arrival;
mod claims;
mod trial;
mod variants;
pub mod views;

pub use args::RaceArgs;
pub use variants::{VARIANT_TESTS, VariantReport, VariantRun, VariantTest, variant_runs};

/// The race, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Race;

/// The race's plan, its targets, and its variants' tests on those of them that have one.
#[derive(Debug)]
pub struct Planned {
    pub plan: RacePlan,
    pub targets: Vec<Target>,
    pub variants: Vec<VariantRun>,
}

impl Experiment for Race {
    const NAME: &'static str = "race";
    const TITLE: &'static str = "the race";
    const RECORD: &'static str = "race.json";
    const CLAIMS: &'static [&'static [Claim<RaceReport>]] = claims::GROUPS;
    /// The race measures with the comparison's case: its folder is the race's code too.
    const CODE: Code = Code {
        own: &[
            "bench-client/src/experiments/race",
            "bench-client/src/experiments/comparison",
        ],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &JOB;

    type Args = RaceArgs;
    type Plan = Planned;
    type Step = Trial;
    type Record = RaceReport;

    fn plan(args: &RaceArgs) -> (Planned, Vec<String>) {
        let (mut targets, notes) = args.spawn.targets(&all_servers());
        targets.retain(|target| target.runs_at(args.threads, true));
        let bin_dir = (args.spawn.bin_dir.clone()).unwrap_or_else(target::default_bin_dir);
        let variants = match args.no_variants || args.threads != 1 {
            true => Vec::new(),
            false => variant_runs(&targets, &bin_dir),
        };
        let plan = args.plan();
        let planned = Planned {
            plan,
            targets,
            variants,
        };
        (planned, notes)
    }

    fn out(args: &RaceArgs) -> &Path {
        &args.out
    }

    fn stage(planned: &Planned, title: &str) -> Stage {
        planned
            .plan
            .stage(title, &planned.targets, &planned.variants)
    }

    async fn run(
        planned: Planned,
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Trial>),
    ) -> RaceReport {
        race(planned, environment, command, on).await
    }

    fn views(report: &RaceReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &RaceReport) -> usize {
        report.failures.len()
    }
}

/// The race's runs in the main job.
const JOB: [JobRun; 4] = [
    job_run(
        "the health check's race (results/race/)",
        &["--servers", "all", "--out", "results/race"],
    ),
    job_run(
        "the race at 500 ms (results/race-500ms/)",
        &[
            "--servers",
            "all",
            "--sleep-ms",
            "500",
            "--trials",
            "2",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--no-variants",
            "--out",
            "results/race-500ms",
        ],
    ),
    job_run(
        "the race per core, 2 threads (results/per-core/threads-2/)",
        &PER_CORE_2,
    ),
    job_run(
        "the race per core, 4 threads (results/per-core/threads-4/)",
        &PER_CORE_4,
    ),
];

const PER_CORE_2: [&str; 8] = per_core("2", "results/per-core/threads-2");
const PER_CORE_4: [&str; 8] = per_core("4", "results/per-core/threads-4");

/// The race on `threads` reactor threads, connecting during the burst only, without the
/// ping's arrival controlled.
const fn per_core(threads: &'static str, out: &'static str) -> [&'static str; 8] {
    [
        "--threads",
        threads,
        "--connect",
        "during",
        "--arrival-trials",
        "0",
        "--out",
        out,
    ]
}

/// The race's defaults.
pub mod defaults {
    /// Trials per target and connect mode.
    pub const TRIALS: usize = 20;
    /// Far shorter than the comparison's 500 ms: ten sleeps per trial, and many trials. The
    /// outcomes at 50 ms are those at 100 ms (the race at 500 ms checks the comparison's).
    /// Not shorter: at 25 ms the pinger's 50 ms pause is two sleeps, and a ping that comes
    /// back three sleeps into the burst waits only seven, which reads as getting in.
    pub const SLEEP_MS: u64 = 50;
    pub const CONCURRENCY: usize = 10;
}

/// The probes' period at a sleep of `sleep_ms`: the comparison's 50 ms, or one sleep if that
/// is shorter. A closed-loop ping answered just before the burst then comes back within its
/// first sleep; pausing two sleeps, it would come back into the third, wait for only seven of
/// ten, and read as having got in.
pub fn ping_every_ms(sleep_ms: u64) -> u64 {
    sleep_ms.min(case::defaults::PING_EVERY_MS)
}

/// The route the race repeats.
const BAD: WorkPath = WorkPath::canonical(Route::Bad);

pub use burst_meter::probe::PROBE_TIMEOUT_MS;

/// What to repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RacePlan {
    pub trials: usize,
    /// Reactor threads of every server (`--threads`); the variants run at one.
    pub threads: usize,
    pub sleep_ms: u64,
    pub concurrency: usize,
    pub ping_every_ms: u64,
    /// Each connect mode in turn, every target at each.
    pub connects: Vec<Connect>,
    /// The trials with the ping's arrival controlled.
    pub arrival: ArrivalPlan,
}

impl Default for RacePlan {
    fn default() -> RacePlan {
        RacePlan {
            trials: defaults::TRIALS,
            threads: 1,
            sleep_ms: defaults::SLEEP_MS,
            concurrency: defaults::CONCURRENCY,
            ping_every_ms: ping_every_ms(defaults::SLEEP_MS),
            connects: vec![Connect::During, Connect::Before],
            arrival: ArrivalPlan {
                trials: arrival::defaults::TRIALS,
                sleep_ms: arrival::defaults::SLEEP_MS,
                concurrency: defaults::CONCURRENCY,
                points: arrival::PingAt::ALL.to_vec(),
            },
        }
    }
}

impl RacePlan {
    /// The comparison's plan of one trial: `/bad` alone, both probes, on the plan's reactor
    /// threads.
    pub fn case_plan(&self, connect: Connect) -> Plan {
        Plan {
            routes: vec![BAD],
            concurrency: self.concurrency,
            sleep_ms: self.sleep_ms,
            ping_every_ms: self.ping_every_ms,
            threads: vec![self.threads],
            probe: ProbeChoice::Both,
            connect,
            ..Plan::default()
        }
    }

    /// The trials on one target in one connect mode.
    fn steps(&self, connect: Connect) -> Vec<TrialStep> {
        (0..self.trials)
            .map(|index| TrialStep {
                index,
                connect,
                sleep: Duration::from_millis(self.sleep_ms),
                concurrency: self.concurrency,
            })
            .collect()
    }

    /// The plan on `targets` (the variants' tests on `variants`), for the progress view.
    pub fn stage(&self, name: &str, targets: &[Target], variants: &[VariantRun]) -> Stage {
        let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, self.threads)).collect();
        let mut stages: Vec<Stage> = (self.connects.iter())
            .map(|&connect| Stage::of(name, &schedule, &self.steps(connect)))
            .collect();
        let keeping = keeping_events(targets);
        let arrival: Vec<(&Target, usize)> = keeping.iter().map(|t| (t, self.threads)).collect();
        stages.push(Stage::of(name, &arrival, &self.arrival.steps()));
        for run in variants {
            let plan = run.test.plan(self);
            let schedule: Vec<(&Target, usize)> = run.targets.iter().map(|t| (t, 1)).collect();
            stages.push(Stage::of(name, &schedule, &plan.steps(run.test.connect)));
        }
        Stage {
            name: name.to_owned(),
            steps: stages.iter().map(|stage| stage.steps).sum(),
            estimate: stages.iter().map(|stage| stage.estimate).sum(),
        }
    }
}

/// The targets that keep a record of their accepts, which the trials with the ping's arrival
/// controlled read: every one but a stack that does not see them
/// ([`stacks::records_accepts`]).
fn keeping_events(targets: &[Target]) -> Vec<Target> {
    (targets.iter())
        .filter(|target| stacks::records_accepts(target.label()))
        .cloned()
        .collect()
}

/// One trial to run on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialStep {
    pub index: usize,
    pub connect: Connect,
    sleep: Duration,
    concurrency: usize,
}

impl Step for TrialStep {
    fn route(&self) -> WorkPath {
        BAD
    }

    fn describe(&self) -> String {
        let connect = match self.connect {
            Connect::During => "connecting during",
            Connect::Before => "connecting before",
        };
        format!("/bad trial {} ({connect})", self.index + 1)
    }

    /// The head start and the burst's sleeps in turn on each reactor thread, spread as evenly
    /// as the kernel could: ⌈N / threads⌉ of them, so no trial is quicker.
    fn floor(&self, _target: &str, threads: usize) -> Duration {
        let rounds = self.concurrency.div_ceil(threads.max(1));
        HEAD_START + self.sleep * rounds as u32
    }
}

/// Everything one race produced: `race.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceReport {
    pub environment: Environment,
    pub plan: RacePlan,
    pub command: String,
    pub tallies: Vec<Tally>,
    pub trials: Vec<Trial>,
    pub arrival: Vec<ArrivalTally>,
    pub arrival_trials: Vec<ArrivalTrial>,
    /// Each variant's test (`flips` in records from before the name changed).
    #[serde(alias = "flips")]
    pub variants: Vec<VariantReport>,
    pub failures: Vec<Failure>,
}

/// The race from its first trial to its record, measured in `environment`: the trials on
/// its targets, the same with the ping's arrival controlled, then each variant's test.
pub async fn race(
    Planned {
        plan,
        targets,
        variants,
    }: Planned,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Trial>),
) -> RaceReport {
    let session::Outcome {
        measured,
        mut failures,
    } = run(&targets, &plan, on).await;
    let on_arrival = &mut |event: Event<'_, Vec<ArrivalTrial>>| {
        if let Some(event) = event.untyped() {
            on(event);
        }
    };
    let arrived = arrival::run(&keeping_events(&targets), &plan.arrival, on_arrival).await;
    failures.extend(arrived.failures);
    let arrival_trials: Vec<ArrivalTrial> = arrived.measured.into_iter().flatten().collect();
    let mut variant_reports = Vec::new();
    for variant in &variants {
        let ran = run(&variant.targets, &variant.test.plan(&plan), on).await;
        failures.extend(ran.failures);
        variant_reports.push(variant.report(&ran.measured));
    }
    RaceReport {
        environment,
        command,
        tallies: tally(&measured),
        trials: measured,
        arrival: arrival::tally(&arrival_trials, plan.arrival.sleep_ms),
        arrival_trials,
        variants: variant_reports,
        plan,
        failures,
    }
}

/// Runs every trial: each connect mode in turn, every target at it, `trials` cases of `/bad`
/// each.
pub async fn run(
    targets: &[Target],
    plan: &RacePlan,
    on: &mut impl FnMut(Event<'_, Trial>),
) -> session::Outcome<Trial> {
    let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, plan.threads)).collect();
    let mut outcome = session::Outcome::default();
    for &connect in &plan.connects {
        let case_plan = plan.case_plan(connect);
        let measure = async |running: &Running, step: &TrialStep| {
            let case = case::measure(running, BAD, &case_plan, None).await;
            Trial::from_case(&case, connect, step.index)
        };
        let steps = plan.steps(connect);
        let ran = session::run_each(&schedule, &case_plan.setup(), &steps, on, measure).await;
        outcome.measured.extend(ran.measured);
        outcome.failures.extend(ran.failures);
    }
    outcome
}
