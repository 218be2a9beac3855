//! One window of load with the two probes beside it, and the cost of each endpoint at rest.
//!
//! The load: `concurrency` workers, each on a keep-alive connection of its own, send the
//! route with `?ms=SLEEP` at once and again as soon as each answer comes, until the window
//! ends; then their last requests are answered (on `/bad`, one sleep at a time). The probes:
//! from the trial's phase on, every period while the load lasts, one `GET /ping` (through the
//! reactor) and one `GET /health` (reactor-watch's thread) at the same instant, each on a new
//! connection with the probe's timeout, connecting included, as a kubelet sends them.

use std::time::{Duration, Instant};

use hyper::Method;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use super::HealthPlan;
use burst_meter::burst::REQUEST_TIMEOUT;
use burst_meter::http::{Connection, Endpoint, HttpError, get_once};
use burst_meter::session::Running;
use burst_meter::units::millis;
use burst_meter::work::WorkPath;

/// Which endpoint a probe asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probed {
    /// The stock `/ping`, served by the reactor.
    Ping,
    /// reactor-watch's `/health`, served by its own thread.
    Health,
}

impl Probed {
    pub const BOTH: [Probed; 2] = [Probed::Ping, Probed::Health];

    /// Its path, as the tables name it.
    pub fn path(self) -> &'static str {
        match self {
            Probed::Ping => "/ping",
            Probed::Health => "/health",
        }
    }

    /// Where it is asked, and the path to ask: the health check's URL carries its path as
    /// the endpoint's prefix.
    fn at(self, running: &Running, health: &Endpoint) -> (Endpoint, String) {
        match self {
            Probed::Ping => (running.endpoint.clone(), self.path().to_owned()),
            Probed::Health => {
                let server = Endpoint {
                    prefix: String::new(),
                    ..health.clone()
                };
                (server, health.prefix.clone())
            }
        }
    }
}

/// What one probe got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Answer {
    /// `200`.
    Ok,
    /// `503`, with the reason its JSON body gives: the route holding a thread, and how long.
    Unavailable {
        route: Option<String>,
        held_ms: Option<f64>,
    },
    /// No answer within the probe's timeout.
    TimedOut,
    /// Any other status, or the connection failed.
    Failed { reason: String },
}

/// One probe, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub stack: String,
    /// The route under load.
    pub route: String,
    pub trial: usize,
    pub endpoint: Probed,
    /// When it was sent, in ms from the load's start.
    pub sent_ms: f64,
    pub outcome: Answer,
    /// From its send to its answer or failure; `None` if it timed out.
    pub latency_ms: Option<f64>,
}

/// One window of load, as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub stack: String,
    pub route: String,
    pub trial: usize,
    /// When the first probe was sent, in ms from the load's start.
    pub first_probe_ms: f64,
    /// From the load's start to its last answer, in ms.
    pub lasted_ms: f64,
    pub load_answered: usize,
    pub load_failed: usize,
}

/// The body of a 503: the fields of its reason this experiment reads.
#[derive(Debug, Deserialize)]
struct Stalled {
    route: Option<String>,
    held_ms: Option<f64>,
}

/// One window of `route` on `running`, probed; trial `trial` sets the probes' phase.
pub async fn window(
    running: &Running,
    health: &Endpoint,
    plan: &HealthPlan,
    route: WorkPath,
    trial: usize,
) -> (Window, Vec<Check>) {
    until_healthy(running, health, plan).await;
    let start = Instant::now();
    let path = format!("{}?ms={}", route.path(), plan.sleep_ms);
    let until = start + Duration::from_millis(plan.window_ms);
    let workers: Vec<JoinHandle<(usize, usize)>> = (0..plan.concurrency)
        .map(|_| tokio::spawn(keep_sending(running.endpoint.clone(), path.clone(), until)))
        .collect();
    let load = tokio::spawn(async move {
        let mut counts = (0, 0);
        for worker in workers {
            let (answered, failed) = worker.await.unwrap_or((0, 1));
            counts = (counts.0 + answered, counts.1 + failed);
        }
        counts
    });
    let probes = probe_while(load, running, health, plan, start + plan.first_probe(trial)).await;
    let ((load_answered, load_failed), probes) = probes;
    let lasted_ms = millis(start.elapsed());
    let mut checks = Vec::with_capacity(probes.len());
    for (endpoint, sent_at, sent) in probes {
        let (outcome, latency_ms) = sent.await.unwrap_or_else(|error| {
            let reason = format!("the probe's task: {error}");
            (Answer::Failed { reason }, None)
        });
        checks.push(Check {
            stack: running.label.clone(),
            route: route.path().to_owned(),
            trial,
            endpoint,
            sent_ms: millis(sent_at - start),
            outcome,
            latency_ms,
        });
    }
    let window = Window {
        stack: running.label.clone(),
        route: route.path().to_owned(),
        trial,
        first_probe_ms: millis(plan.first_probe(trial)),
        lasted_ms,
        load_answered,
        load_failed,
    };
    (window, checks)
}

/// How often [`until_healthy`] asks again.
const ASK_AGAIN: Duration = Duration::from_millis(50);

/// Waits until the health check answers 200. It fails for its period after a stall ends (the
/// server's `--health-period-ms`), so a window starts once the last one's stalls are past
/// it, and its answers are its own load's; after a window whose load stalled nothing, at
/// once. Gives up after the period and one more ask: the window's own counts then show it.
async fn until_healthy(running: &Running, health: &Endpoint, plan: &HealthPlan) {
    let (endpoint, path) = Probed::Health.at(running, health);
    let timeout = Duration::from_millis(plan.probe_timeout_ms);
    let give_up = Instant::now() + Duration::from_millis(plan.health_period_ms) + ASK_AGAIN;
    loop {
        let (outcome, _) = probe(&endpoint, &path, timeout).await;
        if outcome == Answer::Ok || Instant::now() >= give_up {
            return;
        }
        tokio::time::sleep(ASK_AGAIN).await;
    }
}

/// A probe sent: which endpoint, when, and its outcome to come.
type Sent = (Probed, Instant, JoinHandle<(Answer, Option<f64>)>);

/// Both probes, from `first` on, every period until `load` ends; returns the load's counts
/// as soon as it ends, with the probes sent.
async fn probe_while(
    mut load: JoinHandle<(usize, usize)>,
    running: &Running,
    health: &Endpoint,
    plan: &HealthPlan,
    first: Instant,
) -> ((usize, usize), Vec<Sent>) {
    let timeout = Duration::from_millis(plan.probe_timeout_ms);
    let every = Duration::from_millis(plan.probe_every_ms);
    let mut at = first;
    let mut probes = Vec::new();
    loop {
        tokio::select! {
            counts = &mut load => return (counts.unwrap_or_default(), probes),
            () = tokio::time::sleep_until(at.into()) => {}
        }
        for probed in Probed::BOTH {
            let (endpoint, path) = probed.at(running, health);
            let sent = tokio::spawn(async move { probe(&endpoint, &path, timeout).await });
            probes.push((probed, at, sent));
        }
        at += every;
    }
}

/// One worker of the load: `path` on a keep-alive connection, again as each answer comes,
/// until `until`; a connection that fails is opened again. Returns (answered, failed).
async fn keep_sending(endpoint: Endpoint, path: String, until: Instant) -> (usize, usize) {
    let (mut answered, mut failed) = (0, 0);
    let mut connection = None;
    while Instant::now() < until {
        if connection.is_none() {
            connection = Connection::open(&endpoint).await.ok();
        }
        let Some(open) = connection.as_mut() else {
            failed += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let sent = tokio::time::timeout(REQUEST_TIMEOUT, open.send(Method::GET, &path)).await;
        match sent {
            Ok(Ok(reply)) if reply.status == 200 => answered += 1,
            Ok(Ok(_)) => failed += 1,
            _ => {
                failed += 1;
                connection = None;
            }
        }
    }
    (answered, failed)
}

/// One probe: `GET path` on a new connection within `timeout`, connecting included.
async fn probe(endpoint: &Endpoint, path: &str, timeout: Duration) -> (Answer, Option<f64>) {
    let sent = Instant::now();
    let reply = get_once(endpoint, path, timeout).await;
    let latency = Some(millis(sent.elapsed()));
    match reply {
        Ok(reply) if reply.status == 200 => (Answer::Ok, latency),
        Ok(reply) if reply.status == 503 => {
            let stalled = reply.json::<Stalled>();
            let outcome = Answer::Unavailable {
                route: stalled.as_ref().and_then(|body| body.route.clone()),
                held_ms: stalled.and_then(|body| body.held_ms),
            };
            (outcome, latency)
        }
        Ok(reply) => {
            let reason = format!("status {}", reply.status);
            (Answer::Failed { reason }, latency)
        }
        Err(HttpError::Timeout(_)) => (Answer::TimedOut, None),
        Err(error) => (
            Answer::Failed {
                reason: error.describe(),
            },
            latency,
        ),
    }
}

/// What one endpoint costs on the idle server: sequential requests on one keep-alive
/// connection, after a warm-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestCost {
    pub stack: String,
    pub endpoint: Probed,
    /// Each measured request's latency, in ms, in the order sent.
    pub latencies_ms: Vec<f64>,
    /// Requests that failed (a connection that fails is opened again).
    pub failed: usize,
}

/// The cost at rest of `/ping`, then of `/health`, on `running`.
pub async fn at_rest(running: &Running, health: &Endpoint, plan: &HealthPlan) -> Vec<RestCost> {
    let mut costs = Vec::with_capacity(Probed::BOTH.len());
    for probed in Probed::BOTH {
        let (endpoint, path) = probed.at(running, health);
        let mut cost = RestCost {
            stack: running.label.clone(),
            endpoint: probed,
            latencies_ms: Vec::with_capacity(plan.rest_requests),
            failed: 0,
        };
        let mut connection = None;
        for index in 0..plan.rest_warm_up + plan.rest_requests {
            if connection.is_none() {
                connection = Connection::open(&endpoint).await.ok();
            }
            let sent = Instant::now();
            let reply = match connection.as_mut() {
                Some(open) => {
                    let sent = tokio::time::timeout(REQUEST_TIMEOUT, open.send(Method::GET, &path));
                    sent.await.ok().and_then(Result::ok)
                }
                None => None,
            };
            let latency = millis(sent.elapsed());
            match reply {
                Some(reply) if reply.status == 200 => {
                    if index >= plan.rest_warm_up {
                        cost.latencies_ms.push(latency);
                    }
                }
                Some(_) => cost.failed += 1,
                None => {
                    cost.failed += 1;
                    connection = None;
                }
            }
        }
        costs.push(cost);
    }
    costs
}
