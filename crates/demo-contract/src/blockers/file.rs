//! The big file (`--file PATH`), read whole: with [`std::fs::read`], or with the stack's
//! async file API passed in as a future.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use super::{io_work, timed};
use crate::{ApiError, IoWork, Route, Stack, Work};

/// The blocking file read, as the routes' `how` names it.
pub const BLOCKING_FILE: &str = "std::fs::read";

/// The file (`--file`) the file routes read whole.
#[derive(Debug)]
pub struct File {
    pub(super) path: PathBuf,
}

impl File {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The body of a read that returned `bytes` (or met an error). The bytes are handed to a
    /// thread of their own to be freed: a real handler would send them on, and freeing a
    /// buffer of hundreds of MiB (returning its pages to the kernel) takes milliseconds that
    /// are no part of the read, on whichever thread drops it.
    fn read(
        &self,
        work: Work,
        bytes: io::Result<Vec<u8>>,
        wall: Duration,
        cpu: Option<Duration>,
    ) -> Result<IoWork, ApiError> {
        let bytes = bytes.map_err(|error| {
            ApiError::internal(format!("reading {}: {error}", self.path.display()))
        })?;
        let detail = format!("read {} bytes", bytes.len());
        free_elsewhere(bytes);
        Ok(io_work(work, wall, cpu, detail))
    }

    /// Reads the whole file with `std::fs::read`, on this thread.
    pub fn read_blocking(&self, stack: &Stack, route: Route) -> Result<IoWork, ApiError> {
        let work = stack.work_here(route, Duration::ZERO);
        let (bytes, wall, cpu) = timed(|| std::fs::read(&self.path));
        self.read(work, bytes, wall, Some(cpu))
    }

    /// Awaits `read`, the stack's async read of [`File::path`] (e.g. `tokio::fs::read`).
    pub async fn read_awaited(
        &self,
        stack: &Stack,
        route: Route,
        read: impl Future<Output = io::Result<Vec<u8>>>,
    ) -> Result<IoWork, ApiError> {
        let work = stack.work_here(route, Duration::ZERO);
        let start = Instant::now();
        let bytes = read.await;
        self.read(work, bytes, start.elapsed(), None)
    }
}

/// Drops `bytes` on the `free-buffers` thread, started on first use.
fn free_elsewhere(bytes: Vec<u8>) {
    static FREE: OnceLock<mpsc::Sender<Vec<u8>>> = OnceLock::new();
    let sender = FREE.get_or_init(|| {
        let (sender, buffers) = mpsc::channel::<Vec<u8>>();
        std::thread::Builder::new()
            .name("free-buffers".to_owned())
            .spawn(move || buffers.into_iter().for_each(drop))
            .expect("a thread to free buffers on");
        sender
    });
    // If that thread is gone, the bytes come back in the error and are dropped here.
    let _ = sender.send(bytes);
}
