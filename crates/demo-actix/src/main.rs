//! The demo routes on actix-web 4.
//!
//! - Reactor: `--threads` workers (`HttpServer::workers`), each its own single-threaded tokio
//!   runtime on a thread named `actix-rt|system:0|arbiter:N`. A separate accept thread hands
//!   each new connection to one worker, round-robin; a connection never moves, nothing is
//!   stolen. So a worker blocked in `/bad` stalls every connection it holds.
//! - Offload: `actix_web::web::block`, which is tokio's `spawn_blocking` on that worker's
//!   runtime: a pool per worker of max(512 / cores, 1) threads, 256 on a 2-core machine;
//!   `--blocking-threads K` makes it K per worker (`worker_max_blocking_threads`, in
//!   `for_actix::run`).
//! - CPU: `/bad-cpu` on the worker, `/ok-cpu-blocking` on its blocking pool (`web::block`),
//!   `/ok-cpu-yield` on the worker with `actix_web::rt::task::yield_now` (tokio's) every
//!   ~1 ms, `/ok-cpu-pool` on the shared rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db`, `/bad-file` make a blocking call (ureq,
//!   rusqlite, `std::fs::read`) on the worker; `/ok-*-blocking` make it with `web::block`;
//!   `/ok-http-await` awaits hyper's HTTP/1 client on the worker's tokio `TcpStream`,
//!   `/ok-db-await` sqlx's `SqlitePool` (a worker thread per connection), and
//!   `/ok-file-await` `tokio::fs::read`, which is `std::fs::read` on the worker's blocking pool
//!   (tokio's `fs/read.rs`: without io_uring, `asyncify`, i.e. `spawn_blocking`).
//! - Stalls: `wrap_fn` times every poll of every request under the resource actix-web
//!   matched (`for_actix::watch_request`, `--stall-ms`); `GET /stalls` reports them. The
//!   same `wrap_fn` marks the worker as a reactor thread, for the file routes, which read no
//!   `?ms=`.
//! - Events: with `--events`, `on_connect` (in `for_actix::run`) records each connection as
//!   its worker takes it, and `wrap_fn` each request's start and end
//!   (`for_actix::record_events`); `GET /events` reports them.

use actix_web::rt::net::TcpStream;
use actix_web::{App, HttpServer, web};
use demo_contract::for_actix::{self, get, record_events, unmatched, watch_request};
use demo_contract::{ApiError, CpuWork, Demo, IoWork, Pong, Route, Sleep, Stack, Work, cpu};
use hyper_util::rt::TokioIo;
use std::sync::LazyLock;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// Answers at once, if this connection's worker is free to poll it.
async fn ping(demo: web::Data<Demo>) -> Pong {
    demo.pong()
}

/// Blocks the reactor: the worker sleeps, and every connection it holds waits.
async fn bad(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::Bad, duration);
    std::thread::sleep(duration);
    work
}

/// Frees the reactor: the sleep runs on the worker's blocking pool while this task waits.
async fn ok_blocking(Sleep(duration): Sleep) -> Work {
    web::block(move || {
        let work = STACK.work_here(Route::OkBlocking, duration);
        std::thread::sleep(duration);
        work
    })
    .await
    .expect("the sleep does not panic")
}

/// Frees the reactor: the task yields to the timer, and the worker polls others meanwhile.
async fn ok_await(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::OkAwait, duration);
    actix_web::rt::time::sleep(duration).await;
    work
}

/// Blocks the reactor: the worker computes, and every connection it holds waits.
async fn bad_cpu(Sleep(cpu): Sleep) -> CpuWork {
    STACK.burn_here(Route::BadCpu, cpu)
}

/// Frees the reactor: the work runs on a thread of the worker's blocking pool, one per
/// request, and all of them share the cores.
async fn ok_cpu_blocking(Sleep(cpu): Sleep) -> CpuWork {
    web::block(move || STACK.burn_here(Route::OkCpuBlocking, cpu))
        .await
        .expect("the work does not panic")
}

/// Shares the reactor: after each ~1 ms slice the task yields, and the worker polls others.
async fn ok_cpu_yield(Sleep(cpu): Sleep) -> CpuWork {
    STACK
        .burn_in_slices_here(Route::OkCpuYield, cpu, actix_web::rt::task::yield_now)
        .await
}

/// Frees the reactor: the work queues for the rayon pool, one thread per core.
async fn ok_cpu_pool(Sleep(cpu): Sleep) -> CpuWork {
    cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
}

/// Blocks the reactor: the worker waits inside ureq for the upstream's answer.
async fn bad_http(demo: web::Data<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .upstream()?
        .get_blocking(&STACK, Route::BadHttp, delay)
}

/// Frees the reactor: ureq waits on the worker's blocking pool while this task waits.
async fn ok_http_blocking(demo: web::Data<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    let upstream = demo.blockers.upstream()?;
    web::block(move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay))
        .await
        .expect("the call does not panic")
}

/// Frees the reactor: hyper's client awaits the answer on the worker's sockets.
async fn ok_http_await(demo: web::Data<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    let connect = |addr| async move { TcpStream::connect(addr).await.map(TokioIo::new) };
    demo.blockers
        .upstream()?
        .get_over(&STACK, Route::OkHttpAwait, delay, connect)
        .await
}

/// Blocks the reactor: rusqlite executes the query on the worker.
async fn bad_db(demo: web::Data<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_blocking(&STACK, Route::BadDb, ms)
}

/// Frees the reactor: rusqlite executes the query on the worker's blocking pool.
async fn ok_db_blocking(demo: web::Data<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    let db = demo.blockers.database()?;
    web::block(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms))
        .await
        .expect("the query does not panic")
}

/// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
async fn ok_db_await(demo: web::Data<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_async(&STACK, Route::OkDbAwait, ms)
        .await
}

/// Blocks the reactor: the worker reads (and copies) the whole file.
async fn bad_file(demo: web::Data<Demo>) -> Result<IoWork, ApiError> {
    demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
}

/// Frees the reactor: a thread of the worker's blocking pool reads the file while this task
/// waits.
async fn ok_file_blocking(demo: web::Data<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    web::block(move || file.read_blocking(&STACK, Route::OkFileBlocking))
        .await
        .expect("the read does not panic")
}

/// Frees the reactor: tokio::fs::read is std::fs::read on the worker's blocking pool.
async fn ok_file_await(demo: web::Data<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    file.read_awaited(&STACK, Route::OkFileAwait, tokio::fs::read(file.path()))
        .await
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, "actix-rt (tokio current_thread per worker)", &args);
    actix_web::rt::System::new().block_on(async {
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(demo))
                .service(get(Route::Ping, ping))
                .service(get(Route::Bad, bad))
                .service(get(Route::OkBlocking, ok_blocking))
                .service(get(Route::OkAwait, ok_await))
                .service(get(Route::BadCpu, bad_cpu))
                .service(get(Route::OkCpuBlocking, ok_cpu_blocking))
                .service(get(Route::OkCpuYield, ok_cpu_yield))
                .service(get(Route::OkCpuPool, ok_cpu_pool))
                .service(get(Route::BadHttp, bad_http))
                .service(get(Route::OkHttpBlocking, ok_http_blocking))
                .service(get(Route::OkHttpAwait, ok_http_await))
                .service(get(Route::BadDb, bad_db))
                .service(get(Route::OkDbBlocking, ok_db_blocking))
                .service(get(Route::OkDbAwait, ok_db_await))
                .service(get(Route::BadFile, bad_file))
                .service(get(Route::OkFileBlocking, ok_file_blocking))
                .service(get(Route::OkFileAwait, ok_file_await))
                .service(get(Route::Stalls, for_actix::stalls))
                .service(get(Route::Events, for_actix::events))
                .default_service(web::to(unmatched))
                .wrap_fn(move |req, service| watch_request(&demo, req, service))
                .wrap_fn(move |req, service| record_events(&demo, req, service))
        });
        // Workers, signals, the blocking pool and binding: `for_actix::run`.
        for_actix::run(demo, &args, server).await
    })
}
