//! The stalls as metrics (feature `metrics`), through the [`metrics`](https://docs.rs/metrics)
//! facade: whatever exporter you install (Prometheus, OpenTelemetry, StatsD) receives them.
//!
//! Every metric has one label, `route`: the [`Label`] of the wrapped future, so there are as
//! many series as route names, never one per request. A poll under the threshold records
//! nothing: the metrics are written on the paths that already handle a slow poll (the
//! watchdog's scan, and the end of a poll the watchdog saw running), so a fast poll runs the
//! same code as without the feature.
//!
//! - `reactor_watch_slow_polls_total` (counter): polls of the route that returned after
//!   running longer than the threshold ([`Stalls::slow_polls`](crate::Stalls::slow_polls), by
//!   route).
//! - `reactor_watch_slow_poll_duration_seconds` (histogram): how long each of those polls held
//!   its thread.
//! - `reactor_watch_stalled_threads` (gauge): threads on which a poll of the route is past the
//!   threshold right now; raised by the watchdog while the poll runs, lowered when it returns.
//!
//! Install the recorder before you make the first label ([`Label::new`]; in a server, before
//! you build its routes): each route's counter and gauge start at 0 when its label is first
//! made, so that a query for an increase sees the first stall of a route that served before,
//! and the first label describes the metrics (unit and help text) to the recorder. A
//! histogram cannot start empty through the facade: its series appear with the route's first
//! slow poll.
//!
//! `metrics-exporter-prometheus` renders a histogram as a summary unless it is given buckets:
//! give it [`SLOW_POLL_BUCKETS`] for [`SLOW_POLL_DURATION_SECONDS`] (`set_buckets_for_metric`,
//! as the crate's `metrics` example does).

use std::sync::Once;

use ::metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};

use crate::Label;

/// Counter: slow polls that returned, per route.
pub const SLOW_POLLS_TOTAL: &str = "reactor_watch_slow_polls_total";
/// Histogram: how long each slow poll held its thread, in seconds, per route.
pub const SLOW_POLL_DURATION_SECONDS: &str = "reactor_watch_slow_poll_duration_seconds";
/// Gauge: threads on which a poll of the route is past the threshold right now.
pub const STALLED_THREADS: &str = "reactor_watch_stalled_threads";
/// The label every metric has: the route, as the wrapped future's [`Label`] names it.
pub const ROUTE: &str = "route";

/// Upper bounds, in seconds, for [`SLOW_POLL_DURATION_SECONDS`]: stalls, from 1 ms to 10 s,
/// not the microseconds of a healthy poll.
pub const SLOW_POLL_BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Gives the installed recorder each metric's unit and help text.
fn describe() {
    describe_counter!(
        SLOW_POLLS_TOTAL,
        Unit::Count,
        "Polls that returned after holding their thread longer than the threshold, by route."
    );
    describe_histogram!(
        SLOW_POLL_DURATION_SECONDS,
        Unit::Seconds,
        "How long each slow poll held its thread, by route."
    );
    describe_gauge!(
        STALLED_THREADS,
        Unit::Count,
        "Threads on which a poll of the route is past the threshold right now."
    );
}

/// A route name was interned for the first time: its counter and gauge start at 0. The
/// process's first one also describes the metrics.
pub(crate) fn route_named(route: &'static str) {
    static DESCRIBED: Once = Once::new();
    DESCRIBED.call_once(describe);
    counter!(SLOW_POLLS_TOTAL, ROUTE => route).increment(0);
    gauge!(STALLED_THREADS, ROUTE => route).increment(0.0);
}

/// A slow poll of `label` returned after `held_ns`.
pub(crate) fn slow_poll(label: Label, held_ns: u64) {
    let route = label.name();
    counter!(SLOW_POLLS_TOTAL, ROUTE => route).increment(1);
    histogram!(SLOW_POLL_DURATION_SECONDS, ROUTE => route).record(held_ns as f64 / 1e9);
}

/// One more (`up`) or one fewer thread held past the threshold by `label`.
pub(crate) fn stalled_thread(label: Label, up: bool) {
    let gauge = gauge!(STALLED_THREADS, ROUTE => label.name());
    if up {
        gauge.increment(1.0);
    } else {
        gauge.decrement(1.0);
    }
}
