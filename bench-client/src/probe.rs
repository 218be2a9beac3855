//! The closed-loop pinger of the original bench: `GET /ping` on one keep-alive connection,
//! record the latency, wait `every`, repeat. While the reactor is blocked, each ping waits
//! for it, so a blocked server yields few samples, each of them slow.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use hyper::Method;

use crate::http::{Connection, Endpoint, HttpError};

/// How long one ping may take before it counts as an error.
pub const PING_TIMEOUT: Duration = Duration::from_secs(10);

/// What the pinger saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PingRecord {
    /// Latency of each answered ping, in milliseconds, in the order sent.
    pub samples_ms: Vec<f64>,
    /// Why each failed ping failed (timeouts, closed connections, bad statuses).
    pub errors: Vec<String>,
}

/// A running pinger; [`Pinger::stop`] ends it and returns what it saw.
#[derive(Debug)]
pub struct Pinger {
    stop: watch::Sender<bool>,
    task: JoinHandle<PingRecord>,
}

impl Pinger {
    /// Starts pinging `endpoint` every `every` (after each answer), until stopped.
    pub fn start(endpoint: Endpoint, every: Duration) -> Pinger {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(ping_until_stopped(endpoint, every, stopped));
        Pinger { stop, task }
    }

    /// Stops pinging, waits for the ping in flight, and returns the record.
    pub async fn stop(self) -> PingRecord {
        self.stop.send_replace(true);
        self.task.await.unwrap_or_else(|error| PingRecord {
            samples_ms: Vec::new(),
            errors: vec![format!("the pinger failed: {error}")],
        })
    }
}

async fn ping_until_stopped(
    endpoint: Endpoint,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
) -> PingRecord {
    let mut record = PingRecord::default();
    let mut connection: Option<Connection> = None;
    while !*stopped.borrow() {
        let started = Instant::now();
        let ping = async {
            // A connection the server closed (e.g. after its keep-alive timeout) is opened
            // again; the ping that found it closed still counts as an error.
            if connection.as_ref().is_none_or(Connection::is_closed) {
                connection = Some(Connection::open(&endpoint).await?);
            }
            let open = connection.as_mut().expect("opened above");
            open.send(Method::GET, "/ping").await
        };
        let outcome = tokio::time::timeout(PING_TIMEOUT, ping)
            .await
            .unwrap_or(Err(HttpError::Timeout(PING_TIMEOUT)));
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        match outcome {
            Ok(reply) if reply.status == 200 => record.samples_ms.push(elapsed_ms),
            Ok(reply) => record
                .errors
                .push(format!("status {} after {elapsed_ms:.0} ms", reply.status)),
            Err(error) => {
                connection = None;
                record
                    .errors
                    .push(format!("{} after {elapsed_ms:.0} ms", error.describe()));
            }
        }
        // Wait `every`, or less if told to stop.
        let _ = tokio::time::timeout(every, stopped.wait_for(|&stop| stop)).await;
    }
    record
}
