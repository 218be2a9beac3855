//! The SQLite database (`--db PATH`): its table, filled at start; [`QUERY`], calibrated to
//! take about `?ms=`; the blocking driver ([`rusqlite`]) and the async one ([`sqlx`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

use super::{io_work, timed};
use crate::{ApiError, IoWork, Route, Stack, Work};

/// The blocking query, as the routes' `how` names it.
pub const BLOCKING_DB: &str = "rusqlite::Connection::query_row";
/// The async driver's query, as `/ok-db-await`'s `how` names it.
pub const ASYNC_DB: &str = "sqlx::query_scalar(..).fetch_one(&SqlitePool)";

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
