//! One trial of the io_uring experiment: `n` connections (and, for the order of service, one
//! more for a ping) opened and used once each, so that the server has accepted them and waits
//! on each for its next request; then the ping, `lead` before the burst, and the `n` `/bad`
//! requests, written back to back. The client records when each answer came; the server's
//! record of events (`--events`) says when each handler started and ended.

use std::time::{Duration, Instant};

use demo_contract::{EventsBody, What};
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;

use burst_meter::burst::REQUEST_TIMEOUT;
use burst_meter::http::{self, HttpError};
use burst_meter::placed::{self, InFlight, PlacedError};
use burst_meter::session::Running;
use burst_meter::units::millis;
use burst_meter::wire::{Peer, Request};

/// How long the server may take to answer `GET /events` before or after a trial.
const EVENTS_WITHIN: Duration = Duration::from_secs(3);

/// The pause after the connections are used once, for the server to wait on each again.
const SETTLE: Duration = Duration::from_millis(20);

/// What the ping is called in a trial's error.
const PING: &str = "the ping";
/// What a burst request is called in a trial's error.
const BAD_REQUEST: &str = "a /bad request";
/// What a connection's first use is called in a trial's error.
const WARM_UP: &str = "a warm-up";
/// What clearing the server's record is called in a trial's error.
const CLEAR: &str = "GET /events";

/// One trial, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UringTrial {
    /// The setting's label: its server, and the variants it runs as.
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
pub struct PlacedBurst<'a> {
    pub running: &'a Running,
    pub n: usize,
    pub bad: Request,
    pub ping: Request,
    pub lead: Option<Duration>,
}

impl PlacedBurst<'_> {
    /// Runs the trial; its failures are in the record, never raised.
    pub async fn trial(&self, setting: &str, index: usize) -> UringTrial {
        let endpoint = &self.running.endpoint;
        let sent = match tokio::time::timeout(REQUEST_TIMEOUT, self.send()).await {
            Ok(sent) => sent.map_err(|error| error.to_string()),
            Err(_) => Err(HttpError::Timeout(REQUEST_TIMEOUT).describe()),
        };
        let events = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
        let events = events.ok().and_then(|reply| reply.json::<EventsBody>());
        let mut trial = UringTrial {
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
    async fn send(&self) -> Result<Seen, PlacedError> {
        let peer = Peer::resolve(&self.running.endpoint).await;
        let mut pinger = match self.lead {
            Some(_) => Some(placed::warm(&peer, &self.ping, WARM_UP).await?),
            None => None,
        };
        let mut connections = Vec::with_capacity(self.n);
        for _ in 0..self.n {
            connections.push(placed::warm(&peer, &self.ping, WARM_UP).await?);
        }
        tokio::time::sleep(SETTLE).await;
        // The warm-up's events are read and dropped: the record after holds this trial alone.
        let endpoint = &self.running.endpoint;
        let cleared = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
        cleared.map_err(PlacedError::of(CLEAR))?;
        let ping = match (pinger.take(), self.lead) {
            (Some(stream), Some(lead)) => Some(self.send_ping(stream, lead).await?),
            _ => None,
        };
        let start = Instant::now();
        let mut burst = Vec::with_capacity(self.n);
        for stream in connections {
            let written = placed::write(stream, &self.bad).await;
            burst.push(written.map_err(PlacedError::of(BAD_REQUEST))?.answer);
        }
        Seen::collect(start, ping, burst).await
    }

    /// Writes the ping on `stream`, then waits `lead` (spinning: a timer cannot wait 0.1 ms).
    async fn send_ping(&self, stream: TcpStream, lead: Duration) -> Result<InFlight, PlacedError> {
        let written = placed::write(stream, &self.ping).await;
        let written = written.map_err(PlacedError::of(PING))?;
        while written.at.elapsed() < lead {
            std::hint::spin_loop();
        }
        Ok(written.answer)
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
        ping: Option<InFlight>,
        burst: Vec<InFlight>,
    ) -> Result<Seen, PlacedError> {
        let since = |at: Instant| match at.checked_duration_since(start) {
            Some(after) => millis(after),
            None => -millis(start.duration_since(at)),
        };
        let mut seen = Seen {
            answers_ms: Vec::with_capacity(burst.len()),
            burst_ports: Vec::with_capacity(burst.len()),
            ping: None,
        };
        if let Some(answer) = ping {
            let (port, at) = placed::answered(answer, PING).await?;
            seen.ping = Some((port, since(at)));
        }
        for answer in burst {
            let (port, at) = placed::answered(answer, BAD_REQUEST).await?;
            seen.answers_ms.push(since(at));
            seen.burst_ports.push(port);
        }
        seen.answers_ms.sort_by(f64::total_cmp);
        Ok(seen)
    }

    /// The trial's figures from what the client saw and the server's `events`.
    fn record(self, events: &EventsBody, trial: &mut UringTrial) {
        let ports = &self.burst_ports;
        let ended: Vec<u64> = placed::times_of(events, What::Ended, ports).collect();
        let first = ended.iter().min().copied().unwrap_or(0);
        trial.handlers_ended_ms = ended
            .iter()
            .map(|&at| (at - first) as f64 / 1000.0)
            .collect();
        trial.handlers_ended_ms.sort_by(f64::total_cmp);
        if let Some((port, ms)) = self.ping {
            trial.ping_ms = Some(ms);
            trial.ping_started_after = placed::ping_started(events, port).map(|at| {
                placed::times_of(events, What::Started, ports)
                    .filter(|&bad| bad < at)
                    .count()
            });
        }
        if trial.handlers_ended_ms.len() != self.answers_ms.len() {
            trial.error = Some("the server's record lacks some handlers".to_owned());
        }
        trial.answers_ms = self.answers_ms;
    }
}
