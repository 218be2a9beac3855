//! `REST.md`, the at-rest document: a lone `/ping` per stack at each pause, both probes'
//! latencies, the thread wake-ups behind each ping and what else could have set them.

use std::fmt::Write as _;

use crate::Error;
use crate::experiments::rest::{RestPoint, RestReport};
use crate::report::View;
use crate::report::sections::{failures, heading};
use crate::report::text::{cell, cpu_cells, kernel_note, whole, with_failed};
use demo_contract::variant::{self, Variant, runs_in};

/// The latency table's header.
const TABLE_HEADER: &str = "| stack | pause ms | closed loop: pings | p50 µs | p90 | p99 \
    | open loop: p50 µs | p99 | send lag p99 µs | voluntary switches per ping, by server thread \
    | client CPU ms | server CPU ms | steal ms | kernel |\n\
    |---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n";

/// What the latency table's columns mean.
const TABLE_LEGEND: &str = "\nThe closed loop sends a ping, waits for its answer, pauses, and \
    sends the next; the open loop sends one every pause (not at 0 ms) and times it from its \
    scheduled send. A thread's voluntary context switches (`/proc/PID/task/TID/status`) count \
    the times it went to sleep and was woken: one per ping means the thread was woken for \
    every request. The last four columns say what else could have set a row's figures, over \
    both probes: the CPU time of the client (in bold where it used more than the server) and \
    of the server, and the hypervisor's steal time (all in 10 ms ticks), and any rise of the \
    kernel's TCP counters (listen overflows and drops, retransmissions).\n";

/// At rest's one view, `REST.md`.
pub fn views(rest: &RestReport) -> Result<Vec<View>, Error> {
    Ok(vec![("REST.md".to_owned(), rest_markdown(rest))])
}

/// `REST.md`: a lone `/ping` per stack at each pause, and the wake-ups behind it.
pub fn rest_markdown(rest: &RestReport) -> String {
    let mut out = heading("At rest", &rest.command, &rest.environment);
    out.push_str(&parameters(rest));
    out.push_str("## Latency and wake-ups\n\n");
    out.push_str(TABLE_HEADER);
    for point in &rest.points {
        out.push_str(&row(point));
    }
    out.push_str(TABLE_LEGEND);
    out.push_str(&variants(rest));
    out.push_str(&failures(&rest.failures, false));
    out
}

fn parameters(rest: &RestReport) -> String {
    let plan = &rest.plan;
    let pauses: Vec<String> = plan.pauses_ms.iter().map(|ms| format!("{ms} ms")).collect();
    format!(
        "\n## Parameters\n\n- `GET /ping` alone, one reactor thread, the stall detector off; \
         pauses of {} between pings; each probe runs {} ms at each pause, in each of {} \
         round(s) of every target, pooled\n\n",
        pauses.join(", "),
        plan.probe_ms,
        plan.rounds
    )
}

/// One target's row at one pause.
fn row(point: &RestPoint) -> String {
    let (closed, open) = (&point.closed_loop, point.open_loop.as_ref());
    let cpu = point.confounders.cpu;
    let wakeups: Vec<String> = (point.wakeups_per_ping.iter())
        .map(|(thread, per)| format!("{}: {per:.2}", cell(thread)))
        .collect();
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        cell(&point.target),
        point.pause_ms,
        with_failed(closed.samples, closed.errors),
        micros(closed.p50_ms),
        micros(closed.percentile_ms(90.0)),
        micros(closed.percentile_ms(99.0)),
        micros(open.and_then(|o| o.p50_ms)),
        micros(open.and_then(|o| o.p99_ms)),
        micros(open.and_then(|o| o.p99_send_lag_ms)),
        if wakeups.is_empty() {
            "-".to_owned()
        } else {
            wakeups.join(", ")
        },
        cpu_cells(cpu),
        whole(cpu.and_then(|cpu| cpu.steal_ms)),
        kernel_note(point.confounders.kernel).unwrap_or_else(|| "-".to_owned()),
    )
}

/// A latency in ms as whole µs, the unit at rest; "-" for none.
fn micros(ms: Option<f64>) -> String {
    whole(ms.map(|ms| ms * 1000.0))
}

/// What each variant measured changes, and how it was started.
fn variants(rest: &RestReport) -> String {
    let measured = |variant: &&Variant| rest.points.iter().any(|p| p.target == variant.label);
    let variants: Vec<&Variant> = variant::running_in(runs_in::REST)
        .filter(measured)
        .collect();
    if variants.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## The variants\n\n");
    for variant in variants {
        let _ = writeln!(
            out,
            "- {}: {}; started with `{}`.",
            variant.label,
            variant.about,
            variant.args().join(" ")
        );
    }
    out
}
