//! One trial of the io_uring experiment: `n` connections (and, for the order of service, one
//! more for a ping) opened and used once each, so that the server has accepted them and waits
//! on each for its next request; then the ping, `lead` before the burst, and the `n` `/bad`
//! requests, written back to back. The client records when each answer came; the server's
//! record of events (`--events`) says when each handler started and ended.

use std::time::{Duration, Instant};

use demo_contract::{EventsBody, Route, What};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::measure::burst::REQUEST_TIMEOUT;
use crate::measure::http::{self, HttpError, Reply};
use crate::measure::session::Running;
use crate::measure::units::millis;
use crate::measure::wire::{self, Peer, Request};

/// How long the server may take to answer `GET /events` before or after a trial.
const EVENTS_WITHIN: Duration = Duration::from_secs(3);

/// The pause after the connections are used once, for the server to wait on each again.
const SETTLE: Duration = Duration::from_millis(20);

/// One trial, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The setting's label: its server, and the flips it runs with.
    pub setting: String,
    /// How long the ping led the burst, in ms; `None`: no ping (the held-answers trials).
    pub lead_ms: Option<f64>,
    pub index: usize,
    /// When each `/bad` answer came, in ms from the burst's first write, earliest first.
    pub answers_ms: Vec<f64>,
    /// When each `/bad` handler ended on the server, in ms from the first, earliest first.
    pub handlers_ended_ms: Vec<f64>,
    /// The ping's answer, in ms from the burst's first write (negative: before it).
    pub ping_ms: Option<f64>,
    /// How many `/bad` handlers started before the ping's, as the server recorded.
    pub ping_started_after: Option<usize>,
    /// Why the trial has no verdict: a request failed, or the server recorded nothing.
    pub error: Option<String>,
}

/// What one trial sends: `n` requests of `bad`, and `ping` first if `lead` is `Some`.
#[derive(Debug)]
pub struct Burst<'a> {
    pub running: &'a Running,
    pub n: usize,
    pub bad: Request,
    pub ping: Request,
    pub lead: Option<Duration>,
}

/// An answer to come: the connection's port, the answer and when it came.
type Answer = JoinHandle<(u16, Result<(Reply, Instant), HttpError>)>;

impl Burst<'_> {
    /// Runs the trial; its failures are in the record, never raised.
    pub async fn trial(&self, setting: &str, index: usize) -> Trial {
        let endpoint = &self.running.endpoint;
        let sent = tokio::time::timeout(REQUEST_TIMEOUT, self.send()).await;
        let sent = sent.unwrap_or(Err(HttpError::Timeout(REQUEST_TIMEOUT).describe()));
        let events = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
        let events = events.ok().and_then(|reply| reply.json::<EventsBody>());
        let mut trial = Trial {
            setting: setting.to_owned(),
            lead_ms: self.lead.map(millis),
            index,
            answers_ms: Vec::new(),
            handlers_ended_ms: Vec::new(),
            ping_ms: None,
            ping_started_after: None,
            error: None,
        };
        match (sent, events) {
            (Ok(seen), Some(events)) => seen.record(&events, &mut trial),
            (Err(error), _) => trial.error = Some(error),
            (Ok(_), None) => trial.error = Some("no record of events".to_owned()),
        }
        trial
    }

    /// Opens and uses every connection once, clears the server's record, then writes the
    /// ping and the burst and waits for every answer.
    async fn send(&self) -> Result<Seen, String> {
        let peer = Peer::resolve(&self.running.endpoint).await;
        let mut pinger = match self.lead {
            Some(_) => Some(warm(&peer, &self.ping).await?),
            None => None,
        };
        let mut connections = Vec::with_capacity(self.n);
        for _ in 0..self.n {
            connections.push(warm(&peer, &self.ping).await?);
        }
        tokio::time::sleep(SETTLE).await;
        // The warm-up's events are read and dropped: the record after holds this trial alone.
        let endpoint = &self.running.endpoint;
        let cleared = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
        cleared.map_err(|error| format!("GET /events: {}", error.describe()))?;
        let ping = match (pinger.take(), self.lead) {
            (Some(stream), Some(lead)) => Some(self.send_ping(stream, lead).await?),
            _ => None,
        };
        let start = Instant::now();
        let mut burst = Vec::with_capacity(self.n);
        for stream in connections {
            burst.push(write(stream, &self.bad).await?);
        }
        Seen::collect(start, ping, burst).await
    }

    /// Writes the ping on `stream`, then waits `lead` (spinning: a timer cannot wait 0.1 ms).
    async fn send_ping(&self, stream: TcpStream, lead: Duration) -> Result<Answer, String> {
        let answer = write(stream, &self.ping).await?;
        let written = Instant::now();
        while written.elapsed() < lead {
            std::hint::spin_loop();
        }
        Ok(answer)
    }
}

/// A new connection, used once for `request`: accepted by the server, idle again after.
async fn warm(peer: &Peer, request: &Request) -> Result<TcpStream, String> {
    let failed = |error: HttpError| format!("a warm-up: {}", error.describe());
    let mut stream = peer.connect().await.map_err(failed)?;
    let reply = wire::exchange(&mut stream, request).await.map_err(failed)?;
    ok(&reply).map_err(|error| format!("a warm-up: {error}"))?;
    Ok(stream)
}

/// Writes `request` on `stream` now, and waits for its answer in a task of its own.
async fn write(mut stream: TcpStream, request: &Request) -> Result<Answer, String> {
    let port = stream.local_addr().map_or(0, |addr| addr.port());
    let wrote = stream.write_all(request.bytes()).await;
    wrote.map_err(|error| format!("a write: {error}"))?;
    Ok(tokio::spawn(async move {
        let reply = wire::receive(&mut stream, Ok(())).await;
        (port, reply.map(|reply| (reply, Instant::now())))
    }))
}

/// `Ok` for a 200, else its status.
fn ok(reply: &Reply) -> Result<(), String> {
    match reply.status {
        200 => Ok(()),
        status => Err(format!("status {status}")),
    }
}

/// What the client saw: when each answer came, from the burst's first write, and the ports
/// by which the server's record names the connections.
struct Seen {
    answers_ms: Vec<f64>,
    burst_ports: Vec<u16>,
    /// The ping's connection's port and its answer's time.
    ping: Option<(u16, f64)>,
}

impl Seen {
    /// Every answer, each a 200, or why not.
    async fn collect(
        start: Instant,
        ping: Option<Answer>,
        burst: Vec<Answer>,
    ) -> Result<Seen, String> {
        let since = |at: Instant| {
            let ms = |d: Duration| millis(d);
            match at.checked_duration_since(start) {
                Some(after) => ms(after),
                None => -ms(start.duration_since(at)),
            }
        };
        let mut seen = Seen {
            answers_ms: Vec::with_capacity(burst.len()),
            burst_ports: Vec::with_capacity(burst.len()),
            ping: None,
        };
        if let Some(answer) = ping {
            let (port, at) = answered(answer, "the ping").await?;
            seen.ping = Some((port, since(at)));
        }
        for answer in burst {
            let (port, at) = answered(answer, "a /bad request").await?;
            seen.answers_ms.push(since(at));
            seen.burst_ports.push(port);
        }
        seen.answers_ms.sort_by(f64::total_cmp);
        Ok(seen)
    }

    /// The trial's figures from what the client saw and the server's `events`.
    fn record(self, events: &EventsBody, trial: &mut Trial) {
        let ports = &self.burst_ports;
        let bad = |what: What| {
            (events.events.iter())
                .filter(move |event| event.what == what && ports.contains(&event.peer))
                .map(|event| event.at_us)
        };
        let ended: Vec<u64> = bad(What::Ended).collect();
        let first = ended.iter().min().copied().unwrap_or(0);
        trial.handlers_ended_ms = ended
            .iter()
            .map(|&at| (at - first) as f64 / 1000.0)
            .collect();
        trial.handlers_ended_ms.sort_by(f64::total_cmp);
        if let Some((port, ms)) = self.ping {
            trial.ping_ms = Some(ms);
            let ping_started = (events.events.iter())
                .filter(|event| event.what == What::Started && event.peer == port)
                .filter(|event| event.route.as_deref() == Some(Route::Ping.path()))
                .map(|event| event.at_us)
                .next_back();
            trial.ping_started_after =
                ping_started.map(|at| bad(What::Started).filter(|&bad| bad < at).count());
        }
        if trial.handlers_ended_ms.len() != self.answers_ms.len() {
            trial.error = Some("the server's record lacks some handlers".to_owned());
        }
        trial.answers_ms = self.answers_ms;
    }
}

/// The answer's port and time, if it came and was a 200.
async fn answered(answer: Answer, what: &str) -> Result<(u16, Instant), String> {
    let (port, reply) = answer.await.map_err(|error| format!("{what}: {error}"))?;
    let (reply, at) = reply.map_err(|error| format!("{what}: {}", error.describe()))?;
    ok(&reply).map_err(|error| format!("{what}: {error}"))?;
    Ok((port, at))
}
