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
//! polls. `clock/*` is the one clock read a wrapped poll makes. The figures are committed in
//! results/poll-cost.md, which scripts/poll-cost.sh writes from criterion's files.

use std::future::{Future, pending, ready};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Waker};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use reactor_watch::{Config, Watch};
use tokio_metrics::TaskMonitor;

fn per_poll(c: &mut Criterion) {
    let mut cx = Context::from_waker(Waker::noop());
    let on = Watch::start(Config::new(Duration::from_millis(100)).on_report(|_| {}));
    let off = Watch::disabled();
    let label = on.label("bench /poll");
    let monitor = TaskMonitor::with_slow_poll_threshold(Duration::from_millis(100));

    let mut group = c.benchmark_group("pending");
    group.bench_function("unwrapped", |b| {
        let mut future = pin!(pending::<u64>());
        b.iter(|| black_box(black_box(&mut future).as_mut().poll(&mut cx)));
    });
    for (name, watch) in [("wrapped", &on), ("disabled", &off)] {
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
    for (name, watch) in [("wrapped", &on), ("disabled", &off)] {
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
    targets = per_poll
}
criterion_main!(benches);
