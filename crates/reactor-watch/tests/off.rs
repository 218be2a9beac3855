//! Threshold zero is off, and the watchdog lives exactly as long as the watch. Its own test
//! binary: it counts the process's `reactor-watch` threads, which other tests would start.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::block_on;
use reactor_watch::{Config, Label, Stalls, Watch, current_label};

/// Threads of this process named `reactor-watch` (Linux: from `/proc`); `None` elsewhere.
fn watchdog_threads() -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == "reactor-watch")
            .count(),
    )
}

/// Waits up to a second for the count to become `expected`.
fn assert_watchdogs(expected: usize) {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let Some(count) = watchdog_threads() else {
            return;
        };
        if count == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{count} watchdog threads, expected {expected}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn threshold_zero_is_off_and_the_last_handle_stops_the_watchdog() {
    assert_watchdogs(0);

    for off in [
        Watch::disabled(),
        Watch::start(Config {
            threshold: Duration::ZERO,
            ..Config::default()
        }),
    ] {
        assert!(!off.is_enabled());
        assert_eq!(off.threshold(), Duration::ZERO);
        let label = Label::new("GET /off");
        let output = block_on(off.wrap(label, async {
            // No slot write: to this thread, no watched poll is running.
            assert_eq!(current_label(), None);
            thread::sleep(Duration::from_millis(30));
            7
        }));
        assert_eq!(output, 7);
        assert_eq!(off.stalls(), Stalls::default());
        assert_eq!(off.stalls().threshold, Duration::ZERO);
        assert_eq!(
            off.stalls_json(),
            r#"{"threshold_ms":0,"slow_polls":0,"longest_ms":0,"by_route":{},"still_running_reports":0}"#
        );
        assert_watchdogs(0);
    }

    let on = Watch::start(Config::new(Duration::from_millis(20)).on_report(|_| {}));
    assert!(on.is_enabled());
    assert_watchdogs(1);
    let label = Label::new("GET /on");
    let future = on.wrap(label, async { thread::sleep(Duration::from_millis(50)) });
    let clone = on.clone();
    drop(on);
    // A clone and a wrapped future still hold it.
    assert_watchdogs(1);
    block_on(future);
    assert_eq!(clone.stalls().slow_polls, 1);
    drop(clone);
    // The drop of the last handle wakes and joins it.
    assert_watchdogs(0);
}

#[test]
fn the_default_config_is_on_at_asyncios_threshold() {
    let config = Config::default();
    assert_eq!(config.threshold, Duration::from_millis(100));
    assert_eq!(config.threshold, Config::DEFAULT_THRESHOLD);
    assert!(config.on_report.is_none(), "reports go to stderr");
}
