//! tokio's own poll hooks as a stall detector, for the variant
//! [`TOKIO_POLL_HOOKS`](crate::variant::TOKIO_POLL_HOOKS) of a build with
//! `--cfg tokio_unstable` (the hooks are unstable API: tokio 1.54, `runtime/builder.rs`,
//! `on_before_task_poll` and `on_after_task_poll`).
//!
//! tokio calls the two hooks around every poll of every spawned task, with the task's id and
//! where it was spawned (`TaskMeta`): not which route, since a connection's requests all run
//! in the one task the server spawned for the connection. tokio reports nothing by itself, so
//! this is the least a user has to add: the hooks stamp the poll's start in one slot, a
//! watchdog thread of our own reports a poll still running past the threshold, and the after
//! hook reports one that returned past it. One slot, because the variant runs one reactor
//! thread.

use std::panic::Location;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, TaskMeta};

/// Polls longer than this are reported: every detector's threshold in the comparison.
pub const THRESHOLD: Duration = Duration::from_millis(100);

/// The poll running now on the reactor thread, if any.
#[derive(Debug, Clone, Copy)]
struct Poll {
    task: tokio::task::Id,
    spawned_at: &'static Location<'static>,
    start: Instant,
    /// Whether the watchdog already said it is still running.
    reported: bool,
}

static POLLING: Mutex<Option<Poll>> = Mutex::new(None);

fn polling() -> std::sync::MutexGuard<'static, Option<Poll>> {
    POLLING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs the hooks on `builder` and starts the watchdog thread.
pub fn install(builder: &mut Builder) -> std::io::Result<()> {
    builder
        .on_before_task_poll(before)
        .on_after_task_poll(after);
    thread::Builder::new()
        .name("poll-hooks-watchdog".into())
        .spawn(watchdog)?;
    Ok(())
}

fn before(meta: &TaskMeta<'_>) {
    *polling() = Some(Poll {
        task: meta.id(),
        spawned_at: meta.spawned_at(),
        start: Instant::now(),
        reported: false,
    });
}

fn after(_: &TaskMeta<'_>) {
    let Some(poll) = polling().take() else {
        return;
    };
    let held = poll.start.elapsed();
    if held > THRESHOLD {
        eprintln!(
            "tokio poll hooks: task {} (spawned at {}) held the thread for {} ms",
            poll.task,
            poll.spawned_at,
            held.as_millis()
        );
    }
}

/// Every half threshold: a poll running past the threshold is reported once, while it runs.
fn watchdog() {
    loop {
        thread::sleep(THRESHOLD / 2);
        let mut polling = polling();
        let Some(poll) = polling.as_mut() else {
            continue;
        };
        let running = poll.start.elapsed();
        if running > THRESHOLD && !poll.reported {
            poll.reported = true;
            eprintln!(
                "tokio poll hooks: task {} (spawned at {}) has held the thread for {} ms (still running)",
                poll.task,
                poll.spawned_at,
                running.as_millis()
            );
        }
    }
}
