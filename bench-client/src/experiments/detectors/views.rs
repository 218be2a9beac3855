//! `DETECTORS.md`: each way of catching a blocked reactor on the same workload, side by side:
//! what it names, whether it reports while the thread is held, and its false alarms.

use std::fmt::Write as _;

use crate::Error;
use crate::experiments::detectors::{BASELINE, CostRound, DETECTORS, DetectorsReport, Verdict};
use crate::measure::stats::spread;
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
            samples(&report.verdicts),
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
    for verdict in detected(&report.verdicts) {
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

/// The verdicts of the detectors, without the baselines.
fn detected(verdicts: &[Verdict]) -> impl Iterator<Item = &Verdict> {
    verdicts.iter().filter(|v| v.detector != BASELINE.name)
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
        every = crate::experiments::comparison::defaults::PING_EVERY_MS,
    );
    for verdict in detected(&report.verdicts) {
        let baseline = (report.verdicts.iter())
            .find(|v| v.detector == BASELINE.name && v.stack == verdict.stack);
        let off = |figure: fn(&CostRound) -> f64| {
            baseline.map_or_else(Vec::new, |b| b.cost.iter().map(figure).collect())
        };
        let on =
            |figure: fn(&CostRound) -> f64| verdict.cost.iter().map(figure).collect::<Vec<f64>>();
        let ping = Comparison::of(on(|r| r.ping_p50_ms), off(|r| r.ping_p50_ms));
        let wall = Comparison::of(on(|r| r.wall_ms), off(|r| r.wall_ms));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            verdict.detector,
            cell(&verdict.stack),
            verdict.cost.len(),
            ping.on_text(2),
            ping.off_text(2),
            ping.difference_text(2),
            wall.on_text(1),
            wall.off_text(1),
            wall.difference_text(1),
            verdict.cost_reports,
        );
    }
    out.push('\n');
    out
}

/// One figure's rounds with the detector on and off.
struct Comparison {
    on: Option<[f64; 3]>,
    off: Option<[f64; 3]>,
}

impl Comparison {
    fn of(on: Vec<f64>, off: Vec<f64>) -> Comparison {
        Comparison {
            on: spread(on),
            off: spread(off),
        }
    }

    fn on_text(&self, decimals: usize) -> String {
        spread_text(self.on, decimals)
    }

    fn off_text(&self, decimals: usize) -> String {
        spread_text(self.off, decimals)
    }

    /// on − off of the medians, in bold when larger than both ranges.
    fn difference_text(&self, decimals: usize) -> String {
        let (Some(on), Some(off)) = (self.on, self.off) else {
            return "-".to_owned();
        };
        let difference = on[1] - off[1];
        let text = format!("{difference:+.decimals$}");
        let range = (on[2] - on[0]).max(off[2] - off[0]);
        if difference.abs() > range {
            format!("**{text}**")
        } else {
            text
        }
    }
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

fn first_report(verdict: &Verdict) -> String {
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

fn while_held(verdict: &Verdict) -> String {
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
fn samples(verdicts: &[Verdict]) -> String {
    let mut out =
        String::from("## What they print\n\nThe first report during `/bad`, verbatim:\n\n");
    for verdict in detected(verdicts) {
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
        let _ = writeln!(out, "- **{}**: {}.", detector.name, detector.about);
    }
    out.push('\n');
    out
}
