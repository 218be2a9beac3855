//! The burst: N concurrent GETs of one work route, each on a connection of its own (as the
//! original client's pool opened one per request in flight), timed from the first send to
//! the last answer.
//!
//! How the connections are made is the one choice ([`Connect`]): while the requests go out,
//! as in the original, so that the server accepts and reads them as they arrive; or all of
//! them first, accepted by the server before the first request byte, so that the N requests
//! reach it together, whatever its accept loop does.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use demo_contract::Work;
use hyper::Method;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::http::{Connection, Endpoint, HttpError, Reply};
use crate::kernel;
use crate::stats::millis;

/// How many connects [`Connect::Before`] has in flight at once.
pub const CONNECTS_IN_FLIGHT: usize = 128;

/// How many connections [`Connect::Before`] opens before it checks the server's accept queue,
/// and how many it lets wait there before the next wave: far below `net.core.somaxconn`, so
/// the queue never overflows however slowly the server accepts, and few enough waves that
/// reading `/proc/net/tcp` (slow with thousands of sockets) between them stays cheap.
pub const CONNECT_WAVE: usize = 1024;

/// How long the server may take to accept the connections of a [`Connect::Before`] burst.
pub const ACCEPT_WITHIN: Duration = Duration::from_secs(10);

/// How a burst's requests get their connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Connect {
    /// Each request opens its connection as it is sent (the original bench's client).
    #[default]
    During,
    /// All N connections are opened and accepted by the server first, then the N requests
    /// are written at once; the wall time still runs from the first request byte.
    Before,
}

/// How long one burst request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One reason requests failed, and how many failed for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCount {
    pub reason: String,
    pub count: usize,
}

/// What one burst produced.
#[derive(Debug)]
pub struct Burst {
    /// The first send: the origin of `sent` and `done`.
    pub start: Instant,
    /// From the first send to the last answer (or error).
    pub wall: Duration,
    /// One outcome per request, in the order they were sent.
    pub replies: Vec<Result<Reply, HttpError>>,
    /// When each request's task started (its connect, then its send), from the first send,
    /// in the same order.
    pub sent: Vec<Duration>,
    /// When each request was answered (or failed), from the first send, in the same order.
    pub done: Vec<Duration>,
}

impl Burst {
    /// The wall time in ms.
    pub fn wall_ms(&self) -> f64 {
        millis(self.wall)
    }

    /// Whether each request was answered 200, in the order they were sent.
    pub fn answered(&self) -> impl Iterator<Item = bool> {
        (self.replies.iter()).map(|reply| matches!(reply, Ok(r) if r.status == 200))
    }

    /// Requests answered 200.
    pub fn ok(&self) -> usize {
        self.answered().filter(|&ok| ok).count()
    }

    pub fn err(&self) -> usize {
        self.replies.len() - self.ok()
    }

    /// When each request answered 200 came back, from the first send, in ms, in the order
    /// they were sent: on a bounded pool, the staircase is in these, not in the wall time.
    pub fn completions_ms(&self) -> Vec<f64> {
        (self.done.iter().zip(self.answered()))
            .filter(|(_, ok)| *ok)
            .map(|(done, _)| millis(*done))
            .collect()
    }

    /// The work bodies the server returned.
    pub fn work(&self) -> Vec<Work> {
        self.replies
            .iter()
            .flatten()
            .filter_map(Reply::json::<Work>)
            .collect()
    }

    /// The distinct reasons of the failed requests, each with its count.
    pub fn errors(&self) -> Vec<ErrorCount> {
        let mut counts: Vec<ErrorCount> = Vec::new();
        for reply in &self.replies {
            let reason = match reply {
                Ok(reply) if reply.status == 200 => continue,
                Ok(reply) => format!("status {}", reply.status),
                Err(error) => error.describe(),
            };
            match counts.iter_mut().find(|known| known.reason == reason) {
                Some(known) => known.count += 1,
                None => counts.push(ErrorCount { reason, count: 1 }),
            }
        }
        counts
    }
}

/// Sends `n` concurrent `GET path_and_query`, each on a connection of its own made as
/// `connect` says, and waits for all of them.
pub async fn fire(
    endpoint: &Endpoint,
    path_and_query: &str,
    n: usize,
    timeout: Duration,
    connect: Connect,
) -> Burst {
    let connections: Vec<Option<Connection>> = match connect {
        Connect::During => (0..n).map(|_| None).collect(),
        Connect::Before => connect_all(endpoint, n).await,
    };
    let start = Instant::now();
    let requests: Vec<_> = connections
        .into_iter()
        .map(|connection| {
            let endpoint = endpoint.clone();
            let path = path_and_query.to_owned();
            tokio::spawn(async move {
                let sent = Instant::now();
                let reply = tokio::time::timeout(timeout, request(&endpoint, connection, &path))
                    .await
                    .unwrap_or(Err(HttpError::Timeout(timeout)));
                (reply, sent, Instant::now())
            })
        })
        .collect();
    let (mut replies, mut sent, mut done) = (Vec::new(), Vec::new(), Vec::new());
    for request in requests {
        let (reply, sent_at, done_at) = request.await.expect("a burst request does not panic");
        sent.push(sent_at.saturating_duration_since(start));
        done.push(done_at - start);
        replies.push(reply);
    }
    Burst {
        start,
        wall: done.iter().copied().max().unwrap_or_default(),
        replies,
        sent,
        done,
    }
}

/// One request, on `connection` if it was opened beforehand, else on a new one.
async fn request(
    endpoint: &Endpoint,
    connection: Option<Connection>,
    path: &str,
) -> Result<Reply, HttpError> {
    let mut connection = match connection {
        Some(connection) => connection,
        None => Connection::open(endpoint).await?,
    };
    connection.send(Method::GET, path).await
}

/// Opens `n` connections, at most [`CONNECTS_IN_FLIGHT`] connects in flight, in waves of
/// [`CONNECT_WAVE`], each wave once the server's accept queue holds fewer than that; then waits
/// until the server has accepted them all (each is established on its side and its listen
/// queue is empty; on Linux, where the kernel shows both). A connection that failed is `None`:
/// its request opens a new one, and fails on its own if the server is gone.
async fn connect_all(endpoint: &Endpoint, n: usize) -> Vec<Option<Connection>> {
    let permits = Arc::new(Semaphore::new(CONNECTS_IN_FLIGHT));
    let mut connections = Vec::with_capacity(n);
    while connections.len() < n {
        let wave = CONNECT_WAVE.min(n - connections.len());
        let connects: Vec<_> = (0..wave)
            .map(|_| {
                let (endpoint, permits) = (endpoint.clone(), permits.clone());
                tokio::spawn(async move {
                    let _permit = permits.acquire().await.expect("never closed");
                    Connection::open(&endpoint).await.ok()
                })
            })
            .collect();
        for connect in connects {
            connections.push(connect.await.ok().flatten());
        }
        kernel::wait_until_queue_below(endpoint.port, CONNECT_WAVE, ACCEPT_WITHIN).await;
    }
    let ours: HashSet<u16> = connections
        .iter()
        .flatten()
        .map(Connection::local_port)
        .collect();
    kernel::wait_until_accepted(endpoint.port, &ours, ACCEPT_WITHIN).await;
    connections
}
