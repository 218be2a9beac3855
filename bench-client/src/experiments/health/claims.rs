//! What the pages say the health check under a block showed
//! ([`crate::experiments::claims`]).

use std::time::Duration;

use super::HealthReport;
use super::tally::{BLOCKING_ROUTE, ProbeTally};
use super::window::Probed;
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, present, stacks_of};

/// With the period of the servers' health check; and with none, forgetting a stall at once.
const HEALTH: &str = "results/health";
const NO_PERIOD: &str = "results/health/no-period";

/// What `/health` answered to a window's probes during `/bad`: the first probe's answer, then
/// every later one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answered {
    /// Every probe answered 503 naming `GET /bad`.
    AllNamingBad,
    /// The first answered 200, every later one 503 naming `GET /bad`.
    FirstOkThenNamingBad,
    /// Every probe answered 200.
    AllOk,
}

pub const CLAIMS: &[Claim<HealthReport>] = &[
    Claim {
        name: "health.past-the-limit-every-probe-is-a-503-naming-bad",
        dir: HEALTH,
        kind: Kind::Physics,
        holds: |health, _on| answered(health, Landing::PastTheLimit, Answered::AllNamingBad),
    },
    Claim {
        name: "health.before-the-limit-the-first-probe-is-ok-and-the-rest-503s",
        dir: HEALTH,
        kind: Kind::Physics,
        holds: |health, _on| {
            answered(
                health,
                Landing::BeforeTheLimit,
                Answered::FirstOkThenNamingBad,
            )
        },
    },
    Claim {
        name: "health.without-the-period-every-early-probe-is-ok",
        dir: NO_PERIOD,
        kind: Kind::Physics,
        holds: |health, _on| answered(health, Landing::BeforeTheLimit, Answered::AllOk),
    },
    Claim {
        name: "health.no-false-503s",
        dir: HEALTH,
        kind: Kind::Physics,
        holds: |health, _on| {
            // The check fails only for a poll past the limit, which a load that never holds
            // its thread does not run, on any machine.
            let probed = (health.probes.iter()).filter(|tally| tally.route != BLOCKING_ROUTE);
            let mut health_probes = probed
                .clone()
                .filter(|tally| tally.endpoint == Probed::Health);
            present(health_probes.next(), || {
                "no window of a load that never holds its thread".to_owned()
            })?;
            let false_503s: usize = probed.map(ProbeTally::false_unavailable).sum();
            expect(false_503s == 0, || format!("{false_503s} false 503s"))
        },
    },
    Claim {
        name: "health.at-rest-within-half-a-millisecond-of-the-ping",
        dir: HEALTH,
        kind: Kind::Observed,
        holds: |health, _on| {
            let median = |stack: &str, endpoint: Probed| {
                let tally = (health.rest_tallies.iter())
                    .find(|tally| tally.stack == stack && tally.endpoint == endpoint);
                tally.and_then(|tally| tally.median_ms)
            };
            let measured: Vec<&str> = (health.rest_tallies.iter())
                .map(|tally| tally.stack.as_str())
                .collect();
            for stack in stacks_of(&health.environment, &measured) {
                let measured = measured.contains(&stack);
                present(measured.then_some(()), || {
                    format!("{stack}: not measured at rest")
                })?;
            }
            let stacks = health.rest_tallies.iter().map(|tally| tally.stack.as_str());
            for stack in stacks {
                let (ping, probe) = (median(stack, Probed::Ping), median(stack, Probed::Health));
                let (Some(ping), Some(probe)) = (ping, probe) else {
                    return Err(Shortfall::Lacks(format!(
                        "{stack}: no median of /ping or /health at rest"
                    )));
                };
                expect(probe - ping <= 0.5, || {
                    format!("{stack}: /health {probe:.2} ms, /ping {ping:.2} ms")
                })?;
            }
            Ok(())
        },
    },
];

/// Where a window's probes land in a sleep, against the servers' stall limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landing {
    BeforeTheLimit,
    PastTheLimit,
}

/// Every stack's `/health` probes during `/bad`, in the windows landing as `landing`, were
/// answered as `expected`; at least one such window was measured, else the run lacks it.
///
/// With the load's sleeps back to back on the one reactor thread and the probes a whole number
/// of sleeps apart, every probe of a window lands where its first does, `first_probe % sleep`
/// into a sleep (limit, sleep and period as the plan recorded them). Past the limit a poll is
/// running over it: 503. Before it, the first probe of a window finds no stall yet (200), and
/// each later one the stall that ended since the last probe if the period reaches back that
/// far: a 503 with a period of a probe's interval or more, a 200 with one shorter than how
/// far into its sleep the probe lands.
fn answered(health: &HealthReport, landing: Landing, expected: Answered) -> Result<(), Shortfall> {
    let limit = Duration::from_millis(health.plan.stall_ms);
    let sleep = Duration::from_millis(health.plan.sleep_ms);
    let period = Duration::from_millis(health.plan.health_period_ms);
    let every = Duration::from_millis(health.plan.probe_every_ms);
    // Where in its sleep the window's first probe lands.
    let into_sleep = |tally: &ProbeTally| {
        let nanos = health.plan.first_probe(tally.trial).as_nanos() % sleep.as_nanos().max(1);
        Duration::from_nanos(nanos as u64)
    };
    let lands = |tally: &&ProbeTally| {
        let lands_as = match into_sleep(tally) > limit {
            true => Landing::PastTheLimit,
            false => Landing::BeforeTheLimit,
        };
        landing == lands_as
    };
    let windows: Vec<&ProbeTally> = (health.probes.iter())
        .filter(|tally| tally.route == BLOCKING_ROUTE && tally.endpoint == Probed::Health)
        .filter(lands)
        .collect();
    present(windows.first(), || format!("no window {landing:?}"))?;
    let remembered = match expected {
        Answered::AllNamingBad | Answered::FirstOkThenNamingBad => period >= every,
        Answered::AllOk => windows.iter().all(|tally| period < into_sleep(tally)),
    };
    present(remembered.then_some(()), || {
        format!("a health period of {period:?} does not give {expected:?}")
    })?;
    for tally in windows {
        let naming_bad = |n: usize| tally.named == [("GET /bad".to_owned(), n)];
        let (probes, ok, unavailable) = (tally.probes, tally.ok, tally.unavailable);
        let upheld = match expected {
            Answered::AllNamingBad => unavailable == probes && naming_bad(probes),
            Answered::FirstOkThenNamingBad => {
                ok == 1 && unavailable + 1 == probes && naming_bad(probes - 1)
            }
            Answered::AllOk => ok == probes,
        };
        expect(upheld, || {
            format!(
                "{}, window {}: {probes} probes, {ok} answered 200, {unavailable} 503 naming \
                 {:?}, {} timed out, {} failed otherwise",
                tally.stack, tally.trial, tally.named, tally.timed_out, tally.failed
            )
        })?;
    }
    Ok(())
}
