//! One case: one target, one route, one burst, with the probes beside it. The comparison
//! runs a plan of them on every target; the race and the detectors measure theirs with
//! [`measure`] too. The protocol, step by step, is in `docs/protocol.md`.

use std::time::Duration;

use demo_contract::{IoWork, Route, Work};
use serde::{Deserialize, Serialize};

use crate::burst::{self, ErrorCount, REQUEST_TIMEOUT};
use crate::fixtures::{FileCache, Fixtures, read_floor_ms};
use crate::http::get_once;
use crate::probe::Probes;
use crate::session::{self, ConfounderMeter, Confounders, Event, Failure, Outcome, Running, Step};
use crate::stalls::{self, StallsSeen};
use crate::stats::{CallCost, Ideals, OpenLoopStats, PingStats, RequestTimes, Verdict};
use crate::target::Target;
use crate::timeline::Timeline;
use crate::work::WorkPath;

mod plan;

pub use plan::{HEAD_START, Plan, defaults};

/// One measured case: one target, one route, one burst.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub target: String,
    /// The executor, as the server's `/ping` reported it.
    pub runtime: Option<String>,
    pub reactor_threads: usize,
    pub route: String,
    pub n: usize,
    pub sleep_ms: u64,
    pub wall_ms: f64,
    /// The wall time in sleeps: 1.0 is the concurrent ideal.
    pub times_ideal: Option<f64>,
    pub ok: usize,
    pub err: usize,
    /// Why the failed requests failed, with counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCount>,
    pub verdict: Verdict,
    /// The OS thread(s) the sleep started on, as the server reported them.
    pub sleep_thread: Option<String>,
    /// Whether that thread polls request futures: `None` if the answers disagree or the
    /// server does not say.
    pub on_reactor: Option<bool>,
    /// The closed-loop pinger (the original's), unless `--probe open`.
    #[serde(rename = "ping", default, skip_serializing_if = "Option::is_none")]
    pub closed_loop: Option<PingStats>,
    /// The open-loop probe, unless `--probe closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopStats>,
    /// When each request was answered, from the burst's first send.
    pub requests: RequestTimes,
    /// What the server's own stall detector (`GET /stalls`) reported during the case;
    /// `None` if the server does not report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<StallsSeen>,
    /// What else could have set this case's figures.
    #[serde(flatten)]
    pub confounders: Confounders,
    /// Every request and ping of the case on one clock (`None` in results from before it
    /// was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// A hidden blocker's call, as the server timed it: `None` for the other routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<CallCost>,
}

/// The (target, reactor threads) pairs a plan runs, in order: each thread count in turn, for
/// every target that runs at it ([`Target::runs_at`]).
pub fn schedule<'a>(targets: &'a [Target], plan: &Plan) -> Vec<(&'a Target, usize)> {
    let mut runs = Vec::new();
    for (index, &threads) in plan.threads.iter().enumerate() {
        for target in targets {
            if target.runs_at(threads, index == 0) {
                runs.push((target, threads));
            }
        }
    }
    runs
}

/// One case to measure on a running target: a route, with the plan it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct CaseStep<'p> {
    pub route: WorkPath,
    pub plan: &'p Plan,
}

impl Step for CaseStep<'_> {
    fn route(&self) -> WorkPath {
        self.route
    }

    fn describe(&self) -> String {
        self.route.path().to_owned()
    }

    /// The head start and the burst ([`burst_floor_ms`]); a file route's case reads the file
    /// [`READS_ALONE`] times alone before the burst. Connections opened before the burst add
    /// [`Connect::floor`](burst::Connect::floor).
    fn floor(&self, _target: &str, threads: usize) -> Duration {
        let plan = self.plan;
        self.floor_at(
            threads,
            unit_floor_ms(self.route, plan.sleep_ms, plan.file_mb),
        )
    }
}

impl CaseStep<'_> {
    /// Its floor ([`Step::floor`]) with one request's work taking `unit_ms`: the plan's own
    /// unit, or the one a case timed alone.
    pub fn floor_at(&self, threads: usize, unit_ms: u64) -> Duration {
        let n = self.plan.concurrency;
        let reads_alone = READS_ALONE * usize::from(self.route.reads_the_file());
        let alone_ms = (reads_alone as u64 * unit_ms) as f64;
        let burst_ms = burst_floor_at(self.route, n, unit_ms, threads);
        let burst = Duration::from_secs_f64((alone_ms + burst_ms) / 1000.0);
        HEAD_START + self.plan.connect.floor(n) + burst
    }
}

/// The least time one request of `route` takes, in ms: its sleep, `sleep_ms`; for a file
/// route, one read of the file of `file_mb` MiB at
/// [`FLOOR_READ_MIB_PER_S`](crate::fixtures::FLOOR_READ_MIB_PER_S) (its case times its own).
pub fn unit_floor_ms(route: WorkPath, sleep_ms: u64, file_mb: u64) -> u64 {
    match route.reads_the_file() {
        true => read_floor_ms(file_mb),
        false => sleep_ms,
    }
}

/// The least time a burst of `n` requests of `route` can take at `threads` reactor threads,
/// in ms: one after another on the reactor threads for a route that blocks them, the route's
/// best otherwise ([`ideals`]), each request [`unit_floor_ms`].
pub fn burst_floor_ms(
    route: WorkPath,
    n: usize,
    sleep_ms: u64,
    file_mb: u64,
    threads: usize,
) -> f64 {
    burst_floor_at(route, n, unit_floor_ms(route, sleep_ms, file_mb), threads)
}

/// [`burst_floor_ms`] with each request's work taking `unit_ms`.
fn burst_floor_at(route: WorkPath, n: usize, unit_ms: u64, threads: usize) -> f64 {
    let ideals = ideals(route, n, unit_ms, threads);
    match route.route().holds_the_reactor() {
        true => ideals.serialised_ms,
        false => ideals.best_ms,
    }
}

impl Plan {
    /// Its cases on one target, in order.
    pub fn steps(&self) -> Vec<CaseStep<'_>> {
        (self.routes.iter())
            .map(|&route| CaseStep { route, plan: self })
            .collect()
    }
}

/// Runs the whole plan: each route of the plan as one case, on each pair of [`schedule`].
/// A plan with hidden blockers' routes first makes their fixtures; if it cannot, every
/// target fails, saying why.
pub async fn run_plan(
    targets: &[Target],
    plan: &Plan,
    on: &mut impl FnMut(Event<'_, Case>),
) -> Outcome<Case> {
    let schedule = schedule(targets, plan);
    let fixtures = match plan
        .needs_fixtures()
        .then(|| Fixtures::create(plan.file_mb))
    {
        Some(Err(error)) => return fixtures_failed(&schedule, &error, on),
        Some(Ok(fixtures)) => Some(fixtures),
        None => None,
    };
    let mut setup = plan.setup();
    setup.fixtures = fixtures
        .as_ref()
        .map(Fixtures::server_args)
        .unwrap_or_default();
    let measure = async |running: &Running, step: &CaseStep<'_>| {
        measure(running, step.route, plan, fixtures.as_ref()).await
    };
    session::run_each(&schedule, &setup, &plan.steps(), on, measure).await
}

/// Every pair of the schedule failed: the fixtures could not be made.
fn fixtures_failed(
    schedule: &[(&Target, usize)],
    error: &std::io::Error,
    on: &mut impl FnMut(Event<'_, Case>),
) -> Outcome<Case> {
    let mut outcome = Outcome::default();
    for &(target, threads) in schedule {
        let reason = format!("cannot make the hidden blockers' fixtures: {error}");
        let failure = Failure::new(target.label(), threads, None, reason);
        on(Event::Failed(&failure));
        outcome.failures.push(failure);
    }
    outcome
}

impl Plan {
    /// `planned`, this plan's floor, with each file case of `cases` reading at the time its
    /// case timed alone instead of at
    /// [`FLOOR_READ_MIB_PER_S`](crate::fixtures::FLOOR_READ_MIB_PER_S): how fast a machine
    /// reads is the run's to measure, not the plan's to know.
    pub fn floor_measured(&self, planned: Duration, cases: &[Case]) -> Duration {
        let (mut assumed, mut measured) = (Duration::ZERO, Duration::ZERO);
        for case in cases {
            let Some(route) = WorkPath::parse(&case.route).ok() else {
                continue;
            };
            if route.reads_the_file() {
                let step = CaseStep { route, plan: self };
                assumed += step.floor(&case.target, case.reactor_threads);
                measured += step.floor_at(case.reactor_threads, case.sleep_ms);
            }
        }
        (planned + measured).saturating_sub(assumed)
    }

    /// Whether a route of the plan needs the upstream, the database or the file.
    pub fn needs_fixtures(&self) -> bool {
        (self.routes.iter())
            .any(|route| Route::HIDDEN.iter().flatten().any(|r| *r == route.route()))
    }
}

/// One case: the burst prepared (its connections made, if [`Connect::Before`]), then the
/// probes, a head start, the burst fired, the probes stopped. The stall detector and the
/// confounders are read around the probes and the firing, not the preparation. A file
/// route's unit of work is a read alone, timed first ([`one_read_alone`]), and the file is
/// then put in the page-cache state the plan asks for.
pub async fn measure(
    running: &Running,
    route: WorkPath,
    plan: &Plan,
    fixtures: Option<&Fixtures>,
) -> Case {
    let every = Duration::from_millis(plan.ping_every_ms);
    let path = format!("{}{}", route.path(), running.query);
    let (n, connect) = (plan.concurrency, plan.connect);
    let unit_ms = match (route.reads_the_file(), fixtures) {
        (true, Some(fixtures)) => one_read_alone(running, &path, fixtures, plan.file_cache).await,
        _ => plan.sleep_ms,
    };
    let prepared = burst::prepare(&running.endpoint, &path, n, REQUEST_TIMEOUT, connect).await;
    let stalls_before = stalls::read(&running.endpoint).await;
    let meter = ConfounderMeter::start(running);
    let probes = Probes::start(plan.probe, &running.endpoint, every);
    tokio::time::sleep(HEAD_START).await;
    let burst = prepared.fire().await;
    let probed = probes.stop().await;
    let confounders = meter.stop();
    let stalls_after = stalls::read(&running.endpoint).await;
    let stalls = Option::zip(stalls_before, stalls_after).map(|(b, a)| stalls::between(&b, &a));
    let wall_ms = burst.wall_ms();
    // The server's own count of reactor threads sets the serialised ideal.
    let threads = running.reactor_threads();
    let ideals = ideals(route, n, unit_ms, threads);
    let (sleep_thread, on_reactor) = where_it_ran(&burst.work());
    let call = CallCost::of(&burst.io_work(), wall_ms);
    let timeline = Timeline::new(&burst, &probed);
    Case {
        target: running.label.clone(),
        runtime: running.runtime(),
        reactor_threads: threads,
        route: route.path().to_owned(),
        n: plan.concurrency,
        sleep_ms: unit_ms,
        wall_ms,
        times_ideal: ideals.times_ideal(wall_ms),
        ok: burst.ok(),
        err: burst.err(),
        errors: burst.errors(),
        verdict: match &call {
            Some(call) => call.verdict(burst.err()),
            None => ideals.verdict(wall_ms, burst.err()),
        },
        sleep_thread,
        on_reactor,
        closed_loop: probed.closed.map(PingStats::from_record),
        open_loop: probed.open.map(OpenLoopStats::from_record),
        requests: RequestTimes::from_ms(&burst.completions_ms()),
        stalls,
        confounders,
        timeline: Some(timeline),
        call,
    }
}

/// How many requests alone time a file route's unit ([`one_read_alone`]).
pub const READS_ALONE: usize = 2;

/// A file route's unit of work: the quicker of two requests alone, each read timed by the
/// server (`call_ms`, rounded up to whole ms). The first read leaves the file hot, so the
/// quicker is a hot read whatever the cache held before; then the file is put in the state
/// `cache` asks for. Falls back to 1 ms if the read failed, so that the burst still runs and
/// fails on its own terms.
async fn one_read_alone(
    running: &Running,
    path: &str,
    fixtures: &Fixtures,
    cache: FileCache,
) -> u64 {
    let mut quickest = f64::INFINITY;
    for _ in 0..READS_ALONE {
        let alone = get_once(&running.endpoint, path, REQUEST_TIMEOUT).await;
        let body = alone.ok().and_then(|reply| reply.json::<IoWork>());
        quickest = body.map_or(quickest, |body| quickest.min(body.call_ms));
    }
    // The reads alone left it hot; only a cold case needs it put otherwise.
    if cache == FileCache::Cold {
        let _ = fixtures.set_cache(cache);
    }
    if quickest.is_finite() {
        quickest.ceil().max(1.0) as u64
    } else {
        1
    }
}

/// What a burst of `route`, `n` requests of `ms` each, is judged against: sleeps and calls
/// against one sleep and a reactor thread's queue, CPU work against the machine's cores.
pub fn ideals(route: WorkPath, n: usize, ms: u64, threads: usize) -> Ideals {
    match route.cpu_place() {
        Some(place) => Ideals::cpu(n, ms, threads, cores(), place),
        None => Ideals::new(n, ms, threads),
    }
}

/// The cores this machine offers, which the servers beside us share.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The thread names the server reported (distinct, sorted) and whether they all agree on
/// being a reactor thread.
pub fn where_it_ran(work: &[Work]) -> (Option<String>, Option<bool>) {
    let mut names: Vec<&str> = work.iter().map(|work| work.thread.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let thread = (!names.is_empty()).then(|| names.join(", "));
    let on_reactor = match work.first() {
        Some(first) if work.iter().all(|w| w.on_reactor == first.on_reactor) => {
            Some(first.on_reactor)
        }
        _ => None,
    };
    (thread, on_reactor)
}

#[cfg(test)]
mod tests;
