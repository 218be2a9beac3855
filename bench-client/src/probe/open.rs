//! The open-loop probe: a `GET /ping` sent on a fixed schedule, start + k × `every`, whether
//! or not the previous one has returned, each latency measured from its *scheduled* send time.
//!
//! The closed-loop pinger of the original waits for each answer before it sends the next, so
//! while the reactor is blocked it sends nothing: it takes one slow sample where a user sending
//! every 50 ms would have suffered a hundred. That is coordinated omission; wrk2 corrects it
//! the same way: keep the schedule, and count the time from when the request should have left.
//!
//! Below a millisecond the probe's own punctuality is the figure, so it runs on two threads
//! of its own:
//! - a clock thread, not tokio's timer (which counts whole milliseconds): it sleeps until just
//!   before each send time, spins the rest ([`SPIN`]), and hands the ping over [`HAND_OVER`]
//!   ahead of its time, since waking the ping thread takes a while too;
//! - a ping thread, a tokio runtime that runs nothing but these pings: no burst request or
//!   closed-loop ping can be holding it when a ping is due. The ping's task spins on it to
//!   its send time.
//!
//! Both threads ask for real-time priority (`SCHED_FIFO`, its lowest level), so that when a
//! ping is due a core is taken from the servers' and the client's ordinary threads at once,
//! not at the scheduler's next turn: on two shared cores that wait was the lateness of the
//! last pings still late. They spin at most about half a millisecond per ping, and the kernel
//! caps what real-time threads may take (`sched_rt_runtime_us`). Without the privilege (no
//! `CAP_SYS_NICE`) they run at normal priority, and the record says so.
//!
//! Each ping records how late it actually left (its send lag), and the probe records the CPU
//! time of both threads, so its own drift and cost are in the results beside what it measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::{ProbeRecord, ProbeTask, ping};
use crate::cpu::this_thread_cpu_ms;
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

/// When the pings go: the first `first_after` from the start, then one every `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub first_after: Duration,
    pub every: Duration,
}

impl Schedule {
    /// A ping at once, then one every `every`.
    pub fn starting_now(every: Duration) -> Schedule {
        Schedule {
            first_after: Duration::ZERO,
            every,
        }
    }

    /// The `k`-th send time (from 0) of a schedule that started at `start`.
    fn send_time(&self, start: Instant, k: u32) -> Instant {
        start + self.first_after + self.every * k
    }
}

/// Starts sending a ping to `endpoint` on `schedule` until stopped; stopping waits for the
/// pings still in flight.
pub fn start(endpoint: Endpoint, schedule: Schedule) -> ProbeTask {
    ProbeTask::spawn("open-loop probe", move |stopped| {
        run_schedule(endpoint, schedule, stopped)
    })
}

async fn run_schedule(
    endpoint: Endpoint,
    schedule: Schedule,
    mut stopped: watch::Receiver<bool>,
) -> ProbeRecord {
    let pinger = match PingThread::start() {
        Ok(pinger) => pinger,
        Err(error) => {
            return ProbeRecord {
                errors: vec![format!("no thread for the open-loop pings: {error}")],
                ..ProbeRecord::default()
            };
        }
    };
    let (sent, mut pings) = mpsc::unbounded_channel::<Sent>();
    let clock = Clock::start(endpoint, schedule, pinger.runtime.clone(), sent);
    let _ = stopped.wait_for(|&stop| stop).await;
    let clock = clock.stop().await;
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
    let ping = pinger.stop().await;
    record.cpu_ms = Option::zip(clock.cpu_ms, ping.cpu_ms).map(|(clock, ping)| clock + ping);
    record.realtime = clock.realtime && ping.realtime;
    record
}

/// What a probe thread reports when it ends.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadEnd {
    /// Its CPU time, in ms.
    cpu_ms: Option<f64>,
    /// Whether it ran at real-time priority.
    realtime: bool,
}

impl ThreadEnd {
    /// Called last on the thread, with what [`ask_for_realtime`] said at its start.
    fn here(realtime: bool) -> ThreadEnd {
        ThreadEnd {
            cpu_ms: this_thread_cpu_ms(),
            realtime,
        }
    }
}

/// Asks for the lowest real-time priority (`SCHED_FIFO`) for the calling thread; whether the
/// OS granted it.
fn ask_for_realtime() -> bool {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, fifo).is_ok()
}

/// The thread the pings run on: a current-thread tokio runtime of its own, kept until
/// [`PingThread::stop`].
struct PingThread {
    runtime: Handle,
    stop: oneshot::Sender<()>,
    thread: thread::JoinHandle<ThreadEnd>,
}

impl PingThread {
    fn start() -> std::io::Result<PingThread> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = thread::Builder::new()
            .name("open-loop-pings".into())
            .spawn(move || {
                let realtime = ask_for_realtime();
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                ThreadEnd::here(realtime)
            })?;
        Ok(PingThread {
            runtime: handle,
            stop,
            thread,
        })
    }

    /// Ends the runtime (every ping has been awaited by then).
    async fn stop(self) -> ThreadEnd {
        let _ = self.stop.send(());
        joined(self.thread).await
    }
}

/// The clock thread and how to stop it.
struct Clock {
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<ThreadEnd>,
}

impl Clock {
    /// Starts the clock thread: from now, at each send time of `schedule`, a ping spawned on
    /// `pings` and handed over through `sent`.
    fn start(
        endpoint: Endpoint,
        schedule: Schedule,
        pings: Handle,
        sent: mpsc::UnboundedSender<Sent>,
    ) -> Clock {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = thread::Builder::new()
            .name("open-loop-clock".into())
            .spawn(move || {
                let realtime = ask_for_realtime();
                let pool = Pool::default();
                let start = Instant::now();
                for k in 0u32.. {
                    let scheduled = schedule.send_time(start, k);
                    let hand_over = scheduled.checked_sub(HAND_OVER).unwrap_or(scheduled);
                    if !wait_until(hand_over, &stopping) {
                        break;
                    }
                    let ping = scheduled_ping(endpoint.clone(), pool.clone(), scheduled);
                    if sent.send(pings.spawn(ping)).is_err() {
                        break;
                    }
                }
                ThreadEnd::here(realtime)
            })
            .expect("a thread for the open-loop clock");
        Clock { stop, thread }
    }

    /// Stops the schedule: the clock thread ends at once, without sending again, and with it
    /// the channel of pings.
    async fn stop(self) -> ThreadEnd {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        joined(self.thread).await
    }
}

/// Waits, off the runtime's workers, for a probe thread told to end.
async fn joined(thread: thread::JoinHandle<ThreadEnd>) -> ThreadEnd {
    tokio::task::spawn_blocking(move || thread.join().unwrap_or_default())
        .await
        .unwrap_or_default()
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
