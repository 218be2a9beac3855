//! The probe: point it at any server, yours included, in any language, and it says of each
//! route whether it holds the thread that serves the health check, from outside, with no
//! change to the server's code.
//!
//! For each route: requests alone, one after another (the first only warms the route up),
//! for the median one takes; then rounds of N at once, each on a connection of its own,
//! while the open-loop probe sends the health check on a fixed schedule, from a few periods
//! before the round to its last answer. The verdict is derived from that record
//! ([`verdict`]). Without a URL it runs its own check ([`subjects::own_check`]): servers whose
//! verdicts are known by construction, each route with the one it must get.

mod args;
pub mod claims;
pub mod subjects;
pub mod verdict;
pub mod views;

use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::measure::burst::{self, Burst, Connect};
use crate::measure::environment::Environment;
use crate::measure::fixtures::{DEFAULT_FILE_MB, Fixtures};
use crate::measure::http::get_once;
use crate::measure::kernel::TcpCounters;
use crate::measure::probe::{HealthCheck, open};
use crate::measure::session::{Event, Failure, PAUSE, SessionError};
use crate::measure::stalls::{self, StallsSeen};
use crate::measure::target::Target;
use crate::measure::wire::Request;
use crate::progress::Stage;

pub use args::{Call, ProbeArgs};
use subjects::{AsExpected, Expected, Subject};
use verdict::Finding;

/// The probe, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Probe;

impl Experiment for Probe {
    const NAME: &'static str = "probe";
    const TITLE: &'static str = "the probe";
    const RECORD: &'static str = "probe.json";
    const CLAIMS: &'static [Claim<ProbeReport>] = claims::CLAIMS;
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
        let routes = subjects.iter().map(|subject| subject.routes.len()).sum();
        Stage {
            name: title.to_owned(),
            steps: routes,
            estimate: plan.estimate() * routes as u32,
        }
    }

    async fn run(
        (plan, subjects): (ProbePlan, Vec<Subject>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, RouteProbe>),
    ) -> ProbeReport {
        probe_all(&subjects, plan, environment, command, on).await
    }

    fn views(report: &ProbeReport) -> Result<Vec<(String, String)>, Error> {
        Ok(views::views(report))
    }

    fn failures(report: &ProbeReport) -> usize {
        let failed = report.routes.iter().filter(|probe| probe.error.is_some());
        report.failures.len() + failed.count()
    }

    fn told(event: &Event<'_, RouteProbe>) -> Option<String> {
        match event {
            Event::Measured(probe) => Some(views::line(probe)),
            Event::Starting { target, .. } => Some(format!("{target}:")),
            Event::Running { .. } | Event::Failed(_) => None,
        }
    }
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
        }
    }

    fn every(&self) -> Duration {
        Duration::from_millis(self.every_ms)
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// What one route should take, for the progress view: its requests alone and its rounds,
    /// each with its health checks at rest, at the probe's own check's work per request.
    fn estimate(&self) -> Duration {
        let request = Duration::from_millis(subjects::WORK_MS);
        let round = self.every() * REST_CHECKS + request * self.concurrency as u32 / 2 + PAUSE;
        request * (self.alone + 1) as u32 + round * self.trials as u32
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// From the first send to the last answer, ms.
    pub wall_ms: f64,
    /// When each request was answered, from the first send, ms, in the order sent.
    pub done_ms: Vec<f64>,
    /// The health checks due before the round, answered: their latencies, ms.
    pub health_at_rest_ms: Vec<f64>,
    /// The health checks due during the round, answered: their latencies from their
    /// scheduled time, ms.
    pub health_during_ms: Vec<f64>,
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
}

/// Probes every subject in turn, with `plan`.
async fn probe_all(
    subjects: &[Subject],
    plan: ProbePlan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, RouteProbe>),
) -> ProbeReport {
    let mut report = ProbeReport {
        environment,
        plan,
        command,
        routes: Vec::new(),
        failures: Vec::new(),
    };
    let fixtures = subjects
        .iter()
        .any(|subject| subject.needs_fixtures)
        .then(|| Fixtures::create(DEFAULT_FILE_MB));
    for subject in subjects {
        let label = subject.target.label();
        on(Event::Starting {
            target: label,
            threads: 1,
        });
        let fixture_args = match (subject.needs_fixtures, &fixtures) {
            (true, Some(Ok(fixtures))) => Ok(fixtures.server_args()),
            (true, Some(Err(error))) => Err(format!(
                "cannot make the hidden blockers' fixtures: {error}"
            )),
            _ => Ok(Vec::new()),
        };
        let probed = match fixture_args {
            Ok(args) => (probe_subject(subject, &args, &report.plan, &mut report.routes, on).await)
                .map_err(|error| error.to_string()),
            Err(reason) => Err(reason),
        };
        if let Err(reason) = probed {
            let failure = Failure::new(label, 1, None, reason.to_string());
            on(Event::Failed(&failure));
            report.failures.push(failure);
        }
    }
    report
}

/// Starts `subject` if it is ours (with `args`), probes each of its routes into `routes`,
/// and stops it. Why it could not be started, died or did not stop cleanly is the error.
async fn probe_subject(
    subject: &Subject,
    args: &[String],
    plan: &ProbePlan,
    routes: &mut Vec<RouteProbe>,
    on: &mut impl FnMut(Event<'_, RouteProbe>),
) -> Result<(), SessionError> {
    let (mut server, endpoint) = match &subject.target {
        Target::Spawn { name, launcher } => {
            let server = launcher.start(name, args).await?;
            let endpoint = server.endpoint().clone();
            (Some(server), endpoint)
        }
        Target::External { endpoint, .. } => (None, endpoint.clone()),
    };
    let check = HealthCheck {
        endpoint,
        path: subject.health.clone(),
    };
    let unhealthy = health_once(&check, plan.timeout()).await.err();
    // Only a server we started is asked for its stall detector's counts.
    let reads_stalls = server.is_some() && subject.health == Route::Ping.path();
    for (call, expected) in &subject.routes {
        on(Event::Running {
            target: subject.target.label(),
            step: call.to_string(),
            estimate: plan.estimate(),
        });
        let mut probe = RouteProbe {
            server: subject.target.label().to_owned(),
            call: call.clone(),
            health: subject.health.clone(),
            n: plan.concurrency,
            every_ms: plan.every_ms,
            expected: *expected,
            alone_ms: Vec::new(),
            trials: Vec::new(),
            error: unhealthy.clone(),
            stalls: None,
        };
        if probe.error.is_none() {
            probe_watched(&check, plan, reads_stalls, &mut probe).await;
        }
        tokio::time::sleep(PAUSE).await;
        if let Some(server) = &mut server
            && let Some(status) = server.exited()
        {
            let stderr = server.stderr().clone();
            return Err(SessionError::Died { status, stderr });
        }
        on(Event::Measured(&probe));
        routes.push(probe);
    }
    match server {
        Some(server) => match server.stop().await {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(SessionError::Unclean(status)),
            Err(error) => Err(SessionError::Stop(error)),
        },
        None => Ok(()),
    }
}

/// [`probe_route`], with what the server's stall detector booked meanwhile if `reads_stalls`.
async fn probe_watched(
    check: &HealthCheck,
    plan: &ProbePlan,
    reads_stalls: bool,
    probe: &mut RouteProbe,
) {
    let endpoint = &check.endpoint;
    let before = match reads_stalls {
        true => stalls::read(endpoint).await,
        false => None,
    };
    probe_route(check, plan, probe).await;
    if let Some(before) = before {
        let after = stalls::read(endpoint).await;
        probe.stalls = after.map(|after| stalls::between(&before, &after));
    }
}

/// One health check, which must answer 2xx: without it, nothing the probe sees means much.
async fn health_once(check: &HealthCheck, timeout: Duration) -> Result<(), String> {
    let url = format!("{}{}", check.endpoint, check.path);
    match get_once(&check.endpoint, &check.path, timeout).await {
        Ok(reply) if reply.is_success() => Ok(()),
        Ok(reply) => Err(format!(
            "the health check GET {url} answered {}{}: pass --health with a path that answers 2xx",
            reply.status,
            excerpt(&reply.body)
        )),
        Err(error) => Err(format!("the health check GET {url}: {}", error.describe())),
    }
}

/// Probes `probe`'s route on `check`'s server into it: the requests alone, then the rounds,
/// stopping at the first failure, which becomes its error.
async fn probe_route(check: &HealthCheck, plan: &ProbePlan, probe: &mut RouteProbe) {
    let (endpoint, call) = (&check.endpoint, &probe.call);
    let request = Request::new(
        endpoint,
        &call.method,
        &call.path,
        &plan.headers,
        call.body.as_bytes(),
    );
    // The first request warms the route up (a connection pool, a cache): not counted.
    for counted in std::iter::once(false).chain(std::iter::repeat_n(true, plan.alone)) {
        let alone = burst::fire_request(
            endpoint,
            request.clone(),
            1,
            plan.timeout(),
            Connect::During,
        )
        .await;
        if let Some(error) = failed(&alone) {
            probe.error = Some(error);
            return;
        }
        if counted {
            probe.alone_ms.push(alone.wall_ms());
        }
    }
    for _ in 0..plan.trials {
        match round(check, &request, plan).await {
            Ok(trial) => probe.trials.push(trial),
            Err(error) => {
                probe.error = Some(error);
                return;
            }
        }
        tokio::time::sleep(PAUSE).await;
    }
}

/// One round: the health check on its schedule, [`REST_CHECKS`] periods of it at rest, then
/// N `request`s at once to its server.
async fn round(check: &HealthCheck, request: &Request, plan: &ProbePlan) -> Result<Trial, String> {
    let endpoint = &check.endpoint;
    let before = TcpCounters::read();
    let health = open::start(check.clone(), open::Schedule::starting_now(plan.every()));
    tokio::time::sleep(plan.every() * REST_CHECKS).await;
    let n = plan.concurrency;
    let burst = burst::fire_request(
        endpoint,
        request.clone(),
        n,
        plan.timeout(),
        Connect::During,
    )
    .await;
    let checks = health.stop().await;
    let kernel =
        Option::zip(TcpCounters::read(), before).map(|(after, before)| after.since(before));
    if let Some(error) = failed(&burst) {
        return Err(error);
    }
    let end = burst.start + burst.wall;
    let mut trial = Trial {
        wall_ms: burst.wall_ms(),
        done_ms: burst.completions_ms(),
        health_at_rest_ms: Vec::new(),
        health_during_ms: Vec::new(),
        health_failed: 0,
        health_lag_ms: Vec::new(),
        kernel,
    };
    for ping in checks.pings {
        if ping.due < burst.start {
            if ping.answered() {
                trial.health_at_rest_ms.push(ping.latency_ms);
            }
            continue;
        }
        if ping.due > end {
            continue;
        }
        match ping.answered() {
            true => trial.health_during_ms.push(ping.latency_ms),
            false => trial.health_failed += 1,
        }
        trial.health_lag_ms.extend(ping.send_lag_ms);
    }
    Ok(trial)
}

/// Why `burst` failed, in words: how many of its requests, and the first one's reason (its
/// status and the start of its body, or the error); `None` if every one was answered 2xx.
fn failed(burst: &Burst) -> Option<String> {
    let reasons: Vec<String> = (burst.replies.iter())
        .filter_map(|reply| match reply {
            Ok(reply) if reply.is_success() => None,
            Ok(reply) => Some(format!("answered {}{}", reply.status, excerpt(&reply.body))),
            Err(error) => Some(error.describe()),
        })
        .collect();
    let first = reasons.first()?;
    Some(match reasons.len() {
        1 if burst.replies.len() == 1 => first.clone(),
        failed => format!(
            "{failed} of {} requests failed, the first: {first}",
            burst.replies.len()
        ),
    })
}

/// The start of a body, for an error message: ` (…)`, or nothing if it is empty.
fn excerpt(body: &[u8]) -> String {
    const SHOWN: usize = 120;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let cut: String = text.chars().take(SHOWN).collect();
    let more = if text.chars().count() > SHOWN {
        "…"
    } else {
        ""
    };
    format!(" ({cut}{more})")
}
