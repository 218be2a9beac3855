//! tokio's own answers, measured on the tokio servers, one request at a time, each shape read
//! from what the server recorded:
//! - on `current_thread` (`--threads 1`), what `/ok-block-in-place` and `/join-block-in-place`
//!   answer: `block_in_place` panics there, and the servers turn the panic into a 500;
//! - the sibling: a timer joined in one task with a sleep under `block_in_place`
//!   (`/join-block-in-place`) against the same sleep under `spawn_blocking`
//!   (`/join-spawn-blocking`), and when the timer fired;
//! - the LIFO slot: `/bad-after-spawn` spawns a task and then blocks its worker; when, and on
//!   which thread, the task ran, on demo-hyper-tokio built with `--cfg tokio_unstable`, stock
//!   against the same binary with the slot off (`Builder::disable_lifo_slot`), at each worker
//!   count.
//!
//! Every request is one record; every count is derived from the records once ([`tally`]).

use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use demo_contract::variant::{self, MULTI_THREAD, Variant, runs_in};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::environment::Environment;
use burst_meter::session::{
    self, Event, Failure, PAUSE, Running, ServerOptions, ServerSetup, Step,
};
use burst_meter::target::{self, Launcher, Target};
use burst_meter::work::WorkPath;

mod args;
pub mod claims;
mod measure;
pub mod tally;
pub mod views;

pub use args::TokioArgs;

/// tokio's own answers, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Tokio;

impl Experiment for Tokio {
    const NAME: &'static str = "tokio";
    const TITLE: &'static str = "tokio's own answers";
    const RECORD: &'static str = "tokio.json";
    const CLAIMS: &'static [&'static [Claim<TokioReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/tokio"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[job_run(
        "tokio's own answers (results/tokio/)",
        &["--out", "results/tokio"],
    )];

    type Args = TokioArgs;
    type Plan = (TokioPlan, TokioTargets);
    type Step = Measured;
    type Record = TokioReport;

    fn plan(args: &TokioArgs) -> ((TokioPlan, TokioTargets), Vec<String>) {
        let servers = servers();
        let (stock, mut notes) = args.spawn.targets(&servers);
        let (tokio, others): (Vec<Target>, Vec<Target>) =
            (stock.into_iter()).partition(|target| servers.contains(&target.label()));
        for target in others {
            notes.push(format!("{}: left out, not a tokio server", target.label()));
        }
        let lifo = lifo_targets(&args.spawn.folders().bin_dir);
        ((args.plan(), TokioTargets { tokio, lifo }), notes)
    }

    fn out(args: &TokioArgs) -> &Path {
        &args.out
    }

    fn stage((plan, targets): &(TokioPlan, TokioTargets), title: &str) -> Stage {
        let runs: Vec<Duration> = (plan.schedules(targets).into_iter())
            .flat_map(|(step, runs)| runs.into_iter().map(move |_| plan.floor(step) + PAUSE))
            .collect();
        Stage {
            name: title.to_owned(),
            steps: runs.len(),
            estimate: runs.into_iter().sum(),
        }
    }

    async fn run(
        (plan, targets): (TokioPlan, TokioTargets),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Measured>),
    ) -> TokioReport {
        tokio_answers(&targets, plan, environment, command, on).await
    }

    fn views(report: &TokioReport) -> Result<Vec<(String, String)>, Error> {
        Ok(views::views(report))
    }

    fn failures(report: &TokioReport) -> usize {
        report.failures.len()
    }
}

/// The tokio servers: the ones with a `multi-thread` variant, the runtime `block_in_place`
/// needs (those whose description serves tokio's own routes).
pub fn servers() -> Vec<&'static str> {
    (variant::every())
        .filter(|variant| variant.name == MULTI_THREAD)
        .map(|variant| variant.server)
        .collect()
}

/// The flip of the LIFO slot's trials: the variant a stack's description tags `tokio`, the
/// slot turned off.
pub fn lifo_slot_off() -> &'static Variant {
    let mut flips = variant::running_in(runs_in::TOKIO);
    flips
        .next()
        .expect("a stack.toml describes tokio's LIFO slot off (a variant with runs_in tokio)")
}

/// The experiment's defaults.
pub mod defaults {
    /// Requests per route and setting: enough to say "every" or "none" of.
    pub const TRIALS: usize = 30;
    /// The sleep of each request: over the servers' stall limit, so a held task is plain.
    pub const SLEEP_MS: u64 = 150;
    /// The workers of the join's trials: a free worker beside the one that blocks.
    pub const JOIN_WORKERS: usize = 2;
    /// The workers of the LIFO slot's trials: one idle worker beside the blocked one, then
    /// three.
    pub const WORKERS: [usize; 2] = [2, 4];
}

/// The pause between two requests of a trial run: the last one's spawned task and timer have
/// long ended.
const GAP: Duration = Duration::from_millis(20);

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokioPlan {
    pub trials: usize,
    pub sleep_ms: u64,
    /// The workers of the join's trials (`--threads`).
    pub join_workers: usize,
    /// The workers of the LIFO slot's trials, each in turn (`--threads`).
    pub workers: Vec<usize>,
    /// The spawned servers' settings, where not their defaults.
    #[serde(flatten)]
    pub server: ServerOptions,
}

/// The servers it starts: the tokio servers as built, and demo-hyper-tokio's build with
/// tokio's unstable API, stock and with the LIFO slot off.
#[derive(Debug, Clone)]
pub struct TokioTargets {
    pub tokio: Vec<Target>,
    pub lifo: [Target; 2],
}

/// The LIFO slot's settings: demo-hyper-tokio built with `--cfg tokio_unstable` (`scripts/run.sh`
/// builds it), stock and as [`lifo_slot_off`], so that the slot is the one difference.
pub fn lifo_targets(bin_dir: &Path) -> [Target; 2] {
    let unstable = target::unstable_bin_dir(bin_dir);
    let flip = lifo_slot_off();
    let server = flip.server;
    let stock = Target::Spawn {
        name: format!("{server} (LIFO slot on)"),
        launcher: Launcher::program(unstable.join(server)),
    };
    [stock, Target::variant(flip, &unstable)]
}

/// One part of the experiment, run on each server of its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokioStep {
    CurrentThread,
    Join,
    Spawn,
}

impl TokioPlan {
    /// Each part with the (server, workers) pairs it runs on.
    pub fn schedules<'t>(
        &self,
        targets: &'t TokioTargets,
    ) -> Vec<(TokioStep, Vec<(&'t Target, usize)>)> {
        let each = |threads: usize| targets.tokio.iter().map(move |target| (target, threads));
        let lifo = (self.workers.iter())
            .flat_map(|&workers| targets.lifo.iter().map(move |target| (target, workers)));
        vec![
            (TokioStep::CurrentThread, each(1).collect()),
            (TokioStep::Join, each(self.join_workers).collect()),
            (TokioStep::Spawn, lifo.collect()),
        ]
    }

    /// The least `step` can take on one server: its requests, one after another.
    fn floor(&self, step: TokioStep) -> Duration {
        let request = Duration::from_millis(self.sleep_ms) + GAP;
        match step {
            TokioStep::CurrentThread => GAP * 2,
            TokioStep::Join => request * (2 * self.trials) as u32,
            TokioStep::Spawn => request * self.trials as u32,
        }
    }
}

/// One step of the plan, with the plan it reads its trials from.
#[derive(Debug, Clone, Copy)]
pub struct TokioCase<'p>(TokioStep, &'p TokioPlan);

impl Step for TokioCase<'_> {
    fn route(&self) -> WorkPath {
        WorkPath::canonical(match self.0 {
            TokioStep::CurrentThread => Route::OkBlockInPlace,
            TokioStep::Join => Route::JoinBlockInPlace,
            TokioStep::Spawn => Route::BadAfterSpawn,
        })
    }

    fn describe(&self) -> String {
        match self.0 {
            TokioStep::CurrentThread => "block_in_place on current_thread".to_owned(),
            TokioStep::Join => format!("{} trials of each join", self.1.trials),
            TokioStep::Spawn => format!("{} trials of /bad-after-spawn", self.1.trials),
        }
    }

    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        self.1.floor(self.0)
    }
}

/// What one request to tokio's routes on `current_thread` answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    pub target: String,
    pub route: String,
    pub status: u16,
    /// The answer's `error`, or its whole body if it has none.
    pub error: String,
}

/// One request of a join route: when its timer was due and when it fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JoinTrial {
    pub target: String,
    pub workers: usize,
    pub route: String,
    pub slept_ms: u64,
    pub timer_due_ms: u64,
    pub timer_fired_ms: f64,
}

impl JoinTrial {
    /// Whether the timer fired only once the sleep had ended.
    pub fn held(&self) -> bool {
        self.timer_fired_ms >= self.slept_ms as f64
    }
}

/// One request of `/bad-after-spawn`: when, and where, the task it spawned first ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpawnTrial {
    pub target: String,
    pub lifo_slot: bool,
    pub workers: usize,
    pub slept_ms: u64,
    pub spawned_ran_ms: f64,
    /// Whether it ran on the thread that slept.
    pub same_thread: bool,
}

impl SpawnTrial {
    /// Whether the task waited for the whole sleep.
    pub fn waited(&self) -> bool {
        self.spawned_ran_ms >= self.slept_ms as f64
    }
}

/// Everything one run produced: `tokio.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokioReport {
    pub environment: Environment,
    pub plan: TokioPlan,
    pub command: String,
    pub refusals: Vec<Refusal>,
    pub joins: Vec<JoinTrial>,
    pub spawns: Vec<SpawnTrial>,
    pub failures: Vec<Failure>,
}

/// What one step on one server measured.
#[derive(Debug)]
pub enum Measured {
    Refusals(Vec<Refusal>),
    Joins(Vec<JoinTrial>),
    Spawns(Vec<SpawnTrial>),
    /// A request failed: the step is reported as failed, with no records.
    Failed(Failure),
}

/// The experiment from its first server to its record, measured in `environment`.
pub async fn tokio_answers(
    targets: &TokioTargets,
    plan: TokioPlan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Measured>),
) -> TokioReport {
    let mut report = TokioReport {
        environment,
        plan: plan.clone(),
        command,
        refusals: Vec::new(),
        joins: Vec::new(),
        spawns: Vec::new(),
        failures: Vec::new(),
    };
    let setup = ServerSetup {
        sleep_ms: plan.sleep_ms,
        options: plan.server,
        ..ServerSetup::default()
    };
    for (step, schedule) in plan.schedules(targets) {
        let measure = async |running: &Running, step: &TokioCase<'_>| {
            measure::measure(running, step.0, step.1)
                .await
                .unwrap_or_else(Measured::Failed)
        };
        let outcome =
            session::run_each(&schedule, &setup, &[TokioCase(step, &plan)], on, measure).await;
        report.failures.extend(outcome.failures);
        for measured in outcome.measured {
            match measured {
                Measured::Refusals(refusals) => report.refusals.extend(refusals),
                Measured::Joins(joins) => report.joins.extend(joins),
                Measured::Spawns(spawns) => report.spawns.extend(spawns),
                Measured::Failed(failure) => report.failures.push(failure),
            }
        }
    }
    report
}
