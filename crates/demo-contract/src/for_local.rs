//! Glue for hyper on a thread-per-core runtime whose futures never leave their thread (glommio
//! and monoio, in `for_glommio` and `for_monoio`): one listener per thread, the stop that every
//! thread sees, and the two wrappers that let `for_hyper`'s `Send` bounds hold.
//!
//! Why the wrappers: `for_hyper` serves the tokio and async-io servers too, whose tasks may move
//! between threads at any `.await`, so it asks for `Send` sockets, timers and handler futures.
//! glommio's and monoio's hold an `Rc` of their thread's reactor, so they are `!Send`. A
//! `send_wrapper::SendWrapper` makes one `Send` by checking, at every use and at drop, that it
//! is still on the thread that made it, and panicking if not. It never moves: each thread
//! spawns its connections as tasks of its own runtime, which has no other thread to move them
//! to. [`LocalIo`] wraps a socket, [`LocalTimer`] the runtime's timer ([`serve`] wraps both);
//! a handler that awaits the runtime's own future wraps it in a `SendWrapper` itself (as
//! `demo-axum-compio` does).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use async_signal::{Signal, Signals};
use futures_lite::StreamExt as _;
use hyper::rt::{Read, ReadBufCursor, Write};
use send_wrapper::SendWrapper;

use crate::for_hyper::{self, Handlers, Task};
pub use crate::shutdown::Shutdown;
use crate::{Args, Demo};

/// The blocking pool's size where neither the runtime nor `--blocking-threads` gives one that
/// serves the contract: monoio's builder has no pool at all, and glommio's pool is one thread
/// per executor, which would make the comparison's ten `/ok-blocking` sleeps take turns. Both
/// start their pool's threads with the runtime. compio's default limit, the other
/// thread-per-core runtime here.
pub const BLOCKING_THREADS: usize = 256;

/// A connection's socket, `Send` for hyper, used only on the thread that accepted it.
#[derive(Debug)]
pub struct LocalIo<T>(SendWrapper<T>);

impl<T> LocalIo<T> {
    pub fn new(io: T) -> Self {
        LocalIo(SendWrapper::new(io))
    }
}

impl<T: Read + Unpin> Read for LocalIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for LocalIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_shutdown(cx)
    }
}

/// The runtime's own timer, as hyper's: `sleep` makes a `!Send` sleep on the calling thread.
#[derive(Debug)]
pub struct LocalTimer<S> {
    sleep: fn(Duration) -> S,
}

impl<S> LocalTimer<S> {
    pub fn new(sleep: fn(Duration) -> S) -> Self {
        LocalTimer { sleep }
    }
}

impl<S> Clone for LocalTimer<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for LocalTimer<S> {}

impl<S: Future<Output = ()> + 'static> hyper::rt::Timer for LocalTimer<S> {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(LocalSleep(SendWrapper::new(Box::pin((self.sleep)(
            duration,
        )))))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep(deadline.saturating_duration_since(Instant::now()))
    }
}

/// One sleep of a [`LocalTimer`].
struct LocalSleep<S>(SendWrapper<Pin<Box<S>>>);

impl<S: Future<Output = ()>> Future for LocalSleep<S> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.as_mut().poll(cx)
    }
}

impl<S: Future<Output = ()>> hyper::rt::Sleep for LocalSleep<S> {}

/// One reactor thread's share of the server.
#[derive(Debug)]
pub struct Share {
    /// Its own listener, bound with `SO_REUSEPORT` to the server's one port: the kernel deals
    /// each new connection to one thread's listener, and that thread serves it to its end.
    pub listener: std::net::TcpListener,
    pub stop: Stop,
}

/// When a thread's share of the server begins and ends.
#[derive(Debug)]
pub struct Stop {
    shutdown: Shutdown,
    /// Where the server listens, on the thread that says it is ready (the first).
    ready_at: Option<SocketAddr>,
}

/// Runs `serve` on `--threads` threads, this one and `{name}-1`, `{name}-2`..., each with its
/// [`Share`]: `serve` builds the thread's runtime and serves its listener until the stop.
///
/// SIGINT and SIGTERM are caught before any thread starts (async-signal's handlers, waited
/// for on a thread of their own named `signals`), and either requests the stop every thread
/// sees. Returns once every thread has returned.
pub fn run_per_thread(
    args: &Args,
    name: &str,
    serve: impl Fn(Share) -> io::Result<()> + Clone + Send + 'static,
) -> io::Result<()> {
    let mut listeners = crate::listen_reuse_port(args.addr(), args.threads)?.into_iter();
    let first = listeners.next().expect("at least one thread");
    let (request, shutdown) = Shutdown::channel();
    stop_on_signal(request)?;
    let others: Vec<_> = listeners
        .enumerate()
        .map(|(index, listener)| {
            let (serve, shutdown) = (serve.clone(), shutdown.clone());
            thread::Builder::new()
                .name(format!("{name}-{}", index + 1))
                .spawn(move || {
                    serve(Share {
                        listener,
                        stop: Stop {
                            shutdown,
                            ready_at: None,
                        },
                    })
                })
        })
        .collect::<io::Result<_>>()?;
    let ready_at = Some(first.local_addr()?);
    let served = serve(Share {
        listener: first,
        stop: Stop { shutdown, ready_at },
    });
    for thread in others {
        let panicked = |_| io::Error::other(format!("a {name} thread panicked"));
        thread.join().map_err(panicked)??;
    }
    served
}

/// Installs the SIGINT and SIGTERM handlers now, and starts the thread that waits for either
/// and then calls `request`.
fn stop_on_signal(request: impl FnOnce() + Send + 'static) -> io::Result<()> {
    let mut signals = Signals::new([Signal::Int, Signal::Term])?;
    thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            futures_lite::future::block_on(signals.next());
            request();
        })?;
    Ok(())
}

/// Serves `handlers` on the connections `listener` accepts (`accept` awaits the runtime's own
/// accept and gives hyper's I/O), each as the task `spawn` makes on this thread's runtime, with
/// hyper's timers on the runtime's `sleep`, until the stop and the drain after it. The thread
/// that says the server is ready says so first.
pub async fn serve<H, L, I, S>(
    handlers: H,
    demo: Demo,
    listener: L,
    accept: impl AsyncFn(&L) -> io::Result<(I, SocketAddr)>,
    spawn: impl Fn(Task),
    sleep: fn(Duration) -> S,
    stop: Stop,
) where
    H: Handlers,
    I: Read + Write + Unpin + 'static,
    S: Future<Output = ()> + 'static,
{
    if let Some(addr) = stop.ready_at {
        demo.announce(addr);
    }
    let incoming = futures_lite::stream::unfold((listener, accept), |(listener, accept)| async {
        let accepted = accept(&listener).await;
        let accepted = accepted.map(|(io, peer)| (LocalIo::new(io), peer));
        Some((accepted, (listener, accept)))
    });
    let requested = stop.shutdown.requested();
    for_hyper::serve(
        handlers,
        demo,
        incoming,
        spawn,
        LocalTimer::new(sleep),
        requested,
    )
    .await;
}
