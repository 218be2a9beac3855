//! The two probes of a health check (`GET /ping` on the demo servers) that run beside each
//! burst, in one vocabulary.
//!
//! - [`closed`]: the original bench's pinger. It sends a ping, waits for the answer, pauses,
//!   and sends the next: while the reactor is blocked it sends nothing, so a stall costs it
//!   samples (coordinated omission).
//! - [`open`]: a ping on a fixed schedule whether or not the last one returned, each timed
//!   from when it *should* have left, as wrk2 does.
//!
//! Both return a [`ProbeRecord`]: one [`Ping`] per ping sent, answered or failed.

pub mod closed;
pub mod open;

use std::future::Future;
use std::time::{Duration, Instant};

use hyper::Method;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::http::{Connection, Endpoint, HttpError};

/// A ping slower than this fails Kubernetes' default probe (`timeoutSeconds: 1`).
pub const PROBE_TIMEOUT_MS: f64 = 1000.0;
use crate::units::millis;

/// How long one ping may take before it counts as failed.
pub const PING_TIMEOUT: Duration = Duration::from_secs(10);

/// What a probe sends: `GET path` on `endpoint`, a health check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    pub endpoint: Endpoint,
    pub path: String,
}

impl HealthCheck {
    /// The demo servers' health check: their `/ping`.
    pub fn ping(endpoint: &Endpoint) -> HealthCheck {
        HealthCheck {
            endpoint: endpoint.clone(),
            path: demo_contract::Route::Ping.path().to_owned(),
        }
    }
}

/// How a probe's health checks get their connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connections {
    /// One connection kept alive from check to check, opened again only once the server has
    /// closed it: the original bench's client (httpx's pool), whose figures the comparison
    /// keeps comparable.
    #[default]
    KeptAlive,
    /// A new connection per check, asked to close (`connection: close`) and dropped after its
    /// answer: what Kubernetes' HTTP prober sends (`DisableKeepAlives`), and what never holds
    /// a server that serves one connection at a time.
    NewEach,
}

/// Which probes run beside each burst: the original's closed loop, the open loop that keeps
/// its schedule, or both side by side (the default), so that a reader sees what the closed
/// loop hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProbeChoice {
    Closed,
    Open,
    Both,
}

/// One ping, as the probe that sent it saw it: one record per ping, from which every probe
/// statistic is derived.
#[derive(Debug, Clone, PartialEq)]
pub struct Ping {
    /// When it was due: the closed loop's send time, the open loop's scheduled time. Its
    /// latency runs from here.
    pub due: Instant,
    /// How late it left after `due`: the open loop's own drift. `None` for the closed loop,
    /// which sends when it is ready and so is never late.
    pub send_lag_ms: Option<f64>,
    /// From `due` to its answer, or to its failure, in ms.
    pub latency_ms: f64,
    /// How long the new connection it opened took to connect, in ms; `None` on a connection
    /// kept from an earlier ping, or if it failed. A connect of a second or more had its SYN
    /// resent: the server's listen queue had no room for it.
    pub connect_ms: Option<f64>,
    /// Why it failed (a timeout, a closed connection, a bad status); `None` if answered.
    pub error: Option<String>,
}

impl Ping {
    /// Whether it was answered.
    pub fn answered(&self) -> bool {
        self.error.is_none()
    }
}

/// What one probe saw while it ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeRecord {
    /// Every ping sent (for the open loop: every ping its schedule called for), in order.
    pub pings: Vec<Ping>,
    /// The CPU time of the probe's own threads (the open loop's clock and ping threads), in
    /// ms; `None` for the closed loop, which runs on the client's shared runtime.
    pub cpu_ms: Option<f64>,
    /// Whether the probe's own threads ran at real-time priority (the open loop asks for it).
    pub realtime: bool,
}

impl ProbeRecord {
    /// How many pings were sent.
    pub fn sent(&self) -> usize {
        self.pings.len()
    }

    /// The latency of each answered ping, in ms, in the order sent.
    pub fn latencies_ms(&self) -> Vec<f64> {
        let answered = self.pings.iter().filter(|ping| ping.answered());
        answered.map(|ping| ping.latency_ms).collect()
    }

    /// Why each failed ping failed, in the order sent.
    pub fn errors(&self) -> Vec<String> {
        self.pings
            .iter()
            .filter_map(|ping| ping.error.clone())
            .collect()
    }

    /// How late each ping left after its scheduled time, in ms, for the pings that had one.
    pub fn send_lags_ms(&self) -> Vec<f64> {
        self.pings
            .iter()
            .filter_map(|ping| ping.send_lag_ms)
            .collect()
    }

    /// A record of these outcomes (a latency in ms, or why the ping failed), every ping due
    /// now: for tests of what is derived from a record.
    pub fn of(outcomes: impl IntoIterator<Item = Result<f64, String>>) -> ProbeRecord {
        let due = Instant::now();
        let pings = outcomes.into_iter();
        let pings = pings.map(|outcome| Ping {
            due,
            send_lag_ms: None,
            latency_ms: outcome.clone().unwrap_or_default(),
            connect_ms: None,
            error: outcome.err(),
        });
        ProbeRecord {
            pings: pings.collect(),
            ..ProbeRecord::default()
        }
    }

    /// A record of one failed ping: a probe that could not run, and why.
    fn failed(error: String) -> ProbeRecord {
        ProbeRecord {
            pings: vec![Ping {
                due: Instant::now(),
                send_lag_ms: None,
                latency_ms: 0.0,
                connect_ms: None,
                error: Some(error),
            }],
            ..ProbeRecord::default()
        }
    }

    /// Adds `more`'s pings to this record, as if one probe had sent them all: for figures
    /// pooled over several runs.
    pub fn append(&mut self, more: ProbeRecord) {
        self.pings.extend(more.pings);
        self.cpu_ms = Option::zip(self.cpu_ms, more.cpu_ms).map(|(a, b)| a + b);
        self.realtime &= more.realtime;
    }
}

/// A probe running as a task of its own until [`ProbeTask::stop`].
#[derive(Debug)]
pub struct ProbeTask {
    /// What it is, for the error of a task that failed.
    what: &'static str,
    stop: watch::Sender<bool>,
    task: JoinHandle<ProbeRecord>,
}

impl ProbeTask {
    /// Spawns `probe` of `check` with its `plan` (when to ping); it runs until the receiver
    /// it is given says stop.
    fn spawn<P, F>(
        what: &'static str,
        check: HealthCheck,
        plan: P,
        probe: impl FnOnce(HealthCheck, P, watch::Receiver<bool>) -> F,
    ) -> ProbeTask
    where
        F: Future<Output = ProbeRecord> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(probe(check, plan, stopped));
        ProbeTask { what, stop, task }
    }

    /// Tells the probe to stop, waits for its pings in flight, and returns its record.
    pub async fn stop(self) -> ProbeRecord {
        self.stop.send_replace(true);
        (self.task.await).unwrap_or_else(|error| {
            ProbeRecord::failed(format!("the {} failed: {error}", self.what))
        })
    }
}

/// The probes of one case, started together and stopped together.
#[derive(Debug)]
pub struct Probes {
    closed: Option<ProbeTask>,
    open: Option<ProbeTask>,
}

/// What [`Probes::stop`] returns: a record per probe that ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeRecords {
    pub closed: Option<ProbeRecord>,
    pub open: Option<ProbeRecord>,
}

impl ProbeRecords {
    /// Adds `more`'s records to these, probe by probe, as if each probe had sent all of its
    /// pings in one run: for figures pooled over several runs.
    pub fn append(&mut self, more: ProbeRecords) {
        for (into, more) in [(&mut self.closed, more.closed), (&mut self.open, more.open)] {
            match (into, more) {
                (Some(record), Some(more)) => record.append(more),
                (none @ None, more) => *none = more,
                (Some(_), None) => {}
            }
        }
    }
}

impl Probes {
    /// Starts the chosen probes against `endpoint`, one ping every `every`. With both, the
    /// open loop's schedule starts half a period after the closed loop's first ping, so that
    /// the two probes' pings take turns instead of queueing behind each other on the server.
    pub fn start(choice: ProbeChoice, endpoint: &Endpoint, every: Duration) -> Probes {
        let check = HealthCheck::ping(endpoint);
        let closed = (choice != ProbeChoice::Open).then(|| closed::start(check.clone(), every));
        let schedule = match closed {
            Some(_) => open::Schedule {
                first_after: every / 2,
                every,
            },
            None => open::Schedule::starting_now(every),
        };
        let open = (choice != ProbeChoice::Closed).then(|| open::start(check, schedule));
        Probes { closed, open }
    }

    /// Stops both, waits for the pings in flight, and returns what they saw.
    pub async fn stop(self) -> ProbeRecords {
        let closed = match self.closed {
            Some(probe) => Some(probe.stop().await),
            None => None,
        };
        let open = match self.open {
            Some(probe) => Some(probe.stop().await),
            None => None,
        };
        ProbeRecords { closed, open }
    }
}

/// What one ping came to: the connection to keep for the next (if one is kept), or why it
/// failed; from `since` to the answer or the failure, ms; and its connect's time, if it
/// opened a connection.
struct Pinged {
    kept: Result<Option<Connection>, String>,
    latency_ms: f64,
    connect_ms: Option<f64>,
}

/// One `check`, within [`PING_TIMEOUT`]: as `connections` says, on `idle` if it is still open
/// (else on a new connection, kept for the next), or on a new connection closed after it.
async fn ping(
    check: &HealthCheck,
    idle: Option<Connection>,
    since: Instant,
    connections: Connections,
) -> Pinged {
    let mut connect_ms = None;
    let exchange = async {
        // A connection the server closed (e.g. after its keep-alive timeout) is opened again.
        let connection = match idle {
            Some(connection) if !connection.is_closed() => connection,
            _ => {
                let connecting = Instant::now();
                let connection = Connection::open(&check.endpoint).await?;
                connect_ms = Some(millis(connecting.elapsed()));
                connection
            }
        };
        match connections {
            Connections::KeptAlive => {
                let mut connection = connection;
                let reply = connection.send(Method::GET, &check.path).await?;
                Ok::<_, HttpError>((reply.status, Some(connection)))
            }
            Connections::NewEach => {
                let reply = connection.send_last(Method::GET, &check.path).await?;
                Ok((reply.status, None))
            }
        }
    };
    let outcome = tokio::time::timeout(PING_TIMEOUT, exchange)
        .await
        .unwrap_or(Err(HttpError::Timeout(PING_TIMEOUT)));
    let latency_ms = millis(since.elapsed());
    let kept = match outcome {
        Ok((200, connection)) => Ok(connection),
        Ok((status, _)) => Err(format!("status {status} after {latency_ms:.0} ms")),
        Err(error) => Err(format!("{} after {latency_ms:.0} ms", error.describe())),
    };
    Pinged {
        kept,
        latency_ms,
        connect_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::Empty;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    /// A server on loopback that answers every request at once: how many connections it
    /// accepted, and how many requests asked it to close theirs.
    async fn counting() -> (HealthCheck, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        use hyper::service::service_fn;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (accepted, closing) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (counted, asked) = (accepted.clone(), closing.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, SeqCst);
                let asked = asked.clone();
                let service = service_fn(move |request: hyper::Request<_>| {
                    let close = request.headers().get(hyper::header::CONNECTION);
                    if close.is_some_and(|value| value == "close") {
                        asked.fetch_add(1, SeqCst);
                    }
                    async {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(
                            Empty::<Bytes>::new(),
                        ))
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let serving = hyper::server::conn::http1::Builder::new();
                tokio::spawn(async move { serving.serve_connection(io, service).await });
            }
        });
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        (HealthCheck::ping(&endpoint), accepted, closing)
    }

    #[tokio::test]
    async fn checks_on_new_connections_ask_each_closed_and_kept_ones_share_one() {
        let every = Duration::from_millis(20);
        for connections in [Connections::NewEach, Connections::KeptAlive] {
            let (check, accepted, closing) = counting().await;
            let probe = open::start_with(check, open::Schedule::starting_now(every), connections);
            tokio::time::sleep(every * 5).await;
            let record = probe.stop().await;
            let (sent, connected) = (record.sent(), record.pings.iter());
            let connected = connected.filter(|ping| ping.connect_ms.is_some()).count();
            assert!(sent >= 3 && record.errors().is_empty(), "{record:?}");
            let (accepted, closing) = (accepted.load(SeqCst), closing.load(SeqCst));
            assert_eq!(accepted, connected, "each connect is on its ping's record");
            match connections {
                Connections::NewEach => assert_eq!((accepted, closing), (sent, sent)),
                // A ping due while the last is still out opens a second connection.
                Connections::KeptAlive => assert!(accepted < sent && closing == 0),
            }
        }
    }

    #[test]
    fn records_are_pooled_probe_by_probe() {
        let mut pooled = ProbeRecords {
            closed: Some(ProbeRecord::of([Ok(1.0)])),
            open: None,
        };
        pooled.append(ProbeRecords {
            closed: Some(ProbeRecord::of([Ok(2.0)])),
            open: Some(ProbeRecord::of([Err("reset".to_owned())])),
        });
        pooled.append(ProbeRecords::default());
        let closed = pooled.closed.expect("the closed loop's pings");
        assert_eq!(closed.latencies_ms(), [1.0, 2.0]);
        assert_eq!(pooled.open.expect("the open loop's").errors(), ["reset"]);
    }
}
