//! The console UI's warnings, each worked out as tokio-console works it out: its five lints,
//! all on by default (tokio-console `src/config.rs`, `KnownWarnings::default_enabled_warnings`),
//! each one's check and sentence from tokio-console `src/warnings.rs` (tokio-rs/console at
//! b59758e, "Update ratatui from 0.29 to 0.30"):
//!
//! - self-wakes, lines 145-170: more than 50% of a task's wakes were its own;
//! - lost-waker, lines 175-199: a live task with no waker, neither running nor woken;
//! - never-yielded, lines 201-260: a task *running now* that has been polled at most once, busy
//!   for 1 s or more; below 1 s the UI checks it again at the next update ("Recheck");
//! - auto-boxed-future, lines 266-297: the runtime boxed the task's future for its size;
//! - large-future, lines 299-347: the task's future is 1024 bytes or more.
//!
//! Only never-yielded is about a task holding its thread; none of them names a duration under
//! 1 s.

use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::task::{State, Task};

/// One of the UI's lints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lint {
    SelfWakes,
    LostWaker,
    NeverYielded,
    AutoBoxedFuture,
    LargeFuture,
}

/// What a lint says of a task (tokio-console `Warning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warning {
    Ok,
    Warn,
    /// Not yet decided: check again at the next update.
    Recheck,
}

/// `SelfWakePercent::DEFAULT_PERCENT`.
pub const SELF_WAKES_PERCENT: u64 = 50;
/// `NeverYielded::DEFAULT_DURATION`.
pub const NEVER_YIELDED_BUSY: Duration = Duration::from_secs(1);
/// `LargeFuture::DEFAULT_MIN_SIZE_BYTES`.
pub const LARGE_FUTURE_BYTES: u64 = 1024;

impl Lint {
    /// The lints the UI runs by default, in its order.
    pub const ALL: [Lint; 5] = [
        Lint::SelfWakes,
        Lint::LostWaker,
        Lint::NeverYielded,
        Lint::AutoBoxedFuture,
        Lint::LargeFuture,
    ];

    /// The lint's check of `task` at `now` (the UI takes `SystemTime::now()`).
    pub fn check(self, task: &Task, now: SystemTime) -> Warning {
        let warn = |condition: bool| match condition {
            true => Warning::Warn,
            false => Warning::Ok,
        };
        // Every lint but auto-boxed-future leaves blocking and block_on tasks alone.
        if task.is_blocking() && self != Lint::AutoBoxedFuture {
            return Warning::Ok;
        }
        match self {
            Lint::SelfWakes => warn(task.self_wake_percent() > SELF_WAKES_PERCENT),
            Lint::LostWaker => warn(
                !task.is_completed()
                    && task.waker_count() == 0
                    && !task.is_running()
                    && !task.is_awakened(),
            ),
            Lint::NeverYielded => never_yielded(task, now),
            Lint::AutoBoxedFuture => {
                let identity = &task.identity;
                match (identity.size_bytes, identity.original_size_bytes) {
                    (Some(size), Some(original)) => warn(size != original),
                    _ => Warning::Ok,
                }
            }
            Lint::LargeFuture => {
                warn((task.identity.size_bytes).is_some_and(|size| size >= LARGE_FUTURE_BYTES))
            }
        }
    }

    /// The UI's sentence for `task`, which has this warning.
    pub fn format(self, task: &Task, now: SystemTime) -> String {
        let identity = &task.identity;
        match self {
            Lint::SelfWakes => format!(
                "This task has woken itself for more than {SELF_WAKES_PERCENT}% of its total \
                 wakeups ({}%)",
                task.self_wake_percent()
            ),
            Lint::LostWaker => {
                "This task has lost its waker, and will never be woken again.".into()
            }
            Lint::NeverYielded => format!("This task has never yielded ({:?})", task.busy(now)),
            Lint::AutoBoxedFuture => format!(
                "This task's future was auto-boxed by the runtime when spawning, due to its size \
                 (originally {} bytes, boxed size {} bytes)",
                identity.original_size_bytes.unwrap_or_default(),
                identity.size_bytes.unwrap_or_default()
            ),
            Lint::LargeFuture => format!(
                "This task occupies a large amount of stack space ({} bytes)",
                identity.size_bytes.unwrap_or_default()
            ),
        }
    }
}

/// Lines 232-252: only a task running now, polled at most once, and then only once it has
/// been busy for [`NEVER_YIELDED_BUSY`]; before that, "check again".
fn never_yielded(task: &Task, now: SystemTime) -> Warning {
    if task.state() != State::Running || task.stats.polls > 1 {
        Warning::Ok
    } else if task.busy(now) >= NEVER_YIELDED_BUSY {
        Warning::Warn
    } else {
        Warning::Recheck
    }
}
