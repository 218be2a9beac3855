//! The bench protocol (DESIGN.md §3): for each target, for each work route, a pinger on its
//! own keep-alive connection, a burst of concurrent requests after a short head start, then
//! the pinger stopped and a pause. Targets run one after another, never side by side: they
//! would share the machine's cores.

use std::time::Duration;

use demo_contract::{Pong, Route, Work};
use serde::{Deserialize, Serialize};

use crate::burst::{self, REQUEST_TIMEOUT};
use crate::http::{Endpoint, get_once};
use crate::open_loop::OpenLoopProbe;
use crate::probe::Pinger;
use crate::stats::{Ideals, OpenLoopStats, PingStats, Verdict};
use crate::target::{ServerProcess, Target};

/// The pinger's head start before the burst: it is already waiting on the server when the
/// burst arrives.
pub const HEAD_START: Duration = Duration::from_millis(50);

/// How long the warm-up may take to reach a target: an unreachable one is reported in
/// seconds, not after the pinger's 10 s timeout.
pub const REACH_WITHIN: Duration = Duration::from_secs(3);

/// The pause between cases, so that one case's connections are closed before the next.
pub const PAUSE: Duration = Duration::from_millis(300);

/// What to run against each target. The defaults reproduce the original experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The work routes, in order.
    #[serde(with = "route_paths")]
    pub routes: Vec<Route>,
    /// Concurrent requests per burst.
    pub concurrency: usize,
    pub sleep_ms: u64,
    pub ping_every_ms: u64,
    /// Reactor-thread counts: every spawned server runs the plan once at each.
    pub threads: Vec<usize>,
    /// Which pingers run beside each burst.
    pub probe: Probe,
}

/// The pingers: the original's closed loop, the open loop that keeps its schedule, or both
/// side by side (the default), so that a reader sees what the closed loop hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Probe {
    Closed,
    Open,
    Both,
}

impl Probe {
    fn closed(self) -> bool {
        self != Probe::Open
    }

    fn open(self) -> bool {
        self != Probe::Closed
    }
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            routes: Route::WORK.to_vec(),
            concurrency: 10,
            sleep_ms: 500,
            ping_every_ms: 50,
            threads: vec![1],
            probe: Probe::Both,
        }
    }
}

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
    /// The closed-loop pinger (the original's); empty with `--probe open`.
    pub ping: PingStats,
    /// The open-loop probe, unless `--probe closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopStats>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCount {
    pub reason: String,
    pub count: usize,
}

/// A target, or one of its cases, that could not be measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub target: String,
    pub reactor_threads: usize,
    /// The case it failed in; `None` if the target failed before or after its cases.
    pub route: Option<String>,
    pub reason: String,
}

impl Failure {
    /// `target` at `reactor_threads` failed, in `route` if it got that far, for `reason`.
    pub fn new(
        target: &str,
        reactor_threads: usize,
        route: Option<Route>,
        reason: String,
    ) -> Failure {
        Failure {
            target: target.to_owned(),
            reactor_threads,
            route: route.map(|route| route.path().to_owned()),
            reason,
        }
    }
}

/// What happens while a run goes on, for the terminal.
#[derive(Debug)]
pub enum Event<'a> {
    Starting { target: &'a str, threads: usize },
    Running { target: &'a str, route: Route },
    Measured(&'a Case),
    Failed(&'a Failure),
}

/// Everything measured on one target.
#[derive(Debug, Default)]
pub struct TargetRun {
    pub cases: Vec<Case>,
    pub failures: Vec<Failure>,
}

impl TargetRun {
    fn fail(&mut self, failure: Failure, on: &mut impl FnMut(Event<'_>)) {
        on(Event::Failed(&failure));
        self.failures.push(failure);
    }
}

/// The (target, reactor threads) pairs a plan runs, in order: every thread count for each
/// spawned server, one after another; an external target once, at the first count, since
/// its threads are not ours to set.
pub fn schedule<'a>(targets: &'a [Target], plan: &Plan) -> Vec<(&'a Target, usize)> {
    let mut runs = Vec::new();
    for (index, &threads) in plan.threads.iter().enumerate() {
        for target in targets {
            if index == 0 || matches!(target, Target::Spawn { .. }) {
                runs.push((target, threads));
            }
        }
    }
    runs
}

/// How many cases a plan measures.
pub fn case_count(targets: &[Target], plan: &Plan) -> usize {
    schedule(targets, plan).len() * plan.routes.len()
}

/// Runs the whole plan: [`run_target`] for each pair of [`schedule`].
pub async fn run_plan(
    targets: &[Target],
    plan: &Plan,
    on: &mut impl FnMut(Event<'_>),
) -> TargetRun {
    let mut all = TargetRun::default();
    for (target, threads) in schedule(targets, plan) {
        let run = run_target(target, plan, threads, on).await;
        all.cases.extend(run.cases);
        all.failures.extend(run.failures);
    }
    all
}

/// Runs the plan against one target with `threads` reactor threads: starts it (if spawned),
/// warms it up, measures each route, stops it. Failures are recorded, never raised: the run
/// goes on with the next target.
pub async fn run_target(
    target: &Target,
    plan: &Plan,
    threads: usize,
    on: &mut impl FnMut(Event<'_>),
) -> TargetRun {
    let label = target.label();
    on(Event::Starting {
        target: label,
        threads,
    });
    let mut run = TargetRun::default();
    let failed = |route, reason| Failure::new(label, threads, route, reason);

    let mut running = match Running::start(target, threads, plan.sleep_ms).await {
        Ok(running) => running,
        Err(reason) => {
            run.fail(failed(None, reason), on);
            return run;
        }
    };
    let runtime = running.pong.as_ref().map(|pong| pong.runtime.clone());
    let reported_threads = running
        .pong
        .as_ref()
        .map_or(threads, |pong| pong.reactor_threads);

    for &route in &plan.routes {
        on(Event::Running {
            target: label,
            route,
        });
        let mut case = measure(
            &running.endpoint,
            route,
            &running.query,
            plan,
            reported_threads,
        )
        .await;
        case.target = label.to_owned();
        case.runtime = runtime.clone();
        if let Some(reason) = running.died() {
            run.fail(failed(Some(route), reason), on);
            return run;
        }
        on(Event::Measured(&case));
        run.cases.push(case);
        tokio::time::sleep(PAUSE).await;
    }
    if let Err(reason) = running.finish().await {
        run.fail(failed(None, reason), on);
    }
    run
}

/// A target ready to measure: started if it is ours to start, and warmed up.
#[derive(Debug)]
pub struct Running {
    /// The spawned server; `None` for an external target.
    pub server: Option<ServerProcess>,
    pub endpoint: Endpoint,
    /// Appended to each work route: `?ms=` for an external target, which we cannot start
    /// with `--sleep-ms`.
    pub query: String,
    /// The server's description of itself, if it gives one (the original FastAPI app does not).
    pub pong: Option<Pong>,
}

impl Running {
    /// Spawns the target (with `threads` reactor threads and `sleep_ms` as its sleep) or
    /// takes its URL, then warms it up. The error names the target and says why.
    pub async fn start(target: &Target, threads: usize, sleep_ms: u64) -> Result<Running, String> {
        let (server, endpoint, query) = match target {
            Target::Spawn { name, binary } => {
                let args = [
                    "--threads".to_owned(),
                    threads.to_string(),
                    "--sleep-ms".to_owned(),
                    sleep_ms.to_string(),
                ];
                let server = ServerProcess::start(name, binary, &args)
                    .await
                    .map_err(|error| error.to_string())?;
                let endpoint = server.endpoint().clone();
                (Some(server), endpoint, String::new())
            }
            Target::External { endpoint, .. } => {
                (None, endpoint.clone(), format!("?ms={sleep_ms}"))
            }
        };
        // On failure `server` is dropped here, which stops it.
        let pong = warm_up(&endpoint).await?;
        Ok(Running {
            server,
            endpoint,
            query,
            pong,
        })
    }

    /// Why the spawned server is gone, if it died.
    pub fn died(&mut self) -> Option<String> {
        let server = self.server.as_mut()?;
        let status = server.exited()?;
        Some(format!(
            "the server died during the case ({status}){}",
            server.stderr()
        ))
    }

    /// Stops a spawned server; one that does not exit cleanly is a failure of its own.
    pub async fn finish(self) -> Result<(), String> {
        let Some(server) = self.server else {
            return Ok(());
        };
        match server.stop().await {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(format!("did not stop cleanly: {status}")),
            Err(error) => Err(format!("could not be stopped: {error}")),
        }
    }
}

/// One `GET /ping` before measuring: the first connection and the lazy set-up of each
/// stack are paid here, not in the first case. Returns the server's self-description if it
/// gives one (the original FastAPI app does not).
async fn warm_up(endpoint: &Endpoint) -> Result<Option<Pong>, String> {
    match get_once(endpoint, "/ping", REACH_WITHIN).await {
        Ok(reply) if reply.status == 200 => Ok(reply.json::<Pong>()),
        Ok(reply) => Err(format!("{endpoint}/ping answered {}", reply.status)),
        Err(error) => Err(format!(
            "cannot reach {endpoint}/ping: {}",
            error.describe()
        )),
    }
}

/// One case: the pingers, a head start, the burst, the pingers stopped. `threads` is the
/// server's count of reactor threads, which sets the serialised ideal.
pub async fn measure(
    endpoint: &Endpoint,
    route: Route,
    query: &str,
    plan: &Plan,
    threads: usize,
) -> Case {
    let every = Duration::from_millis(plan.ping_every_ms);
    let closed = plan
        .probe
        .closed()
        .then(|| Pinger::start(endpoint.clone(), every));
    let open = plan
        .probe
        .open()
        .then(|| OpenLoopProbe::start(endpoint.clone(), every));
    tokio::time::sleep(HEAD_START).await;
    let path = format!("{}{query}", route.path());
    let burst = burst::fire(endpoint, &path, plan.concurrency, REQUEST_TIMEOUT).await;
    let ping = match closed {
        Some(pinger) => {
            let pings = pinger.stop().await;
            PingStats::from_samples(pings.samples_ms, pings.errors)
        }
        None => PingStats::from_samples(Vec::new(), Vec::new()),
    };
    let open_loop = match open {
        Some(probe) => Some(OpenLoopStats::from_record(probe.stop().await)),
        None => None,
    };
    let wall_ms = burst.wall.as_secs_f64() * 1000.0;
    let ideals = Ideals::new(plan.concurrency, plan.sleep_ms, threads);
    let (sleep_thread, on_reactor) = where_it_ran(&burst.work());
    Case {
        target: String::new(),
        runtime: None,
        reactor_threads: threads,
        route: route.path().to_owned(),
        n: plan.concurrency,
        sleep_ms: plan.sleep_ms,
        wall_ms,
        times_ideal: ideals.times_ideal(wall_ms),
        ok: burst.ok(),
        err: burst.err(),
        errors: burst
            .errors()
            .into_iter()
            .map(|(reason, count)| ErrorCount { reason, count })
            .collect(),
        verdict: ideals.verdict(wall_ms),
        sleep_thread,
        on_reactor,
        ping,
        open_loop,
    }
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

/// Routes as their paths in JSON.
pub(crate) mod route_paths {
    use demo_contract::Route;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub fn serialize<S: Serializer>(routes: &[Route], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(routes.iter().map(|route| route.path()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Route>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .iter()
            .map(|path| {
                Route::from_path(path)
                    .ok_or_else(|| D::Error::custom(format!("unknown route {path}")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(thread: &str, on_reactor: bool) -> Work {
        Work {
            route: "/bad".into(),
            how: String::new(),
            slept_ms: 1,
            thread: thread.into(),
            on_reactor,
        }
    }

    #[test]
    fn where_it_ran_names_each_thread_once() {
        let (thread, on_reactor) = where_it_ran(&[work("main", true), work("main", true)]);
        assert_eq!((thread.as_deref(), on_reactor), (Some("main"), Some(true)));
        let (thread, _) = where_it_ran(&[work("b", false), work("a", false), work("b", false)]);
        assert_eq!(thread.as_deref(), Some("a, b"));
    }

    #[test]
    fn where_it_ran_admits_disagreement_and_silence() {
        assert_eq!(where_it_ran(&[work("a", true), work("b", false)]).1, None);
        assert_eq!(where_it_ran(&[]), (None, None));
    }
}
