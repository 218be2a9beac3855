//! The four routes on axum 0.8 and tokio.
//!
//! - Reactor: with `--threads 1`, a tokio `current_thread` runtime: the `main` thread polls
//!   every request future and also drives epoll and the timers. With `--threads N`, a
//!   `multi_thread` runtime with N work-stealing `tokio-rt-worker` threads.
//! - Offload: `tokio::task::spawn_blocking`, tokio's blocking pool: up to 512 threads, idle
//!   ones kept for 10 s; `--blocking-threads` sets that limit (`max_blocking_threads`, in
//!   `for_tokio::runtime`).
//! - Stalls: a middleware times every poll of every request under the route axum matched
//!   (`for_axum::watch_request`, `--stall-ms`); `GET /stalls` reports them.

use axum::Router;
use axum::extract::State;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use demo_contract::for_axum::{self, unmatched};
use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{Demo, Pong, Route, Sleep, Stack, Work};
use tokio::net::TcpListener;

static STACK: Stack = Stack {
    server: "demo-axum",
    about: "axum 0.8 on tokio: the four demo routes",
    offload: "tokio::task::spawn_blocking",
    timer: "tokio::time::sleep",
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

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let (runtime, flavour) = for_tokio::runtime(&args)?;
    let demo = Demo::new(&STACK, flavour, &args);
    let mut app = Router::new()
        .route(Route::Ping.path(), get(ping))
        .route(Route::Bad.path(), get(bad))
        .route(Route::OkAwait.path(), get(ok_await))
        .route(Route::Stalls.path(), get(for_axum::stalls));
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
        stop.bounded(axum::serve(listener, app).with_graceful_shutdown(stop.requested()))
            .await
    })
}
