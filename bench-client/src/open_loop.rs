//! The open-loop probe: a `GET /ping` sent on a fixed schedule, start + k × `every`, whether
//! or not the previous one has returned, each latency measured from its *scheduled* send time.
//!
//! The closed-loop pinger of the original waits for each answer before it sends the next, so
//! while the reactor is blocked it sends nothing: it takes one slow sample where a user sending
//! every 50 ms would have suffered a hundred. That is coordinated omission; wrk2 corrects it
//! the same way: keep the schedule, and count the time from when the request should have left.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::Method;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use crate::http::{Connection, Endpoint, HttpError};
use crate::probe::PING_TIMEOUT;

/// What the open-loop probe saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenLoopRecord {
    /// Pings the schedule called for while the probe ran.
    pub scheduled: usize,
    /// Latency of each answered ping from its scheduled send time, in ms, in schedule order.
    pub latencies_ms: Vec<f64>,
    /// Why each failed ping failed.
    pub errors: Vec<String>,
    /// How late each ping actually left, in ms: the probe's own drift, which should stay
    /// near zero however slow the answers are.
    pub send_lag_ms: Vec<f64>,
}

/// A running open-loop probe; [`OpenLoopProbe::stop`] ends the schedule and waits for the
/// pings still in flight.
#[derive(Debug)]
pub struct OpenLoopProbe {
    stop: watch::Sender<bool>,
    task: JoinHandle<OpenLoopRecord>,
}

/// Idle keep-alive connections: a ping takes one, or opens a new one when all are busy.
type Pool = Arc<Mutex<Vec<Connection>>>;

impl OpenLoopProbe {
    pub fn start(endpoint: Endpoint, every: Duration) -> OpenLoopProbe {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run_schedule(endpoint, every, stopped));
        OpenLoopProbe { stop, task }
    }

    pub async fn stop(self) -> OpenLoopRecord {
        self.stop.send_replace(true);
        self.task.await.unwrap_or_else(|error| OpenLoopRecord {
            errors: vec![format!("the open-loop probe failed: {error}")],
            ..OpenLoopRecord::default()
        })
    }
}

async fn run_schedule(
    endpoint: Endpoint,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
) -> OpenLoopRecord {
    let pool: Pool = Arc::default();
    let start = Instant::now();
    let mut ticks = tokio::time::interval_at(start, every);
    // If this task is ever late, send the missed pings at once: the schedule is the point.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let mut in_flight = Vec::new();
    let mut send_lag_ms = Vec::new();
    for k in 0u32.. {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stopped.wait_for(|&stop| stop) => break,
        }
        let scheduled = start + every * k;
        send_lag_ms.push(ms(Instant::now() - scheduled));
        in_flight.push(tokio::spawn(ping(
            endpoint.clone(),
            pool.clone(),
            scheduled,
        )));
    }
    let mut record = OpenLoopRecord {
        scheduled: in_flight.len(),
        send_lag_ms,
        ..OpenLoopRecord::default()
    };
    for ping in in_flight {
        match ping.await {
            Ok(Ok(latency)) => record.latencies_ms.push(latency),
            Ok(Err(reason)) => record.errors.push(reason),
            Err(error) => record.errors.push(format!("a ping task failed: {error}")),
        }
    }
    record
}

/// One scheduled ping: its latency from `scheduled`, or why it failed.
async fn ping(endpoint: Endpoint, pool: Pool, scheduled: Instant) -> Result<f64, String> {
    let idle = pool
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .pop();
    let exchange = async {
        let mut connection = match idle {
            Some(connection) if !connection.is_closed() => connection,
            _ => Connection::open(&endpoint).await?,
        };
        let reply = connection.send(Method::GET, "/ping").await?;
        Ok::<_, HttpError>((reply, connection))
    };
    let outcome = tokio::time::timeout(PING_TIMEOUT, exchange)
        .await
        .unwrap_or(Err(HttpError::Timeout(PING_TIMEOUT)));
    let latency = ms(Instant::now() - scheduled);
    match outcome {
        Ok((reply, connection)) if reply.status == 200 => {
            pool.lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .push(connection);
            Ok(latency)
        }
        Ok((reply, _)) => Err(format!("status {} after {latency:.0} ms", reply.status)),
        Err(error) => Err(format!("{} after {latency:.0} ms", error.describe())),
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
