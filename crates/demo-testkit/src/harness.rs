//! What the checks share: starting a server, getting a path, a burst with a `/ping` sent
//! into it, and saying that a check could not run ([`skip`]).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use burst_meter::burst::{self, Burst, Connect};
use burst_meter::http::{Endpoint, Reply, get_once};
use burst_meter::target::{REFERENCE_READY_WITHIN, ServerProcess};
use demo_contract::{IO_URING_REFUSED, Work};

/// Work routes sleep this long in the serialised check: short, so that 8 of them stay quick.
pub(crate) const SHORT_SLEEP: Duration = Duration::from_millis(100);
/// And this long in the concurrent checks, where the margins matter more: the burst against
/// 3 × sleep, and the ping against half a sleep, which a ping on a busy machine (one core
/// kept busy by another process, the other shared by the test binaries) has come within
/// 200 ms of.
pub(crate) const CONCURRENT_SLEEP: Duration = Duration::from_millis(400);
/// Held by each CPU check while it runs, so that the checks of one binary take turns.
pub(crate) static CORES: Mutex<()> = Mutex::new(());

/// Requests per burst.
pub(crate) const N: usize = 8;
/// How long any one request of a check may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(future)
}

pub(crate) async fn start(binary: &str, args: &[&str]) -> ServerProcess {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    // The reference app's Python needs longer to start than the Rust servers on a busy machine.
    let ready_within = REFERENCE_READY_WITHIN;
    ServerProcess::spawn(
        server_name(binary),
        Path::new(binary),
        &args,
        &[],
        ready_within,
    )
    .await
    .unwrap_or_else(|error| panic!("{error}"))
}

/// The server's name: its binary's file name.
pub(crate) fn server_name(binary: &str) -> &str {
    Path::new(binary)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(binary)
}

/// The variable that lets a developer run the tests where python3 or io_uring is missing:
/// with `ALLOW_SKIPS=1` a test that cannot run is counted as skipped instead of failing.
pub const ALLOW_SKIPS: &str = "ALLOW_SKIPS";
/// The variable naming the file each skip is written to, one line each, which
/// `scripts/test.sh` counts in its closing summary.
pub const SKIPPED_LOG: &str = "SKIPPED_TESTS_LOG";
/// What an io_uring server's checks miss where the kernel refuses io_uring.
pub const NO_IO_URING: &str = "the kernel refuses io_uring, which this server needs";

/// Says that `test` cannot run because of `missing`. A test that did not run must never pass
/// unseen: this panics, so the test fails, unless [`ALLOW_SKIPS`] is `1`. Then the skip is
/// said on stderr and appended to the file [`SKIPPED_LOG`] names, as `missing<TAB>test`, for
/// `scripts/test.sh` to count (cargo hides a passing test's stderr).
pub fn skip(test: &str, missing: &str) {
    let allowed = std::env::var(ALLOW_SKIPS).is_ok_and(|value| value == "1");
    assert!(
        allowed,
        "{test} cannot run: {missing}. Set {ALLOW_SKIPS}=1 to run the other tests without it \
         (scripts/test.sh then counts this one as skipped)"
    );
    eprintln!("{test}: skipped, {missing}");
    if let Some(log) = std::env::var_os(SKIPPED_LOG) {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|error| panic!("{}: {error}", Path::new(&log).display()));
        // One short write in append mode: the lines of tests running at once do not mix.
        file.write_all(format!("{missing}\t{test}\n").as_bytes())
            .unwrap_or_else(|error| panic!("{}: {error}", Path::new(&log).display()));
    }
}

/// Whether `binary`, a server that needs io_uring, says the kernel refused it: started once
/// per test binary, its answer kept.
pub fn io_uring_refused(binary: &str) -> bool {
    static REFUSED: OnceLock<bool> = OnceLock::new();
    *REFUSED.get_or_init(|| {
        let started = block_on(async {
            ServerProcess::start(server_name(binary), Path::new(binary), &[]).await
        });
        match started {
            Ok(_server) => false,
            Err(error) if error.to_string().contains(IO_URING_REFUSED) => true,
            Err(error) => panic!("{error}"),
        }
    })
}

pub(crate) async fn get(endpoint: &Endpoint, path: &str) -> Reply {
    get_once(endpoint, path, TIMEOUT)
        .await
        .unwrap_or_else(|error| panic!("GET {path}: {error}"))
}

/// A duration as whole milliseconds, for assertion messages.
pub(crate) fn in_ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

pub(crate) fn assert_json(reply: &Reply, status: u16, what: &str) {
    assert_eq!(reply.status, status, "{what}: {:?}", reply.body);
    assert_eq!(
        reply.content_type.as_deref(),
        Some("application/json"),
        "{what}"
    );
}

/// Fires `n` concurrent requests of `path` and, `ping_after` in, one `/ping` on a connection
/// of its own. Returns the burst, every request of it answered 200, and how long the ping took.
pub(crate) async fn burst_and_ping(
    endpoint: &Endpoint,
    path: &str,
    n: usize,
    ping_after: Duration,
) -> (Burst, Duration) {
    let ping = async {
        tokio::time::sleep(ping_after).await;
        let sent = Instant::now();
        let reply = get(endpoint, "/ping").await;
        assert_eq!(reply.status, 200, "/ping during {path}");
        sent.elapsed()
    };
    let (burst, ping) = tokio::join!(
        burst::fire(endpoint, path, n, TIMEOUT, Connect::During),
        ping
    );
    assert_eq!(burst.ok(), n, "{path}: {:?}", burst.errors());
    (burst, ping)
}

/// Fires `N` concurrent requests of `path` and, 50 ms in, one `/ping` on a connection of its
/// own. Returns the burst, its work bodies, and how long the ping took.
pub(crate) async fn burst_with_ping(
    endpoint: &Endpoint,
    path: &str,
) -> (Burst, Vec<Work>, Duration) {
    let (burst, ping) = burst_and_ping(endpoint, path, N, Duration::from_millis(50)).await;
    let work = burst.work();
    assert_eq!(work.len(), N, "{path}: every answer is a work body");
    (burst, work, ping)
}

/// How many of `work` ran on each thread, by the thread's OS id (names do not tell threads
/// apart: tokio names every worker alike). Its length is the number of distinct threads.
pub(crate) fn per_thread<'a>(work: impl IntoIterator<Item = &'a Work>) -> BTreeMap<u64, usize> {
    let mut counts = BTreeMap::new();
    for work in work {
        *counts.entry(work.thread_id).or_default() += 1;
    }
    counts
}
