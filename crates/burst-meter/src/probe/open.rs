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
//! Until a ping leaves, both threads run at real-time priority (`SCHED_FIFO`, its lowest
//! level), so that when a ping is due a core is taken from the servers' and the client's
//! ordinary threads at once, not at the scheduler's next turn: on two shared cores that wait
//! was the lateness of the last pings still late. The ping thread is raised by the clock
//! just before each hand-over and lowers itself to normal priority the moment it sends: a
//! real-time sender made the answer slower (measured at rest while building this: the open
//! loop's median 30–90 µs above the closed loop's with it, level without it; how the
//! scheduler's choices differ was not isolated), and past the send the ping is the server's
//! to answer, like any other client's. The threads spin at most about half a millisecond per
//! ping, and the kernel caps what real-time threads may take (`sched_rt_runtime_us`). Without
//! the privilege (no `CAP_SYS_NICE`) they run at normal priority, and the record says so.
//!
//! Each ping records how late it actually left (its send lag), and the probe records the CPU
//! time of both threads, so its own drift and cost are in the results beside what it measured.

use std::os::unix::thread::JoinHandleExt as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::{Connections, HealthCheck, Ping, ProbeRecord, ProbeTask, ping};
use crate::cpu::this_thread_cpu_ms;
use crate::http::Connection;
use crate::units::millis;

/// How long before a send time the clock thread stops sleeping and spins. Linux wakes a
/// sleeping thread up to its timer slack (50 µs by default) late, plus the scheduler's own
/// delay: a quarter of a millisecond covers both on an idle machine, and costs at most that
/// much CPU per ping.
pub const SPIN: Duration = Duration::from_micros(250);

/// How far ahead of its send time a ping is handed to the ping thread: a sleeping thread takes
/// tens of microseconds to wake, more on a busy machine. The ping's task spins away what is
/// left.
pub const HAND_OVER: Duration = Duration::from_micros(300);

/// Idle keep-alive connections: a ping takes one, or opens a new one when all are busy.
type Pool = Arc<Mutex<Vec<Connection>>>;

/// One scheduled ping: its send time, and its task, which ends with the ping's record.
type Sent = (Instant, JoinHandle<Ping>);

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

/// Starts sending `check` on `schedule` until stopped, on connections kept alive; stopping
/// waits for the pings still in flight.
pub fn start(check: HealthCheck, schedule: Schedule) -> ProbeTask {
    start_with(check, schedule, Connections::KeptAlive)
}

/// [`start`], each ping on a connection as `connections` says.
pub fn start_with(check: HealthCheck, schedule: Schedule, connections: Connections) -> ProbeTask {
    let plan = (schedule, connections);
    ProbeTask::spawn("open-loop probe", check, plan, run_schedule)
}

async fn run_schedule(
    check: HealthCheck,
    (schedule, connections): (Schedule, Connections),
    mut stopped: watch::Receiver<bool>,
) -> ProbeRecord {
    let pinger = match PingThread::start() {
        Ok(pinger) => pinger,
        Err(error) => {
            return ProbeRecord::failed(format!("no thread for the open-loop pings: {error}"));
        }
    };
    let (sent, mut pings) = mpsc::unbounded_channel::<Sent>();
    let clock = Clock::start(check, (schedule, connections), &pinger, sent);
    let _ = stopped.wait_for(|&stop| stop).await;
    let clock = clock.stop().await;
    let mut record = ProbeRecord::default();
    while let Some((due, task)) = pings.recv().await {
        let ping = task.await.unwrap_or_else(|error| Ping {
            due,
            send_lag_ms: None,
            latency_ms: millis(due.elapsed()),
            connect_ms: None,
            error: Some(format!("a ping task failed: {error}")),
        });
        record.pings.push(ping);
    }
    let ping_cpu_ms = pinger.stop().await;
    record.cpu_ms = Option::zip(clock.cpu_ms, ping_cpu_ms).map(|(clock, ping)| clock + ping);
    record.realtime = clock.realtime;
    record
}

/// What the clock thread reports when it ends.
#[derive(Debug, Clone, Copy, Default)]
struct ClockEnd {
    /// Its CPU time, in ms.
    cpu_ms: Option<f64>,
    /// Whether it, and the ping thread before every ping, got real-time priority.
    realtime: bool,
}

/// Scheduling priority for the probe's threads: the lowest real-time level, and back.
mod priority {
    use thread_priority::{
        NormalThreadSchedulePolicy, RealtimeThreadSchedulePolicy, ThreadPriority,
        ThreadPriorityOsValue, ThreadSchedulePolicy, set_thread_priority_and_policy,
    };

    /// A thread, as the OS knows it (`pthread_t`).
    pub use thread_priority::ThreadId;

    /// Raises `thread` to `SCHED_FIFO` at its lowest priority; whether the OS granted it.
    pub fn realtime(thread: ThreadId) -> bool {
        let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
        set_thread_priority_and_policy(thread, ThreadPriority::Min, fifo).is_ok()
    }

    /// Returns the calling thread to `SCHED_OTHER` at niceness 0, where every ordinary
    /// thread runs. (For a normal policy the crate also sets the calling thread's niceness to
    /// the value given: the OS value 0.)
    pub fn normal_here() {
        let other = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
        let nice_0 = ThreadPriority::Os(ThreadPriorityOsValue::default());
        let _ = set_thread_priority_and_policy(here(), nice_0, other);
    }

    /// The calling thread.
    pub fn here() -> ThreadId {
        thread_priority::thread_native_id()
    }
}

/// The thread the pings run on: a current-thread tokio runtime of its own, kept until
/// [`PingThread::stop`].
struct PingThread {
    runtime: Handle,
    /// The thread, for the clock to raise before each ping.
    id: priority::ThreadId,
    stop: oneshot::Sender<()>,
    /// Ends with its CPU time in ms.
    thread: thread::JoinHandle<Option<f64>>,
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
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                this_thread_cpu_ms()
            })?;
        Ok(PingThread {
            runtime: handle,
            id: thread.as_pthread_t(),
            stop,
            thread,
        })
    }

    /// Ends the runtime (every ping has been awaited by then); the thread's CPU time in ms.
    async fn stop(self) -> Option<f64> {
        let _ = self.stop.send(());
        joined(self.thread).await
    }
}

/// The clock thread and how to stop it.
struct Clock {
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<ClockEnd>,
}

impl Clock {
    /// Starts the clock thread: from now, at each send time of `schedule`, a ping spawned on
    /// the ping thread (on a connection as `connections` says), raised to real-time priority
    /// first, and handed over through `sent`.
    fn start(
        check: HealthCheck,
        (schedule, connections): (Schedule, Connections),
        pinger: &PingThread,
        sent: mpsc::UnboundedSender<Sent>,
    ) -> Clock {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let (pings, ping_thread) = (pinger.runtime.clone(), pinger.id);
        let thread = thread::Builder::new()
            .name("open-loop-clock".into())
            .spawn(move || {
                let mut realtime = priority::realtime(priority::here());
                let pool = Pool::default();
                let start = Instant::now();
                for k in 0u32.. {
                    let scheduled = schedule.send_time(start, k);
                    let hand_over = scheduled.checked_sub(HAND_OVER).unwrap_or(scheduled);
                    if !wait_until(hand_over, &stopping) {
                        break;
                    }
                    realtime &= priority::realtime(ping_thread);
                    let pool = (connections == Connections::KeptAlive).then(|| pool.clone());
                    let ping = scheduled_ping(check.clone(), pool, connections, scheduled);
                    if sent.send((scheduled, pings.spawn(ping))).is_err() {
                        break;
                    }
                }
                ClockEnd {
                    cpu_ms: this_thread_cpu_ms(),
                    realtime,
                }
            })
            .expect("a thread for the open-loop clock");
        Clock { stop, thread }
    }

    /// Stops the schedule: the clock thread ends at once, without sending again, and with it
    /// the channel of pings.
    async fn stop(self) -> ClockEnd {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        joined(self.thread).await
    }
}

/// The pool's idle connections; a lock poisoned by a ping that panicked still guards a whole
/// list.
fn locked(pool: &Pool) -> std::sync::MutexGuard<'_, Vec<Connection>> {
    pool.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Waits, off the runtime's workers, for a probe thread told to end.
async fn joined<T: Default + Send + 'static>(thread: thread::JoinHandle<T>) -> T {
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

/// One scheduled ping, sent at `scheduled` (the task spins to it if it started early), timed
/// from `scheduled`: on an idle connection of `pool` (or a new one, kept there after it), or
/// without a pool on a new connection as `connections` says.
async fn scheduled_ping(
    check: HealthCheck,
    pool: Option<Pool>,
    connections: Connections,
    scheduled: Instant,
) -> Ping {
    while Instant::now() < scheduled {
        std::hint::spin_loop();
    }
    let lag_ms = millis(scheduled.elapsed());
    priority::normal_here();
    let idle = pool.as_ref().and_then(|pool| locked(pool).pop());
    let pinged = ping(&check, idle, scheduled, connections).await;
    let error = match pinged.kept {
        Ok(Some(connection)) => {
            if let Some(pool) = &pool {
                locked(pool).push(connection);
            }
            None
        }
        Ok(None) => None,
        Err(error) => Some(error),
    };
    Ping {
        due: scheduled,
        send_lag_ms: Some(lag_ms),
        latency_ms: pinged.latency_ms,
        connect_ms: pinged.connect_ms,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadSchedulePolicy, thread_schedule_policy,
    };

    #[test]
    fn a_raised_thread_returns_to_the_ordinary_policy() {
        thread::spawn(|| {
            if priority::realtime(priority::here()) {
                assert!(matches!(
                    thread_schedule_policy(),
                    Ok(ThreadSchedulePolicy::Realtime(_))
                ));
            }
            priority::normal_here();
            assert_eq!(
                thread_schedule_policy().ok(),
                Some(ThreadSchedulePolicy::Normal(
                    NormalThreadSchedulePolicy::Other
                ))
            );
            // Niceness 0, as every ordinary thread of the client has.
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
            let after_name = &stat[stat.rfind(')').unwrap() + 1..];
            let nice: i32 = after_name
                .split_whitespace()
                .nth(16)
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(nice, 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn send_times_start_after_the_offset() {
        let start = Instant::now();
        let schedule = Schedule {
            first_after: Duration::from_millis(25),
            every: Duration::from_millis(50),
        };
        assert_eq!(
            schedule.send_time(start, 0),
            start + Duration::from_millis(25)
        );
        assert_eq!(
            schedule.send_time(start, 3),
            start + Duration::from_millis(175)
        );
    }
}
