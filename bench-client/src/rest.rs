//! At rest: how fast each stack answers a lone `/ping` when nothing else is going on, and how
//! many thread wake-ups each request costs it.
//!
//! Below a millisecond, what sets a ping's latency is not the handler but how the server gets
//! from "a byte arrived" to "the task that reads it runs": the thread that waits in epoll may
//! be the one that runs the task, or it may have to wake another. So for each pause between
//! pings (0, 1, 5, 10, 50 ms: with a long pause every thread of the server is asleep when the
//! ping comes) this measures the ping's latency with both probes, and counts, from
//! `/proc/PID/task/TID/status`, the voluntary context switches of each server thread over the
//! closed loop's pings: a thread that sleeps and is woken once per request switches once per
//! request.
//!
//! Below a millisecond, a shared machine's own state (what else its cores and its hypervisor
//! are doing) moves a figure as much as a stack does, and it drifts over minutes. So the plan
//! runs in rounds: each round measures every target at every pause for a share of the time,
//! and each target's figures are pooled over the rounds, so that every stack meets the same
//! drift instead of one stack meeting a bad minute.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::probe::{ProbeRecord, closed, open};
use crate::session::{
    self, ConfounderMeter, Confounders, Event, Outcome, Running, ServerSetup, Step,
};
use crate::stats::{OpenLoopStats, RequestTimes};
use crate::target::Target;
use crate::work::WorkPath;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestPlan {
    /// The pauses between pings, in ms.
    pub pauses_ms: Vec<u64>,
    /// How long each probe runs at each pause, in each round.
    pub probe_ms: u64,
    /// How many times the whole plan runs, every target in turn; the figures pool them.
    #[serde(default = "one_round")]
    pub rounds: usize,
}

/// Results from before rounds were recorded ran once.
fn one_round() -> usize {
    1
}

impl Default for RestPlan {
    fn default() -> RestPlan {
        RestPlan {
            pauses_ms: vec![0, 1, 5, 10, 50],
            probe_ms: 1_000,
            rounds: 3,
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
    /// What else could have set these figures, over both probes: the kernel's TCP counters,
    /// the client's and the server's CPU, the machine's steal time.
    #[serde(flatten)]
    pub confounders: Confounders,
}

/// What one pause showed on one target in one round, before the rounds are pooled.
#[derive(Debug, Clone)]
pub struct RestSample {
    pub target: String,
    pub runtime: Option<String>,
    pub pause_ms: u64,
    pub closed_loop: ProbeRecord,
    pub open_loop: Option<ProbeRecord>,
    /// Each server thread name's voluntary context switches over the closed loop's pings.
    pub switches: BTreeMap<String, u64>,
    pub confounders: Confounders,
}

/// Runs the plan on each target, one reactor thread each, round after round; each target's
/// figures pooled over the rounds, in the order first measured.
pub async fn run(
    targets: &[Target],
    plan: &RestPlan,
    on: &mut impl FnMut(Event<'_, RestSample>),
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
    let mut samples = Vec::new();
    let mut failures = Vec::new();
    for _ in 0..plan.rounds {
        let measure =
            async |running: &Running, pause: &Pause| measure(running, *pause, probe_for).await;
        let round = session::run_each(&schedule, &setup, &pauses, on, measure).await;
        samples.extend(round.measured);
        failures.extend(round.failures);
    }
    Outcome {
        measured: pool(samples),
        failures,
    }
}

async fn measure(running: &Running, Pause(pause_ms): Pause, probe_for: Duration) -> RestSample {
    let pause = Duration::from_millis(pause_ms);
    let pid = running.server.as_ref().and_then(|server| server.pid());
    let meter = ConfounderMeter::start(running);
    let before = pid.map(thread_switches);
    let closed = closed::start(running.endpoint.clone(), pause);
    tokio::time::sleep(probe_for).await;
    let closed_loop: ProbeRecord = closed.stop().await;
    let after = pid.map(thread_switches);
    let switches = match (before, after) {
        (Some(before), Some(after)) => switches_by_name(&before, &after),
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
        Some(open.stop().await)
    };
    RestSample {
        target: running.label.clone(),
        runtime: running.runtime(),
        pause_ms,
        closed_loop,
        open_loop,
        switches,
        confounders: meter.stop(),
    }
}

/// One [`RestPoint`] per target and pause, from all its rounds' samples.
pub fn pool(samples: Vec<RestSample>) -> Vec<RestPoint> {
    let mut pooled: Vec<RestSample> = Vec::new();
    for sample in samples {
        let same = |p: &&mut RestSample| p.target == sample.target && p.pause_ms == sample.pause_ms;
        match pooled.iter_mut().find(same) {
            Some(into) => add(into, sample),
            None => pooled.push(sample),
        }
    }
    pooled.into_iter().map(RestPoint::from_sample).collect()
}

/// Adds one more round's `sample` to `into`, of the same target and pause.
fn add(into: &mut RestSample, sample: RestSample) {
    into.closed_loop.append(sample.closed_loop);
    match (&mut into.open_loop, sample.open_loop) {
        (Some(open), Some(more)) => open.append(more),
        (none @ None, more) => *none = more,
        (Some(_), None) => {}
    }
    for (thread, switches) in sample.switches {
        *into.switches.entry(thread).or_default() += switches;
    }
    into.confounders = into.confounders.plus(sample.confounders);
}

impl RestPoint {
    fn from_sample(sample: RestSample) -> RestPoint {
        let pings = sample.closed_loop.sent().max(1) as f64;
        RestPoint {
            target: sample.target,
            runtime: sample.runtime,
            pause_ms: sample.pause_ms,
            closed_loop: RequestTimes::from_ms(&sample.closed_loop.latencies_ms()),
            open_loop: sample.open_loop.map(OpenLoopStats::from_record),
            wakeups_per_ping: (sample.switches.into_iter())
                .filter(|&(_, switches)| switches > 0)
                .map(|(thread, switches)| (thread, switches as f64 / pings))
                .collect(),
            confounders: sample.confounders,
        }
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

/// Voluntary context switches of each thread name between two readings; threads that came
/// or went in between count from zero or not at all.
fn switches_by_name(
    before: &BTreeMap<u32, (String, u64)>,
    after: &BTreeMap<u32, (String, u64)>,
) -> BTreeMap<String, u64> {
    let mut per_name: BTreeMap<String, u64> = BTreeMap::new();
    for (tid, (name, now)) in after {
        let then = before.get(tid).map_or(0, |(_, then)| *then);
        *per_name.entry(name.clone()).or_default() += now.saturating_sub(then);
    }
    per_name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuUse;
    use crate::kernel::TcpCounters;

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
    fn switches_are_counted_by_thread_name() {
        let before = BTreeMap::from([
            (1, ("main".to_owned(), 100)),
            (2, ("async-io".to_owned(), 10)),
        ]);
        let after = BTreeMap::from([
            (1, ("main".to_owned(), 300)),
            (2, ("async-io".to_owned(), 10)),
            (3, ("blocking-1".to_owned(), 4)),
        ]);
        assert_eq!(
            switches_by_name(&before, &after),
            BTreeMap::from([
                ("main".to_owned(), 200),
                ("async-io".to_owned(), 0),
                ("blocking-1".to_owned(), 4)
            ])
        );
    }

    fn sample(target: &str, pause_ms: u64, latencies_ms: Vec<f64>, main: u64) -> RestSample {
        RestSample {
            target: target.into(),
            runtime: None,
            pause_ms,
            closed_loop: ProbeRecord::of(latencies_ms.into_iter().map(Ok)),
            open_loop: None,
            switches: BTreeMap::from([("main".to_owned(), main), ("idle".to_owned(), 0)]),
            confounders: Confounders {
                kernel: Some(TcpCounters::default()),
                cpu: Some(CpuUse {
                    client_ms: 20.0,
                    server_ms: Some(10.0),
                    steal_ms: Some(10.0),
                }),
            },
        }
    }

    #[test]
    fn rounds_are_pooled_per_target_and_pause_in_first_seen_order() {
        let points = pool(vec![
            sample("a", 10, vec![0.1, 0.3], 2),
            sample("a", 50, vec![0.5], 1),
            sample("b", 10, vec![0.2], 1),
            sample("a", 10, vec![0.2, 0.4], 2),
        ]);
        let keys: Vec<(&str, u64)> = points
            .iter()
            .map(|p| (p.target.as_str(), p.pause_ms))
            .collect();
        assert_eq!(keys, [("a", 10), ("a", 50), ("b", 10)]);
        let a10 = &points[0];
        assert_eq!(a10.closed_loop.answered, 4);
        // 4 switches of `main` over 4 pings; a thread that never switched is left out.
        assert_eq!(
            a10.wakeups_per_ping,
            BTreeMap::from([("main".to_owned(), 1.0)])
        );
        let cpu = a10.confounders.cpu.expect("CPU time, pooled");
        assert_eq!(
            (cpu.client_ms, cpu.server_ms, cpu.steal_ms),
            (40.0, Some(20.0), Some(20.0))
        );
        assert_eq!(a10.confounders.kernel, Some(TcpCounters::default()));
    }

    #[test]
    fn this_process_has_threads_to_count() {
        if cfg!(target_os = "linux") {
            assert!(!thread_switches(std::process::id()).is_empty());
        }
    }
}
