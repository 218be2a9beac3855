//! The hidden blockers: what blocks a reactor in a real service, where nobody wrote
//! `std::thread::sleep`. A blocking HTTP client waiting for a slow upstream, a database query
//! run by a blocking driver, a whole file read with `std::fs`: each is a plain function call
//! that holds its thread until it returns.
//!
//! The calls live here once, so that each server's `main.rs` shows only *where* it makes them:
//! on the reactor (`/bad-*`), on the runtime's blocking pool (`/ok-*-blocking`), or through an
//! async API awaited on the runtime (`/ok-*-await`). Each call's body is an [`IoWork`]: the
//! call's wall time beside the CPU time its thread spent, which tells a wait (the upstream,
//! the disk: CPU near zero) from work (the query, a copy from the page cache).
//!
//! - HTTP (`--upstream HOST:PORT`): `GET /delay?ms=N` on a server that answers after N ms.
//!   Blocking: [`ureq`]. Async: hyper's HTTP/1 client over a connection the stack opens with
//!   its own sockets ([`Upstream::get_over`]).
//! - Database (`--db PATH`): SQLite, with [`QUERY`] sized to take about `?ms=` (calibrated at
//!   start). Blocking: [`rusqlite`], one read-only connection per request. Async: [`sqlx`]'s
//!   `SqlitePool`, which runs each connection's queries on a worker thread of its own and
//!   hands the results back through a channel (sqlx-sqlite's `ConnectionWorker`): an async
//!   API over a blocking library.
//! - File (`--file PATH`): the whole file. Blocking: [`std::fs::read`]. Async: the stack's
//!   file API, passed in as a future ([`File::read_awaited`]).
//!
//! Each in a file of its own: `http.rs` the upstream ([`Upstream`]), `database.rs` the SQLite
//! database ([`Database`]), `file.rs` the big file ([`File`]); this one the [`Blockers`] that
//! holds what was given and the timing every call's body shares.

mod database;
mod file;
mod http;

use std::time::{Duration, Instant};

pub use database::{ASYNC_DB, BLOCKING_DB, DB_BUSY_TIMEOUT, Database, QUERY, TABLE_ROWS};
pub use file::{BLOCKING_FILE, File};
pub use http::{BLOCKING_HTTP, UPSTREAM_TIMEOUT, Upstream};

use crate::cpu::thread_cpu_time;
use crate::{ApiError, Args, IoWork, Work};

/// What the hidden blockers' routes use, from the command line. A route whose resource was
/// not given answers 503, saying which flag to give.
#[derive(Debug, Default)]
pub struct Blockers {
    upstream: Option<Upstream>,
    db: Option<Database>,
    file: Option<File>,
}

impl Blockers {
    /// None of the three: every hidden blocker's route answers 503.
    pub const NONE: Blockers = Blockers {
        upstream: None,
        db: None,
        file: None,
    };

    /// Reads `--upstream`, `--file` and `--db`; sets up the database (creates it if absent,
    /// fills its table, calibrates the query).
    pub fn open(args: &Args) -> Result<Blockers, String> {
        let db = match &args.db {
            Some(path) => Some(
                Database::open(path)
                    .map_err(|error| format!("--db {}: {error}", path.display()))?,
            ),
            None => None,
        };
        Ok(Blockers {
            upstream: args.upstream.map(|addr| Upstream { addr }),
            db,
            file: args.file.clone().map(|path| File { path }),
        })
    }

    /// The upstream of the HTTP routes.
    pub fn upstream(&self) -> Result<Upstream, ApiError> {
        self.upstream
            .ok_or_else(|| missing("upstream", "--upstream HOST:PORT"))
    }

    /// The database of the database routes.
    pub fn database(&self) -> Result<&Database, ApiError> {
        self.db
            .as_ref()
            .ok_or_else(|| missing("database", "--db PATH"))
    }

    /// The file of the file routes.
    pub fn file(&self) -> Result<&File, ApiError> {
        self.file
            .as_ref()
            .ok_or_else(|| missing("file", "--file PATH"))
    }
}

fn missing(what: &str, flag: &str) -> ApiError {
    ApiError::unavailable(format!("no {what}: start the server with {flag}"))
}

/// Runs `call` on this thread, timing it on the wall clock and on this thread's CPU clock.
fn timed<T>(call: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (start, cpu) = (Instant::now(), thread_cpu_time());
    let out = call();
    (out, start.elapsed(), thread_cpu_time().saturating_sub(cpu))
}

/// The body of a call described as `work` when it started, that took `wall` (and `cpu` of
/// its thread's CPU time, for a blocking call).
fn io_work(work: Work, wall: Duration, cpu: Option<Duration>, detail: String) -> IoWork {
    let ms = |duration: Duration| (duration.as_secs_f64() * 1e5).round() / 100.0;
    IoWork {
        work,
        call_ms: ms(wall),
        cpu_ms: cpu.map(ms),
        detail,
    }
}
