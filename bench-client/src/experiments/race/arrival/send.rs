//! One arrival trial's burst and ping, sent: the burst's connections and requests, and the
//! ping at its chosen point among them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use demo_contract::{EventsBody, Route, What};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::measure::burst::{self};
use crate::measure::http::{HttpError, Reply};
use crate::measure::units::millis;
use crate::measure::wire::{self, Peer, Request};

use super::*;

/// One trial's burst and ping, ready to send.
pub(super) struct Burst {
    pub(super) peer: Arc<Peer>,
    pub(super) bad: Request,
    pub(super) ping: Request,
    pub(super) n: usize,
    pub(super) half_sleep: Duration,
    pub(super) port: u16,
}

/// What one trial's client saw: the ping's wait, and each connection's port, by which the
/// server's record names it.
pub(super) struct Arrival {
    pub(super) ping_ms: f64,
    pub(super) ping_port: u16,
    pub(super) burst_ports: Vec<u16>,
}

/// A burst request in flight: its connection's port (0 if it could not connect) and answer.
type InFlight = JoinHandle<(u16, Result<Reply, HttpError>)>;

impl Burst {
    /// The burst, with the ping sent at `point`; every request answered 200, or why not.
    pub(super) async fn run(&self, point: Point) -> Result<Arrival, String> {
        let failed = |error: HttpError| error.describe();
        let pinger = match point {
            Point::OwnConnection => None,
            _ => Some(self.warm_pinger().await.map_err(failed)?),
        };
        let (ping, burst) = match point {
            Point::BeforeBurst => {
                let ping = send(pinger.expect("opened"), &self.ping).await;
                (ping, self.send_during().await)
            }
            Point::AfterAccepts => {
                let connections = burst::connect_all(&self.peer, self.port, self.n).await;
                let ping = send(pinger.expect("opened"), &self.ping).await;
                (ping, self.send_on(connections).await)
            }
            Point::InFirstSleepAcceptedFirst => {
                let connections = burst::connect_all(&self.peer, self.port, self.n).await;
                let burst = self.send_on(connections).await;
                tokio::time::sleep(self.half_sleep).await;
                (send(pinger.expect("opened"), &self.ping).await, burst)
            }
            Point::AfterWrites | Point::InFirstSleep | Point::OwnConnection => {
                let burst = self.send_during().await;
                if point != Point::AfterWrites {
                    tokio::time::sleep(self.half_sleep).await;
                }
                let pinger = match pinger {
                    Some(pinger) => pinger,
                    None => self.peer.connect().await.map_err(failed)?,
                };
                (send(pinger, &self.ping).await, burst)
            }
        };
        let (ping_port, written, answer) = ping.map_err(failed)?;
        let ping = answer.await.expect("the ping does not panic");
        let (reply, done) = ping.map_err(|error| format!("the ping: {}", error.describe()))?;
        ok(&reply).map_err(|error| format!("the ping: {error}"))?;
        let mut burst_ports = Vec::with_capacity(burst.len());
        for request in burst {
            let (port, reply) = request.await.expect("a burst request does not panic");
            let reply = reply.map_err(|error| format!("a /bad request: {}", error.describe()))?;
            ok(&reply).map_err(|error| format!("a /bad request: {error}"))?;
            burst_ports.push(port);
        }
        Ok(Arrival {
            ping_ms: millis(done.saturating_duration_since(written)),
            ping_port,
            burst_ports,
        })
    }

    /// The pinger's connection, accepted and used once, idle as the original's pinger's is
    /// between two pings.
    async fn warm_pinger(&self) -> Result<TcpStream, HttpError> {
        let mut stream = self.peer.connect().await?;
        wire::exchange(&mut stream, &self.ping).await?;
        Ok(stream)
    }

    /// Each request on a connection opened as it is sent; returns once all are written.
    async fn send_during(&self) -> Vec<InFlight> {
        self.send_on((0..self.n).map(|_| None).collect()).await
    }

    /// Each request on its connection (a new one for `None`); returns once all are written.
    async fn send_on(&self, connections: Vec<Option<TcpStream>>) -> Vec<InFlight> {
        let (written, mut all_written) = mpsc::channel::<()>(self.n.max(1));
        let requests = (connections.into_iter())
            .map(|connection| {
                let (peer, bad, written) = (self.peer.clone(), self.bad.clone(), written.clone());
                tokio::spawn(async move {
                    let mut stream = match connection {
                        Some(stream) => stream,
                        None => match peer.connect().await {
                            Ok(stream) => stream,
                            Err(error) => return (0, Err(error)),
                        },
                    };
                    let wrote = stream.write_all(bad.bytes()).await;
                    // This request's sender gone: when all are, every request is written.
                    drop(written);
                    (local_port(&stream), wire::receive(&mut stream, wrote).await)
                })
            })
            .collect();
        drop(written);
        // Nothing is ever sent: `recv` returns `None` once every request has dropped its
        // sender, after its write (or its failed connect).
        while all_written.recv().await.is_some() {}
        requests
    }
}

/// `reply` if it is a 200, else its status as the error.
fn ok(reply: &Reply) -> Result<(), String> {
    match reply.status {
        200 => Ok(()),
        status => Err(format!("status {status}")),
    }
}

/// Writes `request` on `stream` now; returns the connection's port, when the write ended and
/// the answer to come, with when it came.
async fn send(
    mut stream: TcpStream,
    request: &Request,
) -> Result<
    (
        u16,
        Instant,
        JoinHandle<Result<(Reply, Instant), HttpError>>,
    ),
    HttpError,
> {
    let port = local_port(&stream);
    stream
        .write_all(request.bytes())
        .await
        .map_err(HttpError::Write)?;
    let written = Instant::now();
    let answer = tokio::spawn(async move {
        let reply = wire::receive(&mut stream, Ok(())).await?;
        Ok((reply, Instant::now()))
    });
    Ok((port, written, answer))
}

fn local_port(stream: &TcpStream) -> u16 {
    stream.local_addr().map_or(0, |addr| addr.port())
}

impl Arrival {
    /// The trial, with where the server's record `events` says the ping was handled.
    pub(super) fn trial(
        self,
        target: String,
        point: Point,
        index: usize,
        events: Option<&EventsBody>,
    ) -> ArrivalTrial {
        ArrivalTrial {
            target,
            point,
            index,
            ping_ms: Some(self.ping_ms),
            order: events.and_then(|events| self.order(events)),
            error: None,
        }
    }

    /// Where `events` place the ping: counted when its handler started (its last `/ping` on
    /// its connection: the first, on the pinger's connection, was its warm-up). `None` if the
    /// server recorded no such start.
    pub(super) fn order(&self, events: &EventsBody) -> Option<ServerOrder> {
        let burst = |what: What| {
            (events.events.iter())
                .filter(move |e| e.what == what && self.burst_ports.contains(&e.peer))
        };
        let ping_started = (events.events.iter())
            .filter(|event| event.what == What::Started && event.peer == self.ping_port)
            .filter(|event| event.route.as_deref() == Some(Route::Ping.path()))
            .map(|event| event.at_us)
            .next_back()?;
        let first_started = burst(What::Started).map(|event| event.at_us).next();
        let until = |what: What, at_us: u64| burst(what).filter(|e| e.at_us <= at_us).count();
        Some(ServerOrder {
            handled_after: until(What::Ended, ping_started),
            accepted_before: until(What::Accepted, ping_started),
            accepted_before_first: first_started.map_or(0, |at_us| until(What::Accepted, at_us)),
        })
    }
}
