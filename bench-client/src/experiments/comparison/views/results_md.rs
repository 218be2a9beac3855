//! `RESULTS.md`, the comparison's document: its parameters, the comparison table, the two
//! probes side by side, when the requests came back, what failed, the findings and the run
//! time.

use std::fmt::Write as _;

use super::findings::findings;
use super::plots;
use super::{verdict, where_it_ran};
use crate::experiments::comparison::Report;
use crate::report::sections::{failures, heading};
use crate::report::text::{
    cell, connect_text, kernel_note, latency, stalls, times_ideal, with_failed,
};
use burst_meter::case::{Case, HEAD_START};
use burst_meter::fixtures::FileCache;
use burst_meter::session::Failure;
use burst_meter::stats::{OVERLAP_LINE, PingStats};
use demo_contract::DEFAULT_STALL_MS;

/// `RESULTS.md`: environment, parameters, tables, plots, failures, findings, run time.
pub fn results_markdown(report: &Report) -> String {
    let mut out = heading(
        "Blocking the reactor: results",
        &report.command,
        &report.environment,
    );
    out.push_str("\n## Parameters\n\n");
    out.push_str(&parameters(report));
    out.push_str("\n## Comparison\n\n");
    out.push_str(&comparison_table(report));
    if report.cases.iter().any(|case| case.timeline.is_some()) {
        let _ = writeln!(
            out,
            "\n![every request and ping on one clock]({})",
            plots::TIMELINE
        );
    }
    if let Some(probes) = probe_table(report) {
        out.push_str("\n## The two probes\n\n");
        out.push_str(&probes);
        out.push('\n');
        for route in plots::cdf_routes(report) {
            let _ = writeln!(
                out,
                "![how long each open-loop ping waited during `{route}`, from its scheduled \
                 send to its answer, one curve per stack]({})",
                plots::cdf_name(route)
            );
        }
    }
    if let Some(calls) = call_table(report) {
        out.push_str("\n## What each call cost\n\n");
        out.push_str(&calls);
    }
    out.push_str("\n## When the requests came back\n\n");
    out.push_str(&request_table(report));
    let failed = failures(&report.failures, true);
    if !failed.is_empty() {
        out.push('\n');
        out.push_str(&failed);
    }
    out.push_str("\n## What is the same across executors, and what differs\n\n");
    for sentence in findings(report) {
        let _ = writeln!(out, "- {sentence}");
    }
    let timing = &report.timing;
    let _ = writeln!(
        out,
        "\n## Run time\n\n{:.1} s in all: {:.1} s of bursts, {:.1} s of the protocol's fixed \
         waits, {:.1}% for starting, warming up and stopping servers and the client itself.",
        timing.total_s,
        timing.bursts_s,
        timing.protocol_waits_s,
        timing.overhead_percent()
    );
    out
}

fn parameters(report: &Report) -> String {
    let plan = &report.plan;
    let routes: Vec<&str> = plan.routes.iter().map(|route| route.path()).collect();
    let threads: Vec<String> = plan.threads.iter().map(usize::to_string).collect();
    format!(
        "- {} concurrent requests per burst, each sleeping {} ms; routes {}; connections {}\n\
         - a closed-loop pinger: `GET /ping` on one keep-alive connection, then {} ms pause, \
         repeated; started {} ms before the burst\n\
         - reactor threads per spawned server: {}; targets measured one after another\n",
        plan.concurrency,
        plan.sleep_ms,
        routes.join(", "),
        connect_text(plan.connect),
        plan.ping_every_ms,
        HEAD_START.as_millis(),
        threads.join(", ")
    ) + &fixtures_text(plan)
}

/// The hidden blockers' fixtures, if the plan used them.
fn fixtures_text(plan: &burst_meter::case::Plan) -> String {
    if !plan.needs_fixtures() {
        return String::new();
    }
    let cache = match plan.file_cache {
        FileCache::Hot => "hot: read once just before, so every read copies from the page cache",
        FileCache::Cold => {
            "cold: dropped from the page cache (`posix_fadvise(POSIX_FADV_DONTNEED)`) just \
             before, so the first reads wait for the disk"
        }
    };
    format!(
        "- the hidden blockers: the HTTP routes call an upstream in the bench client's process \
         (`GET /delay?ms=N` answers after N ms); the database routes query an SQLite file the \
         server creates and fills at start; the file routes read a file of {} MiB the bench \
         wrote, whose page cache was {cache}. A file route's unit of work (its `sleep` column) \
         is one read of it alone, as the server timed it just before the burst\n",
        plan.file_mb
    )
}

/// The stall threshold a run's servers were started with, in a legend's words.
fn stall_threshold(stall_ms: Option<u64>) -> String {
    let threshold = match stall_ms {
        Some(0) => {
            return "none: `--stall-ms 0` turned it off in this run, on the FastAPI app too"
                .to_owned();
        }
        Some(ms) => format!("{ms} ms in this run"),
        None => format!("{DEFAULT_STALL_MS} ms, the servers' default, in this run"),
    };
    format!("{threshold}; on the FastAPI app, asyncio's debug mode")
}

/// The comparison table and its legend.
pub fn comparison_table(report: &Report) -> String {
    let mut out = String::from(
        "| stack | runtime (reactor threads) | route | where the sleep ran | wall ms | × ideal | ok/err \
         | ping samples | ping p50 | p95 | max | verdict | stalls the server saw |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
    );
    for case in &report.cases {
        out.push_str(&comparison_row(case));
    }
    for (failure, route) in failed_cases(report) {
        let _ = writeln!(
            out,
            "| {} | ? ({}) | {route} | failed: see Failures | - | - | - | - | - | - | - | failed | - |",
            cell(&failure.target),
            failure.reactor_threads,
        );
    }
    out.push_str(&comparison_legend(report));
    out
}

/// One case's row of the comparison table.
fn comparison_row(case: &Case) -> String {
    format!(
        "| {} | {} ({}) | {} | {} | {:.1} | {} | {}/{} | {} | {} | {} |\n",
        cell(&case.target),
        cell(case.runtime.as_deref().unwrap_or("?")),
        case.reactor_threads,
        case.route,
        cell(&where_it_ran(case)),
        case.wall_ms,
        times_ideal(case.times_ideal),
        case.ok,
        case.err,
        closed_loop_cells(case.closed_loop.as_ref()),
        verdict(case),
        stalls(case.stalls.as_ref()),
    )
}

/// What the comparison table's columns mean, and the cases in which the kernel had a hand.
fn comparison_legend(report: &Report) -> String {
    let mut out = format!(
        "\n`× ideal` is the wall time in sleeps: 1.00 means every request slept side by side. \
         The verdict is `serialised` when the wall time is nearer the serialised ideal, \
         ⌈N / threads⌉ × sleep, than one sleep (the line is their geometric mean); a case in \
         which any request failed is `failed`, with the count, whatever its wall time. Ping \
         latencies are in ms; percentiles use the original bench's nearest-rank rule. The \
         last column is what the server's own stall detector (`GET /stalls`) reported for \
         the case: polls of a request future that held a reactor thread past its threshold \
         ({}).\n",
        stall_threshold(report.plan.server.stall_ms)
    );
    let disturbed: Vec<String> = (report.cases.iter())
        .filter_map(|case| {
            let note = kernel_note(case.confounders.kernel)?;
            Some(format!("{} {} ({note})", case.target, case.route))
        })
        .collect();
    if !disturbed.is_empty() {
        let _ = writeln!(
            out,
            "\nThe kernel dropped or retransmitted connections during {}: there, the kernel's \
             timers are in the figures, not only the server.",
            disturbed.join("; ")
        );
    }
    out
}

/// The closed loop's samples, p50, p95 and max cells.
fn closed_loop_cells(ping: Option<&PingStats>) -> String {
    match ping {
        Some(ping) => format!(
            "{} | {} | {} | {}",
            with_failed(ping.samples, ping.errors),
            latency(ping.p50_ms),
            latency(ping.p95_ms),
            latency(ping.max_ms)
        ),
        None => "- | - | - | -".to_owned(),
    }
}

/// The two probes side by side, if the open-loop one ran: what the closed loop saw, and
/// what a client sending on schedule saw.
pub fn probe_table(report: &Report) -> Option<String> {
    if report.cases.iter().all(|case| case.open_loop.is_none()) {
        return None;
    }
    let mut out = String::from(
        "| stack | reactor threads | route | closed loop: samples | p50 | p95 | max \
         | open loop: sent | answered | p50 | p99 | max | send lag p99 | probe CPU ms |\n\
         |---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for case in &report.cases {
        let Some(open) = &case.open_loop else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&case.target),
            case.reactor_threads,
            case.route,
            closed_loop_cells(case.closed_loop.as_ref()),
            open.scheduled,
            with_failed(open.answered, open.errors),
            latency(open.p50_ms),
            latency(open.p99_ms),
            latency(open.max_ms),
            latency(open.p99_send_lag_ms),
            latency(open.probe_cpu_ms),
        );
    }
    out.push_str(
        "\nThe closed loop sends a ping only after the last one returned, so a stall costs it \
         samples; the open loop keeps its schedule and times each ping from when it should \
         have left (the correction wrk2 makes for coordinated omission). Open-loop \
         percentiles take the same nearest rank as every other figure, over every answered \
         ping. Its schedule starts \
         half a period after the closed loop's, so the two probes' pings do not queue behind \
         each other. Its pings are timed by a clock thread of its own, which sleeps to a \
         quarter of a millisecond before each send time and spins the rest, and sent from a \
         thread that runs nothing else, at real-time priority until each ping leaves, where \
         the OS grants it; `send lag p99` is how late 99% of them started, at most \
         (results.json has every ping's lag), and `probe CPU ms` what the two threads cost \
         in the case.\n",
    );
    Some(out)
}

/// The hidden blockers' calls, as the servers timed them: wall time against the calling
/// thread's CPU time. `None` if no case made one.
fn call_table(report: &Report) -> Option<String> {
    if report.cases.iter().all(|case| case.call.is_none()) {
        return None;
    }
    let mut out = String::from(
        "| stack | reactor threads | route | one call, ms (median) | its thread's CPU, ms | CPU / wall \
         | calls at once | stalls the server saw | booked to |\n\
         |---|---:|---|---:|---:|---:|---:|---|---|\n",
    );
    for case in &report.cases {
        let Some(call) = &case.call else {
            continue;
        };
        let share = call
            .cpu_ms
            .map(|cpu| format!("{:.0} %", 100.0 * cpu / call.call_ms.max(0.01)));
        let booked = (case.stalls.as_ref()).map_or(String::new(), |seen| seen.routes.join(", "));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.1} | {} | {} |",
            cell(&case.target),
            case.reactor_threads,
            case.route,
            latency(Some(call.call_ms)),
            latency(call.cpu_ms),
            share.as_deref().unwrap_or("-"),
            call.overlap,
            stalls(case.stalls.as_ref()),
            cell(&booked),
        );
    }
    let _ = write!(
        out,
        "\nEach server times its call (the blocking call, or the awaited one) and, for a \
         blocking call, the CPU time of the thread that made it (`CLOCK_THREAD_CPUTIME_ID`); \
         medians over the burst's answers. CPU near the wall time: the thread worked (SQLite \
         computing, the kernel copying the file); near zero: it only waited (the upstream). \
         An awaited call is spread over polls and threads, so it has no CPU figure (-). `calls \
         at once` is the calls' wall times added up over the burst's: 1.0 means one after \
         another, N all side by side; it sets these routes' verdict (serialised under {}), \
         since a query or a copy takes longer per call when calls share the cores and the \
         wall time alone cannot tell that from a queue. The last two columns are the server's \
         own stall detector: the polls it caught holding a reactor thread past its threshold, \
         and the route it booked them to.\n",
        OVERLAP_LINE
    );
    Some(out)
}

/// Each case's request completion times: where the wall time is one figure, these show
/// whether the requests came back together or in rounds.
fn request_table(report: &Report) -> String {
    let mut out = String::from(
        "| stack | reactor threads | route | answered | p50 ms | p90 | p99 | max |\n\
         |---|---:|---|---:|---:|---:|---:|---:|\n",
    );
    for case in &report.cases {
        let times = &case.requests;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&case.target),
            case.reactor_threads,
            case.route,
            with_failed(times.answered, case.err),
            latency(times.p50_ms),
            latency(times.p90_ms),
            latency(times.p99_ms),
            latency(times.max_ms),
        );
    }
    out.push_str(
        "\nEach request's time runs from the burst's first send to its answer (nearest-rank \
         percentiles of the answered ones).\n",
    );
    out
}

/// Each case that was planned but not measured, with the first failure of its target:
/// a target that failed in one case never ran the ones after it.
fn failed_cases(report: &Report) -> Vec<(&Failure, &'static str)> {
    let mut failed: Vec<(&Failure, &'static str)> = Vec::new();
    for failure in &report.failures {
        let same_target = |other: &Failure| {
            other.target == failure.target && other.reactor_threads == failure.reactor_threads
        };
        if failed.iter().any(|(first, _)| same_target(first)) {
            continue;
        }
        for route in report.plan.routes.iter().map(|route| route.path()) {
            let measured = report.cases.iter().any(|case: &Case| {
                case.target == failure.target
                    && case.reactor_threads == failure.reactor_threads
                    && case.route == route
            });
            if !measured {
                failed.push((failure, route));
            }
        }
    }
    failed
}
