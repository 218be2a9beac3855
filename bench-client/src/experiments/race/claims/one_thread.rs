//! What the pages say of the race at one reactor thread (`results/race/`, `results/race-500ms/`).

use super::*;

pub const CLAIMS: &[Claim<RaceReport>] = &[
    Claim {
        name: "race.mostly-gets-in-between-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            (named_on(on, 1)?.into_iter())
                .try_for_each(|server| most(race, server, Connect::During, GotIn::Interleaved))
        },
    },
    Claim {
        name: "race.mostly-gets-in-somewhere-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            (named_on(on, 1)?.into_iter())
                .try_for_each(|server| most(race, server, Connect::During, GotIn::Partly))
        },
    },
    Claim {
        name: "race.others-mostly-wait-for-all-when-connecting-during",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            // The page names the stacks it said otherwise of.
            let named = named_on(on, 1)?;
            all_measured(
                &stacks(race),
                during(race).map(|tally| tally.target.as_str()),
            )?;
            let mut others = (race.tallies.iter())
                .filter(|tally| tally.connect == Connect::During)
                .filter(|tally| !named.contains(&tally.target.as_str()));
            others.try_for_each(|tally| {
                most(race, &tally.target, Connect::During, GotIn::WaitedForAll)
            })
        },
    },
    Claim {
        name: "race.mostly-waits-for-all-when-accepted-first",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            (named_on(on, 1)?.into_iter())
                .try_for_each(|server| most(race, server, Connect::Before, GotIn::WaitedForAll))
        },
    },
    Claim {
        name: "race.most-open-loop-pings-over-the-timeout-at-500ms",
        dir: RACE_500MS,
        kind: Kind::Observed,
        holds: |race, _on| {
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
        holds: |race, _on| {
            let first = [PingAt::BeforeBurst, PingAt::AfterAccepts];
            handled_after(race, &first, |_| 0, Share::Every)
        },
    },
    Claim {
        name: "race.a-ping-in-the-first-sleep-waits-at-most-for-those-taken-in-before",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            // The page names the stacks where a ping once waited for more, if any.
            let named = named_on(on, 0)?;
            let trials =
                (race.arrival_trials.iter()).filter(|trial| trial.point == PingAt::InFirstSleep);
            let order: Vec<_> = trials
                .filter_map(|trial| Some((trial, trial.order?)))
                .collect();
            let ordered = order.iter().map(|(trial, _)| trial.target.as_str());
            all_measured(&recording_accepts(race), ordered)?;
            let more =
                |(_, order): &(_, ServerOrder)| order.handled_after > order.accepted_before_first;
            for &server in &named {
                let once = (order.iter()).any(|entry| entry.0.target == server && more(entry));
                expect(once, || {
                    format!("{server}: no ping waited for more than it took in")
                })?;
            }
            (order.iter())
                .filter(|(trial, _)| !named.contains(&trial.target.as_str()))
                .try_for_each(|entry @ (trial, order)| {
                    let (after, queued) = (order.handled_after, order.accepted_before_first);
                    expect(!more(entry), || {
                        format!("{}: handled after {after}, {queued} taken in", trial.target)
                    })
                })
        },
    },
    Claim {
        name: "race.a-ping-accepted-last-or-on-its-own-connection-waits-for-all",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, _on| {
            let last = [PingAt::InFirstSleepAcceptedFirst, PingAt::OwnConnection];
            handled_after(
                race,
                &last,
                |race| race.plan.arrival.concurrency,
                Share::Most,
            )
        },
    },
    Claim {
        name: "race.event-interval-1-does-not-flip-the-outcome",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, _on| {
            let (stock, variant) = variant(race, "event-interval-1")?;
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
        holds: |race, _on| {
            let (stock, variant) = variant(race, "request-timeout-off")?;
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
        holds: |race, _on| {
            let (_, variant) = variant(race, "keep-alive-60s")?;
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
        holds: |race, _on| {
            let (stock, _) = variant(race, "keep-alive-60s")?;
            let reset = failed(stock, "reset");
            expect(reset <= 3, || {
                format!("{reset} pings on a reset connection")
            })
        },
    },
    Claim {
        name: "race.median-waits-shortest-of-rust-at-one-thread",
        dir: RACE,
        kind: Kind::Observed,
        holds: apart_median_waits_shortest_of_rust,
    },
    Claim {
        name: "race.mostly-few-taken-in-before-the-first-sleep",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            every_named_taken_in(race, on, |taken| {
                2 * taken.iter().filter(|count| **count <= 3).count() > taken.len()
            })
        },
    },
    Claim {
        name: "race.taken-in-before-the-first-sleep-varies",
        dir: RACE,
        kind: Kind::Observed,
        holds: |race, on| {
            every_named_taken_in(race, on, |taken| taken.iter().min() != taken.iter().max())
        },
    },
    Claim {
        name: "race.at-500ms-alone-fails-pings-with-408s-and-closed-connections",
        dir: RACE_500MS,
        kind: Kind::Observed,
        holds: |race, on| {
            let named = named_on(on, 1)?;
            every_stack_tallied(race)?;
            for tally in &race.tallies {
                let total: usize = tally.open_errors.iter().map(|error| error.count).sum();
                let explained = failed(tally, "status 408")
                    + failed(tally, "reset")
                    + failed(tally, "closed before message completed");
                let upheld = match named.contains(&tally.target.as_str()) {
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

/// Ok if `holds` of the counts [`taken_in`] gives for every stack the page names.
fn every_named_taken_in(
    race: &RaceReport,
    on: &[String],
    holds: impl Fn(&[usize]) -> bool,
) -> Result<(), Shortfall> {
    for server in named_on(on, 1)? {
        let taken = taken_in(race, server)?;
        expect(holds(&taken), || format!("{server} {taken:?}"))?;
    }
    Ok(())
}

/// How many connections `server` had taken in before its first sleep, in each arrival trial
/// with the server's order whose ping came after the writes or in the first sleep; a stack
/// with no such trial was not measured: not a count.
fn taken_in(race: &RaceReport, server: &str) -> Result<Vec<usize>, Shortfall> {
    let points = [PingAt::AfterWrites, PingAt::InFirstSleep];
    let trials = (race.arrival_trials.iter())
        .filter(|trial| trial.target == server && points.contains(&trial.point));
    let taken: Vec<usize> = trials
        .filter_map(|trial| Some(trial.order?.accepted_before_first))
        .collect();
    let what = || format!("no trial of {server} with the server's order");
    present((!taken.is_empty()).then_some(taken), what)
}
