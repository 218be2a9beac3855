//! What the pages say the comparison and its variations showed
//! ([`crate::experiments::claims`]), a file per results folder's family; the helpers they
//! share are here.

use super::Report;
use crate::experiments::claims::{
    Claim, Kind, Shortfall, cores, expect, named_on, present, stacks_of, stacks_on,
    taken_from_the_server_ms,
};
use burst_meter::case::Case;
use burst_meter::stats::Verdict;
#[cfg(doc)]
use burst_meter::stats::percentile;

mod cpu;
mod hidden;
mod threads;
mod work;

/// Every claim of the comparison, a group per file.
pub const GROUPS: &[&[Claim<Report>]] =
    &[work::CLAIMS, threads::CLAIMS, cpu::CLAIMS, hidden::CLAIMS];

/// The awaited file read, which on some stacks holds the reactor all the same.
const FILE_AWAIT: &str = "/ok-file-await";

/// The comparison's run with its defaults, and its variations.
const COMPARISON: &str = "results";
const CPU: &str = "results/cpu";
const THREADS: &str = "results/threads";
const HIDDEN: &str = "results/hidden";
const BLOCK_IN_PLACE: &str = "results/block-in-place";
const MONOIO_POOL: &str = "results/monoio/pool";
const MONOIO_NO_POOL: &str = "results/monoio/no-pool";
const MONOIO_EXECUTE_LOCAL: &str = "results/monoio/execute-local";
const GLOMMIO_ONE_POOL_THREAD: &str = "results/glommio/one-pool-thread";

/// Within a tenth of `expected`.
fn near(measured: f64, expected: f64) -> bool {
    (measured - expected).abs() < 0.1 * expected
}

/// The wall time `case`'s CPU-bound jobs (each `sleep_ms` of work) take on `workers` threads
/// that share `cores` cores: in waves of the workers while each has a core of its own,
/// else all sharing the cores. Workers that fill the cores also wait for the core time the
/// case recorded going elsewhere (the client's, the hypervisor's steal).
fn cpu_wall(case: &Case, workers: usize, cores: usize) -> f64 {
    let job = case.sleep_ms as f64;
    let elsewhere = match workers >= cores {
        true => taken_from_the_server_ms(&case.confounders),
        false => 0.0,
    };
    let work = match workers <= cores {
        true => case.n.div_ceil(workers) as f64 * job,
        false => case.n as f64 * job / cores as f64,
    };
    work + elsewhere / cores as f64
}

/// The rank (from 0) of the median of `n` answers, as [`percentile`] takes it.
fn median_rank(n: usize) -> usize {
    (0.5 * n.saturating_sub(1) as f64).round_ties_even() as usize
}

/// When a case's median request was answered, from the first send.
fn median_answer(case: &Case) -> f64 {
    case.requests.p50_ms.unwrap_or(f64::INFINITY)
}

/// The median request was answered in the last tenth of the burst.
fn at_the_end(case: &Case) -> bool {
    case.requests
        .p50_ms
        .is_some_and(|p50| p50 >= 0.9 * case.wall_ms)
}

/// The Rust stacks of `report`'s run ([`stacks_of`]).
fn rust_stacks(report: &Report) -> Vec<&str> {
    stacks_of(&report.environment, &report.targets())
}

/// Those on `driver`.
fn rust_stacks_on(report: &Report, driver: stacks::Driver) -> Vec<&str> {
    stacks_on(&report.environment, &report.targets(), driver)
}

/// Every Rust stack's case of `route` at one reactor thread is `holds`.
fn rust_cases(
    report: &Report,
    route: &str,
    holds: impl Fn(&Case) -> bool,
) -> Result<(), Shortfall> {
    for server in rust_stacks(report) {
        let case = case(report, server, route, 1)?;
        expect(holds(case), || described(case))?;
    }
    Ok(())
}

/// On every Rust stack at one reactor thread, its cases of `first` and `second` are `holds`.
fn rust_pairs(
    report: &Report,
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    pairs(report, &rust_stacks(report), first, second, holds)
}

/// As [`rust_pairs`], on the FastAPI apps.
fn fastapi_pairs(
    report: &Report,
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    pairs(
        report,
        burst_meter::target::references(),
        first,
        second,
        holds,
    )
}

fn pairs(
    report: &Report,
    targets: &[&str],
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    for target in targets {
        let (one, other) = (
            case(report, target, first, 1)?,
            case(report, target, second, 1)?,
        );
        expect(holds(one, other), || {
            format!("{}; {}", described(one), described(other))
        })?;
    }
    Ok(())
}

/// The run has cases at one reactor thread and at two.
fn at_one_thread_and_two(report: &Report) -> Result<(), Shortfall> {
    for threads in [1, 2] {
        let any = (report.cases.iter()).any(|case| case.reactor_threads == threads);
        expect(any, || format!("no case at {threads} threads"))?;
    }
    Ok(())
}

/// A case's figures that the claims read, in a few words.
fn described(case: &Case) -> String {
    let ping = case.closed_loop.as_ref().and_then(|ping| ping.p50_ms);
    let probe = case.open_loop.as_ref().and_then(|open| open.p50_ms);
    let slow_polls = case.stalls.as_ref().map(|stalls| stalls.slow_polls);
    format!(
        "{} {} at {} threads: {:?}, wall {:.0} ms, median answer {:?} ms, ping p50 {ping:?} \
         ms, probe p50 {probe:?} ms, slow polls {slow_polls:?}",
        case.target,
        case.route,
        case.reactor_threads,
        case.verdict,
        case.wall_ms,
        case.requests.p50_ms
    )
}

/// `target`'s case of `route` at `threads` reactor threads.
fn case<'a>(
    report: &'a Report,
    target: &str,
    route: &str,
    threads: usize,
) -> Result<&'a Case, Shortfall> {
    let found = (report.cases.iter()).find(|case| {
        case.target == target && case.route == route && case.reactor_threads == threads
    });
    present(found, || {
        format!("no case of {target} {route} at {threads} threads")
    })
}

/// Every case of both fixes, `/ok-blocking` and `/ok-await`, is `holds`.
fn every_fix(report: &Report, holds: fn(&Case) -> bool) -> Result<(), Shortfall> {
    ["/ok-blocking", "/ok-await"]
        .into_iter()
        .try_for_each(|route| every_case(report, route, holds))
}

/// Every case of `route` (at least one) is `holds`.
fn every_case(report: &Report, route: &str, holds: fn(&Case) -> bool) -> Result<(), Shortfall> {
    let cases: Vec<&Case> = report
        .cases
        .iter()
        .filter(|case| case.route == route)
        .collect();
    expect(!cases.is_empty(), || format!("no case of {route}"))?;
    for case in cases {
        expect(holds(case), || {
            let (target, verdict, wall) = (&case.target, case.verdict, case.wall_ms);
            let (on_reactor, stalls) = (case.on_reactor, &case.stalls);
            format!(
                "{target} {route}: {verdict:?}, wall {wall:.0} ms, on the reactor {on_reactor:?}, \
                 stalls {stalls:?}"
            )
        })?;
    }
    Ok(())
}

/// The Rust stacks' cases of `report` that `pick` keeps.
fn rust_cases_of(report: &Report, pick: fn(&Case) -> bool) -> impl Iterator<Item = &Case> {
    (report.cases.iter()).filter(move |case| stacks::names().contains(&&*case.target) && pick(case))
}
