//! One slot per polling thread, in a global registry the watchdogs scan.
//!
//! A slot says what its thread is polling right now: which watch, which label and since when,
//! packed in one 64-bit word ([`PollState`]). Only the owning thread writes it, once at the
//! start and once at the end of every watched poll: one plain atomic store each, which a
//! watchdog reads whole or not at all. No lock, no read-modify-write, no allocation on that
//! path. (An earlier version kept a sequence number and a nanosecond start beside the label
//! under a seqlock: three fields and two version bumps per store cost more than the clock.)
//!
//! The rest of the slot is for the rare paths: which poll the watchdog last saw running (the
//! owner reads it once at the end of every poll: it decides whether the clock is read again),
//! what the watchdog sampled (the thread's CPU time when it first saw a poll) and which polls
//! it already reported.

use std::cell::OnceCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use crate::Label;
use crate::clock::now_ns;
use crate::cpu::ThreadCpu;
use crate::report::CpuTime;

/// Every thread that ever ran a watched poll. Weak: a thread that exits drops its slot, and
/// the next scan or registration prunes it. Locked once per thread (registration) and once
/// per watchdog tick, never per poll.
static REGISTRY: Mutex<Vec<Weak<Slot>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's slot, registered on its first watched poll.
    static LOCAL: OnceCell<Arc<Slot>> = const { OnceCell::new() };
}

fn register() -> Arc<Slot> {
    let slot = Arc::new(Slot::for_current_thread());
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.retain(|slot| slot.strong_count() > 0);
    registry.push(Arc::downgrade(&slot));
    slot
}

/// Runs `f` with this thread's slot, registering the thread on first use. `None` (and `f` not
/// run) once the thread's locals are being destroyed.
pub(crate) fn with_slot<R>(f: impl FnOnce(&Slot) -> R) -> Option<R> {
    LOCAL.try_with(|local| f(local.get_or_init(register))).ok()
}

/// What this thread's slot says it is polling, without registering the thread.
pub(crate) fn current_state() -> Option<PollState> {
    LOCAL
        .try_with(|local| local.get().map(|slot| slot.own_state()))
        .ok()
        .flatten()
        .filter(|state| !state.is_idle())
}

/// Copies every live slot into `out` (cleared first), pruning dead ones.
pub(crate) fn live_slots(out: &mut Vec<Arc<Slot>>) {
    out.clear();
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.retain(|weak| match weak.upgrade() {
        Some(slot) => {
            out.push(slot);
            true
        }
        None => false,
    });
}

/// What a slot says its thread is polling: one word, so that it is written and read whole.
///
/// From the high bits: the watch id (16 bits; 0 when idle, watch ids start at 1), the label
/// index (16 bits) and the poll's start in whole milliseconds of the coarse clock (32 bits,
/// wrapping every 49.7 days: compare with [`ms_since`], never with `<`). The start also names
/// the poll: on one thread, two polls that start in the same millisecond cannot both be slow
/// (the second starts after the first ended), so "reported" and "sampled" marks can be keyed
/// by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PollState(u64);

impl PollState {
    #[inline]
    pub(crate) fn new(watch_id: u16, label: Label, start_ms: u32) -> PollState {
        // `Label::new` hands out at most 65,536 indices.
        let label = label.index() as u16;
        PollState((u64::from(watch_id) << 48) | (u64::from(label) << 32) | u64::from(start_ms))
    }

    pub(crate) fn is_idle(self) -> bool {
        self.watch_id() == 0
    }

    pub(crate) fn watch_id(self) -> u16 {
        (self.0 >> 48) as u16
    }

    pub(crate) fn label(self) -> Label {
        Label::from_index(u32::from((self.0 >> 32) as u16))
    }

    /// When the poll started, in ms of the coarse clock (wrapping).
    pub(crate) fn start_ms(self) -> u32 {
        self.0 as u32
    }
}

/// Whole milliseconds of the coarse clock, wrapping: what a [`PollState`] stores.
#[inline]
pub(crate) fn ms_of(ns: u64) -> u32 {
    (ns / 1_000_000) as u32
}

/// How far `later` is after `earlier` on the wrapping millisecond clock; negative if before.
pub(crate) fn ms_since(later: u32, earlier: u32) -> i32 {
    later.wrapping_sub(earlier) as i32
}

/// The watchdog's CPU sample of one poll.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// The start of the poll it belongs to, in ms ([`PollState::start_ms`]).
    start_ms: u32,
    /// The thread's CPU time then, in ns.
    cpu_ns: u64,
    /// When it was taken, in ns of the coarse clock (taken just before the read); 0: none yet.
    at_ns: u64,
}

/// One thread's slot.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The [`PollState`] of the poll running now, or idle.
    state: AtomicU64,
    /// The [`PollState`] the watchdog last saw running on this thread, or 0. Written by
    /// watchdogs only, read by the owner at the end of each poll.
    seen: AtomicU64,
    /// The start (in ms) of the last poll a "still running" report was made for. Written by
    /// watchdogs only, only forward, so that a nested wrapper's outer poll, restored after its
    /// inner poll was reported, is not reported again for the same stall.
    reported_upto: AtomicU32,
    /// The watchdog's latest CPU sample; locked by the watchdog when it samples and by the
    /// owner only at the end of a slow poll.
    sample: Mutex<Sample>,
    /// The thread's name when it registered, or `<unnamed>`.
    pub(crate) thread: Arc<str>,
    cpu: ThreadCpu,
    /// The poll this thread counts for in the `reactor_watch_stalled_threads` gauge, or idle:
    /// raised by a watchdog, lowered by whoever sees the poll end first, under this lock, so
    /// that each raise is lowered once.
    #[cfg(feature = "metrics")]
    stalled: Mutex<PollState>,
}

impl Slot {
    fn for_current_thread() -> Slot {
        let thread: Arc<str> = std::thread::current().name().unwrap_or("<unnamed>").into();
        Slot {
            state: AtomicU64::new(0),
            seen: AtomicU64::new(0),
            reported_upto: AtomicU32::new(0),
            sample: Mutex::new(Sample::default()),
            thread,
            cpu: ThreadCpu::of_current_thread(),
            #[cfg(feature = "metrics")]
            stalled: Mutex::new(PollState(0)),
        }
    }

    /// The slot's current state, read by its owner thread (the only writer).
    #[inline]
    pub(crate) fn own_state(&self) -> PollState {
        PollState(self.state.load(Ordering::Relaxed))
    }

    /// Publishes `state`. Owner thread only.
    #[inline]
    pub(crate) fn publish(&self, state: PollState) {
        self.state.store(state.0, Ordering::Relaxed);
    }

    /// What the slot says now, for another thread.
    pub(crate) fn read(&self) -> PollState {
        PollState(self.state.load(Ordering::Relaxed))
    }

    /// Watchdog: marks `poll` as seen running, so that its owner times it when it returns.
    pub(crate) fn mark_seen(&self, poll: PollState) {
        if self.seen.load(Ordering::Relaxed) != poll.0 {
            self.seen.store(poll.0, Ordering::Relaxed);
        }
    }

    /// Owner, at the end of `poll`: whether a watchdog saw it running, or saw a poll that
    /// started later (on this thread, one nested inside it). Only such a poll can have been
    /// slow, because the watchdog scans every `threshold / 2`; every other poll returns without
    /// reading the clock again. A mark left by an earlier poll that started in the same
    /// millisecond also answers yes: that costs one clock read, never a false report.
    #[inline]
    pub(crate) fn seen_since(&self, poll: PollState) -> bool {
        let seen = PollState(self.seen.load(Ordering::Relaxed));
        !seen.is_idle() && ms_since(seen.start_ms(), poll.start_ms()) >= 0
    }

    /// Watchdog: records the thread's CPU time as the start of `poll`'s window, unless the
    /// slot already holds a sample taken during that poll: one of `poll` itself, or of a
    /// poll that started later, which on this thread can only have been nested inside it (an
    /// outer wrapper whose inner poll just returned).
    pub(crate) fn sample_cpu(&self, poll: PollState) {
        if !self.cpu.available() {
            return;
        }
        let mut sample = self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        if sample.at_ns != 0 && ms_since(sample.start_ms, poll.start_ms()) >= 0 {
            return;
        }
        let at_ns = now_ns();
        if let Some(cpu_ns) = self.cpu.read() {
            *sample = Sample {
                start_ms: poll.start_ms(),
                cpu_ns,
                at_ns,
            };
        }
    }

    /// Watchdog: claims the "still running" report for `poll`; true once per stall.
    pub(crate) fn claim_report(&self, poll: PollState) -> bool {
        let start = poll.start_ms();
        self.reported_upto
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |reported| {
                (reported == 0 || ms_since(start, reported) > 0).then_some(start)
            })
            .is_ok()
    }

    /// Owner, at the end of slow poll `poll` that ended at `end_ns`: the CPU time it used since
    /// the watchdog's sample. Reads this thread's `schedstat` once.
    ///
    /// A sample of `poll` or of any poll that started later was taken while `poll` was
    /// running: later polls that ran before `poll` ended were nested inside it.
    pub(crate) fn cpu_since_sample(&self, poll: PollState, end_ns: u64) -> CpuTime {
        if !self.cpu.available() {
            return CpuTime::Unavailable;
        }
        let sample = *self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        if sample.at_ns == 0
            || ms_since(sample.start_ms, poll.start_ms()) < 0
            || sample.at_ns >= end_ns
        {
            return CpuTime::NotSampled;
        }
        let Some(cpu_now) = self.cpu.read() else {
            return CpuTime::Unavailable;
        };
        let window = Duration::from_nanos(end_ns - sample.at_ns);
        // One thread cannot use more CPU than wall time; a larger difference is the kernel's
        // tick-granular accounting showing through.
        let on_cpu = Duration::from_nanos(cpu_now.saturating_sub(sample.cpu_ns)).min(window);
        CpuTime::Sampled { on_cpu, window }
    }
}

/// The gauge of threads held past the threshold, per slot: each slot counts for at most one
/// poll at a time.
#[cfg(feature = "metrics")]
impl Slot {
    /// Watchdog: counts this thread as stalled by `poll`, which it saw running past the
    /// threshold, unless it already is or the poll has ended since.
    pub(crate) fn raise_stalled(&self, poll: PollState) {
        let mut stalled = self.stalled.lock().unwrap_or_else(PoisonError::into_inner);
        // Read under the lock: a poll that ended and lowered its mark is not raised again.
        if *stalled == poll || self.read() != poll {
            return;
        }
        if !stalled.is_idle() {
            crate::metrics::stalled_thread(stalled.label(), false);
        }
        crate::metrics::stalled_thread(poll.label(), true);
        *stalled = poll;
    }

    /// Owner, when `poll` returned slow, after the slot stopped naming it: lowers its mark.
    pub(crate) fn lower_stalled(&self, poll: PollState) {
        let mut stalled = self.stalled.lock().unwrap_or_else(PoisonError::into_inner);
        if *stalled == poll {
            crate::metrics::stalled_thread(poll.label(), false);
            *stalled = PollState(0);
        }
    }

    /// Watchdog of watch `watch_id`, on each scan: lowers its mark for a poll that is no longer
    /// running (`now`, the slot's state, is another), which the owner did not lower itself
    /// (a poll that ended by a panic, or that the owner's clock did not time as slow).
    pub(crate) fn lower_stalled_unless(&self, watch_id: u16, now: PollState) {
        let stalled = *self.stalled.lock().unwrap_or_else(PoisonError::into_inner);
        if !stalled.is_idle() && stalled.watch_id() == watch_id && stalled != now {
            self.lower_stalled(stalled);
        }
    }
}

/// A thread that exits with a mark (its poll panicked, and no scan came since) lowers it.
#[cfg(feature = "metrics")]
impl Drop for Slot {
    fn drop(&mut self) {
        let stalled = *self
            .stalled
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if !stalled.is_idle() {
            crate::metrics::stalled_thread(stalled.label(), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{PollState, Slot};
    use crate::Label;

    fn poll_at(start_ms: u32) -> PollState {
        PollState::new(1, Label::new("test /seen"), start_ms)
    }

    #[test]
    fn only_a_poll_the_watchdog_saw_is_timed_again() {
        let slot = Slot::for_current_thread();
        assert!(!slot.seen_since(poll_at(10)), "nothing seen yet");
        slot.mark_seen(poll_at(10));
        assert!(slot.seen_since(poll_at(10)), "the poll it saw");
        assert!(
            slot.seen_since(poll_at(9)),
            "an outer poll, around the inner one it saw"
        );
        assert!(
            !slot.seen_since(poll_at(11)),
            "a later poll, not seen itself"
        );
    }

    #[test]
    fn seen_marks_compare_on_the_wrapping_clock() {
        let slot = Slot::for_current_thread();
        slot.mark_seen(poll_at(2));
        assert!(
            slot.seen_since(poll_at(u32::MAX - 1)),
            "a poll that began just before the millisecond clock wrapped"
        );
    }
}
