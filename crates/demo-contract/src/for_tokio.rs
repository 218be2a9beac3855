//! tokio glue, shared by the stacks on tokio (actix-rt is tokio too),
//! and the home of the at-rest `reactor-on-worker` variant (in [`run`]), of the race
//! `event-interval-1` variant (in the builder behind [`runtime`] and [`workers`]), and of
//! tokio's own answers' variants (`multi-thread` in [`runtime`], the `lifo-slot-off` variant in its
//! builder) and helpers ([`caught`], [`timer`]).

use std::future::{Future, IntoFuture};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Runtime};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::LocalSet;

pub use crate::shutdown::Shutdown;
use crate::{ApiError, Args, Demo, JOIN_TIMER, Stack};

/// Runs `server` to its end on the runtime the command line asks for ([`runtime`]), handing it
/// the [`Demo`] that names that runtime and the way to spawn a task on it (`tokio::spawn`).
///
/// Or, with the `reactor-on-worker` variant requested, the at-rest variant: `server` and every task
/// it spawns are polled on this thread, in a `LocalSet`, while epoll waits on the one worker of
/// a `multi_thread` runtime. Each request's readiness then wakes the worker first, which wakes
/// this thread: the hop async-io's reactor thread makes, added to tokio, with everything else
/// unchanged.
pub fn run<T, F>(
    stack: &'static Stack,
    args: &Args,
    server: impl FnOnce(Demo, fn(T)) -> F,
) -> io::Result<()>
where
    T: Future<Output = ()> + Send + 'static,
    F: Future<Output = io::Result<()>>,
{
    if args.wants("reactor-on-worker") {
        return run_beside_the_reactor(stack, args, server);
    }
    let (runtime, flavour) = runtime(args)?;
    let demo = Demo::new(stack, flavour, args);
    runtime.block_on(server(demo, |task| drop(tokio::spawn(task))))
}

/// the `reactor-on-worker` variant: requests are polled by this thread's `block_on`, which never
/// waits on epoll in a `multi_thread` runtime; the runtime's one worker does, and wakes this
/// thread.
fn run_beside_the_reactor<T, F>(
    stack: &'static Stack,
    args: &Args,
    server: impl FnOnce(Demo, fn(T)) -> F,
) -> io::Result<()>
where
    T: Future<Output = ()> + 'static,
    F: Future<Output = io::Result<()>>,
{
    let runtime = workers(1, args)?;
    let flavour = "tokio LocalSet on main, epoll on a multi_thread worker";
    let demo = Demo::new(stack, flavour, args);
    let on_main = LocalSet::new();
    let spawn: fn(T) = |task| drop(tokio::task::spawn_local(task));
    on_main.block_on(&runtime, server(demo, spawn))
}

/// The tokio runtime the command line asks for, and its label for `/ping`: for one reactor
/// thread, the caller's thread alone (`current_thread`, like one uvicorn worker), unless the
/// `multi-thread` variant asks for one worker; above, `multi_thread` with that many
/// work-stealing workers. `--blocking-threads` sets the blocking pool's
/// `max_blocking_threads` (tokio's default: 512) on either flavour.
pub fn runtime(args: &Args) -> io::Result<(Runtime, &'static str)> {
    if args.threads == 1 && !crate::variant::multi_thread_requested(args) {
        Ok((
            build(Builder::new_current_thread(), args)?,
            "tokio current_thread",
        ))
    } else {
        Ok((workers(args.threads, args)?, "tokio multi_thread"))
    }
}

/// A `multi_thread` runtime with `count` work-stealing workers, whatever `--threads` says,
/// and the blocking pool `--blocking-threads` asks for.
pub fn workers(count: usize, args: &Args) -> io::Result<Runtime> {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(count);
    build(builder, args)
}

fn build(mut builder: Builder, args: &Args) -> io::Result<Runtime> {
    if let Some(pool) = args.blocking_threads {
        builder.max_blocking_threads(pool);
    }
    if args.wants("event-interval-1") {
        builder.event_interval(1);
    }
    if args.wants("lifo-slot-off") {
        lifo_slot_off(&mut builder)?;
    }
    if args.wants("poll-hooks") {
        poll_hooks(&mut builder)?;
    }
    if args.wants("console") {
        tokio_console()?;
    }
    builder.enable_all().build()
}

/// The `poll-hooks` variant, where the build has tokio's unstable API.
#[cfg(tokio_unstable)]
fn poll_hooks(builder: &mut Builder) -> io::Result<()> {
    crate::poll_hooks::install(builder)
}

/// Without tokio's unstable API the variant cannot be built: a clear error, no server.
#[cfg(not(tokio_unstable))]
fn poll_hooks(_: &mut Builder) -> io::Result<()> {
    Err(unstable_only("poll-hooks"))
}

#[cfg(not(tokio_unstable))]
fn unstable_only(variant: &str) -> io::Error {
    io::Error::other(format!(
        "--variant {variant} needs a build with RUSTFLAGS=\"--cfg tokio_unstable\" \
         (scripts/run.sh makes one)"
    ))
}

/// The `lifo-slot-off` variant, where the build has tokio's unstable API.
#[cfg(tokio_unstable)]
fn lifo_slot_off(builder: &mut Builder) -> io::Result<()> {
    builder.disable_lifo_slot();
    Ok(())
}

/// Without tokio's unstable API the slot cannot be turned off: a clear error, no server.
#[cfg(not(tokio_unstable))]
fn lifo_slot_off(_: &mut Builder) -> io::Result<()> {
    Err(unstable_only("lifo-slot-off"))
}

/// Runs `blocking`, which calls `tokio::task::block_in_place`, turning its panic on a
/// `current_thread` runtime into a 500 that gives the panic's reason: the request fails, the
/// server goes on (uncaught, the panic would end the connection's task without an answer).
pub fn caught<T>(blocking: impl FnOnce() -> T) -> Result<T, ApiError> {
    catch_unwind(AssertUnwindSafe(blocking))
        .map_err(|panic| ApiError::panicked("tokio::task::block_in_place", &*panic))
}

/// The join routes' timer: due [`JOIN_TIMER`] after `started`, it gives how long after
/// `started` its task went on past it.
pub async fn timer(started: Instant) -> Duration {
    tokio::time::sleep_until((started + JOIN_TIMER).into()).await;
    started.elapsed()
}

/// The `console` variant, where the build has tokio's unstable API: installed before
/// the runtime exists, so that every task it spawns is seen.
#[cfg(tokio_unstable)]
fn tokio_console() -> io::Result<()> {
    crate::tokio_console::install()
}

/// Without tokio's unstable API tokio emits no task spans: a clear error, no server.
#[cfg(not(tokio_unstable))]
fn tokio_console() -> io::Result<()> {
    Err(unstable_only("console"))
}

impl Shutdown {
    /// Installs the SIGINT and SIGTERM handlers at once, so call it before announcing
    /// readiness: a signal sent right after the readiness line is then a graceful stop, never
    /// the default kill. Needs a running tokio runtime.
    pub fn on_signal() -> io::Result<Shutdown> {
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let (request, shutdown) = Shutdown::channel();
        tokio::spawn(async move {
            futures_lite::future::or(interrupt.recv(), terminate.recv()).await;
            request();
        });
        Ok(shutdown)
    }

    /// Runs `server` to its end, or gives up on it [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE)
    /// after a stop was requested: a graceful shutdown must not wait for ever on a slow client.
    pub async fn bounded<F>(&self, server: F) -> io::Result<()>
    where
        F: IntoFuture<Output = io::Result<()>>,
    {
        self.bounded_by(server, tokio::time::sleep).await
    }
}
