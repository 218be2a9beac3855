//! The comparison's figures, and from which of its figures: the latency CDF of each route
//! (from the open-loop probe) and the timeline of every case.

use super::verdict;
use crate::experiments::comparison::Report;
use crate::plot::timeline::{TimelineGrid, TimelineRow};
use crate::plot::{self, LatencySamples, PlotError};
use crate::report::text::reactor_threads;
use burst_meter::case::Case;
use burst_meter::stats::{OpenLoopStats, Verdict};

/// The file name of a route's latency CDF, e.g. `ping-cdf-bad.svg`.
pub fn cdf_name(route: &str) -> String {
    format!("ping-cdf-{}.svg", route.trim_start_matches('/'))
}

/// The cases of `route`, at the first thread count, that carry open-loop samples: what
/// its latency CDF is drawn from.
fn cdf_cases<'a>(
    report: &'a Report,
    route: &'a str,
) -> impl Iterator<Item = (&'a Case, &'a OpenLoopStats)> {
    let threads = report.plan.threads.first().copied();
    report
        .cases
        .iter()
        .filter(move |case| case.route == route && Some(case.reactor_threads) == threads)
        .filter_map(|case| Some((case, case.open_loop.as_ref()?)))
}

/// The routes that get a latency CDF: those with open-loop samples.
pub fn cdf_routes(report: &Report) -> Vec<&'static str> {
    report
        .plan
        .routes
        .iter()
        .map(|route| route.path())
        .filter(|route| cdf_cases(report, route).next().is_some())
        .collect()
}

/// One route's latency CDF: the open-loop probe's samples (every scheduled ping, so a stall
/// shows at its true weight, and a ping that got no answer counts as one that never came),
/// one line per stack, at the first thread count.
pub fn latency_cdf(report: &Report, route: &str) -> Result<String, PlotError> {
    let samples: Vec<LatencySamples> = cdf_cases(report, route)
        .map(|(case, open)| LatencySamples {
            label: cdf_label(case),
            latencies_ms: open.raw_ms.clone(),
            failed: open.scheduled.saturating_sub(open.raw_ms.len()),
            answered: None,
        })
        .collect();
    let plan = &report.plan;
    let threads = plan.threads.first().copied().unwrap_or(1);
    let title = format!(
        "How long a /ping every {} ms waited during {} concurrent {route} of {} ms, {}",
        plan.ping_every_ms,
        plan.concurrency,
        plan.sleep_ms,
        reactor_threads(threads)
    );
    plot::latency_cdf(&title, &samples)
}

/// A stack's line in a CDF: its name, and whether its requests failed, since the line then
/// stands on a burst that was not the plan's. (The figure counts the failed pings.)
fn cdf_label(case: &Case) -> String {
    match case.verdict {
        Verdict::Failed => format!("{} (requests {})", case.target, verdict(case)),
        _ => case.target.clone(),
    }
}

/// The timeline figure's file name: every stack.
pub const TIMELINE: &str = "timeline.svg";

/// The cut timeline's file name: the glance's stacks ([`stacks::glance`]), for the README.
pub const TIMELINE_GLANCE: &str = "timeline-glance.svg";

/// The cases at the first thread count that carry a timeline.
fn timeline_cases(report: &Report) -> Vec<&Case> {
    let threads = report.plan.threads.first().copied();
    let cases = report.cases.iter();
    cases
        .filter(|case| Some(case.reactor_threads) == threads && case.timeline.is_some())
        .collect()
}

/// The timeline figures, as (file name, SVG): every stack's, and, for the comparison the
/// README stands on, the cut one of the stacks whose descriptions put them in the glance
/// ([`stacks::glance`]; when it has at least two of them).
/// None from results written before timelines were recorded.
pub fn timelines(report: &Report) -> Result<Vec<(String, String)>, PlotError> {
    let cases = timeline_cases(report);
    // One row per target: a run at several thread counts lists each target once per count.
    let mut targets: Vec<&str> = Vec::new();
    for target in report.targets() {
        if !targets.contains(&target) && cases.iter().any(|case| case.target == target) {
            targets.push(target);
        }
    }
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    let all = targets.len();
    let title = match targets[..] {
        [one] => format!("When each request and ping was answered, on {one}"),
        _ => format!("When each request and ping was answered, on all {all} stacks"),
    };
    let mut figures = vec![(
        TIMELINE.to_owned(),
        timeline(report, &cases, &targets, title)?,
    )];
    let glance: Vec<&str> = (stacks::glance().into_iter())
        .filter(|t| targets.contains(t))
        .collect();
    if glance.len() >= 2 && super::readme::stands_for_readme(report) {
        let shown = glance.len();
        let title =
            format!("When each request and ping was answered, on {shown} of the {all} stacks");
        let svg = timeline(report, &cases, &glance, title)?;
        figures.push((TIMELINE_GLANCE.to_owned(), svg));
    }
    Ok(figures)
}

/// The timeline of `targets`' cases: a row per target, a column per route.
fn timeline(
    report: &Report,
    cases: &[&Case],
    targets: &[&str],
    title: String,
) -> Result<String, PlotError> {
    let routes = &report.plan.routes;
    let rows = targets.iter().map(|&target| TimelineRow {
        label: target.to_owned(),
        panels: (routes.iter())
            .map(|route| {
                let case = cases
                    .iter()
                    .find(|c| c.target == target && c.route == route.path());
                case.and_then(|case| case.timeline.as_ref())
            })
            .collect(),
    });
    let plan = &report.plan;
    let threads = plan.threads.first().copied().unwrap_or(1);
    let grid = TimelineGrid {
        title,
        subtitle: format!(
            "{} concurrent requests of {} ms per route, a ping every {} ms, {}",
            plan.concurrency,
            plan.sleep_ms,
            plan.ping_every_ms,
            reactor_threads(threads)
        ),
        columns: (routes.iter())
            .map(|route| (route.path().to_owned(), route.route().runs().to_owned()))
            .collect(),
        rows: rows.collect(),
        sleep_ms: plan.sleep_ms as f64,
    };
    plot::timeline::timeline(&grid)
}

/// Every latency CDF of a report, as (file name, SVG).
pub fn latency_cdfs(report: &Report) -> Result<Vec<(String, String)>, PlotError> {
    cdf_routes(report)
        .into_iter()
        .map(|route| Ok((cdf_name(route), latency_cdf(report, route)?)))
        .collect()
}
