//! Marking the threads that poll request futures.
//!
//! Thread names cannot tell a reactor thread from a pool thread: tokio names both its workers
//! and its blocking threads `tokio-rt-worker`, and the other runtimes' names are conventions
//! of theirs, not something to rely on.
//! Runtime start hooks cannot either: tokio's `on_thread_start` runs on blocking threads too.
//! What does tell is where async code runs: a handler's future is only ever polled on a
//! reactor thread. So every work handler marks its thread when it reads its sleep (through
//! [`crate::Demo::mark_reactor_and_read_sleep`]), each stack's per-request wrapper marks it
//! too (for the file routes, which read no sleep), and the sleep or call reports whether the
//! thread it runs on carries the mark.

use std::cell::Cell;

thread_local! {
    static POLLS_REQUESTS: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one that polls request futures.
pub fn mark() {
    POLLS_REQUESTS.with(|mark| mark.set(true));
}

/// Whether the calling thread has polled a request future.
pub fn is_marked() -> bool {
    POLLS_REQUESTS.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_belongs_to_one_thread() {
        std::thread::spawn(|| {
            assert!(!is_marked());
            mark();
            assert!(is_marked());
            assert!(!std::thread::spawn(is_marked).join().unwrap());
        })
        .join()
        .unwrap();
    }
}
