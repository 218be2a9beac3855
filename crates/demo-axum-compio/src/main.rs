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
//! - Stalls and events: as in `demo-axum` (`for_axum::watch_request`, `for_compio::Accepts`).
//!
//! Why `SendWrapper`: axum wants every handler's future to be `Send`, as on tokio's
//! work-stealing runtime, where a task may move between threads at any `.await`. compio's
//! timer future holds an `Rc` of its runtime's timer (`TimerFuture`, in compio-runtime's
//! `time/future.rs`), so it is `!Send`, and axum rejects `ok_await` without the wrapper.
//! (`spawn_blocking`'s handle is `Send` whenever its result is.) `send_wrapper::SendWrapper`
//! makes the timer `Send` by checking, at every poll and at drop, that it is still on the
//! thread that made it, and panicking if not. It never moves: cyper-axum runs each connection
//! as a task of this thread's runtime (`compio::runtime::spawn`), which has no other thread
//! to move it to. cyper-axum wraps its own connection futures the same way.

use axum::Router;
use axum::extract::State;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use demo_contract::for_axum::{self, unmatched};
use demo_contract::for_compio::{self, RUNTIME};
use demo_contract::{CpuWork, Demo, Pong, Route, Sleep, Stack, Work, cpu};
use send_wrapper::SendWrapper;

static STACK: Stack = Stack {
    server: "demo-axum-compio",
    about: "axum 0.8 on compio (io_uring, thread-per-core): the demo routes",
    offload: "compio::runtime::spawn_blocking",
    timer: "compio::time::sleep",
    yield_now: "futures_lite::future::yield_now",
};

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

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, RUNTIME, &args);
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
    // Threads, listeners, signals and the blocking pool: `for_compio::run`.
    for_compio::run(demo, &args, app)
}
