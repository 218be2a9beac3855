//! The hidden blockers: a blocking HTTP call, an SQLite query and a whole-file read, each on
//! the reactor (`/bad-*`), offloaded (`/ok-*-blocking`) and awaited (`/ok-*-await`), and what
//! their routes answer when what they need is missing.

use std::sync::PoisonError;
use std::time::Duration;

use burst_meter::burst::{self, Connect};
use burst_meter::fixtures::Fixtures;
use burst_meter::http::Endpoint;
use burst_meter::stalls::{self, StallsSeen};
use demo_contract::{IoWork, Route};

use crate::cpu::*;
use crate::harness::*;

/// The hidden blockers' `?ms=` in their checks: the upstream's delay and the query's size.
pub(crate) const HIDDEN_UNIT: Duration = Duration::from_millis(100);
/// The file the file routes read in their checks: about 100 ms to copy from the page cache
/// on the machine the suite is written for (256 MiB took 180 ms).
pub(crate) const HIDDEN_FILE_MB: u64 = 144;
/// The stall detector's threshold in the hidden blockers' checks: well under one call, so
/// that every blocking call on the reactor is caught, and well over a poll that only starts
/// or ends a call.
pub(crate) const HIDDEN_STALL_MS: &str = "40";

/// What a burst of a hidden blocker's route showed.
pub(crate) struct HiddenBurst {
    wall: Duration,
    work: Vec<IoWork>,
    /// How long the `/ping` sent [`CPU_PING_AFTER`] into the burst took.
    ping: Duration,
    /// What the server's stall detector caught during the burst.
    stalls: StallsSeen,
}

/// Starts the server pointed at `fixtures`, with the stall detector at [`HIDDEN_STALL_MS`];
/// warms `route` up with one request alone, then fires [`CPU_N`] concurrent requests of it
/// with a `/ping` into them. The hidden blockers' checks take the cores' lock: the query and
/// the copy are CPU work, and the others' timings are no better on cores two checks share.
pub(crate) fn hidden_burst(binary: &str, route: Route, fixtures: &Fixtures) -> HiddenBurst {
    let _cores = CORES.lock().unwrap_or_else(PoisonError::into_inner);
    block_on(async {
        let unit_ms = HIDDEN_UNIT.as_millis().to_string();
        let mut args = vec!["--sleep-ms", &unit_ms, "--stall-ms", HIDDEN_STALL_MS];
        let fixture_args = fixtures.server_args();
        args.extend(fixture_args.iter().map(String::as_str));
        let server = start(binary, &args).await;
        let path = route.path();
        // The first call pays for a lazy set-up (a pool, a client, the file into the cache).
        assert_json(&get(server.endpoint(), path).await, 200, path);
        // The offloading routes are warmed up by one burst first: the check is about where
        // the work runs, not about a pool starting its threads (compio's reactor waits for a
        // new pool thread to take its work: `compio-driver`'s `asyncify.rs`).
        if path.starts_with("/ok-") {
            let warm_up =
                burst::fire(server.endpoint(), path, CPU_N, TIMEOUT, Connect::During).await;
            assert_eq!(warm_up.ok(), CPU_N, "{path}: {:?}", warm_up.errors());
        }
        let before = stalls::read(server.endpoint())
            .await
            .expect("a /stalls body");
        let (burst, ping) = burst_and_ping(server.endpoint(), path, CPU_N, CPU_PING_AFTER).await;
        let after = stalls::read(server.endpoint())
            .await
            .expect("a /stalls body");
        let work = burst.io_work();
        assert_eq!(
            work.len(),
            CPU_N,
            "{path}: every answer is a hidden blocker's body"
        );
        for body in &work {
            assert_eq!(body.work.route, path, "{body:?}");
            assert!(!body.detail.is_empty(), "{body:?}");
        }
        HiddenBurst {
            wall: burst.wall,
            work,
            ping,
            stalls: stalls::between(&before, &after),
        }
    })
}

/// Which of the offloading routes the stall detector must find free of slow polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offloaded {
    /// Both `/ok-*-blocking` and `/ok-*-await`.
    Free,
    /// `/ok-*-blocking` only (see [`hidden_file_read_on_io_uring`]).
    AwaitMayHold,
    /// Neither: the FastAPI app, whose offloaded work shares the GIL with the loop (see
    /// `crates/demo-testkit/tests/fastapi.rs`).
    MayHold,
}

/// The three routes of one hidden blocker, each on a server of its own, checked for where
/// the call ran:
/// - `/bad-*` serialises on the reactor: the burst takes at least 0.8 × its calls together,
///   a `/ping` sent into it waits at least half the median call, and the stall detector
///   books slow polls to the route (it names it);
/// - `/ok-*-blocking` calls off the reactor, `/ok-*-await` from it, and the detector books no
///   slow poll during those `offloaded` says are free.
///
/// The `/ping` beside the offloading routes is not timed here: on two cores shared with N
/// threads that copy 144 MiB each, it was seen to wait 60 to 98 ms with no poll of the
/// reactor held. Returns the three bursts.
pub(crate) fn hidden_blocker_shapes(
    binary: &str,
    routes: [Route; 3],
    fixtures: &Fixtures,
    offloaded: Offloaded,
) -> Vec<HiddenBurst> {
    let bursts: Vec<HiddenBurst> = (routes.iter())
        .map(|&route| hidden_burst(binary, route, fixtures))
        .collect();
    let [bad, blocking, awaited] = &bursts[..] else {
        unreachable!("three routes")
    };
    let [bad_path, blocking_path, await_path] = routes.map(Route::path);
    let calls: Vec<f64> = bad.work.iter().map(|body| body.call_ms).collect();
    // One after another, the burst lasts at least as long as its calls together; side by
    // side, about as long as the longest. On a busy core the calls' lengths vary, so the sum
    // is the measure, not N × the median.
    let serial = Duration::from_secs_f64(calls.iter().sum::<f64>() / 1e3);
    let median = burst_meter::stats::spread(calls).map_or(0.0, |[_, median, _]| median);
    let unit = Duration::from_secs_f64(median / 1e3);
    let floor_is = format!("0.8 × {} (its {CPU_N} calls together)", in_ms(serial));
    let wall = (bad.wall, serial.mul_f64(0.8), floor_is.as_str());
    assert_serialised_on_reactor(bad_path, wall, &bad.work, bad.ping, unit);
    let label = format!("GET {bad_path}");
    assert!(
        bad.stalls.slow_polls > 0 && bad.stalls.routes.contains(&label),
        "the stall detector did not book {bad_path}'s polls to it: {:?}",
        bad.stalls
    );
    for (path, burst, on_reactor) in [
        (blocking_path, blocking, false),
        (await_path, awaited, true),
    ] {
        assert!(
            burst
                .work
                .iter()
                .all(|body| body.work.on_reactor == on_reactor),
            "{path}: the call should start {} the reactor: {:?}",
            if on_reactor { "on" } else { "off" },
            burst.work
        );
        let free = match offloaded {
            Offloaded::Free => true,
            Offloaded::AwaitMayHold => !on_reactor,
            Offloaded::MayHold => false,
        };
        assert!(
            !free || !held_the_reactor(&burst.stalls, unit),
            "{path} held the reactor (calls of {}): {:?}",
            in_ms(unit),
            burst.stalls
        );
    }
    for (path, burst) in [(bad_path, bad), (blocking_path, blocking)] {
        assert!(
            burst.work.iter().all(|body| body.cpu_ms.is_some()),
            "{path}: a blocking call reports its thread's CPU time: {:?}",
            burst.work
        );
    }
    bursts
}

/// Whether the slow polls of a burst of [`CPU_N`] calls show a reactor held by the calls: a
/// route that calls on the reactor holds it once per call for about a call, so at least half
/// the calls made a slow poll and the longest is at least half a call (`unit`). Not a single
/// stray slow poll: a reactor thread descheduled mid-poll on a busy machine was seen to take
/// 72 ms over a poll that only hands a read to a pool, against the threshold's 40 ms.
fn held_the_reactor(stalls: &StallsSeen, unit: Duration) -> bool {
    let longest = Duration::from_secs_f64(stalls.longest_ms.unwrap_or(0.0) / 1e3);
    stalls.slow_polls as usize >= CPU_N / 2 && longest >= unit / 2
}

/// Above this share of its wall time on the CPU, a call computes: a thread that computes
/// gets at least this much of a core even on a machine shared with other builds (a query was
/// seen at a median 0.21 of its calls there); one that waits for an upstream spends a few ms
/// of CPU in a 100 ms call (checked below at under a quarter).
const COMPUTES: f64 = 0.1;

/// A blocking HTTP client call to a slow upstream: the reactor thread waits, spending no CPU.
/// The calls only wait, so here the `/ping` beside the offloading routes is timed too: it
/// waits less than the same stack's `/ping` beside the calls on the reactor, in this test.
pub fn hidden_http_call_blocks_only_on_the_reactor(binary: &str) {
    let fixtures = Fixtures::create(1).expect("the hidden blockers' fixtures");
    let bursts = hidden_blocker_shapes(binary, Route::HIDDEN[0], &fixtures, Offloaded::Free);
    for burst in &bursts[1..] {
        assert!(
            burst.wall < HIDDEN_UNIT * 3,
            "the HTTP call took {}",
            in_ms(burst.wall)
        );
        assert!(
            burst.ping < bursts[0].ping,
            "/ping beside the offloaded HTTP call took {}, beside the blocking one {}",
            in_ms(burst.ping),
            in_ms(bursts[0].ping)
        );
    }
    for body in &bursts[0].work {
        let cpu = body.cpu_ms.unwrap_or(f64::MAX);
        assert!(
            cpu < body.call_ms / 4.0,
            "waiting for the upstream took CPU: {body:?}"
        );
        assert!(
            body.call_ms >= HIDDEN_UNIT.as_secs_f64() * 1e3 * 0.9,
            "{body:?}"
        );
    }
}

/// A query run by a blocking driver: the reactor thread computes (SQLite runs in-process).
pub fn hidden_db_query_blocks_only_on_the_reactor(binary: &str) {
    hidden_db_query(binary, Offloaded::Free);
}

/// The same on the FastAPI app, where the offloaded queries are not held to a free loop.
pub fn hidden_db_query_on_python(binary: &str) {
    hidden_db_query(binary, Offloaded::MayHold);
}

pub(crate) fn hidden_db_query(binary: &str, offloaded: Offloaded) {
    let fixtures = Fixtures::create(1).expect("the hidden blockers' fixtures");
    let bursts = hidden_blocker_shapes(binary, Route::HIDDEN[1], &fixtures, offloaded);
    // The median share: one query descheduled longer than the others says nothing.
    let shares = (bursts[0].work.iter()).map(|body| body.cpu_ms.unwrap_or(0.0) / body.call_ms);
    let share = burst_meter::stats::spread(shares.collect()).map_or(0.0, |[_, median, _]| median);
    assert!(
        share > COMPUTES,
        "the queries took little CPU, a median {share:.2} of their calls: {:?}",
        bursts[0].work
    );
}

/// A whole file read with `std::fs`: the reactor thread copies it from the page cache.
pub fn hidden_file_read_blocks_only_on_the_reactor(binary: &str) {
    hidden_file_read(binary, Offloaded::Free);
}

/// The same on a server on io_uring, where `/ok-file-await` is not held to a free reactor:
/// compio's `fs::read` submits io_uring reads, and for a file the page cache holds, the
/// kernel's copy was measured as the reactor thread's system time (`scripts/thread-cpu.py`,
/// `docs/hidden-blockers.md`); ntex, which has no file API, offloads it.
pub fn hidden_file_read_on_io_uring(binary: &str) {
    hidden_file_read(binary, Offloaded::AwaitMayHold);
}

/// The same on the FastAPI app, where the offloaded reads are not held to a free loop.
pub fn hidden_file_read_on_python(binary: &str) {
    hidden_file_read(binary, Offloaded::MayHold);
}

pub(crate) fn hidden_file_read(binary: &str, offloaded: Offloaded) {
    let fixtures = Fixtures::create(HIDDEN_FILE_MB).expect("the hidden blockers' fixtures");
    let bursts = hidden_blocker_shapes(binary, Route::HIDDEN[2], &fixtures, offloaded);
    let bytes = format!("read {} bytes", HIDDEN_FILE_MB << 20);
    for burst in &bursts {
        assert!(
            burst.work.iter().all(|body| body.detail == bytes),
            "{:?}",
            burst.work
        );
    }
}

/// What each hidden blocker's route answers when what it needs is missing or failing: a 5xx
/// with a JSON message, and the server serves on.
pub fn hidden_blockers_fail_in_json_and_the_server_goes_on(binary: &str) {
    let fixtures = Fixtures::create(1).expect("the hidden blockers' fixtures");
    block_on(async {
        let bare = start(binary, &[]).await;
        for route in Route::HIDDEN.into_iter().flatten() {
            assert_error(bare.endpoint(), route.path(), 503, "start the server with").await;
        }
        // A port nobody listens on: the one of a listener just closed.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let missing = fixtures.file().with_file_name("missing.bin");
        let (upstream, file) = (closed.to_string(), missing.display().to_string());
        let server = start(binary, &["--upstream", &upstream, "--file", &file]).await;
        for route in Route::HIDDEN[0] {
            let path = format!("{}?ms=1", route.path());
            assert_error(server.endpoint(), &path, 502, &upstream).await;
        }
        for route in Route::HIDDEN[2] {
            assert_error(server.endpoint(), route.path(), 500, &file).await;
        }
        let db = fixtures.db().display().to_string();
        let server = start(binary, &["--db", &db]).await;
        let lock = rusqlite::Connection::open(&db).expect("the server's database");
        lock.execute_batch("BEGIN EXCLUSIVE")
            .expect("an exclusive lock");
        for route in Route::HIDDEN[1] {
            let path = format!("{}?ms=1", route.path());
            assert_error(server.endpoint(), &path, 503, "database is locked").await;
        }
        lock.execute_batch("COMMIT").expect("the lock released");
        let path = format!("{}?ms=1", Route::BadDb.path());
        assert_json(&get(server.endpoint(), &path).await, 200, &path);
    });
}

/// `path` answers `status` with a JSON error that mentions `says`; `/ping` answers after.
pub(crate) async fn assert_error(endpoint: &Endpoint, path: &str, status: u16, says: &str) {
    let reply = get(endpoint, path).await;
    assert_json(&reply, status, path);
    let body: serde_json::Value = reply.json().expect("a JSON error");
    let error = body
        .get("error")
        .and_then(|e| e.as_str())
        .unwrap_or_default();
    assert!(
        error.contains(says),
        "{path}: {error:?} does not say {says:?}"
    );
    assert_eq!(
        get(endpoint, "/ping").await.status,
        200,
        "/ping after {path}"
    );
}
