//! The sweep's figures: the wall time against N per route, and when each request of the
//! largest burst came back.

use crate::experiments::sweep::SweepReport;
use crate::plot::{self, LatencySamples, PlotError, Series};
use crate::report::text::reactor_threads;
use burst_meter::work::WorkPath;

/// The file name of a route's sweep plot, e.g. `wall-vs-n-ok-blocking.svg`.
pub fn sweep_plot_name(route: WorkPath) -> String {
    format!("wall-vs-n-{}.svg", route.path().trim_start_matches('/'))
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
        let axes = ("completion time (ms)", "fraction of requests done");
        return plot::cdf(&format!("{route}: no point ran"), axes, &[], None);
    };
    let samples: Vec<LatencySamples> = points
        .filter(|p| p.n == n)
        .map(|p| LatencySamples {
            label: p.target.clone(),
            latencies_ms: p.completions_ms.clone(),
            failed: p.err,
            answered: Some(p.ok),
        })
        .collect();
    let plan = &sweep.plan;
    let title = format!(
        "{route}: when each of {n} requests came back, sleep {} ms, {}",
        plan.sleep_ms,
        reactor_threads(plan.threads)
    );
    let axes = (
        "completion time from the first send (ms)",
        "fraction of requests done",
    );
    plot::cdf(&title, axes, &samples, None)
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
    use burst_meter::environment::Environment;
    use burst_meter::session::Confounders;
    use burst_meter::stats::RequestTimes;

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
            environment: Environment::with_stamp("0123456789abcdef".into()),
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
            markdown.contains("| a | 20 | 200 | - | skipped | skipped |"),
            "{markdown}"
        );
        assert_eq!(
            sweep_plot_name(WorkPath::WORK[1]),
            "wall-vs-n-ok-blocking.svg"
        );
    }
}
