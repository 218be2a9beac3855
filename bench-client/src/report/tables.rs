//! The Markdown outputs: `RESULTS.md` with the comparison and probe tables, and `SWEEP.md`.

use std::fmt::Write as _;

use super::findings::findings;
use super::plots;
use super::text::{
    cell, kernel_note, latency, reactor_threads, stalls, verdict, where_it_ran, with_failed,
};
use super::{Report, RestReport, SweepReport};
use crate::bench::{Case, HEAD_START};
use crate::burst::Connect;
use crate::cpu::CpuUse;
use crate::environment::Environment;
use crate::session::Failure;
use crate::stats::PingStats;
use crate::work::WorkPath;
use demo_contract::DEFAULT_STALL_MS;
use demo_contract::variant::{VARIANTS, Variant};

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
            let _ = writeln!(out, "![{route}]({})", plots::cdf_name(route));
        }
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

/// A report's title, the command that wrote it, and the machine it ran on.
fn heading(title: &str, command: &str, environment: &Environment) -> String {
    format!(
        "# {title}\n\nWritten by `{command}`; every figure below comes from that run. Do not \
         edit by hand: run the command again.\n\n## Environment\n\n{}",
        environment.to_markdown()
    )
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
    )
}

/// How the burst's connections were made, in a sentence's words.
fn connect_text(connect: Connect) -> &'static str {
    match connect {
        Connect::During => "opened as each request is sent (the original client)",
        Connect::Before => "all opened and accepted before the first request is written",
    }
}

/// The "Failures" section, or nothing; `with_threads` names the reactor threads of each.
fn failures(failures: &[Failure], with_threads: bool) -> String {
    if failures.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Failures\n\n");
    for failure in failures {
        let threads = if with_threads {
            format!(" ({})", reactor_threads(failure.reactor_threads))
        } else {
            String::new()
        };
        let route = failure
            .route
            .as_deref()
            .map(|route| format!(", {route}"))
            .unwrap_or_default();
        let reason = failure.reason.replace('\n', " ");
        let _ = writeln!(out, "- {}{threads}{route}: {reason}", failure.target);
    }
    out
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
        let _ = writeln!(
            out,
            "| {} | {} ({}) | {} | {} | {:.1} | {} | {}/{} | {} | {} | {} |",
            cell(&case.target),
            cell(case.runtime.as_deref().unwrap_or("?")),
            case.reactor_threads,
            case.route,
            cell(&where_it_ran(case)),
            case.wall_ms,
            case.times_ideal
                .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}")),
            case.ok,
            case.err,
            closed_loop_cells(case.closed_loop.as_ref()),
            verdict(case),
            stalls(case.stalls.as_ref()),
        );
    }
    let disturbed: Vec<String> = (report.cases.iter())
        .filter_map(|case| {
            let note = kernel_note(case.confounders.kernel)?;
            Some(format!("{} {} ({note})", case.target, case.route))
        })
        .collect();
    for (failure, route) in failed_cases(report) {
        let _ = writeln!(
            out,
            "| {} | ? ({}) | {route} | failed: see Failures | - | - | - | - | - | - | - | failed | - |",
            cell(&failure.target),
            failure.reactor_threads,
        );
    }
    let _ = writeln!(
        out,
        "\n`× ideal` is the wall time in sleeps: 1.00 means every request slept side by side. \
         The verdict is `serialised` when the wall time is nearer the serialised ideal, \
         ⌈N / threads⌉ × sleep, than one sleep (the line is their geometric mean); a case in \
         which any request failed is `failed`, with the count, whatever its wall time. Ping \
         latencies are in ms; percentiles use the original bench's nearest-rank rule. The \
         last column is what the server's own stall detector (`GET /stalls`) reported for \
         the case: polls of a request future that held a reactor thread past its threshold \
         ({}).",
        stall_threshold(report.plan.stall_ms)
    );
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
         percentiles come from an HDR histogram (3 significant digits). Its schedule starts \
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

/// `SWEEP.md`: environment, parameters, one table per route (stacks × N), the plots.
pub fn sweep_markdown(sweep: &SweepReport) -> String {
    let plan = &sweep.plan;
    let mut out = heading("Concurrency sweep", &sweep.command, &sweep.environment);
    let concurrency: Vec<String> = plan.concurrency.iter().map(usize::to_string).collect();
    let pool = match plan.blocking_threads {
        Some(pool) => format!("a blocking pool of {pool} threads on every server"),
        None => "each runtime's own blocking pool".to_owned(),
    };
    let _ = writeln!(
        out,
        "\n## Parameters\n\n- N = {} concurrent requests, each sleeping {} ms, on {}, with \
         {pool}; each request on its own connection, {}; no pinger\n",
        concurrency.join(", "),
        plan.sleep_ms,
        reactor_threads(plan.threads),
        connect_text(plan.connect)
    );
    for &route in &plan.routes {
        out.push_str(&sweep_table(sweep, route));
    }
    out.push_str(&failures(&sweep.failures, false));
    out
}

/// One route's section of `SWEEP.md`: its plot and its table, stacks × N.
fn sweep_table(sweep: &SweepReport, route: WorkPath) -> String {
    let plan = &sweep.plan;
    let mut out = format!(
        "## `{route}`: wall ms\n\n![{route}]({})\n\n",
        plots::sweep_plot_name(route)
    );
    let header: Vec<String> = plan.concurrency.iter().map(|n| format!("N={n}")).collect();
    let _ = writeln!(out, "| stack | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(header.len()));
    let mut targets: Vec<&str> = sweep.points.iter().map(|p| p.target.as_str()).collect();
    targets.dedup();
    for target in &targets {
        let cells: Vec<String> = plan
            .concurrency
            .iter()
            .map(|&n| sweep_cell(sweep, target, route, n))
            .collect();
        let _ = writeln!(out, "| {target} | {} |", cells.join(" | "));
    }
    if let Some(ideal) = plan.ideal_text(route) {
        let cells: Vec<String> = (plan.concurrency.iter())
            .map(|&n| {
                plan.ideal_ms(route, n)
                    .map_or("-".to_owned(), |ms| format!("{ms:.0}"))
            })
            .collect();
        let _ = writeln!(out, "| *ideal: {ideal}* | {} |", cells.join(" | "));
    }
    out.push_str(&sweep_details(sweep, route, &targets));
    if let Some(reason) = plan
        .concurrency
        .iter()
        .find_map(|&n| plan.skip_reason(route, n))
    {
        let _ = writeln!(out, "\n`skipped`: {reason}");
    }
    out.push('\n');
    out
}

/// Every point of one route: wall time against the ideal, when the requests came back, and
/// the CPU the client and the server spent on it.
fn sweep_details(sweep: &SweepReport, route: WorkPath, targets: &[&str]) -> String {
    let mut out = format!(
        "\n<details><summary>`{route}`: every point</summary>\n\n\
         ![completion times]({})\n\n\
         | stack | N | wall ms | × ideal | requests answered | p50 ms | p90 | p99 | max \
         | client CPU ms | server CPU ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        plots::completions_plot_name(route)
    );
    for target in targets {
        for point in sweep
            .points
            .iter()
            .filter(|p| p.target == *target && p.route == route.path())
        {
            let ideal = sweep.plan.ideal_ms(route, point.n);
            let times_ideal =
                ideal.map_or("-".to_owned(), |ms| format!("{:.2}", point.wall_ms / ms));
            let requests = &point.requests;
            let _ = writeln!(
                out,
                "| {target} | {} | {:.0} | {times_ideal} | {} | {} | {} | {} | {} | {} |",
                point.n,
                point.wall_ms,
                with_failed(requests.answered, point.err),
                latency(requests.p50_ms),
                latency(requests.p90_ms),
                latency(requests.p99_ms),
                latency(requests.max_ms),
                cpu_cells(point.confounders.cpu),
            );
        }
    }
    out.push_str(
        "\nRequest times run from the burst's first send to each answer. CPU times are the \
         processes' user + system time over the burst, from `/proc` (10 ms resolution); \
         **bold** where the client used more than the server.\n\n</details>\n",
    );
    out
}

/// The client's and the server's CPU cells, the client's in bold where it used more.
fn cpu_cells(cpu: Option<CpuUse>) -> String {
    let Some(cpu) = cpu else {
        return "- | -".to_owned();
    };
    let server = cpu
        .server_ms
        .map_or("-".to_owned(), |ms| format!("{ms:.0}"));
    if cpu.client_heavier() {
        format!("**{:.0}** | {server}", cpu.client_ms)
    } else {
        format!("{:.0} | {server}", cpu.client_ms)
    }
}

/// `REST.md`: a lone `/ping` per stack at each pause, and the wake-ups behind it.
pub fn rest_markdown(rest: &RestReport) -> String {
    let mut out = heading("At rest", &rest.command, &rest.environment);
    let pauses: Vec<String> = rest
        .plan
        .pauses_ms
        .iter()
        .map(|ms| format!("{ms} ms"))
        .collect();
    let _ = writeln!(
        out,
        "\n## Parameters\n\n- `GET /ping` alone, one reactor thread, the stall detector off; \
         pauses of {} between pings; each probe runs {} ms at each pause, in each of {} \
         round(s) of every target, pooled\n",
        pauses.join(", "),
        rest.plan.probe_ms,
        rest.plan.rounds
    );
    out.push_str(
        "## Latency and wake-ups\n\n\
         | stack | pause ms | closed loop: pings | p50 µs | p90 | p99 | open loop: p50 µs | p99 \
         | send lag p99 µs | voluntary switches per ping, by server thread \
         | client CPU ms | server CPU ms | steal ms | kernel |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n",
    );
    for point in &rest.points {
        let micros =
            |ms: Option<f64>| ms.map_or("-".to_owned(), |ms| format!("{:.0}", ms * 1000.0));
        let open = point.open_loop.as_ref();
        let cpu = point.confounders.cpu;
        let wakeups: Vec<String> = (point.wakeups_per_ping.iter())
            .map(|(thread, per)| format!("{}: {per:.2}", cell(thread)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&point.target),
            point.pause_ms,
            point.closed_loop.answered,
            micros(point.closed_loop.p50_ms),
            micros(point.closed_loop.p90_ms),
            micros(point.closed_loop.p99_ms),
            micros(open.and_then(|o| o.p50_ms)),
            micros(open.and_then(|o| o.p99_ms)),
            micros(open.and_then(|o| o.p99_send_lag_ms)),
            if wakeups.is_empty() {
                "-".to_owned()
            } else {
                wakeups.join(", ")
            },
            cpu_cells(cpu),
            cpu.and_then(|cpu| cpu.steal_ms)
                .map_or("-".to_owned(), |ms| format!("{ms:.0}")),
            kernel_note(point.confounders.kernel).unwrap_or_else(|| "-".to_owned()),
        );
    }
    out.push_str(
        "\nThe closed loop sends a ping, waits for its answer, pauses, and sends the next; the \
         open loop sends one every pause (not at 0 ms) and times it from its scheduled send. \
         A thread's voluntary context switches (`/proc/PID/task/TID/status`) count the times \
         it went to sleep and was woken: one per ping means the thread was woken for every \
         request. The last four columns say what else could have set a row's figures, over \
         both probes: the CPU time of the client (in bold where it used more than the server) \
         and of the server, and the hypervisor's steal time (all in 10 ms ticks), and any rise \
         of the kernel's TCP counters (listen overflows and drops, retransmissions).\n",
    );
    let variants: Vec<&Variant> = VARIANTS
        .iter()
        .filter(|variant| rest.points.iter().any(|p| p.target == variant.label))
        .collect();
    if !variants.is_empty() {
        out.push_str("\n## The variants\n\n");
        for variant in variants {
            let _ = writeln!(
                out,
                "- {}: {}; started with `{}=1`.",
                variant.label, variant.about, variant.variable
            );
        }
    }
    out.push_str(&failures(&rest.failures, false));
    out
}

/// The wall time of one point, "skipped", or "-" if it did not run.
fn sweep_cell(sweep: &SweepReport, target: &str, route: WorkPath, n: usize) -> String {
    if sweep.plan.skip_reason(route, n).is_some() {
        return "skipped".to_owned();
    }
    let point = sweep
        .points
        .iter()
        .find(|p| p.target == target && p.route == route.path() && p.n == n);
    let Some(point) = point else {
        return "-".to_owned();
    };
    let mut text = format!("{:.0}", point.wall_ms);
    if point.err > 0 {
        text.push_str(&format!(" ({} failed)", point.err));
    }
    if let Some(note) = kernel_note(point.confounders.kernel) {
        text.push_str(&format!(" ({note})"));
    }
    text
}
