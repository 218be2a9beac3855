//! The sleeping routes: `/bad` serialises a burst on the reactor, `/ok-blocking` and
//! `/ok-await` run it concurrently; `--threads` and `--blocking-threads` size the reactor and
//! the offload pool. Bounds are ratios to the case's own sleep.

use std::time::Duration;

use burst_meter::burst::{self, Burst, Connect};
use burst_meter::http::Endpoint;
use demo_contract::{Pong, Work};

use crate::harness::*;

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

/// `--describe` prints the crate's own `stack.toml`, which names this binary and a handler
/// for each route every stack serves.
pub fn describes_itself_as_its_stack_toml(binary: &str) {
    let output = std::process::Command::new(binary)
        .arg("--describe")
        .output()
        .expect("the server runs");
    assert!(output.status.success(), "--describe failed: {output:?}");
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    let name = std::path::Path::new(binary)
        .file_name()
        .expect("a file name");
    let file = stacks::workspace()
        .join("crates")
        .join(name)
        .join(stacks::FILE);
    let text = std::fs::read_to_string(&file).expect("the crate's stack.toml");
    assert_eq!(printed, text, "--describe is not {}", file.display());
    let stack = stacks::Stack::parse(&printed).expect("a description");
    assert_eq!(*stack.name, *name);
    use demo_contract::Route;
    for route in [Route::Ping, Route::Bad, Route::OkBlocking, Route::OkAwait] {
        assert!(
            stack.handlers.contains_key(route.path()),
            "no handler for {} in {}",
            route.path(),
            file.display()
        );
    }
    listens_with_the_described_backlog(binary, &stack);
    stops_no_sooner_than_its_described_delay(binary, &stack);
}

/// A server whose description says its framework sleeps on its way out (`stop_delay_ms`,
/// which the main job's floor counts) takes at least that long to exit after SIGTERM, and
/// exits cleanly.
fn stops_no_sooner_than_its_described_delay(binary: &str, stack: &stacks::Stack) {
    let Some(delay_ms) = stack.stop_delay_ms else {
        return;
    };
    block_on(async {
        let server = start(binary, &[]).await;
        let asked = std::time::Instant::now();
        let status = server.stop().await.expect("the server stops");
        let took = asked.elapsed();
        assert!(status.success(), "{} exited with {status}", stack.name);
        assert!(
            took >= Duration::from_millis(delay_ms),
            "{} stopped in {took:?}, sooner than its described {delay_ms} ms",
            stack.name
        );
    });
}

/// The server's listener has the backlog its description says (`listen_backlog`, where its
/// framework binds with one of its own), or the contract's, as the kernel caps it
/// (`net.core.somaxconn`).
fn listens_with_the_described_backlog(binary: &str, stack: &stacks::Stack) {
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn");
    let Some(somaxconn) = somaxconn
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
    else {
        return skip(
            "listens_with_the_described_backlog",
            "no net.core.somaxconn to read",
        );
    };
    let own = demo_contract::LISTEN_BACKLOG as u32;
    let expected = stack.listen_backlog.unwrap_or(own).min(somaxconn);
    block_on(async {
        let server = start(binary, &[]).await;
        let state = burst_meter::kernel::listeners(server.endpoint().port);
        let backlog = state.map(|state| state.backlog);
        assert_eq!(backlog, Some(expected), "{}'s listen backlog", stack.name);
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
            per_thread(&work).len(),
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
pub(crate) fn assert_concurrent(binary: &str, path: &str) -> Vec<Work> {
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
    assert_eq!(per_thread(&work).len(), 1, "{work:?}");
}

/// With `--threads 2`, `/ping` says two reactor threads, and a burst of `/bad` sleeps on both:
/// each thread sleeps its own requests in turn, so the burst takes as long as the busier
/// thread's sleeps, one after another. How the requests are spread is the runtime's (compio's
/// kernel hashes each connection to one thread's listener; tokio's workers steal), so it is
/// read from the threads the server recorded, never assumed: the wall is at least the busier
/// thread's count × sleep and under one sleep more. A server running one thread fails here,
/// as its bursts never use two.
pub fn threads_flag_sets_the_reactor_threads(binary: &str) {
    block_on(async {
        let sleep = SHORT_SLEEP;
        let sleep_ms = sleep.as_millis().to_string();
        let server = start(binary, &["--threads", "2", "--sleep-ms", &sleep_ms]).await;
        let pong: Pong = get(server.endpoint(), "/ping")
            .await
            .json()
            .expect("a /ping body");
        assert_eq!(pong.reactor_threads, 2);
        let (burst, work) = burst_on_two_threads(server.endpoint()).await;
        assert!(work.iter().all(|work| work.on_reactor), "{work:?}");
        let busiest = *per_thread(&work).values().max().expect("a work body");
        let (floor, ceiling) = (sleep * busiest as u32, sleep * (busiest as u32 + 1));
        assert!(
            burst.wall >= floor && burst.wall < ceiling,
            "{N} × /bad on 2 reactor threads, {busiest} on the busier one, took {}, not \
             between {} and {}: {:?}",
            in_ms(burst.wall),
            in_ms(floor),
            in_ms(ceiling),
            per_thread(&work)
        );
    });
}

/// Bursts of [`N`] `/bad` on fresh connections until one is spread over two threads (the
/// spread is the kernel's or the runtime's: one in a hundred and twenty-eight lands wholly on
/// one of compio's two listeners), at most [`SPREAD_TRIES`] times. Returns that burst and its
/// work bodies; panics if none used two threads.
async fn burst_on_two_threads(endpoint: &Endpoint) -> (Burst, Vec<Work>) {
    let mut spreads = Vec::new();
    for _ in 0..SPREAD_TRIES {
        let burst = burst::fire(endpoint, "/bad", N, TIMEOUT, Connect::During).await;
        assert_eq!(burst.ok(), N, "{:?}", burst.errors());
        let work = burst.work();
        let spread = per_thread(&work);
        if spread.len() >= 2 {
            return (burst, work);
        }
        spreads.push(spread);
    }
    panic!(
        "{SPREAD_TRIES} bursts of {N} × /bad on --threads 2 each ran on one thread \
         (requests per thread id: {spreads:?})"
    )
}

/// How many bursts [`burst_on_two_threads`] fires before it calls the server one-threaded.
const SPREAD_TRIES: usize = 5;

/// With `--blocking-threads 2`, 4 concurrent `/ok-blocking` sleeps run in two rounds of two;
/// without the flag, in one round (every default pool holds far more than 4 threads).
pub fn blocking_threads_flag_sizes_the_offload_pool(binary: &str) {
    /// The wall time of 4 concurrent `/ok-blocking`, each sleeping `sleep`, on a server started
    /// with `args`, after a first such burst: a pool starts its threads as work comes (the
    /// FastAPI app's too), which is no part of its size.
    async fn wall_of_4(binary: &str, args: &[&str], sleep: Duration) -> Duration {
        let sleep_ms = sleep.as_millis().to_string();
        let args = [args, &["--sleep-ms", &sleep_ms]].concat();
        let server = start(binary, &args).await;
        let mut wall = Duration::ZERO;
        for _warm_up_then_measured in 0..2 {
            let burst = burst::fire(
                server.endpoint(),
                "/ok-blocking",
                4,
                TIMEOUT,
                Connect::During,
            )
            .await;
            assert_eq!(burst.ok(), 4, "{args:?}: {:?}", burst.errors());
            wall = burst.wall;
        }
        wall
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
