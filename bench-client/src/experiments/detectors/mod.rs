//! Catching it, side by side: each way of catching a blocked reactor on one workload, read
//! from what it prints.
//!
//! Every detector here reports on the server's stderr, so the client reads each server's
//! stderr as it comes, noting when each line arrived, and runs the same steps on each
//! (detector, stack): two routes that are slow without blocking (`/ok-await`, `/ok-blocking`:
//! a report there is a false alarm), the comparison's `/bad` and the CPU experiment's
//! `/bad-cpu`, then one request that holds its reactor thread for [`DetectorsPlan::held_ms`],
//! [`DetectorsPlan::held_trials`] times: does the detector say so while the thread is still
//! held, and how long after the request was sent? One reactor thread throughout.
//!
//! A detector's lines are told from the server's other output by a piece of text only its
//! reports contain ([`Detector::marker`]); what it names, the route or something else, is read
//! from those lines.

use std::path::Path;
use std::time::Duration;

use demo_contract::variant::{self, runs_in};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::environment::Environment;
use burst_meter::session::{self, Event, Failure, Running};
use burst_meter::target::{self, Target, all_servers, references};

mod args;
mod claims;
mod observe;
mod plan;
mod scorecard;
pub mod views;

pub use args::DetectorsArgs;
use observe::observe;
pub use observe::{Observation, ReportLine};
pub use plan::{DetectorsPlan, Phase, PhaseStep};
pub use scorecard::{CostRound, HeldTrial, OnOff, Scorecard, scorecards};

/// The detectors experiment, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Detectors;

impl Experiment for Detectors {
    const NAME: &'static str = "detectors";
    const TITLE: &'static str = "the detectors";
    const RECORD: &'static str = "detectors.json";
    const CLAIMS: &'static [&'static [Claim<DetectorsReport>]] = &[claims::CLAIMS];
    /// The detectors measure their cost with the comparison's case, and read tokio-console
    /// through console-probe: both are their code too.
    const CODE: Code = Code {
        own: &[
            "bench-client/src/experiments/detectors",
            "bench-client/src/experiments/comparison",
            "crates/console-probe",
        ],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[job_run(
        "catching it, side by side (results/detectors/)",
        &["--servers", "all", "--out", "results/detectors"],
    )];

    type Args = DetectorsArgs;
    type Plan = (DetectorsPlan, Vec<DetectorRun>);
    type Step = Observation;
    type Record = DetectorsReport;

    fn plan(args: &DetectorsArgs) -> ((DetectorsPlan, Vec<DetectorRun>), Vec<String>) {
        let (targets, notes) = args.spawn.targets(&all_servers());
        ((args.plan(), runs(&targets)), notes)
    }

    fn out(args: &DetectorsArgs) -> &Path {
        &args.out
    }

    fn stage((plan, runs): &(DetectorsPlan, Vec<DetectorRun>), title: &str) -> Stage {
        plan.stage(title, runs)
    }

    async fn run(
        (plan, runs): (DetectorsPlan, Vec<DetectorRun>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Observation>),
    ) -> DetectorsReport {
        detectors(&runs, plan, environment, command, on).await
    }

    fn views(report: &DetectorsReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &DetectorsReport) -> usize {
        report.failures.len()
    }
}

/// The plan's defaults: the comparison's N, sleeps short but over the threshold.
pub mod defaults {
    pub const CONCURRENCY: usize = 10;
    /// Twice the detectors' 100 ms threshold: every blocked request is over it.
    pub const SLEEP_MS: u64 = 200;
    pub const CPU_MS: u64 = 200;
    /// Twice the liveness probe's 1 s timeout: held long enough to fail the probe.
    pub const HELD_MS: u64 = 2000;
    pub const HELD_TRIALS: usize = 2;
    /// The cost: rounds of the detector-on/off runs' burst, on and off.
    pub const COST_ROUNDS: usize = 3;
    pub const COST_CONCURRENCY: usize = 1000;
}

/// The threshold every detector that takes one is given: asyncio's default.
pub const THRESHOLD_MS: u64 = 100;

/// How long the client keeps listening after a step's last answer: a detector that samples
/// (tokio-metrics every 100 ms) or reports when a poll returns prints just after.
pub const LISTEN_AFTER: Duration = Duration::from_millis(200);

/// The servers a detector runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
    /// Every stack of the workspace ([`stacks::names`]): the server's own detector.
    EveryStack,
    /// The stacks whose description has the detector's variant, tagged `detectors`: a
    /// detector of one runtime's or framework's ecosystem.
    HavingVariant,
    /// The reference app on each of its event loops.
    References,
    /// The reference app on the event loop named, where its description has it.
    ReferenceOn(&'static str),
    /// None: the cost's baseline, which runs where some detector does.
    Nowhere,
}

impl RunsOn {
    /// Whether `detector` (whose `servers` this is) runs on `server`.
    fn has(self, detector: &Detector, server: &str) -> bool {
        match self {
            RunsOn::EveryStack => stacks::names().contains(&server),
            RunsOn::HavingVariant => detector.described_by(server).is_some(),
            RunsOn::References => references().contains(&server),
            RunsOn::ReferenceOn(event_loop) => (server.strip_suffix(event_loop))
                .is_some_and(|name| name.ends_with('-') && references().contains(&server)),
            RunsOn::Nowhere => false,
        }
    }
}

/// One way of catching a blocked reactor, and how it is switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detector {
    pub name: &'static str,
    /// The stacks it runs on.
    pub servers: RunsOn,
    /// The variant that turns it on (`--variant NAME`), if it is not the server's own
    /// detector.
    pub variant: Option<&'static str>,
    /// The server's `--stall-ms`: the threshold for the server's own detector, 0 (its own off)
    /// when another one is measured.
    pub stall_ms: u64,
    /// Text in every line it reports, and in no other line the server prints.
    pub marker: &'static str,
    /// How it works and where that is written, for the report; `None` where its variant's
    /// description says it ([`Detector::about`]).
    pub about: Option<&'static str>,
    /// Which build of the server it needs.
    pub build: Build,
}

impl Detector {
    /// Whether it runs on `server`.
    pub fn runs_on(&self, server: &str) -> bool {
        self.servers.has(self, server)
    }

    /// Its variant as `server`'s description gives it, tagged `detectors`.
    fn described_by(&self, server: &str) -> Option<&'static variant::Variant> {
        let name = self.variant?;
        variant::of_server(server).find(|v| v.name == name && v.runs_in(runs_in::DETECTORS))
    }

    /// How it works and where that is written: its own words, or its variant's.
    pub fn about(&self) -> &'static str {
        let described = || {
            let mut variants = variant::running_in(runs_in::DETECTORS);
            variants.find(|v| Some(v.name) == self.variant)
        };
        (self.about)
            .or_else(|| described().map(|variant| variant.about))
            .unwrap_or_default()
    }
}

/// Which build of a server a detector runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The workspace's own binaries.
    Stock,
    /// The same server built with `RUSTFLAGS="--cfg tokio_unstable"` for tokio's unstable API,
    /// into its own target folder ([`target::unstable_bin_dir`]), so that the workspace's
    /// normal build is not rebuilt for it.
    TokioUnstable,
}

/// The FastAPI app's pyleak variant (`VARIANTS` in `reference/fastapi/app.py`).
pub const PYLEAK_VARIANT: &str = "pyleak";

/// The detectors, in the order the report lists them.
pub const DETECTORS: [Detector; 9] = [
    Detector {
        name: "reactor-watch",
        servers: RunsOn::EveryStack,
        variant: None,
        stall_ms: THRESHOLD_MS,
        marker: "reactor thread",
        about: Some(
            "this project's crate: a timer around every poll of each request future, and a \
                watchdog thread that scans the polls running every half threshold \
                (crates/reactor-watch)",
        ),
        build: Build::Stock,
    },
    Detector {
        name: "tokio-metrics TaskMonitor",
        servers: RunsOn::HavingVariant,
        variant: Some("task-monitor"),
        stall_ms: 0,
        marker: "tokio-metrics TaskMonitor:",
        about: None,
        build: Build::Stock,
    },
    Detector {
        name: "tokio poll hooks",
        servers: RunsOn::HavingVariant,
        variant: Some("poll-hooks"),
        stall_ms: 0,
        marker: "tokio poll hooks:",
        about: None,
        build: Build::TokioUnstable,
    },
    Detector {
        name: "tokio-console never-yielded",
        servers: RunsOn::HavingVariant,
        variant: Some("console"),
        stall_ms: 0,
        marker: r#"{"event":"warning","lint":"never-yielded""#,
        about: Some(
            "console-subscriber 0.5 on the server (a build with --cfg tokio_unstable, its \
                defaults: an update every second), its stream read by console-probe \
                (crates/console-probe) through console-api as the console's UI reads it, the \
                UI's warnings worked out as the UI works them out (tokio-console/src/warnings.rs); \
                a report is the one warning about a task holding its thread, never-yielded: a \
                task running now, polled at most once, busy for 1 s or more",
        ),
        build: Build::TokioUnstable,
    },
    Detector {
        name: "tokio-console task list",
        servers: RunsOn::HavingVariant,
        variant: Some("console"),
        stall_ms: 0,
        marker: r#"{"event":"poll""#,
        about: Some(
            "the same stream read for what the console's task list shows, not a warning: \
                a task whose poll, at an update, has been running for 100 ms or more (its \
                state and busy time), or whose last poll, ended, lasted that long; an update \
                carries each task's last poll only, so a poll is seen if an update comes while \
                it runs or before the task's next poll",
        ),
        build: Build::TokioUnstable,
    },
    Detector {
        name: "glommio stall detector",
        servers: RunsOn::HavingVariant,
        variant: Some("stall-detector"),
        stall_ms: 0,
        marker: "[stall-detector -- executor",
        about: None,
        build: Build::Stock,
    },
    Detector {
        name: "asyncio debug mode",
        servers: RunsOn::ReferenceOn("asyncio"),
        variant: None,
        stall_ms: THRESHOLD_MS,
        marker: "Executing ",
        about: Some(
            "loop.set_debug(True) and slow_callback_duration = 0.1: the loop times each \
                callback or task step and logs the slow ones after they return \
                (Lib/asyncio/base_events.py, _run_once)",
        ),
        build: Build::Stock,
    },
    Detector {
        name: "uvloop debug mode",
        servers: RunsOn::ReferenceOn("uvloop"),
        variant: None,
        stall_ms: THRESHOLD_MS,
        marker: "Executing ",
        about: Some(
            "the same switches on uvloop, which logs slow callbacks in the same words \
                (uvloop/cbhandles.pyx)",
        ),
        build: Build::Stock,
    },
    Detector {
        name: "pyleak no_event_loop_blocking",
        servers: RunsOn::References,
        variant: Some(PYLEAK_VARIANT),
        stall_ms: 0,
        marker: "Event loop blocked for",
        about: Some(
            "pyleak 0.2.0 around the server's life (threshold 0.1 s): a thread schedules a \
                callback on the loop and logs a block when the loop has not run it in time, \
                while the loop is still held; a block with the same stack as the last is \
                merged into it (pyleak/eventloop.py, _monitor_loop, _add_block)",
        ),
        build: Build::Stock,
    },
];

/// Each stack with no detector at all, for the cost: its own detector off (`--stall-ms 0`),
/// no variant.
pub const BASELINE: Detector = Detector {
    name: "none",
    servers: RunsOn::Nowhere,
    variant: None,
    stall_ms: 0,
    marker: "",
    about: Some("the stack with no detector: the cost's baseline"),
    build: Build::Stock,
};

/// A detector on one stack: the server to start, as the detector's variant.
#[derive(Debug, Clone)]
pub struct DetectorRun {
    pub detector: Detector,
    /// The server's own name; the target's label adds the detector's when it is a variant.
    pub stack: String,
    pub target: Target,
}

/// Each of `targets` that some detector runs on with none, for the cost's baseline, then every
/// detector on each of `targets` it runs on, in the order of [`DETECTORS`].
pub fn runs(targets: &[Target]) -> Vec<DetectorRun> {
    let watched = |target: &&Target| DETECTORS.iter().any(|d| d.runs_on(target.label()));
    let mut runs: Vec<DetectorRun> = (targets.iter().filter(watched))
        .map(|target| DetectorRun {
            detector: BASELINE,
            stack: target.label().to_owned(),
            target: target.clone(),
        })
        .collect();
    for detector in DETECTORS {
        for target in targets.iter().filter(|t| detector.runs_on(t.label())) {
            let stack = target.label().to_owned();
            let target = as_variant(detector, target.clone());
            runs.push(DetectorRun {
                detector,
                stack,
                target,
            });
        }
    }
    runs
}

/// `target` started as `detector`'s variant, its build chosen, named after both; as it is
/// for the server's own detector.
fn as_variant(detector: Detector, mut target: Target) -> Target {
    let (Some(variant), Target::Spawn { name, launcher }) = (detector.variant, &mut target) else {
        return target;
    };
    launcher
        .args
        .extend([variant::FLAG.to_owned(), variant.to_owned()]);
    if detector.build == Build::TokioUnstable {
        let bin_dir = launcher.program.parent().unwrap_or(Path::new("."));
        launcher.program = target::unstable_bin_dir(bin_dir).join(name.as_str());
    }
    *name = format!("{name} ({})", detector.name);
    target
}

/// Everything the run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DetectorsReport {
    pub environment: Environment,
    pub command: String,
    pub plan: DetectorsPlan,
    #[serde(alias = "verdicts")]
    pub scorecards: Vec<Scorecard>,
    pub observations: Vec<Observation>,
    pub failures: Vec<Failure>,
}

impl DetectorsReport {
    /// The scorecards of the detectors, without the baselines.
    pub fn detected(&self) -> impl Iterator<Item = &Scorecard> {
        self.scorecards
            .iter()
            .filter(|v| v.detector != BASELINE.name)
    }

    /// The verdict of `stack` with no detector: the cost's baseline.
    pub fn baseline(&self, stack: &str) -> Option<&Scorecard> {
        (self.scorecards.iter()).find(|v| v.detector == BASELINE.name && v.stack == stack)
    }
}

/// Runs every (detector, stack) of `runs`: the record, measured in `environment`.
pub async fn detectors(
    runs: &[DetectorRun],
    plan: DetectorsPlan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Observation>),
) -> DetectorsReport {
    let mut observations = Vec::new();
    let mut failures = Vec::new();
    for run in runs {
        let schedule = [(&run.target, 1)];
        let measure =
            async |running: &Running, step: &PhaseStep| observe(running, run, step, &plan).await;
        let steps = plan.steps(&run.detector);
        let setup = plan.setup(&run.detector);
        let outcome = session::run_each(&schedule, &setup, &steps, on, measure).await;
        observations.extend(outcome.measured);
        failures.extend(outcome.failures);
    }
    DetectorsReport {
        environment,
        command,
        scorecards: scorecards(&observations),
        plan,
        observations,
        failures,
    }
}
