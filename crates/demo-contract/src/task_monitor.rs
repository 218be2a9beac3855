//! tokio-metrics' `TaskMonitor` as a stall detector, for the variant
//! [`AXUM_TASK_MONITOR`](crate::variant::AXUM_TASK_MONITOR): one monitor per route, wired as
//! the crate's `examples/axum.rs` wires it (each route's future instrumented, the monitors'
//! `intervals()` printed by a task spawned on the server's runtime), with two changes for a
//! side-by-side comparison: the slow-poll threshold is 100 ms, as every other detector's here,
//! instead of its default 50 µs, and the task samples every 100 ms instead of every second.
//!
//! A `TaskMonitor` times each poll of an instrumented future and, after the poll returns,
//! counts it as slow if it took longer than the threshold (tokio-metrics 0.5, `src/task.rs`,
//! `Instrumented::poll`). So it can only tell of a stall once it is over, and its reports come
//! from a task that shares the reactor thread it watches.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio_metrics::{TaskIntervals, TaskMonitor};

/// Polls longer than this are slow: the threshold of every detector in the comparison.
pub const SLOW_POLL: Duration = Duration::from_millis(100);

/// How often the reporting task reads the monitors.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// One monitor per route ("GET /bad"), made on the route's first request.
#[derive(Default)]
pub struct RouteMonitors {
    routes: Mutex<BTreeMap<String, (TaskMonitor, TaskIntervals)>>,
}

impl std::fmt::Debug for RouteMonitors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_set().entries(routes.keys()).finish()
    }
}

impl RouteMonitors {
    /// The monitor of `route`.
    fn of(&self, route: String) -> TaskMonitor {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        let (monitor, _) = routes.entry(route).or_insert_with(|| {
            let monitor = TaskMonitor::with_slow_poll_threshold(SLOW_POLL);
            let intervals = monitor.intervals();
            (monitor, intervals)
        });
        monitor.clone()
    }

    /// Prints one line on stderr for each route whose monitor counted slow polls since the
    /// last sample, every [`SAMPLE_EVERY`], forever: spawn it on the server's runtime.
    pub async fn report(&'static self) {
        loop {
            tokio::time::sleep(SAMPLE_EVERY).await;
            let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
            for (route, (_, intervals)) in routes.iter_mut() {
                let Some(interval) = intervals.next() else {
                    continue;
                };
                if interval.total_slow_poll_count > 0 {
                    eprintln!(
                        "tokio-metrics TaskMonitor: {route}: {} slow poll(s), {:.1} ms in them",
                        interval.total_slow_poll_count,
                        interval.total_slow_poll_duration.as_secs_f64() * 1e3
                    );
                }
            }
        }
    }
}

/// Middleware (added with `Router::layer`, so after routing): runs the rest of the request,
/// handler included, instrumented by its route's monitor.
pub async fn monitor_request(
    State(monitors): State<&'static RouteMonitors>,
    matched: Option<MatchedPath>,
    req: Request,
    next: Next,
) -> Response {
    let path = matched.as_ref().map_or("(unmatched)", MatchedPath::as_str);
    let route = format!("{} {path}", req.method());
    monitors.of(route).instrument(next.run(req)).await
}
