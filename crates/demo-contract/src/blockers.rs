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

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use rusqlite::{Connection, OpenFlags};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

use crate::cpu::thread_cpu_time;
use crate::{ApiError, Args, IoWork, Route, Stack, Work};

/// The blocking HTTP call, as the routes' `how` names it.
pub const BLOCKING_HTTP: &str = "ureq::Agent::get(..).call()";
/// The blocking query, as the routes' `how` names it.
pub const BLOCKING_DB: &str = "rusqlite::Connection::query_row";
/// The async driver's query, as `/ok-db-await`'s `how` names it.
pub const ASYNC_DB: &str = "sqlx::query_scalar(..).fetch_one(&SqlitePool)";
/// The blocking file read, as the routes' `how` names it.
pub const BLOCKING_FILE: &str = "std::fs::read";

/// How long the blocking client waits for the upstream's whole answer: longer than the
/// largest `?ms=`.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a query waits for a lock another connection holds before it fails with
/// "database is locked".
pub const DB_BUSY_TIMEOUT: Duration = Duration::from_millis(500);
/// The rows of the table the server fills at start.
pub const TABLE_ROWS: i64 = 10_000;
/// Connections the async driver's pool may open: more than a burst's requests.
const DB_POOL_SIZE: u32 = 16;

/// The query the database routes run: `?1` passes, each a full scan of the table (no index
/// on `value`), counting the rows above the pass's number. Real SQLite work whose cost grows
/// with `?1`, which [`Database::passes_for`] sizes to take about the `?ms=` asked for.
pub const QUERY: &str = "WITH RECURSIVE pass(n) AS \
     (SELECT 1 WHERE ?1 >= 1 UNION ALL SELECT n + 1 FROM pass WHERE n < ?1) \
     SELECT count(*) FROM pass, items WHERE items.value > pass.n";

/// Creates and fills the table if absent or empty, in one transaction, so that servers
/// started on the same file at once fill it once.
const CREATE: &str =
    "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
     INSERT INTO items (id, value)
       SELECT n, (n * 7919) % 10007 FROM
         (WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10000)
          SELECT n FROM seq)
       WHERE NOT EXISTS (SELECT 1 FROM items);";

/// How long one calibration run must take for its rate to count.
const CALIBRATION_RUN: Duration = Duration::from_millis(20);
/// Runs of the calibration at its final size, after the first.
const CALIBRATION_REPEATS: usize = 3;

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

/// The slow upstream (`--upstream`): `GET /delay?ms=N` answers after N ms.
#[derive(Debug, Clone, Copy)]
pub struct Upstream {
    addr: SocketAddr,
}

impl Upstream {
    /// The request's path and query.
    fn path(&self, delay: Duration) -> String {
        format!("/delay?ms={}", delay.as_millis())
    }

    fn failed(&self, error: impl std::fmt::Display) -> ApiError {
        ApiError::bad_gateway(format!("upstream {}: {error}", self.addr))
    }

    fn answered(
        &self,
        work: Work,
        status: u16,
        wall: Duration,
        cpu: Option<Duration>,
    ) -> Result<IoWork, ApiError> {
        if status != 200 {
            return Err(self.failed(format!("answered {status}")));
        }
        let detail = format!("upstream answered {status} after {} ms", work.slept_ms);
        Ok(io_work(work, wall, cpu, detail))
    }

    /// Asks the upstream to answer after `delay` with a blocking client, and waits for the
    /// whole answer on this thread.
    pub fn get_blocking(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
    ) -> Result<IoWork, ApiError> {
        static AGENT: OnceLock<ureq::Agent> = OnceLock::new();
        let agent = AGENT.get_or_init(|| {
            ureq::Agent::config_builder()
                .timeout_global(Some(UPSTREAM_TIMEOUT))
                .http_status_as_error(false)
                .build()
                .new_agent()
        });
        let work = stack.work_here(route, delay);
        let url = format!("http://{}{}", self.addr, self.path(delay));
        let (answer, wall, cpu) = timed(|| {
            let mut response = agent.get(&url).call()?;
            response.body_mut().read_to_vec()?;
            Ok::<_, ureq::Error>(response.status().as_u16())
        });
        let status = answer.map_err(|error| self.failed(error))?;
        self.answered(work, status, wall, Some(cpu))
    }

    /// The same request through hyper's async HTTP/1 client, over the connection `connect`
    /// opens with the stack's own sockets (e.g. `tokio::net::TcpStream::connect` in
    /// `hyper_util::rt::TokioIo`). The connection's task is polled beside the request in
    /// this one future, so no executor is needed.
    pub async fn get_over<C, F, I>(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
        connect: C,
    ) -> Result<IoWork, ApiError>
    where
        C: FnOnce(SocketAddr) -> F,
        F: Future<Output = io::Result<I>>,
        I: hyper::rt::Read + hyper::rt::Write + Unpin,
    {
        let work = stack.work_here(route, delay);
        let start = Instant::now();
        let io = connect(self.addr)
            .await
            .map_err(|error| self.failed(error))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|error| self.failed(error))?;
        let request = hyper::Request::get(self.path(delay))
            .header(hyper::header::HOST, self.addr.to_string())
            .body(Empty::<Bytes>::new())
            .expect("the request is well-formed");
        // `sender` moves in, so the connection ends once the answer is read.
        let exchange = async move {
            let response = sender.send_request(request).await?;
            let status = response.status().as_u16();
            response.into_body().collect().await?;
            Ok::<_, hyper::Error>(status)
        };
        let (status, connection) = futures_lite::future::zip(exchange, connection).await;
        let status = status.and_then(|status| connection.map(|()| status));
        let status = status.map_err(|error| self.failed(error))?;
        self.answered(work, status, start.elapsed(), None)
    }

    /// The same request through an async client that is not hyper's (ntex's own): `get`
    /// sends `GET url`, reads the whole answer and returns its status.
    pub async fn get_with<G, F, E>(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
        get: G,
    ) -> Result<IoWork, ApiError>
    where
        G: FnOnce(String) -> F,
        F: Future<Output = Result<u16, E>>,
        E: std::fmt::Display,
    {
        let work = stack.work_here(route, delay);
        let start = Instant::now();
        let url = format!("http://{}{}", self.addr, self.path(delay));
        let status = get(url).await.map_err(|error| self.failed(error))?;
        self.answered(work, status, start.elapsed(), None)
    }
}

/// The SQLite database (`--db`), its table filled and its query calibrated.
#[derive(Debug)]
pub struct Database {
    path: PathBuf,
    /// How many passes of [`QUERY`] take a millisecond here, measured at start.
    passes_per_ms: f64,
    /// The async driver's pool, read-only; opens connections when first used.
    pool: SqlitePool,
}

impl Database {
    /// Creates the database and its table if absent, then times the query.
    pub fn open(path: &Path) -> Result<Database, String> {
        let setup = Connection::open(path).map_err(|error| error.to_string())?;
        setup
            .busy_timeout(Duration::from_secs(5))
            .map_err(|error| error.to_string())?;
        setup
            .execute_batch(&format!("BEGIN IMMEDIATE; {CREATE} COMMIT;"))
            .map_err(|error| error.to_string())?;
        drop(setup);
        let passes_per_ms = calibrate(path).map_err(|error| error.to_string())?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .busy_timeout(DB_BUSY_TIMEOUT);
        // No idle reaper and no minimum: the pool spawns no task, so it runs on any runtime.
        let pool = SqlitePoolOptions::new()
            .max_connections(DB_POOL_SIZE)
            .min_connections(0)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_lazy_with(options);
        Ok(Database {
            path: path.to_owned(),
            passes_per_ms,
            pool,
        })
    }

    /// The passes of [`QUERY`] that take about `ms` here.
    pub fn passes_for(&self, ms: Duration) -> i64 {
        (ms.as_secs_f64() * 1e3 * self.passes_per_ms).round() as i64
    }

    fn failed(error: impl std::fmt::Display) -> ApiError {
        let error = format!("database: {error}");
        if error.contains("database is locked") {
            ApiError::unavailable(error)
        } else {
            ApiError::internal(error)
        }
    }

    fn counted(
        work: Work,
        passes: i64,
        rows: i64,
        wall: Duration,
        cpu: Option<Duration>,
    ) -> IoWork {
        io_work(
            work,
            wall,
            cpu,
            format!("counted {rows} rows in {passes} passes"),
        )
    }

    /// Runs the query sized to `ms` with a blocking driver, on this thread.
    pub fn query_blocking(
        &self,
        stack: &Stack,
        route: Route,
        ms: Duration,
    ) -> Result<IoWork, ApiError> {
        let work = stack.work_here(route, ms);
        let passes = self.passes_for(ms);
        let (rows, wall, cpu) = timed(|| query_once(&self.path, passes));
        let rows = rows.map_err(Database::failed)?;
        Ok(Database::counted(work, passes, rows, wall, Some(cpu)))
    }

    /// Runs the same query through the async driver's pool, awaited.
    pub async fn query_async(
        &self,
        stack: &Stack,
        route: Route,
        ms: Duration,
    ) -> Result<IoWork, ApiError> {
        let work = stack.work_here(route, ms);
        let passes = self.passes_for(ms);
        let start = Instant::now();
        let rows: i64 = sqlx::query_scalar(QUERY)
            .bind(passes)
            .fetch_one(&self.pool)
            .await
            .map_err(Database::failed)?;
        Ok(Database::counted(work, passes, rows, start.elapsed(), None))
    }
}

/// One read-only connection, one run of the query.
fn query_once(path: &Path, passes: i64) -> rusqlite::Result<i64> {
    let connection = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    connection.busy_timeout(DB_BUSY_TIMEOUT)?;
    connection.query_row(QUERY, [passes], |row| row.get(0))
}

/// Passes per millisecond: runs of 1, 2, 4, ... passes until one takes [`CALIBRATION_RUN`],
/// then [`CALIBRATION_REPEATS`] more at that size, the quickest counting: one run on a shared
/// machine may be slowed, none is sped up.
fn calibrate(path: &Path) -> rusqlite::Result<f64> {
    let run = |passes: i64| -> rusqlite::Result<Duration> {
        let start = Instant::now();
        query_once(path, passes)?;
        Ok(start.elapsed())
    };
    let mut passes = 1;
    let mut took = run(passes)?;
    while took < CALIBRATION_RUN {
        passes *= 2;
        took = run(passes)?;
    }
    for _ in 0..CALIBRATION_REPEATS {
        took = took.min(run(passes)?);
    }
    Ok(passes as f64 / (took.as_secs_f64() * 1e3))
}

/// The file (`--file`) the file routes read whole.
#[derive(Debug)]
pub struct File {
    path: PathBuf,
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
