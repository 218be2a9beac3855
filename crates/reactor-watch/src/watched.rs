//! The future wrapper: a timer around every poll.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::Label;
use crate::clock;
use crate::slot::{self, PollState, Slot};
use crate::watch::Inner;

/// A future that times each of its polls; made by [`Watch::wrap`](crate::Watch::wrap).
///
/// Each `poll` stamps (watch, label, start time) in the polling thread's slot, where the
/// watchdog can see it, polls the inner future, then clears the stamp (restoring an outer
/// wrapper's, if this one is nested). A poll the watchdog saw running is timed again when it
/// returns, and if it was longer than the threshold it is recorded and reported before `poll`
/// returns. The fast path is one read of the coarse clock, two loads and two plain atomic
/// stores on the thread's own slot: no lock, no allocation.
///
/// **Pinning**: request futures are generally `!Unpin`, and projecting a pin to an inline
/// field needs `unsafe` (or a pin-projection crate), which this crate does without. So the
/// inner future is boxed once, when it is wrapped: one allocation per wrapped future, none per
/// poll, and the wrapper itself is `Unpin` and nameable (`Watched<S::Future>` in a tower
/// service, for instance). A disabled watch keeps the box but does nothing else.
#[must_use = "futures do nothing unless polled"]
pub struct Watched<F> {
    future: Pin<Box<F>>,
    /// `None` when the watch is off: then `poll` is a plain forward.
    watch: Option<Arc<Inner>>,
    label: Label,
}

impl<F> Watched<F> {
    pub(crate) fn new(watch: Option<Arc<Inner>>, label: Label, future: F) -> Watched<F> {
        Watched {
            future: Box::pin(future),
            watch,
            label,
        }
    }

    /// The label this future's polls are stamped with.
    pub fn label(&self) -> Label {
        self.label
    }
}

impl<F> fmt::Debug for Watched<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watched")
            .field("label", &self.label)
            .field("enabled", &self.watch.is_some())
            .finish_non_exhaustive()
    }
}

impl<F: Future> Future for Watched<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let Some(watch) = this.watch.as_deref() else {
            return this.future.as_mut().poll(cx);
        };
        let label = this.label;
        let future = &mut this.future;
        match slot::with_slot(|slot| timed_poll(slot, watch, label, future.as_mut(), cx)) {
            Some(poll) => poll,
            // The thread is tearing down its thread-locals: poll unwatched.
            None => future.as_mut().poll(cx),
        }
    }
}

/// Puts the slot back as it was before this poll, even if the inner poll panics.
struct Restore<'a> {
    slot: &'a Slot,
    previous: PollState,
}

impl Drop for Restore<'_> {
    #[inline]
    fn drop(&mut self) {
        self.slot.publish(self.previous);
    }
}

/// One watched poll on `slot`'s thread.
fn timed_poll<F: Future>(
    slot: &Slot,
    watch: &Inner,
    label: Label,
    future: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    // A nested wrapper saves the outer one's stamp and puts it back when it is done.
    let restore = Restore {
        slot,
        previous: slot.own_state(),
    };
    let start_ns = clock::now_ns();
    let state = PollState::new(watch.id, label, slot::ms_of(start_ns));
    slot.publish(state);
    let poll = future.poll(cx);
    // The watchdog scans every `threshold / 2`, so it sees every poll longer than that running
    // (unless it is itself held off the CPU as long): a poll it did not see was fast, and
    // returns without a second clock read, which would be half the cost of the fast path.
    if slot.seen_since(state) {
        seen_running(slot, watch, restore, state, start_ns);
    }
    poll
}

/// The end of a poll the watchdog saw running: timed again, and recorded if it was slow. Out
/// of line and not generic, so that the fast path compiles to the same code whatever this
/// does (the `metrics` feature adds to it).
#[cold]
#[inline(never)]
fn seen_running(slot: &Slot, watch: &Inner, restore: Restore<'_>, state: PollState, start_ns: u64) {
    let end_ns = clock::now_ns();
    let held_ns = end_ns.saturating_sub(start_ns);
    if held_ns <= watch.threshold_ns {
        return;
    }
    // The CPU sample is read while the slot still names this poll, so that the watchdog cannot
    // replace it with an outer poll's.
    let cpu = slot.cpu_since_sample(state, end_ns);
    drop(restore);
    #[cfg(feature = "metrics")]
    slot.lower_stalled(state);
    watch.returned_slow(state.label(), &slot.thread, held_ns, cpu);
}
