//! What the pages say tokio's own answers showed ([`crate::experiments::claims`]).

use super::TokioReport;
use super::tally::{self, JoinTally, SpawnTally};
use crate::experiments::claims::{Claim, expect};

const TOKIO: &str = "results/tokio";

/// What tokio's panic says when `block_in_place` runs on `current_thread`
/// (`runtime/scheduler/multi_thread/worker.rs`): the reason the tokio servers' 500 gives.
pub const CURRENT_THREAD_PANIC: &str =
    "can call blocking only when running on the multi-threaded runtime";

pub const CLAIMS: &[Claim<TokioReport>] = &[
    Claim {
        name: "tokio.block-in-place-is-a-500-on-current-thread",
        dir: TOKIO,
        holds: |report| {
            let servers = report
                .refusals
                .iter()
                .map(|r| &r.target)
                .collect::<Vec<_>>();
            expect(servers.len() >= 2, || {
                format!("refusals of {servers:?} only")
            })?;
            report.refusals.iter().try_for_each(|refusal| {
                let told = refusal.status == 500 && refusal.error.contains(CURRENT_THREAD_PANIC);
                expect(told, || format!("{refusal:?}"))
            })
        },
    },
    Claim {
        name: "tokio.the-timer-beside-block-in-place-waits-in-every-trial",
        dir: TOKIO,
        holds: |report| {
            let tallies = tally::joins(report);
            each_join(&tallies, "/join-block-in-place", |t| t.held == t.trials)?;
            each_join(&tallies, "/join-spawn-blocking", |t| t.held == 0)
        },
    },
    Claim {
        name: "tokio.the-lifo-slot-holds-the-spawned-task-in-every-trial",
        dir: TOKIO,
        holds: |report| {
            each_spawn(report, true, |t| {
                t.waited == t.trials && t.same_thread == t.trials
            })
        },
    },
    Claim {
        name: "tokio.with-the-slot-off-no-spawned-task-waits",
        dir: TOKIO,
        holds: |report| each_spawn(report, false, |t| t.waited == 0 && t.same_thread == 0),
    },
];

/// Every tally of `route` (at least one, of at least one trial) is `holds`.
fn each_join(
    tallies: &[JoinTally],
    route: &str,
    holds: fn(&JoinTally) -> bool,
) -> Result<(), String> {
    let of_route: Vec<&JoinTally> = tallies.iter().filter(|t| t.route == route).collect();
    expect(!of_route.is_empty(), || format!("no trials of {route}"))?;
    of_route
        .into_iter()
        .try_for_each(|tally| expect(tally.trials > 0 && holds(tally), || format!("{tally:?}")))
}

/// The LIFO setting `lifo_slot` was run at every worker count of the plan, at least two, and
/// every one of its tallies is `holds`.
fn each_spawn(
    report: &TokioReport,
    lifo_slot: bool,
    holds: fn(&SpawnTally) -> bool,
) -> Result<(), String> {
    let tallies: Vec<SpawnTally> = (tally::spawns(report).into_iter())
        .filter(|tally| tally.lifo_slot == lifo_slot)
        .collect();
    let workers: Vec<usize> = tallies.iter().map(|tally| tally.workers).collect();
    expect(workers.len() >= 2 && workers == report.plan.workers, || {
        format!(
            "run at {workers:?} workers, planned at {:?}",
            report.plan.workers
        )
    })?;
    tallies
        .iter()
        .try_for_each(|tally| expect(tally.trials >= 20 && holds(tally), || format!("{tally:?}")))
}
