//! One slot per polling thread, in a global registry the watchdogs scan.
//!
//! A slot says what its thread is polling right now: which watch, which label, which poll
//! (a per-thread sequence number) and since when. Only the owning thread writes those fields,
//! at the start and the end of every watched poll, so they are plain atomic stores guarded by
//! a seqlock: a watchdog that reads them while they change sees an odd or a changed version
//! and reads again. No lock, no read-modify-write, no allocation on that path.
//!
//! The rest of the slot is for the rare paths: what the watchdog sampled (the thread's CPU
//! time when it first saw a poll) and which polls it already reported.

use std::cell::{Cell, OnceCell};
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::Label;
use crate::cpu::ThreadCpu;
use crate::report::CpuTime;

/// The process epoch all slot times count from.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Nanoseconds since the process epoch: what slots store as a poll's start.
pub(crate) fn now_ns() -> u64 {
    u64::try_from(EPOCH.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Every thread that ever ran a watched poll. Weak: a thread that exits drops its slot, and
/// the next scan or registration prunes it. Locked once per thread (registration) and once
/// per watchdog tick, never per poll.
static REGISTRY: Mutex<Vec<Weak<Slot>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's slot, registered on its first watched poll.
    static LOCAL: OnceCell<Local> = const { OnceCell::new() };
}

/// What a thread keeps of its own slot.
struct Local {
    slot: Arc<Slot>,
    /// The last poll sequence number this thread handed out. Only this thread touches it.
    last_seq: Cell<u64>,
}

impl Local {
    fn register() -> Local {
        let slot = Arc::new(Slot::for_current_thread());
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        registry.retain(|slot| slot.strong_count() > 0);
        registry.push(Arc::downgrade(&slot));
        Local {
            slot,
            last_seq: Cell::new(0),
        }
    }

    fn next_seq(&self) -> u64 {
        let seq = self.last_seq.get() + 1;
        self.last_seq.set(seq);
        seq
    }
}

/// Runs `f` with this thread's slot and a fresh poll sequence number, registering the thread
/// on first use. `None` (and `f` not run) once the thread's locals are being destroyed.
pub(crate) fn with_slot<R>(f: impl FnOnce(&Slot, u64) -> R) -> Option<R> {
    LOCAL
        .try_with(|local| {
            let local = local.get_or_init(Local::register);
            f(&local.slot, local.next_seq())
        })
        .ok()
}

/// What this thread's slot says it is polling, without registering the thread.
pub(crate) fn current_state() -> Option<PollState> {
    LOCAL
        .try_with(|local| local.get().map(|local| local.slot.own_state()))
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

/// What a slot says its thread is polling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PollState {
    /// The watch id in the high 32 bits, the label index in the low 32; 0 when idle (watch ids
    /// start at 1).
    owner: u64,
    /// The poll's sequence number on its thread: unique and increasing per thread.
    pub(crate) seq: u64,
    /// When the poll started, in ns since the process epoch.
    pub(crate) start_ns: u64,
}

impl PollState {
    pub(crate) fn new(watch_id: u32, label: Label, seq: u64, start_ns: u64) -> PollState {
        PollState {
            owner: (u64::from(watch_id) << 32) | u64::from(label.index()),
            seq,
            start_ns,
        }
    }

    pub(crate) fn is_idle(&self) -> bool {
        self.owner == 0
    }

    pub(crate) fn watch_id(&self) -> u32 {
        (self.owner >> 32) as u32
    }

    pub(crate) fn label(&self) -> Label {
        Label::from_index(self.owner as u32)
    }
}

/// The watchdog's CPU sample of one poll.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// The poll it belongs to (0: none yet).
    seq: u64,
    /// The thread's CPU time then, in ns.
    cpu_ns: u64,
    /// When it was taken, in ns since the process epoch (taken just before the read).
    at_ns: u64,
}

/// One thread's slot.
#[derive(Debug)]
pub(crate) struct Slot {
    /// Seqlock version: odd while the owner rewrites the three fields below.
    version: AtomicU64,
    owner: AtomicU64,
    seq: AtomicU64,
    start_ns: AtomicU64,
    /// The highest poll sequence number a "still running" report was made for. Written by
    /// watchdogs only; increasing, so a nested wrapper's outer poll that is restored after its
    /// inner poll was reported is not reported again for the same stall.
    reported_upto: AtomicU64,
    /// The watchdog's latest CPU sample; locked by the watchdog when it samples and by the
    /// owner only at the end of a slow poll.
    sample: Mutex<Sample>,
    /// The thread's name when it registered, or `<unnamed>`.
    pub(crate) thread: Arc<str>,
    cpu: ThreadCpu,
}

impl Slot {
    fn for_current_thread() -> Slot {
        let thread: Arc<str> = std::thread::current().name().unwrap_or("<unnamed>").into();
        Slot {
            version: AtomicU64::new(0),
            owner: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            start_ns: AtomicU64::new(0),
            reported_upto: AtomicU64::new(0),
            sample: Mutex::new(Sample::default()),
            thread,
            cpu: ThreadCpu::of_current_thread(),
        }
    }

    /// The slot's current state, read by its owner thread (the only writer: no seqlock).
    pub(crate) fn own_state(&self) -> PollState {
        PollState {
            owner: self.owner.load(Ordering::Relaxed),
            seq: self.seq.load(Ordering::Relaxed),
            start_ns: self.start_ns.load(Ordering::Relaxed),
        }
    }

    /// Publishes `state`. Owner thread only.
    pub(crate) fn publish(&self, state: PollState) {
        let version = self.version.load(Ordering::Relaxed);
        self.version
            .store(version.wrapping_add(1), Ordering::Relaxed);
        // Orders the odd version before the field stores, for a reader that sees any of them.
        fence(Ordering::Release);
        self.owner.store(state.owner, Ordering::Relaxed);
        self.seq.store(state.seq, Ordering::Relaxed);
        self.start_ns.store(state.start_ns, Ordering::Relaxed);
        self.version
            .store(version.wrapping_add(2), Ordering::Release);
    }

    /// A consistent snapshot for another thread, or `None` if the owner kept rewriting it
    /// (then the next scan tries again).
    pub(crate) fn read(&self) -> Option<PollState> {
        for _ in 0..8 {
            let before = self.version.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let state = PollState {
                owner: self.owner.load(Ordering::Relaxed),
                seq: self.seq.load(Ordering::Relaxed),
                start_ns: self.start_ns.load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            if self.version.load(Ordering::Relaxed) == before {
                return Some(state);
            }
        }
        None
    }

    /// Watchdog: records the thread's CPU time as the start of poll `seq`'s window, unless
    /// the slot already holds a sample taken during that poll: one of `seq` itself, or of a
    /// later poll, which on this thread can only have been nested inside `seq` (that is the
    /// case of an outer wrapper whose inner poll just returned).
    pub(crate) fn sample_cpu(&self, seq: u64) {
        if !self.cpu.available() {
            return;
        }
        let mut sample = self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        if sample.seq >= seq {
            return;
        }
        let at_ns = now_ns();
        if let Some(cpu_ns) = self.cpu.read() {
            *sample = Sample { seq, cpu_ns, at_ns };
        }
    }

    /// Watchdog: claims the "still running" report for poll `seq`; true once per stall.
    pub(crate) fn claim_report(&self, seq: u64) -> bool {
        self.reported_upto.fetch_max(seq, Ordering::AcqRel) < seq
    }

    /// Owner, at the end of slow poll `seq` that ended at `end_ns`: the CPU time it used since
    /// the watchdog's sample. Reads this thread's `schedstat` once.
    ///
    /// A sample of `seq` or of any later poll was taken while `seq` was running: polls numbered
    /// after `seq` that ran before `seq` ended were nested inside it.
    pub(crate) fn cpu_since_sample(&self, seq: u64, end_ns: u64) -> CpuTime {
        if !self.cpu.available() {
            return CpuTime::Unavailable;
        }
        let sample = *self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        if sample.seq < seq || sample.at_ns >= end_ns {
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
