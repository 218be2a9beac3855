//! What the pages say of the comparison at its defaults (`results/`): what every stack does with the three routes.

use super::*;

pub const CLAIMS: &[Claim<Report>] = &[
    Claim {
        name: "comparison.eleven-stacks",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            let targets = report.targets();
            let stacks: Vec<&str> = (rust_stacks(report).into_iter())
                .chain(burst_meter::target::references().iter().copied())
                .collect();
            let left_out: Vec<&&str> = stacks.iter().filter(|s| !targets.contains(s)).collect();
            if !left_out.is_empty() {
                return Err(Shortfall::Lacks(format!(
                    "left out of this run: {left_out:?}"
                )));
            }
            expect(targets.len() == stacks.len(), || {
                format!("{} stacks: {targets:?}", targets.len())
            })
        },
    },
    Claim {
        name: "comparison.bad-takes-about-ten-sleeps-on-every-stack",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/bad", |case| {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let n = case.n.div_ceil(case.reactor_threads) as f64;
                case.verdict == Verdict::Serialises && (0.9 * n..1.1 * n).contains(&sleeps)
            })
        },
    },
    Claim {
        name: "comparison.both-fixes-take-about-one-sleep-on-every-stack",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            let about_one = |case: &Case| {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                case.verdict == Verdict::Concurrent && sleeps < 1.5
            };
            every_fix(report, about_one)
        },
    },
    Claim {
        name: "comparison.the-fixes-keep-the-probe-under-a-tenth-of-a-sleep",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            let quick = |case: &Case| {
                let p99 = case.open_loop.as_ref().and_then(|open| open.p99_ms);
                p99.is_some_and(|p99| p99 < case.sleep_ms as f64 / 10.0)
            };
            every_fix(report, quick)
        },
    },
    Claim {
        name: "comparison.every-bad-sleep-ran-on-the-reactor",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| every_case(report, "/bad", |case| case.on_reactor == Some(true)),
    },
    Claim {
        name: "comparison.one-slow-poll-per-bad-request",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/bad", |case| {
                let seen = case.stalls.as_ref().map(|stalls| stalls.slow_polls);
                seen == Some(case.n as u64)
            })
        },
    },
    Claim {
        name: "comparison.the-closed-loop-gets-few-samples-during-bad",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/bad", |case| {
                let samples = case.closed_loop.as_ref().map(|ping| ping.samples);
                let sent = case.open_loop.as_ref().map(|open| open.scheduled);
                samples
                    .zip(sent)
                    .is_some_and(|(samples, sent)| 2 * samples < sent)
            })
        },
    },
    Claim {
        name: "comparison.during-bad-the-probe-waits-up-to-the-whole-burst",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            // A ping that failed waited until it failed (actix-web's 408s).
            every_case(report, "/bad", |case| {
                let open = case.open_loop.as_ref();
                let max = open.and_then(|open| open.max_ms);
                let failed = open.is_some_and(|open| open.errors > 0);
                failed || max.is_some_and(|max| max > 0.9 * case.wall_ms)
            })
        },
    },
    Claim {
        name: "comparison.only-the-named-fail-open-loop-pings",
        dir: COMPARISON,
        kind: Kind::Observed,
        holds: |report, on| {
            let named = named_on(on, 1)?;
            let failed = (report.cases.iter())
                .filter(|case| case.open_loop.as_ref().is_some_and(|open| open.errors > 0));
            for case in failed {
                expect(named.contains(&case.target.as_str()), || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.ok-blocking-sleeps-ran-off-the-reactor",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/ok-blocking", |case| {
                case.on_reactor == Some(false)
            })
        },
    },
    Claim {
        name: "comparison.no-slow-poll-during-the-fixes",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report, _on| {
            let none = |case: &Case| case.stalls.as_ref().is_some_and(|s| s.slow_polls == 0);
            every_fix(report, none)
        },
    },
    Claim {
        name: "comparison.ok-await-runs-furthest-past-one-sleep",
        dir: COMPARISON,
        kind: Kind::Observed,
        holds: |report, on| {
            let past = |target: &str| {
                let case = case(report, target, "/ok-await", 1)?;
                Ok::<_, Shortfall>(case.wall_ms - case.sleep_ms as f64)
            };
            let [furthest] = named_on(on, 1)?[..] else {
                return Err(Shortfall::Lacks("one stack, the furthest".to_owned()));
            };
            let most = past(furthest)?;
            for target in rust_stacks(report)
                .into_iter()
                .filter(|target| *target != furthest)
            {
                let other = past(target)?;
                expect(other < most, || {
                    format!("past one sleep: {furthest} {most:.1} ms, {target} {other:.1} ms")
                })?;
            }
            Ok(())
        },
    },
];
