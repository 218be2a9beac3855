//! The demo routes on hyper 1, directly on tokio, without a framework.
//!
//! - Reactor: with `--threads 1`, a tokio `current_thread` runtime: the `main` thread accepts,
//!   polls every connection and drives epoll and the timers. With `--threads N`, a
//!   `multi_thread` runtime with N work-stealing `tokio-rt-worker` threads.
//! - Offload: `tokio::task::spawn_blocking`, tokio's blocking pool: up to 512 threads, idle
//!   ones kept for 10 s; `--blocking-threads` sets that limit (`max_blocking_threads`, in
//!   `for_tokio::runtime`).
//! - CPU: `/bad-cpu` on the reactor thread, `/ok-cpu-blocking` on the blocking pool,
//!   `/ok-cpu-yield` on the reactor with `tokio::task::yield_now` every ~1 ms, `/ok-cpu-pool`
//!   on the shared rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db` and `/bad-file` call ureq, rusqlite and
//!   `std::fs::read` on the reactor thread; their `-blocking` twins make the same calls through
//!   `tokio::task::spawn_blocking`. `/ok-http-await` awaits hyper's HTTP/1 client over a
//!   `tokio::net::TcpStream` (in `hyper_util::rt::TokioIo`); `/ok-db-await` awaits sqlx's
//!   `SqlitePool`, whose worker thread runs the query (sqlx's timers are tokio's here);
//!   `/ok-file-await` awaits `tokio::fs::read`, which is `std::fs::read` in `spawn_blocking`
//!   (tokio's `src/fs/read.rs` and `asyncify` in `src/fs/mod.rs`): the same blocking pool.
//! - tokio's own answers: `/ok-block-in-place` sleeps in `tokio::task::block_in_place` (a 500
//!   on `current_thread`, where it panics); `/join-block-in-place` and `/join-spawn-blocking`
//!   join a timer with the sleep in one task; `/bad-after-spawn` spawns a task, then sleeps.
//!   With `--variant lifo-slot-off` (a `tokio_unstable` build) the runtime has no LIFO slot.
//! - Stalls: `for_hyper::serve` times every poll of every request under its route
//!   (`--stall-ms`); `GET /stalls` reports them.
//! - Events: with `--events`, `for_hyper::serve` records each connection as its accept loop
//!   takes it and each request's start and end; `GET /events` reports them.

use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use demo_contract::for_hyper::{self, Answer, Handlers, IoResult, Task};
use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{CpuWork, Demo, Joined, Pong, Ran, Route, Spawned, Stack, Work, cpu};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

struct HyperTokio;

impl Handlers for HyperTokio {
    /// Answers at once, if the reactor thread is free to poll it.
    async fn ping(&self, demo: &Demo) -> Pong {
        demo.pong()
    }

    /// Blocks the reactor: the thread that should poll every other request sleeps instead.
    async fn bad(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::Bad, duration);
        std::thread::sleep(duration);
        work
    }

    /// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
    async fn ok_blocking(&self, duration: Duration) -> Work {
        tokio::task::spawn_blocking(move || {
            let work = STACK.work_here(Route::OkBlocking, duration);
            std::thread::sleep(duration);
            work
        })
        .await
        .expect("the sleep does not panic")
    }

    /// Frees the reactor: the task yields to the timer, and the thread polls others meanwhile.
    async fn ok_await(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::OkAwait, duration);
        tokio::time::sleep(duration).await;
        work
    }

    /// Blocks the reactor: the thread that should poll other requests computes instead.
    async fn bad_cpu(&self, cpu: Duration) -> CpuWork {
        STACK.burn_here(Route::BadCpu, cpu)
    }

    /// Frees the reactor: the work runs on a blocking-pool thread, one per request, and all of
    /// them share the cores.
    async fn ok_cpu_blocking(&self, cpu: Duration) -> CpuWork {
        tokio::task::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu))
            .await
            .expect("the work does not panic")
    }

    /// Shares the reactor: after each ~1 ms slice the task yields, and the thread polls others.
    async fn ok_cpu_yield(&self, cpu: Duration) -> CpuWork {
        STACK
            .burn_in_slices_here(Route::OkCpuYield, cpu, tokio::task::yield_now)
            .await
    }

    /// Frees the reactor: the work queues for the rayon pool, one thread per core.
    async fn ok_cpu_pool(&self, cpu: Duration) -> CpuWork {
        cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
    }

    /// Blocks the reactor: the thread waits inside ureq for the upstream's answer.
    async fn bad_http(&self, demo: &Demo, delay: Duration) -> IoResult {
        demo.blockers
            .upstream()?
            .get_blocking(&STACK, Route::BadHttp, delay)
    }

    /// Frees the reactor: ureq waits on a blocking-pool thread while this task waits.
    async fn ok_http_blocking(&self, demo: &Demo, delay: Duration) -> IoResult {
        let upstream = demo.blockers.upstream()?;
        tokio::task::spawn_blocking(move || {
            upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay)
        })
        .await
        .expect("the call does not panic")
    }

    /// Frees the reactor: hyper's client awaits the answer on tokio's sockets.
    async fn ok_http_await(&self, demo: &Demo, delay: Duration) -> IoResult {
        let connect =
            |addr: SocketAddr| async move { TcpStream::connect(addr).await.map(TokioIo::new) };
        let upstream = demo.blockers.upstream()?;
        upstream
            .get_over(&STACK, Route::OkHttpAwait, delay, connect)
            .await
    }

    /// Blocks the reactor: rusqlite executes the query on this thread.
    async fn bad_db(&self, demo: &Demo, ms: Duration) -> IoResult {
        demo.blockers
            .database()?
            .query_blocking(&STACK, Route::BadDb, ms)
    }

    /// Frees the reactor: rusqlite executes the query on a blocking-pool thread while this task
    /// waits.
    async fn ok_db_blocking(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        tokio::task::spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms))
            .await
            .expect("the query does not panic")
    }

    /// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
    async fn ok_db_await(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        db.query_async(&STACK, Route::OkDbAwait, ms).await
    }

    /// Blocks the reactor: the thread reads (and copies) the whole file.
    async fn bad_file(&self, demo: &Demo) -> IoResult {
        demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
    }

    /// Frees the reactor: the read runs on a blocking-pool thread while this task waits.
    async fn ok_file_blocking(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        tokio::task::spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking))
            .await
            .expect("the read does not panic")
    }

    /// Frees the reactor: tokio::fs::read is std::fs::read on the blocking pool.
    async fn ok_file_await(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        file.read_awaited(&STACK, Route::OkFileAwait, tokio::fs::read(file.path()))
            .await
    }

    /// Frees the worker's other tasks: tokio hands them to a new worker thread, and this one
    /// sleeps. On `current_thread` it panics, caught as a 500.
    async fn ok_block_in_place(&self, duration: Duration) -> Answer<Work> {
        for_tokio::caught(|| {
            tokio::task::block_in_place(|| {
                let work = STACK.work_here(Route::OkBlockInPlace, duration);
                std::thread::sleep(duration);
                work
            })
        })
    }

    /// Holds its own task: the timer joined beside `block_in_place` fires only when the sleep
    /// ends.
    async fn join_block_in_place(&self, duration: Duration) -> Answer<Joined> {
        let started = Instant::now();
        let (fired, work) = tokio::join!(for_tokio::timer(started), async {
            for_tokio::caught(|| {
                tokio::task::block_in_place(|| {
                    let work = STACK.work_here(Route::JoinBlockInPlace, duration);
                    std::thread::sleep(duration);
                    work
                })
            })
        });
        Ok(Joined::new(work?, fired))
    }

    /// Frees its own task: the sleep is on a blocking-pool thread, so the timer fires on time.
    async fn join_spawn_blocking(&self, duration: Duration) -> Answer<Joined> {
        let started = Instant::now();
        let (fired, work) = tokio::join!(
            for_tokio::timer(started),
            tokio::task::spawn_blocking(move || {
                let work = STACK.work_here(Route::JoinSpawnBlocking, duration);
                std::thread::sleep(duration);
                work
            }),
        );
        Ok(Joined::new(work.expect("the sleep does not panic"), fired))
    }

    /// Blocks the worker just after a spawn: the new task waits in this worker's LIFO slot,
    /// which idle workers do not steal, until the sleep ends.
    async fn bad_after_spawn(&self, duration: Duration) -> Answer<Spawned> {
        let spawned = tokio::spawn(Ran::since(Instant::now()));
        let work = STACK.work_here(Route::BadAfterSpawn, duration);
        std::thread::sleep(duration);
        Ok(Spawned::new(
            work,
            spawned.await.expect("the task does not panic"),
        ))
    }
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let addr = args.addr();
    for_tokio::run(&STACK, &args, |demo, spawn| serve(demo, addr, spawn))
}

/// Accepts connections and serves each as a task handed to `spawn`, until SIGINT or SIGTERM.
async fn serve(demo: Demo, addr: SocketAddr, spawn: fn(Task)) -> std::io::Result<()> {
    let listener = TcpListener::from_std(demo_contract::listen(addr)?)?;
    let stop = Shutdown::on_signal()?;
    demo.announce(listener.local_addr()?);
    let incoming = futures_lite::stream::poll_fn(|cx| {
        listener
            .poll_accept(cx)
            .map(|accepted| Some(accepted.map(|(stream, peer)| (TokioIo::new(stream), peer))))
    });
    for_hyper::serve(
        HyperTokio,
        demo,
        incoming,
        spawn,
        TokioTimer::new(),
        stop.requested(),
    )
    .await;
    Ok(())
}
