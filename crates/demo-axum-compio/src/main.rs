//! The demo routes on axum 0.8, served by cyper-axum on compio: the same `Router` as
//! `demo-axum`, on a thread-per-core runtime that waits for I/O completions on io_uring.
//!
//! - Reactor: `--threads N` threads (`main`, `compio-1`, ...), each its own compio runtime
//!   with its own io_uring and its own `SO_REUSEPORT` listener. The kernel picks the listener
//!   for each new connection; the connection and every request on it stay on that thread.
//!   Nothing is stolen: a thread blocked in `/bad` stalls every connection it holds while the
//!   others idle.
//! - Offload: `compio::runtime::spawn_blocking`, a pool of up to 256 threads shared by every
//!   runtime; `--blocking-threads` sets that limit (`for_compio::run`).
//! - Timer: `compio::time::sleep`, the runtime's own timer wheel.
//! - CPU: `/bad-cpu` on the reactor thread, `/ok-cpu-blocking` on the blocking pool,
//!   `/ok-cpu-yield` on the reactor with `futures_lite::future::yield_now` every ~1 ms (compio
//!   has no yield of its own), `/ok-cpu-pool` on the shared rayon pool (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db`, `/bad-file` make a blocking call (ureq,
//!   rusqlite, `std::fs::read`) on the reactor thread; `/ok-*-blocking` make it with
//!   `spawn_blocking`; `/ok-http-await` awaits hyper's HTTP/1 client on compio's `TcpStream`
//!   (cyper-core's `HyperStream`), `/ok-db-await` sqlx's `SqlitePool` (a worker thread per
//!   connection), and `/ok-file-await` `compio::fs::read`: an io_uring `OPENAT`, then `READ`s
//!   into the `Vec`'s spare capacity, doubling it, until one reads 0 (compio-fs's
//!   `utils/mod.rs`, compio-io's `read_to_end_at`). No blocking pool and no io-wq thread
//!   for a cached file: the kernel copies from the page cache on this thread, as system time
//!   of its `io_uring_enter`, so each `READ` still holds the reactor for its copy.
//! - Stalls and events: as in `demo-axum` (`for_axum::watch_layer`, which also marks the
//!   reactor thread, `for_compio::Accepts`).
//!
//! Why `SendWrapper`: axum wants every handler's future to be `Send`, as on tokio's
//! work-stealing runtime, where a task may move between threads at any `.await`. compio's
//! timer future holds an `Rc` of its runtime's timer (`TimerFuture`, in compio-runtime's
//! `time/future.rs`), so it is `!Send`, and axum rejects `ok_await` without the wrapper; so
//! are the futures of compio's file read and of its `TcpStream::connect` (its runtime's ops).
//! (`spawn_blocking`'s handle is `Send` whenever its result is.) `send_wrapper::SendWrapper`
//! makes the timer `Send` by checking, at every poll and at drop, that it is still on the
//! thread that made it, and panicking if not. It never moves: cyper-axum runs each connection
//! as a task of this thread's runtime (`compio::runtime::spawn`), which has no other thread
//! to move it to. cyper-axum wraps its own connection futures the same way.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use compio::net::TcpStream;
use cyper_core::HyperStream;
use demo_contract::for_axum::{self, unmatched};
use demo_contract::for_compio;
use demo_contract::{ApiError, CpuWork, Demo, IoWork, Pong, Route, Sleep, Stack, Work, cpu};
use send_wrapper::SendWrapper;
use std::sync::LazyLock;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// Answers at once, if this connection's thread is free to poll it.
async fn ping(State(demo): State<Demo>) -> Pong {
    demo.pong()
}

/// Blocks the reactor: this thread sleeps, and every connection it holds waits.
async fn bad(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::Bad, duration);
    std::thread::sleep(duration);
    work
}

/// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
async fn ok_blocking(Sleep(duration): Sleep) -> Work {
    compio::runtime::spawn_blocking(move || {
        let work = STACK.work_here(Route::OkBlocking, duration);
        std::thread::sleep(duration);
        work
    })
    .await
    .expect("the sleep does not panic")
}

/// Frees the reactor: the task waits on the runtime's timer, and the thread polls others.
async fn ok_await(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::OkAwait, duration);
    SendWrapper::new(compio::time::sleep(duration)).await;
    work
}

/// Blocks the reactor: this thread computes, and every connection it holds waits.
async fn bad_cpu(Sleep(cpu): Sleep) -> CpuWork {
    STACK.burn_here(Route::BadCpu, cpu)
}

/// Frees the reactor: the work runs on a blocking-pool thread, one per request.
async fn ok_cpu_blocking(Sleep(cpu): Sleep) -> CpuWork {
    compio::runtime::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu))
        .await
        .expect("the work does not panic")
}

/// Shares the reactor, up to a point: after each ~1 ms slice the task wakes itself and goes
/// to the back of the run queue, but compio reaps io_uring's completions only every 61 task
/// polls, so new connections and reads wait behind many slices.
async fn ok_cpu_yield(Sleep(cpu): Sleep) -> CpuWork {
    STACK
        .burn_in_slices_here(Route::OkCpuYield, cpu, futures_lite::future::yield_now)
        .await
}

/// Frees the reactor: the work queues for the rayon pool, one thread per core.
async fn ok_cpu_pool(Sleep(cpu): Sleep) -> CpuWork {
    cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
}

/// Blocks the reactor: this thread waits inside ureq for the upstream's answer.
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
    compio::runtime::spawn_blocking(move || {
        upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay)
    })
    .await
    .expect("the call does not panic")
}

/// Frees the reactor: hyper's client awaits the answer on this runtime's io_uring sockets.
async fn ok_http_await(State(demo): State<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    let connect = |addr| async move { TcpStream::connect(addr).await.map(HyperStream::new_plain) };
    let upstream = demo.blockers.upstream()?;
    SendWrapper::new(upstream.get_over(&STACK, Route::OkHttpAwait, delay, connect)).await
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
    compio::runtime::spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms))
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

/// Blocks the reactor: this thread reads (and copies) the whole file.
async fn bad_file(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
}

/// Frees the reactor: a blocking-pool thread reads the file while this task waits.
async fn ok_file_blocking(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    compio::runtime::spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking))
        .await
        .expect("the read does not panic")
}

/// Frees the reactor, mostly: the task awaits io_uring's reads, but the kernel copies a
/// cached file's pages on this thread, one `READ` (up to half the file) at a time.
async fn ok_file_await(State(demo): State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    let read = SendWrapper::new(compio::fs::read(file.path()));
    file.read_awaited(&STACK, Route::OkFileAwait, read).await
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, for_compio::runtime(&args), &args);
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
    // Threads, listeners, signals and the blocking pool: `for_compio::run`.
    for_compio::run(demo, &args, app)
}
