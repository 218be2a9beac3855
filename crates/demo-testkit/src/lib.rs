//! The contract tests (the route contract, `docs/contract.md`), run identically against every
//! server binary.
//!
//! Each server crate's `tests/contract.rs` is one line, `demo_testkit::contract_tests!("NAME");`,
//! which expands to one `#[test]` per check below, each starting the real binary on
//! `--port 0`. A server on io_uring uses `contract_tests!(io_uring "NAME")`: where the kernel
//! refuses io_uring each check says it was skipped, and `/ok-cpu-yield` is checked against the
//! runtime's event interval ([`ok_cpu_yield_waits_for_the_event_interval`]). Timings assert the shape with generous margins, never a speed: a burst of
//! `N` sleeps is serialised if it takes at least 0.8 × N × sleep, concurrent if under
//! 3 × sleep; two rounds of sleeps take from 1.6 to 2.9 sleeps, one round under 1.9. The CPU
//! routes' checks compute [`CPU_WORK`] of CPU time per request, [`CPU_N`] at once: serialised
//! takes at least 0.8 × N × work; a `/ping` into the burst waits at least half a unit of work
//! behind a blocked reactor, and under half a unit beside a free one. Every server runs in a
//! [`ServerProcess`], which kills it when dropped, so a failing check leaves no process behind.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bench_client::measure::burst::{self, Burst, Connect};
use bench_client::measure::fixtures::Fixtures;
use bench_client::measure::http::{Connection, Endpoint, Reply, get_once};
use bench_client::measure::stalls::{self, StallsSeen};
use bench_client::measure::target::{REFERENCE_READY_WITHIN, ServerProcess};
use demo_contract::variant::EVENT_INTERVAL_VARIANTS;
use demo_contract::{
    CpuWork, Event, EventsBody, IO_URING_REFUSED, IoWork, Pong, Route, What, Work,
};
use hyper::Method;
use nix::sys::signal::Signal;

/// Expands to one `#[test]` per contract check, run against the binary `$bin` of this crate.
#[macro_export]
macro_rules! contract_tests {
    ($bin:literal) => {
        $crate::contract_tests!(@checks each, $bin, ok_cpu_yield_shares_the_reactor,
            hidden_file_read_blocks_only_on_the_reactor);
    };
    // A server on io_uring: each check is skipped, saying so, where the kernel refuses
    // io_uring; `/ok-cpu-yield` is checked against the runtime's event interval, which
    // decides whether a yielding task lets new requests in, and `/ok-file-await` is not held
    // to a free reactor (see the checks).
    (io_uring $bin:literal) => {
        $crate::contract_tests!(@checks io_uring, $bin, ok_cpu_yield_waits_for_the_event_interval,
            hidden_file_read_on_io_uring);
    };
    // The checks, with the ones of `/ok-cpu-yield` and the file routes that fit the server.
    (@checks $arm:ident, $bin:literal, $yield_check:ident, $file_check:ident) => {
        $crate::contract_tests!(@$arm env!(concat!("CARGO_BIN_EXE_", $bin)) =>
            ping_describes_the_server,
            bad_serialises_on_the_reactor,
            ok_blocking_is_concurrent_off_the_reactor,
            ok_await_is_concurrent_on_the_reactor,
            bad_cpu_serialises_on_the_reactor,
            ok_cpu_blocking_leaves_the_reactor_free,
            $yield_check,
            ok_cpu_pool_runs_one_per_core_off_the_reactor,
            hidden_http_call_blocks_only_on_the_reactor,
            hidden_db_query_blocks_only_on_the_reactor,
            $file_check,
            hidden_blockers_fail_in_json_and_the_server_goes_on,
            fastapi_client_paths_work_unchanged,
            bad_ms_is_a_400_in_json_and_the_server_goes_on,
            unknown_paths_are_404_and_other_methods_405,
            threads_flag_sets_the_reactor_threads,
            blocking_threads_flag_sizes_the_offload_pool,
            sigterm_exits_0_promptly,
            sigint_exits_0_promptly,
            sigterm_lets_the_request_in_flight_finish,
            malformed_requests_get_an_error_and_serving_goes_on,
            oversized_headers_get_an_error_and_serving_goes_on,
            binds_loopback_by_default_and_says_so,
            keeps_accepting_after_running_out_of_file_descriptors,
            blocking_polls_are_counted_as_stalls,
            stalls_are_logged_while_they_run_under_their_route,
            slow_requests_with_short_polls_are_no_stalls,
            a_block_under_the_threshold_is_no_stall,
            stall_ms_0_turns_the_detector_off,
            events_record_accepts_and_handlers_in_order_and_drain,
            events_are_off_without_the_flag
        );
    };
    (@io_uring $binary:expr => $($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                if $crate::io_uring_refused($binary) {
                    eprintln!("skipped: the kernel refuses io_uring, which this server needs");
                    return;
                }
                $crate::$check($binary);
            }
        )*
    };
    (@each $binary:expr => $($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                $crate::$check($binary);
            }
        )*
    };
}

/// Work routes sleep this long in the serialised check: short, so that 8 of them stay quick.
const SHORT_SLEEP: Duration = Duration::from_millis(100);
/// And this long in the concurrent checks, where the margin against 3 × sleep matters more.
const CONCURRENT_SLEEP: Duration = Duration::from_millis(200);
/// Held by each CPU check while it runs, so that the checks of one binary take turns.
static CORES: Mutex<()> = Mutex::new(());

/// Requests per burst.
const N: usize = 8;
/// How long any one request of a check may take.
const TIMEOUT: Duration = Duration::from_secs(20);

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(future)
}

async fn start(binary: &str, args: &[&str]) -> ServerProcess {
    start_with(binary, args, &[]).await
}

/// [`start`] with variables `env` set for the server.
async fn start_with(binary: &str, args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    // The reference app's Python needs longer to start than the Rust servers on a busy machine.
    let ready_within = REFERENCE_READY_WITHIN;
    ServerProcess::spawn(
        server_name(binary),
        Path::new(binary),
        &args,
        &env,
        ready_within,
    )
    .await
    .unwrap_or_else(|error| panic!("{error}"))
}

/// The server's name: its binary's file name.
fn server_name(binary: &str) -> &str {
    Path::new(binary)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(binary)
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

async fn get(endpoint: &Endpoint, path: &str) -> Reply {
    get_once(endpoint, path, TIMEOUT)
        .await
        .unwrap_or_else(|error| panic!("GET {path}: {error}"))
}

/// A duration as whole milliseconds, for assertion messages.
fn in_ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

fn assert_json(reply: &Reply, status: u16, what: &str) {
    assert_eq!(reply.status, status, "{what}: {:?}", reply.body);
    assert_eq!(
        reply.content_type.as_deref(),
        Some("application/json"),
        "{what}"
    );
}

/// Fires `n` concurrent requests of `path` and, `ping_after` in, one `/ping` on a connection
/// of its own. Returns the burst, every request of it answered 200, and how long the ping took.
async fn burst_and_ping(
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
async fn burst_with_ping(endpoint: &Endpoint, path: &str) -> (Burst, Vec<Work>, Duration) {
    let (burst, ping) = burst_and_ping(endpoint, path, N, Duration::from_millis(50)).await;
    let work = burst.work();
    assert_eq!(work.len(), N, "{path}: every answer is a work body");
    (burst, work, ping)
}

/// The distinct thread names in `work`.
fn threads(work: &[Work]) -> Vec<&str> {
    let mut names: Vec<&str> = work.iter().map(|work| work.thread.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

pub fn ping_describes_the_server(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let reply = get(server.endpoint(), "/ping").await;
        assert_json(&reply, 200, "/ping");
        let pong: Pong = reply.json().expect("a /ping body");
        assert!(pong.ok);
        assert_eq!(pong.server, server.name());
        assert_eq!(pong.reactor_threads, 1);
        assert!(!pong.runtime.is_empty());
    });
}

pub fn bad_serialises_on_the_reactor(binary: &str) {
    block_on(async {
        let sleep = SHORT_SLEEP;
        let server = start(binary, &["--sleep-ms", &sleep.as_millis().to_string()]).await;
        let (burst, work, ping) = burst_with_ping(server.endpoint(), "/bad").await;
        let floor = sleep.mul_f64(0.8 * N as f64);
        assert!(
            burst.wall >= floor,
            "/bad took {}, less than 0.8 × {N} × sleep",
            in_ms(burst.wall)
        );
        assert!(
            work.iter().all(|work| work.on_reactor),
            "/bad slept off the reactor: {work:?}"
        );
        assert_eq!(
            threads(&work).len(),
            1,
            "/bad ran on more than one thread: {work:?}"
        );
        assert!(
            work.iter()
                .all(|work| work.slept_ms == sleep.as_millis() as u64)
        );
        // Sent into the middle of a sleep, the ping waits at least for the rest of it.
        assert!(
            ping >= sleep / 2,
            "/ping during /bad took only {}",
            in_ms(ping)
        );
    });
}

/// Starts the server with [`CONCURRENT_SLEEP`] and fires a burst of `path`, asserting the
/// concurrent shape: the burst under 3 × sleep, the ping during it well under one sleep.
/// Returns the work bodies.
fn assert_concurrent(binary: &str, path: &str) -> Vec<Work> {
    block_on(async {
        let sleep = CONCURRENT_SLEEP;
        let server = start(binary, &["--sleep-ms", &sleep.as_millis().to_string()]).await;
        // The first request pays a server's lazy set-up (the FastAPI app's most of all), which
        // is no part of the shape checked here.
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
        let (burst, work, ping) = burst_with_ping(server.endpoint(), path).await;
        assert!(
            burst.wall < sleep * 3,
            "{path} took {}, not under 3 × sleep",
            in_ms(burst.wall)
        );
        assert!(ping < sleep / 2, "/ping during {path} took {}", in_ms(ping));
        work
    })
}

pub fn ok_blocking_is_concurrent_off_the_reactor(binary: &str) {
    let work = assert_concurrent(binary, "/ok-blocking");
    assert!(
        work.iter().all(|work| !work.on_reactor),
        "/ok-blocking slept on the reactor: {work:?}"
    );
}

pub fn ok_await_is_concurrent_on_the_reactor(binary: &str) {
    let work = assert_concurrent(binary, "/ok-await");
    // The timer wait starts on the reactor thread, and with one reactor thread, all on one.
    assert!(work.iter().all(|work| work.on_reactor), "{work:?}");
    assert_eq!(threads(&work).len(), 1, "{work:?}");
}

/// CPU routes compute this much CPU time per request in their checks: short, so that a
/// serialised burst stays quick, and long against the noise of two shared cores (on a
/// virtual machine with steal time, a `/ping` beside two busy pool threads was seen to wait
/// 30 ms for its turn on a core: half a unit of work must stay well above that).
const CPU_WORK: Duration = Duration::from_millis(100);
/// Requests per CPU burst: twice the cores of the machine the suite is written for.
const CPU_N: usize = 4;
/// When the `/ping` goes out, into a CPU burst: inside the first unit of work.
const CPU_PING_AFTER: Duration = Duration::from_millis(20);

/// What a burst of a CPU route showed.
struct CpuBurst {
    /// From the first send to the last answer.
    wall: Duration,
    /// One body per request.
    work: Vec<CpuWork>,
    /// How long the `/ping` sent [`CPU_PING_AFTER`] into the burst took.
    ping: Duration,
}

/// Starts the server with `--sleep-ms` [`CPU_WORK`], fires [`CPU_N`] concurrent requests of
/// the CPU route `path` with a `/ping` into them, and checks what every body says it cost:
/// at least 0.9 × the CPU time asked for, on its own thread's clock, and a wall time no
/// shorter (0.9 × for the clocks' resolutions).
fn cpu_burst(binary: &str, path: &str) -> CpuBurst {
    cpu_burst_with(binary, path, &[])
}

/// [`cpu_burst`] of a server started with variables `env` set.
fn cpu_burst_with(binary: &str, path: &str, env: &[(&str, &str)]) -> CpuBurst {
    // CPU work measures the cores: two CPU checks of one test binary side by side would each
    // find half of them, and their pings would wait for each other's work.
    let _cores = CORES.lock().unwrap_or_else(PoisonError::into_inner);
    block_on(async {
        let asked = CPU_WORK.as_millis().to_string();
        let server = start_with(binary, &["--sleep-ms", &asked], env).await;
        // Warmed up first: the FastAPI app's first answers cost it milliseconds of CPU more,
        // which the work would stretch into a slow ping that says nothing of the reactor.
        for warm_up in ["/ping".to_owned(), format!("{path}?ms=0")] {
            assert_eq!(
                get(server.endpoint(), &warm_up).await.status,
                200,
                "{warm_up}"
            );
        }
        let (burst, ping) = burst_and_ping(server.endpoint(), path, CPU_N, CPU_PING_AFTER).await;
        let work: Vec<CpuWork> = burst
            .replies
            .iter()
            .flatten()
            .filter_map(Reply::json::<CpuWork>)
            .collect();
        assert_eq!(work.len(), CPU_N, "{path}: every answer is a CPU work body");
        let asked_ms = CPU_WORK.as_secs_f64() * 1e3;
        for body in &work {
            assert_eq!(body.work.route, path, "{body:?}");
            assert_eq!(body.work.slept_ms, CPU_WORK.as_millis() as u64, "{body:?}");
            assert!(
                body.cpu_ms >= asked_ms * 0.9,
                "{path} used {} ms of CPU for {asked_ms} asked: {body:?}",
                body.cpu_ms
            );
            assert!(
                body.work_wall_ms >= body.cpu_ms * 0.9,
                "{path} took less wall time than CPU time: {body:?}"
            );
        }
        CpuBurst {
            wall: burst.wall,
            work,
            ping,
        }
    })
}

/// The distinct thread names in CPU work bodies.
fn cpu_threads(work: &[CpuWork]) -> Vec<&str> {
    let mut names: Vec<&str> = work.iter().map(|body| body.work.thread.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// A `/ping` into the burst answered in well under one unit of work: the reactor was free
/// (or freed every ~1 ms) while the work went on.
fn assert_ping_not_held(path: &str, burst: &CpuBurst) {
    assert!(
        burst.ping < CPU_WORK / 2,
        "/ping during {path} took {}, not under half of {} of work",
        in_ms(burst.ping),
        in_ms(CPU_WORK)
    );
}

pub fn bad_cpu_serialises_on_the_reactor(binary: &str) {
    let path = Route::BadCpu.path();
    let burst = cpu_burst(binary, path);
    let floor = CPU_WORK.mul_f64(0.8 * CPU_N as f64);
    assert!(
        burst.wall >= floor,
        "{path} took {}, less than 0.8 × {CPU_N} × {}",
        in_ms(burst.wall),
        in_ms(CPU_WORK)
    );
    assert!(
        burst.work.iter().all(|body| body.work.on_reactor),
        "{path} computed off the reactor: {:?}",
        burst.work
    );
    assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
    // Sent into the first unit of work, the ping waits at least for the rest of it.
    assert!(
        burst.ping >= CPU_WORK / 2,
        "/ping during {path} took only {}",
        in_ms(burst.ping)
    );
}

pub fn ok_cpu_blocking_leaves_the_reactor_free(binary: &str) {
    let path = Route::OkCpuBlocking.path();
    let burst = cpu_burst(binary, path);
    assert_ping_not_held(path, &burst);
    assert!(
        burst.work.iter().all(|body| !body.work.on_reactor),
        "{path} computed on the reactor: {:?}",
        burst.work
    );
}

pub fn ok_cpu_yield_shares_the_reactor(binary: &str) {
    let path = Route::OkCpuYield.path();
    let burst = cpu_burst(binary, path);
    assert_ping_not_held(path, &burst);
    // The work runs on the reactor thread, one slice at a time, and with one reactor thread,
    // all on one.
    assert!(
        burst.work.iter().all(|body| body.work.on_reactor),
        "{:?}",
        burst.work
    );
    assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
}

/// On a runtime that polls its I/O only every so many task polls (compio's and ntex's
/// `event_interval`, 61), tasks that yield by waking themselves at once keep the thread
/// busy with each other: a `/ping` into the burst waits for many slices, well past half a
/// unit of work. The same server started as its `event_interval` variant (1 on compio, 2 on
/// ntex: `demo_contract::variant::EVENT_INTERVAL_VARIANTS`) polls io_uring after every task
/// or two, and the ping gets in.
pub fn ok_cpu_yield_waits_for_the_event_interval(binary: &str) {
    let path = Route::OkCpuYield.path();
    let server = server_name(binary);
    let variant = EVENT_INTERVAL_VARIANTS
        .iter()
        .find(|variant| variant.server == server)
        .unwrap_or_else(|| panic!("no event_interval variant for {server}"));
    let stock = cpu_burst(binary, path);
    assert!(
        stock.ping >= CPU_WORK / 2,
        "/ping during {path} took only {} on the stock event interval",
        in_ms(stock.ping)
    );
    let flipped = cpu_burst_with(binary, path, &[(variant.variable, "1")]);
    assert_ping_not_held(&format!("{path} ({})", variant.label), &flipped);
    for burst in [&stock, &flipped] {
        assert!(
            burst.work.iter().all(|body| body.work.on_reactor),
            "{:?}",
            burst.work
        );
        assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
    }
}

/// The pool runs one unit of work per core at a time: a burst takes at least ⌈N / cores⌉
/// units (× 0.8), however the reactor is set up.
pub fn ok_cpu_pool_runs_one_per_core_off_the_reactor(binary: &str) {
    let path = Route::OkCpuPool.path();
    let burst = cpu_burst(binary, path);
    assert_ping_not_held(path, &burst);
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let rounds = CPU_N.div_ceil(cores);
    assert!(
        burst.wall >= CPU_WORK.mul_f64(0.8 * rounds as f64),
        "{CPU_N} × {path} on {cores} cores took {}, less than 0.8 × {rounds} × {}",
        in_ms(burst.wall),
        in_ms(CPU_WORK)
    );
    assert!(
        burst.work.iter().all(|body| !body.work.on_reactor),
        "{path} computed on the reactor: {:?}",
        burst.work
    );
}

/// The hidden blockers' `?ms=` in their checks: the upstream's delay and the query's size.
const HIDDEN_UNIT: Duration = Duration::from_millis(100);
/// The file the file routes read in their checks: about 100 ms to copy from the page cache
/// on the machine the suite is written for (256 MiB took 180 ms).
const HIDDEN_FILE_MB: u64 = 144;
/// The stall detector's threshold in the hidden blockers' checks: well under one call, so
/// that every blocking call on the reactor is caught, and well over a poll that only starts
/// or ends a call.
const HIDDEN_STALL_MS: &str = "40";

/// What a burst of a hidden blocker's route showed.
struct HiddenBurst {
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
fn hidden_burst(binary: &str, route: Route, fixtures: &Fixtures) -> HiddenBurst {
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
enum Offloaded {
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
/// - `/bad-*` serialises on the reactor: the burst takes at least 0.8 × N × its median call
///   (the unit), a `/ping` sent into it waits at least half a unit, and the stall detector
///   books slow polls to the route (it names it);
/// - `/ok-*-blocking` calls off the reactor, `/ok-*-await` from it, and the detector books no
///   slow poll during those `offloaded` says are free.
///
/// The `/ping` beside the offloading routes is not timed here: on two cores shared with N
/// threads that copy 144 MiB each, it was seen to wait 60 to 98 ms with no poll of the
/// reactor held. Returns the three bursts.
fn hidden_blocker_shapes(
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
    let median = bench_client::measure::stats::spread(calls).map_or(0.0, |[_, median, _]| median);
    let unit = Duration::from_secs_f64(median / 1e3);
    assert!(
        bad.wall >= unit.mul_f64(0.8 * CPU_N as f64),
        "{bad_path} took {}, less than 0.8 × {CPU_N} × {} (its median call)",
        in_ms(bad.wall),
        in_ms(unit)
    );
    assert!(
        bad.work.iter().all(|body| body.work.on_reactor),
        "{:?}",
        bad.work
    );
    assert!(
        bad.ping >= unit / 2,
        "/ping during {bad_path} took only {} (one call: {})",
        in_ms(bad.ping),
        in_ms(unit)
    );
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
            !free || burst.stalls.slow_polls == 0,
            "{path} held the reactor: {:?}",
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

/// A blocking HTTP client call to a slow upstream: the reactor thread waits, spending no CPU.
/// The calls only wait, so here the `/ping` beside the offloading routes is timed too.
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
            burst.ping < HIDDEN_UNIT / 2,
            "/ping beside the HTTP call took {}",
            in_ms(burst.ping)
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

fn hidden_db_query(binary: &str, offloaded: Offloaded) {
    let fixtures = Fixtures::create(1).expect("the hidden blockers' fixtures");
    let bursts = hidden_blocker_shapes(binary, Route::HIDDEN[1], &fixtures, offloaded);
    for body in &bursts[0].work {
        let cpu = body.cpu_ms.unwrap_or(0.0);
        assert!(
            cpu > body.call_ms / 2.0,
            "the query took little CPU: {body:?}"
        );
    }
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

fn hidden_file_read(binary: &str, offloaded: Offloaded) {
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
async fn assert_error(endpoint: &Endpoint, path: &str, status: u16, says: &str) {
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

pub fn fastapi_client_paths_work_unchanged(binary: &str) {
    block_on(async {
        let server = start(binary, &["--sleep-ms", "1"]).await;
        for (path, route) in [
            ("/bad", "/bad"),
            ("/ok-def", "/ok-blocking"),
            ("/ok-await", "/ok-await"),
        ] {
            let reply = get(server.endpoint(), path).await;
            assert_json(&reply, 200, path);
            let work: Work = reply.json().expect("a work body");
            assert_eq!((work.route.as_str(), work.slept_ms), (route, 1), "{path}");
        }
        let work: Work = get(server.endpoint(), "/ok-def?ms=3")
            .await
            .json()
            .expect("a work body");
        assert_eq!(work.slept_ms, 3);
        assert!(!work.on_reactor, "/ok-def is the offload route");
    });
}

pub fn bad_ms_is_a_400_in_json_and_the_server_goes_on(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let hidden = Route::HIDDEN
            .into_iter()
            .flatten()
            .filter(|route| route.takes_ms());
        let routes = Route::WORK.into_iter().chain(Route::CPU).chain(hidden);
        let routes: Vec<&str> = routes.map(Route::path).collect();
        for query in ["ms=abc", "ms=-1", "ms=10001", "ms=", "ms=1&ms=2", "ms=1.5"] {
            for &route in &routes {
                let path = format!("{route}?{query}");
                let reply = get(server.endpoint(), &path).await;
                assert_json(&reply, 400, &path);
                let body: serde_json::Value = reply.json().expect("a JSON error");
                assert!(
                    body.get("error")
                        .and_then(|e| e.as_str())
                        .is_some_and(|e| !e.is_empty()),
                    "{path}"
                );
            }
        }
        assert_eq!(get(server.endpoint(), "/bad?ms=0").await.status, 200);
        let reply = get(server.endpoint(), "/bad-cpu?ms=0").await;
        assert_json(&reply, 200, "/bad-cpu?ms=0");
        let body: CpuWork = reply.json().expect("a CPU work body");
        assert_eq!(body.work.slept_ms, 0);
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
        // `/stalls` and `/events` are no work routes: they take no `?ms=` and ignore their query.
        for path in ["/stalls?ms=abc", "/events?ms=abc"] {
            assert_json(&get(server.endpoint(), path).await, 200, path);
        }
    });
}

pub fn unknown_paths_are_404_and_other_methods_405(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_json(&get(server.endpoint(), "/nope").await, 404, "/nope");
        let mut connection = Connection::open(server.endpoint())
            .await
            .expect("a connection");
        for path in [
            "/ping",
            "/bad",
            "/ok-def",
            "/ok-cpu-pool",
            "/stalls",
            "/events",
        ] {
            let reply = connection
                .send(Method::POST, path)
                .await
                .expect("an answer");
            assert_json(&reply, 405, &format!("POST {path}"));
        }
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
    });
}

pub fn threads_flag_sets_the_reactor_threads(binary: &str) {
    block_on(async {
        let server = start(binary, &["--threads", "2", "--sleep-ms", "200"]).await;
        let pong: Pong = get(server.endpoint(), "/ping")
            .await
            .json()
            .expect("a /ping body");
        assert_eq!(pong.reactor_threads, 2);
        let burst = burst::fire(server.endpoint(), "/ok-await", N, TIMEOUT, Connect::During).await;
        assert_eq!(burst.ok(), N);
        assert!(
            burst.wall < Duration::from_millis(600),
            "took {}",
            in_ms(burst.wall)
        );
    });
}

/// With `--blocking-threads 2`, 4 concurrent `/ok-blocking` sleeps run in two rounds of two;
/// without the flag, in one round (every default pool holds far more than 4 threads).
pub fn blocking_threads_flag_sizes_the_offload_pool(binary: &str) {
    /// The wall time of 4 concurrent `/ok-blocking`, each sleeping `sleep`, on a server started
    /// with `args`.
    async fn wall_of_4(binary: &str, args: &[&str], sleep: Duration) -> Duration {
        let sleep_ms = sleep.as_millis().to_string();
        let args = [args, &["--sleep-ms", &sleep_ms]].concat();
        let server = start(binary, &args).await;
        let burst = burst::fire(
            server.endpoint(),
            "/ok-blocking",
            4,
            TIMEOUT,
            Connect::During,
        )
        .await;
        assert_eq!(burst.ok(), 4, "{args:?}: {:?}", burst.errors());
        burst.wall
    }

    block_on(async {
        let sleep = CONCURRENT_SLEEP;
        let wall = wall_of_4(binary, &["--blocking-threads", "2"], sleep).await;
        assert!(
            wall >= sleep.mul_f64(1.6) && wall < sleep.mul_f64(2.9),
            "with 2 pool threads, 4 sleeps took {}, not two rounds of {}",
            in_ms(wall),
            in_ms(sleep)
        );
        let wall = wall_of_4(binary, &[], sleep).await;
        assert!(
            wall < sleep.mul_f64(1.9),
            "with the default pool, 4 sleeps took {}, not one round of {}",
            in_ms(wall),
            in_ms(sleep)
        );
    });
}

/// Sends `signal` once the server has served a request, and expects exit 0 within 5 s.
fn exits_0_promptly_on(binary: &str, signal: Signal) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
        server.signal(signal).expect("the signal is sent");
        let sent = Instant::now();
        let status = tokio::time::timeout(Duration::from_secs(5), server.wait())
            .await
            .expect("the server exits within 5 s")
            .expect("the exit status");
        assert!(status.success(), "{signal} gave {status}");
        assert!(sent.elapsed() < Duration::from_secs(5));
    });
}

pub fn sigterm_exits_0_promptly(binary: &str) {
    exits_0_promptly_on(binary, Signal::SIGTERM);
}

pub fn sigint_exits_0_promptly(binary: &str) {
    exits_0_promptly_on(binary, Signal::SIGINT);
}

pub fn sigterm_lets_the_request_in_flight_finish(binary: &str) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        let endpoint = server.endpoint().clone();
        let in_flight =
            tokio::spawn(async move { get_once(&endpoint, "/ok-await?ms=400", TIMEOUT).await });
        tokio::time::sleep(Duration::from_millis(150)).await;
        server.signal(Signal::SIGTERM).expect("the signal is sent");
        let reply = in_flight
            .await
            .expect("the request task")
            .expect("an answer after SIGTERM");
        assert_eq!(reply.status, 200);
        let status = server.wait().await.expect("the exit status");
        assert!(status.success(), "{status}");
    });
}

/// Writes `raw` bytes to the server on a fresh connection and returns what came back before
/// the server closed the connection or went quiet for 5 s.
fn exchange_raw(endpoint: &Endpoint, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect((endpoint.host.as_str(), endpoint.port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a read timeout");
    // The server may close as soon as it has seen enough: a failed write is an answer too.
    let _ = stream.write_all(raw);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The server answered `raw` with a 4xx or by closing the connection, and still serves.
fn survives_raw(binary: &str, raw: &[u8], what: &str) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        let endpoint = server.endpoint().clone();
        let raw = raw.to_vec();
        let answer = tokio::task::spawn_blocking(move || exchange_raw(&endpoint, &raw))
            .await
            .unwrap();
        assert!(
            answer.is_empty()
                || answer.starts_with("HTTP/1.1 4")
                || answer.starts_with("HTTP/1.0 4"),
            "{what}: answered {answer:?}"
        );
        assert_eq!(
            server.exited(),
            None,
            "{what} stopped the server: {}",
            server.stderr()
        );
        assert_eq!(
            get(server.endpoint(), "/ping").await.status,
            200,
            "after {what}"
        );
    });
}

pub fn malformed_requests_get_an_error_and_serving_goes_on(binary: &str) {
    survives_raw(
        binary,
        b"THIS IS NOT HTTP\r\n\r\n",
        "a malformed request line",
    );
    survives_raw(
        binary,
        b"GET /ping HTTP/1.1\r\nHost localhost\r\n\r\n",
        "a header without a colon",
    );
}

pub fn oversized_headers_get_an_error_and_serving_goes_on(binary: &str) {
    let mut raw = b"GET /ping HTTP/1.1\r\nHost: localhost\r\nX-Big: ".to_vec();
    raw.extend(std::iter::repeat_n(b'a', 1 << 20));
    raw.extend(b"\r\n\r\n");
    survives_raw(binary, &raw, "a 1 MiB header");
}

pub fn binds_loopback_by_default_and_says_so(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(server.endpoint().host, "127.0.0.1");
        // The stderr line comes just before the readiness line; give the reader a moment.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let said = server.stderr().to_string();
        assert!(
            said.contains("bound to 127.0.0.1:") && said.contains("loopback only"),
            "{said}"
        );
    });
}

/// Starts the server with a soft limit of 64 open files, opens more connections than that,
/// closes them, and expects the server to serve again: a failed `accept` (EMFILE) must be a
/// pause, not the end.
pub fn keeps_accepting_after_running_out_of_file_descriptors(binary: &str) {
    block_on(async {
        let script = r#"ulimit -Sn 64 && exec "$0" "$@""#;
        let args = ["-c".to_owned(), script.to_owned(), binary.to_owned()];
        let name = Path::new(binary)
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or(binary);
        let mut server = ServerProcess::start(name, Path::new("/bin/sh"), &args)
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        let endpoint = server.endpoint().clone();
        let flood = (0..120)
            .filter_map(|_| TcpStream::connect((endpoint.host.as_str(), endpoint.port)).ok())
            .collect::<Vec<_>>();
        tokio::time::sleep(Duration::from_millis(500)).await;
        drop(flood);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match get_once(&endpoint, "/ping", Duration::from_secs(2)).await {
                Ok(reply) if reply.status == 200 => break,
                outcome => assert!(
                    Instant::now() < deadline,
                    "no /ping 10 s after the flood: {outcome:?}; {}",
                    server.stderr()
                ),
            }
        }
        assert_eq!(server.exited(), None);
    });
}

/// A stall: a `/bad` sleep of this long is one poll that holds the reactor thread three times
/// the default threshold (100 ms).
const STALL: Duration = Duration::from_millis(300);
/// How many `/bad` stalls a check fires at once.
const STALLS: usize = 3;

/// `GET /stalls`, checked to be a 200 in JSON, as text and parsed.
async fn stalls(endpoint: &Endpoint) -> (String, serde_json::Value) {
    let reply = get(endpoint, "/stalls").await;
    assert_json(&reply, 200, "/stalls");
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let body = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    (text, body)
}

/// Fires `n` concurrent requests of `path` and expects every one to succeed.
async fn fire_all(endpoint: &Endpoint, path: &str, n: usize) {
    let burst = burst::fire(endpoint, path, n, TIMEOUT, Connect::During).await;
    assert_eq!(burst.ok(), n, "{path}: {:?}", burst.errors());
}

/// A number field of a `/stalls` body.
fn number(body: &serde_json::Value, field: &str) -> f64 {
    body[field]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {field:?} in {body}"))
}

/// `/stalls` counted no slow poll, at the threshold `threshold_ms`.
fn assert_no_stalls(body: &serde_json::Value, threshold_ms: f64) {
    assert_eq!(number(body, "threshold_ms"), threshold_ms, "{body}");
    assert_eq!(number(body, "slow_polls"), 0.0, "{body}");
    assert_eq!(number(body, "longest_ms"), 0.0, "{body}");
    assert_eq!(body["by_route"], serde_json::json!({}), "{body}");
}

/// Three concurrent `/bad?ms=300` on one reactor thread: three polls of 300 ms, each counted
/// as a slow poll under `GET /bad`. (The FastAPI reference app passes it too; the exact body and
/// the log lines of the Rust servers are the next check's.)
pub fn blocking_polls_are_counted_as_stalls(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        let (_, body) = stalls(server.endpoint()).await;
        assert_eq!(number(&body, "threshold_ms"), 100.0, "{body}");
        assert_eq!(number(&body, "slow_polls"), STALLS as f64, "{body}");
        let longest = number(&body, "longest_ms");
        assert!(longest >= STALL.as_secs_f64() * 1e3 * 0.8, "{body}");
        let by_route = body["by_route"].as_object().expect("a by_route object");
        let routes: Vec<&str> = by_route.keys().map(String::as_str).collect();
        assert_eq!(routes, ["GET /bad"], "{body}");
        let bad = &by_route["GET /bad"];
        assert_eq!(number(bad, "slow_polls"), STALLS as f64, "{body}");
        assert_eq!(number(bad, "longest_ms"), longest, "{body}");
    });
}

/// The same stalls as the Rust servers report them: the body exactly as reactor-watch writes
/// it, under the label `GET /bad`, and on stderr a line for each while it still runs (the
/// watchdog's) and once it returned.
pub fn stalls_are_logged_while_they_run_under_their_route(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        let (text, body) = stalls(server.endpoint()).await;
        let longest = number(&body, "longest_ms");
        let expected = format!(
            r#"{{"threshold_ms":100,"slow_polls":{STALLS},"longest_ms":{longest},"by_route":{{"GET /bad":{{"slow_polls":{STALLS},"longest_ms":{longest}}}}},"still_running_reports":"#
        );
        assert!(text.starts_with(&expected), "{text}\nexpected {expected}…");
        let still_running = body["still_running_reports"].as_u64().expect("a count");
        assert!((1..=STALLS as u64).contains(&still_running), "{text}");

        // stderr is read by a task of ours: give it a moment to catch up.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let lines = server.stderr().lines();
            let running = lines
                .iter()
                .filter(|line| line.ends_with(" in GET /bad (still running)"))
                .count();
            let held = lines
                .iter()
                .filter(|line| line.starts_with("GET /bad held reactor thread "))
                .count();
            if running as u64 == still_running && held == STALLS {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{running} still-running and {held} held lines for {text}{}",
                server.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// Slow requests are no stalls when their polls are short: ten `/ok-await` and ten
/// `/ok-blocking` of 300 ms each hold the reactor thread for microseconds at a time.
pub fn slow_requests_with_short_polls_are_no_stalls(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        for route in ["/ok-await", "/ok-blocking"] {
            let path = format!("{route}?ms={}", STALL.as_millis());
            fire_all(server.endpoint(), &path, 10).await;
        }
        assert_no_stalls(&stalls(server.endpoint()).await.1, 100.0);
    });
}

/// A poll that blocks for less than the threshold is not counted: `/bad?ms=20` at 100 ms.
pub fn a_block_under_the_threshold_is_no_stall(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/bad?ms=20").await.status, 200);
        assert_no_stalls(&stalls(server.endpoint()).await.1, 100.0);
    });
}

/// `--stall-ms 0`: the same stalls as above are neither counted nor logged.
pub fn stall_ms_0_turns_the_detector_off(binary: &str) {
    block_on(async {
        let server = start(binary, &["--stall-ms", "0"]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        assert_no_stalls(&stalls(server.endpoint()).await.1, 0.0);
        let lines = server.stderr().lines();
        assert!(
            !lines
                .iter()
                .any(|line| line.contains("(still running)") || line.contains(" held reactor ")),
            "{lines:?}"
        );
    });
}

/// `GET /events` on `connection`, checked to be a 200 in JSON with exactly the contract's
/// fields (`route` only where a handler ran), and parsed.
async fn events(connection: &mut Connection) -> EventsBody {
    let reply = connection
        .send(Method::GET, "/events")
        .await
        .expect("an answer to /events");
    assert_json(&reply, 200, "/events");
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    let keys = |value: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = value
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {text}"))
            .keys()
            .cloned()
            .collect();
        keys.sort_unstable();
        keys
    };
    assert_eq!(keys(&value), ["events", "recording"], "{text}");
    let body: EventsBody =
        serde_json::from_value(value.clone()).unwrap_or_else(|error| panic!("{error}: {text}"));
    for (event, value) in body.events.iter().zip(value["events"].as_array().unwrap()) {
        let expected: &[&str] = match event.what {
            What::Accepted => &["at_us", "peer", "what"],
            What::Started | What::Ended => &["at_us", "peer", "route", "what"],
        };
        assert_eq!(keys(value), expected, "{text}");
    }
    body
}

/// The events of the client at port `peer`, as (what, route).
fn events_of(body: &EventsBody, peer: u16) -> Vec<(What, Option<&str>)> {
    body.events
        .iter()
        .filter(|event| event.peer == peer)
        .map(|event| (event.what, event.route.as_deref()))
        .collect()
}

/// With `--events`: two requests on one keep-alive connection and one on another, then
/// `GET /events` on a third. Each connection's `accepted` comes before its handlers, each
/// `started` before its `ended` (at least the 10 ms sleep later), in the order of the clock,
/// under the paths requested; `/events` itself is not recorded, and a second call finds
/// nothing of the first's.
pub fn events_record_accepts_and_handlers_in_order_and_drain(binary: &str) {
    block_on(async {
        let server = start(binary, &["--events"]).await;
        let endpoint = server.endpoint();
        let mut watcher = Connection::open(endpoint).await.expect("a connection");
        let mut first = Connection::open(endpoint).await.expect("a connection");
        let mut second = Connection::open(endpoint).await.expect("a connection");
        for (on_first, path) in [
            (true, "/bad?ms=10"),
            (true, "/ok-await?ms=10"),
            (false, "/ok-def?ms=10"),
        ] {
            let connection = if on_first { &mut first } else { &mut second };
            let reply = connection.send(Method::GET, path).await.expect("an answer");
            assert_json(&reply, 200, path);
        }
        assert!(!first.is_closed(), "the first connection was kept alive");

        let body = events(&mut watcher).await;
        assert!(body.recording, "{body:?}");
        assert_eq!(
            events_of(&body, first.local_port()),
            [
                (What::Accepted, None),
                (What::Started, Some("/bad")),
                (What::Ended, Some("/bad")),
                (What::Started, Some("/ok-await")),
                (What::Ended, Some("/ok-await")),
            ],
            "{body:?}"
        );
        assert_eq!(
            events_of(&body, second.local_port()),
            [
                (What::Accepted, None),
                (What::Started, Some("/ok-def")),
                (What::Ended, Some("/ok-def")),
            ],
            "{body:?}"
        );
        assert_eq!(
            events_of(&body, watcher.local_port()),
            [(What::Accepted, None)],
            "/events itself is not recorded: {body:?}"
        );
        assert_eq!(body.events.len(), 9, "nothing else: {body:?}");
        assert!(
            body.events.is_sorted_by_key(|event| event.at_us),
            "not in the order of the clock: {body:?}"
        );
        let at = |peer: u16, what: What, route: &str| -> u64 {
            body.events
                .iter()
                .find(|event| {
                    event.peer == peer
                        && event.what == what
                        && event.route.as_deref() == Some(route)
                })
                .map(|event: &Event| event.at_us)
                .expect("the event")
        };
        let slept = at(first.local_port(), What::Ended, "/bad")
            - at(first.local_port(), What::Started, "/bad");
        assert!(slept >= 9_000, "/bad?ms=10 ran for {slept} µs: {body:?}");

        let again = events(&mut watcher).await;
        assert_eq!(
            again,
            EventsBody {
                recording: true,
                events: Vec::new()
            },
            "the first call drained the record"
        );
        // A new connection is recorded after the drain, and only it.
        let mut late = Connection::open(endpoint).await.expect("a connection");
        assert_eq!(
            late.send(Method::GET, "/ping").await.expect("/ping").status,
            200
        );
        let body = events(&mut watcher).await;
        let seen: Vec<(u16, What, Option<&str>)> = body
            .events
            .iter()
            .map(|event| (event.peer, event.what, event.route.as_deref()))
            .collect();
        let late = late.local_port();
        assert_eq!(
            seen,
            [
                (late, What::Accepted, None),
                (late, What::Started, Some("/ping")),
                (late, What::Ended, Some("/ping")),
            ],
            "{body:?}"
        );
    });
}

/// Without `--events`, `/events` answers that nothing is recorded, whatever was served.
pub fn events_are_off_without_the_flag(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/bad?ms=10").await.status, 200);
        for _ in 0..2 {
            let reply = get(server.endpoint(), "/events").await;
            assert_json(&reply, 200, "/events");
            assert_eq!(
                String::from_utf8_lossy(&reply.body),
                r#"{"recording":false,"events":[]}"#
            );
        }
    });
}
