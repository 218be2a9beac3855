//! The demo routes on hyper 1 and smol 2.
//!
//! - Reactor: our own `smol::Executor`, run on `--threads` threads named `smol-executor-N`
//!   (`for_async_io::run_executor`; idle threads steal from busy ones). epoll itself runs in
//!   async-io, on its own `async-io` thread (or inside a `block_on`): wake-ups still arrive
//!   while `/bad` sleeps, but no executor thread is free to poll the woken tasks.
//! - Offload: `smol::unblock`, the `blocking` crate's pool: up to 500 threads;
//!   `--blocking-threads` sets that limit (`blocking::set_max_blocking_threads`, through
//!   `for_async_io::size_blocking_pool`).
//! - CPU: `/bad-cpu` on the executor thread, `/ok-cpu-blocking` on the `blocking` pool
//!   (`smol::unblock`), `/ok-cpu-yield` on the executor with `future::yield_now` every ~1 ms,
//!   `/ok-cpu-pool` on the shared rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db` and `/bad-file` call ureq, rusqlite and
//!   `std::fs::read` on the executor thread; their `-blocking` twins make the same calls through
//!   `smol::unblock`. `/ok-http-await` awaits hyper's HTTP/1 client over a `smol::net::TcpStream`
//!   (in `smol_hyper::rt::FuturesIo`); `/ok-db-await` awaits sqlx's `SqlitePool`, whose worker
//!   thread runs the query (with no tokio runtime, sqlx's timers and tasks are async-std's:
//!   sqlx-core's `rt`, so async-std's global executor starts beside ours); `/ok-file-await`
//!   awaits `smol::fs::read`, which is async-fs's `read`: `std::fs::read` in `unblock`, the
//!   same `blocking` pool.
//! - Stalls: `for_hyper::serve` times every poll of every request under its route
//!   (`--stall-ms`); `GET /stalls` reports them.
//! - Events: with `--events`, `for_hyper::serve` records each connection as its accept loop
//!   takes it (hence `listener.accept()`, which gives the client's address, rather than
//!   `incoming()`) and each request's start and end; `GET /events` reports them.

use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use demo_contract::for_hyper::{self, Handlers, IoResult};
use demo_contract::{CpuWork, Demo, Pong, Route, Stack, Work, cpu, for_async_io};
use smol::net::{TcpListener, TcpStream};
use smol::stream::StreamExt as _;
use smol::{Executor, Timer, future};
use smol_hyper::rt::{FuturesIo, SmolTimer};

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// The executor every request future is polled on.
static EXECUTOR: Executor<'static> = Executor::new();

struct HyperSmol;

impl Handlers for HyperSmol {
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
        smol::unblock(move || {
            let work = STACK.work_here(Route::OkBlocking, duration);
            std::thread::sleep(duration);
            work
        })
        .await
    }

    /// Frees the reactor: the task yields to the timer, and the thread polls others meanwhile.
    async fn ok_await(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::OkAwait, duration);
        Timer::after(duration).await;
        work
    }

    /// Blocks the reactor: the executor thread that should poll other requests computes instead.
    async fn bad_cpu(&self, cpu: Duration) -> CpuWork {
        STACK.burn_here(Route::BadCpu, cpu)
    }

    /// Frees the reactor: the work runs on a `blocking` pool thread, one per request, and all of
    /// them share the cores.
    async fn ok_cpu_blocking(&self, cpu: Duration) -> CpuWork {
        smol::unblock(move || STACK.burn_here(Route::OkCpuBlocking, cpu)).await
    }

    /// Shares the reactor: after each ~1 ms slice the task yields, and the thread polls others.
    async fn ok_cpu_yield(&self, cpu: Duration) -> CpuWork {
        STACK
            .burn_in_slices_here(Route::OkCpuYield, cpu, future::yield_now)
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
        smol::unblock(move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay)).await
    }

    /// Frees the reactor: hyper's client awaits the answer on smol's sockets.
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
        smol::unblock(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms)).await
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
        smol::unblock(move || file.read_blocking(&STACK, Route::OkFileBlocking)).await
    }

    /// Frees the reactor: smol::fs::read is std::fs::read on the `blocking` pool.
    async fn ok_file_await(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        file.read_awaited(&STACK, Route::OkFileAwait, smol::fs::read(file.path()))
            .await
    }
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    for_async_io::size_blocking_pool(args.blocking_threads);
    let addr = args.addr();
    for_async_io::run_executor(&EXECUTOR, &STACK, &args, |demo| serve(demo, addr))
}

/// Accepts connections and serves each as a task on [`EXECUTOR`], until SIGINT or SIGTERM.
async fn serve(demo: Demo, addr: SocketAddr) -> std::io::Result<()> {
    let listener = TcpListener::try_from(demo_contract::listen(addr)?)?;
    let stop = for_async_io::shutdown_signal()?;
    demo.announce(listener.local_addr()?);
    let incoming = smol::stream::repeat(()).then(|()| listener.accept());
    let incoming = incoming.map(|accepted| accepted.map(|(io, peer)| (FuturesIo::new(io), peer)));
    let spawn = |task| EXECUTOR.spawn(task).detach();
    for_hyper::serve(HyperSmol, demo, incoming, spawn, SmolTimer::new(), stop).await;
    Ok(())
}
