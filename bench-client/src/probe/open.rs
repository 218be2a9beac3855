//! The open-loop probe: a `GET /ping` sent on a fixed schedule, start + k × `every`, whether
//! or not the previous one has returned, each latency measured from its *scheduled* send time.
//!
//! The closed-loop pinger of the original waits for each answer before it sends the next, so
//! while the reactor is blocked it sends nothing: it takes one slow sample where a user sending
//! every 50 ms would have suffered a hundred. That is coordinated omission; wrk2 corrects it
//! the same way: keep the schedule, and count the time from when the request should have left.
//!
//! The schedule is kept by a clock thread of its own, not by tokio's timer, which counts whole
//! milliseconds: below a millisecond its lateness would be the figure. The thread sleeps until
//! just before each send time, spins the rest ([`SPIN`]), and hands the ping to the runtime
//! [`HAND_OVER`] ahead of its time, since waking a runtime worker takes a while too; the ping's
//! task spins on the worker to its send time. Each ping records how late it actually left (its
//! send lag), so the probe's own drift is in the results beside what it measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{ProbeRecord, ProbeTask, ping};
use crate::http::{Connection, Endpoint};
use crate::stats::millis;

/// How long before a send time the clock thread stops sleeping and spins. Linux wakes a
/// sleeping thread up to its timer slack (50 µs by default) late, plus the scheduler's own
/// delay: a quarter of a millisecond covers both on an idle machine, and costs at most that
/// much CPU per ping.
pub const SPIN: Duration = Duration::from_micros(250);

/// How far ahead of its send time a ping is handed to the runtime: a parked worker takes tens
/// of microseconds to wake, more on a busy machine. The ping's task spins away what is left.
pub const HAND_OVER: Duration = Duration::from_micros(300);

/// Idle keep-alive connections: a ping takes one, or opens a new one when all are busy.
type Pool = Arc<Mutex<Vec<Connection>>>;

/// One scheduled ping's outcome: how late it started, then its latency or why it failed.
type Sent = JoinHandle<(f64, Result<f64, String>)>;

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
    let (sent, mut pings) = mpsc::unbounded_channel::<Sent>();
    let clock = Clock::start(endpoint, every, sent);
    let _ = stopped.wait_for(|&stop| stop).await;
    clock.stop();
    let mut record = ProbeRecord::default();
    while let Some(ping) = pings.recv().await {
        record.sent += 1;
        match ping.await {
            Ok((lag_ms, outcome)) => {
                record.send_lag_ms.push(lag_ms);
                match outcome {
                    Ok(latency_ms) => record.latencies_ms.push(latency_ms),
                    Err(reason) => record.errors.push(reason),
                }
            }
            Err(error) => record.errors.push(format!("a ping task failed: {error}")),
        }
    }
    record
}

/// The clock thread and how to stop it.
struct Clock {
    stop: Arc<AtomicBool>,
    thread: Thread,
}

impl Clock {
    /// Starts the clock thread: from now, at every `every`, a ping spawned on the current
    /// runtime and handed over through `sent`.
    fn start(endpoint: Endpoint, every: Duration, sent: mpsc::UnboundedSender<Sent>) -> Clock {
        let stop = Arc::new(AtomicBool::new(false));
        let runtime = Handle::current();
        let stopping = stop.clone();
        let handle = thread::Builder::new()
            .name("open-loop-clock".into())
            .spawn(move || {
                let pool = Pool::default();
                let start = Instant::now();
                for k in 0u32.. {
                    let scheduled = start + every * k;
                    let hand_over = scheduled.checked_sub(HAND_OVER).unwrap_or(scheduled);
                    if !wait_until(hand_over, &stopping) {
                        break;
                    }
                    let ping = scheduled_ping(endpoint.clone(), pool.clone(), scheduled);
                    if sent.send(runtime.spawn(ping)).is_err() {
                        break;
                    }
                }
            })
            .expect("a thread for the open-loop clock");
        Clock {
            stop,
            thread: handle.thread().clone(),
        }
    }

    /// Stops the schedule; the clock thread ends at once, without sending again, and with it
    /// the channel of pings.
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Sleeps until [`SPIN`] before `deadline`, then spins to it. Returns false, at once, if
/// `stop` is set meanwhile (the thread is unparked to see it).
fn wait_until(deadline: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        let left = deadline - now;
        if left > SPIN {
            thread::park_timeout(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// One scheduled ping on an idle pooled connection (or a new one), sent at `scheduled` (the
/// task spins to it if it started early): how late it left, and its latency from `scheduled`
/// or why it failed.
async fn scheduled_ping(
    endpoint: Endpoint,
    pool: Pool,
    scheduled: Instant,
) -> (f64, Result<f64, String>) {
    while Instant::now() < scheduled {
        std::hint::spin_loop();
    }
    let lag_ms = millis(scheduled.elapsed());
    let idle = pool
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .pop();
    let (outcome, latency_ms) = ping(&endpoint, idle, scheduled).await;
    let outcome = outcome.map(|connection| {
        pool.lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .push(connection);
        latency_ms
    });
    (lag_ms, outcome)
}
