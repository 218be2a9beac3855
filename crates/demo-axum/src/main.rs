//! The demo routes on axum 0.8 and tokio.
//!
//! - Reactor: with `--threads 1`, a tokio `current_thread` runtime: the `main` thread polls
//!   every request future and also drives epoll and the timers. With `--threads N`, a
//!   `multi_thread` runtime with N work-stealing `tokio-rt-worker` threads.
//! - Offload: `tokio::task::spawn_blocking`, tokio's blocking pool: up to 512 threads, idle
//!   ones kept for 10 s; `--blocking-threads` sets that limit (`max_blocking_threads`, in
//!   `for_tokio::runtime`).
//! - CPU: `/bad-cpu` on the reactor thread, `/ok-cpu-blocking` on the blocking pool,
//!   `/ok-cpu-yield` on the reactor with `tokio::task::yield_now` every ~1 ms, `/ok-cpu-pool`
//!   on the shared rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db`, `/bad-file` make a blocking call (ureq,
//!   rusqlite, `std::fs::read`) on the reactor thread; `/ok-*-blocking` make it with
//!   `spawn_blocking`; `/ok-http-await` awaits hyper's HTTP/1 client on tokio's `TcpStream`,
//!   `/ok-db-await` sqlx's `SqlitePool` (a worker thread per connection), and
//!   `/ok-file-await` `tokio::fs::read`, which is `std::fs::read` on the blocking pool
//!   (tokio's `fs/read.rs`: without io_uring, `asyncify`, i.e. `spawn_blocking`).
//! - Stalls: reactor-watch's tower layer times every poll of every request under the route
//!   axum matched (`for_axum::watch_layer`, `--stall-ms`); `GET /stalls` reports them, and
//!   `--health-port` serves `GET /health` from a thread of its own. The same layer marks the
//!   reactor thread, for the file routes, which read no `?ms=`.
//! - tokio's own answers: `/ok-block-in-place` sleeps in `tokio::task::block_in_place` (a 500
//!   on `current_thread`, where it panics); `/join-block-in-place` and `/join-spawn-blocking`
//!   join a timer with the sleep in one task; `/bad-after-spawn` spawns a task, then sleeps.
//! - Events: `for_axum::serve` is `axum::serve` recording, with `--events`, each accept and
//!   each request's start and end; `GET /events` reports them.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use demo_contract::for_axum::{self, unmatched};
use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{
    ApiError, CpuWork, Demo, IoWork, Joined, Pong, Ran, Route, Sleep, Spawned, Stack, Work, cpu,
};
use hyper_util::rt::TokioIo;
use std::sync::LazyLock;
use std::time::Instant;
use tokio::net::{TcpListener, TcpStream};

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// Answers at once, if the reactor thread is free to poll it.
async fn ping(State(demo): State<Demo>) -> Pong {
    demo.pong()
}

/// Blocks the reactor: the thread that should poll every other request sleeps instead.
async fn bad(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::Bad, duration);
    std::thread::sleep(duration);
    work
}

/// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
async fn ok_blocking(Sleep(duration): Sleep) -> Work {
    tokio::task::spawn_blocking(move || {
        let work = STACK.work_here(Route::OkBlocking, duration);
        std::thread::sleep(duration);
        work
    })
    .await
    .expect("the sleep does not panic")
}

/// Frees the reactor: the task yields to the timer, and the thread polls others meanwhile.
async fn ok_await(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::OkAwait, duration);
    tokio::time::sleep(duration).await;
    work
}

/// Blocks the reactor: the thread that should poll every other request computes instead.
async fn bad_cpu(Sleep(cpu): Sleep) -> CpuWork {
    STACK.burn_here(Route::BadCpu, cpu)
}

/// Frees the reactor: the work runs on a blocking-pool thread, one per request, and all of
/// them share the cores.
async fn ok_cpu_blocking(Sleep(cpu): Sleep) -> CpuWork {
    tokio::task::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu))
        .await
        .expect("the work does not panic")
}

/// Shares the reactor: after each ~1 ms slice the task yields, and the thread polls others.
async fn ok_cpu_yield(Sleep(cpu): Sleep) -> CpuWork {
    STACK
        .burn_in_slices_here(Route::OkCpuYield, cpu, tokio::task::yield_now)
        .await
}

/// Frees the reactor: the work queues for the rayon pool, one thread per core.
async fn ok_cpu_pool(Sleep(cpu): Sleep) -> CpuWork {
    cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
}

/// Blocks the reactor: the thread waits inside ureq for the upstream's answer.
async fn bad_http(State(demo): State<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .upstream()?
        .get_blocking(&STACK, Route::BadHttp, delay)
}

/// Frees the reactor: ureq waits on a blocking-pool thread while this task waits.
async fn ok_http_blocking(
    State(demo): State<Demo>,
    Sleep(delay): Sleep,
) -> Result<IoWork, ApiError> {
    let upstream = demo.blockers.upstream()?;
    tokio::task::spawn_blocking(move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay))
        .await
        .expect("the call does not panic")
}

/// Frees the reactor: hyper's client awaits the answer on tokio's sockets.
async fn ok_http_await(State(demo): State<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    let connect = |addr| async move { TcpStream::connect(addr).await.map(TokioIo::new) };
    demo.blockers
        .upstream()?
        .get_over(&STACK, Route::OkHttpAwait, delay, connect)
        .await
}

/// Blocks the reactor: rusqlite executes the query on this thread.
async fn bad_db(State(demo): State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_blocking(&STACK, Route::BadDb, ms)
}

/// Frees the reactor: rusqlite executes the query on a blocking-pool thread.
async fn ok_db_blocking(State(demo): State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    let db = demo.blockers.database()?;
    tokio::task::spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms))
        .await
        .expect("the query does not panic")
}

/// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
async fn ok_db_await(State(demo): State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_async(&STACK, Route::OkDbAwait, ms)
        .await
}

/// Blocks the reactor: the thread reads (and copies) the whole file.
async fn bad_file(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
}

/// Frees the reactor: a blocking-pool thread reads the file while this task waits.
async fn ok_file_blocking(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    tokio::task::spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking))
        .await
        .expect("the read does not panic")
}

/// Frees the reactor: tokio::fs::read is std::fs::read on the blocking pool.
async fn ok_file_await(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    file.read_awaited(&STACK, Route::OkFileAwait, tokio::fs::read(file.path()))
        .await
}

/// Frees the worker's other tasks: tokio hands them to a new worker thread, and this one
/// sleeps. On `current_thread` it panics, caught as a 500.
async fn ok_block_in_place(Sleep(duration): Sleep) -> Result<Work, ApiError> {
    for_tokio::caught(|| {
        tokio::task::block_in_place(|| {
            let work = STACK.work_here(Route::OkBlockInPlace, duration);
            std::thread::sleep(duration);
            work
        })
    })
}

/// Holds its own task: the timer joined beside `block_in_place` fires only when the sleep ends.
async fn join_block_in_place(Sleep(duration): Sleep) -> Result<Joined, ApiError> {
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
async fn join_spawn_blocking(Sleep(duration): Sleep) -> Joined {
    let started = Instant::now();
    let (fired, work) = tokio::join!(
        for_tokio::timer(started),
        tokio::task::spawn_blocking(move || {
            let work = STACK.work_here(Route::JoinSpawnBlocking, duration);
            std::thread::sleep(duration);
            work
        }),
    );
    Joined::new(work.expect("the sleep does not panic"), fired)
}

/// Blocks the worker just after a spawn: the new task waits in this worker's LIFO slot, which
/// idle workers do not steal, until the sleep ends.
async fn bad_after_spawn(Sleep(duration): Sleep) -> Spawned {
    let spawned = tokio::spawn(Ran::since(Instant::now()));
    let work = STACK.work_here(Route::BadAfterSpawn, duration);
    std::thread::sleep(duration);
    Spawned::new(work, spawned.await.expect("the task does not panic"))
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let (runtime, flavour) = for_tokio::runtime(&args)?;
    let demo = Demo::new(&STACK, flavour, &args);
    let mut app = Router::new()
        .route(Route::Ping.path(), get(ping))
        .route(Route::Bad.path(), get(bad))
        .route(Route::OkAwait.path(), get(ok_await))
        .route(Route::BadCpu.path(), get(bad_cpu))
        .route(Route::OkCpuBlocking.path(), get(ok_cpu_blocking))
        .route(Route::OkCpuYield.path(), get(ok_cpu_yield))
        .route(Route::OkCpuPool.path(), get(ok_cpu_pool))
        .route(Route::BadHttp.path(), get(bad_http))
        .route(Route::OkHttpBlocking.path(), get(ok_http_blocking))
        .route(Route::OkHttpAwait.path(), get(ok_http_await))
        .route(Route::BadDb.path(), get(bad_db))
        .route(Route::OkDbBlocking.path(), get(ok_db_blocking))
        .route(Route::OkDbAwait.path(), get(ok_db_await))
        .route(Route::BadFile.path(), get(bad_file))
        .route(Route::OkFileBlocking.path(), get(ok_file_blocking))
        .route(Route::OkFileAwait.path(), get(ok_file_await))
        .route(Route::OkBlockInPlace.path(), get(ok_block_in_place))
        .route(Route::JoinBlockInPlace.path(), get(join_block_in_place))
        .route(Route::JoinSpawnBlocking.path(), get(join_spawn_blocking))
        .route(Route::BadAfterSpawn.path(), get(bad_after_spawn))
        .route(Route::Stalls.path(), get(for_axum::stalls))
        .route(Route::Events.path(), get(for_axum::events));
    for path in Route::OkBlocking.paths() {
        app = app.route(path, get(ok_blocking));
    }
    let app = app
        .fallback(unmatched)
        .method_not_allowed_fallback(unmatched)
        .layer(for_axum::watch_layer(demo))
        .with_state(demo);

    runtime.block_on(async {
        let listener = TcpListener::from_std(demo_contract::listen(args.addr())?)?;
        let stop = Shutdown::on_signal()?;
        demo.announce(listener.local_addr()?);
        stop.bounded(for_axum::serve(demo, listener, app).with_graceful_shutdown(stop.requested()))
            .await
    })
}
