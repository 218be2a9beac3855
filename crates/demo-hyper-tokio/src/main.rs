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
//! - Stalls: `for_hyper::serve` times every poll of every request under its route
//!   (`--stall-ms`); `GET /stalls` reports them.
//! - Events: with `--events`, `for_hyper::serve` records each connection as its accept loop
//!   takes it and each request's start and end; `GET /events` reports them.

use std::net::SocketAddr;
use std::time::Duration;

use demo_contract::for_hyper::{self, Handlers, Task};
use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{CpuWork, Demo, Pong, Route, Stack, Work, cpu};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

static STACK: Stack = Stack {
    server: "demo-hyper-tokio",
    about: "hyper 1 directly on tokio: the demo routes",
    offload: "tokio::task::spawn_blocking",
    timer: "tokio::time::sleep",
    yield_now: "tokio::task::yield_now",
};

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
