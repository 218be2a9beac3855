//! `SWEEP.md`, the concurrency sweep's document: its parameters, then per route a plot and
//! a table of wall times, stacks × N, with every point's details folded beneath.

use std::fmt::Write as _;

use super::plots;
use crate::experiments::sweep::SweepReport;
use crate::report::sections::{failures, heading};
use crate::report::text::{
    connect_text, cpu_cells, kernel_note, latency, reactor_threads, times_ideal, whole, with_failed,
};
use burst_meter::work::WorkPath;

/// `SWEEP.md`: environment, parameters, one table per route (stacks × N), the plots.
pub fn sweep_markdown(sweep: &SweepReport) -> String {
    let plan = &sweep.plan;
    let mut out = heading("Concurrency sweep", &sweep.command, &sweep.environment);
    let concurrency: Vec<String> = plan.concurrency.iter().map(usize::to_string).collect();
    let pool = match plan.server.blocking_threads {
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
        "## `{route}`: wall ms\n\n![`{route}`: wall time from the first request sent to the last \
         answered, against N, one line per stack, beside the ideal]({})\n\n",
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
            .map(|&n| whole(plan.ideal_ms(route, n)))
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
         ![`{route}`: when each request came back, from the burst's first send, one line per \
         stack]({})\n\n\
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
            let times = times_ideal(ideal.map(|ms| point.wall_ms / ms));
            let requests = &point.requests;
            let _ = writeln!(
                out,
                "| {target} | {} | {:.0} | {times} | {} | {} | {} | {} | {} | {} |",
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
