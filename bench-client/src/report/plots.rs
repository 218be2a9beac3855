//! Which figures a report draws, and from which of its figures: the latency CDF of each
//! route (from the open-loop probe), the timeline of every case, and the sweep's wall time
//! against N per route.

use super::text::{reactor_threads, verdict};
use super::{Report, SweepReport};
use crate::experiments::comparison::Case;
use crate::measure::stats::{OpenLoopStats, Verdict};
use crate::measure::work::WorkPath;
use crate::plot::timeline::{TimelineGrid, TimelineRow};
use crate::plot::{self, LatencySamples, PlotError, Series};

/// The file name of a route's latency CDF, e.g. `ping-cdf-bad.svg`.
pub fn cdf_name(route: &str) -> String {
    format!("ping-cdf-{}.svg", route.trim_start_matches('/'))
}

/// The file name of a route's sweep plot, e.g. `wall-vs-n-ok-blocking.svg`.
pub fn sweep_plot_name(route: WorkPath) -> String {
    format!("wall-vs-n-{}.svg", route.path().trim_start_matches('/'))
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
/// shows at its true weight), one line per stack, at the first thread count.
pub fn latency_cdf(report: &Report, route: &str) -> Result<String, PlotError> {
    let samples: Vec<LatencySamples> = cdf_cases(report, route)
        .map(|(case, open)| LatencySamples {
            label: cdf_label(case, open),
            latencies_ms: open.raw_ms.clone(),
        })
        .collect();
    let plan = &report.plan;
    let threads = plan.threads.first().copied().unwrap_or(1);
    let title = format!(
        "{route}: /ping latency from its scheduled send, {} concurrent × {} ms, {}",
        plan.concurrency,
        plan.sleep_ms,
        reactor_threads(threads)
    );
    plot::latency_cdf(&title, &samples)
}

/// A stack's line in a CDF: its name, and what failed, since the line then stands on fewer
/// samples or on a burst that was not the plan's.
fn cdf_label(case: &Case, open: &OpenLoopStats) -> String {
    let mut label = case.target.clone();
    if case.verdict == Verdict::Failed {
        label.push_str(&format!(" (requests {})", verdict(case)));
    }
    if open.errors > 0 {
        label.push_str(&format!(
            " ({} of {} pings answered)",
            open.answered, open.scheduled
        ));
    }
    label
}

/// The timeline figure's file name.
pub const TIMELINE: &str = "timeline.svg";

/// The race's figure: each trial's slowest closed-loop wait.
pub const RACE: &str = "race.svg";

/// The timeline of every case at the first thread count: a row per target, a column per
/// route. `None` when no case carries a timeline (results from before it was recorded).
pub fn timeline(report: &Report) -> Option<Result<String, PlotError>> {
    let threads = report.plan.threads.first().copied();
    let cases = report
        .cases
        .iter()
        .filter(|case| Some(case.reactor_threads) == threads);
    let cases: Vec<&Case> = cases.filter(|case| case.timeline.is_some()).collect();
    if cases.is_empty() {
        return None;
    }
    let mut targets = report.targets();
    targets.retain(|target| cases.iter().any(|case| case.target == *target));
    let routes = &report.plan.routes;
    let rows = targets.into_iter().map(|target| TimelineRow {
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
    let grid = TimelineGrid {
        title: format!(
            "{} concurrent requests of {} ms per route, a ping every {} ms, {}",
            plan.concurrency,
            plan.sleep_ms,
            plan.ping_every_ms,
            reactor_threads(threads.unwrap_or(1))
        ),
        columns: (routes.iter())
            .map(|route| (route.path().to_owned(), route.route().runs().to_owned()))
            .collect(),
        rows: rows.collect(),
        sleep_ms: plan.sleep_ms as f64,
    };
    Some(plot::timeline::timeline(&grid))
}

/// Every latency CDF of a report, as (file name, SVG).
pub fn latency_cdfs(report: &Report) -> Result<Vec<(String, String)>, PlotError> {
    cdf_routes(report)
        .into_iter()
        .map(|route| Ok((cdf_name(route), latency_cdf(report, route)?)))
        .collect()
}

/// The lines of one route's sweep plot: one per target, the points that ran.
pub fn sweep_series(sweep: &SweepReport, route: WorkPath) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for point in sweep.points.iter().filter(|p| p.route == route.path()) {
        let xy = (point.n as f64, point.wall_ms);
        match series.iter_mut().find(|line| line.label == point.target) {
            Some(line) => line.points.push(xy),
            None => series.push(Series {
                label: point.target.clone(),
                points: vec![xy],
            }),
        }
    }
    series
}

/// The file name of a route's completion-time plot, e.g. `completions-ok-blocking.svg`.
pub fn completions_plot_name(route: WorkPath) -> String {
    format!("completions-{}.svg", route.path().trim_start_matches('/'))
}

/// When each request of one burst per stack came back, as a CDF: the largest N that ran on
/// `route`. A bounded pool shows as steps, one per round of the pool.
pub fn completions_plot(sweep: &SweepReport, route: WorkPath) -> Result<String, PlotError> {
    let points = sweep.points.iter().filter(|p| p.route == route.path());
    let Some(n) = points.clone().map(|p| p.n).max() else {
        return plot::latency_cdf(&format!("{route}: no point ran"), &[]);
    };
    let samples: Vec<LatencySamples> = points
        .filter(|p| p.n == n)
        .map(|p| LatencySamples {
            label: p.target.clone(),
            latencies_ms: p.completions_ms.clone(),
        })
        .collect();
    let plan = &sweep.plan;
    let title = format!(
        "{route}: when each of {n} requests came back, sleep {} ms, {}",
        plan.sleep_ms,
        reactor_threads(plan.threads)
    );
    plot::cdf(
        &title,
        "completion time from the first send (ms)",
        "fraction of requests done",
        &samples,
    )
}

/// The sweep's ideal for `route` as a guide line, where the plan tells it.
fn ideal_series(sweep: &SweepReport, route: WorkPath) -> Option<Series> {
    let plan = &sweep.plan;
    let label = format!("ideal: {}", plan.ideal_text(route)?);
    let points = (plan.concurrency.iter())
        .filter_map(|&n| Some((n as f64, plan.ideal_ms(route, n)?)))
        .collect();
    Some(Series { label, points })
}

/// Every sweep plot, as (file name, SVG).
pub fn sweep_plots(sweep: &SweepReport) -> Result<Vec<(String, String)>, PlotError> {
    let plan = &sweep.plan;
    let mut plots = Vec::new();
    for &route in &plan.routes {
        let title = format!(
            "{route}: wall time of N concurrent requests, sleep {} ms, {}",
            plan.sleep_ms,
            reactor_threads(plan.threads)
        );
        let ideal = ideal_series(sweep, route);
        let svg = plot::wall_vs_concurrency(&title, &sweep_series(sweep, route), ideal.as_ref())?;
        plots.push((sweep_plot_name(route), svg));
        plots.push((
            completions_plot_name(route),
            completions_plot(sweep, route)?,
        ));
    }
    Ok(plots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::sweep::{Point, SweepPlan};
    use crate::measure::environment::Environment;
    use crate::measure::session::Confounders;
    use crate::measure::stats::RequestTimes;

    #[test]
    fn series_follow_the_points_that_ran() {
        let point = |target: &str, n: usize, wall_ms: f64| Point {
            target: target.into(),
            route: "/bad".into(),
            n,
            wall_ms,
            ok: n,
            err: 0,
            errors: Vec::new(),
            requests: RequestTimes::from_ms(&[wall_ms]),
            completions_ms: vec![wall_ms],
            confounders: Confounders::default(),
        };
        let sweep = SweepReport {
            environment: Environment::capture(crate::stamps::SWEEP),
            plan: SweepPlan::default(),
            command: "bench-client sweep".into(),
            points: vec![
                point("a", 1, 20.0),
                point("a", 10, 200.0),
                point("b", 1, 21.0),
            ],
            failures: Vec::new(),
        };
        let series = sweep_series(&sweep, WorkPath::WORK[0]);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points, [(1.0, 20.0), (10.0, 200.0)]);
        assert!(sweep_series(&sweep, WorkPath::WORK[2]).is_empty());
        let markdown = super::super::sweep_md::sweep_markdown(&sweep);
        assert!(
            markdown.contains("| a | 20 | 200 | - | - | skipped |"),
            "{markdown}"
        );
        assert_eq!(
            sweep_plot_name(WorkPath::WORK[1]),
            "wall-vs-n-ok-blocking.svg"
        );
    }
}
