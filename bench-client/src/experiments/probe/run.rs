//! How a route is probed: each subject started if it is ours, each route's requests alone,
//! then its rounds of N at once beside the health check on its schedule.

use std::time::Duration;

use demo_contract::Route;

use super::Call;
use super::network::ListenerWatch;
use super::subjects::{Expected, Subject};
use super::{ProbePlan, ProbeReport, REST_CHECKS, RouteProbe, Trial};
use burst_meter::burst::{self, Burst, Connect};
use burst_meter::environment::Environment;
use burst_meter::fixtures::{DEFAULT_FILE_MB, Fixtures};
use burst_meter::http::get_once;
use burst_meter::kernel::TcpCounters;
use burst_meter::probe::{HealthCheck, open};
use burst_meter::session::{Event, Failure, PAUSE, SessionError};
use burst_meter::stalls::{self};
use burst_meter::target::{ServerProcess, Target};
use burst_meter::units::millis;
use burst_meter::wire::Request;

/// Probes every subject in turn, with `plan`.
pub(super) async fn probe_all(
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
            estimate: plan.floor(call, *expected),
        });
        let mut probe = RouteProbe::new(subject, call, *expected, plan);
        probe.error = unhealthy.clone();
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
        Some(server) => stop(server).await,
        None => Ok(()),
    }
}

/// Stops a server the probe started: an exit other than success is its failure.
async fn stop(server: ServerProcess) -> Result<(), SessionError> {
    match server.stop().await {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(SessionError::Unclean(status)),
        Err(error) => Err(SessionError::Stop(error)),
    }
}

impl RouteProbe {
    /// `call` of `subject`, to be probed with `plan`, nothing measured yet.
    fn new(subject: &Subject, call: &Call, expected: Option<Expected>, plan: &ProbePlan) -> Self {
        RouteProbe {
            server: subject.target.label().to_owned(),
            call: call.clone(),
            health: subject.health.clone(),
            n: plan.concurrency,
            every_ms: plan.every_ms,
            expected,
            alone_ms: Vec::new(),
            trials: Vec::new(),
            error: None,
            stalls: None,
        }
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
        &closing(&plan.headers),
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

/// `headers` and `connection: close`, unless they name the connection's fate themselves:
/// every route request asks the server to close its connection after the answer (the client
/// drops it then too), so that a server serving one connection at a time serves the next.
fn closing(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut headers = headers.to_vec();
    if !(headers.iter()).any(|(name, _)| name.eq_ignore_ascii_case("connection")) {
        headers.push(("connection".to_owned(), "close".to_owned()));
    }
    headers
}

/// One round: the health check on its schedule, [`REST_CHECKS`] periods of it at rest, then
/// N `request`s at once to its server, the server's listener watched meanwhile if the kernel
/// shows it.
async fn round(check: &HealthCheck, request: &Request, plan: &ProbePlan) -> Result<Trial, String> {
    let endpoint = &check.endpoint;
    let before = TcpCounters::read();
    let schedule = open::Schedule::starting_now(plan.every());
    let health = open::start_with(check.clone(), schedule, plan.health_connections);
    tokio::time::sleep(plan.every() * REST_CHECKS).await;
    let watch = plan.local.then(|| ListenerWatch::start(endpoint.port));
    let n = plan.concurrency;
    let timeout = plan.timeout();
    let burst = burst::fire_request(endpoint, request.clone(), n, timeout, Connect::During).await;
    let listener = match watch {
        Some(watch) => watch.stop().await,
        None => None,
    };
    let checks = health.stop().await;
    let kernel =
        Option::zip(TcpCounters::read(), before).map(|(after, before)| after.since(before));
    if let Some(error) = failed(&burst) {
        return Err(error);
    }
    let mut trial = Trial {
        kernel,
        listener,
        ..requests(&burst)
    };
    let end = burst.start + burst.wall;
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
            true => {
                trial.health_during_ms.push(ping.latency_ms);
                trial
                    .health_connect_ms
                    .push(ping.connect_ms.unwrap_or_default());
            }
            false => trial.health_failed += 1,
        }
        trial.health_lag_ms.extend(ping.send_lag_ms);
    }
    Ok(trial)
}

/// A round of `burst`'s answered requests: when each was connected and answered, and how
/// long its connect took; no health check yet.
fn requests(burst: &Burst) -> Trial {
    let mut trial = Trial {
        wall_ms: burst.wall_ms(),
        ..Trial::default()
    };
    let each = (burst.sent.iter().zip(&burst.connects)).zip(&burst.done);
    for (((sent, connect), done), answered) in each.zip(burst.answered()) {
        if !answered {
            continue;
        }
        let connect = connect.unwrap_or_default();
        trial.connected_ms.push(millis(*sent + connect));
        trial.connect_ms.push(millis(connect));
        trial.done_ms.push(millis(*done));
    }
    trial
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
