//! The watch's clock: coarse, because a stall detector's threshold is in milliseconds.
//!
//! Every watched poll reads the clock once (and a poll the watchdog saw running, once more), so
//! the clock is most of what the watch costs.
//!
//! `Instant::now()` (`CLOCK_MONOTONIC`, a vDSO call that reads the TSC and scales it) costs
//! about three times as much here as `CLOCK_MONOTONIC_COARSE`, which returns the time of the
//! kernel's last tick from the vDSO's data page, with no TSC read (the crate's criterion bench,
//! `clock/*`, committed in results/poll-cost.md). The price is resolution: one scheduler tick,
//! `1 / CONFIG_HZ` (4 ms on this machine's kernel, 1–10 ms elsewhere; [`resolution`] asks the
//! kernel).
//!
//! So a duration measured here is within about one tick of the true one, either way: the
//! clock reads the time of the last tick the kernel ran, which is up to one tick old, and a
//! little older while the kernel runs a tick late (its steps are not all equal either: the
//! kernel slews them to keep time). A poll is certain to count as slow once it lasts
//! `threshold + 2 × resolution`, and one shorter than `threshold − 2 × resolution` never does.
//! For a 100 ms threshold and a 4 ms tick, that is the difference between 92 and 108 ms: far
//! from any stall worth reporting.
//!
//! `coarsetime` reads `CLOCK_MONOTONIC_COARSE` on Linux and Android and the nearest
//! equivalent elsewhere (its `Instant::_now`); `now_without_cache_update` skips its shared
//! "recent" cache, a store every thread would otherwise make to one cache line.

use std::sync::OnceLock;
use std::time::Duration;

/// Nanoseconds on the coarse monotonic clock: what slots store as a poll's start.
#[inline]
pub(crate) fn now_ns() -> u64 {
    let ticks = coarsetime::Instant::now_without_cache_update().as_ticks();
    coarsetime::Duration::from_ticks(ticks).as_nanos()
}

/// The watch clock's resolution: the step it advances by, the kernel's tick (measured once,
/// in up to two ticks, on first use). A duration the watch reports is off by up to this
/// much, and by a little more when the kernel runs a tick late: allow two.
pub fn resolution() -> Duration {
    static RESOLUTION: OnceLock<Duration> = OnceLock::new();
    *RESOLUTION.get_or_init(measure_resolution)
}

fn measure_resolution() -> Duration {
    let start = now_ns();
    let mut step = now_ns();
    while step == start {
        std::hint::spin_loop();
        step = now_ns();
    }
    // The first change may be partway through a tick; the next whole one is the resolution.
    let from = step;
    let mut next = now_ns();
    while next == from {
        std::hint::spin_loop();
        next = now_ns();
    }
    Duration::from_nanos(next - from)
}
