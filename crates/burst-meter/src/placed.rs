//! A burst with a ping placed among it, on connections the client holds: the race's arrival
//! trials and the io_uring experiment send theirs with these pieces, then read where the
//! server placed each request from its own record of events (`--events`, [`EventsBody`]),
//! which names each connection by its client port. Every request is plain bytes on plain TCP
//! ([`crate::wire`]); each answer is read, and timed as it arrives, by a task of its
//! own, so that writing the next request never waits for an answer.

use std::sync::Arc;
use std::time::Instant;

use demo_contract::{EventsBody, Route, What};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::http::{HttpError, Reply};
use crate::wire::{self, Peer, Request};

/// Why a placed burst has no verdict: which request, and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum PlacedError {
    /// It could not be sent, or got no answer.
    #[error("{what}: {}", error.describe())]
    Http {
        what: &'static str,
        error: HttpError,
    },
    /// It was answered, but not with a 200.
    #[error("{what}: status {status}")]
    Status { what: &'static str, status: u16 },
    /// The task reading its answer ended without one.
    #[error("{what}: {reason}")]
    Lost { what: &'static str, reason: String },
}

impl PlacedError {
    /// The error of `what` for `map_err`.
    pub fn of(what: &'static str) -> impl FnOnce(HttpError) -> PlacedError {
        move |error| PlacedError::Http { what, error }
    }
}

/// An answer to come: the connection's client port, and the answer with when it came.
pub type InFlight = JoinHandle<(u16, Result<(Reply, Instant), HttpError>)>;

/// A request written: its connection's client port, when its write ended, and its answer to
/// come.
#[derive(Debug)]
pub struct Written {
    pub port: u16,
    pub at: Instant,
    pub answer: InFlight,
}

/// A new connection, used once for `request`, answered 200: accepted by the server and idle
/// again after, as a pinger's keep-alive connection is between two pings.
pub async fn warm(
    peer: &Peer,
    request: &Request,
    what: &'static str,
) -> Result<TcpStream, PlacedError> {
    let mut stream = peer.connect().await.map_err(PlacedError::of(what))?;
    let reply = wire::exchange(&mut stream, request)
        .await
        .map_err(PlacedError::of(what))?;
    ok(&reply, what)?;
    Ok(stream)
}

/// Writes `request` on `stream` now, and reads its answer in a task of its own.
pub async fn write(mut stream: TcpStream, request: &Request) -> Result<Written, HttpError> {
    let port = local_port(&stream);
    stream
        .write_all(request.bytes())
        .await
        .map_err(HttpError::Write)?;
    let at = Instant::now();
    let answer = tokio::spawn(async move {
        let reply = wire::receive(&mut stream, Ok(())).await;
        (port, reply.map(|reply| (reply, Instant::now())))
    });
    Ok(Written { port, at, answer })
}

/// `request` on each of `connections` (a new one for `None`), all at once; returns once every
/// one is written (or its connect failed: its answer is that error, from port 0).
pub async fn write_each(
    peer: &Arc<Peer>,
    request: &Request,
    connections: Vec<Option<TcpStream>>,
) -> Vec<InFlight> {
    let (written, mut all_written) = mpsc::channel::<()>(connections.len().max(1));
    let requests = (connections.into_iter())
        .map(|connection| {
            let (peer, request, written) = (peer.clone(), request.clone(), written.clone());
            tokio::spawn(async move {
                let mut stream = match connection {
                    Some(stream) => stream,
                    None => match peer.connect().await {
                        Ok(stream) => stream,
                        Err(error) => return (0, Err(error)),
                    },
                };
                let wrote = stream.write_all(request.bytes()).await;
                // This request's sender gone: when all are, every request is written.
                drop(written);
                let port = local_port(&stream);
                let reply = wire::receive(&mut stream, wrote).await;
                (port, reply.map(|reply| (reply, Instant::now())))
            })
        })
        .collect();
    drop(written);
    // Nothing is ever sent: `recv` returns `None` once every request has dropped its sender,
    // after its write (or its failed connect).
    while all_written.recv().await.is_some() {}
    requests
}

/// The answer of `in_flight`, if it came and was a 200: its connection's port and when it
/// came.
pub async fn answered(
    in_flight: InFlight,
    what: &'static str,
) -> Result<(u16, Instant), PlacedError> {
    let (port, reply) = in_flight.await.map_err(|error| PlacedError::Lost {
        what,
        reason: error.to_string(),
    })?;
    let (reply, at) = reply.map_err(PlacedError::of(what))?;
    ok(&reply, what)?;
    Ok((port, at))
}

/// `Ok` for a 200, else its status as the error of `what`.
pub fn ok(reply: &Reply, what: &'static str) -> Result<(), PlacedError> {
    match reply.status {
        200 => Ok(()),
        status => Err(PlacedError::Status { what, status }),
    }
}

/// The client port of `stream`, by which the server's record names its connection; 0 if the
/// system cannot say.
pub fn local_port(stream: &TcpStream) -> u16 {
    stream.local_addr().map_or(0, |addr| addr.port())
}

/// When, in the server's record, the handler of the last `/ping` on the connection from
/// `port` started (the first, on a warmed connection, was its warm-up); `None` if it never did.
pub fn ping_started(events: &EventsBody, port: u16) -> Option<u64> {
    (events.events.iter())
        .filter(|event| event.what == What::Started && event.peer == port)
        .filter(|event| event.route.as_deref() == Some(Route::Ping.path()))
        .map(|event| event.at_us)
        .next_back()
}

/// When, in the server's record, each event `what` of the connections from `ports` happened,
/// in the record's order.
pub fn times_of<'a>(
    events: &'a EventsBody,
    what: What,
    ports: &'a [u16],
) -> impl Iterator<Item = u64> + 'a {
    (events.events.iter())
        .filter(move |event| event.what == what && ports.contains(&event.peer))
        .map(|event| event.at_us)
}
