//! What the pages say the sweeps showed ([`crate::experiments::claims`]).

use super::{Point, SweepReport};
use crate::experiments::claims::{
    Claim, Kind, Shortfall, expect, present, stacks_of, taken_from_the_server_ms,
};

/// The concurrency sweep, and the bounded pools' staircase.
const SWEEP: &str = "results/sweep";
const STAIRCASE: &str = "results/staircase";
const SCALE: &str = "results/scale";

pub const CLAIMS: &[Claim<SweepReport>] = &[
    Claim {
        name: "sweep.bad-grows-one-sleep-per-request",
        dir: SWEEP,
        kind: Kind::Physics,
        holds: |sweep, _on| {
            every_point(sweep, "/bad", |sweep, point| {
                // Each reactor thread runs its requests' sleeps one after another: at least
                // ⌈N / threads⌉ sleeps, at most all N (one sleep per request at one thread).
                // The growth shows from N = 10; a lone request's fixed costs beside its sleep
                // (its round trip, the timer's wake-up) are not a share of one sleep.
                let sleep = sweep.plan.sleep_ms as f64;
                let fewest = point.n.div_ceil(sweep.plan.threads.max(1)) as f64 * sleep;
                let most = point.n as f64 * sleep;
                point.n < 10 || (0.95 * fewest..1.25 * most).contains(&point.wall_ms)
            })
        },
    },
    Claim {
        name: "sweep.ok-await-takes-a-tenth-of-serial-sleeps-from-a-thousand",
        dir: SWEEP,
        kind: Kind::Observed,
        holds: |sweep, _on| {
            some_point(sweep, "/ok-await", "at N ≥ 1000", |point| point.n >= 1000)?;
            every_point(sweep, "/ok-await", |sweep, point| {
                let serial = point.n as f64 * sweep.plan.sleep_ms as f64;
                point.n < 1000 || point.wall_ms < 0.1 * serial
            })
        },
    },
    Claim {
        name: "sweep.ok-blocking-pays-for-its-pool-at-the-largest-n",
        dir: SWEEP,
        kind: Kind::Observed,
        holds: |sweep, _on| {
            let largest = sweep.points.iter().map(|point| point.n).max().unwrap_or(0);
            let at_largest = |route: &str, target: &str| {
                let found = (sweep.points.iter())
                    .find(|p| p.route == route && p.target == target && p.n == largest);
                present(found, || {
                    format!("no {route} point of {target} at N = {largest}")
                })
            };
            let blocking = sweep
                .points
                .iter()
                .filter(|point| point.route == "/ok-blocking");
            let targets = blocking
                .filter(|point| point.n == largest)
                .map(|point| &point.target);
            some_point(sweep, "/ok-blocking", "at the largest N", |point| {
                point.n == largest
            })?;
            let (mut seen, mut paid) = (0, Vec::new());
            for target in targets {
                seen += 1;
                let target = target.as_str();
                let (pool, timer) = (
                    at_largest("/ok-blocking", target)?,
                    at_largest("/ok-await", target)?,
                );
                paid.push((target, pool.wall_ms > timer.wall_ms));
            }
            let most = 2 * paid.iter().filter(|(_, paid)| *paid).count() > seen;
            expect(most, || {
                format!("at N = {largest}, slower offloaded: {paid:?}")
            })
        },
    },
    Claim {
        name: "sweep.none-but-ntex-fails-and-ntex-only-at-ten-thousand-with-408s",
        dir: SWEEP,
        kind: Kind::Observed,
        holds: |sweep, _on| {
            let failed = sweep.points.iter().filter(|point| point.err > 0);
            for point in failed {
                let only_408 = point
                    .errors
                    .iter()
                    .all(|error| error.reason == "status 408");
                expect(
                    point.target == "demo-ntex" && point.n == 10_000 && only_408,
                    || {
                        format!(
                            "{} {} at N = {}: {:?}",
                            point.target, point.route, point.n, point.errors
                        )
                    },
                )?;
            }
            Ok(())
        },
    },
    Claim {
        name: "sweep.every-rust-stack-walks-the-staircase",
        dir: STAIRCASE,
        kind: Kind::Physics,
        holds: |sweep, _on| {
            let pool = sweep
                .plan
                .server
                .blocking_threads
                .ok_or(Shortfall::Lacks("no pool size set".to_owned()))?;
            let measured: Vec<&str> = (sweep.points.iter())
                .map(|point| point.target.as_str())
                .collect();
            for server in stacks_of(&sweep.environment, &measured) {
                some_point(sweep, "/ok-def", &format!("on {server}"), |point| {
                    point.target == server
                })?;
            }
            // A pool of K threads runs the N sleeps K at a time: ⌈N / K⌉ rounds of one sleep,
            // K and the sleep as the plan recorded them; later by at most the core time the
            // point recorded going elsewhere (the client's, the hypervisor's steal).
            every_point(sweep, "/ok-def", |sweep, point| {
                let pool = sweep.plan.server.blocking_threads.unwrap_or(1);
                let rounds = point.n.div_ceil(pool) as f64 * sweep.plan.sleep_ms as f64;
                let elsewhere = taken_from_the_server_ms(&point.confounders);
                !point.target.starts_with("demo-")
                    || (rounds..1.15 * rounds + elsewhere).contains(&point.wall_ms)
            })
            .map_err(|why| why.context(&format!("a pool of {pool}")))
        },
    },
    Claim {
        name: "sweep.scale-ok-await-at-ten-thousand-well-above-a-sleep-little-steal-on-most",
        dir: SCALE,
        kind: Kind::Observed,
        holds: |sweep, _on| {
            some_point(sweep, "/ok-await", "at N ≥ 10,000", |point| {
                point.n >= 10_000
            })?;
            every_point(sweep, "/ok-await", |sweep, point| {
                let cpu = point.confounders.cpu.as_ref();
                let busier = cpu.is_some_and(|cpu| {
                    (cpu.server_ms).is_some_and(|server| cpu.client_ms <= 1.2 * server)
                });
                point.n < 10_000 || (point.wall_ms > 2.0 * sweep.plan.sleep_ms as f64 && busier)
            })?;
            let largest = (sweep.points.iter())
                .filter(|point| point.route == "/ok-await" && point.n >= 10_000);
            let (little, all) = largest.fold((0, 0), |(little, all), point| {
                let steal = point.confounders.cpu.and_then(|cpu| cpu.steal_ms);
                let under = steal.is_some_and(|steal| steal <= point.wall_ms / 10.0);
                (little + usize::from(under), all + 1)
            });
            expect(2 * little > all, || {
                format!("steal under a tenth of the wall on {little} of {all} points")
            })
        },
    },
];

/// The run measured a point of `route` that is `such` (`what` says which); else it lacks what
/// the claim reads.
fn some_point(
    sweep: &SweepReport,
    route: &str,
    what: &str,
    such: impl Fn(&Point) -> bool,
) -> Result<(), Shortfall> {
    let found = (sweep.points.iter()).find(|point| point.route == route && such(point));
    present(found, || format!("no point of {route} {what}")).map(|_| ())
}

/// Every point of `route` (at least one, else the run lacks it) is `holds`.
fn every_point(
    sweep: &SweepReport,
    route: &str,
    holds: fn(&SweepReport, &Point) -> bool,
) -> Result<(), Shortfall> {
    let points: Vec<&Point> = sweep
        .points
        .iter()
        .filter(|point| point.route == route)
        .collect();
    present(points.first(), || format!("no point of {route}"))?;
    for point in points {
        expect(holds(sweep, point), || {
            format!(
                "{} {route} at N = {}: {:.0} ms, {} failed",
                point.target, point.n, point.wall_ms, point.err
            )
        })?;
    }
    Ok(())
}
