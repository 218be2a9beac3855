//! The open-loop probe: a `GET /ping` sent on a fixed schedule, start + k × `every`, whether
//! or not the previous one has returned, each latency measured from its *scheduled* send time.
//!
//! The closed-loop pinger of the original waits for each answer before it sends the next, so
//! while the reactor is blocked it sends nothing: it takes one slow sample where a user sending
//! every 50 ms would have suffered a hundred. That is coordinated omission; wrk2 corrects it
//! the same way: keep the schedule, and count the time from when the request should have left.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use super::{ProbeRecord, ProbeTask, ping};
use crate::http::{Connection, Endpoint};
use crate::stats::millis;

/// Idle keep-alive connections: a ping takes one, or opens a new one when all are busy.
type Pool = Arc<Mutex<Vec<Connection>>>;

/// Starts sending a ping to `endpoint` every `every`, on schedule, until stopped; stopping
/// waits for the pings still in flight.
pub fn start(endpoint: Endpoint, every: Duration) -> ProbeTask {
    ProbeTask::spawn("open-loop probe", move |stopped| {
        run_schedule(endpoint, every, stopped)
    })
}

async fn run_schedule(
    endpoint: Endpoint,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
) -> ProbeRecord {
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
        send_lag_ms.push(millis(Instant::now() - scheduled));
        in_flight.push(tokio::spawn(scheduled_ping(
            endpoint.clone(),
            pool.clone(),
            scheduled,
        )));
    }
    let mut record = ProbeRecord {
        sent: in_flight.len(),
        send_lag_ms,
        ..ProbeRecord::default()
    };
    for ping in in_flight {
        match ping.await {
            Ok(Ok(latency_ms)) => record.latencies_ms.push(latency_ms),
            Ok(Err(reason)) => record.errors.push(reason),
            Err(error) => record.errors.push(format!("a ping task failed: {error}")),
        }
    }
    record
}

/// One scheduled ping on an idle pooled connection (or a new one): its latency from
/// `scheduled`, or why it failed.
async fn scheduled_ping(endpoint: Endpoint, pool: Pool, scheduled: Instant) -> Result<f64, String> {
    let idle = pool
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .pop();
    let (outcome, latency_ms) = ping(&endpoint, idle, scheduled.into_std()).await;
    let connection = outcome?;
    pool.lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .push(connection);
    Ok(latency_ms)
}
