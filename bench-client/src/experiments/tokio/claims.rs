//! What the pages say tokio's own answers showed ([`crate::experiments::claims`]).

use super::tally::{self, JoinTally, SpawnTally};
use super::{TokioReport, servers};
use demo_contract::CURRENT_THREAD_PANIC;

use crate::experiments::claims::{Claim, Kind, Shortfall, expect, present};

const TOKIO: &str = "results/tokio";

pub const CLAIMS: &[Claim<TokioReport>] = &[
    Claim {
        name: "tokio.block-in-place-is-a-500-on-current-thread",
        dir: TOKIO,
        kind: Kind::Physics,
        holds: |report, _on| {
            // tokio's `block_in_place` panics on `current_thread` whatever the machine, and
            // the servers answer the panic with a 500: every tokio server, both its routes.
            for server in servers() {
                for route in ["/ok-block-in-place", "/join-block-in-place"] {
                    let found = (report.refusals.iter())
                        .find(|refusal| refusal.target == server && refusal.route == route);
                    present(found, || format!("no answer of {server} {route}"))?;
                }
            }
            report.refusals.iter().try_for_each(|refusal| {
                let told = refusal.status == 500 && refusal.error.contains(CURRENT_THREAD_PANIC);
                expect(told, || format!("{refusal:?}"))
            })
        },
    },
    Claim {
        name: "tokio.the-timer-beside-block-in-place-waits-in-every-trial",
        dir: TOKIO,
        kind: Kind::Physics,
        holds: |report, _on| {
            let tallies = tally::joins(report);
            each_join(&tallies, "/join-block-in-place", |t| t.held == t.trials)?;
            each_join(&tallies, "/join-spawn-blocking", |t| t.held == 0)
        },
    },
    Claim {
        name: "tokio.the-lifo-slot-holds-the-spawned-task-in-every-trial",
        dir: TOKIO,
        kind: Kind::Physics,
        holds: |report, _on| {
            each_spawn(report, true, |t| {
                t.waited == t.trials && t.same_thread == t.trials
            })
        },
    },
    Claim {
        name: "tokio.with-the-slot-off-no-spawned-task-waits",
        dir: TOKIO,
        kind: Kind::Physics,
        holds: |report, _on| each_spawn(report, false, |t| t.waited == 0 && t.same_thread == 0),
    },
];

/// Every tally of `route` (at least one, of at least one trial; else the run lacks it) is
/// `holds`. A timer joined with a sleep in one task fires only once the task is polled again:
/// after the sleep under `block_in_place`, on time beside `spawn_blocking`.
fn each_join(
    tallies: &[JoinTally],
    route: &str,
    holds: fn(&JoinTally) -> bool,
) -> Result<(), Shortfall> {
    let of_route: Vec<&JoinTally> = (tallies.iter())
        .filter(|t| t.route == route && t.trials > 0)
        .collect();
    present(of_route.first(), || format!("no trials of {route}"))?;
    of_route
        .into_iter()
        .try_for_each(|tally| expect(holds(tally), || format!("{tally:?}")))
}

/// The LIFO setting `lifo_slot` was run, every planned trial, at every worker count of the plan
/// that leaves a worker idle beside the blocked one (else the run lacks it), and every one of
/// those tallies is `holds`. tokio puts a task spawned on a worker in that worker's LIFO slot,
/// which no idle worker steals; with the slot off, on the run queue, from which an idle worker
/// takes it at once. Neither depends on the machine, only on there being an idle worker.
fn each_spawn(
    report: &TokioReport,
    lifo_slot: bool,
    holds: fn(&SpawnTally) -> bool,
) -> Result<(), Shortfall> {
    let tallies: Vec<SpawnTally> = (tally::spawns(report).into_iter())
        .filter(|tally| tally.lifo_slot == lifo_slot && tally.workers >= 2)
        .collect();
    let planned = (report.plan.workers.iter()).filter(|workers| **workers >= 2);
    present(planned.clone().next(), || {
        format!(
            "no worker count of two or more in {:?}",
            report.plan.workers
        )
    })?;
    for workers in planned {
        let found = (tallies.iter())
            .find(|tally| tally.workers == *workers && tally.trials >= report.plan.trials);
        present(found, || {
            format!("not every trial at {workers} workers, LIFO slot {lifo_slot}")
        })?;
    }
    (tallies.iter()).try_for_each(|tally| expect(holds(tally), || format!("{tally:?}")))
}
