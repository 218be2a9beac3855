//! `DETECTORS.md`: each way of catching a blocked reactor on the same workload, side by side:
//! what it names, whether it reports while the thread is held, and its false alarms.

use std::fmt::Write as _;

use crate::Error;
use crate::experiments::detectors::{DETECTORS, DetectorsReport, OnOff, Scorecard};
use crate::report::View;
use crate::report::sections::document;
use crate::report::text::{cell, whole};

/// The detectors experiment's one view, `DETECTORS.md`.
pub fn views(report: &DetectorsReport) -> Result<Vec<View>, Error> {
    Ok(vec![(
        "DETECTORS.md".to_owned(),
        detectors_markdown(report),
    )])
}

/// `DETECTORS.md`.
pub fn detectors_markdown(report: &DetectorsReport) -> String {
    document(
        "Catching it, side by side",
        &report.command,
        &report.environment,
        &[
            parameters(report),
            table(report),
            costs(report),
            samples(report),
            about(),
        ],
        &report.failures,
    )
}

fn parameters(report: &DetectorsReport) -> String {
    let plan = &report.plan;
    format!(
        "\n## Parameters\n\n- One reactor thread per server, one server per detector and \
         stack, each step in this order: `/ok-await` and `/ok-blocking` (N = {n}, {sleep} ms: \
         slow but never blocking, so any report is a false alarm), `/bad` (N = {n}, {sleep} \
         ms), `/bad-cpu` (N = {n}, {cpu} ms of CPU), then one `/bad` of {held} ms, {trials} \
         times.\n- A report is a line on the server's stderr with the detector's marker, timed \
         when the client read it, from the step's first send, until {listen} ms after the \
         step's last answer.\n- Every detector with a threshold has {threshold} ms.\n\n",
        n = plan.concurrency,
        sleep = plan.sleep_ms,
        cpu = plan.cpu_ms,
        held = plan.held_ms,
        trials = plan.held_trials,
        listen = plan.listen_after_ms,
        threshold = plan.threshold_ms,
    )
}

fn table(report: &DetectorsReport) -> String {
    let mut out = format!(
        "## What each one saw\n\n| detector | stack | false alarms (`/ok-await`, `/ok-blocking`) \
         | reports during `/bad` | names `/bad`? | reports during `/bad-cpu` | held {} ms: \
         first report after, ms (min / median / max) | reported while held |\n\
         |---|---|---:|---:|---|---:|---|---|\n",
        report.plan.held_ms
    );
    for verdict in report.detected() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            verdict.detector,
            cell(&verdict.stack),
            count(verdict.false_alarms),
            count(verdict.bad_reports),
            verdict
                .names_route
                .map_or("failed", |names| if names { "yes" } else { "no" }),
            count(verdict.bad_cpu_reports),
            first_report(verdict),
            while_held(verdict),
        );
    }
    out.push_str("\n\"failed\": a request of that step failed, so it has no verdict.\n\n");
    out
}

/// What each detector costs: its cost rounds against its stack's with none.
fn costs(report: &DetectorsReport) -> String {
    let plan = &report.plan;
    let mut out = format!(
        "## What each one costs\n\n{rounds} rounds on each (detector, stack) and on each \
         stack with none: {n} concurrent `/ok-await` of {sleep} ms, connecting before, with \
         the closed-loop ping every {every} ms beside them, as the comparison measures a case. \
         Figures are min / median / max over the rounds with every request and ping \
         answered; \"on − off\" is the difference of the medians, in bold when it is larger \
         than both ranges (max − min) it comes from.\n\n\
         | detector | stack | rounds | ping p50 on, ms | off | on − off | wall on, ms | off \
         | on − off | reports during the rounds |\n\
         |---|---|---:|---|---|---:|---|---|---:|---:|\n",
        rounds = plan.cost_rounds,
        n = plan.cost_concurrency,
        sleep = plan.sleep_ms,
        every = burst_meter::case::defaults::PING_EVERY_MS,
    );
    for verdict in report.detected() {
        let baseline = report.baseline(&verdict.stack);
        let [ping_on, ping_off, ping_difference] =
            on_off_cells(&OnOff::of(verdict, baseline, |round| round.ping_p50_ms), 2);
        let [wall_on, wall_off, wall_difference] =
            on_off_cells(&OnOff::of(verdict, baseline, |round| round.wall_ms), 1);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {ping_on} | {ping_off} | {ping_difference} | {wall_on} | {wall_off} \
             | {wall_difference} | {} |",
            verdict.detector,
            cell(&verdict.stack),
            verdict.cost.len(),
            verdict.cost_reports,
        );
    }
    out.push('\n');
    out
}

/// `figure`'s min / median / max, with the detector on, then off, then on − off of the
/// medians, in bold when larger than both ranges.
fn on_off_cells(figure: &OnOff, decimals: usize) -> [String; 3] {
    let difference = figure.difference().map_or_else(
        || "-".to_owned(),
        |difference| match figure.beyond_spread() {
            true => format!("**{difference:+.decimals$}**"),
            false => format!("{difference:+.decimals$}"),
        },
    );
    [
        spread_text(figure.on, decimals),
        spread_text(figure.off, decimals),
        difference,
    ]
}

fn spread_text(spread: Option<[f64; 3]>, decimals: usize) -> String {
    spread.map_or_else(
        || "-".to_owned(),
        |[min, median, max]| format!("{min:.decimals$} / {median:.decimals$} / {max:.decimals$}"),
    )
}

fn count(reports: Option<usize>) -> String {
    reports.map_or_else(|| "failed".to_owned(), |n| n.to_string())
}

fn first_report(verdict: &Scorecard) -> String {
    match verdict.first_report_spread() {
        Some([min, median, max]) => format!(
            "{} / {} / {}",
            whole(Some(min)),
            whole(Some(median)),
            whole(Some(max))
        ),
        None if verdict.held.is_empty() => "failed".to_owned(),
        None => "no report".to_owned(),
    }
}

fn while_held(verdict: &Scorecard) -> String {
    if verdict.held.is_empty() {
        return "failed".to_owned();
    }
    let held = verdict
        .held
        .iter()
        .filter(|trial| trial.while_held())
        .count();
    format!("{held} of {}", verdict.held.len())
}

/// What each detector says: its first line during `/bad`, verbatim.
fn samples(report: &DetectorsReport) -> String {
    let mut out =
        String::from("## What they print\n\nThe first report during `/bad`, verbatim:\n\n");
    for verdict in report.detected() {
        let line = verdict.sample.as_deref().unwrap_or("(none)");
        let _ = writeln!(
            out,
            "- {} on {}: `{}`",
            verdict.detector,
            verdict.stack,
            line.replace('`', "'")
        );
    }
    out.push('\n');
    out
}

fn about() -> String {
    let mut out = String::from("## How each one works\n\n");
    for detector in DETECTORS {
        let _ = writeln!(out, "- **{}**: {}.", detector.name, detector.about());
    }
    out.push('\n');
    out
}
