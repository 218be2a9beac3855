//! The demo routes on hyper 1 and glommio: thread-per-core, each executor on its own io_uring.
//!
//! - Reactor: `--threads N` threads (`main`, `glommio-1`, ...), each its own `LocalExecutor`
//!   with its own `SO_REUSEPORT` listener. The kernel picks the listener for each new
//!   connection; the connection and every request on it stay on that thread. Nothing is
//!   stolen: a thread blocked in `/bad` stalls every connection it holds.
//! - Offload: `glommio::executor().spawn_blocking`, a pool per executor, of
//!   `--blocking-threads` threads (256 unless given; glommio's own default is one thread,
//!   which would run the comparison's ten sleeps one after another: see `for_glommio::run`).
//! - Timer: `glommio::timer::sleep`, the executor's own timer.
//! - CPU: `/bad-cpu` on the reactor thread, `/ok-cpu-blocking` on the blocking pool,
//!   `/ok-cpu-yield` on the reactor with `glommio::yield_if_needed` after every ~1 ms slice
//!   (glommio's own way to cooperate: it yields only once the task queue has run past its
//!   preemption budget, 100 ms by default, or the executor has I/O waiting),
//!   `/ok-cpu-pool` on the shared rayon pool (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db`, `/bad-file` make a blocking call (ureq,
//!   rusqlite, `std::fs::read`) on the reactor thread; `/ok-*-blocking` make it with
//!   `spawn_blocking`; `/ok-http-await` awaits hyper's HTTP/1 client on glommio's `TcpStream`,
//!   `/ok-db-await` sqlx's `SqlitePool` (a worker thread per connection), and `/ok-file-await`
//!   glommio's `BufferedFile` (`for_glommio::read`): io_uring reads, whose copy from the page
//!   cache the kernel makes on this thread.
//! - Stalls and events: `for_hyper::serve`, as on the other hyper servers; glommio's own stall
//!   detector is the variant `stall-detector`.
//!
//! Why `SendWrapper`: `for_hyper` wants `Send` handler futures, for the servers whose tasks
//! move between threads. glommio's timer, files, sockets and `spawn_blocking` handle belong to
//! their executor (an `Rc` of its reactor), so they are `!Send`; `SendWrapper` checks at every
//! poll that they are still on the thread that made them. They never move: each connection is
//! a task of its thread's executor, which has no other thread (`for_local` says more).

use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use demo_contract::for_hyper::{Handlers, IoResult};
use demo_contract::{CpuWork, Demo, Pong, Route, Stack, Work, cpu, for_glommio};
use glommio::net::TcpStream;
use send_wrapper::SendWrapper;
use smol_hyper::rt::FuturesIo;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

#[derive(Clone)]
struct HyperGlommio;

impl Handlers for HyperGlommio {
    /// Answers at once, if this connection's thread is free to poll it.
    async fn ping(&self, demo: &Demo) -> Pong {
        demo.pong()
    }

    /// Blocks the reactor: this thread sleeps, and every connection it holds waits.
    async fn bad(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::Bad, duration);
        std::thread::sleep(duration);
        work
    }

    /// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
    async fn ok_blocking(&self, duration: Duration) -> Work {
        SendWrapper::new(glommio::executor().spawn_blocking(move || {
            let work = STACK.work_here(Route::OkBlocking, duration);
            std::thread::sleep(duration);
            work
        }))
        .await
    }

    /// Frees the reactor: the task waits on the executor's timer, and the thread polls others.
    async fn ok_await(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::OkAwait, duration);
        SendWrapper::new(glommio::timer::sleep(duration)).await;
        work
    }

    /// Blocks the reactor: this thread computes, and every connection it holds waits.
    async fn bad_cpu(&self, cpu: Duration) -> CpuWork {
        STACK.burn_here(Route::BadCpu, cpu)
    }

    /// Frees the reactor: the work runs on a blocking-pool thread, one per request.
    async fn ok_cpu_blocking(&self, cpu: Duration) -> CpuWork {
        SendWrapper::new(
            glommio::executor().spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, cpu)),
        )
        .await
    }

    /// Shares the reactor by glommio's budget: after each ~1 ms slice the task asks whether
    /// to yield, and glommio says yes only once its queue has run 100 ms or I/O waits.
    async fn ok_cpu_yield(&self, cpu: Duration) -> CpuWork {
        let yield_if_needed = || SendWrapper::new(glommio::yield_if_needed());
        STACK
            .burn_in_slices_here(Route::OkCpuYield, cpu, yield_if_needed)
            .await
    }

    /// Frees the reactor: the work queues for the rayon pool, one thread per core.
    async fn ok_cpu_pool(&self, cpu: Duration) -> CpuWork {
        cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, cpu)).await
    }

    /// Blocks the reactor: this thread waits inside ureq for the upstream's answer.
    async fn bad_http(&self, demo: &Demo, delay: Duration) -> IoResult {
        demo.blockers
            .upstream()?
            .get_blocking(&STACK, Route::BadHttp, delay)
    }

    /// Frees the reactor: ureq waits on a blocking-pool thread while this task waits.
    async fn ok_http_blocking(&self, demo: &Demo, delay: Duration) -> IoResult {
        let upstream = demo.blockers.upstream()?;
        SendWrapper::new(
            glommio::executor().spawn_blocking(move || {
                upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay)
            }),
        )
        .await
    }

    /// Frees the reactor: hyper's client awaits the answer on this executor's io_uring socket.
    async fn ok_http_await(&self, demo: &Demo, delay: Duration) -> IoResult {
        let connect = |addr: SocketAddr| async move {
            let io = TcpStream::connect(addr).await?;
            Ok(FuturesIo::new(io))
        };
        let upstream = demo.blockers.upstream()?;
        SendWrapper::new(upstream.get_over(&STACK, Route::OkHttpAwait, delay, connect)).await
    }

    /// Blocks the reactor: rusqlite executes the query on this thread.
    async fn bad_db(&self, demo: &Demo, ms: Duration) -> IoResult {
        demo.blockers
            .database()?
            .query_blocking(&STACK, Route::BadDb, ms)
    }

    /// Frees the reactor: rusqlite executes the query on a blocking-pool thread.
    async fn ok_db_blocking(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        SendWrapper::new(
            glommio::executor()
                .spawn_blocking(move || db.query_blocking(&STACK, Route::OkDbBlocking, ms)),
        )
        .await
    }

    /// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
    async fn ok_db_await(&self, demo: &Demo, ms: Duration) -> IoResult {
        let db = demo.blockers.database()?;
        db.query_async(&STACK, Route::OkDbAwait, ms).await
    }

    /// Blocks the reactor: this thread reads (and copies) the whole file.
    async fn bad_file(&self, demo: &Demo) -> IoResult {
        demo.blockers.file()?.read_blocking(&STACK, Route::BadFile)
    }

    /// Frees the reactor: a blocking-pool thread reads the file while this task waits.
    async fn ok_file_blocking(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        SendWrapper::new(
            glommio::executor()
                .spawn_blocking(move || file.read_blocking(&STACK, Route::OkFileBlocking)),
        )
        .await
    }

    /// Frees the reactor, mostly: the task awaits io_uring's read, but the kernel copies a
    /// cached file's pages on this thread.
    async fn ok_file_await(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        let read = SendWrapper::new(for_glommio::read(file.path()));
        file.read_awaited(&STACK, Route::OkFileAwait, read).await
    }
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, for_glommio::RUNTIME, &args);
    // Executors, listeners, signals and the blocking pool: `for_glommio::run`.
    for_glommio::run(demo, &args, HyperGlommio)
}
