//! What the pages say of the thread matrix and the runtimes' own variants (monoio's pool, glommio's pool size, tokio's `block_in_place`).

use super::*;

pub const CLAIMS: &[Claim<Report>] = &[
    Claim {
        name: "comparison.monoio-with-a-pool-ok-blocking-is-concurrent",
        dir: MONOIO_POOL,
        kind: Kind::Physics,
        holds: |report, _on| {
            at_one_thread_and_two(report)?;
            every_case(report, "/ok-blocking", |case| {
                case.verdict == Verdict::Concurrent && case.on_reactor == Some(false)
            })
        },
    },
    Claim {
        name: "comparison.monoio-without-a-pool-every-offload-is-a-500",
        dir: MONOIO_NO_POOL,
        kind: Kind::Physics,
        holds: |report, _on| {
            at_one_thread_and_two(report)?;
            every_case(report, "/ok-blocking", |case| {
                let all_500 = (case.errors.iter()).all(|error| error.reason.contains("500"));
                case.verdict == Verdict::Failed && case.err == case.n && all_500
            })?;
            every_case(report, "/bad", |case| case.verdict == Verdict::Serialises)?;
            every_case(report, "/ok-await", |case| {
                case.verdict == Verdict::Concurrent
            })
        },
    },
    Claim {
        name: "comparison.monoio-execute-local-serialises-like-bad",
        dir: MONOIO_EXECUTE_LOCAL,
        kind: Kind::Physics,
        holds: |report, _on| {
            at_one_thread_and_two(report)?;
            every_case(report, "/ok-blocking", |case| {
                case.verdict == Verdict::Serialises && case.on_reactor == Some(true)
            })
        },
    },
    Claim {
        name: "comparison.glommio-one-pool-thread-serialises-ok-blocking",
        dir: GLOMMIO_ONE_POOL_THREAD,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/ok-blocking", |case| {
                let p99 = case.open_loop.as_ref().and_then(|open| open.p99_ms);
                let quick = p99.is_some_and(|p99| p99 < case.sleep_ms as f64 / 10.0);
                case.verdict == Verdict::Serialises && case.on_reactor == Some(false) && quick
            })
        },
    },
    Claim {
        name: "comparison.block-in-place-takes-about-one-sleep-on-one-worker",
        dir: BLOCK_IN_PLACE,
        kind: Kind::Physics,
        holds: |report, _on| {
            let one_worker = report.cases.iter().filter(|case| case.reactor_threads == 1);
            expect(one_worker.count() > 0, || {
                "no case on one worker".to_owned()
            })?;
            every_case(report, "/ok-block-in-place", |case| {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let p99 = case.open_loop.as_ref().and_then(|open| open.p99_ms);
                let quick = p99.is_some_and(|p99| p99 < case.sleep_ms as f64 / 10.0);
                case.verdict == Verdict::Concurrent && sleeps < 1.5 && quick
            })
        },
    },
    Claim {
        name: "comparison.the-stall-detector-counts-every-block-in-place",
        dir: BLOCK_IN_PLACE,
        kind: Kind::Physics,
        holds: |report, _on| {
            every_case(report, "/ok-block-in-place", |case| {
                let slow = case.stalls.as_ref().map(|stalls| stalls.slow_polls);
                slow.is_some_and(|slow| slow >= case.n as u64)
            })
        },
    },
    Claim {
        name: "comparison.bad-serialises-per-thread",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report, _on| {
            for case in rust_cases_of(report, |case| case.route == "/bad") {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let ideal = case.n.div_ceil(case.reactor_threads) as f64;
                let serial = case.verdict == Verdict::Serialises && sleeps >= 0.98 * ideal;
                expect(serial, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.the-fixes-stay-concurrent-at-every-thread-count",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report, _on| {
            for case in rust_cases_of(report, |case| case.route != "/bad") {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let ideal = case.n.div_ceil(case.reactor_threads) as f64;
                let concurrent = case.verdict == Verdict::Concurrent && sleeps < ideal / 2.0;
                expect(concurrent, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.threads-ok-blocking-took-one-sleep-with-no-slow-poll",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report, on| {
            let named = named_on(on, 1)?;
            let of_named = |case: &&Case| {
                named.contains(&case.target.as_str()) && case.route == "/ok-blocking"
            };
            let cases: Vec<&Case> = report.cases.iter().filter(of_named).collect();
            expect(!cases.is_empty(), || {
                format!("no /ok-blocking case of {named:?}")
            })?;
            for case in cases {
                let polls = case.stalls.as_ref().map_or(0, |stalls| stalls.slow_polls);
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                expect(polls == 0 && sleeps < 1.5, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.threads-four-workers-take-three-sleeps",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report, on| {
            for server in named_on(on, 1)? {
                let case = case(report, server, "/bad", 4)?;
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let rounds = case.n.div_ceil(case.reactor_threads) as f64;
                expect((0.97 * rounds..1.07 * rounds).contains(&sleeps), || {
                    described(case)
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.threads-the-probe-p99-differs-by-stack-during-bad-at-four",
        dir: THREADS,
        kind: Kind::Observed,
        holds: |report, _on| {
            let p99s: Vec<f64> = (report.cases.iter())
                .filter(|case| case.route == "/bad" && case.reactor_threads == 4)
                .filter_map(|case| case.open_loop.as_ref()?.p99_ms)
                .collect();
            let (min, max) = (
                p99s.iter().copied().fold(f64::MAX, f64::min),
                p99s.iter().copied().fold(f64::MIN, f64::max),
            );
            expect(p99s.len() > 1 && max > 1.5 * min, || {
                format!("at 4 threads the probe's p99 ran from {min:.0} to {max:.0} ms")
            })
        },
    },
];
