//! What the pages say the race showed ([`crate::experiments::claims`]).

use demo_contract::variant::{
    ACTIX_KEEP_ALIVE_60S, ACTIX_REQUEST_TIMEOUT_OFF, TOKIO_EVENT_INTERVAL_1,
};

use super::arrival::PingAt;
use super::{GotIn, RaceReport, Tally};
use crate::experiments::claims::{Claim, Kind, REUSE_PORT, Shortfall, expect, present};
use crate::measure::burst::Connect;
use crate::measure::target::{REFERENCES, SERVERS};
use crate::report::text::connect_text;

/// The race with its defaults, and at the comparison's sleep.
const RACE: &str = "results/race";
const RACE_500MS: &str = "results/race-500ms";
/// The race at two and at four reactor threads.
const TWO_THREADS: &str = "results/per-core/threads-2";
const FOUR_THREADS: &str = "results/per-core/threads-4";

/// The Rust servers whose pinger mostly got in somewhere with the connections arriving during
/// the burst, and waited for all with them accepted first.
const ONE_PER_ACCEPT: [&str; 2] = ["demo-axum-compio", "demo-hyper-monoio"];

pub const CLAIMS: &[Claim<RaceReport>] = &[
    Claim {
        name: "race.uvloop-mostly-gets-in-between-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| most(race, "fastapi-uvloop", Connect::During, GotIn::Interleaved),
    },
    Claim {
        name: "race.compio-and-monoio-mostly-get-in-somewhere-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            (ONE_PER_ACCEPT.iter())
                .try_for_each(|server| most(race, server, Connect::During, GotIn::Partly))
        },
    },
    Claim {
        name: "race.others-mostly-wait-for-all-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            all_measured(
                &stacks(race),
                during(race).map(|tally| tally.target.as_str()),
            )?;
            let mut others = (race.tallies.iter())
                .filter(|tally| tally.connect == Connect::During)
                .filter(|tally| tally.target != "fastapi-uvloop")
                .filter(|tally| !ONE_PER_ACCEPT.contains(&tally.target.as_str()));
            others.try_for_each(|tally| {
                most(race, &tally.target, Connect::During, GotIn::WaitedForAll)
            })
        },
    },
    Claim {
        name: "race.uvloop-mostly-waits-for-all-when-accepted-first",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| most(race, "fastapi-uvloop", Connect::Before, GotIn::WaitedForAll),
    },
    Claim {
        name: "race.compio-and-monoio-mostly-wait-for-all-when-accepted-first",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            (ONE_PER_ACCEPT.iter())
                .try_for_each(|server| most(race, server, Connect::Before, GotIn::WaitedForAll))
        },
    },
    Claim {
        name: "race.most-open-loop-pings-over-the-timeout-at-500ms",
        dir: RACE_500MS,
        kind: Kind::Observed,
        holds: |race| {
            every_stack_tallied(race)?;
            let over = |tally: &Tally| {
                let (over, of) = (tally.open_over_timeout, tally.open_scheduled);
                expect(2 * over > of, || {
                    format!("{}: {over} of {of}", tally.target)
                })
            };
            race.tallies.iter().try_for_each(over)
        },
    },
    Claim {
        name: "race.a-ping-the-server-holds-before-the-requests-is-handled-first",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let first = [PingAt::BeforeBurst, PingAt::AfterAccepts];
            handled_after(race, &first, |_| 0)
        },
    },
    Claim {
        name: "race.a-ping-in-the-first-sleep-waits-at-most-for-those-taken-in-before",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let trials =
                (race.arrival_trials.iter()).filter(|trial| trial.point == PingAt::InFirstSleep);
            let order: Vec<_> = trials
                .filter_map(|trial| Some((trial, trial.order?)))
                .collect();
            let ordered = order.iter().map(|(trial, _)| trial.target.as_str());
            all_measured(&stacks(race), ordered)?;
            order.into_iter().try_for_each(|(trial, order)| {
                let (after, queued) = (order.handled_after, order.accepted_before_first);
                expect(after <= queued, || {
                    format!("{}: handled after {after}, {queued} taken in", trial.target)
                })
            })
        },
    },
    Claim {
        name: "race.a-ping-accepted-last-or-on-its-own-connection-waits-for-all",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let last = [PingAt::InFirstSleepAcceptedFirst, PingAt::OwnConnection];
            handled_after(race, &last, |race| race.plan.arrival.concurrency)
        },
    },
    Claim {
        name: "race.event-interval-1-does-not-flip-the-outcome",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let (stock, variant) = variant(race, TOKIO_EVENT_INTERVAL_1.label)?;
            let waited = |tally: &Tally| 2 * tally.waited_for_all > tally.trials - tally.failed;
            expect(waited(stock) && waited(variant), || {
                format!("{}; {}", outcomes(stock), outcomes(variant))
            })
        },
    },
    Claim {
        name: "race.actix-408s-stop-with-the-request-timeout-off",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let (stock, variant) = variant(race, ACTIX_REQUEST_TIMEOUT_OFF.label)?;
            let (before, after) = (failed(stock, "status 408"), failed(variant, "status 408"));
            expect(before > 0 && after == 0, || {
                format!("408s: {before} on the stock server, {after} with the timeout off")
            })
        },
    },
    Claim {
        name: "race.actix-keeps-every-connection-with-a-60s-keep-alive",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let (_, variant) = variant(race, ACTIX_KEEP_ALIVE_60S.label)?;
            let reset = failed(variant, "reset");
            expect(reset == 0 && variant.failed == 0, || {
                format!("{reset} pings on reset connections; {}", outcomes(variant))
            })
        },
    },
    Claim {
        name: "race.actix-stock-resets-at-most-a-few-beside-the-keep-alive-test",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let (stock, _) = variant(race, ACTIX_KEEP_ALIVE_60S.label)?;
            let reset = failed(stock, "reset");
            expect(reset <= 3, || {
                format!("{reset} pings on a reset connection")
            })
        },
    },
    Claim {
        name: "race.at-two-threads-the-pinger-rarely-waits-for-all-and-only-on-reuse-port",
        dir: TWO_THREADS,
        kind: Kind::Observed,
        holds: |race| {
            every_stack_tallied(race)?;
            for tally in &race.tallies {
                let reuse_port = REUSE_PORT.contains(&tally.target.as_str());
                let upheld = tally.failed == 0
                    && (tally.waited_for_all == 0 || reuse_port && tally.waited_for_all <= 2);
                expect(upheld, || outcomes(tally))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "race.at-four-threads-the-pinger-gets-in-between-in-a-quarter-or-more-everywhere",
        dir: FOUR_THREADS,
        kind: Kind::Observed,
        holds: |race| {
            every_stack_tallied(race)?;
            race.tallies.iter().try_for_each(|tally| {
                let quarter = 4 * tally.interleaved >= tally.trials - tally.failed;
                expect(quarter && tally.trials > tally.failed, || outcomes(tally))
            })
        },
    },
    Claim {
        name: "race.reuse-port-bursts-last-longest-at-two-threads",
        dir: TWO_THREADS,
        kind: Kind::Observed,
        holds: reuse_port_bursts_last_longest,
    },
    Claim {
        name: "race.reuse-port-bursts-last-longest-at-four-threads",
        dir: FOUR_THREADS,
        kind: Kind::Observed,
        holds: reuse_port_bursts_last_longest,
    },
    Claim {
        name: "race.compio-and-monoio-median-waits-shortest-of-rust-at-one-thread",
        dir: RACE,
        kind: Kind::Observed,
        holds: apart_median_waits_shortest_of_rust,
    },
    Claim {
        name: "race.compio-and-monoio-median-waits-shortest-of-rust-at-two-threads",
        dir: TWO_THREADS,
        kind: Kind::Observed,
        holds: apart_median_waits_shortest_of_rust,
    },
    Claim {
        name: "race.taken-in-before-the-first-sleep-by-stack",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race| {
            let counts = |target: &str| -> Vec<usize> {
                let points = [PingAt::AfterWrites, PingAt::InFirstSleep];
                let trials = (race.arrival_trials.iter())
                    .filter(|trial| trial.target == target && points.contains(&trial.point));
                trials
                    .filter_map(|trial| Some(trial.order?.accepted_before_first))
                    .collect()
            };
            // A stack with no ordered trial at these points was not measured: not a count.
            let counts = |target: &str| -> Result<Vec<usize>, Shortfall> {
                let taken = counts(target);
                let what = || format!("no trial of {target} with the server's order");
                present((!taken.is_empty()).then_some(taken), what)
            };
            let n = race.plan.arrival.concurrency;
            let few = |count: &usize| *count <= 3;
            let uvloop = counts("fastapi-uvloop")?;
            let mostly_few = 2 * uvloop.iter().filter(|count| few(count)).count() > uvloop.len();
            expect(mostly_few, || format!("uvloop {uvloop:?}"))?;
            let asyncio = counts("fastapi-asyncio")?;
            expect(
                !asyncio.is_empty() && asyncio.iter().all(|count| *count == n),
                || format!("asyncio {asyncio:?}"),
            )?;
            for server in ["demo-axum-compio", "demo-actix", "demo-ntex"] {
                let taken = counts(server)?;
                let varies = taken.iter().min() != taken.iter().max();
                expect(varies, || format!("{server} {taken:?}"))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "race.at-500ms-actix-alone-fails-pings-with-408s-and-closed-connections",
        dir: RACE_500MS,
        kind: Kind::Observed,
        holds: |race| {
            every_stack_tallied(race)?;
            for tally in &race.tallies {
                let total: usize = tally.open_errors.iter().map(|error| error.count).sum();
                let explained = failed(tally, "status 408")
                    + failed(tally, "reset")
                    + failed(tally, "closed before message completed");
                let upheld = match tally.target == "demo-actix" {
                    true => total > 0 && explained == total,
                    false => total == 0,
                };
                expect(upheld, || {
                    format!("{}: {:?}", tally.target, tally.open_errors)
                })?;
            }
            Ok(())
        },
    },
];

/// With the connections arriving during the burst, compio's and monoio's median slowest waits
/// were each shorter than every other Rust stack's.
fn apart_median_waits_shortest_of_rust(race: &RaceReport) -> Result<(), Shortfall> {
    let median = |tally: &Tally| tally.slowest_sleeps.map(|[_, median, _]| median);
    all_measured(&SERVERS, during(race).map(|tally| tally.target.as_str()))?;
    let rust = during(race).filter(|tally| tally.target.starts_with("demo-"));
    let (apart, others): (Vec<&Tally>, Vec<&Tally>) =
        rust.partition(|tally| ONE_PER_ACCEPT.contains(&tally.target.as_str()));
    let shortest_other = (others.iter())
        .map(|tally| median(tally).unwrap_or(0.0))
        .reduce(f64::min);
    let shortest_other = present(shortest_other, || "no other Rust stack".to_owned())?;
    for tally in apart {
        let own = median(tally);
        expect(own.is_some_and(|own| own < shortest_other), || {
            format!(
                "{} {own:?} sleeps, others from {shortest_other:.2}",
                tally.target
            )
        })?;
    }
    Ok(())
}

/// Each stack that deals its connections with `SO_REUSEPORT` counted more open-loop pings in
/// its trials than every other stack: their bursts lasted longest.
fn reuse_port_bursts_last_longest(race: &RaceReport) -> Result<(), Shortfall> {
    every_stack_tallied(race)?;
    let (reuse_port, others): (Vec<&Tally>, Vec<&Tally>) =
        (race.tallies.iter()).partition(|tally| REUSE_PORT.contains(&tally.target.as_str()));
    let most_of_others = others.iter().map(|tally| tally.open_scheduled).max();
    let most_of_others = present(most_of_others, || {
        "no stack without SO_REUSEPORT".to_owned()
    })?;
    for tally in reuse_port {
        expect(tally.open_scheduled > most_of_others, || {
            format!(
                "{} {}, others up to {most_of_others}",
                tally.target, tally.open_scheduled
            )
        })?;
    }
    Ok(())
}

/// The stock server's tally and the variant `label`'s, from the variant's test.
fn variant<'a>(race: &'a RaceReport, label: &str) -> Result<(&'a Tally, &'a Tally), Shortfall> {
    let test = (race.variants.iter()).find(|test| test.variant == label);
    let tallies = test.map(|test| &test.tallies[..]);
    match tallies {
        Some([stock, variant]) => Ok((stock, variant)),
        _ => Err(Shortfall::Lacks(format!("no test of {label}"))),
    }
}

/// How many of `tally`'s open-loop pings failed with a reason that holds `reason`.
fn failed(tally: &Tally, reason: &str) -> usize {
    let errors = tally.open_errors.iter();
    let matching = errors.filter(|error| error.reason.contains(reason));
    matching.map(|error| error.count).sum()
}

/// The tally of `target`'s trials connecting as `connect`.
fn tally<'a>(race: &'a RaceReport, target: &str, connect: Connect) -> Result<&'a Tally, Shortfall> {
    let found = (race.tallies.iter()).find(|t| t.target == target && t.connect == connect);
    present(found, || {
        format!("no trials of {target}, {}", connect_text(connect))
    })
}

/// How many of `tally`'s trials came out as `outcome`.
fn count(tally: &Tally, outcome: GotIn) -> usize {
    match outcome {
        GotIn::Interleaved => tally.interleaved,
        GotIn::Partly => tally.partly,
        GotIn::WaitedForAll => tally.waited_for_all,
        GotIn::Failed => tally.failed,
    }
}

/// What `tally`'s trials came out as, in a few words.
fn outcomes(tally: &Tally) -> String {
    format!(
        "{}, {}: {} of {} trials got in between every sleep, {} somewhere, {} waited for all, \
         {} failed",
        tally.target,
        connect_text(tally.connect),
        tally.interleaved,
        tally.trials,
        tally.partly,
        tally.waited_for_all,
        tally.failed
    )
}

/// More than half of the trials with a verdict came out as `outcome`.
fn most(
    race: &RaceReport,
    target: &str,
    connect: Connect,
    outcome: GotIn,
) -> Result<(), Shortfall> {
    let tally = tally(race, target, connect)?;
    let judged = tally.trials - tally.failed;
    expect(2 * count(tally, outcome) > judged, || outcomes(tally))
}

/// In every trial of the arrival's `points`, on every target, the ping was handled after
/// `ended(race)` burst requests had ended, as the server recorded.
fn handled_after(
    race: &RaceReport,
    points: &[PingAt],
    ended: fn(&RaceReport) -> usize,
) -> Result<(), Shortfall> {
    for point in points {
        let at_point = (race.arrival.iter()).filter(|tally| tally.point == *point);
        all_measured(&stacks(race), at_point.map(|tally| tally.target.as_str()))
            .map_err(|why| why.context(&format!("{point:?}")))?;
    }
    let tallies = (race.arrival.iter()).filter(|tally| points.contains(&tally.point));
    for tally in tallies {
        let all = [(ended(race), tally.trials)];
        expect(tally.failed == 0 && tally.handled_after == all, || {
            format!(
                "{}, {:?}: handled after (requests ended, trials) {:?}, {} failed",
                tally.target, tally.point, tally.handled_after, tally.failed
            )
        })?;
    }
    Ok(())
}

/// The stacks the run was to measure: every Rust server, and the FastAPI apps at one reactor
/// thread, the only count they run at.
fn stacks(race: &RaceReport) -> Vec<&'static str> {
    let fastapi = REFERENCES.iter().filter(|_| race.plan.threads == 1);
    SERVERS.iter().chain(fastapi).copied().collect()
}

/// Every one of `stacks` is among the targets `measured`; else the run lacks those left out
/// (python3 absent, say), and a claim over every stack cannot be read.
fn all_measured<'a>(
    stacks: &[&str],
    measured: impl Iterator<Item = &'a str>,
) -> Result<(), Shortfall> {
    let measured: Vec<&str> = measured.collect();
    let left_out: Vec<&&str> = (stacks.iter())
        .filter(|stack| !measured.contains(stack))
        .collect();
    match left_out.is_empty() {
        true => Ok(()),
        false => Err(Shortfall::Lacks(format!(
            "not measured in this run: {left_out:?}"
        ))),
    }
}

/// Every stack of the run has its trials tallied; else the run lacks those left out.
fn every_stack_tallied(race: &RaceReport) -> Result<(), Shortfall> {
    all_measured(
        &stacks(race),
        race.tallies.iter().map(|tally| tally.target.as_str()),
    )
}

/// The tallies of the trials connecting during the burst.
fn during(race: &RaceReport) -> impl Iterator<Item = &Tally> {
    (race.tallies.iter()).filter(|tally| tally.connect == Connect::During)
}
