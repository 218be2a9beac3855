//! The demo routes on hyper 1 and async-std 1.
//!
//! async-std is discontinued upstream, which recommends smol; it stays here because much
//! code still runs on it, and it shows a third executor design.
//!
//! - Reactor: the global executor (async-global-executor) on `--threads` threads named
//!   `async-std/runtime`, set through `ASYNC_STD_THREAD_COUNT`, which async-std reads once at
//!   first use. epoll itself runs in async-io, on its own `async-io` thread (or inside a
//!   `block_on`): wake-ups still arrive while `/bad` sleeps, but no executor thread is free to
//!   poll the woken tasks.
//! - Offload: `async_std::task::spawn_blocking`, the `blocking` crate's pool: up to 500
//!   threads; `--blocking-threads` sets that limit (`blocking::set_max_blocking_threads`,
//!   through `for_async_io::size_blocking_pool`).
//! - CPU: `/bad-cpu` on the executor thread, `/ok-cpu-blocking` on the `blocking` pool,
//!   `/ok-cpu-yield` on the executor with `async_std::task::yield_now` every ~1 ms,
//!   `/ok-cpu-pool` on the shared rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db` and `/bad-file` call ureq, rusqlite and
//!   `std::fs::read` on the executor thread; their `-blocking` twins make the same calls through
//!   `async_std::task::spawn_blocking`. `/ok-http-await` awaits hyper's HTTP/1 client over an
//!   `async_std::net::TcpStream` (in `smol_hyper::rt::FuturesIo`); `/ok-db-await` awaits sqlx's
//!   `SqlitePool`, whose worker thread runs the query (with no tokio runtime, sqlx's timers and
//!   tasks are async-std's: sqlx-core's `rt`); `/ok-file-await` awaits `async_std::fs::read`,
//!   which is `std::fs::read` in `spawn_blocking` (async-std's `src/fs/read.rs`), so on the
//!   same `blocking` pool.
//! - Stalls: `for_hyper::serve` times every poll of every request under its route
//!   (`--stall-ms`); `GET /stalls` reports them.
//! - Events: with `--events`, `for_hyper::serve` records each connection as its accept loop
//!   takes it (hence `listener.accept()`, which gives the client's address, rather than
//!   `incoming()`) and each request's start and end; `GET /events` reports them.

use std::io;
use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use async_std::net::{TcpListener, TcpStream};
use async_std::task;
use demo_contract::for_hyper::{self, Handlers, IoResult};
use demo_contract::{CpuWork, Demo, Pong, Route, Stack, Work, cpu, for_async_io};
use futures_lite::StreamExt as _;
use smol_hyper::rt::{FuturesIo, SmolTimer};

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

struct HyperAsyncStd;

impl Handlers for HyperAsyncStd {
    /// Answers at once, if an executor thread is free to poll it.
    async fn ping(&self, demo: &Demo) -> Pong {
        demo.pong()
    }

    /// Blocks the reactor: the executor thread that should poll other requests sleeps instead.
    async fn bad(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::Bad, duration);
        std::thread::sleep(duration);
        work
    }

    /// Frees the reactor: the sleep runs on a `blocking` pool thread while this task waits.
    async fn ok_blocking(&self, duration: Duration) -> Work {
        task::spawn_blocking(move || {
            let work = STACK.work_here(Route::OkBlocking, duration);
            std::thread::sleep(duration);
            work
        })
        .await
    }

    /// Frees the reactor: the task yields to the timer, and the thread polls others meanwhile.
    async fn ok_await(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::OkAwait, duration);
        task::sleep(duration).await;
        work
    }

    /// Blocks the reactor: the executor thread that should poll other requests computes instead.
    async fn bad_cpu(&self, cpu: Duration) -> CpuWork {
        STACK.burn_here(Route::BadCpu, cpu)
    }

    /// Frees the reactor: the work runs on a `blocking` pool thread, one per request, and all of
    /// them share the cores.
    async fn ok_cpu_blocking(&self, cpu: Duration) -> CpuWork {
        task::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu)).await
    }

    /// Shares the reactor: after each ~1 ms slice the task yields, and the thread polls others.
    async fn ok_cpu_yield(&self, cpu: Duration) -> CpuWork {
        STACK
            .burn_in_slices_here(Route::OkCpuYield, cpu, task::yield_now)
            .await
    }

    /// Frees the reactor: the work queues for the rayon pool, one thread per core.
    async fn ok_cpu_pool(&self, cpu: Duration) -> CpuWork {
        cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
    }

    /// Blocks the reactor: the executor thread waits inside ureq for the upstream's answer.
    async fn bad_http(&self, demo: &Demo, delay: Duration) -> IoResult {
        demo.blockers
            .upstream()?
            .get_blocking(&STACK, Route::BadHttp, delay)
    }

    /// Frees the reactor: ureq waits on a `blocking` pool thread while this task waits.
    async fn ok_http_blocking(&self, demo: &Demo, delay: Duration) -> IoResult {
        let upstream = demo.blockers.upstream()?;
        task::spawn_blocking(move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay))
            .await
    }

    /// Frees the reactor: hyper's client awaits the answer on async-std's sockets.
    async fn ok_http_await(&self, demo: &Demo, delay: Duration) -> IoResult {
        let connect =
            |addr: SocketAddr| async move { TcpStream::connect(addr).await.map(FuturesIo::new) };
        let upstream = demo.blockers.upstream()?;
        upstream
            .get_over(&STACK, Route::OkHttpAwait, delay, connect)
            .await
    }

    /// Blocks the reactor: rusqlite executes the query on the executor thread.
    async fn bad_db(&self, demo: &Demo, ms: Duration) -> IoResult {
        demo.blockers
            .database()?
            .query_blocking(&STACK, Route::BadDb, ms)
    }

    /// Frees the reactor: rusqlite executes the query on a `blocking` pool thread while this
    /// task waits.
    async fn ok_db_blocking(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        task::spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms)).await
    }

    /// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
    async fn ok_db_await(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        db.query_async(&STACK, Route::OkDbAwait, ms).await
    }

    /// Blocks the reactor: the executor thread reads (and copies) the whole file.
    async fn bad_file(&self, demo: &Demo) -> IoResult {
        demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
    }

    /// Frees the reactor: the read runs on a `blocking` pool thread while this task waits.
    async fn ok_file_blocking(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        task::spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking)).await
    }

    /// Frees the reactor: async_std::fs::read is std::fs::read on the `blocking` pool.
    async fn ok_file_await(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        let read = async { async_std::fs::read(file.path()).await.map_err(os_reason) };
        file.read_awaited(&STACK, Route::OkFileAwait, read).await
    }
}

/// async-std's `fs::read` replaces its error's message with "could not read file `PATH`",
/// keeping the OS's error only as its source: this puts the OS's reason back in the message, as
/// the other file routes report it.
fn os_reason(error: io::Error) -> io::Error {
    match error.get_ref().and_then(|wrapper| wrapper.source()) {
        Some(reason) => io::Error::new(error.kind(), reason.to_string()),
        None => error,
    }
}

#[allow(unsafe_code)]
fn main() -> std::io::Result<()> {
    let args = STACK.args();
    // SAFETY: no other thread exists yet, so nothing can read the environment while we
    // write it; async-std reads its variable once, when its executor starts, below.
    unsafe { std::env::set_var("ASYNC_STD_THREAD_COUNT", args.threads.to_string()) };
    for_async_io::size_blocking_pool(args.blocking_threads);
    let demo = Demo::new(&STACK, "async-std global executor", &args);

    // `block_on` would poll its future on this thread, outside the executor: spawn the server
    // so that accepting and serving both run on the executor's threads.
    task::block_on(task::spawn(async move {
        let listener = TcpListener::from(demo_contract::listen(args.addr())?);
        let stop = for_async_io::shutdown_signal()?;
        demo.announce(listener.local_addr()?);
        let incoming = futures_lite::stream::repeat(()).then(|()| listener.accept());
        let incoming =
            incoming.map(|accepted| accepted.map(|(io, peer)| (FuturesIo::new(io), peer)));
        let spawn = |task| drop(task::spawn(task));
        for_hyper::serve(HyperAsyncStd, demo, incoming, spawn, SmolTimer::new(), stop).await;
        Ok(())
    }))
}
