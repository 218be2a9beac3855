//! The price of the watch per poll, and per wrapped future.
//!
//! - `pending/*`: one `poll` of a future that stays `Pending`, wrapped once outside the loop:
//!   the per-poll cost alone (one clock read, the thread-local slot, a few atomic operations).
//! - `ready/*`: wrap a ready future and poll it once, per iteration: the per-future cost,
//!   which adds the one box and the `Arc` clone of `Watch::wrap`.
//!
//! Each comes unwrapped (the baseline), wrapped by an enabled watch (threshold 100 ms, so no
//! poll is slow), wrapped by a disabled one, and, for comparison, instrumented by a
//! tokio-metrics `TaskMonitor` (threshold 100 ms too), the other detector here that wraps
//! polls. Built with the `metrics` feature (and a Prometheus recorder installed, as an app
//! would), the enabled watch's functions are `wrapped_metrics`: scripts/poll-cost.sh runs that
//! build for them alone. `clock/*` is the one clock read a wrapped poll makes. The figures are
//! committed in results/poll-cost.md, which scripts/poll-cost.sh writes from criterion's files.
//!
//! - `request/*`: what a tower `WatchLayer` adds to one request, as the README and the axum
//!   example write it: `label` is `Label::new` of a route this thread has labelled before,
//!   `label_two_threads` the same on two threads at once (each call's wall time: a lock they
//!   shared would show here), `label_formatted` after a `format!` of method and route (an
//!   allocation per request), and `layer` one call of a `WatchService` (the label, the wrap,
//!   one poll of a ready future).

use std::future::{Future, pending, ready};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Waker};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use reactor_watch::tower::WatchLayer;
use reactor_watch::{Config, Label, Watch};
use tokio_metrics::TaskMonitor;
use tower_layer::Layer as _;
use tower_service::Service;

/// The enabled watch's function: a name of its own when the feature is compiled in.
const ON: &str = if cfg!(feature = "metrics") {
    "wrapped_metrics"
} else {
    "wrapped"
};

fn per_poll(c: &mut Criterion) {
    // Before the first label, as an app installs it: the route's series then exist.
    #[cfg(feature = "metrics")]
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the bench's only recorder");
    let mut cx = Context::from_waker(Waker::noop());
    let on = Watch::start(Config::new(Duration::from_millis(100)).on_report(|_| {}));
    let off = Watch::disabled();
    let label = Label::new("bench /poll");
    let monitor = TaskMonitor::with_slow_poll_threshold(Duration::from_millis(100));

    let mut group = c.benchmark_group("pending");
    group.bench_function("unwrapped", |b| {
        let mut future = pin!(pending::<u64>());
        b.iter(|| black_box(black_box(&mut future).as_mut().poll(&mut cx)));
    });
    for (name, watch) in [(ON, &on), ("disabled", &off)] {
        group.bench_function(name, |b| {
            let mut future = watch.wrap(label, pending::<u64>());
            b.iter(|| black_box(Pin::new(black_box(&mut future)).poll(&mut cx)));
        });
    }
    group.bench_function("tokio_metrics", |b| {
        let mut future = pin!(monitor.instrument(pending::<u64>()));
        b.iter(|| black_box(black_box(&mut future).as_mut().poll(&mut cx)));
    });
    group.finish();

    let mut group = c.benchmark_group("ready");
    group.bench_function("unwrapped", |b| {
        b.iter(|| black_box(pin!(ready(black_box(1_u64))).poll(&mut cx)));
    });
    for (name, watch) in [(ON, &on), ("disabled", &off)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut future = watch.wrap(label, ready(black_box(1_u64)));
                black_box(Pin::new(&mut future).poll(&mut cx))
            });
        });
    }
    group.bench_function("tokio_metrics", |b| {
        b.iter(|| black_box(pin!(monitor.instrument(ready(black_box(1_u64)))).poll(&mut cx)));
    });
    group.finish();

    // What the wrapped poll cannot avoid: its one clock read, on the coarse clock it uses and
    // on the precise one it does without (src/clock.rs).
    let mut group = c.benchmark_group("clock");
    group.bench_function("coarse", |b| {
        b.iter(|| black_box(coarsetime::Instant::now_without_cache_update()));
    });
    group.bench_function("instant_now", |b| {
        b.iter(|| black_box(std::time::Instant::now()));
    });
    group.finish();

    assert_eq!(on.stalls().slow_polls, 0, "a benchmarked poll was slow");
}

/// A service that answers every request at once: what is left is the layer's own cost.
#[derive(Clone)]
struct Answer;

impl Service<&'static str> for Answer {
    type Response = u64;
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<u64, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: &'static str) -> Self::Future {
        ready(Ok(1))
    }
}

fn per_request(c: &mut Criterion) {
    let mut cx = Context::from_waker(Waker::noop());
    let on = Watch::start(Config::new(Duration::from_millis(100)).on_report(|_| {}));
    let route = "/users/{id}";
    let mut group = c.benchmark_group("request");
    group.bench_function("label", |b| {
        b.iter(|| black_box(Label::new(black_box(route))));
    });
    // Two threads labelling at once, as two workers of a server do: each call's cost.
    group.bench_function("label_two_threads", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            std::thread::scope(|scope| {
                for _ in 0..2 {
                    scope.spawn(|| {
                        for _ in 0..iters {
                            black_box(Label::new(black_box(route)));
                        }
                    });
                }
            });
            start.elapsed()
        });
    });
    group.bench_function("label_formatted", |b| {
        b.iter(|| black_box(Label::new(&format!("GET {}", black_box(route)))));
    });
    group.bench_function("layer", |b| {
        let layer = WatchLayer::new(on.clone(), |route: &&'static str| Label::new(route));
        let mut service = layer.layer(Answer);
        b.iter(|| {
            let mut future = service.call(black_box(route));
            black_box(Pin::new(&mut future).poll(&mut cx))
        });
    });
    group.finish();
}

// Each poll takes nanoseconds: a second of samples after half a second of warm-up narrows the
// median's interval to a fraction of a nanosecond, as criterion's 3 s + 5 s defaults did.
fn settings() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        // 10,000 bootstrap resamples rather than 100,000: the analysis, not the sampling, was
        // most of the bench's time.
        .nresamples(10_000)
}

criterion_group! {
    name = benches;
    config = settings();
    targets = per_poll, per_request
}
criterion_main!(benches);
