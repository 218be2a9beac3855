//! One arrival trial's burst and ping, sent: the burst's connections and requests, and the
//! ping at its chosen point among them ([`burst_meter::placed`]).

use std::sync::Arc;
use std::time::Duration;

use demo_contract::{EventsBody, What};
use tokio::net::TcpStream;

use burst_meter::burst;
use burst_meter::placed::{self, InFlight, PlacedError, Written};
use burst_meter::units::millis;
use burst_meter::wire::{Peer, Request};

use super::*;

/// What the ping is called in a trial's error.
const PING: &str = "the ping";
/// What a burst request is called in a trial's error.
const BAD_REQUEST: &str = "a /bad request";

/// One trial's burst, with its ping to place among it.
pub(super) struct PlacedBurst {
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

impl PlacedBurst {
    /// The burst, with the ping sent at `point`; every request answered 200, or why not.
    pub(super) async fn run(&self, point: PingAt) -> Result<Arrival, PlacedError> {
        let pinger = match point {
            PingAt::OwnConnection => None,
            _ => Some(placed::warm(&self.peer, &self.ping, PING).await?),
        };
        let (ping, burst) = match point {
            PingAt::BeforeBurst => {
                let ping = self.send_ping(pinger.expect("opened")).await;
                (ping, self.send_during().await)
            }
            PingAt::AfterAccepts => {
                let connections = burst::connect_all(&self.peer, self.port, self.n).await;
                let ping = self.send_ping(pinger.expect("opened")).await;
                (ping, self.send_on(connections).await)
            }
            PingAt::InFirstSleepAcceptedFirst => {
                let connections = burst::connect_all(&self.peer, self.port, self.n).await;
                let burst = self.send_on(connections).await;
                tokio::time::sleep(self.half_sleep).await;
                (self.send_ping(pinger.expect("opened")).await, burst)
            }
            PingAt::AfterWrites | PingAt::InFirstSleep | PingAt::OwnConnection => {
                let burst = self.send_during().await;
                if point != PingAt::AfterWrites {
                    tokio::time::sleep(self.half_sleep).await;
                }
                let pinger = match pinger {
                    Some(pinger) => pinger,
                    None => (self.peer.connect().await).map_err(PlacedError::of(PING))?,
                };
                (self.send_ping(pinger).await, burst)
            }
        };
        let Written { at, answer, .. } = ping?;
        let (ping_port, done) = placed::answered(answer, PING).await?;
        let mut burst_ports = Vec::with_capacity(burst.len());
        for request in burst {
            burst_ports.push(placed::answered(request, BAD_REQUEST).await?.0);
        }
        Ok(Arrival {
            ping_ms: millis(done.saturating_duration_since(at)),
            ping_port,
            burst_ports,
        })
    }

    /// The ping, written on `stream` now.
    async fn send_ping(&self, stream: TcpStream) -> Result<Written, PlacedError> {
        placed::write(stream, &self.ping)
            .await
            .map_err(PlacedError::of(PING))
    }

    /// Each burst request on a connection opened as it is sent; returns once all are written.
    async fn send_during(&self) -> Vec<InFlight> {
        self.send_on((0..self.n).map(|_| None).collect()).await
    }

    /// Each burst request on its connection (a new one for `None`); returns once all are
    /// written.
    async fn send_on(&self, connections: Vec<Option<TcpStream>>) -> Vec<InFlight> {
        placed::write_each(&self.peer, &self.bad, connections).await
    }
}

impl Arrival {
    /// The trial, with where the server's record `events` says the ping was handled.
    pub(super) fn trial(
        self,
        target: String,
        point: PingAt,
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
        let ping_started = placed::ping_started(events, self.ping_port)?;
        let burst = |what: What| placed::times_of(events, what, &self.burst_ports);
        let first_started = burst(What::Started).next();
        let until = |what: What, at_us: u64| burst(what).filter(|&at| at <= at_us).count();
        Some(ServerOrder {
            handled_after: until(What::Ended, ping_started),
            accepted_before: until(What::Accepted, ping_started),
            accepted_before_first: first_started.map_or(0, |at_us| until(What::Accepted, at_us)),
        })
    }
}
