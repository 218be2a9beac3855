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

use std::time::{Duration, Instant};

use demo_contract::Route;
use std::path::Path;

use demo_contract::variant::{AXUM_TASK_MONITOR, TOKIO_CONSOLE, TOKIO_POLL_HOOKS};
use serde::{Deserialize, Serialize};

use crate::bench;
use crate::burst::{self, Connect, ErrorCount};
use crate::environment::Environment;
use crate::probe::ProbeChoice;
use crate::progress::Stage;
use crate::session::{self, Event, Failure, Running, ServerSetup, Step};
use crate::stats::{grouped, spread};
use crate::target::{self, REFERENCES, SERVERS, Target};
use crate::work::WorkPath;

/// The plan's defaults: the comparison's sleep and N, the CPU experiment's work.
pub mod defaults {
    pub const CONCURRENCY: usize = 10;
    pub const SLEEP_MS: u64 = 500;
    pub const CPU_MS: u64 = 300;
    pub const HELD_MS: u64 = 5000;
    pub const HELD_TRIALS: usize = 3;
    /// The cost: rounds of the detector-on/off runs' burst, on and off.
    pub const COST_ROUNDS: usize = 5;
    pub const COST_CONCURRENCY: usize = 1000;
}

/// The threshold every detector that takes one is given: asyncio's default.
pub const THRESHOLD_MS: u64 = 100;

/// How long the client keeps listening after a step's last answer: a detector that samples
/// (tokio-metrics every 100 ms) or reports when a poll returns prints just after.
pub const LISTEN_AFTER: Duration = Duration::from_millis(400);

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

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectorsPlan {
    pub concurrency: usize,
    pub sleep_ms: u64,
    pub cpu_ms: u64,
    pub held_ms: u64,
    pub held_trials: usize,
    /// Rounds of the cost's burst on each (detector, stack) and on each stack without one.
    pub cost_rounds: usize,
    pub cost_concurrency: usize,
}

impl Default for DetectorsPlan {
    fn default() -> DetectorsPlan {
        DetectorsPlan {
            concurrency: defaults::CONCURRENCY,
            sleep_ms: defaults::SLEEP_MS,
            cpu_ms: defaults::CPU_MS,
            held_ms: defaults::HELD_MS,
            held_trials: defaults::HELD_TRIALS,
            cost_rounds: defaults::COST_ROUNDS,
            cost_concurrency: defaults::COST_CONCURRENCY,
        }
    }
}

/// One step of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// `/ok-await`: slow, never blocking. A report is a false alarm.
    OkAwait,
    /// `/ok-blocking`: the same on the blocking pool.
    OkBlocking,
    Bad,
    BadCpu,
    /// One `/bad` holding the thread for the plan's `held_ms`; the trial's number from 0.
    Held(usize),
    /// The cost: `/ok-await` at the plan's `cost_concurrency`, connecting before, with the
    /// closed-loop ping beside it, as the comparison measures a case; the round from 0.
    Cost(usize),
}

/// A step as the session runs it: the phase, its request and what it should take.
#[derive(Debug, Clone)]
pub struct PhaseStep {
    pub phase: Phase,
    pub route: Route,
    pub n: usize,
    pub ms: u64,
}

impl PhaseStep {
    fn path_and_query(&self) -> String {
        format!("{}?ms={}", self.route.path(), self.ms)
    }

    /// One reactor thread: the blocking routes serialise, the others overlap.
    fn expected(&self) -> Duration {
        let one = Duration::from_millis(self.ms);
        match self.route {
            Route::Bad | Route::BadCpu => one * self.n as u32,
            _ => one,
        }
    }
}

impl Step for PhaseStep {
    fn route(&self) -> WorkPath {
        WorkPath::canonical(self.route)
    }

    fn describe(&self) -> String {
        match self.phase {
            Phase::Cost(round) => format!(
                "cost: {} × {} at {} ms, round {}",
                self.route.path(),
                self.n,
                self.ms,
                round + 1
            ),
            Phase::Held(trial) => format!(
                "{} held {} ms, trial {}",
                self.route.path(),
                self.ms,
                trial + 1
            ),
            _ => format!("{} × {} at {} ms", self.route.path(), self.n, self.ms),
        }
    }

    fn estimate(&self, _threads: usize) -> Duration {
        self.expected() + LISTEN_AFTER
    }
}

impl DetectorsPlan {
    /// The steps of `detector`, in the order each server runs them: the false alarms first,
    /// on a server that has not yet stalled, then the stalls, then the cost rounds; the
    /// baseline runs the cost rounds alone.
    pub fn steps(&self, detector: &Detector) -> Vec<PhaseStep> {
        let cost = (0..self.cost_rounds).map(|round| PhaseStep {
            phase: Phase::Cost(round),
            route: Route::OkAwait,
            n: self.cost_concurrency,
            ms: self.sleep_ms,
        });
        let mut steps = match detector == &BASELINE {
            true => Vec::new(),
            false => self.workload(),
        };
        steps.extend(cost);
        steps
    }

    fn workload(&self) -> Vec<PhaseStep> {
        let step = |phase, route, n, ms| PhaseStep {
            phase,
            route,
            n,
            ms,
        };
        let n = self.concurrency;
        let mut steps = vec![
            step(Phase::OkAwait, Route::OkAwait, n, self.sleep_ms),
            step(Phase::OkBlocking, Route::OkBlocking, n, self.sleep_ms),
            step(Phase::Bad, Route::Bad, n, self.sleep_ms),
            step(Phase::BadCpu, Route::BadCpu, n, self.cpu_ms),
        ];
        steps.extend(
            (0..self.held_trials)
                .map(|trial| step(Phase::Held(trial), Route::Bad, 1, self.held_ms)),
        );
        steps
    }

    fn setup(&self, detector: &Detector) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            stall_ms: Some(detector.stall_ms),
            ..ServerSetup::default()
        }
    }

    /// The plan on `runs`, for the progress view.
    pub fn stage(&self, name: &str, runs: &[DetectorRun]) -> Stage {
        let stages: Vec<Stage> = (runs.iter())
            .map(|run| Stage::of(name, &[(&run.target, 1)], &self.steps(&run.detector)))
            .collect();
        Stage {
            name: name.to_owned(),
            steps: stages.iter().map(|stage| stage.steps).sum(),
            estimate: stages.iter().map(|stage| stage.estimate).sum(),
        }
    }

    /// The comparison's plan for one cost round.
    fn cost_plan(&self) -> bench::Plan {
        bench::Plan {
            routes: vec![WorkPath::canonical(Route::OkAwait)],
            concurrency: self.cost_concurrency,
            sleep_ms: self.sleep_ms,
            probe: ProbeChoice::Closed,
            connect: Connect::Before,
            ..bench::Plan::default()
        }
    }
}

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

/// One line a detector printed, and when the client read it, from the step's first send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportLine {
    pub at_ms: f64,
    pub text: String,
}

/// One step on one (detector, stack).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub detector: String,
    /// The server, by its own name.
    pub stack: String,
    pub phase: Phase,
    pub route: String,
    pub n: usize,
    pub ms: u64,
    /// From the first send to the last answer.
    pub wall_ms: f64,
    /// Requests that failed, and in a cost round failed pings too.
    pub failed: usize,
    pub errors: Vec<ErrorCount>,
    /// A cost round's closed-loop ping p50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_p50_ms: Option<f64>,
    /// The detector's lines read from the step's start until [`LISTEN_AFTER`] past the last
    /// answer.
    pub reports: Vec<ReportLine>,
}

impl Observation {
    /// Whether every request was answered: a step with a failed request gets no verdict.
    pub fn complete(&self) -> bool {
        self.failed == 0
    }

    /// How long after the first send the detector first reported, if it did.
    pub fn first_report_ms(&self) -> Option<f64> {
        self.reports.first().map(|line| line.at_ms)
    }

    /// Whether any report names the route, by its path.
    pub fn names_route(&self) -> bool {
        self.reports
            .iter()
            .any(|line| line.text.contains(&self.route))
    }
}

/// Runs one step on a running server and reads what the detector printed meanwhile.
async fn observe(
    running: &Running,
    run: &DetectorRun,
    step: &PhaseStep,
    plan: &DetectorsPlan,
) -> Observation {
    let start = Instant::now();
    let measured = match step.phase {
        Phase::Cost(_) => cost(running, plan).await,
        _ => load(running, step).await,
    };
    tokio::time::sleep(LISTEN_AFTER).await;
    let lines =
        (running.server.as_ref()).map_or_else(Vec::new, |server| server.stderr().since(start));
    let detector = run.detector;
    let reports = (lines.into_iter())
        .filter(|(_, text)| detector != BASELINE && text.contains(detector.marker))
        .map(|(at, text)| ReportLine {
            at_ms: crate::units::millis(at),
            text,
        })
        .collect();
    Observation {
        detector: detector.name.to_owned(),
        stack: run.stack.clone(),
        phase: step.phase,
        route: step.route.path().to_owned(),
        n: step.n,
        ms: step.ms,
        wall_ms: measured.wall_ms,
        failed: measured.failed,
        errors: measured.errors,
        ping_p50_ms: measured.ping_p50_ms,
        reports,
    }
}

/// What a step's requests showed.
struct Measured {
    wall_ms: f64,
    failed: usize,
    errors: Vec<ErrorCount>,
    ping_p50_ms: Option<f64>,
}

/// A workload step: its burst, connecting during it.
async fn load(running: &Running, step: &PhaseStep) -> Measured {
    let timeout = step.expected() * 2 + burst::REQUEST_TIMEOUT;
    let path = step.path_and_query();
    let burst = burst::fire(&running.endpoint, &path, step.n, timeout, Connect::During).await;
    Measured {
        wall_ms: burst.wall_ms(),
        failed: burst.err(),
        errors: burst.errors(),
        ping_p50_ms: None,
    }
}

/// A cost round: the comparison's case of the plan's cost, closed-loop ping and all.
async fn cost(running: &Running, plan: &DetectorsPlan) -> Measured {
    let route = WorkPath::canonical(Route::OkAwait);
    let case = bench::measure(running, route, &plan.cost_plan(), None).await;
    let ping = case.closed_loop.as_ref();
    let ping_failed = ping.map_or(1, |ping| ping.errors);
    Measured {
        wall_ms: case.wall_ms,
        failed: case.err + ping_failed,
        errors: case.errors,
        ping_p50_ms: ping.and_then(|ping| ping.p50_ms),
    }
}

/// What one (detector, stack) showed over the whole workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub detector: String,
    pub stack: String,
    /// Reports during `/ok-await` and `/ok-blocking`; `None` if a request there failed.
    pub false_alarms: Option<usize>,
    /// Reports during `/bad`, and whether one named the route; `None` if a request failed.
    pub bad_reports: Option<usize>,
    pub names_route: Option<bool>,
    pub bad_cpu_reports: Option<usize>,
    /// Per held trial with every request answered: when the first report came, from the send
    /// (`None`: no report), and when the held request was answered.
    pub held: Vec<HeldTrial>,
    /// The first line it printed during `/bad`, as a sample of what it says.
    pub sample: Option<String>,
    /// The cost rounds with every request and ping answered.
    pub cost: Vec<CostRound>,
    /// Lines it printed during the cost rounds (`/ok-await`, never blocking).
    pub cost_reports: usize,
}

/// One cost round: the burst's wall time and the closed-loop ping's p50 beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostRound {
    pub wall_ms: f64,
    pub ping_p50_ms: f64,
}

/// One held trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeldTrial {
    pub first_report_ms: Option<f64>,
    /// How long the request held its thread: its handler started after the send, so a
    /// report sooner than this after the send came while the thread was held.
    pub held_ms: u64,
    pub answered_ms: f64,
}

impl HeldTrial {
    /// Whether the detector reported while the thread was still held. Not "before the
    /// answer": a detector that reports when the poll returns prints before the server
    /// writes the answer.
    pub fn while_held(&self) -> bool {
        self.first_report_ms
            .is_some_and(|at| at < self.held_ms as f64)
    }
}

impl Verdict {
    /// min / median / max of the first reports' delays over the trials that had one.
    pub fn first_report_spread(&self) -> Option<[f64; 3]> {
        spread(
            self.held
                .iter()
                .filter_map(|trial| trial.first_report_ms)
                .collect(),
        )
    }
}

/// The verdict of each (detector, stack) from its observations.
pub fn verdicts(observations: &[Observation]) -> Vec<Verdict> {
    let runs = grouped(observations, |o| (o.detector.as_str(), o.stack.as_str()));
    (runs.into_iter())
        .map(|((detector, stack), observations)| {
            let mut verdict = Verdict {
                detector: detector.to_owned(),
                stack: stack.to_owned(),
                false_alarms: Some(0),
                bad_reports: None,
                names_route: None,
                bad_cpu_reports: None,
                held: Vec::new(),
                sample: None,
                cost: Vec::new(),
                cost_reports: 0,
            };
            for observation in observations {
                add(&mut verdict, observation);
            }
            verdict
        })
        .collect()
}

/// Adds one step's observation to its verdict.
fn add(verdict: &mut Verdict, observation: &Observation) {
    let reports = observation.complete().then_some(observation.reports.len());
    match observation.phase {
        Phase::OkAwait | Phase::OkBlocking => {
            verdict.false_alarms = verdict.false_alarms.zip(reports).map(|(a, b)| a + b);
        }
        Phase::Bad => {
            verdict.bad_reports = reports;
            verdict.names_route = observation.complete().then(|| observation.names_route());
            verdict.sample = observation.reports.first().map(|line| line.text.clone());
        }
        Phase::BadCpu => verdict.bad_cpu_reports = reports,
        Phase::Held(_) if observation.complete() => verdict.held.push(HeldTrial {
            first_report_ms: observation.first_report_ms(),
            held_ms: observation.ms,
            answered_ms: observation.wall_ms,
        }),
        Phase::Held(_) => {}
        Phase::Cost(_) => {
            verdict.cost_reports += observation.reports.len();
            if let (true, Some(ping_p50_ms)) = (observation.complete(), observation.ping_p50_ms) {
                verdict.cost.push(CostRound {
                    wall_ms: observation.wall_ms,
                    ping_p50_ms,
                });
            }
        }
    }
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
    let environment = Environment::capture();
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
    (report.write(out)).map_err(|error| format!("cannot write {}: {error}", out.display()))?;
    Ok(report)
}
