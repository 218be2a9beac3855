//! A tiny std-only executor and a report-capturing sink, shared by the integration tests.

#![allow(dead_code)] // Each test binary uses its own part of this module.

pub mod example;

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use reactor_watch::{Config, Report, Watch};

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread until it is ready, parking between polls.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

/// Every report a watch made, in order.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<Report>>>);

impl Capture {
    pub fn push(&self, report: Report) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(report);
    }

    pub fn reports(&self) -> Vec<Report> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn still_running(&self) -> Vec<Report> {
        self.reports()
            .into_iter()
            .filter(|r| matches!(r, Report::StillRunning { .. }))
            .collect()
    }

    pub fn returned(&self) -> Vec<Report> {
        self.reports()
            .into_iter()
            .filter(|r| matches!(r, Report::Returned { .. }))
            .collect()
    }
}

/// A watch with this threshold whose reports go to `capture` (and to stderr, for the log).
pub fn watch(threshold_ms: u64, capture: &Capture) -> Watch {
    let reports = Arc::clone(&capture.0);
    watch_with(threshold_ms, move |report| {
        eprintln!("captured: {report}");
        reports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(report.clone());
    })
}

/// A watch with this threshold and sink.
pub fn watch_with(threshold_ms: u64, sink: impl Fn(&Report) + Send + Sync + 'static) -> Watch {
    Watch::start(Config::new(Duration::from_millis(threshold_ms)).on_report(sink))
}

/// `ms` milliseconds.
pub fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// How long a slow poll holds the thread in these tests, at a threshold of 50 ms: the
/// watchdog (every 25 ms) must report it while it runs, exactly once, and a window of
/// 250 ms leaves it room to be late on a busy machine (a window of 70 ms did not).
pub const STALL: Duration = Duration::from_millis(300);

/// Keeps this thread on the CPU for `wall` of wall time.
pub fn burn(wall: Duration) {
    let start = Instant::now();
    let mut x = 0_u64;
    while start.elapsed() < wall {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
    }
}
