//! What the pages say the sweeps showed ([`crate::experiments::claims`]).

use super::{Point, SweepReport};
use crate::experiments::claims::{Claim, expect};

/// The concurrency sweep, and the bounded pools' staircase.
const SWEEP: &str = "results/sweep";
const STAIRCASE: &str = "results/staircase";
const SCALE: &str = "results/scale";

pub const CLAIMS: &[Claim<SweepReport>] = &[
    Claim {
        name: "sweep.bad-grows-one-sleep-per-request",
        dir: SWEEP,
        holds: |sweep| {
            every_point(sweep, "/bad", |sweep, point| {
                let serial = point.n as f64 * sweep.plan.sleep_ms as f64;
                (0.95 * serial..1.25 * serial).contains(&point.wall_ms)
            })
        },
    },
    Claim {
        name: "sweep.ok-await-takes-a-tenth-of-serial-sleeps-from-a-thousand",
        dir: SWEEP,
        holds: |sweep| {
            every_point(sweep, "/ok-await", |sweep, point| {
                let serial = point.n as f64 * sweep.plan.sleep_ms as f64;
                point.n < 1000 || point.wall_ms < 0.1 * serial
            })
        },
    },
    Claim {
        name: "sweep.ok-blocking-pays-for-its-pool-at-the-largest-n",
        dir: SWEEP,
        holds: |sweep| {
            let largest = sweep.points.iter().map(|point| point.n).max().unwrap_or(0);
            let at_largest = |route: &str, target: &str| {
                let found = (sweep.points.iter())
                    .find(|p| p.route == route && p.target == target && p.n == largest);
                found.ok_or_else(|| format!("no {route} point of {target} at N = {largest}"))
            };
            let blocking = sweep
                .points
                .iter()
                .filter(|point| point.route == "/ok-blocking");
            let targets = blocking
                .filter(|point| point.n == largest)
                .map(|point| &point.target);
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
        holds: |sweep| {
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
        holds: |sweep| {
            let pool = sweep
                .plan
                .server
                .blocking_threads
                .ok_or("no pool size set")?;
            every_point(sweep, "/ok-def", |sweep, point| {
                let pool = sweep.plan.server.blocking_threads.unwrap_or(1);
                let rounds = point.n.div_ceil(pool) as f64 * sweep.plan.sleep_ms as f64;
                !point.target.starts_with("demo-")
                    || (rounds..1.15 * rounds).contains(&point.wall_ms)
            })
            .map_err(|why| format!("a pool of {pool}: {why}"))
        },
    },
    Claim {
        name: "sweep.scale-ok-await-at-ten-thousand-well-above-a-sleep-with-little-steal",
        dir: SCALE,
        holds: |sweep| {
            every_point(sweep, "/ok-await", |sweep, point| {
                let cpu = point.confounders.cpu.as_ref();
                let busier = cpu.is_some_and(|cpu| {
                    (cpu.server_ms).is_some_and(|server| cpu.client_ms <= 1.2 * server)
                });
                let little_steal = cpu.is_some_and(|cpu| {
                    cpu.steal_ms
                        .is_some_and(|steal| steal <= point.wall_ms / 10.0)
                });
                point.n < 10_000
                    || (point.wall_ms > 2.0 * sweep.plan.sleep_ms as f64 && busier && little_steal)
            })
        },
    },
];

/// Every point of `route` (at least one) is `holds`.
fn every_point(
    sweep: &SweepReport,
    route: &str,
    holds: fn(&SweepReport, &Point) -> bool,
) -> Result<(), String> {
    let points: Vec<&Point> = sweep
        .points
        .iter()
        .filter(|point| point.route == route)
        .collect();
    expect(!points.is_empty(), || format!("no point of {route}"))?;
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
