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
//! - Stalls: a middleware times every poll of every request under the route axum matched
//!   (`for_axum::watch_request`, `--stall-ms`); `GET /stalls` reports them.
//! - Events: `for_axum::serve` is `axum::serve` recording, with `--events`, each accept and
//!   each request's start and end; `GET /events` reports them.

use axum::Router;
use axum::extract::State;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use demo_contract::for_axum::{self, unmatched};
use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{CpuWork, Demo, Pong, Route, Sleep, Stack, Work, cpu};
use tokio::net::TcpListener;

static STACK: Stack = Stack {
    server: "demo-axum",
    about: "axum 0.8 on tokio: the demo routes",
    offload: "tokio::task::spawn_blocking",
    timer: "tokio::time::sleep",
    yield_now: "tokio::task::yield_now",
};

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
        .route(Route::Stalls.path(), get(for_axum::stalls))
        .route(Route::Events.path(), get(for_axum::events));
    for path in Route::OkBlocking.paths() {
        app = app.route(path, get(ok_blocking));
    }
    let app = app
        .fallback(unmatched)
        .method_not_allowed_fallback(unmatched)
        .layer(from_fn_with_state(demo, for_axum::watch_request))
        .with_state(demo);

    runtime.block_on(async {
        let listener = TcpListener::from_std(demo_contract::listen(args.addr())?)?;
        let stop = Shutdown::on_signal()?;
        demo.announce(listener.local_addr()?);
        stop.bounded(for_axum::serve(demo, listener, app).with_graceful_shutdown(stop.requested()))
            .await
    })
}
