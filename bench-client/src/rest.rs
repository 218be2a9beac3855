//! At rest: how fast each stack answers a lone `/ping` when nothing else is going on, and how
//! many thread wake-ups each request costs it.
//!
//! Below a millisecond, what sets a ping's latency is not the handler but how the server gets
//! from "a byte arrived" to "the task that reads it runs": the thread that waits in epoll may
//! be the one that runs the task, or it may have to wake another. So for each pause between
//! pings (0, 1, 10, 50 ms: with a long pause every thread of the server is asleep when the
//! ping comes) this measures the ping's latency with both probes, and counts, from
//! `/proc/PID/task/TID/status`, the voluntary context switches of each server thread over the
//! closed loop's pings: a thread that sleeps and is woken once per request switches once per
//! request.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cpu::machine_steal_ms;
use crate::probe::{ProbeRecord, closed, open};
use crate::session::{self, Event, Outcome, Running, ServerSetup, Step};
use crate::stats::{OpenLoopStats, RequestTimes};
use crate::target::Target;
use crate::work::WorkPath;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestPlan {
    /// The pauses between pings, in ms.
    pub pauses_ms: Vec<u64>,
    /// How long each probe runs at each pause.
    pub probe_ms: u64,
}

impl Default for RestPlan {
    fn default() -> RestPlan {
        RestPlan {
            pauses_ms: vec![0, 1, 10, 50],
            probe_ms: 3_000,
        }
    }
}

/// One pause on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause(pub u64);

impl Step for Pause {
    fn route(&self) -> WorkPath {
        // Only `/ping` is sent; the failure report names the work route list's first.
        WorkPath::WORK[0]
    }

    fn describe(&self) -> String {
        format!("/ping every {} ms", self.0)
    }
}

/// What one pause showed on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestPoint {
    pub target: String,
    pub runtime: Option<String>,
    pub pause_ms: u64,
    /// The closed loop: a ping, its answer, the pause, the next ping.
    pub closed_loop: RequestTimes,
    /// The open loop: a ping every pause (none at pause 0, where it would be a flood).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopStats>,
    /// Each server thread's voluntary context switches per closed-loop ping, by thread name
    /// (threads of one name added up); empty where `/proc` cannot tell.
    pub wakeups_per_ping: BTreeMap<String, f64>,
    /// The machine's steal time during both probes, in ms: time the hypervisor took the cores
    /// away, which no figure here would show otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ms: Option<f64>,
}

/// Runs the plan on each target, one reactor thread each.
pub async fn run(
    targets: &[Target],
    plan: &RestPlan,
    on: &mut impl FnMut(Event<'_, RestPoint>),
) -> Outcome<RestPoint> {
    let schedule: Vec<(&Target, usize)> = targets.iter().map(|target| (target, 1)).collect();
    let pauses: Vec<Pause> = plan.pauses_ms.iter().map(|&ms| Pause(ms)).collect();
    // The stall detector's watchdog wakes up on its own every 50 ms: off, so that every
    // wake-up counted is the requests'.
    let setup = ServerSetup {
        stall_ms: Some(0),
        ..ServerSetup::default()
    };
    let probe_for = Duration::from_millis(plan.probe_ms);
    let measure =
        async |running: &Running, pause: &Pause| measure(running, *pause, probe_for).await;
    session::run_each(&schedule, &setup, &pauses, on, measure).await
}

async fn measure(running: &Running, Pause(pause_ms): Pause, probe_for: Duration) -> RestPoint {
    let pause = Duration::from_millis(pause_ms);
    let pid = running.server.as_ref().and_then(|server| server.pid());
    let steal_before = machine_steal_ms();
    let before = pid.map(thread_switches);
    let closed = closed::start(running.endpoint.clone(), pause);
    tokio::time::sleep(probe_for).await;
    let closed: ProbeRecord = closed.stop().await;
    let after = pid.map(thread_switches);
    let wakeups_per_ping = match (before, after) {
        (Some(before), Some(after)) => per_ping(&before, &after, closed.sent),
        _ => BTreeMap::new(),
    };
    let open_loop = if pause_ms == 0 {
        None
    } else {
        let open = open::start(
            running.endpoint.clone(),
            open::Schedule::starting_now(pause),
        );
        tokio::time::sleep(probe_for).await;
        Some(OpenLoopStats::from_record(open.stop().await))
    };
    RestPoint {
        target: running.label.clone(),
        runtime: running.runtime(),
        pause_ms,
        closed_loop: RequestTimes::from_ms(&closed.latencies_ms),
        open_loop,
        wakeups_per_ping,
        steal_ms: Option::zip(machine_steal_ms(), steal_before).map(|(now, then)| now - then),
    }
}

/// Each thread of process `pid` and its voluntary context switches so far, by thread id.
pub fn thread_switches(pid: u32) -> BTreeMap<u32, (String, u64)> {
    let mut threads = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return threads;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        if let Some(thread) = switches_in(&status) {
            threads.insert(tid, thread);
        }
    }
    threads
}

/// The thread name and voluntary context switches of one `/proc/PID/task/TID/status` text.
pub fn switches_in(status: &str) -> Option<(String, u64)> {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(str::trim)
    };
    let name = field("Name:")?.to_owned();
    let switches = field("voluntary_ctxt_switches:")?.parse().ok()?;
    Some((name, switches))
}

/// Switches per ping of each thread name, between two readings; threads that came or went
/// in between count from zero or not at all.
fn per_ping(
    before: &BTreeMap<u32, (String, u64)>,
    after: &BTreeMap<u32, (String, u64)>,
    pings: usize,
) -> BTreeMap<String, f64> {
    let mut per_name: BTreeMap<String, f64> = BTreeMap::new();
    for (tid, (name, now)) in after {
        let then = before.get(tid).map_or(0, |(_, then)| *then);
        *per_name.entry(name.clone()).or_default() += now.saturating_sub(then) as f64;
    }
    let pings = pings.max(1) as f64;
    per_name.retain(|_, switches| *switches > 0.0);
    per_name
        .values_mut()
        .for_each(|switches| *switches /= pings);
    per_name
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from a demo server's thread (Linux 6.18), the fields around the two read.
    const STATUS: &str = "Name:\tsmol-executor-0
Umask:\t0022
State:\tS (sleeping)
Tgid:\t4242
Pid:\t4243
voluntary_ctxt_switches:\t1502
nonvoluntary_ctxt_switches:\t7
";

    #[test]
    fn a_threads_switches_are_read_from_its_status() {
        assert_eq!(switches_in(STATUS), Some(("smol-executor-0".into(), 1502)));
        assert_eq!(switches_in("Name:\tx\n"), None);
    }

    #[test]
    fn switches_are_counted_per_ping_by_thread_name() {
        let before = BTreeMap::from([
            (1, ("main".to_owned(), 100)),
            (2, ("async-io".to_owned(), 10)),
        ]);
        let after = BTreeMap::from([
            (1, ("main".to_owned(), 300)),
            (2, ("async-io".to_owned(), 10)),
            (3, ("blocking-1".to_owned(), 4)),
        ]);
        let per = per_ping(&before, &after, 200);
        assert_eq!(
            per,
            BTreeMap::from([("main".to_owned(), 1.0), ("blocking-1".to_owned(), 0.02)])
        );
    }

    #[test]
    fn this_process_has_threads_to_count() {
        if cfg!(target_os = "linux") {
            assert!(!thread_switches(std::process::id()).is_empty());
        }
    }
}
