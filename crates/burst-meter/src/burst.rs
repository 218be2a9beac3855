//! The burst: N concurrent GETs of one work route, each on a connection of its own (as the
//! original client's pool opened one per request in flight), timed from the first send to
//! the last answer.
//!
//! How the connections are made is the one choice ([`Connect`]): while the requests go out,
//! as in the original, so that the server accepts and reads them as they arrive; or all of
//! them first, accepted by the server before the first request byte, so that the N requests
//! reach it together, whatever its accept loop does.
//!
//! A burst is [`prepare`]d, then fired ([`Prepared::fire`]). The preparation, the connections
//! of `Before` among it, ends before the first request byte and is no part of the burst: not
//! of its wall time, nor of the CPU figures the comparison and the sweep take around the
//! firing. The requests are plain bytes on plain TCP ([`crate::wire`]): on hyper's client
//! connections the client spent more CPU on a burst than the server it measured.

use std::sync::Arc;
use std::time::{Duration, Instant};

use demo_contract::{IoWork, Work};
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use crate::http::{Endpoint, HttpError, Reply};
use crate::kernel;
use crate::stats;
use crate::units::millis;
use crate::wire::{self, Peer, Request};

/// How many connects [`Connect::Before`] has in flight at once.
pub const CONNECTS_IN_FLIGHT: usize = 128;

/// The most connections [`Connect::Before`] opens in one wave, before it looks at the
/// server's listen queue again: each wave is also no more than the queue has room for, so
/// that it never overflows however slowly the server accepts (a dropped SYN is sent again a
/// second later), and few waves, each with its look at the queue.
pub const CONNECT_WAVE: usize = 1024;

/// The least time one connection of a [`Connect::Before`] burst takes to open and be
/// accepted, for the floors of the plans: below the quickest measured here, 1,024 connects
/// in 14.6 ms (14 µs each, 128 in flight, the server accepting them on the other core).
pub const CONNECT_FLOOR: Duration = Duration::from_micros(10);

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

impl Connect {
    /// The least time opening the connections of a burst of `n` takes before it fires:
    /// [`CONNECT_FLOOR`] each for [`Connect::Before`]; none for [`Connect::During`], whose
    /// connects are in the burst.
    pub fn floor(self, n: usize) -> Duration {
        match self {
            Connect::During => Duration::ZERO,
            Connect::Before => CONNECT_FLOOR * n as u32,
        }
    }
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
    /// How long each request's own connect took, in the same order; `None` for a connection
    /// opened before the burst ([`Connect::Before`]) or a connect that failed. A connect of a
    /// second or more had its SYN resent: the server's listen queue had no room for it.
    pub connects: Vec<Option<Duration>>,
}

impl Burst {
    /// The wall time in ms.
    pub fn wall_ms(&self) -> f64 {
        millis(self.wall)
    }

    /// Whether each request was answered with a success (2xx), in the order they were sent.
    pub fn answered(&self) -> impl Iterator<Item = bool> {
        (self.replies.iter()).map(|reply| matches!(reply, Ok(r) if r.is_success()))
    }

    /// Requests answered with a success.
    pub fn ok(&self) -> usize {
        self.answered().filter(|&ok| ok).count()
    }

    pub fn err(&self) -> usize {
        self.replies.len() - self.ok()
    }

    /// When each request answered with a success came back, from the first send, in ms, in the order
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

    /// The hidden blockers' bodies the server returned: the work body, with the call's cost.
    pub fn io_work(&self) -> Vec<IoWork> {
        self.replies
            .iter()
            .flatten()
            .filter_map(Reply::json::<IoWork>)
            .collect()
    }

    /// The distinct reasons of the failed requests, each with its count.
    pub fn errors(&self) -> Vec<ErrorCount> {
        ErrorCount::count_all(self.replies.iter().filter_map(|reply| match reply {
            Ok(reply) if reply.is_success() => None,
            Ok(reply) => Some(format!("status {}", reply.status)),
            Err(error) => Some(error.describe()),
        }))
    }
}

impl ErrorCount {
    /// Each distinct reason of `reasons` with how often it came, in the order first seen.
    pub fn count_all(reasons: impl IntoIterator<Item = String>) -> Vec<ErrorCount> {
        (stats::counted(reasons).into_iter())
            .map(|(reason, count)| ErrorCount { reason, count })
            .collect()
    }
}

/// A burst ready to fire: its request encoded, its peer looked up and, for
/// [`Connect::Before`], its connections open and accepted. What [`prepare`] did is not the
/// burst's: neither its wall time nor, in the comparison and the sweep, its CPU figures.
#[derive(Debug)]
pub struct Prepared {
    peer: Arc<Peer>,
    request: Request,
    timeout: Duration,
    /// One per request: open already, or `None` for the request to open its own.
    connections: Vec<Option<TcpStream>>,
}

/// Gets a burst of `n` concurrent `GET path_and_query` ready: [`prepare_request`].
pub async fn prepare(
    endpoint: &Endpoint,
    path_and_query: &str,
    n: usize,
    timeout: Duration,
    connect: Connect,
) -> Prepared {
    let request = Request::get(endpoint, path_and_query);
    prepare_request(endpoint, request, n, timeout, connect).await
}

/// Gets a burst of `n` concurrent `request`s to `endpoint` ready, each with `timeout` to
/// answer, on connections made as `connect` says: for [`Connect::Before`], opens them all
/// and waits until the server has accepted them.
pub async fn prepare_request(
    endpoint: &Endpoint,
    request: Request,
    n: usize,
    timeout: Duration,
    connect: Connect,
) -> Prepared {
    let peer = Arc::new(Peer::resolve(endpoint).await);
    let connections = match connect {
        Connect::During => (0..n).map(|_| None).collect(),
        Connect::Before => connect_all(&peer, endpoint.port, n).await,
    };
    Prepared {
        peer,
        request,
        timeout,
        connections,
    }
}

/// [`prepare`], then [`Prepared::fire`]: a whole burst of `GET path_and_query`.
pub async fn fire(
    endpoint: &Endpoint,
    path_and_query: &str,
    n: usize,
    timeout: Duration,
    connect: Connect,
) -> Burst {
    let request = Request::get(endpoint, path_and_query);
    fire_request(endpoint, request, n, timeout, connect).await
}

/// [`prepare_request`], then [`Prepared::fire`]: a whole burst of `request`.
pub async fn fire_request(
    endpoint: &Endpoint,
    request: Request,
    n: usize,
    timeout: Duration,
    connect: Connect,
) -> Burst {
    (prepare_request(endpoint, request, n, timeout, connect).await)
        .fire()
        .await
}

impl Prepared {
    /// Sends the requests, one task each (its connect, if it has no connection yet, then its
    /// request and answer, all within the timeout), and waits for all of them.
    pub async fn fire(self) -> Burst {
        // Spawned from a worker of the runtime, the requests go to that worker's own queue and
        // the others steal from it; spawned from the caller, the binary's `block_on` thread,
        // each would go through the runtime's shared queue, at some more CPU per request.
        tokio::spawn(self.send_all())
            .await
            .expect("a burst does not panic")
    }

    /// [`Prepared::fire`], on the task it runs on.
    async fn send_all(self) -> Burst {
        let Prepared {
            peer,
            request,
            timeout,
            connections,
        } = self;
        let start = Instant::now();
        let requests: Vec<_> = connections
            .into_iter()
            .map(|connection| {
                let (peer, request) = (peer.clone(), request.clone());
                tokio::spawn(async move {
                    let sent = Instant::now();
                    let mut connect = None;
                    let exchange = one(&peer, connection, &request, &mut connect);
                    let reply = (tokio::time::timeout(timeout, exchange).await)
                        .unwrap_or(Err(HttpError::Timeout(timeout)));
                    (reply, sent, Instant::now(), connect)
                })
            })
            .collect();
        // Awaited last first: the requests are answered about in the order they were sent,
        // so by the time the last is, the others are done, and this task is woken a few
        // times, not once per request.
        let mut outcomes = Vec::with_capacity(requests.len());
        for request in requests.into_iter().rev() {
            outcomes.push(request.await.expect("a burst request does not panic"));
        }
        outcomes.reverse();
        let (mut replies, mut sent, mut done) = (Vec::new(), Vec::new(), Vec::new());
        let mut connects = Vec::new();
        for (reply, sent_at, done_at, connect) in outcomes {
            sent.push(sent_at.saturating_duration_since(start));
            done.push(done_at - start);
            replies.push(reply);
            connects.push(connect);
        }
        Burst {
            start,
            wall: done.iter().copied().max().unwrap_or_default(),
            replies,
            sent,
            done,
            connects,
        }
    }
}

/// One request, on `connection` if it was opened beforehand, else on a new one, whose
/// connect's time goes into `connect`; the connection is closed once the answer is read.
async fn one(
    peer: &Peer,
    connection: Option<TcpStream>,
    request: &Request,
    connect: &mut Option<Duration>,
) -> Result<Reply, HttpError> {
    let mut stream = match connection {
        Some(stream) => stream,
        None => {
            let connecting = Instant::now();
            let stream = peer.connect().await?;
            *connect = Some(connecting.elapsed());
            stream
        }
    };
    wire::exchange(&mut stream, request).await
}

/// Opens `n` connections to `peer`, listening on `port`, at most [`CONNECTS_IN_FLIGHT`]
/// connects in flight, in waves of at most [`CONNECT_WAVE`], each no more than the server's
/// listen queues have room for ([`kernel::wait_for_room`]); then waits until the server has
/// accepted them all (each is established on its side and its listen queue is empty; on
/// Linux, where the kernel shows both). A connection that failed is `None`: its request opens
/// a new one, and fails on its own if the server is gone.
pub async fn connect_all(peer: &Arc<Peer>, port: u16, n: usize) -> Vec<Option<TcpStream>> {
    let permits = Arc::new(Semaphore::new(CONNECTS_IN_FLIGHT));
    let mut connections = Vec::with_capacity(n);
    // A server that left its queue full for ACCEPT_WITHIN is not waited for again: its
    // waves go as they would without a look, and its connects fail or wait on their own.
    let mut patient = true;
    while connections.len() < n {
        let most = CONNECT_WAVE.min(n - connections.len());
        let room = match patient {
            true => kernel::wait_for_room(port, most, ACCEPT_WITHIN).await,
            false => None,
        };
        patient &= room.is_some();
        let wave = room.unwrap_or(most);
        let connects: Vec<_> = (0..wave)
            .map(|_| {
                let (peer, permits) = (peer.clone(), permits.clone());
                tokio::spawn(async move {
                    let _permit = permits.acquire().await.expect("never closed");
                    peer.connect().await.ok()
                })
            })
            .collect();
        for connect in connects {
            connections.push(connect.await.ok().flatten());
        }
    }
    kernel::wait_until_accepted(port, ACCEPT_WITHIN).await;
    connections
}
