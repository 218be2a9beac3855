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

mod args;
mod claims;
pub mod switches;
pub mod views;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use args::RestArgs;
pub use switches::{switches_in, thread_switches};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::environment::Environment;
use burst_meter::probe::{HealthCheck, ProbeRecords, closed, open};
use burst_meter::session::{
    self, ConfounderMeter, Confounders, Event, Failure, Outcome, Running, ServerOptions,
    ServerSetup, Step,
};
use burst_meter::stats::{OpenLoopStats, PingStats};
use burst_meter::target::{self, Target};
use burst_meter::work::WorkPath;
use switches::switches_by_name;

/// At rest, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Rest;

impl Experiment for Rest {
    const NAME: &'static str = "rest";
    const TITLE: &'static str = "at rest";
    const RECORD: &'static str = "rest.json";
    const CLAIMS: &'static [&'static [Claim<RestReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/rest"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[job_run(
        "at rest (results/rest/)",
        &["--out", "results/rest"],
    )];

    type Args = RestArgs;
    type Plan = (RestPlan, Vec<Target>);
    type Step = RestSample;
    type Record = RestReport;

    fn plan(args: &RestArgs) -> ((RestPlan, Vec<Target>), Vec<String>) {
        let targets = target::for_rest(&args.spawn.servers, &args.spawn.folders());
        ((args.plan(), targets), Vec::new())
    }

    fn out(args: &RestArgs) -> &Path {
        &args.out
    }

    fn stage((plan, targets): &(RestPlan, Vec<Target>), title: &str) -> Stage {
        plan.stage(title, targets)
    }

    async fn run(
        (plan, targets): (RestPlan, Vec<Target>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, RestSample>),
    ) -> RestReport {
        let outcome = run(&targets, &plan, on).await;
        report(plan, outcome, environment, command)
    }

    fn views(report: &RestReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &RestReport) -> usize {
        report.failures.len()
    }
}

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
            probe_ms: 250,
            rounds: 3,
        }
    }
}

/// One pause on one target, each probe running for `probe_for`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub ms: u64,
    pub probe_for: Duration,
}

impl Step for Pause {
    fn route(&self) -> WorkPath {
        // Only `/ping` is sent; the failure report names the work route list's first.
        WorkPath::WORK[0]
    }

    fn describe(&self) -> String {
        format!("/ping every {} ms", self.ms)
    }

    /// The closed loop, then the open loop (none at pause 0).
    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        let probes = if self.ms == 0 { 1 } else { 2 };
        self.probe_for * probes
    }
}

impl RestPlan {
    /// The pauses to probe on each target, in order.
    pub fn pauses(&self) -> Vec<Pause> {
        let probe_for = Duration::from_millis(self.probe_ms);
        (self.pauses_ms.iter())
            .map(|&ms| Pause { ms, probe_for })
            .collect()
    }

    /// The plan on `targets`, for the progress view: every round of it.
    pub fn stage(&self, name: &str, targets: &[Target]) -> Stage {
        let schedule: Vec<(&Target, usize)> = targets.iter().map(|target| (target, 1)).collect();
        let round = Stage::of(name, &schedule, &self.pauses());
        Stage {
            steps: round.steps * self.rounds,
            estimate: round.estimate * self.rounds as u32,
            ..round
        }
    }
}

/// Everything one at-rest run produced: `rest.json`, from which `REST.md` is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestReport {
    pub environment: Environment,
    pub plan: RestPlan,
    pub command: String,
    pub points: Vec<RestPoint>,
    pub failures: Vec<Failure>,
}

/// The report of a run of `plan` that measured `outcome` on `environment`; `command` is the
/// command line that ran it.
pub fn report(
    plan: RestPlan,
    outcome: Outcome<RestPoint>,
    environment: Environment,
    command: String,
) -> RestReport {
    RestReport {
        environment,
        plan,
        command,
        points: outcome.measured,
        failures: outcome.failures,
    }
}

/// What one pause showed on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestPoint {
    pub target: String,
    pub runtime: Option<String>,
    pub pause_ms: u64,
    /// The closed loop: a ping, its answer, the pause, the next ping. (Of a `rest.json`
    /// written before these were the probes' statistics, only the answered pings' count, p50
    /// and max are read back: it kept no raw samples.)
    pub closed_loop: PingStats,
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
    /// Both probes' records: the closed loop's, and the open loop's but at pause 0.
    pub probes: ProbeRecords,
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
    let pauses = plan.pauses();
    // The stall detector's watchdog wakes up on its own every 50 ms: off, so that every
    // wake-up counted is the requests'.
    let setup = ServerSetup {
        options: ServerOptions::DETECTOR_OFF,
        ..ServerSetup::default()
    };
    let mut samples = Vec::new();
    let mut failures = Vec::new();
    for _ in 0..plan.rounds {
        let measure = async |running: &Running, pause: &Pause| measure(running, *pause).await;
        let round = session::run_each(&schedule, &setup, &pauses, on, measure).await;
        samples.extend(round.measured);
        failures.extend(round.failures);
    }
    Outcome {
        measured: pool(samples),
        failures,
    }
}

async fn measure(running: &Running, step: Pause) -> RestSample {
    let (pause_ms, probe_for) = (step.ms, step.probe_for);
    let pause = Duration::from_millis(pause_ms);
    let pid = running.server.as_ref().and_then(|server| server.pid());
    let meter = ConfounderMeter::start(running);
    let before = pid.map(thread_switches);
    let closed = closed::start(HealthCheck::ping(&running.endpoint), pause);
    tokio::time::sleep(probe_for).await;
    let closed_loop = closed.stop().await;
    let after = pid.map(thread_switches);
    let switches = match (before, after) {
        (Some(before), Some(after)) => switches_by_name(&before, &after),
        _ => BTreeMap::new(),
    };
    let open_loop = if pause_ms == 0 {
        None
    } else {
        let open = open::start(
            HealthCheck::ping(&running.endpoint),
            open::Schedule::starting_now(pause),
        );
        tokio::time::sleep(probe_for).await;
        Some(open.stop().await)
    };
    RestSample {
        target: running.label.clone(),
        runtime: running.runtime(),
        pause_ms,
        probes: ProbeRecords {
            closed: Some(closed_loop),
            open: open_loop,
        },
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
    into.probes.append(sample.probes);
    for (thread, switches) in sample.switches {
        *into.switches.entry(thread).or_default() += switches;
    }
    into.confounders = into.confounders.plus(sample.confounders);
}

impl RestPoint {
    fn from_sample(sample: RestSample) -> RestPoint {
        let closed_loop = sample.probes.closed.unwrap_or_default();
        let pings = closed_loop.sent().max(1) as f64;
        RestPoint {
            target: sample.target,
            runtime: sample.runtime,
            pause_ms: sample.pause_ms,
            closed_loop: PingStats::from_record(closed_loop),
            open_loop: sample.probes.open.map(OpenLoopStats::from_record),
            wakeups_per_ping: (sample.switches.into_iter())
                .filter(|&(_, switches)| switches > 0)
                .map(|(thread, switches)| (thread, switches as f64 / pings))
                .collect(),
            confounders: sample.confounders,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burst_meter::cpu::CpuUse;
    use burst_meter::kernel::TcpCounters;
    use burst_meter::probe::ProbeRecord;

    fn sample(target: &str, pause_ms: u64, latencies_ms: Vec<f64>, main: u64) -> RestSample {
        RestSample {
            target: target.into(),
            runtime: None,
            pause_ms,
            probes: ProbeRecords {
                closed: Some(ProbeRecord::of(latencies_ms.into_iter().map(Ok))),
                open: None,
            },
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
    fn points_from_before_the_probes_statistics_are_read() {
        let point: RestPoint = serde_json::from_str(
            r#"{"target": "demo-axum", "runtime": null, "pause_ms": 0,
                "closed_loop": {"answered": 2538, "p50_ms": 0.07, "p90_ms": 0.1,
                                "p99_ms": 0.17, "max_ms": 0.98},
                "wakeups_per_ping": {"demo-axum": 1.0}}"#,
        )
        .expect("an old point");
        let closed = &point.closed_loop;
        assert_eq!((closed.samples, closed.errors), (2538, 0));
        assert_eq!((closed.p50_ms, closed.max_ms), (Some(0.07), Some(0.98)));
        // Without the raw samples, no other percentile can be told.
        assert_eq!(closed.percentile_ms(90.0), None);
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
        assert_eq!((a10.closed_loop.samples, a10.closed_loop.errors), (4, 0));
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
}
