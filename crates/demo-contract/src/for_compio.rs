//! compio glue, for `demo-axum-compio`: the axum router of `for_axum`, served by cyper-axum
//! on one compio runtime per thread, each with a listener of its own, and [`run`], which sets
//! that up from the command line.
//!
//! A compio runtime is single-threaded by design: its tasks are `!Send` and never leave the
//! thread that spawned them, and it waits for I/O completions on an io_uring of its own. Several
//! cores mean several runtimes side by side, thread-per-core, sharing nothing but the
//! blocking pool and, here, the port: each thread's listener is bound with `SO_REUSEPORT`
//! ([`crate::listen_reuse_port`]), and the kernel deals each new connection to one of them.

use std::io;
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use axum::Router;
use axum::extract::connect_info::Connected;
use compio::driver::{DriverType, ProactorBuilder};
use compio::net::{TcpListener, TcpStream};
use compio::runtime::{Runtime, RuntimeBuilder};
use cyper_axum::IncomingStream;
use nix::sys::signal::Signal;

use crate::for_axum::{Peer, with_events};
use crate::shutdown::Shutdown;
use crate::{Args, Demo, exit_without_io_uring};

/// The label `/ping` reports: the driver the command line chose.
pub fn runtime(args: &Args) -> &'static str {
    match args.wants("epoll") {
        false => "compio (io_uring), one runtime per thread",
        true => "compio (epoll), one runtime per thread",
    }
}

/// Serves `app` as the command line asks, until SIGINT or SIGTERM.
///
/// - `--threads N`: N threads, `main` and `compio-1`.. `compio-{N-1}`, each running its own
///   compio runtime and accepting on its own `SO_REUSEPORT` listener. A connection is served,
///   to its end, by the thread whose listener the kernel gave it to.
/// - `--blocking-threads K`: one blocking pool of K threads shared by every runtime
///   (`ProactorBuilder::thread_pool_limit`, compio's default 256, and
///   `force_reuse_thread_pool`). When all K are busy, compio's `spawn_blocking` does not
///   queue the work: the runtime's thread retries the hand-over until a pool thread is free
///   (`push_blocking` in compio-driver's io_uring driver), so its reactor waits too.
/// - Without io_uring, the server says so in one line and exits with status 1.
/// - Signals: compio's own (`compio::signal::unix::signal`), installed before the readiness
///   line; a stop closes the listeners, lets each thread's requests in flight finish, and is
///   bounded by [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE).
pub fn run(demo: Demo, args: &Args, app: Router) -> io::Result<()> {
    let builder = runtime_builder(args);
    let main_runtime = builder
        .build()
        .unwrap_or_else(|error| exit_without_io_uring(demo.stack, error));
    let mut listeners = crate::listen_reuse_port(args.addr(), args.threads)?.into_iter();
    let main_listener = listeners.next().expect("at least one thread");
    let (request, shutdown) = Shutdown::channel();
    let others: Vec<_> = listeners
        .enumerate()
        .map(|(index, listener)| {
            let (builder, app, shutdown) = (builder.clone(), app.clone(), shutdown.clone());
            thread::Builder::new()
                .name(format!("compio-{}", index + 1))
                .spawn(move || {
                    let runtime = builder
                        .build()
                        .unwrap_or_else(|error| exit_without_io_uring(demo.stack, error));
                    runtime.block_on(serve(demo, listener, app, shutdown))
                })
        })
        .collect::<io::Result<_>>()?;
    let served = main_runtime.block_on(async {
        let addr = main_listener.local_addr()?;
        stop_on_signal(request).await?;
        demo.announce(addr);
        serve(demo, main_listener, app, shutdown).await
    });
    for thread in others {
        let panicked = |_| io::Error::other("a compio thread panicked");
        thread.join().map_err(panicked)??;
    }
    served
}

/// One runtime's settings, the same on every thread: io_uring, the shared blocking pool, and
/// the variants `event-interval-1`, `epoll` and `sqpoll`.
fn runtime_builder(args: &Args) -> RuntimeBuilder {
    let mut proactor = ProactorBuilder::new();
    if let Some(pool) = args.blocking_threads {
        proactor.thread_pool_limit(pool);
    }
    // Made once here; every runtime built from a clone of this builder reuses it.
    proactor.force_reuse_thread_pool();
    // Named, so that the fusion driver never falls back to epoll without saying so.
    proactor.driver_type(if args.wants("epoll") {
        DriverType::Poll
    } else {
        DriverType::IoUring
    });
    if args.wants("sqpoll") {
        // Longer than a burst's gaps between submissions: the kernel thread stays awake.
        proactor.sqpoll_idle(Duration::from_secs(1));
    }
    let mut builder = Runtime::builder();
    builder.with_proactor(proactor);
    if args.wants("event-interval-1") {
        builder.event_interval(1);
    }
    builder
}

/// Installs the SIGINT and SIGTERM handlers now (compio's register on first poll), and spawns
/// the task that waits for either and makes the `request` that tells every thread to stop.
async fn stop_on_signal(request: impl FnOnce() + 'static) -> io::Result<()> {
    use compio::signal::unix::signal;
    // Boxed, so that the handlers polled here can move into the task below.
    let mut interrupt = Box::pin(signal(Signal::SIGINT as i32));
    let mut terminate = Box::pin(signal(Signal::SIGTERM as i32));
    // A handler that failed to install has returned its error by now.
    for installing in [interrupt.as_mut(), terminate.as_mut()] {
        if let Some(Err(error)) = futures_lite::future::poll_once(installing).await {
            return Err(error);
        }
    }
    compio::runtime::spawn(async move {
        let _ = futures_lite::future::or(interrupt, terminate).await;
        request();
    })
    .detach();
    Ok(())
}

/// This thread's share of the server: `app` on `listener`, until a stop is requested and
/// its connections finish, or [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE) after the stop.
async fn serve(
    demo: Demo,
    listener: std::net::TcpListener,
    app: Router,
    shutdown: Shutdown,
) -> io::Result<()> {
    let listener = Accepts {
        listener: TcpListener::from_std(listener)?,
        demo,
    };
    let app = with_events(demo, app).into_make_service_with_connect_info::<Peer>();
    let server = cyper_axum::serve(listener, app).with_graceful_shutdown(shutdown.requested());
    shutdown.bounded_by(server, compio::time::sleep).await
}

/// A compio `TcpListener` as cyper-axum's accept loop uses it (accept errors handled by
/// cyper-axum's own `Listener` impl), recording each connection's `accepted` (`--events`)
/// as it returns it.
#[derive(Debug)]
pub struct Accepts {
    listener: TcpListener,
    demo: Demo,
}

impl cyper_axum::Listener for Accepts {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        let (io, peer) = cyper_axum::Listener::accept(&mut self.listener).await;
        self.demo.events.accepted(peer.port());
        (io, peer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl Connected<IncomingStream<'_, Accepts>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Accepts>) -> Peer {
        Peer(stream.remote_addr().port())
    }
}
