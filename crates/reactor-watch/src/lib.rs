//! A runtime-agnostic reactor-stall detector: the Rust answer to asyncio's debug
//! mode (`loop.slow_callback_duration`).
//!
//! # What a reactor stall is
//!
//! An async executor runs many tasks on few threads by polling each task until it returns
//! `Pending`, then moving on. A poll that does not return promptly (because it calls
//! `std::thread::sleep`, a blocking read, a contended `std::sync::Mutex`, or just computes for
//! a long time) keeps its thread from polling anything else: every other task on that thread
//! waits, and on a reactor thread so do accepts, reads and timers. That is a stall. Nothing
//! fails; latency quietly grows for everyone who shares the thread.
//!
//! # Why a per-poll timer
//!
//! A stall is a property of one `poll` call, not of a request: a handler that awaits a slow
//! database for 2 s is fine (its polls are short and the thread is free meanwhile), while a
//! handler that answers in 120 ms is not if it spent them in one blocking call. So
//! [`Watch::wrap`] times every poll of the future it wraps, from just before the inner `poll`
//! to just after, and a poll longer than the threshold is a *slow poll*: counted per label
//! ([`Stalls`]) and reported when it returns ([`Report::Returned`]).
//!
//! # Why a watchdog thread
//!
//! A timer that reads the clock after the poll learns of a stall only when it is over, and of
//! a poll that never returns (a deadlock, a read with no timeout) never. So each poll also
//! stamps what it is doing in its thread's slot, and one watchdog thread per watch, named
//! `reactor-watch` (the pattern of Vert.x's `BlockedThreadChecker` and Go's `sysmon`), scans
//! every slot each `threshold / 2`. The first time it sees a poll running past the threshold
//! it reports it, once, while it is still running ([`Report::StillRunning`]).
//!
//! # Why it is cheap
//!
//! The watchdog also spares the timer half its work. It marks every poll it sees running, and
//! since it scans every `threshold / 2`, every poll long enough to be slow is one it marked:
//! only those read the clock again when they return. So a poll's fast path is one read of a
//! coarse clock (one kernel tick of resolution, [`clock_resolution`]), two loads and two plain
//! atomic stores to its thread's own slot: no lock, no allocation, no read-modify-write.
//!
//! # What it tells
//!
//! With a threshold of 100 ms and a handler that sleeps 500 ms, stderr gets (unless a
//! [`Config::on_report`] sink takes the reports instead):
//!
//! ```text
//! reactor thread main blocked for 118 ms in GET /bad (still running)
//! GET /bad held reactor thread main for 501 ms (limit 100 ms; 0.1 ms on the CPU in its last 452 ms)
//! ```
//!
//! The CPU figure separates computing from waiting (see [`CpuTime`]): near the wall time, the
//! handler burned CPU; near zero, it blocked in a system call. It covers the poll from the
//! watchdog's first sight of it (within `threshold / 2` of its start) to its end, and says so,
//! because a thread's CPU time cannot be read per poll without a system call. It is measured
//! on Linux only, from `/proc/.../schedstat`; elsewhere the line says `CPU time not
//! available`.
//!
//! # What it misses
//!
//! - **Code that is not wrapped.** Only polls of [`Watched`] futures are timed: server
//!   internals (accept loops, HTTP parsing, middleware outside the wrapper) and tasks a handler
//!   spawns are invisible unless they are wrapped too. Wrap as close to the executor as you
//!   can, and wrap spawned tasks.
//! - **Work in `Drop`.** A future dropped by the executor (a cancelled request) runs its
//!   destructors outside any poll.
//! - **Stalls shorter than the threshold**, however many; and the watchdog reports a running
//!   stall between `threshold` and `1.5 × threshold` after it began, later if it is itself
//!   starved of CPU.
//! - **A slow poll the watchdog never saw.** A poll is timed when it returns only if the
//!   watchdog saw it running, which is certain for a poll longer than the threshold unless the
//!   watchdog thread was itself kept off the CPU for `threshold / 2` while the poll ran. A
//!   poll it missed is neither reported nor counted.
//! - **The victims.** It names the blocker, not the requests that waited behind it: a fast
//!   route that was delayed by a slow one shows no stall. Measure their latency from outside.
//! - **Which thread is "the reactor".** On tokio (axum, hyper) and actix-web the thread that
//!   polls a handler also drives the I/O reactor, so a stall there stops I/O for its
//!   connections. On async-std and smol the `async-io` reactor thread keeps running; what a
//!   stall holds is the executor thread polling the handler (and every task queued on it).
//!   The messages say "reactor thread" for both.
//!
//! # Threshold zero
//!
//! [`Watch::disabled`], or a [`Config`] with `threshold: Duration::ZERO`, gives a watch that is
//! off (`Config::default()` is on, at asyncio's 100 ms): no watchdog thread, no slot writes, one branch per poll (and the one box per wrapped
//! future, see [`Watched`]), and [`Stalls`] with a threshold of 0 and zero counts. Servers can
//! always wrap and let the command line decide.
//!
//! # Example
//!
//! Any executor will do; here is a ten-line one.
//!
//! ```
//! use std::future::Future;
//! use std::sync::Arc;
//! use std::task::{Context, Poll, Wake, Waker};
//! use std::thread::{self, Thread};
//! use std::time::Duration;
//!
//! use reactor_watch::{Config, Label, Watch};
//!
//! struct Unpark(Thread);
//!
//! impl Wake for Unpark {
//!     fn wake(self: Arc<Self>) {
//!         self.0.unpark();
//!     }
//! }
//!
//! fn block_on<F: Future>(future: F) -> F::Output {
//!     let mut future = std::pin::pin!(future);
//!     let waker = Waker::from(Arc::new(Unpark(thread::current())));
//!     let mut cx = Context::from_waker(&waker);
//!     loop {
//!         if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
//!             return output;
//!         }
//!         thread::park();
//!     }
//! }
//!
//! let watch = Watch::start(Config {
//!     threshold: Duration::from_millis(50),
//!     ..Config::default()
//! });
//! let bad = Label::new("GET /bad");
//! block_on(watch.wrap(bad, async {
//!     // The mistake this crate exists to catch: a blocking call in async code.
//!     thread::sleep(Duration::from_millis(150));
//! }));
//!
//! let stalls = watch.stalls();
//! assert_eq!(stalls.slow_polls, 1);
//! assert_eq!(stalls.by_route["GET /bad"].slow_polls, 1);
//! // The watch's clock is coarse (src/clock.rs): 150 ms can read one kernel tick short, and
//! // a little more when the kernel runs a tick late.
//! let tick = reactor_watch::clock_resolution();
//! assert!(stalls.longest + 2 * tick >= Duration::from_millis(150));
//! println!("{}", watch.stalls_json());
//! ```
//!
//! # Adapters and the health check
//!
//! Default features are off and the core depends on no runtime. Feature `tower` adds
//! `tower::WatchLayer`, which wraps every request future of a tower service (axum, hyper,
//! tonic); actix-web and ntex need no feature (one `wrap_fn` or middleware calling
//! [`Watch::wrap`]: the crate's README and examples show each). Feature `health` adds
//! `Watch::serve_health`: `GET /health` served by a thread of its own, 503 with the route and
//! how long its thread has been held while a wrapped poll is past a limit, and for a period
//! after one was (`HealthCheck::period`, 10 s by default: a probe that comes every period
//! cannot miss a stall that began and ended between two of its visits). [`Watch::running`]
//! and [`Watch::ended_stalls`] give the same facts to your own endpoint.
//!
//! # Metrics
//!
//! Feature `metrics` records the slow polls by route through the `metrics` facade, for
//! whatever exporter the app installs: a counter, a histogram of how long each held its thread,
//! and a gauge of the threads held past the threshold right now. A fast poll records nothing.
//! The module `reactor_watch::metrics` names them.
//!
//! # Serving the counters
//!
//! [`Watch::stalls_json`] renders the `/stalls` body, by hand (no serde):
//!
//! ```text
//! {"threshold_ms":100,"slow_polls":3,"longest_ms":301.2,"by_route":{"GET /bad":{"slow_polls":3,"longest_ms":301.2}},"still_running_reports":3}
//! ```

#![warn(missing_docs)]

mod clock;
mod cpu;
#[cfg(feature = "health")]
mod health;
mod label;
#[cfg(feature = "metrics")]
pub mod metrics;
mod report;
mod slot;
mod stalls;
#[cfg(feature = "tower")]
pub mod tower;
mod watch;
mod watched;

#[cfg(feature = "health")]
pub use health::{HEALTH_PATH, Health, HealthCheck};

pub use clock::resolution as clock_resolution;
pub use label::Label;
pub use report::{CpuTime, Report};
pub use stalls::{RouteStalls, Stalls};
pub use watch::{Config, EndedStall, RunningPoll, Sink, Watch, current_label};
pub use watched::Watched;
