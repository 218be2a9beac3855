//! The CPU routes: [`CPU_WORK`] of CPU time per request, [`CPU_N`] at once. Serialised
//! takes at least 0.8 × N × work; a `/ping` into the burst waits at least half a unit of work
//! behind a held reactor, and less than the rest of the first unit beside a free one.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::PoisonError;
use std::time::Duration;

use burst_meter::http::Reply;
use demo_contract::variant::{self, runs_in};
use demo_contract::{CpuWork, IoWork, Route, Work};

use crate::harness::*;

/// CPU routes compute this much CPU time per request in their checks: short, so that a
/// serialised burst stays quick, and long against the noise of two shared cores (on a
/// virtual machine with steal time, a `/ping` beside two busy pool threads was seen to wait
/// 30 ms for its turn on a core: half a unit of work must stay well above that).
pub(crate) const CPU_WORK: Duration = Duration::from_millis(100);
/// Requests per CPU burst: twice the cores of the machine the suite is written for (the pool's
/// check fires twice the cores of the machine it runs on).
pub(crate) const CPU_N: usize = 4;
/// When the `/ping` goes out, into a CPU burst: inside the first unit of work.
pub(crate) const CPU_PING_AFTER: Duration = Duration::from_millis(20);

/// What a burst of a CPU route showed.
pub(crate) struct CpuBurst {
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
pub(crate) fn cpu_burst(binary: &str, path: &str) -> CpuBurst {
    cpu_burst_with(binary, path, CPU_N, CPU_WORK, &[])
}

/// [`cpu_burst`] of `n` requests of `work` each, on a server started with the arguments
/// `variant` added (`--variant NAME`, or none).
pub(crate) fn cpu_burst_with(
    binary: &str,
    path: &str,
    n: usize,
    work: Duration,
    variant: &[&str],
) -> CpuBurst {
    // CPU work measures the cores: two CPU checks of one test binary side by side would each
    // find half of them, and their pings would wait for each other's work.
    let _cores = CORES.lock().unwrap_or_else(PoisonError::into_inner);
    block_on(async {
        let asked = work.as_millis().to_string();
        let server = start(binary, &[&["--sleep-ms", &asked], variant].concat()).await;
        // Warmed up first: the FastAPI app's first answers cost it milliseconds of CPU more,
        // which the work would stretch into a slow ping that says nothing of the reactor.
        for warm_up in ["/ping".to_owned(), format!("{path}?ms=0")] {
            assert_eq!(
                get(server.endpoint(), &warm_up).await.status,
                200,
                "{warm_up}"
            );
        }
        let (burst, ping) = burst_and_ping(server.endpoint(), path, n, CPU_PING_AFTER).await;
        let bodies: Vec<CpuWork> = burst
            .replies
            .iter()
            .flatten()
            .filter_map(Reply::json::<CpuWork>)
            .collect();
        assert_eq!(bodies.len(), n, "{path}: every answer is a CPU work body");
        let asked_ms = work.as_secs_f64() * 1e3;
        for body in &bodies {
            assert_eq!(body.work.route, path, "{body:?}");
            assert_eq!(body.work.slept_ms, work.as_millis() as u64, "{body:?}");
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
            work: bodies,
            ping,
        }
    })
}

/// How many CPU work bodies ran on each thread ([`per_thread`]).
pub(crate) fn cpu_threads(work: &[CpuWork]) -> BTreeMap<u64, usize> {
    per_thread(work.iter().map(|body| &body.work))
}

/// A `/ping` sent [`CPU_PING_AFTER`] into a burst of units of `unit` answered before the
/// first unit could have ended: the reactor was free (or freed every ~1 ms) while the work
/// went on. A held reactor keeps the ping at least until that unit ends, `unit` −
/// [`CPU_PING_AFTER`] later; the bound is 0.9 × that, which leaves a free reactor's ping
/// room to wait for a core (on two cores shared with the work and a busy loop, tens of ms).
pub(crate) fn assert_ping_not_held(path: &str, ping: Duration, unit: Duration) {
    let held_at_least = unit - CPU_PING_AFTER;
    assert!(
        ping < held_at_least.mul_f64(0.9),
        "/ping during {path} took {}, not under 0.9 × the {} a held reactor makes it wait",
        in_ms(ping),
        in_ms(held_at_least)
    );
}

/// A body that says where its handler's work ran: the CPU routes' and the hidden blockers'.
pub(crate) trait Ran: Debug {
    fn work(&self) -> &Work;
}

impl Ran for CpuWork {
    fn work(&self) -> &Work {
        &self.work
    }
}

impl Ran for IoWork {
    fn work(&self) -> &Work {
        &self.work
    }
}

/// A burst of [`CPU_N`] requests of `path` served one after another on the reactor: it lasted
/// at least `floor` (`floor_is` says what that is), every handler ran on the reactor, and the
/// `/ping` sent [`CPU_PING_AFTER`] into the first unit of work (`unit` long) waited at least
/// half of one, the rest of that unit.
pub(crate) fn assert_serialised_on_reactor(
    path: &str,
    (wall, floor, floor_is): (Duration, Duration, &str),
    work: &[impl Ran],
    ping: Duration,
    unit: Duration,
) {
    assert!(
        wall >= floor,
        "{path} took {}, less than {floor_is}",
        in_ms(wall)
    );
    assert!(
        work.iter().all(|body| body.work().on_reactor),
        "{path} ran off the reactor: {work:?}"
    );
    assert!(
        ping >= unit / 2,
        "/ping during {path} took only {} (one unit of work: {})",
        in_ms(ping),
        in_ms(unit)
    );
}

pub fn bad_cpu_serialises_on_the_reactor(binary: &str) {
    let path = Route::BadCpu.path();
    let burst = cpu_burst(binary, path);
    let floor = CPU_WORK.mul_f64(0.8 * CPU_N as f64);
    let floor_is = format!("0.8 × {CPU_N} × {}", in_ms(CPU_WORK));
    let wall = (burst.wall, floor, floor_is.as_str());
    assert_serialised_on_reactor(path, wall, &burst.work, burst.ping, CPU_WORK);
    assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
}

pub fn ok_cpu_blocking_leaves_the_reactor_free(binary: &str) {
    let path = Route::OkCpuBlocking.path();
    let burst = cpu_burst(binary, path);
    assert_ping_not_held(path, burst.ping, CPU_WORK);
    assert!(
        burst.work.iter().all(|body| !body.work.on_reactor),
        "{path} computed on the reactor: {:?}",
        burst.work
    );
}

pub fn ok_cpu_yield_shares_the_reactor(binary: &str) {
    let path = Route::OkCpuYield.path();
    let burst = cpu_burst(binary, path);
    assert_ping_not_held(path, burst.ping, CPU_WORK);
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
/// ntex: the variant its `stack.toml` tags `cpu-yield`) polls io_uring after every task
/// or two, and the ping gets in.
pub fn ok_cpu_yield_waits_for_the_event_interval(binary: &str) {
    let path = Route::OkCpuYield.path();
    let server = server_name(binary);
    let variant = variant::of_server(server)
        .find(|variant| variant.runs_in(runs_in::CPU_YIELD))
        .unwrap_or_else(|| panic!("no event_interval variant for {server}"));
    let stock = cpu_burst(binary, path);
    assert!(
        stock.ping >= CPU_WORK / 2,
        "/ping during {path} took only {} on the stock event interval",
        in_ms(stock.ping)
    );
    let flipped = cpu_burst_with(binary, path, CPU_N, CPU_WORK, &variant.args());
    assert_ping_not_held(
        &format!("{path} ({})", variant.label),
        flipped.ping,
        CPU_WORK,
    );
    for burst in [&stock, &flipped] {
        assert!(
            burst.work.iter().all(|body| body.work.on_reactor),
            "{:?}",
            burst.work
        );
        assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
    }
}

/// On glommio and monoio, a `/ping` into a burst of `/ok-cpu-yield` waits as on a held
/// reactor, past half a unit of work ([`CPU_WORK`], 100 ms). glommio's handler asks
/// `glommio::yield_if_needed` after every slice, which yields only once the task queue has run
/// past its preemption budget (100 ms by default) or latency-sensitive I/O waits; a new request
/// is neither. monoio's handler yields after every slice (`yield_now`), and the ping still
/// waits for the whole burst (the results' CPU page measures it).
pub fn ok_cpu_yield_does_not_let_a_ping_in(binary: &str) {
    let path = Route::OkCpuYield.path();
    let burst = cpu_burst(binary, path);
    assert!(
        burst.ping >= CPU_WORK / 2,
        "/ping during {path} took only {}: it got in between the slices",
        in_ms(burst.ping)
    );
    assert!(
        burst.work.iter().all(|body| body.work.on_reactor),
        "{:?}",
        burst.work
    );
    assert_eq!(cpu_threads(&burst.work).len(), 1, "{:?}", burst.work);
}

/// The pool's unit of work: twice the cores' units at once leave the reactor thread a share
/// of a core only (the FastAPI app's loop, four processes computing beside it on two cores
/// and a busy loop, answered a `/ping` in 82 ms), so its units are longer than [`CPU_WORK`]
/// for the `/ping` beside them to tell a free reactor from a held one.
const POOL_WORK: Duration = Duration::from_millis(200);

/// The pool runs one unit of work per core at a time. Twice the cores' requests at once:
/// no more distinct pool threads than cores computed them (a pool twice the cores would use
/// every one of its threads), and the burst took at least two units (× 0.8), however the
/// reactor is set up.
pub fn ok_cpu_pool_runs_one_per_core_off_the_reactor(binary: &str) {
    let path = Route::OkCpuPool.path();
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let burst = cpu_burst_with(binary, path, 2 * cores, POOL_WORK, &[]);
    assert_ping_not_held(path, burst.ping, POOL_WORK);
    let threads = cpu_threads(&burst.work);
    assert!(
        threads.len() <= cores,
        "{} × {path} ran on {} threads, more than the {cores} cores: {threads:?}",
        2 * cores,
        threads.len()
    );
    assert!(
        burst.wall >= POOL_WORK.mul_f64(0.8 * 2.0),
        "{} × {path} on {cores} cores took {}, less than 0.8 × 2 × {}",
        2 * cores,
        in_ms(burst.wall),
        in_ms(POOL_WORK)
    );
    assert!(
        burst.work.iter().all(|body| !body.work.on_reactor),
        "{path} computed on the reactor: {:?}",
        burst.work
    );
}
