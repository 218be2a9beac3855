//! monoio glue, for `demo-hyper-monoio`: hyper's HTTP/1 on one monoio runtime per thread, each
//! with its own io_uring and its own listener ([`for_local`]), and the blocking strategy the
//! command line asks for ([`run`]).
//!
//! monoio's sockets are completion-based (a read hands a buffer to io_uring); hyper reads into
//! its own buffer when the socket is ready. monoio's `poll-io` feature bridges the two:
//! `IntoPollIo` turns a `TcpStream` into a `TcpStreamPoll`, which has tokio's `AsyncRead` and
//! `AsyncWrite`, and `hyper_util::rt::TokioIo` gives hyper its traits.

use std::io;
use std::net::SocketAddr;

use hyper_util::rt::TokioIo;
use monoio::blocking::{BlockingStrategy, DefaultThreadPool};
use monoio::io::IntoPollIo as _;
use monoio::net::TcpListener;
use monoio::net::tcp::stream_poll::TcpStreamPoll;
use monoio::{IoUringDriver, RuntimeBuilder};

use crate::for_hyper::Handlers;
use crate::for_local::{self, BLOCKING_THREADS, Share};
use crate::{Args, Demo, exit_without_io_uring};

/// The label `/ping` reports.
pub const RUNTIME: &str = "monoio (io_uring), one runtime per thread";

/// Serves `handlers` as the command line asks, until SIGINT or SIGTERM.
///
/// - `--threads N`: N threads, `main` and `monoio-1`.. `monoio-{N-1}`, each running its own
///   monoio runtime on io_uring (its timer enabled: monoio's is off unless asked for) and
///   serving its own `SO_REUSEPORT` listener ([`for_local::run_per_thread`]).
/// - The blocking pool: monoio's `RuntimeBuilder` comes with none, and then
///   `monoio::spawn_blocking` panics. Every thread's runtime gets the same
///   `DefaultThreadPool` (the `threadpool` crate: its threads start with it, and queue the
///   work they cannot take) of `--blocking-threads` threads, [`BLOCKING_THREADS`] by default.
///   The `no-pool` variant keeps the stock builder; the `execute-local` variant runs the work where
///   `spawn_blocking` is called.
/// - Without io_uring, the server says so in one line and exits with status 1.
pub fn run<H: Handlers + Clone>(demo: Demo, args: &Args, handlers: H) -> io::Result<()> {
    let pool = DefaultThreadPool::new(args.blocking_threads.unwrap_or(BLOCKING_THREADS));
    let (no_pool, execute_local) = (args.wants("no-pool"), args.wants("execute-local"));
    for_local::run_per_thread(args, "monoio", move |share| {
        let mut builder = RuntimeBuilder::<IoUringDriver>::new().enable_timer();
        if execute_local {
            builder = builder.with_blocking_strategy(BlockingStrategy::ExecuteLocal);
        } else if !no_pool {
            builder = builder.attach_thread_pool(Box::new(pool.clone()));
        }
        let mut runtime = builder
            .build()
            .unwrap_or_else(|error| exit_without_io_uring(demo.stack, error));
        runtime.block_on(serve(handlers.clone(), demo, share))
    })
}

/// This thread's share of the server: `handlers` on its listener, each connection a task of
/// this thread's runtime, until the stop and the drain after it.
async fn serve<H: Handlers>(handlers: H, demo: Demo, share: Share) -> io::Result<()> {
    let listener = TcpListener::from_std(share.listener)?;
    let spawn = |task| drop(monoio::spawn(task));
    let sleep = monoio::time::sleep;
    for_local::serve(handlers, demo, listener, accept, spawn, sleep, share.stop).await;
    Ok(())
}

/// The next connection on `listener`, as hyper reads and writes it.
async fn accept(listener: &TcpListener) -> io::Result<(TokioIo<TcpStreamPoll>, SocketAddr)> {
    let (io, peer) = listener.accept().await?;
    Ok((TokioIo::new(io.into_poll_io()?), peer))
}
