//! What the `metrics` feature records, read back from the Prometheus exporter's text (its
//! recorder only, no listener): a stall counted and timed under its route, the gauge up while
//! it runs (read in the watchdog's report, made while the poll still runs) and down when it
//! ends, and nothing for fast polls. The real Prometheus server is tests/prometheus.rs.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use common::{STALL, block_on, watch_with};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use reactor_watch::metrics::{
    SLOW_POLL_BUCKETS, SLOW_POLL_DURATION_SECONDS, SLOW_POLLS_TOTAL, STALLED_THREADS,
};
use reactor_watch::{Label, Report, Watch};

/// The process's recorder, installed before any label of these tests is made.
fn exporter() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full(SLOW_POLL_DURATION_SECONDS.into()),
                &SLOW_POLL_BUCKETS,
            )
            .expect("buckets")
            .install_recorder()
            .expect("the only recorder of this test binary")
    })
}

/// The value of the series `series` (a metric name and its labels, as the exporter writes
/// them) in the exporter's text; `None` if it has no such series.
fn value(series: &str) -> Option<f64> {
    let text = exporter().render();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))?;
    Some(line.parse().expect("a number"))
}

fn counter(route: &str) -> Option<f64> {
    value(&format!("{SLOW_POLLS_TOTAL}{{route=\"{route}\"}}"))
}

fn gauge(route: &str) -> Option<f64> {
    value(&format!("{STALLED_THREADS}{{route=\"{route}\"}}"))
}

fn histogram(route: &str, part: &str) -> Option<f64> {
    value(&format!(
        "{SLOW_POLL_DURATION_SECONDS}_{part}{{route=\"{route}\"}}"
    ))
}

/// A watch at 50 ms whose "still running" reports of `route` keep the gauge's value then.
fn watch_reading_the_gauge(route: &'static str) -> (Watch, Arc<Mutex<Vec<Option<f64>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let during = Arc::clone(&seen);
    let watch = watch_with(50, move |report| {
        if let Report::StillRunning { label, .. } = report
            && *label == route
        {
            let gauge = gauge(route);
            during
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(gauge);
        }
    });
    (watch, seen)
}

#[test]
fn a_stall_is_counted_and_timed_by_route_and_held_in_the_gauge_while_it_runs() {
    let route = "metrics-test /stall";
    exporter();
    let label = Label::new(route);
    assert_eq!(counter(route), Some(0.0), "a route's counter starts at 0");
    assert_eq!(gauge(route), Some(0.0), "and its gauge");
    let (watch, seen) = watch_reading_the_gauge(route);
    block_on(watch.wrap(label, async { std::thread::sleep(STALL) }));

    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(
        seen,
        [Some(1.0)],
        "the gauge in the one report made while it ran"
    );
    assert_eq!(gauge(route), Some(0.0), "once it returned");
    assert_eq!(counter(route), Some(1.0));
    assert_eq!(histogram(route, "count"), Some(1.0));
    // Each bucket holds the stall or not by the duration the watch measured for it.
    let held = watch.stalls().by_route[route].longest.as_secs_f64();
    let text = exporter().render();
    for bound in SLOW_POLL_BUCKETS {
        let series =
            format!("{SLOW_POLL_DURATION_SECONDS}_bucket{{route=\"{route}\",le=\"{bound}\"}} ");
        let line = text.lines().find_map(|line| line.strip_prefix(&series));
        let expected = if held <= bound { "1" } else { "0" };
        assert_eq!(line, Some(expected), "bucket {bound} for {held} s:\n{text}");
    }
}

#[test]
fn fast_polls_record_nothing() {
    let route = "metrics-test /fast";
    exporter();
    let label = Label::new(route);
    let watch = watch_with(50, |report| panic!("no report expected: {report}"));
    for _ in 0..1000 {
        block_on(watch.wrap(label, async {}));
    }
    assert_eq!(watch.stalls().slow_polls, 0);
    assert_eq!(
        counter(route),
        Some(0.0),
        "only the series made with the label"
    );
    assert_eq!(gauge(route), Some(0.0));
    assert_eq!(histogram(route, "count"), None, "no duration recorded");
}

/// A poll that unwinds returns through no timer: the watchdog's next scan lowers the gauge.
#[test]
fn the_gauge_comes_down_after_a_poll_that_panicked() {
    let route = "metrics-test /panic";
    exporter();
    let label = Label::new(route);
    let (watch, seen) = watch_reading_the_gauge(route);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        block_on(watch.wrap(label, async {
            std::thread::sleep(STALL);
            panic!("the handler panics after its stall");
        }));
    }));
    assert!(unwound.is_err());
    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(seen, [Some(1.0)], "the gauge while it ran");
    let deadline = Instant::now() + Duration::from_secs(5);
    while gauge(route) != Some(0.0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(gauge(route), Some(0.0), "after the next scans");
    assert_eq!(
        counter(route),
        Some(0.0),
        "a poll that unwound never returned"
    );
}
