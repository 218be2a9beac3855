//! The demo routes on ntex 3, on ntex's own runtime over io_uring (feature `neon-uring`).
//!
//! - Reactor: `--threads` workers (`ntex::server::build().workers`), each its own
//!   single-threaded runtime on its own io_uring. One accept thread hands each new
//!   connection to one worker, round-robin; a connection never moves, nothing is stolen.
//!   So a worker blocked in `/bad` stalls every connection it holds, as on actix-web, whose
//!   design ntex began from.
//! - Offload: `ntex::rt::spawn_blocking`, one pool shared by the workers, up to 256 threads
//!   (`--blocking-threads` sets the limit, in `for_ntex::run`); beyond, work queues.
//! - Timer: `ntex::time::sleep`, ntex's timer wheel.
//! - CPU: `/bad-cpu` on the worker, `/ok-cpu-blocking` on the blocking pool, `/ok-cpu-yield`
//!   on the worker with `ntex::task::yield_to` every ~1 ms, `/ok-cpu-pool` on the shared
//!   rayon pool of one thread per core (`cpu::on_pool`).
//! - Hidden blockers: `/bad-*` call ureq, rusqlite or `std::fs::read` on the worker,
//!   `/ok-*-blocking` the same on `ntex::rt::spawn_blocking`. `/ok-http-await` awaits ntex's
//!   own client (`ntex::client::Client`, one per worker), which connects and reads with
//!   io_uring ops on the worker's ring. `/ok-db-await` awaits sqlx's `SqlitePool`, whose
//!   connection worker threads run the queries; with no tokio runtime here, sqlx takes
//!   async-std's timers and executor. ntex has no async file API, so `/ok-file-await` is
//!   honestly `std::fs::read` on `ntex::rt::spawn_blocking`, as `/ok-file-blocking`.
//! - Stalls and events: one middleware times every poll of every request under the route its
//!   path names, marks the worker as a reactor thread, and records each request's start and
//!   end (`for_ntex::WatchRequests`);
//!   `on_accept` records each connection as its worker takes it (`for_ntex::run`).

use demo_contract::for_ntex::{self, get};
use demo_contract::{ApiError, CpuWork, Demo, IoWork, Pong, Route, Sleep, Stack, Work, cpu};
use ntex::client::Client;
use ntex::web::{ServiceConfig, types::State};
use std::sync::LazyLock;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// Answers at once, if this connection's worker is free to poll it.
async fn ping(demo: State<Demo>) -> Pong {
    demo.pong()
}

/// Blocks the reactor: the worker sleeps, and every connection it holds waits.
async fn bad(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::Bad, duration);
    std::thread::sleep(duration);
    work
}

/// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
async fn ok_blocking(Sleep(duration): Sleep) -> Work {
    ntex::rt::spawn_blocking(move || {
        let work = STACK.work_here(Route::OkBlocking, duration);
        std::thread::sleep(duration);
        work
    })
    .await
    .expect("the sleep does not panic")
}

/// Frees the reactor: the task waits on ntex's timer, and the worker polls others meanwhile.
async fn ok_await(Sleep(duration): Sleep) -> Work {
    let work = STACK.work_here(Route::OkAwait, duration);
    ntex::time::sleep(duration).await;
    work
}

/// Blocks the reactor: the worker computes, and every connection it holds waits.
async fn bad_cpu(Sleep(cpu): Sleep) -> CpuWork {
    STACK.burn_here(Route::BadCpu, cpu)
}

/// Frees the reactor: the work runs on a blocking-pool thread, one per request.
async fn ok_cpu_blocking(Sleep(cpu): Sleep) -> CpuWork {
    ntex::rt::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu))
        .await
        .expect("the work does not panic")
}

/// Shares the reactor, up to a point: after each ~1 ms slice the task wakes itself and goes
/// to the back of the run queue, but ntex's runtime polls io_uring only every 61 task polls,
/// so new connections and reads wait behind many slices.
async fn ok_cpu_yield(Sleep(cpu): Sleep) -> CpuWork {
    STACK
        .burn_in_slices_here(Route::OkCpuYield, cpu, ntex::task::yield_to)
        .await
}

/// Frees the reactor: the work queues for the rayon pool, one thread per core.
async fn ok_cpu_pool(Sleep(cpu): Sleep) -> CpuWork {
    cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
}

/// Blocks the reactor: the worker waits inside ureq for the upstream's answer.
async fn bad_http(demo: State<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .upstream()?
        .get_blocking(&STACK, Route::BadHttp, delay)
}

/// Frees the reactor: ureq waits on a blocking-pool thread while this task waits.
async fn ok_http_blocking(demo: State<Demo>, Sleep(delay): Sleep) -> Result<IoWork, ApiError> {
    let upstream = demo.blockers.upstream()?;
    ntex::rt::spawn_blocking(move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay))
        .await
        .expect("the call does not panic")
}

/// Frees the reactor: ntex's client awaits the answer on the worker's io_uring sockets.
async fn ok_http_await(
    demo: State<Demo>,
    client: State<Client>,
    Sleep(delay): Sleep,
) -> Result<IoWork, ApiError> {
    let get = async |url: String| {
        let response = client.get(url).send().await?;
        response.body().await?;
        Ok::<_, for_ntex::ClientFailure>(response.status().as_u16())
    };
    demo.blockers
        .upstream()?
        .get_with(&STACK, Route::OkHttpAwait, delay, get)
        .await
}

/// Blocks the reactor: rusqlite executes the query on the worker.
async fn bad_db(demo: State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_blocking(&STACK, Route::BadDb, ms)
}

/// Frees the reactor: rusqlite executes the query on a blocking-pool thread.
async fn ok_db_blocking(demo: State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    let db = demo.blockers.database()?;
    ntex::rt::spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms))
        .await
        .expect("the query does not panic")
}

/// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
async fn ok_db_await(demo: State<Demo>, Sleep(ms): Sleep) -> Result<IoWork, ApiError> {
    demo.blockers
        .database()?
        .query_async(&STACK, Route::OkDbAwait, ms)
        .await
}

/// Blocks the reactor: the worker reads (and copies) the whole file.
async fn bad_file(demo: State<Demo>) -> Result<IoWork, ApiError> {
    demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
}

/// Frees the reactor: the read runs on a blocking-pool thread while this task waits.
async fn ok_file_blocking(demo: State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    ntex::rt::spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking))
        .await
        .expect("the read does not panic")
}

/// Frees the reactor the same way: ntex has no async file API, so this awaits
/// `std::fs::read` on a blocking-pool thread.
async fn ok_file_await(demo: State<Demo>) -> Result<IoWork, ApiError> {
    let file = demo.blockers.file()?;
    let read = async {
        ntex::rt::spawn_blocking(move || std::fs::read(file.path()))
            .await
            .expect("the read does not panic")
    };
    file.read_awaited(&STACK, Route::OkFileAwait, read).await
}

/// The routes, registered on each worker's app.
fn routes(app: &mut ServiceConfig) {
    app.service(get(Route::Ping, ping))
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
        .service(get(Route::Stalls, for_ntex::stalls))
        .service(get(Route::Events, for_ntex::events));
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, for_ntex::runtime(&args), &args);
    // Workers, the runtime, signals, the blocking pool and binding: `for_ntex::run`.
    for_ntex::run(demo, &args, routes)
}
