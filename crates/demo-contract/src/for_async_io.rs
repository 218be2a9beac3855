//! Glue for the executors built on `async-io` (async-std and smol): signals, and the size of
//! the `blocking` crate's pool, which both offload to (`async_std::task::spawn_blocking` goes
//! through `async_global_executor::spawn_blocking`, which is `blocking::unblock`).

use std::future::Future;
use std::io;

use async_signal::{Signal, Signals};
use futures_lite::StreamExt as _;

/// Installs SIGINT and SIGTERM handlers at once (call it before announcing readiness) and
/// returns a future that completes when either arrives.
pub fn shutdown_signal() -> io::Result<impl Future<Output = ()> + Send + 'static> {
    let mut signals = Signals::new([Signal::Int, Signal::Term])?;
    Ok(async move {
        signals.next().await;
        eprintln!("signal received: no new connections, finishing requests in flight");
    })
}

/// Sizes the `blocking` crate's pool to `--blocking-threads`, if given; without it the pool
/// keeps the crate's default of 500 threads (or `BLOCKING_MAX_THREADS`).
pub fn size_blocking_pool(threads: Option<usize>) {
    if let Some(threads) = threads.and_then(std::num::NonZeroUsize::new) {
        blocking::set_max_blocking_threads(threads);
    }
}
