//! Signals for the executors built on `async-io` (async-std and smol).

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
