//! What the pages say the runs at rest showed ([`crate::experiments::claims`]).

use demo_contract::variant::{self, Variant, runs_in};

use super::{RestPoint, RestReport};
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, named_on, present, stacks_of};

const REST: &str = "results/rest";

/// From this pause on, every thread of a server is asleep as the ping arrives.
const ASLEEP_FROM_MS: u64 = 10;

pub const CLAIMS: &[Claim<RestReport>] = &[
    Claim {
        name: "rest.every-stack-answers-a-lone-ping-under-a-millisecond-at-the-median",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            every_stock_server(rest, &rest.plan.pauses_ms)?;
            for point in stock(rest) {
                let p50 = point.closed_loop.p50_ms;
                expect(p50.is_some_and(|p50| p50 < 1.0), || described(point))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.back-to-back-a-ping-wakes-one-thread",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            every_stock_server(rest, &[0])?;
            for point in stock(rest).filter(|point| point.pause_ms == 0) {
                let woken = point.wakeups_per_ping.values();
                let once = woken.clone().filter(|per_ping| **per_ping >= 0.9).count();
                let rarely = woken.filter(|per_ping| **per_ping < 0.3).count();
                expect(
                    once == 1 && once + rarely == point.wakeups_per_ping.len(),
                    || described(point),
                )?;
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.after-a-pause-async-io-stacks-pay-more-than-tokio-on-average",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            let pause = longest_pause(rest)?;
            let mean = |runtime| -> Result<f64, Shortfall> {
                let p50s = p50s(rest, pause, &on_runtimes(rest, runtime)?)?;
                Ok(p50s.iter().sum::<f64>() / p50s.len().max(1) as f64)
            };
            let (async_io, tokio) = (mean(ASYNC_IO)?, mean(TOKIO)?);
            expect(async_io > tokio, || {
                format!(
                    "at {pause} ms: async-io's stacks' mean p50 {async_io:.3} ms, tokio's {tokio:.3} ms"
                )
            })
        },
    },
    Claim {
        name: "rest.one-hop-more-slows-tokio-at-every-pause",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            for pause in &rest.plan.pauses_ms {
                let variant = at_rest("reactor-on-worker")?;
                let stock = p50s(rest, *pause, &[variant.server])?[0];
                let hop = p50s(rest, *pause, &[variant.label])?[0];
                expect(hop > stock, || {
                    format!("at {pause} ms: {hop:.3} ms with the hop, {stock:.3} ms without")
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.back-to-back-the-medians-sit-within-a-tenth-of-a-millisecond",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            every_stock_server(rest, &[0])?;
            let p50s: Vec<f64> = (stock(rest).filter(|point| point.pause_ms == 0))
                .filter_map(|point| point.closed_loop.p50_ms)
                .collect();
            let (min, max) = (
                p50s.iter().copied().fold(f64::MAX, f64::min),
                p50s.iter().copied().fold(f64::MIN, f64::max),
            );
            expect(
                p50s.len() == stock_stacks(rest).len() && max - min < 0.1,
                || format!("medians from {min:.3} to {max:.3} ms"),
            )
        },
    },
    Claim {
        name: "rest.after-a-pause-tokio-wakes-under-two-threads-per-ping",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            for pause in asleep(rest)? {
                for target in on_runtimes(rest, TOKIO)? {
                    let point = point(rest, target, pause)?;
                    let woken: f64 = point.wakeups_per_ping.values().sum();
                    expect(woken < 2.0, || described(point))?;
                }
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.after-a-pause-async-io-wakes-its-thread-several-times-per-ping",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            for pause in asleep(rest)? {
                for target in on_runtimes(rest, ASYNC_IO)? {
                    let point = point(rest, target, pause)?;
                    let async_io = point
                        .wakeups_per_ping
                        .get("async-io")
                        .copied()
                        .unwrap_or(0.0);
                    let executor = point
                        .wakeups_per_ping
                        .iter()
                        .filter(|(thread, _)| *thread != "async-io");
                    let once = executor
                        .map(|(_, per_ping)| *per_ping)
                        .all(|per_ping| per_ping < 1.5);
                    expect(async_io > 2.0 && once, || described(point))?;
                }
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.async-io-wakes-more-at-the-longest-pause-than-the-shortest-yet-below-its-schedule",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            let pauses = rest.plan.pauses_ms.iter().copied();
            let (shortest, longest) = (pauses.clone().min(), pauses.max());
            let (Some(shortest), Some(longest)) = (shortest, longest) else {
                return Err(Shortfall::Lacks("no pause".to_owned()));
            };
            for target in on_runtimes(rest, ASYNC_IO)? {
                let woken = |pause: u64| {
                    let point = point(rest, target, pause)?;
                    let switches = point.wakeups_per_ping.get("async-io").copied();
                    Ok::<_, Shortfall>(switches.unwrap_or(0.0))
                };
                let (least, most) = (woken(shortest)?, woken(longest)?);
                expect(most > least, || {
                    format!("{target}: {least:.2} at {shortest} ms, {most:.2} at {longest} ms")
                })?;
                // The back-off's whole schedule is ten waits, each one switch.
                expect(most < 10.0, || {
                    format!("{target}: {most:.2} switches per ping at {longest} ms")
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "rest.smol-without-its-executor-thread-stays-above-the-named",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, on| {
            let pause = longest_pause(rest)?;
            let slowest = p50s(rest, pause, &named_on(on, 1)?)?
                .into_iter()
                .fold(f64::MIN, f64::max);
            let smol = p50s(rest, pause, &[at_rest("executor-on-main")?.label])?[0];
            expect(smol > slowest, || {
                format!("at {pause} ms: {smol:.3} ms, the named's slowest {slowest:.3} ms")
            })
        },
    },
    Claim {
        name: "rest.the-probes-send-lag-reaches-a-tenth-of-its-p99-somewhere",
        dir: REST,
        kind: Kind::Observed,
        holds: |rest, _on| {
            let open = rest
                .points
                .iter()
                .filter_map(|point| point.open_loop.as_ref());
            let rows: Vec<(f64, f64)> = open
                .filter_map(|open| Some((open.p99_send_lag_ms?, open.p99_ms?)))
                .collect();
            let what = || "no open-loop row with a send lag and a p99".to_owned();
            present((!rows.is_empty()).then_some(()), what)?;
            let reached = rows.iter().any(|(lag, p99)| *lag >= p99 / 10.0);
            expect(reached, || {
                "the send lag stayed under a tenth of the p99 in every row".to_owned()
            })
        },
    },
];

/// The runtimes whose I/O one reactor of tokio's watches, and those whose I/O async-io's
/// thread watches: the stacks are those their descriptions run on ([`on_runtimes`]).
const TOKIO: &[&str] = &["tokio"];
const ASYNC_IO: &[&str] = &["async-std", "smol"];

/// The run's stock stacks that run on one of `runtimes` (each stack's `runtime_name`): at
/// least one, else the run lacks them.
/// The at-rest variant `name`, as the stack that describes it for this experiment gives it.
fn at_rest(name: &str) -> Result<&'static Variant, Shortfall> {
    let described = variant::in_experiment(runs_in::REST, name);
    described.ok_or_else(|| Shortfall::Lacks(format!("no stack describes an at-rest {name}")))
}

fn on_runtimes<'a>(rest: &'a RestReport, runtimes: &[&str]) -> Result<Vec<&'a str>, Shortfall> {
    let on = |target: &&str| {
        stacks::named(target).is_some_and(|stack| runtimes.contains(&stack.runtime_name()))
    };
    let found: Vec<&str> = stock_stacks(rest).into_iter().filter(on).collect();
    let what = || format!("no stack on {}", runtimes.join(" or "));
    present((!found.is_empty()).then_some(found), what)
}

/// `target`'s point at `pause`.
fn point<'a>(rest: &'a RestReport, target: &str, pause: u64) -> Result<&'a RestPoint, Shortfall> {
    let found =
        (rest.points.iter()).find(|point| point.target == target && point.pause_ms == pause);
    present(found, || format!("no point of {target} at {pause} ms"))
}

/// The stacks of the run ([`stacks_of`]).
fn stock_stacks(rest: &RestReport) -> Vec<&str> {
    let measured: Vec<&str> = rest
        .points
        .iter()
        .map(|point| point.target.as_str())
        .collect();
    stacks_of(&rest.environment, &measured)
}

/// The points of the stock servers.
fn stock(rest: &RestReport) -> impl Iterator<Item = &RestPoint> {
    rest.points
        .iter()
        .filter(|point| stacks::names().contains(&&*point.target))
}

/// The pauses at which every thread is asleep as the ping arrives: at least one, else the run
/// lacks them.
fn asleep(rest: &RestReport) -> Result<Vec<u64>, Shortfall> {
    let pauses = rest.plan.pauses_ms.iter().copied();
    let asleep: Vec<u64> = pauses.filter(|pause| *pause >= ASLEEP_FROM_MS).collect();
    let what = || format!("no pause of {ASLEEP_FROM_MS} ms or more");
    present((!asleep.is_empty()).then_some(asleep), what)
}

/// Every stock server has a point at each of `pauses`; else the run lacks it.
fn every_stock_server(rest: &RestReport, pauses: &[u64]) -> Result<(), Shortfall> {
    for pause in pauses {
        for target in stock_stacks(rest) {
            point(rest, target, *pause)?;
        }
    }
    Ok(())
}

/// The longest pause the run made between pings.
fn longest_pause(rest: &RestReport) -> Result<u64, Shortfall> {
    let longest = rest.plan.pauses_ms.iter().copied().max();
    present(longest, || "no pause".to_owned())
}

/// The closed loop's p50 of each of `targets` at `pause`.
fn p50s(rest: &RestReport, pause: u64, targets: &[&str]) -> Result<Vec<f64>, Shortfall> {
    (targets.iter())
        .map(|target| {
            let p50 = point(rest, target, pause)?.closed_loop.p50_ms;
            present(p50, || format!("no p50 of {target} at {pause} ms"))
        })
        .collect()
}

/// A point's figures, in a few words.
fn described(point: &RestPoint) -> String {
    format!(
        "{} at {} ms: p50 {:?} ms, p95 {:?} ms, wake-ups per ping {:?}",
        point.target,
        point.pause_ms,
        point.closed_loop.p50_ms,
        point.closed_loop.p95_ms,
        point.wakeups_per_ping
    )
}
