//! `HEALTH.md`: on every Rust stack, what a Kubernetes-style probe of the stock `/ping` and
//! one of reactor-watch's `/health` got while each route was under load, and what each
//! endpoint costs at rest.

use std::fmt::Write as _;

use crate::Error;
use crate::experiments::health::{HealthReport, ProbeTally, Probed, RestTally, Window, tally};
use crate::report::View;
use crate::report::sections::document;
use crate::report::text::{cell, latency};

/// The heading of the probes' table, which the health-check lesson copies.
pub const PROBES: &str = "Probes while the reactor is blocked";
/// The heading of the cost at rest.
pub const AT_REST: &str = "What each endpoint costs at rest";

/// The health experiment's one view, `HEALTH.md`.
pub fn views(report: &HealthReport) -> Result<Vec<View>, Error> {
    Ok(vec![("HEALTH.md".to_owned(), health_markdown(report))])
}

/// `HEALTH.md`.
pub fn health_markdown(report: &HealthReport) -> String {
    document(
        "The health check under a block",
        &report.command,
        &report.environment,
        &[
            parameters(report),
            probes_table(report),
            load_table(&report.windows),
            false_unavailable(&report.probes),
            rest_table(&report.rest_tallies, report.plan.rest_requests),
        ],
        &report.failures,
    )
}

fn parameters(report: &HealthReport) -> String {
    let plan = &report.plan;
    let routes: Vec<String> = plan.routes.iter().map(|r| format!("`{r}`")).collect();
    let phases: Vec<String> = (0..plan.trials)
        .map(|trial| format!("{:.0} ms", plan.first_probe(trial).as_secs_f64() * 1e3))
        .collect();
    format!(
        "\n## Parameters\n\n\
         - each server started once, with one reactor thread, `--stall-ms {stall}`, \
         `--health-port 0` and `--health-period-ms {period}`: reactor-watch's health check on \
         a thread of its own, 503 while a poll holds its thread past {stall} ms and for \
         {period} ms after one did\n\
         - the load, per route ({routes}): {n} workers, each on a keep-alive connection, send \
         the route with `?ms={sleep}` at once and again as each answer comes, for {window} ms; \
         then their last requests are answered\n\
         - the probes, as a kubelet sends them: while the load lasts, every {every} ms, one \
         `GET /ping` (served by the reactor) and one `GET /health` at the same instant, each \
         on a new connection with a {timeout} ms timeout, connecting included\n\
         - {trials} window(s) per route; each window's first probe at {phases} from the \
         load's start: where a probe lands in a sleep decides what `/health` can say (a poll \
         is reported once it has held its thread past the limit), and with a period of whole \
         sleeps every probe of a window lands the same way into one\n\
         - a failing answer is known when it arrives (a 503, another status, a failed \
         connection) or when the timeout ends (no answer); \"first failing answer\" is the \
         earliest, from the load's start, per window\n\n",
        stall = plan.stall_ms,
        routes = routes.join(", "),
        n = plan.concurrency,
        sleep = plan.sleep_ms,
        window = plan.window_ms,
        every = plan.probe_every_ms,
        period = plan.health_period_ms,
        timeout = plan.probe_timeout_ms,
        trials = plan.trials,
        phases = phases.join(", "),
    )
}

/// The probes during the load that holds its thread, a row per stack, window and endpoint;
/// the other loads' are counted under [`false_unavailable`].
fn probes_table(report: &HealthReport) -> String {
    let mut out = format!(
        "## {PROBES}\n\nDuring `{}`: each window's probes land at one point of a sleep, its \
         first probe's time from the load's start.\n\n\
         | stack | first probe (ms) | endpoint | probes | timed out | 503 (reason) | 200 \
         | failed otherwise | first failing answer (ms) |\n\
         |---|---:|---|---:|---:|---|---:|---:|---:|\n",
        tally::BLOCKING_ROUTE
    );
    let blocked = (report.probes.iter()).filter(|t| t.route == tally::BLOCKING_ROUTE);
    for tally in blocked {
        let first_probe = report.plan.first_probe(tally.trial);
        let _ = writeln!(
            out,
            "| {} | {:.0} | `{}` | {} | {} | {} | {} | {} | {} |",
            tally.stack,
            first_probe.as_secs_f64() * 1e3,
            tally.endpoint.path(),
            tally.probes,
            tally.timed_out,
            unavailable(tally),
            tally.ok,
            tally.failed,
            whole_ms(tally.first_failing_ms),
        );
    }
    out
}

fn load_table(windows: &[Window]) -> String {
    let mut out = String::from(
        "\n## The load\n\nEach window's load, from its start to its last answer: a request \
         that failed got another status or lost its connection.\n\n\
         | stack | route | window | lasted (ms) | answered | failed |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    for window in windows {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {:.0} | {} | {} |",
            window.stack,
            window.route,
            window.trial + 1,
            window.lasted_ms,
            window.load_answered,
            window.load_failed,
        );
    }
    out
}

/// "3 (`GET /bad` 3)", or "0".
fn unavailable(tally: &ProbeTally) -> String {
    if tally.named.is_empty() {
        return tally.unavailable.to_string();
    }
    let named: Vec<String> = (tally.named.iter())
        .map(|(route, count)| format!("`{}` {count}", cell(route)))
        .collect();
    format!("{} ({})", tally.unavailable, named.join(", "))
}

fn whole_ms(ms: Option<f64>) -> String {
    ms.map_or("-".to_owned(), |ms| format!("{ms:.0}"))
}

/// The 503s during a load that does not hold its thread, per stack.
fn false_unavailable(tallies: &[ProbeTally]) -> String {
    let mut out = format!(
        "\n## False 503s\n\nA 503 during a load that never holds its thread (any route but \
         `{}`) would take a healthy instance out of service.\n\n\
         | stack | false 503s | probes of `/health` during such loads |\n|---|---:|---:|\n",
        tally::BLOCKING_ROUTE
    );
    let health = (tallies.iter())
        .filter(|t| t.endpoint == Probed::Health && t.route != tally::BLOCKING_ROUTE);
    let mut rows: Vec<(&str, usize, usize)> = Vec::new();
    for t in health {
        match rows.iter_mut().find(|(stack, ..)| *stack == t.stack) {
            Some(row) => (row.1, row.2) = (row.1 + t.false_unavailable(), row.2 + t.probes),
            None => rows.push((&t.stack, t.false_unavailable(), t.probes)),
        }
    }
    for (stack, false_503, probes) in rows {
        let _ = writeln!(out, "| {stack} | {false_503} | {probes} |");
    }
    out
}

fn rest_table(tallies: &[RestTally], requests: usize) -> String {
    let mut out = format!(
        "\n## {AT_REST}\n\nOn the idle server, before the load: {requests} sequential \
         requests on one keep-alive connection to each endpoint, after a warm-up; latency in \
         ms, nearest rank.\n\n\
         | stack | endpoint | requests | failed | median (ms) | p99 (ms) |\n\
         |---|---|---:|---:|---:|---:|\n"
    );
    for tally in tallies {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} |",
            tally.stack,
            tally.endpoint.path(),
            tally.requests,
            tally.failed,
            latency(tally.median_ms),
            latency(tally.p99_ms),
        );
    }
    out
}
