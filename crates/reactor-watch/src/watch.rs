//! The watch: configuration, counters and the watchdog thread.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::Label;
use crate::clock;
use crate::report::{CpuTime, Report};
use crate::slot::{self, Slot};
use crate::stalls::{RouteStalls, Stalls};
use crate::watched::Watched;

/// Where reports go instead of stderr: called with each [`Report`].
///
/// "Still running" reports are made on the watchdog thread, "returned" reports on the thread
/// whose poll was slow, before that poll returns to the executor: keep the sink short and
/// never block in it.
pub type Sink = Arc<dyn Fn(&Report) + Send + Sync>;

/// How a [`Watch`] is set up. `Config::default()` is asyncio's debug mode's setting: a
/// threshold of 100 ms ([`Config::DEFAULT_THRESHOLD`]), reports on stderr.
#[derive(Clone)]
pub struct Config {
    /// The longest one poll may hold its thread before it is a stall. `Duration::ZERO` turns
    /// the watch off: no watchdog thread, no slot writes, nothing counted.
    ///
    /// The watchdog scans every `threshold / 2` (at least every millisecond), so a stall is
    /// reported while running between `threshold` and `1.5 × threshold` after it began.
    pub threshold: Duration,
    /// Where reports go; `None` writes each report's line to stderr with `eprintln!`.
    pub on_report: Option<Sink>,
}

impl Config {
    /// asyncio's `loop.slow_callback_duration`, whose default it is in debug mode.
    pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(100);

    /// A config with this threshold, reporting to stderr.
    pub fn new(threshold: Duration) -> Config {
        Config {
            threshold,
            on_report: None,
        }
    }

    /// Sends reports to `sink` instead of stderr.
    pub fn on_report(mut self, sink: impl Fn(&Report) + Send + Sync + 'static) -> Config {
        self.on_report = Some(Arc::new(sink));
        self
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::new(Config::DEFAULT_THRESHOLD)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("threshold", &self.threshold)
            .field(
                "on_report",
                &if self.on_report.is_some() {
                    "custom"
                } else {
                    "stderr"
                },
            )
            .finish()
    }
}

/// A reactor-stall detector: wraps futures, times their polls, runs the watchdog and keeps
/// the counters. See the [crate docs](crate).
///
/// Cheap to clone (an `Arc` inside); all clones share one watchdog and one set of counters.
/// The watchdog thread stops, and is joined, when the last clone and the last
/// [`Watched`] future made from them are dropped.
#[derive(Clone)]
pub struct Watch {
    /// `None` when the watch is off.
    inner: Option<Arc<Inner>>,
}

/// Watch ids tell the slots of different watches apart; 0 means "idle".
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// The next watch id, 1 to `u16::MAX` (a slot keeps 16 bits of it), wrapping: two watches
/// share an id only after 65,535 more were started.
fn next_id() -> u16 {
    (NEXT_ID.fetch_add(1, Ordering::Relaxed) % u32::from(u16::MAX)) as u16 + 1
}

pub(crate) struct Inner {
    pub(crate) id: u16,
    threshold: Duration,
    pub(crate) threshold_ns: u64,
    sink: Option<Sink>,
    tally: Mutex<Tally>,
    watchdog: Mutex<Option<JoinHandle<()>>>,
}

/// The counters behind [`Stalls`], by label index. Locked on the rare paths only.
#[derive(Default)]
struct Tally {
    slow_polls: u64,
    longest_ns: u64,
    by_label: BTreeMap<Label, (u64, u64)>,
    still_running_reports: u64,
    /// The last [`ENDED_KEPT`] slow polls that returned, oldest first, for
    /// [`Watch::ended_stalls`].
    ended: VecDeque<Ended>,
}

/// How many ended slow polls a watch keeps: slow polls are rare (each holds a thread past the
/// threshold), so these cover far more than any health check's period.
const ENDED_KEPT: usize = 64;

/// A slow poll that returned, as [`Tally`] keeps it.
struct Ended {
    label: Label,
    thread: Arc<str>,
    held_ns: u64,
    at: Instant,
}

impl Watch {
    /// Starts a watch: spawns its watchdog thread, named `reactor-watch`, unless
    /// `config.threshold` is zero, which gives a watch that is off (as [`Watch::disabled`]).
    ///
    /// # Panics
    ///
    /// If the watchdog thread cannot be spawned; [`Watch::try_start`] returns that error.
    pub fn start(config: Config) -> Watch {
        Watch::try_start(config).expect("reactor-watch: cannot spawn the watchdog thread")
    }

    /// As [`Watch::start`], returning the error if the watchdog thread cannot be spawned.
    pub fn try_start(config: Config) -> io::Result<Watch> {
        if config.threshold.is_zero() {
            return Ok(Watch::disabled());
        }
        let inner = Arc::new(Inner {
            id: next_id(),
            threshold: config.threshold,
            threshold_ns: u64::try_from(config.threshold.as_nanos()).unwrap_or(u64::MAX),
            sink: config.on_report,
            tally: Mutex::new(Tally::default()),
            watchdog: Mutex::new(None),
        });
        let interval = (config.threshold / 2).max(Duration::from_millis(1));
        let weak = Arc::downgrade(&inner);
        let handle = thread::Builder::new()
            .name("reactor-watch".into())
            .spawn(move || watchdog(&weak, interval))?;
        *inner
            .watchdog
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(handle);
        Ok(Watch { inner: Some(inner) })
    }

    /// A watch that is off: [`wrap`](Watch::wrap) adds one branch per poll and nothing else
    /// (no watchdog thread, no slot writes), and [`stalls`](Watch::stalls) reports a
    /// threshold of 0 and zero counts.
    pub fn disabled() -> Watch {
        Watch { inner: None }
    }

    /// Whether this watch measures anything (its threshold is not zero).
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The threshold; zero when the watch is off.
    pub fn threshold(&self) -> Duration {
        self.inner
            .as_ref()
            .map_or(Duration::ZERO, |inner| inner.threshold)
    }

    /// Wraps `future` so that each of its polls is timed under `label`. Boxes the future once
    /// (see [`Watched`] for why).
    pub fn wrap<F: Future>(&self, label: Label, future: F) -> Watched<F> {
        Watched::new(self.inner.clone(), label, future)
    }

    /// A snapshot of the counters (see [`Stalls`] for what each means).
    pub fn stalls(&self) -> Stalls {
        let Some(inner) = &self.inner else {
            return Stalls::default();
        };
        let tally = inner.tally.lock().unwrap_or_else(PoisonError::into_inner);
        Stalls {
            threshold: inner.threshold,
            slow_polls: tally.slow_polls,
            longest: Duration::from_nanos(tally.longest_ns),
            by_route: tally
                .by_label
                .iter()
                .map(|(label, &(slow_polls, longest_ns))| {
                    (
                        label.name().to_owned(),
                        RouteStalls {
                            slow_polls,
                            longest: Duration::from_nanos(longest_ns),
                        },
                    )
                })
                .collect(),
            still_running_reports: tally.still_running_reports,
        }
    }

    /// The `/stalls` body: [`Stalls::to_json`] of a fresh snapshot.
    pub fn stalls_json(&self) -> String {
        self.stalls().to_json()
    }

    /// The wrapped polls of this watch running right now, on every thread, longest first:
    /// what a health check asks ("is a reactor thread held, by which route, for how long?").
    /// Empty when the watch is off.
    ///
    /// Reads every polling thread's slot, under the lock the watchdog takes once per scan:
    /// call it from a health check or a debug page, never per poll. Times are whole
    /// milliseconds of the watch's coarse clock ([`clock_resolution`](crate::clock_resolution)).
    pub fn running(&self) -> Vec<RunningPoll> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        let mut slots = Vec::new();
        slot::live_slots(&mut slots);
        let mut running: Vec<RunningPoll> = slots
            .iter()
            .filter_map(|slot| {
                let state = slot.read();
                if state.is_idle() || state.watch_id() != inner.id {
                    return None;
                }
                // Read after the state, so that a poll cannot seem to start in the future.
                let now_ms = slot::ms_of(clock::now_ns());
                let running_ms = slot::ms_since(now_ms, state.start_ms()).max(0);
                Some(RunningPoll {
                    label: state.label(),
                    thread: Arc::clone(&slot.thread),
                    running: Duration::from_millis(running_ms.unsigned_abs().into()),
                })
            })
            .collect();
        running.sort_by_key(|poll| std::cmp::Reverse(poll.running));
        running
    }
}

impl Watch {
    /// The wrapped polls that held their thread past the threshold and returned within the
    /// last `within`, longest first (of the last 64 such polls): what a health check probed
    /// every `within` needs to see every stall, not only the ones running when it asks.
    /// Empty when the watch is off.
    pub fn ended_stalls(&self, within: Duration) -> Vec<EndedStall> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        let now = Instant::now();
        let tally = inner.tally.lock().unwrap_or_else(PoisonError::into_inner);
        let mut ended: Vec<EndedStall> = (tally.ended.iter())
            .filter(|stall| now.duration_since(stall.at) <= within)
            .map(|stall| EndedStall {
                label: stall.label,
                thread: Arc::clone(&stall.thread),
                held: Duration::from_nanos(stall.held_ns),
                ago: now.duration_since(stall.at),
            })
            .collect();
        drop(tally);
        ended.sort_by_key(|stall| std::cmp::Reverse(stall.held));
        ended
    }
}

/// A wrapped poll that held its thread past the threshold and has returned, from
/// [`Watch::ended_stalls`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedStall {
    /// The wrapped future's label.
    pub label: Label,
    /// The name of the thread the poll held, or `<unnamed>`.
    pub thread: Arc<str>,
    /// How long the poll held its thread.
    pub held: Duration,
    /// How long ago it returned.
    pub ago: Duration,
}

/// One wrapped poll running now, from [`Watch::running`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningPoll {
    /// The wrapped future's label.
    pub label: Label,
    /// The name of the thread the poll holds, or `<unnamed>`.
    pub thread: Arc<str>,
    /// How long the poll has held its thread so far, in whole milliseconds of the coarse
    /// clock.
    pub running: Duration,
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            None => f.debug_struct("Watch").field("enabled", &false).finish(),
            Some(inner) => f
                .debug_struct("Watch")
                .field("enabled", &true)
                .field("id", &inner.id)
                .field("threshold", &inner.threshold)
                .finish_non_exhaustive(),
        }
    }
}

/// The label of the watched poll this thread is running right now, if any: the innermost
/// wrapper's, when wrappers nest. `None` outside watched polls and inside polls of a watch
/// that is off. Never registers the thread.
pub fn current_label() -> Option<Label> {
    slot::current_state().map(|state| state.label())
}

impl Inner {
    /// Records a slow poll that returned, and reports it. Called on the polling thread.
    pub(crate) fn returned_slow(
        &self,
        label: Label,
        thread: &Arc<str>,
        held_ns: u64,
        cpu: CpuTime,
    ) {
        {
            let mut tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
            tally.slow_polls += 1;
            tally.longest_ns = tally.longest_ns.max(held_ns);
            let route = tally.by_label.entry(label).or_default();
            route.0 += 1;
            route.1 = route.1.max(held_ns);
            if tally.ended.len() == ENDED_KEPT {
                tally.ended.pop_front();
            }
            let thread = Arc::clone(thread);
            let at = Instant::now();
            tally.ended.push_back(Ended {
                label,
                thread,
                held_ns,
                at,
            });
        }
        #[cfg(feature = "metrics")]
        crate::metrics::slow_poll(label, held_ns);
        self.emit(&Report::Returned {
            label: label.name(),
            thread: Arc::clone(thread),
            held: Duration::from_nanos(held_ns),
            threshold: self.threshold,
            cpu,
        });
    }

    /// One watchdog pass over every slot.
    fn scan(&self, slots: &mut Vec<Arc<Slot>>) {
        slot::live_slots(slots);
        for slot in slots.drain(..) {
            let state = slot.read();
            #[cfg(feature = "metrics")]
            slot.lower_stalled_unless(self.id, state);
            if state.is_idle() || state.watch_id() != self.id {
                continue;
            }
            // Seen running: its owner will time it when it returns. The first sight of a poll
            // also starts its CPU window: a few µs of /proc on this thread, none on the polled
            // one.
            slot.mark_seen(state);
            slot.sample_cpu(state);
            let now_ms = slot::ms_of(clock::now_ns());
            let running_ms = u64::try_from(slot::ms_since(now_ms, state.start_ms())).unwrap_or(0);
            let running_ns = running_ms * 1_000_000;
            #[cfg(feature = "metrics")]
            if running_ns > self.threshold_ns {
                slot.raise_stalled(state);
            }
            if running_ns > self.threshold_ns && slot.claim_report(state) {
                self.tally
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .still_running_reports += 1;
                self.emit(&Report::StillRunning {
                    label: state.label().name(),
                    thread: Arc::clone(&slot.thread),
                    blocked: Duration::from_nanos(running_ns),
                    threshold: self.threshold,
                });
            }
        }
    }

    fn emit(&self, report: &Report) {
        match &self.sink {
            Some(sink) => sink(report),
            None => eprintln!("{report}"),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let handle = self
            .watchdog
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            // The watchdog holds only a `Weak` between scans: woken, it fails to upgrade and
            // returns at once. If it is the watchdog itself that drops the last `Arc` (at the
            // end of a scan), it returns at its next wake-up instead.
            handle.thread().unpark();
            if handle.thread().id() != thread::current().id() {
                let _ = handle.join();
            }
        }
    }
}

/// The watchdog thread (the pattern of Vert.x's `BlockedThreadChecker` and Go's `sysmon`):
/// every `interval`, scan every slot for polls running past the threshold.
fn watchdog(watch: &Weak<Inner>, interval: Duration) {
    let mut slots = Vec::new();
    loop {
        thread::park_timeout(interval);
        let Some(inner) = watch.upgrade() else {
            return;
        };
        inner.scan(&mut slots);
    }
}
