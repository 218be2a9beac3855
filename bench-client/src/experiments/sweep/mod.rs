//! The concurrency sweep: each work route at N = 1, 10, 100, 1,000, 10,000 concurrent
//! requests on each stack, with a short sleep, timed as the comparison's bursts are (no
//! probe). What to look for: `/ok-await` stays near one sleep, `/ok-blocking` steps up once
//! N passes the blocking pool's size, `/bad` grows linearly with N.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun};
use crate::progress::Stage;
use burst_meter::burst::{self, Connect, ErrorCount, REQUEST_TIMEOUT};
use burst_meter::environment::Environment;
use burst_meter::session::{
    self, ConfounderMeter, Confounders, Event, Failure, Outcome, Running, ServerOptions,
    ServerSetup, Step,
};
use burst_meter::stats::{RequestTimes, evenly_spaced};
use burst_meter::target::Target;
use burst_meter::work::WorkPath;

mod args;
mod claims;
mod job;
pub mod views;

pub use args::SweepArgs;

/// The sweep, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Sweep;

impl Experiment for Sweep {
    const NAME: &'static str = "sweep";
    const TITLE: &'static str = "the sweep";
    const RECORD: &'static str = "sweep.json";
    const CLAIMS: &'static [&'static [Claim<SweepReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/sweep"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &job::JOB;

    type Args = SweepArgs;
    type Plan = (SweepPlan, Vec<Target>);
    type Step = Point;
    type Record = SweepReport;

    fn plan(args: &SweepArgs) -> ((SweepPlan, Vec<Target>), Vec<String>) {
        let (targets, notes) = args.spawn.targets(stacks::names());
        ((args.plan(), targets), notes)
    }

    fn out(args: &SweepArgs) -> &Path {
        &args.out
    }

    fn stage((plan, targets): &(SweepPlan, Vec<Target>), title: &str) -> Stage {
        plan.stage(title, targets)
    }

    async fn run(
        (plan, targets): (SweepPlan, Vec<Target>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Point>),
    ) -> SweepReport {
        sweep(&targets, plan, environment, command, on).await
    }

    fn views(report: &SweepReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &SweepReport) -> usize {
        report.failures.len()
    }
}

/// The sweep's defaults: the plan and the command line read them from here.
pub mod defaults {
    use burst_meter::burst::Connect;
    use burst_meter::work::WorkPath;

    pub const ROUTES: [WorkPath; 3] = WorkPath::WORK;
    pub const CONCURRENCY: [usize; 5] = [1, 10, 100, 1_000, 10_000];
    /// Short: `/bad` at N = 100 takes N sleeps.
    pub const SLEEP_MS: u64 = 10;
    pub const THREADS: usize = 1;
    /// Connections first: at N = 10,000, connecting inside the burst would fill the accept
    /// queue, and the kernel's retransmission timers would set the wall time.
    pub const CONNECT: Connect = Connect::Before;
}

/// The longest `/bad` burst the sweep sends, in serial sleeps: actix-web's first-request
/// deadline.
pub const BAD_SERIAL_LIMIT: Duration = Duration::from_secs(5);

/// What to sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    pub routes: Vec<WorkPath>,
    pub concurrency: Vec<usize>,
    pub sleep_ms: u64,
    pub threads: usize,
    /// How each burst's requests get their connections.
    #[serde(default)]
    pub connect: Connect,
    /// The servers' settings, where not their defaults: with a blocking pool of known size,
    /// `/ok-blocking` has a known ideal, ⌈N / pool⌉ × sleep.
    #[serde(flatten)]
    pub server: ServerOptions,
}

impl Default for SweepPlan {
    fn default() -> SweepPlan {
        SweepPlan {
            routes: defaults::ROUTES.to_vec(),
            concurrency: defaults::CONCURRENCY.to_vec(),
            sleep_ms: defaults::SLEEP_MS,
            threads: defaults::THREADS,
            connect: defaults::CONNECT,
            server: ServerOptions::default(),
        }
    }
}

impl SweepPlan {
    /// Why a burst is not worth sending: `/bad` runs its N sleeps one after another per
    /// thread, which the points up to [`BAD_SERIAL_LIMIT`] show; past it a server's own
    /// deadline for a connection's first request ends the burst (actix-web's 5 s
    /// `client_request_timeout` answers the queued connections 408), not the sleeps.
    pub fn skip_reason(&self, route: WorkPath, n: usize) -> Option<String> {
        let serial = Duration::from_millis(self.sleep_ms) * n as u32 / self.threads as u32;
        (route.route() == Route::Bad && serial > BAD_SERIAL_LIMIT).then(|| {
            format!(
                "{n} × {} ms / {} thread(s) = {:.0} s, past {} s of serial sleeps",
                self.sleep_ms,
                self.threads,
                serial.as_secs_f64(),
                BAD_SERIAL_LIMIT.as_secs()
            )
        })
    }

    /// The fastest a burst of `n` requests of `route` can finish, if the plan tells: one
    /// sleep for `/ok-await`; ⌈N / pool⌉ sleeps for `/ok-blocking` on a pool of known size;
    /// ⌈N / threads⌉ sleeps for `/bad`, which runs one sleep at a time per reactor thread.
    pub fn ideal_ms(&self, route: WorkPath, n: usize) -> Option<f64> {
        let rounds = rounds(route, n, self.server.blocking_threads, self.threads)?;
        Some(rounds as f64 * self.sleep_ms as f64)
    }

    /// What [`SweepPlan::ideal_ms`] is, in words, for a table's legend.
    pub fn ideal_text(&self, route: WorkPath) -> Option<String> {
        match route.route() {
            Route::OkAwait => Some("one sleep".to_owned()),
            Route::OkBlocking => {
                let pool = self.server.blocking_threads?;
                Some(format!("⌈N / {pool}⌉ × sleep"))
            }
            Route::Bad => Some(format!("⌈N / {}⌉ × sleep", self.threads)),
            _ => None,
        }
    }

    /// The plan on `targets`, for the progress view.
    pub fn stage(&self, name: &str, targets: &[Target]) -> Stage {
        let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, self.threads)).collect();
        Stage::of(name, &schedule, &self.steps())
    }

    /// The bursts to send on each target: every (route, N) that is not skipped.
    pub fn steps(&self) -> Vec<SweepStep> {
        let all = self.routes.iter().flat_map(|&route| {
            self.concurrency.iter().map(move |&n| SweepStep {
                route,
                n,
                sleep_ms: self.sleep_ms,
                pool: self.server.blocking_threads,
                threads: self.threads,
                connect: self.connect,
            })
        });
        all.filter(|step| self.skip_reason(step.route, step.n).is_none())
            .collect()
    }
}

/// Sleeps one after another in a burst of `n` requests of `route`, if known: one for
/// `/ok-await`; ⌈N / pool⌉ for `/ok-blocking` on a pool of `pool` threads; ⌈N / threads⌉ for
/// `/bad`, which runs one sleep at a time per reactor thread.
fn rounds(route: WorkPath, n: usize, pool: Option<usize>, threads: usize) -> Option<usize> {
    match route.route() {
        Route::OkAwait => Some(1),
        Route::OkBlocking => Some(n.div_ceil(pool?)),
        Route::Bad => Some(n.div_ceil(threads)),
        _ => None,
    }
}

/// One burst of the sweep: `n` concurrent requests of `route`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepStep {
    pub route: WorkPath,
    pub n: usize,
    pub sleep_ms: u64,
    /// The servers' blocking pool, where the plan sets it (`--blocking-threads`).
    pub pool: Option<usize>,
    pub threads: usize,
    /// How its connections are made: opened before, they add to its floor.
    pub connect: Connect,
}

impl Step for SweepStep {
    fn route(&self) -> WorkPath {
        self.route
    }

    fn describe(&self) -> String {
        self.to_string()
    }

    /// The burst's ideal, on the plan's pool or else the one the target's stack describes,
    /// where known; else one sleep. Connections opened before add [`Connect::floor`].
    fn floor(&self, target: &str, _threads: usize) -> Duration {
        let described = || stacks::named(target).and_then(|stack| stack.pool.threads);
        let pool = self.pool.or_else(described);
        let rounds = rounds(self.route, self.n, pool, self.threads).unwrap_or(1);
        self.connect.floor(self.n) + Duration::from_millis(self.sleep_ms) * rounds as u32
    }
}

impl fmt::Display for SweepStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} N={}", self.route, self.n)
    }
}

/// Everything one sweep produced: `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub environment: Environment,
    pub plan: SweepPlan,
    pub command: String,
    pub points: Vec<Point>,
    pub failures: Vec<Failure>,
}

/// One measured burst of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub target: String,
    pub route: String,
    pub n: usize,
    pub wall_ms: f64,
    pub ok: usize,
    pub err: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCount>,
    /// When each request was answered, from the burst's first send.
    pub requests: RequestTimes,
    /// When the answered requests came back, in ms from the burst's first send, sorted: every
    /// one up to [`COMPLETIONS_KEPT`], else that many evenly spaced by rank, which draw the
    /// same curve. The completions plot is drawn from these, by the run and by `redraw` alike;
    /// all of them would grow the record by megabytes at N = 10,000.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completions_ms: Vec<f64>,
    /// What else could have set this point's figures.
    #[serde(flatten)]
    pub confounders: Confounders,
}

/// The sweep from its first burst to its record, measured in `environment`.
pub async fn sweep(
    targets: &[Target],
    plan: SweepPlan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Point>),
) -> SweepReport {
    let Outcome { measured, failures } = run(targets, &plan, on).await;
    SweepReport {
        environment,
        plan,
        command,
        points: measured,
        failures,
    }
}

/// Runs the sweep, target after target.
pub async fn run(
    targets: &[Target],
    plan: &SweepPlan,
    on: &mut impl FnMut(Event<'_, Point>),
) -> Outcome<Point> {
    let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, plan.threads)).collect();
    let measure =
        async |running: &Running, step: &SweepStep| measure(running, step, plan.connect).await;
    let setup = ServerSetup {
        sleep_ms: plan.sleep_ms,
        options: plan.server,
        ..ServerSetup::default()
    };
    session::run_each(&schedule, &setup, &plan.steps(), on, measure).await
}

/// One point: a burst, no probe. Its confounders are read around the firing alone: the
/// connections made beforehand ([`Connect::Before`]) are no part of it.
async fn measure(running: &Running, step: &SweepStep, connect: Connect) -> Point {
    let path = format!("{}{}", step.route.path(), running.query);
    let (endpoint, n) = (&running.endpoint, step.n);
    let prepared = burst::prepare(endpoint, &path, n, REQUEST_TIMEOUT, connect).await;
    let meter = ConfounderMeter::start(running);
    let burst = prepared.fire().await;
    let confounders = meter.stop();
    let mut completions_ms = burst.completions_ms();
    completions_ms.sort_by(f64::total_cmp);
    Point {
        target: running.label.clone(),
        route: step.route.path().to_owned(),
        n: step.n,
        wall_ms: burst.wall_ms(),
        ok: burst.ok(),
        err: burst.err(),
        errors: burst.errors(),
        requests: RequestTimes::from_ms(&completions_ms),
        completions_ms: evenly_spaced(&completions_ms, COMPLETIONS_KEPT),
        confounders,
    }
}

/// How many completion times a point keeps ([`Point::completions_ms`]).
pub const COMPLETIONS_KEPT: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;

    const BAD: WorkPath = WorkPath::canonical(Route::Bad);

    #[test]
    fn only_bad_bursts_past_the_serial_limit_are_skipped() {
        let plan = SweepPlan::default();
        assert_eq!(plan.skip_reason(BAD, 100), None, "1 s is under 5 s");
        let reason = plan.skip_reason(BAD, 1_000).expect("10 s is over");
        assert!(reason.contains("10 s"), "{reason}");
        assert_eq!(
            plan.skip_reason(WorkPath::canonical(Route::OkBlocking), 10_000),
            None
        );
        assert_eq!(
            plan.skip_reason(WorkPath::canonical(Route::OkAwait), 10_000),
            None
        );
        // Threads share the sleeps: 10,000 × 2 ms / 4 = 5 s is at the limit, not past it.
        let four = SweepPlan {
            threads: 4,
            sleep_ms: 2,
            ..SweepPlan::default()
        };
        assert_eq!(four.skip_reason(BAD, 10_000), None);
        assert!(four.skip_reason(BAD, 10_004).is_some());
    }

    #[test]
    fn ideals_follow_the_pool_and_the_threads() {
        let plan = SweepPlan {
            sleep_ms: 100,
            server: ServerOptions {
                blocking_threads: Some(40),
                stall_ms: None,
            },
            ..SweepPlan::default()
        };
        let blocking = WorkPath::canonical(Route::OkBlocking);
        assert_eq!(plan.ideal_ms(blocking, 40), Some(100.0));
        assert_eq!(plan.ideal_ms(blocking, 41), Some(200.0));
        assert_eq!(plan.ideal_ms(BAD, 10), Some(1000.0));
        assert_eq!(
            plan.ideal_ms(WorkPath::canonical(Route::OkAwait), 200),
            Some(100.0)
        );
        let unknown_pool = SweepPlan::default();
        assert_eq!(unknown_pool.ideal_ms(blocking, 41), None);
    }

    #[test]
    fn the_steps_leave_out_what_is_skipped() {
        let steps = SweepPlan::default().steps();
        assert_eq!(steps.len(), 3 * 5 - 2);
        assert!(!(steps.iter()).any(|step| step.route == BAD && step.n >= 1_000));
        assert_eq!(steps[0].to_string(), "/bad N=1");
    }

    #[test]
    fn each_steps_floor_is_its_ideal() {
        let plan = SweepPlan {
            server: ServerOptions {
                blocking_threads: Some(40),
                stall_ms: None,
            },
            sleep_ms: 100,
            ..SweepPlan::default()
        };
        let blocking = WorkPath::canonical(Route::OkBlocking);
        let ms = Duration::from_millis;
        let floor = |plan: &SweepPlan, route, n, target| {
            let steps = plan.steps();
            let step = steps.iter().find(|s| s.route == route && s.n == n).unwrap();
            step.floor(target, 1)
        };
        let plan = SweepPlan {
            routes: vec![blocking, BAD],
            concurrency: vec![1, 10, 41, 1_000],
            connect: Connect::During,
            ..plan
        };
        assert_eq!(floor(&plan, blocking, 41, "demo-axum"), ms(200));
        let before = SweepPlan {
            connect: Connect::Before,
            ..plan.clone()
        };
        let connects = burst::CONNECT_FLOOR * 41;
        let floor_41 = floor(&before, blocking, 41, "demo-axum");
        assert_eq!(floor_41, ms(200) + connects);
        assert_eq!(floor(&plan, BAD, 10, "demo-axum"), ms(1_000));
        // Without --blocking-threads: the pool the stack describes, else one sleep.
        let described = SweepPlan {
            server: ServerOptions::default(),
            ..plan
        };
        let axum_pool = stacks::named("demo-axum")
            .and_then(|s| s.pool.threads)
            .unwrap();
        let rounds = 1_000_usize.div_ceil(axum_pool) as u32;
        assert_eq!(
            floor(&described, blocking, 1_000, "demo-axum"),
            ms(100) * rounds
        );
        assert_eq!(floor(&described, blocking, 1_000, "elsewhere"), ms(100));
    }
}
