//! glommio glue, for `demo-hyper-glommio`: hyper's HTTP/1 on one glommio executor per thread,
//! each with its own io_uring and its own listener ([`for_local`]), its blocking pool, and
//! the stall detector of the `stall-detector` variant ([`run`]).

use std::io;
use std::net::SocketAddr;
use std::os::fd::{FromRawFd as _, IntoRawFd as _};

use glommio::net::{TcpListener, TcpStream};
use glommio::{DefaultStallDetectionHandler, LocalExecutorBuilder, Placement, PoolPlacement};
use smol_hyper::rt::FuturesIo;

use crate::for_hyper::Handlers;
use crate::for_local::{self, BLOCKING_THREADS, Share};
use crate::{Args, Demo, exit_without_io_uring};

/// The label `/ping` reports.
pub const RUNTIME: &str = "glommio (io_uring), one executor per thread";

/// Serves `handlers` as the command line asks, until SIGINT or SIGTERM.
///
/// - `--threads N`: N threads, `main` and `glommio-1`.. `glommio-{N-1}`, each running its own
///   `LocalExecutor` (unbound to any CPU) and serving its own `SO_REUSEPORT` listener
///   ([`for_local::run_per_thread`]).
/// - The blocking pool (`glommio::executor().spawn_blocking`): each executor has its own,
///   of `--blocking-threads` threads, [`BLOCKING_THREADS`] by default (glommio's own default is
///   one thread).
/// - the `stall-detector` variant: glommio's stall detector on every executor, as it comes
///   (`DefaultStallDetectionHandler`), its reports logged on stderr by env_logger.
/// - Without io_uring (or the locked memory glommio's buffers need), the server says so in one
///   line and exits with status 1.
pub fn run<H: Handlers + Clone>(demo: Demo, args: &Args, handlers: H) -> io::Result<()> {
    let pool = args.blocking_threads.unwrap_or(BLOCKING_THREADS);
    let stall_detector = args.wants("stall-detector");
    if stall_detector {
        // glommio's handler reports with `log::warn!`: without a logger, nothing is printed.
        env_logger::Builder::new()
            .filter_level(log::LevelFilter::Warn)
            .init();
    }
    for_local::run_per_thread(args, "glommio", move |share| {
        let mut builder = LocalExecutorBuilder::new(Placement::Unbound)
            .blocking_thread_pool_placement(PoolPlacement::Unbound(pool));
        if stall_detector {
            builder = builder.detect_stalls(Some(Box::new(DefaultStallDetectionHandler {})));
        }
        let executor = builder
            .make()
            .unwrap_or_else(|error| exit_without_io_uring(demo.stack, error));
        executor.run(serve(handlers.clone(), demo, share))
    })
}

/// This thread's share of the server: `handlers` on its listener, each connection a task of
/// this thread's executor, until the stop and the drain after it.
async fn serve<H: Handlers>(handlers: H, demo: Demo, share: Share) -> io::Result<()> {
    // SAFETY: the descriptor is a listening TCP socket that `into_raw_fd` gives up, so
    // glommio's listener is its only owner. glommio's own `bind` would give it a backlog of
    // 1024; this one has every server's (`listen_reuse_port`).
    #[allow(unsafe_code)]
    let listener = unsafe { TcpListener::from_raw_fd(share.listener.into_raw_fd()) };
    let spawn = |task| drop(glommio::spawn_local(task).detach());
    let sleep = glommio::timer::sleep;
    for_local::serve(handlers, demo, listener, accept, spawn, sleep, share.stop).await;
    Ok(())
}

/// The next connection on `listener`, as hyper reads and writes it.
async fn accept(listener: &TcpListener) -> io::Result<(FuturesIo<TcpStream>, SocketAddr)> {
    let io = listener.accept().await?;
    let peer = io.peer_addr()?;
    Ok((FuturesIo::new(io), peer))
}

/// A whole file read through glommio's page-cache file, `BufferedFile` (glommio has no
/// `fs::read`): an io_uring `OPENAT`, a `STATX` for its size, then one `READ` of all of it
/// into a buffer glommio allocates, copied into the `Vec`.
pub async fn read(path: &std::path::Path) -> io::Result<Vec<u8>> {
    let file = glommio::io::BufferedFile::open(path).await?;
    let size = file.file_size().await?;
    let bytes = file.read_at(0, size as usize).await?.to_vec();
    file.close().await?;
    Ok(bytes)
}
