//! The demo routes on hyper 1 and monoio: thread-per-core, each runtime on its own io_uring.
//!
//! - Reactor: `--threads N` threads (`main`, `monoio-1`, ...), each its own monoio runtime
//!   with its own `SO_REUSEPORT` listener. The kernel picks the listener for each new
//!   connection; the connection and every request on it stay on that thread. Nothing is
//!   stolen: a thread blocked in `/bad` stalls every connection it holds.
//! - Offload: `monoio::spawn_blocking`, onto the thread pool every runtime shares, of
//!   `--blocking-threads` threads (256 unless given). monoio's `RuntimeBuilder` attaches no
//!   pool, and then `spawn_blocking` panics; the variants `no-pool` and `execute-local` show
//!   the stock builder and the other way out its panic names (`for_monoio::run`).
//! - Timer: `monoio::time::sleep`, the runtime's own timer wheel (enabled in the builder).
//! - CPU: `/bad-cpu` on the reactor thread, `/ok-cpu-blocking` on the blocking pool,
//!   `/ok-cpu-yield` on the reactor with `futures_lite::future::yield_now` every ~1 ms (monoio
//!   has no yield of its own), `/ok-cpu-pool` on the shared rayon pool (`cpu::on_pool`).
//! - Hidden blockers: `/bad-http`, `/bad-db`, `/bad-file` make a blocking call (ureq,
//!   rusqlite, `std::fs::read`) on the reactor thread; `/ok-*-blocking` make it with
//!   `spawn_blocking`; `/ok-http-await` awaits hyper's HTTP/1 client on monoio's `TcpStream`
//!   (as a `TcpStreamPoll`, tokio's I/O traits), `/ok-db-await` sqlx's `SqlitePool` (a worker
//!   thread per connection), and `/ok-file-await` `monoio::fs::read`: io_uring reads, whose
//!   copy from the page cache the kernel makes on this thread.
//! - Stalls and events: `for_hyper::serve`, as on the other hyper servers.
//!
//! Why `SendWrapper`: `for_hyper` wants `Send` handler futures, for the servers whose tasks
//! move between threads. monoio's timer, files, sockets and `spawn_blocking` handle belong to
//! their runtime, so they are `!Send`; `SendWrapper` checks at every poll that they are still
//! on the thread that made them. They never move: each connection is a task of its thread's
//! runtime, which has no other thread (`for_local` says more).

use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use demo_contract::for_hyper::{Handlers, IoResult};
use demo_contract::{CpuWork, Demo, Pong, Route, Stack, Work, cpu, for_monoio};
use hyper_util::rt::TokioIo;
use monoio::io::IntoPollIo as _;
use monoio::net::TcpStream;
use send_wrapper::SendWrapper;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

#[derive(Clone)]
struct HyperMonoio;

impl Handlers for HyperMonoio {
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
        SendWrapper::new(monoio::spawn_blocking(move || {
            let work = STACK.work_here(Route::OkBlocking, duration);
            std::thread::sleep(duration);
            work
        }))
        .await
        .expect("the work is never cancelled")
    }

    /// Frees the reactor: the task waits on the runtime's timer, and the thread polls others.
    async fn ok_await(&self, duration: Duration) -> Work {
        let work = STACK.work_here(Route::OkAwait, duration);
        SendWrapper::new(monoio::time::sleep(duration)).await;
        work
    }

    /// Blocks the reactor: this thread computes, and every connection it holds waits.
    async fn bad_cpu(&self, cpu: Duration) -> CpuWork {
        STACK.burn_here(Route::BadCpu, cpu)
    }

    /// Frees the reactor: the work runs on a blocking-pool thread, one per request.
    async fn ok_cpu_blocking(&self, cpu: Duration) -> CpuWork {
        SendWrapper::new(monoio::spawn_blocking(move || {
            STACK.burn_here(Route::OkCpuBlocking, cpu)
        }))
        .await
        .expect("the work is never cancelled")
    }

    /// Shares the reactor: after each ~1 ms slice the task wakes itself and goes to the back
    /// of the run queue, and the thread polls others.
    async fn ok_cpu_yield(&self, cpu: Duration) -> CpuWork {
        STACK
            .burn_in_slices_here(Route::OkCpuYield, cpu, futures_lite::future::yield_now)
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
        SendWrapper::new(monoio::spawn_blocking(move || {
            upstream.get_blocking(&STACK, Route::OkHttpBlocking, delay)
        }))
        .await
        .expect("the work is never cancelled")
    }

    /// Frees the reactor: hyper's client awaits the answer on this runtime's io_uring socket.
    async fn ok_http_await(&self, demo: &Demo, delay: Duration) -> IoResult {
        let connect = |addr: SocketAddr| async move {
            let io = TcpStream::connect(addr).await?;
            Ok(TokioIo::new(io.into_poll_io()?))
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
        SendWrapper::new(monoio::spawn_blocking(move || {
            db.query_blocking(&STACK, Route::OkDbBlocking, ms)
        }))
        .await
        .expect("the work is never cancelled")
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
        SendWrapper::new(monoio::spawn_blocking(move || {
            file.read_blocking(&STACK, Route::OkFileBlocking)
        }))
        .await
        .expect("the work is never cancelled")
    }

    /// Frees the reactor, mostly: the task awaits io_uring's read, but the kernel copies a
    /// cached file's pages on this thread.
    async fn ok_file_await(&self, demo: &Demo) -> IoResult {
        let file = demo.blockers.file()?;
        let read = SendWrapper::new(monoio::fs::read(file.path()));
        file.read_awaited(&STACK, Route::OkFileAwait, read).await
    }
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let demo = Demo::new(&STACK, for_monoio::RUNTIME, &args);
    // Runtimes, listeners, signals and the blocking pool: `for_monoio::run`.
    for_monoio::run(demo, &args, HyperMonoio)
}
