//! What the pages say of the CPU-bound routes (`results/cpu/`): what the cores allow, read from the run's record.

use super::*;
use burst_meter::units::millis;

pub const CLAIMS: &[Claim<Report>] = &[
    Claim {
        name: "comparison.cpu-yield-holds-the-ping",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, on| {
            for server in named_on(on, 1)? {
                let probe = |route| {
                    let case = case(report, server, route, 1)?;
                    let p50 = case.open_loop.as_ref().and_then(|open| open.p50_ms);
                    present(p50, || format!("no probe p50: {}", described(case)))
                };
                let (yielding, held) = (probe("/ok-cpu-yield")?, probe("/bad-cpu")?);
                expect(yielding >= 0.5 * held, || {
                    format!("{server}: probe p50 {yielding:.1} ms, {held:.1} ms during /bad-cpu")
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.a-yield-keeps-the-ping-waiting-longer-on-io-uring",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, _on| {
            let slowest = |servers: &[&str]| -> Result<Vec<(String, f64)>, Shortfall> {
                (servers.iter())
                    .map(|server| -> Result<(String, f64), Shortfall> {
                        let case = case(report, server, "/ok-cpu-yield", 1)?;
                        let max = case.closed_loop.as_ref().and_then(|ping| ping.max_ms);
                        let max = present(max, || format!("{server}: no closed-loop ping"))?;
                        Ok((server.to_string(), max))
                    })
                    .collect()
            };
            let (epoll, uring) = (
                slowest(&rust_stacks_on(report, stacks::Driver::Epoll))?,
                slowest(&rust_stacks_on(report, stacks::Driver::IoUring))?,
            );
            let epoll_max = epoll.iter().map(|(_, ms)| *ms).fold(f64::MIN, f64::max);
            let uring_min = uring.iter().map(|(_, ms)| *ms).fold(f64::MAX, f64::min);
            expect(epoll_max < uring_min, || {
                format!("slowest closed-loop ping, ms: epoll {epoll:?}, io_uring {uring:?}")
            })
        },
    },
    Claim {
        name: "comparison.cpu-offload-takes-what-the-cores-allow-on-any-rust-pool",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            // The blocking pool runs all ten at once, sharing the cores; the pool of one thread
            // per core runs them in waves of the cores.
            let cores = cores(&report.environment)?;
            rust_cases(report, "/ok-cpu-blocking", |case| {
                near(case.wall_ms, cpu_wall(case, case.n, cores))
            })?;
            rust_cases(report, "/ok-cpu-pool", |case| {
                near(case.wall_ms, cpu_wall(case, cores, cores))
            })
        },
    },
    Claim {
        name: "comparison.cpu-pool-answers-the-median-request-sooner",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            rust_pairs(
                report,
                "/ok-cpu-blocking",
                "/ok-cpu-pool",
                |blocking, pool| median_answer(pool) < median_answer(blocking),
            )
        },
    },
    Claim {
        name: "comparison.cpu-blocking-pool-answers-near-the-end",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| rust_cases(report, "/ok-cpu-blocking", at_the_end),
    },
    Claim {
        name: "comparison.cpu-yield-on-epoll-pings-wait-a-round-or-two-and-answers-come-at-the-end",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            for server in rust_stacks_on(report, stacks::Driver::Epoll) {
                let case = case(report, server, "/ok-cpu-yield", 1)?;
                // A round: each of the n requests runs one slice before the ping's task
                // runs again; a request may pass through the run queue more than once.
                let round_ms = case.n as f64 * millis(demo_contract::cpu::SLICE);
                let ping = case.closed_loop.as_ref().and_then(|ping| ping.p50_ms);
                let a_round_or_two = ping.is_some_and(|p50| p50 < 2.5 * round_ms);
                // Ten jobs' time on the one thread, later by at most the core time the case
                // recorded going elsewhere (the client's, the hypervisor's steal), which may
                // all have been taken from that thread's core.
                let jobs = case.n as f64 * case.sleep_ms as f64;
                let elsewhere = taken_from_the_server_ms(&case.confounders);
                let ten_jobs = (0.95 * jobs..1.1 * jobs + elsewhere).contains(&case.wall_ms);
                expect(a_round_or_two && ten_jobs && at_the_end(case), || {
                    format!(
                        "{server}: ping p50 {ping:?} ms (a round {round_ms} ms), wall {:.0} ms",
                        case.wall_ms
                    )
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.cpu-yield-the-first-gets-fewer-pings-through-than-the-second",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, on| {
            let [fewer, more] = named_on(on, 2)?[..] else {
                return Err(Shortfall::Lacks("two stacks, the fewer's first".to_owned()));
            };
            let ntex = case(report, fewer, "/ok-cpu-yield", 1)?;
            let compio = case(report, more, "/ok-cpu-yield", 1)?;
            let (Some(ntex_ping), Some(compio_ping)) = (&ntex.closed_loop, &compio.closed_loop)
            else {
                return Err(Shortfall::Lacks("no closed-loop ping".to_owned()));
            };
            expect(compio_ping.samples > ntex_ping.samples, || {
                format!(
                    "{fewer} {} pings, {more} {} pings",
                    ntex_ping.samples, compio_ping.samples
                )
            })
        },
    },
    Claim {
        name: "comparison.cpu-fastapi-threadpool-takes-as-long-as-the-loop",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            fastapi_pairs(
                report,
                "/bad-cpu",
                "/ok-cpu-blocking",
                |on_loop, threadpool| {
                    (threadpool.wall_ms - on_loop.wall_ms).abs() < 0.1 * on_loop.wall_ms
                },
            )
        },
    },
    Claim {
        name: "comparison.cpu-fastapi-threadpool-holds-the-loop-and-rust-pools-do-not",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, on| {
            // The page names the loops whose debug mode counted slow steps of its own.
            let counted = named_on(on, 1)?;
            fastapi_pairs(
                report,
                "/bad-cpu",
                "/ok-cpu-blocking",
                |on_loop, threadpool| {
                    let slow_polls =
                        |case: &Case| case.stalls.as_ref().map(|stalls| stalls.slow_polls);
                    let probe = |case: &Case| case.open_loop.as_ref().and_then(|open| open.p50_ms);
                    let as_badly = probe(threadpool)
                        .zip(probe(on_loop))
                        .is_some_and(|(pool, on_loop)| pool >= on_loop / 2.0);
                    let named = counted.contains(&threadpool.target.as_str());
                    as_badly && (!named || slow_polls(threadpool).is_some_and(|polls| polls > 0))
                },
            )?;
            rust_cases(report, "/ok-cpu-blocking", |case| {
                case.stalls
                    .as_ref()
                    .is_some_and(|stalls| stalls.slow_polls == 0)
            })
        },
    },
    Claim {
        name: "comparison.cpu-fastapi-process-pool-uses-the-cores",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            // One worker process per core: the ten jobs take their waves on the cores.
            let cores = cores(&report.environment)?;
            fastapi_pairs(report, "/bad-cpu", "/ok-cpu-pool", |on_loop, processes| {
                let probe = processes.open_loop.as_ref().and_then(|open| open.p50_ms);
                let waves = processes.n.div_ceil(cores) as f64 / processes.n as f64;
                // Python's workers start and pickle: a wider margin than the Rust pools'.
                let expected = waves * on_loop.wall_ms;
                let near = (processes.wall_ms - expected).abs() < 0.15 * expected;
                near && probe.is_some_and(|p50| p50 < 10.0)
            })
        },
    },
    Claim {
        name: "comparison.cpu-both-rust-pools-finish-near-the-cores-and-pings-get-through",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            let cores = cores(&report.environment)?;
            let near_the_cores = |case: &Case, workers: usize| {
                let probe = case.open_loop.as_ref().and_then(|open| open.p50_ms);
                let allowed = cpu_wall(case, workers, cores);
                case.wall_ms < 1.1 * allowed && probe.is_some_and(|p50| p50 < 10.0)
            };
            rust_cases(report, "/ok-cpu-blocking", |case| {
                near_the_cores(case, case.n)
            })?;
            rust_cases(report, "/ok-cpu-pool", |case| near_the_cores(case, cores))
        },
    },
    Claim {
        name: "comparison.cpu-yield-takes-as-long-as-bad-cpu",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            rust_pairs(report, "/bad-cpu", "/ok-cpu-yield", |on_loop, yielding| {
                (yielding.wall_ms - on_loop.wall_ms).abs() < 0.1 * on_loop.wall_ms
            })
        },
    },
    Claim {
        name: "comparison.cpu-pool-answers-the-median-near-halfway",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, _on| {
            // A pool of one thread per core answers in waves of the cores: the median request
            // in the wave that holds it.
            let cores = cores(&report.environment)?;
            rust_cases(report, "/ok-cpu-pool", |case| {
                let share = median_answer(case) / case.wall_ms;
                let median = median_rank(case.n) + 1;
                let expected = median.div_ceil(cores) as f64 / case.n.div_ceil(cores) as f64;
                (share - expected).abs() < 0.1
            })
        },
    },
    Claim {
        name: "comparison.cpu-two-threads-use-the-cores-on-epoll-and-the-named",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report, on| {
            let cores = cores(&report.environment)?;
            let servers =
                (rust_stacks_on(report, stacks::Driver::Epoll).into_iter()).chain(named_on(on, 0)?);
            for server in servers {
                for route in ["/bad-cpu", "/ok-cpu-yield"] {
                    let case = case(report, server, route, 2)?;
                    let allowed = cpu_wall(case, case.reactor_threads, cores);
                    expect(case.wall_ms < 1.1 * allowed, || described(case))?;
                }
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.cpu-gets-in-after-every-bad-cpu-job",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, on| {
            for server in named_on(on, 1)? {
                let case = case(report, server, "/bad-cpu", 1)?;
                let max = case.closed_loop.as_ref().and_then(|ping| ping.max_ms);
                let job = case.sleep_ms as f64;
                expect(max.is_some_and(|max| max < 1.5 * job), || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.cpu-the-named-bunch-their-bad-cpu-answers-late",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report, on| {
            // Most answers together: the median and the 90th came within a hundredth of the
            // burst of each other, in its last fifth.
            let bunched_ones = named_on(on, 1)?;
            for &server in &bunched_ones {
                let case = case(report, server, "/bad-cpu", 1)?;
                let (p50, p90) = (case.requests.p50_ms, case.requests.p90_ms);
                let bunched = p50.zip(p90).is_some_and(|(p50, p90)| {
                    p90 - p50 < 0.01 * case.wall_ms && p50 >= 0.8 * case.wall_ms
                });
                expect(bunched, || described(case))?;
            }
            let epoll = rust_stacks_on(report, stacks::Driver::Epoll);
            for server in epoll
                .into_iter()
                .filter(|server| !bunched_ones.contains(server))
            {
                let other = case(report, server, "/bad-cpu", 1)?;
                expect(median_answer(other) < 0.6 * other.wall_ms, || {
                    described(other)
                })?;
            }
            Ok(())
        },
    },
];
