//! The probe: point it at any server, yours included, in any language, and it says of each
//! route whether it holds the thread that serves the health check, from outside, with no
//! change to the server's code.
//!
//! For each route: requests alone, one after another (the first only warms the route up),
//! for the median one takes; then rounds of N at once, each on a connection of its own,
//! while the open-loop probe sends the health check on a fixed schedule, from a few periods
//! before the round to its last answer. Every request asks the server to close its
//! connection after the answer, and by default so does every health check, each on a new
//! connection, as Kubernetes' prober sends them: a server that serves one connection at a
//! time is never held by an idle one of the probe's. The verdict is derived from that record
//! ([`verdict`]), from each request's time once connected ([`waves`]); what the server's
//! listener dropped is a finding of its own ([`network`]). Without a URL it runs its own
//! check ([`subjects::own_check`]): servers whose verdicts are known by construction, each
//! route with the one it must get.

mod args;
pub mod claims;
pub mod network;
mod run;
pub mod subjects;
pub mod verdict;
pub mod views;
pub mod waves;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::case::{burst_floor_ms, unit_floor_ms};
use burst_meter::environment::Environment;
use burst_meter::fixtures::DEFAULT_FILE_MB;
use burst_meter::kernel::TcpCounters;
use burst_meter::probe::Connections;
use burst_meter::session::{Event, Failure, PAUSE};
use burst_meter::stalls::StallsSeen;
use burst_meter::stats::Verdict;
use burst_meter::work::WorkPath;
use network::Listener;
use waves::Served;

pub use args::{Call, FAILED_ON_STATUS, ProbeArgs};
use subjects::{AsExpected, Expected, Subject};
use verdict::Finding;

/// The probe, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Probe;

impl Experiment for Probe {
    const NAME: &'static str = "probe";
    const TITLE: &'static str = "the probe";
    const RECORD: &'static str = "probe.json";
    const CLAIMS: &'static [&'static [Claim<ProbeReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/probe", "reference/stubs"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[job_run(
        "the probe's own check (results/probe/)",
        &["--out", "results/probe"],
    )];

    type Args = ProbeArgs;
    type Plan = (ProbePlan, Vec<Subject>);
    type Step = RouteProbe;
    type Record = ProbeReport;

    fn refused(args: &ProbeArgs) -> Option<String> {
        args.refused()
    }

    fn plan(args: &ProbeArgs) -> ((ProbePlan, Vec<Subject>), Vec<String>) {
        let subjects = match &args.url {
            Some(endpoint) => vec![Subject::external(endpoint, &args.health, &args.routes)],
            None => subjects::own_check(&args.folders()),
        };
        ((ProbePlan::of(args), subjects), Vec::new())
    }

    fn out(args: &ProbeArgs) -> &Path {
        &args.out
    }

    fn stage((plan, subjects): &(ProbePlan, Vec<Subject>), title: &str) -> Stage {
        let routes = subjects.iter().flat_map(|subject| &subject.routes);
        Stage {
            name: title.to_owned(),
            steps: routes.clone().count(),
            estimate: routes
                .map(|(call, expected)| plan.floor(call, *expected))
                .sum(),
        }
    }

    async fn run(
        (plan, subjects): (ProbePlan, Vec<Subject>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, RouteProbe>),
    ) -> ProbeReport {
        run::probe_all(&subjects, plan, environment, command, on).await
    }

    fn views(report: &ProbeReport) -> Result<Vec<(String, String)>, Error> {
        Ok(views::views(report))
    }

    fn failures(report: &ProbeReport) -> usize {
        let failed = report.routes.iter().filter(|probe| probe.error.is_some());
        report.failures.len() + failed.count()
    }

    fn stdout_taken(args: &ProbeArgs) -> bool {
        args.json
    }

    /// With `--json`, the verdicts on stdout; with `--fail-on`, the verdicts it names as an
    /// error, which the command exits on with its own status.
    fn after(args: &ProbeArgs, report: &ProbeReport) -> Result<Option<String>, Error> {
        if args.json {
            print!("{}", crate::report::files::json(&views::verdicts(report)));
        }
        match failed_on(&args.fail_on, report) {
            Some(found) => Err(Error::FailedOn(format!(
                "{found}; the report is in {}",
                args.out.display()
            ))),
            None => Ok(None),
        }
    }

    fn told(event: &Event<'_, RouteProbe>) -> Option<String> {
        match event {
            Event::Measured(probe) => Some(views::line(probe)),
            Event::Starting { target, .. } => Some(format!("{target}:")),
            Event::Running { .. } | Event::Failed(_) => None,
        }
    }
}

/// The routes of `report` whose verdict `fail_on` names, in words; `None` if there is none.
fn failed_on(fail_on: &[Verdict], report: &ProbeReport) -> Option<String> {
    let found: Vec<String> = (report.routes.iter())
        .filter_map(|probe| {
            let verdict = probe.finding().verdict;
            let named = fail_on.contains(&verdict);
            named.then(|| format!("{} {}: {verdict}", probe.server, probe.call))
        })
        .collect();
    let names: Vec<String> = fail_on.iter().map(Verdict::to_string).collect();
    (!found.is_empty()).then(|| {
        format!(
            "--fail-on {}: {} (exit status {FAILED_ON_STATUS})",
            names.join(","),
            found.join("; ")
        )
    })
}

/// The probe's defaults.
pub mod defaults {
    /// Requests sent at once: the original demonstration's ten.
    pub const CONCURRENCY: usize = 10;
    /// Requests alone, for their median.
    pub const ALONE: usize = 5;
    /// Rounds of requests at once, per route: enough to see whether they agree.
    pub const TRIALS: usize = 3;
    /// The health check's period, ms: the original demonstration's pinger.
    pub const EVERY_MS: u64 = 50;
    /// How long a request may take, ms.
    pub const TIMEOUT_MS: u64 = 30_000;
    /// The health check's path.
    pub const HEALTH: &str = "/";
    /// Where a reader's run writes its files: not results/, which holds the committed runs.
    pub const OUT: &str = "probe-report";
}

/// Health checks before each round: the health check at rest, on the same connection
/// schedule.
const REST_CHECKS: u32 = 4;

/// How the routes are probed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbePlan {
    /// Requests sent at once.
    pub concurrency: usize,
    /// Requests alone, after one that warms the route up.
    pub alone: usize,
    /// Rounds of requests at once.
    pub trials: usize,
    /// The health check's period, ms.
    pub every_ms: u64,
    /// How long one request may take, ms.
    pub timeout_ms: u64,
    /// The headers sent with every route request (their names only: a value may be a secret).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_names: Vec<String>,
    /// The headers themselves.
    #[serde(skip)]
    pub headers: Vec<(String, String)>,
    /// How the health checks get their connections: a new one per check unless
    /// `--keep-alive-health`. A record that does not say kept them alive, the shared default.
    #[serde(default)]
    pub health_connections: Connections,
    /// Whether the server is on this machine, so that the kernel shows its listener.
    #[serde(skip)]
    pub local: bool,
}

impl ProbePlan {
    fn of(args: &ProbeArgs) -> ProbePlan {
        ProbePlan {
            concurrency: args.concurrency,
            alone: args.alone,
            trials: args.trials,
            every_ms: args.every_ms,
            timeout_ms: args.timeout_ms,
            header_names: args.headers.iter().map(|(name, _)| name.clone()).collect(),
            headers: args.headers.clone(),
            health_connections: match args.keep_alive_health {
                true => Connections::KeptAlive,
                false => Connections::NewEach,
            },
            local: args.local(),
        }
    }

    fn every(&self) -> Duration {
        Duration::from_millis(self.every_ms)
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The least time `call` can take, at the probe's own check's work per request: its
    /// requests alone, then each round's health checks at rest and its burst. A demo route's
    /// burst is placed as the comparison places it, at one reactor thread
    /// ([`burst_floor_ms`]); any other's as the verdict it must get places its requests: one
    /// after another if it serialises, at least two rounds if bounded, side by side otherwise
    /// (and when its verdict is not known).
    fn floor(&self, call: &Call, expected: Option<Expected>) -> Duration {
        let (n, work, file_mb) = (self.concurrency, subjects::WORK_MS, DEFAULT_FILE_MB);
        let (unit_ms, burst_ms) = match WorkPath::parse(call.path_alone()) {
            Ok(route) => (
                unit_floor_ms(route, work, file_mb),
                burst_floor_ms(route, n, work, file_mb, 1),
            ),
            Err(_) => {
                let rounds = match expected.map(|expected| expected.verdict) {
                    Some(Verdict::Serialises) => n,
                    Some(Verdict::Bounded) => n.min(2),
                    _ => 1,
                };
                (work, (rounds as u64 * work) as f64)
            }
        };
        let burst = Duration::from_secs_f64(burst_ms / 1000.0);
        let round = self.every() * REST_CHECKS + burst + PAUSE;
        Duration::from_millis(unit_ms) * (self.alone + 1) as u32 + round * self.trials as u32
    }
}

/// Everything one run produced: `probe.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    pub environment: Environment,
    pub plan: ProbePlan,
    pub command: String,
    /// One record per route probed, in order.
    pub routes: Vec<RouteProbe>,
    /// Servers that could not be started, died or did not stop cleanly.
    pub failures: Vec<Failure>,
}

/// One route, as probed: every request's figures, from which its verdict is derived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteProbe {
    /// The server: its name, or the reader's URL.
    pub server: String,
    pub call: Call,
    /// The health check's path.
    pub health: String,
    /// Requests sent at once in each round.
    pub n: usize,
    /// The health check's period, ms.
    pub every_ms: u64,
    /// The verdict it must get (the probe's own check only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
    /// Each request alone, ms, from its connect to its answer.
    pub alone_ms: Vec<f64>,
    pub trials: Vec<Trial>,
    /// Why it could not be judged: the first failure, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the server's own stall detector booked while the route was probed (the probe's
    /// own check, on servers that answer `/stalls`): the same route caught while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<StallsSeen>,
}

impl RouteProbe {
    /// Its verdict, with the figures behind it.
    pub fn finding(&self) -> Finding {
        Finding::of(self)
    }

    /// Whether it got the verdict it must get; `None` if none is known.
    pub fn as_expected(&self) -> Option<AsExpected> {
        Some(self.expected?.met_by(&self.finding()))
    }
}

/// One round of N requests at once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// From the first send to the last answer, ms.
    pub wall_ms: f64,
    /// When each request was answered, from the first send, ms, in the order sent.
    pub done_ms: Vec<f64>,
    /// When each request's connection was established, from the first send, ms, in the same
    /// order: the route is judged from each request's time once connected. Where a record
    /// has none, each is taken as connected at the first send.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connected_ms: Vec<f64>,
    /// How long each request's connect took, ms, in the same order: a second or more, and
    /// the server's listener had dropped its SYN.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_ms: Vec<f64>,
    /// The health checks due before the round, answered: their latencies, ms.
    pub health_at_rest_ms: Vec<f64>,
    /// The health checks due during the round, answered: their latencies from their
    /// scheduled time, ms.
    pub health_during_ms: Vec<f64>,
    /// How long each of those took to connect, ms, in the same order (0 on a connection kept
    /// from an earlier check): a wait of the listener's, not the server's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_connect_ms: Vec<f64>,
    /// The health checks due during the round that failed.
    pub health_failed: usize,
    /// How late each health check due during the round left, ms: the probe's own lateness,
    /// on a machine busy enough to delay its real-time threads, and so part of every wait it
    /// timed then.
    pub health_lag_ms: Vec<f64>,
    /// What the kernel's TCP counters rose by during the round, machine-wide: a dropped SYN
    /// or a retransmit is a second's wait that is not the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<TcpCounters>,
    /// The server's listener while the round ran, where the kernel shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listener: Option<Listener>,
}

impl Trial {
    /// Each answered request's connect and answer, from the first send, in the order sent.
    pub fn served(&self) -> Vec<Served> {
        (self.done_ms.iter().enumerate())
            .map(|(k, &done_ms)| Served {
                connected_ms: self.connected_ms.get(k).copied().unwrap_or_default(),
                done_ms,
            })
            .collect()
    }

    /// The health checks due during the round, each from when it was due to its answer,
    /// less the time its connect took.
    pub fn health_once_connected_ms(&self) -> impl Iterator<Item = f64> + '_ {
        (self.health_during_ms.iter().enumerate()).map(|(k, &latency)| {
            latency - self.health_connect_ms.get(k).copied().unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rounds_floor_places_its_requests_as_the_verdict_it_must_get_does() {
        let stub = Call::get("/work");
        let plan = ProbePlan {
            concurrency: 10,
            alone: 5,
            trials: 3,
            every_ms: 50,
            timeout_ms: 30_000,
            header_names: Vec::new(),
            headers: Vec::new(),
            health_connections: Connections::NewEach,
            local: true,
        };
        let must_get = |verdict| {
            let expected = Expected {
                verdict,
                holds_health: false,
            };
            plan.floor(&stub, Some(expected))
        };
        let work = Duration::from_millis(subjects::WORK_MS);
        let side_by_side = plan.floor(&stub, None);
        assert_eq!(must_get(Verdict::Concurrent), side_by_side);
        assert_eq!(must_get(Verdict::Bounded), side_by_side + work * 3);
        assert_eq!(must_get(Verdict::Serialises), side_by_side + work * 9 * 3);
        // A demo route is placed as the comparison places it, whatever it must get.
        let bad = Call::get(&format!("/bad?ms={}", subjects::WORK_MS));
        assert_eq!(plan.floor(&bad, None), must_get(Verdict::Serialises));
        // Slices of CPU work on the one reactor thread: one after another too.
        let cpu = Call::get(&format!("/ok-cpu-yield?ms={}", subjects::WORK_MS));
        assert_eq!(plan.floor(&cpu, None), must_get(Verdict::Serialises));
    }
}
