//! What the hidden blockers' routes need beside the server (`docs/hidden-blockers.md`): a slow
//! upstream for the HTTP routes, a large file for the file routes, and a place for the
//! database the server creates. All three live in a temporary folder and a thread of their
//! own for as long as a [`Fixtures`] lives, and are gone when it is dropped.
//!
//! The upstream runs in this process, on one thread with its own current-thread tokio
//! runtime: it only waits on timers, so it costs the client next to nothing, and it needs no
//! process of its own to stop. `GET /delay?ms=N` answers `200` after N ms.

use std::convert::Infallible;
use std::fs::File;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use demo_contract::MAX_SLEEP_MS;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

/// The file the file routes read, unless `--file-mb` says otherwise: large enough that one
/// read from the page cache takes a sleep's worth of time here (about 180 ms).
pub const DEFAULT_FILE_MB: u64 = 256;

/// The rate the floor of a file case reads the file at, in MiB/s: above the fastest read
/// alone recorded here (256 MiB in 118 ms, 2,170 MiB/s, in `results/hidden-cold/`), so that
/// the floor is never more than a read can take. A read from the page cache is a copy, CPU
/// time on the reading thread; one from the disk is slower still.
pub const FLOOR_READ_MIB_PER_S: u64 = 2560;

/// The least time one read of a file of `file_mb` MiB takes, in whole ms (rounded down), at
/// [`FLOOR_READ_MIB_PER_S`].
pub fn read_floor_ms(file_mb: u64) -> u64 {
    file_mb * 1000 / FLOOR_READ_MIB_PER_S
}

/// Whether the page cache holds the file when a burst of the file routes starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FileCache {
    /// Read once before: every read copies from memory.
    #[default]
    Hot,
    /// Dropped from the cache before the burst (`posix_fadvise(POSIX_FADV_DONTNEED)`, which
    /// needs no privilege for a file we wrote): the first reads wait for the disk.
    Cold,
}

/// The upstream, the file and the database's path, for one run.
#[derive(Debug)]
pub struct Fixtures {
    dir: PathBuf,
    file: PathBuf,
    db: PathBuf,
    upstream: SocketAddr,
    stop_upstream: Option<oneshot::Sender<()>>,
    upstream_thread: Option<std::thread::JoinHandle<()>>,
}

impl Fixtures {
    /// Makes a temporary folder with a file of `file_mb` MiB, and starts the upstream.
    pub fn create(file_mb: u64) -> io::Result<Fixtures> {
        // One folder per fixtures, so that tests running side by side do not share a database.
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let name = format!("bench-client-{}-{made}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir)?;
        let (file, db) = (dir.join("large.bin"), dir.join("demo.sqlite"));
        let (upstream, stop_upstream, upstream_thread) =
            match write_file(&file, file_mb).and_then(|()| start_upstream()) {
                Ok(started) => started,
                Err(error) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    return Err(error);
                }
            };
        Ok(Fixtures {
            dir,
            file,
            db,
            upstream,
            stop_upstream: Some(stop_upstream),
            upstream_thread: Some(upstream_thread),
        })
    }

    /// The server's flags that point it at these fixtures.
    pub fn server_args(&self) -> Vec<String> {
        vec![
            "--upstream".to_owned(),
            self.upstream.to_string(),
            "--db".to_owned(),
            self.db.display().to_string(),
            "--file".to_owned(),
            self.file.display().to_string(),
        ]
    }

    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Where the server creates its database.
    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Puts the file in the state `cache` asks for: read once (hot) or dropped (cold).
    pub fn set_cache(&self, cache: FileCache) -> io::Result<()> {
        match cache {
            FileCache::Hot => std::fs::read(&self.file).map(drop),
            FileCache::Cold => evict(&self.file),
        }
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        if let Some(stop) = self.stop_upstream.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.upstream_thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes `mb` MiB of bytes that do not compress (a filesystem that compresses would
/// otherwise read less than it returns), flushed to disk so that eviction can drop them.
fn write_file(path: &Path, mb: u64) -> io::Result<()> {
    let mut file = File::create(path)?;
    let mut block = vec![0u8; 1 << 20];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..mb {
        for chunk in block.chunks_exact_mut(8) {
            // xorshift64: cheap, and nothing a filesystem could compress.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes());
        }
        file.write_all(&block)?;
    }
    file.sync_all()
}

/// Drops the file's pages from the page cache. They are clean (written and synced), so the
/// kernel drops them all.
fn evict(path: &Path) -> io::Result<()> {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let file = File::open(path)?;
    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).map_err(io::Error::from)
}

type Started = (SocketAddr, oneshot::Sender<()>, std::thread::JoinHandle<()>);

/// Starts the upstream on a thread of its own, on loopback, on any free port.
fn start_upstream() -> io::Result<Started> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("upstream".to_owned())
        .spawn(move || runtime.block_on(serve_upstream(listener, stopped)))?;
    Ok((addr, stop, thread))
}

async fn serve_upstream(listener: std::net::TcpListener, stopped: oneshot::Receiver<()>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let accept = async {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let service = service_fn(delay);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    };
    tokio::select! {
        () = accept => {}
        _ = stopped => {}
    }
}

/// `GET /delay?ms=N`: `{"delayed_ms":N}` after N ms; anything else a 404, a bad `ms` a 400.
async fn delay(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let answer = |status: StatusCode, body: String| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        Ok(response)
    };
    if request.uri().path() != "/delay" {
        return answer(
            StatusCode::NOT_FOUND,
            r#"{"error":"try /delay?ms=N"}"#.to_owned(),
        );
    }
    let ms = form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
        .find(|(key, _)| key == "ms")
        .and_then(|(_, value)| value.parse::<u64>().ok())
        .filter(|ms| *ms <= MAX_SLEEP_MS);
    let Some(ms) = ms else {
        return answer(
            StatusCode::BAD_REQUEST,
            r#"{"error":"ms must be 0..=10000"}"#.to_owned(),
        );
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    answer(StatusCode::OK, format!(r#"{{"delayed_ms":{ms}}}"#))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Endpoint, get_once};

    #[tokio::test]
    async fn the_upstream_answers_after_the_delay_and_the_folder_goes_with_it() {
        let fixtures = Fixtures::create(1).unwrap();
        assert_eq!(std::fs::metadata(fixtures.file()).unwrap().len(), 1 << 20);
        let endpoint = Endpoint::parse(&format!("http://{}", fixtures.upstream())).unwrap();
        let start = std::time::Instant::now();
        let reply = get_once(&endpoint, "/delay?ms=100", Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(reply.status, 200);
        assert!(start.elapsed() >= Duration::from_millis(100));
        let bad = get_once(&endpoint, "/delay?ms=x", Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(bad.status, 400);
        fixtures.set_cache(FileCache::Cold).unwrap();
        fixtures.set_cache(FileCache::Hot).unwrap();
        let dir = fixtures.file().parent().unwrap().to_owned();
        drop(fixtures);
        assert!(!dir.exists(), "{}", dir.display());
        let gone = get_once(&endpoint, "/delay?ms=0", Duration::from_secs(1)).await;
        assert!(gone.is_err(), "the upstream stopped with its fixtures");
    }
}
