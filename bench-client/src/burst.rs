//! The burst: N concurrent GETs of one work route, each on a connection of its own (as the
//! original client's pool opened one per request in flight), timed from the first send to
//! the last answer.

use std::time::{Duration, Instant};

use demo_contract::Work;
use serde::{Deserialize, Serialize};

use crate::http::{Endpoint, HttpError, Reply, get_once};
use crate::stats::millis;

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
    /// From the first send to the last answer (or error).
    pub wall: Duration,
    /// One outcome per request, in the order they were sent.
    pub replies: Vec<Result<Reply, HttpError>>,
}

impl Burst {
    /// The wall time in ms.
    pub fn wall_ms(&self) -> f64 {
        millis(self.wall)
    }

    /// Requests answered 200.
    pub fn ok(&self) -> usize {
        self.replies
            .iter()
            .filter(|reply| matches!(reply, Ok(r) if r.status == 200))
            .count()
    }

    pub fn err(&self) -> usize {
        self.replies.len() - self.ok()
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

/// Sends `n` concurrent `GET path_and_query` and waits for all of them.
pub async fn fire(endpoint: &Endpoint, path_and_query: &str, n: usize, timeout: Duration) -> Burst {
    let start = Instant::now();
    let requests: Vec<_> = (0..n)
        .map(|_| {
            let endpoint = endpoint.clone();
            let path = path_and_query.to_owned();
            tokio::spawn(async move {
                let reply = get_once(&endpoint, &path, timeout).await;
                (reply, Instant::now())
            })
        })
        .collect();
    let mut replies = Vec::with_capacity(n);
    let mut last = start;
    for request in requests {
        let (reply, done) = request.await.expect("a burst request does not panic");
        last = last.max(done);
        replies.push(reply);
    }
    Burst {
        wall: last - start,
        replies,
    }
}
