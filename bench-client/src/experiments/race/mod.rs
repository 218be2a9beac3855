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
use crate::experiments::comparison::{self, Case, HEAD_START, Plan};
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::measure::burst::{Connect, ErrorCount};
use crate::measure::environment::Environment;
use crate::measure::probe::ProbeChoice;
use crate::measure::session::{self, Event, Failure, Running, Step};
use crate::measure::stats::{grouped, spread};
use crate::measure::target::{self, Target, all_servers};
use crate::measure::work::WorkPath;
use crate::progress::Stage;
use arrival::{ArrivalPlan, ArrivalTally, ArrivalTrial};

mod args;
pub mod arrival;
mod claims;
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
    const CLAIMS: &'static [Claim<RaceReport>] = claims::CLAIMS;
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
    sleep_ms.min(comparison::defaults::PING_EVERY_MS)
}

/// The route the race repeats.
const BAD: WorkPath = WorkPath::canonical(Route::Bad);

pub use crate::measure::probe::PROBE_TIMEOUT_MS;

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
        let estimate = HEAD_START + Duration::from_millis(self.sleep_ms) * self.concurrency as u32;
        (0..self.trials)
            .map(|index| TrialStep {
                index,
                connect,
                estimate,
            })
            .collect()
    }

    /// The plan on `targets` (the variants' tests on `variants`), for the progress view.
    pub fn stage(&self, name: &str, targets: &[Target], variants: &[VariantRun]) -> Stage {
        let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, self.threads)).collect();
        let mut stages: Vec<Stage> = (self.connects.iter())
            .map(|&connect| Stage::of(name, &schedule, &self.steps(connect)))
            .collect();
        stages.push(Stage::of(name, &schedule, &self.arrival.steps()));
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

/// One trial to run on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialStep {
    pub index: usize,
    pub connect: Connect,
    estimate: Duration,
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

    fn estimate(&self, _threads: usize) -> Duration {
        self.estimate
    }
}

/// A closed loop whose slowest wait was under this many sleeps got in between every sleep.
pub const INTERLEAVED_BELOW: f64 = 1.5;

/// One whose slowest wait was over this share of the other N − 1 sleeps waited for them all.
pub const WAITED_FOR_ALL_SHARE: f64 = 0.8;

/// How a trial's closed-loop ping fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GotIn {
    /// Got in between every sleep: its slowest wait under 1.5 sleeps.
    Interleaved,
    /// Got in somewhere, not between every sleep.
    Partly,
    /// Waited behind every queued request: its slowest wait over 0.8 × (N − 1) sleeps.
    WaitedForAll,
    /// A burst request or a closed-loop ping failed: no verdict.
    Failed,
}

impl GotIn {
    /// The outcome of a closed loop whose slowest wait was `slowest_ms`, in a burst of `n`
    /// sleeps of `sleep_ms`.
    pub fn of(slowest_ms: f64, sleep_ms: u64, n: usize) -> GotIn {
        let sleeps = slowest_ms / sleep_ms as f64;
        if sleeps < INTERLEAVED_BELOW {
            GotIn::Interleaved
        } else if sleeps > WAITED_FOR_ALL_SHARE * n.saturating_sub(1) as f64 {
            GotIn::WaitedForAll
        } else {
            GotIn::Partly
        }
    }
}

/// One trial, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub target: String,
    pub connect: Connect,
    pub index: usize,
    pub outcome: GotIn,
    /// The closed loop's slowest answered ping, in sleeps.
    pub slowest_sleeps: Option<f64>,
    /// Open-loop pings scheduled, and those over [`PROBE_TIMEOUT_MS`] or failed.
    pub open_scheduled: usize,
    pub open_over_timeout: usize,
    /// Why open-loop pings failed, each reason with its count.
    pub open_errors: Vec<ErrorCount>,
}

impl Trial {
    /// The trial that `case` was.
    pub fn from_case(case: &Case, connect: Connect, index: usize) -> Trial {
        let closed = case.closed_loop.as_ref();
        let slowest_ms = closed.and_then(|ping| ping.max_ms);
        let failed = case.err > 0 || closed.is_none_or(|ping| ping.errors > 0);
        let outcome = match slowest_ms {
            Some(ms) if !failed => GotIn::of(ms, case.sleep_ms, case.n),
            _ => GotIn::Failed,
        };
        let open = case.open_loop.as_ref();
        let over = |ms: &&f64| **ms > PROBE_TIMEOUT_MS;
        Trial {
            target: case.target.clone(),
            connect,
            index,
            outcome,
            slowest_sleeps: slowest_ms.map(|ms| ms / case.sleep_ms as f64),
            open_scheduled: open.map_or(0, |open| open.scheduled),
            open_over_timeout: open.map_or(0, |open| {
                open.raw_ms.iter().filter(over).count() + open.errors
            }),
            open_errors: ErrorCount::count_all(
                (open.iter().flat_map(|open| &open.error_reasons))
                    .map(|reason| without_time(reason)),
            ),
        }
    }
}

/// `reason` without the time it came after (` after 2488 ms`), so that failures for one
/// reason count as one.
fn without_time(reason: &str) -> String {
    reason.split(" after ").next().unwrap_or(reason).to_owned()
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
    let arrived = arrival::run(&targets, &plan.arrival, on_arrival).await;
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
            let case = comparison::measure(running, BAD, &case_plan, None).await;
            Trial::from_case(&case, connect, step.index)
        };
        let steps = plan.steps(connect);
        let ran = session::run_each(&schedule, &case_plan.setup(), &steps, on, measure).await;
        outcome.measured.extend(ran.measured);
        outcome.failures.extend(ran.failures);
    }
    outcome
}

/// The trials of one target in one connect mode, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub target: String,
    pub connect: Connect,
    pub trials: usize,
    pub interleaved: usize,
    pub partly: usize,
    pub waited_for_all: usize,
    pub failed: usize,
    /// The slowest wait, in sleeps, over the trials with a verdict: min, median, max.
    pub slowest_sleeps: Option<[f64; 3]>,
    /// Open-loop pings over 1 s (or failed), of all scheduled, over every trial.
    pub open_over_timeout: usize,
    pub open_scheduled: usize,
    /// Why open-loop pings failed, over every trial.
    pub open_errors: Vec<ErrorCount>,
}

/// Each (target, connect mode)'s trials counted, in the order first measured.
pub fn tally(trials: &[Trial]) -> Vec<Tally> {
    let groups = grouped(trials, |trial| (trial.target.as_str(), trial.connect));
    (groups.into_iter())
        .map(|((target, connect), mine)| tally_of(target, connect, &mine))
        .collect()
}

fn tally_of(target: &str, connect: Connect, trials: &[&Trial]) -> Tally {
    let count = |outcome: GotIn| trials.iter().filter(|t| t.outcome == outcome).count();
    let sleeps: Vec<f64> = (trials.iter())
        .filter(|t| t.outcome != GotIn::Failed)
        .filter_map(|t| t.slowest_sleeps)
        .collect();
    let errors = (trials.iter()).flat_map(|t| {
        (t.open_errors.iter()).flat_map(|e| std::iter::repeat_n(e.reason.clone(), e.count))
    });
    Tally {
        target: target.to_owned(),
        connect,
        trials: trials.len(),
        interleaved: count(GotIn::Interleaved),
        partly: count(GotIn::Partly),
        waited_for_all: count(GotIn::WaitedForAll),
        failed: count(GotIn::Failed),
        slowest_sleeps: spread(sleeps),
        open_over_timeout: trials.iter().map(|t| t.open_over_timeout).sum(),
        open_scheduled: trials.iter().map(|t| t.open_scheduled).sum(),
        open_errors: ErrorCount::count_all(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_wait_decides_the_outcome() {
        assert_eq!(GotIn::of(140.0, 100, 10), GotIn::Interleaved);
        assert_eq!(GotIn::of(160.0, 100, 10), GotIn::Partly);
        assert_eq!(GotIn::of(720.0, 100, 10), GotIn::Partly);
        assert_eq!(GotIn::of(730.0, 100, 10), GotIn::WaitedForAll);
        assert_eq!(GotIn::of(990.0, 100, 10), GotIn::WaitedForAll);
    }

    #[test]
    fn a_tally_counts_each_outcome_and_spreads_the_slowest_waits() {
        let trial = |outcome, sleeps| Trial {
            target: "t".into(),
            connect: Connect::During,
            index: 0,
            outcome,
            slowest_sleeps: Some(sleeps),
            open_scheduled: 10,
            open_over_timeout: 2,
            open_errors: vec![ErrorCount {
                reason: "status 408".to_owned(),
                count: 1,
            }],
        };
        let trials = [
            trial(GotIn::Interleaved, 1.1),
            trial(GotIn::WaitedForAll, 9.9),
            trial(GotIn::WaitedForAll, 9.8),
            trial(GotIn::Failed, 0.0),
        ];
        let tally = &tally(&trials)[0];
        let counts = (
            tally.interleaved,
            tally.partly,
            tally.waited_for_all,
            tally.failed,
        );
        assert_eq!(counts, (1, 0, 2, 1));
        assert_eq!(tally.slowest_sleeps, Some([1.1, 9.8, 9.9]));
        assert_eq!((tally.open_over_timeout, tally.open_scheduled), (8, 40));
        let reasons = ErrorCount::count_all(vec!["status 408".to_owned(); 4]);
        assert_eq!(tally.open_errors, reasons);
    }
}
