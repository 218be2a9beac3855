//! The concurrency sweep: each work route at N = 1, 10, 100, 1,000, 10,000 concurrent
//! requests on each stack, with a short sleep, timed as the comparison's bursts are (no
//! pinger). What to look for: `/ok-await` stays near one sleep, `/ok-blocking` steps up once
//! N passes the blocking pool's size, `/bad` grows linearly with N.

use std::fmt::Write as _;
use std::path::Path;

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use crate::bench::{ErrorCount, Failure, PAUSE, Running};
use crate::burst::{self, REQUEST_TIMEOUT};
use crate::environment::Environment;
use crate::plot::{self, Series};
use crate::report::{reactor_threads, write_atomically};
use crate::target::Target;

/// What to sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    #[serde(with = "crate::bench::route_paths")]
    pub routes: Vec<Route>,
    pub concurrency: Vec<usize>,
    pub sleep_ms: u64,
    pub threads: usize,
}

impl Default for SweepPlan {
    fn default() -> SweepPlan {
        SweepPlan {
            routes: Route::WORK.to_vec(),
            concurrency: vec![1, 10, 100, 1_000, 10_000],
            sleep_ms: 20,
            threads: 1,
        }
    }
}

impl SweepPlan {
    /// Why a burst is not worth sending: `/bad` runs its N sleeps one after another per
    /// thread, and past the request timeout its last requests would fail by design.
    pub fn skip_reason(&self, route: Route, n: usize) -> Option<String> {
        let serial_ms = n as f64 * self.sleep_ms as f64 / self.threads as f64;
        let budget_ms = REQUEST_TIMEOUT.as_secs_f64() * 1000.0 * 0.8;
        (route == Route::Bad && serial_ms > budget_ms).then(|| {
            format!(
                "skipped: {n} × {} ms / {} thread(s) = {:.0} s, past the {} s request timeout",
                self.sleep_ms,
                self.threads,
                serial_ms / 1000.0,
                REQUEST_TIMEOUT.as_secs()
            )
        })
    }
}

/// One burst of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub target: String,
    pub route: String,
    pub n: usize,
    /// `None` when the point was skipped.
    pub wall_ms: Option<f64>,
    pub ok: usize,
    pub err: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Everything one sweep produced: `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub environment: Environment,
    pub plan: SweepPlan,
    pub command: String,
    pub points: Vec<Point>,
    pub failures: Vec<Failure>,
}

/// Runs the sweep, target after target; `progress` hears about each point before it runs.
pub async fn run(
    targets: &[Target],
    plan: &SweepPlan,
    progress: &mut impl FnMut(&str),
) -> (Vec<Point>, Vec<Failure>) {
    let mut points = Vec::new();
    let mut failures = Vec::new();
    for target in targets {
        let label = target.label();
        let failed = |route, reason| Failure::new(label, plan.threads, route, reason);
        let mut running = match Running::start(target, plan.threads, plan.sleep_ms).await {
            Ok(running) => running,
            Err(reason) => {
                progress(&format!("FAILED {label}: {reason}"));
                failures.push(failed(None, reason));
                continue;
            }
        };
        'routes: for &route in &plan.routes {
            for &n in &plan.concurrency {
                let mut point = Point {
                    target: label.to_owned(),
                    route: route.path().to_owned(),
                    n,
                    wall_ms: None,
                    ok: 0,
                    err: 0,
                    errors: Vec::new(),
                    skipped: plan.skip_reason(route, n),
                };
                if point.skipped.is_none() {
                    progress(&format!("{label} {route} N={n}"));
                    let path = format!("{}{}", route.path(), running.query);
                    let burst = burst::fire(&running.endpoint, &path, n, REQUEST_TIMEOUT).await;
                    point.wall_ms = Some(burst.wall.as_secs_f64() * 1000.0);
                    point.ok = burst.ok();
                    point.err = burst.err();
                    point.errors = burst
                        .errors()
                        .into_iter()
                        .map(|(reason, count)| ErrorCount { reason, count })
                        .collect();
                    tokio::time::sleep(PAUSE).await;
                }
                points.push(point);
                if let Some(reason) = running.died() {
                    progress(&format!("FAILED {label}: {reason}"));
                    failures.push(failed(Some(route), reason));
                    break 'routes;
                }
            }
        }
        if let Err(reason) = running.finish().await {
            failures.push(failed(None, reason));
        }
    }
    (points, failures)
}

/// The blocking pool each stack offloads to, by its documentation: what the `/ok-blocking`
/// plot's steps are read against.
pub const POOL_SIZES: &[(&str, &str)] = &[
    (
        "demo-axum",
        "tokio `spawn_blocking`: 512 threads (`max_blocking_threads`)",
    ),
    (
        "demo-actix",
        "actix-web `web::block`: 512 / cores threads per worker (`worker_max_blocking_threads`)",
    ),
    (
        "demo-hyper-tokio",
        "tokio `spawn_blocking`: 512 threads (`max_blocking_threads`)",
    ),
    (
        "demo-hyper-async-std",
        "the `blocking` crate: 500 threads (`BLOCKING_MAX_THREADS`)",
    ),
    (
        "demo-hyper-smol",
        "the `blocking` crate: 500 threads (`BLOCKING_MAX_THREADS`)",
    ),
];

impl SweepReport {
    /// The file name of a route's plot, e.g. `wall-vs-n-ok-blocking.svg`.
    pub fn plot_name(route: Route) -> String {
        format!("wall-vs-n-{}.svg", route.path().trim_start_matches('/'))
    }

    /// The lines of one route's plot: one per target, the points that ran.
    pub fn series(&self, route: Route) -> Vec<Series> {
        let mut series: Vec<Series> = Vec::new();
        for point in self
            .points
            .iter()
            .filter(|point| point.route == route.path())
        {
            let Some(wall_ms) = point.wall_ms else {
                continue;
            };
            match series.iter_mut().find(|line| line.label == point.target) {
                Some(line) => line.points.push((point.n as f64, wall_ms)),
                None => series.push(Series {
                    label: point.target.clone(),
                    points: vec![(point.n as f64, wall_ms)],
                }),
            }
        }
        series
    }

    /// `SWEEP.md`: environment, parameters, one table per route (stacks × N), the plots.
    pub fn to_markdown(&self) -> String {
        let plan = &self.plan;
        let mut out = String::from("# Concurrency sweep\n\n");
        let _ = writeln!(
            out,
            "Written by `{}`; every figure below comes from that run. Do not edit by hand.\n",
            self.command
        );
        out.push_str("## Environment\n\n");
        out.push_str(&self.environment.to_markdown());
        let concurrency: Vec<String> = plan.concurrency.iter().map(usize::to_string).collect();
        let _ = writeln!(
            out,
            "\n## Parameters\n\n- N = {} concurrent requests, each sleeping {} ms, on {}; \
             each request on its own connection; no pinger\n",
            concurrency.join(", "),
            plan.sleep_ms,
            reactor_threads(plan.threads)
        );
        for &route in &plan.routes {
            let _ = writeln!(
                out,
                "## `{route}`: wall ms\n\n![{route}]({})\n",
                Self::plot_name(route)
            );
            let _ = writeln!(
                out,
                "| stack | {} |",
                concurrency
                    .iter()
                    .map(|n| format!("N={n}"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            let _ = writeln!(out, "|---|{}", "---:|".repeat(concurrency.len()));
            let mut targets: Vec<&str> = self
                .points
                .iter()
                .map(|point| point.target.as_str())
                .collect();
            targets.dedup();
            for target in targets {
                let cells: Vec<String> =
                    plan.concurrency
                        .iter()
                        .map(|&n| {
                            let point = self.points.iter().find(|p| {
                                p.target == target && p.route == route.path() && p.n == n
                            });
                            match point {
                                Some(Point {
                                    wall_ms: Some(wall),
                                    err: 0,
                                    ..
                                }) => format!("{wall:.0}"),
                                Some(Point {
                                    wall_ms: Some(wall),
                                    err,
                                    ..
                                }) => format!("{wall:.0} ({err} failed)"),
                                Some(Point {
                                    skipped: Some(_), ..
                                }) => "skipped".to_owned(),
                                _ => "-".to_owned(),
                            }
                        })
                        .collect();
                let _ = writeln!(out, "| {target} | {} |", cells.join(" | "));
            }
            if route == Route::OkBlocking {
                out.push_str("\nThe blocking pools, by their documentation:\n\n");
                for (target, pool) in POOL_SIZES {
                    let _ = writeln!(out, "- {target}: {pool}");
                }
            }
            if let Some(reason) = self.points.iter().find(|p| p.route == route.path()).and(
                self.points
                    .iter()
                    .filter(|p| p.route == route.path())
                    .find_map(|p| p.skipped.clone()),
            ) {
                let _ = writeln!(
                    out,
                    "\n`skipped`: {}",
                    reason.trim_start_matches("skipped: ")
                );
            }
            out.push('\n');
        }
        if !self.failures.is_empty() {
            out.push_str("## Failures\n\n");
            for failure in &self.failures {
                let _ = writeln!(
                    out,
                    "- {}: {}",
                    failure.target,
                    failure.reason.replace('\n', " ")
                );
            }
        }
        out
    }

    /// Writes `SWEEP.md`, `sweep.json` and one plot per route into `dir`, each atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for &route in &self.plan.routes {
            let title = format!(
                "{route}: wall time of N concurrent requests, sleep {} ms, {}",
                self.plan.sleep_ms,
                reactor_threads(self.plan.threads)
            );
            let reference = format!("one sleep ({} ms)", self.plan.sleep_ms);
            let svg = plot::wall_vs_concurrency(
                &title,
                &self.series(route),
                Some((self.plan.sleep_ms as f64, &reference)),
            )
            .map_err(std::io::Error::other)?;
            write_atomically(&dir.join(Self::plot_name(route)), svg.as_bytes())?;
        }
        let json = serde_json::to_string_pretty(self).expect("a sweep always serialises") + "\n";
        write_atomically(&dir.join("sweep.json"), json.as_bytes())?;
        write_atomically(&dir.join("SWEEP.md"), self.to_markdown().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sweep_is_the_issue_s() {
        let plan = SweepPlan::default();
        assert_eq!(plan.concurrency, [1, 10, 100, 1_000, 10_000]);
        assert_eq!(plan.routes, Route::WORK);
    }

    #[test]
    fn only_bad_bursts_that_cannot_finish_are_skipped() {
        let plan = SweepPlan::default();
        assert_eq!(
            plan.skip_reason(Route::Bad, 1_000),
            None,
            "20 s fits in the 30 s timeout"
        );
        let reason = plan
            .skip_reason(Route::Bad, 10_000)
            .expect("200 s does not");
        assert!(reason.contains("200 s"), "{reason}");
        assert_eq!(plan.skip_reason(Route::OkBlocking, 10_000), None);
        assert_eq!(plan.skip_reason(Route::OkAwait, 10_000), None);
        // The budget is 80% of the timeout, 24 s: 10,000 × 8 ms / 4 = 20 s fits.
        let four = SweepPlan {
            threads: 4,
            sleep_ms: 8,
            ..SweepPlan::default()
        };
        assert_eq!(four.skip_reason(Route::Bad, 10_000), None);
    }

    #[test]
    fn series_follow_the_points_that_ran() {
        let point = |target: &str, n: usize, wall_ms: Option<f64>| Point {
            target: target.into(),
            route: "/bad".into(),
            n,
            wall_ms,
            ok: n,
            err: 0,
            errors: Vec::new(),
            skipped: wall_ms.is_none().then(|| "skipped: too long".into()),
        };
        let report = SweepReport {
            environment: Environment::capture(),
            plan: SweepPlan::default(),
            command: "bench-client sweep".into(),
            points: vec![
                point("a", 1, Some(20.0)),
                point("a", 10, Some(200.0)),
                point("a", 10_000, None),
                point("b", 1, Some(21.0)),
            ],
            failures: Vec::new(),
        };
        let series = report.series(Route::Bad);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points, [(1.0, 20.0), (10.0, 200.0)]);
        assert!(report.series(Route::OkAwait).is_empty());
        let markdown = report.to_markdown();
        assert!(
            markdown.contains("| a | 20 | 200 | - | - | skipped |"),
            "{markdown}"
        );
        assert_eq!(
            SweepReport::plot_name(Route::OkBlocking),
            "wall-vs-n-ok-blocking.svg"
        );
    }
}
