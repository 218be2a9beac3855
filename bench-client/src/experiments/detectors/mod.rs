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

use std::time::Duration;

use std::path::Path;

use demo_contract::variant::{AXUM_TASK_MONITOR, TOKIO_CONSOLE, TOKIO_POLL_HOOKS};
use serde::{Deserialize, Serialize};

use crate::measure::environment::Environment;
use crate::measure::session::{self, Event, Failure, Running};
use crate::measure::target::{self, REFERENCES, SERVERS, Target};

mod observe;
mod plan;
mod verdict;

use observe::observe;
pub use observe::{Observation, ReportLine};
pub use plan::{DetectorsPlan, Phase, PhaseStep};
pub use verdict::{CostRound, HeldTrial, Verdict, verdicts};

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

/// One way of catching a blocked reactor, and how it is switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detector {
    pub name: &'static str,
    /// The stacks it runs on, by server name.
    pub servers: &'static [&'static str],
    /// The variable that turns it on (set to `1`), if it is not the server's own detector.
    pub variable: Option<&'static str>,
    /// The server's `--stall-ms`: the threshold for the server's own detector, 0 (its own off)
    /// when another one is measured.
    pub stall_ms: u64,
    /// Text in every line it reports, and in no other line the server prints.
    pub marker: &'static str,
    /// How it works and where that is written, for the report.
    pub about: &'static str,
    /// Which build of the server it needs.
    pub build: Build,
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

/// The variable of the FastAPI app's pyleak variant (`reference/fastapi/app.py`).
pub const PYLEAK_VARIABLE: &str = "DEMO_FASTAPI_PYLEAK";

/// The detectors, in the order the report lists them.
pub const DETECTORS: [Detector; 8] = [
    Detector {
        name: "reactor-watch",
        servers: &SERVERS,
        variable: None,
        stall_ms: THRESHOLD_MS,
        marker: "reactor thread",
        about: "this project's crate: a timer around every poll of each request future, and a \
                watchdog thread that scans the polls running every half threshold \
                (crates/reactor-watch)",
        build: Build::Stock,
    },
    Detector {
        name: "tokio-metrics TaskMonitor",
        servers: &[AXUM_TASK_MONITOR.server],
        variable: Some(AXUM_TASK_MONITOR.variable),
        stall_ms: 0,
        marker: "tokio-metrics TaskMonitor:",
        about: AXUM_TASK_MONITOR.about,
        build: Build::Stock,
    },
    Detector {
        name: "tokio poll hooks",
        servers: &[TOKIO_POLL_HOOKS.server],
        variable: Some(TOKIO_POLL_HOOKS.variable),
        stall_ms: 0,
        marker: "tokio poll hooks:",
        about: TOKIO_POLL_HOOKS.about,
        build: Build::TokioUnstable,
    },
    Detector {
        name: "tokio-console never-yielded",
        servers: &[TOKIO_CONSOLE.server],
        variable: Some(TOKIO_CONSOLE.variable),
        stall_ms: 0,
        marker: r#"{"event":"warning","lint":"never-yielded""#,
        about: "console-subscriber 0.5 on the server (a build with --cfg tokio_unstable, its \
                defaults: an update every second), its stream read by console-probe \
                (crates/console-probe) through console-api as the console's UI reads it, the \
                UI's warnings worked out as the UI works them out (tokio-console/src/warnings.rs); \
                a report is the one warning about a task holding its thread, never-yielded: a \
                task running now, polled at most once, busy for 1 s or more",
        build: Build::TokioUnstable,
    },
    Detector {
        name: "tokio-console task list",
        servers: &[TOKIO_CONSOLE.server],
        variable: Some(TOKIO_CONSOLE.variable),
        stall_ms: 0,
        marker: r#"{"event":"poll""#,
        about: "the same stream read for what the console's task list shows, not a warning: \
                a task whose poll, at an update, has been running for 100 ms or more (its \
                state and busy time), or whose last poll, ended, lasted that long; an update \
                carries each task's last poll only, so a poll is seen if an update comes while \
                it runs or before the task's next poll",
        build: Build::TokioUnstable,
    },
    Detector {
        name: "asyncio debug mode",
        servers: &[REFERENCES[0]],
        variable: None,
        stall_ms: THRESHOLD_MS,
        marker: "Executing ",
        about: "loop.set_debug(True) and slow_callback_duration = 0.1: the loop times each \
                callback or task step and logs the slow ones after they return \
                (Lib/asyncio/base_events.py, _run_once)",
        build: Build::Stock,
    },
    Detector {
        name: "uvloop debug mode",
        servers: &[REFERENCES[1]],
        variable: None,
        stall_ms: THRESHOLD_MS,
        marker: "Executing ",
        about: "the same switches on uvloop, which logs slow callbacks in the same words \
                (uvloop/cbhandles.pyx)",
        build: Build::Stock,
    },
    Detector {
        name: "pyleak no_event_loop_blocking",
        servers: &REFERENCES,
        variable: Some(PYLEAK_VARIABLE),
        stall_ms: 0,
        marker: "Event loop blocked for",
        about: "pyleak 0.2.0 around the server's life (threshold 0.1 s): a thread schedules a \
                callback on the loop and logs a block when the loop has not run it in time, \
                while the loop is still held; a block with the same stack as the last is \
                merged into it (pyleak/eventloop.py, _monitor_loop, _add_block)",
        build: Build::Stock,
    },
];

/// Each stack with no detector at all, for the cost: its own detector off (`--stall-ms 0`),
/// no variable set.
pub const BASELINE: Detector = Detector {
    name: "none",
    servers: &[],
    variable: None,
    stall_ms: 0,
    marker: "",
    about: "the stack with no detector: the cost's baseline",
    build: Build::Stock,
};

/// A detector on one stack: the server to start, with the detector's variable set.
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
    let watched = |target: &&Target| {
        DETECTORS
            .iter()
            .any(|d| d.servers.contains(&target.label()))
    };
    let mut runs: Vec<DetectorRun> = (targets.iter().filter(watched))
        .map(|target| DetectorRun {
            detector: BASELINE,
            stack: target.label().to_owned(),
            target: target.clone(),
        })
        .collect();
    for detector in DETECTORS {
        for target in targets
            .iter()
            .filter(|t| detector.servers.contains(&t.label()))
        {
            let stack = target.label().to_owned();
            let target = switched_on(detector, target.clone());
            runs.push(DetectorRun {
                detector,
                stack,
                target,
            });
        }
    }
    runs
}

/// `target` with `detector` switched on: its variable set and its build chosen, named after
/// both.
fn switched_on(detector: Detector, mut target: Target) -> Target {
    let (Some(variable), Target::Spawn { name, launcher }) = (detector.variable, &mut target)
    else {
        return target;
    };
    launcher.env.push((variable.to_owned(), "1".to_owned()));
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
    pub verdicts: Vec<Verdict>,
    pub observations: Vec<Observation>,
    pub failures: Vec<Failure>,
}

/// Runs every (detector, stack) of `runs` and writes the report into `out`.
pub async fn detectors(
    runs: &[DetectorRun],
    plan: DetectorsPlan,
    command: String,
    out: &std::path::Path,
    on: &mut impl FnMut(Event<'_, Observation>),
) -> Result<DetectorsReport, String> {
    let environment = Environment::capture(crate::stamps::DETECTORS);
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
    let report = DetectorsReport {
        environment,
        command,
        verdicts: verdicts(&observations),
        plan,
        observations,
        failures,
    };
    report.write(out).map_err(super::cannot_write(out))?;
    Ok(report)
}
