//! Glue for the executors built on `async-io` (async-std and smol): signals, and the size of
//! the `blocking` crate's pool, which both offload to (`async_std::task::spawn_blocking` goes
//! through `async_global_executor::spawn_blocking`, which is `blocking::unblock`). With the
//! `smol` feature, also the threads that run smol's executor, and the at-rest variant
//! [`crate::variant::SMOL_EXECUTOR_ON_MAIN`] (in `run_executor`).

use std::future::Future;
use std::io;

use async_signal::{Signal, Signals};
use futures_lite::StreamExt as _;
#[cfg(feature = "smol")]
use smol::{Executor, future};

#[cfg(feature = "smol")]
#[cfg(feature = "smol")]
use crate::{Args, Demo, Stack};

/// Installs SIGINT and SIGTERM handlers at once (call it before announcing readiness) and
/// returns a future that completes when either arrives.
pub fn shutdown_signal() -> io::Result<impl Future<Output = ()> + Send + 'static> {
    let mut signals = Signals::new([Signal::Int, Signal::Term])?;
    Ok(async move {
        signals.next().await;
        eprintln!("{}", crate::STOPPING);
    })
}

/// Sizes the `blocking` crate's pool to `--blocking-threads`, if given; without it the pool
/// keeps the crate's default of 500 threads (or `BLOCKING_MAX_THREADS`).
pub fn size_blocking_pool(threads: Option<usize>) {
    if let Some(threads) = threads.and_then(std::num::NonZeroUsize::new) {
        blocking::set_max_blocking_threads(threads);
    }
}

/// Runs `server`, spawned on `executor`, to its end, handing it the [`Demo`] that names the
/// arrangement: `executor` runs on `--threads` threads named `smol-executor-N` (idle ones steal
/// from busy ones), while this thread only waits for `server`.
///
/// Or, with the `executor-on-main` variant requested, the at-rest variant: no executor thread, and
/// this thread runs `executor` inside `block_on`, which waits on epoll itself when it holds the
/// reactor's lock. async-io's own thread keeps competing for that lock (its `main_loop` in
/// `driver.rs`), so some requests still arrive through that thread.
#[cfg(feature = "smol")]
pub fn run_executor<F>(
    executor: &'static Executor<'static>,
    stack: &'static Stack,
    args: &Args,
    server: impl FnOnce(Demo) -> F,
) -> io::Result<()>
where
    F: Future<Output = io::Result<()>> + Send + 'static,
{
    if args.wants("executor-on-main") {
        let demo = Demo::new(stack, "smol Executor on the main thread's block_on", args);
        let server = executor.spawn(server(demo));
        return smol::block_on(executor.run(server));
    }
    let demo = Demo::new(stack, "smol Executor", args);
    for n in 0..args.threads {
        std::thread::Builder::new()
            .name(format!("smol-executor-{n}"))
            .spawn(|| smol::block_on(executor.run(future::pending::<()>())))?;
    }
    // This thread only waits: accepting and serving both run on the executor's threads.
    smol::block_on(executor.spawn(server(demo)))
}
