//! The closed-loop pinger of the original bench: `GET /ping` on one keep-alive connection,
//! record the latency, wait `every`, repeat. While the reactor is blocked, each ping waits
//! for it, so a blocked server yields few samples, each of them slow.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::{Connections, HealthCheck, Ping, ProbeRecord, ProbeTask, ping};
use crate::http::Connection;

/// Starts sending `check` every `every` (after each answer), until stopped.
pub fn start(check: HealthCheck, every: Duration) -> ProbeTask {
    ProbeTask::spawn("closed-loop pinger", check, every, ping_until_stopped)
}

async fn ping_until_stopped(
    check: HealthCheck,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
) -> ProbeRecord {
    let mut record = ProbeRecord::default();
    let mut connection: Option<Connection> = None;
    while !*stopped.borrow() {
        let due = Instant::now();
        let pinged = ping(&check, connection.take(), due, Connections::KeptAlive).await;
        // A failed connection is dropped: the next ping opens a new one.
        let error = match pinged.kept {
            Ok(open) => {
                connection = open;
                None
            }
            Err(reason) => Some(reason),
        };
        record.pings.push(Ping {
            due,
            send_lag_ms: None,
            latency_ms: pinged.latency_ms,
            connect_ms: pinged.connect_ms,
            error,
        });
        // Wait `every`, or less if told to stop.
        let _ = tokio::time::timeout(every, stopped.wait_for(|&stop| stop)).await;
    }
    record
}
