//! The health check under a block: on each Rust stack, at one reactor thread, with the stall
//! detector's health check on a port of its own (`--stall-ms 100 --health-port 0`), each work
//! route is kept busy for a window ([`window`]) while two probes run side by side as a
//! Kubernetes kubelet sends them: one `GET` every second, a one-second timeout, a new
//! connection each time. One probe asks the stock `/ping`, served by the reactor; the other
//! asks `/health`, served by reactor-watch's own thread, which answers 503 with the route
//! and how long it has held its thread while a poll runs past the limit. Before the windows,
//! on the idle server, what each endpoint costs at rest ([`window::cost_at_rest`]).
//!
//! Every probe is one record ([`Check`]); every statistic is counted from the records once
//! ([`tally`]).

use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::environment::Environment;
use burst_meter::session::{self, Event, Failure, ServerOptions, ServerSetup, Step};
use burst_meter::target::Target;
use burst_meter::work::WorkPath;

mod args;
mod claims;
pub mod tally;
pub mod views;
pub mod window;

pub use args::HealthArgs;
pub use tally::{ProbeTally, RestTally};

/// The health check under a block, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Health;

impl Experiment for Health {
    const NAME: &'static str = "health";
    const TITLE: &'static str = "the health check under a block";
    const RECORD: &'static str = "health.json";
    const CLAIMS: &'static [&'static [Claim<HealthReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/health"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[
        job_run(
            "the health check under a block (results/health/)",
            &["--out", "results/health"],
        ),
        job_run(
            "the health check without its period (results/health/no-period/)",
            &[
                "--routes",
                "/bad",
                "--trials",
                "1",
                "--health-period-ms",
                "0",
                "--out",
                "results/health/no-period",
            ],
        ),
    ];

    type Args = HealthArgs;
    type Plan = (HealthPlan, Vec<Target>);
    type Step = Measured;
    type Record = HealthReport;

    fn plan(args: &HealthArgs) -> ((HealthPlan, Vec<Target>), Vec<String>) {
        let (targets, notes) = args.spawn.targets(stacks::names());
        ((args.plan(), targets), notes)
    }

    fn out(args: &HealthArgs) -> &Path {
        &args.out
    }

    fn stage((plan, targets): &(HealthPlan, Vec<Target>), title: &str) -> Stage {
        plan.stage(title, targets)
    }

    async fn run(
        (plan, targets): (HealthPlan, Vec<Target>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Measured>),
    ) -> HealthReport {
        health(&targets, plan, environment, command, on).await
    }

    fn views(report: &HealthReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &HealthReport) -> usize {
        report.failures.len()
    }
}
pub use window::{Answer, Check, Probed, RestCost, Window};

/// The experiment's defaults.
pub mod defaults {
    use burst_meter::work::WorkPath;

    pub const ROUTES: [WorkPath; 3] = WorkPath::WORK;
    /// The comparison's ten requests at once, each sleeping half its 500 ms: still over the
    /// limit, and ten of them still queue a ping past its one-second timeout.
    pub const CONCURRENCY: usize = 10;
    pub const SLEEP_MS: u64 = 250;
    /// The stall detector's limit, which is the health check's too.
    pub const STALL_MS: u64 = 100;
    /// How long the load's workers send again as each answer comes.
    pub const WINDOW_MS: u64 = 2000;
    /// Windows per route, each with its probes at another point of a sleep: a kubelet's
    /// probe may land anywhere in a stall, and the health check sees one only once it has
    /// lasted the limit.
    pub const TRIALS: usize = 2;
    /// A kubelet's defaults but for the period: `periodSeconds: 1`, `timeoutSeconds: 1`.
    pub const PROBE_EVERY_MS: u64 = 1000;
    /// The first window's first probe, from the load's start: half the limit into the first
    /// sleep (with the period a whole number of sleeps, every probe of a window lands at the
    /// same point of one); the next window's, half a sleep later.
    pub const FIRST_PROBE_MS: u64 = 50;
    /// Kubernetes' default probe timeout.
    pub const PROBE_TIMEOUT_MS: u64 = burst_meter::probe::PROBE_TIMEOUT_MS as u64;
    /// The cost at rest: sequential keep-alive requests on each endpoint, after a warm-up.
    pub const REST_REQUESTS: usize = 200;
    pub const REST_WARM_UP: usize = 20;
}

/// What to run on each stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthPlan {
    pub routes: Vec<WorkPath>,
    /// The load's workers, each with a keep-alive connection.
    pub concurrency: usize,
    /// Each load request's sleep, sent as `?ms=`.
    pub sleep_ms: u64,
    /// The servers' `--stall-ms`: the health check's limit.
    pub stall_ms: u64,
    /// The servers' blocking pool (`--blocking-threads`), if not their default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking_threads: Option<usize>,
    pub window_ms: u64,
    pub trials: usize,
    pub probe_every_ms: u64,
    pub probe_timeout_ms: u64,
    /// The first trial's first probe, in ms from the load's start.
    pub first_probe_ms: u64,
    /// How long the health check fails after a stall ends (the servers'
    /// `--health-period-ms`): the probes' period by default; 0 answers from the polls
    /// running when a probe comes alone (as every record before this field did).
    #[serde(default)]
    pub health_period_ms: u64,
    pub rest_requests: usize,
    pub rest_warm_up: usize,
}

impl Default for HealthPlan {
    fn default() -> HealthPlan {
        HealthPlan {
            routes: defaults::ROUTES.to_vec(),
            concurrency: defaults::CONCURRENCY,
            sleep_ms: defaults::SLEEP_MS,
            stall_ms: defaults::STALL_MS,
            blocking_threads: None,
            window_ms: defaults::WINDOW_MS,
            trials: defaults::TRIALS,
            probe_every_ms: defaults::PROBE_EVERY_MS,
            probe_timeout_ms: defaults::PROBE_TIMEOUT_MS,
            first_probe_ms: defaults::FIRST_PROBE_MS,
            health_period_ms: defaults::PROBE_EVERY_MS,
            rest_requests: defaults::REST_REQUESTS,
            rest_warm_up: defaults::REST_WARM_UP,
        }
    }
}

/// One step on a stack: the cost at rest, or one window of load on a route.
#[derive(Debug, Clone, PartialEq)]
pub enum HealthStep {
    Rest,
    Window { route: WorkPath, trial: usize },
}

impl HealthPlan {
    /// How the servers are started: one reactor thread, the stall detector at the limit,
    /// and the health check on a port the system picks, remembering a stall for the probes'
    /// period.
    pub fn setup(&self) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            options: ServerOptions {
                blocking_threads: self.blocking_threads,
                stall_ms: Some(self.stall_ms),
            },
            health_period_ms: Some(self.health_period_ms),
            ..ServerSetup::default()
        }
    }

    /// The cost at rest first, on the idle server (no sleep: it has no floor); then each
    /// route's windows.
    pub fn steps(&self) -> Vec<(HealthStep, Duration)> {
        let mut steps = vec![(HealthStep::Rest, Duration::ZERO)];
        for &route in &self.routes {
            for trial in 0..self.trials {
                let floor = self.window_floor(route);
                steps.push((HealthStep::Window { route, trial }, floor));
            }
        }
        steps
    }

    /// The window as the protocol's ideals place its sleeps, on the one reactor thread. The
    /// workers send again as each answer comes before the window's end, so the last answer
    /// comes with the last round: ⌈window / sleep⌉ rounds of one sleep on a route that lets
    /// them overlap. On a route that holds the reactor the answers come one sleep apart, so
    /// the requests in flight at the end drain one at a time, and the health check then fails
    /// for its period, which the next window waits out. A server that answers them together
    /// is sent no more of them, and ends its window sooner than this.
    fn window_floor(&self, route: WorkPath) -> Duration {
        let sleep_ms = self.sleep_ms.max(1);
        let rounds = self.window_ms.div_ceil(sleep_ms);
        if !route.route().holds_the_reactor() {
            return Duration::from_millis(rounds * sleep_ms);
        }
        let answers = self.concurrency as u64 + rounds.saturating_sub(1);
        Duration::from_millis(answers * sleep_ms + self.health_period_ms)
    }

    /// When trial `trial`'s first probe is sent, from the load's start: the first trial's at
    /// `first_probe_ms`, the others' spread evenly over one sleep after it.
    pub fn first_probe(&self, trial: usize) -> Duration {
        let step = self.sleep_ms as f64 / self.trials.max(1) as f64;
        Duration::from_secs_f64((self.first_probe_ms as f64 + trial as f64 * step) / 1000.0)
    }

    /// The plan on `targets`, for the progress view.
    pub fn stage(&self, name: &str, targets: &[Target]) -> Stage {
        let schedule: Vec<(&Target, usize)> = targets.iter().map(|target| (target, 1)).collect();
        Stage::of(name, &schedule, &self.timed_steps())
    }

    fn timed_steps(&self) -> Vec<TimedStep> {
        (self.steps().into_iter())
            .map(|(step, floor)| TimedStep { step, floor })
            .collect()
    }
}

/// A step with what it should take, as the session runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedStep {
    pub step: HealthStep,
    floor: Duration,
}

impl Step for TimedStep {
    fn route(&self) -> WorkPath {
        match self.step {
            HealthStep::Rest => WorkPath::canonical(Route::Bad),
            HealthStep::Window { route, .. } => route,
        }
    }

    fn describe(&self) -> String {
        match self.step {
            HealthStep::Rest => "/ping and /health at rest".to_owned(),
            HealthStep::Window { route, trial } => {
                format!("{route} under load, probed (trial {})", trial + 1)
            }
        }
    }

    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        self.floor
    }
}

/// Everything one run produced: `health.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthReport {
    pub environment: Environment,
    pub plan: HealthPlan,
    pub command: String,
    /// Each window of load, as run.
    pub windows: Vec<Window>,
    /// Every probe, one record each.
    pub checks: Vec<Check>,
    /// The cost at rest, each endpoint's latencies.
    pub rest: Vec<RestCost>,
    pub probes: Vec<ProbeTally>,
    pub rest_tallies: Vec<RestTally>,
    pub failures: Vec<Failure>,
}

/// What one step measured.
#[derive(Debug)]
pub enum Measured {
    Window(Window, Vec<Check>),
    Rest(Vec<RestCost>),
    /// The target (its label) has no health URL: an external one, which we did not start.
    NoHealth(String),
}

/// The experiment from its first target to its record, measured in `environment`.
pub async fn health(
    targets: &[Target],
    plan: HealthPlan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Measured>),
) -> HealthReport {
    let outcome = run(targets, &plan, on).await;
    let mut report = HealthReport {
        environment,
        plan,
        command,
        windows: Vec::new(),
        checks: Vec::new(),
        rest: Vec::new(),
        probes: Vec::new(),
        rest_tallies: Vec::new(),
        failures: outcome.failures,
    };
    for measured in outcome.measured {
        match measured {
            Measured::Window(window, checks) => {
                report.windows.push(window);
                report.checks.extend(checks);
            }
            Measured::Rest(costs) => report.rest.extend(costs),
            Measured::NoHealth(target) => {
                let reason = "no health check: only a server we start has one".to_owned();
                report.failures.push(Failure::new(&target, 1, None, reason));
            }
        }
    }
    report.probes = tally::probes(&report.checks, report.plan.probe_timeout_ms);
    report.rest_tallies = tally::at_rest(&report.rest);
    report
}

/// Every step on each of `targets`, one server started per target, at one reactor thread.
pub async fn run(
    targets: &[Target],
    plan: &HealthPlan,
    on: &mut impl FnMut(Event<'_, Measured>),
) -> session::Outcome<Measured> {
    let schedule: Vec<(&Target, usize)> = targets.iter().map(|target| (target, 1)).collect();
    let measure = async |running: &session::Running, step: &TimedStep| {
        let server = running.server.as_ref();
        let Some(health) = server.and_then(|server| server.health()) else {
            return Measured::NoHealth(running.label.clone());
        };
        match step.step {
            HealthStep::Rest => Measured::Rest(window::at_rest(running, health, plan).await),
            HealthStep::Window { route, trial } => {
                let (window, checks) = window::window(running, health, plan, route, trial).await;
                Measured::Window(window, checks)
            }
        }
    };
    let steps = plan.timed_steps();
    session::run_each(&schedule, &plan.setup(), &steps, on, measure).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor_of(plan: &HealthPlan, path: &str) -> Duration {
        let route = WorkPath::parse(path).expect("a work route");
        plan.window_floor(route)
    }

    #[test]
    fn a_window_that_overlaps_ends_with_its_last_round() {
        let plan = HealthPlan::default();
        assert_eq!(floor_of(&plan, "/ok-await"), Duration::from_millis(2000));
        let plan = HealthPlan {
            sleep_ms: 300,
            ..plan
        };
        assert_eq!(floor_of(&plan, "/ok-blocking"), Duration::from_millis(2100));
    }

    #[test]
    fn a_window_that_holds_drains_one_sleep_apart_then_waits_out_the_period() {
        let plan = HealthPlan::default();
        // Eight answers before the window's end, each sent again, then ten to drain:
        // seventeen sleeps of 250 ms, then the period's second.
        assert_eq!(
            floor_of(&plan, "/bad"),
            Duration::from_millis(17 * 250 + 1000)
        );
        let plan = HealthPlan {
            health_period_ms: 0,
            ..plan
        };
        assert_eq!(floor_of(&plan, "/bad"), Duration::from_millis(17 * 250));
    }
}
