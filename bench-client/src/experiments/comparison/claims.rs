//! What the pages say the comparison and its variations showed
//! ([`crate::experiments::claims`]).

use super::{Case, Report};
use crate::experiments::claims::{Claim, Kind, REUSE_PORT, Shortfall, cores, expect, present};
use crate::measure::stats::Verdict;
#[cfg(doc)]
use crate::measure::stats::percentile;
use crate::measure::target::{EPOLL_SERVERS, IO_URING_SERVERS, SERVERS};

/// glommio's awaited file read, which its server's stall detector caught holding the reactor.
const GLOMMIO_FILE: (&str, &str) = ("demo-hyper-glommio", "/ok-file-await");

/// The comparison's run with its defaults, and its variation with CPU-bound routes.
const COMPARISON: &str = "results";
const CPU: &str = "results/cpu";
const THREADS: &str = "results/threads";
const HIDDEN: &str = "results/hidden";
const BLOCK_IN_PLACE: &str = "results/block-in-place";
const MONOIO_POOL: &str = "results/monoio/pool";
const MONOIO_NO_POOL: &str = "results/monoio/no-pool";
const MONOIO_EXECUTE_LOCAL: &str = "results/monoio/execute-local";
const GLOMMIO_ONE_POOL_THREAD: &str = "results/glommio/one-pool-thread";

pub const CLAIMS: &[Claim<Report>] = &[
    Claim {
        name: "comparison.monoio-with-a-pool-ok-blocking-is-concurrent",
        dir: MONOIO_POOL,
        kind: Kind::Physics,
        holds: |report| {
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
        holds: |report| {
            at_one_thread_and_two(report)?;
            every_case(report, "/ok-blocking", |case| {
                let all_500 = (case.errors.iter()).all(|error| error.reason.contains("500"));
                case.verdict == Verdict::Failed && case.err == case.n && all_500
            })?;
            every_case(report, "/bad", |case| case.verdict == Verdict::Serialised)?;
            every_case(report, "/ok-await", |case| {
                case.verdict == Verdict::Concurrent
            })
        },
    },
    Claim {
        name: "comparison.monoio-execute-local-serialises-like-bad",
        dir: MONOIO_EXECUTE_LOCAL,
        kind: Kind::Physics,
        holds: |report| {
            at_one_thread_and_two(report)?;
            every_case(report, "/ok-blocking", |case| {
                case.verdict == Verdict::Serialised && case.on_reactor == Some(true)
            })
        },
    },
    Claim {
        name: "comparison.cpu-yield-holds-the-ping-on-glommio-and-monoio",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report| {
            for server in ["demo-hyper-glommio", "demo-hyper-monoio"] {
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
        name: "comparison.glommio-one-pool-thread-serialises-ok-blocking",
        dir: GLOMMIO_ONE_POOL_THREAD,
        kind: Kind::Physics,
        holds: |report| {
            every_case(report, "/ok-blocking", |case| {
                let p99 = case.open_loop.as_ref().and_then(|open| open.p99_ms);
                let quick = p99.is_some_and(|p99| p99 < case.sleep_ms as f64 / 10.0);
                case.verdict == Verdict::Serialised && case.on_reactor == Some(false) && quick
            })
        },
    },
    Claim {
        name: "comparison.block-in-place-takes-about-one-sleep-on-one-worker",
        dir: BLOCK_IN_PLACE,
        kind: Kind::Physics,
        holds: |report| {
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
        holds: |report| {
            every_case(report, "/ok-block-in-place", |case| {
                let slow = case.stalls.as_ref().map(|stalls| stalls.slow_polls);
                slow.is_some_and(|slow| slow >= case.n as u64)
            })
        },
    },
    Claim {
        name: "comparison.eleven-stacks",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
            let targets = report.targets();
            let stacks = SERVERS.iter().chain(FASTAPI);
            let left_out: Vec<&&str> = stacks.filter(|s| !targets.contains(s)).collect();
            if !left_out.is_empty() {
                return Err(Shortfall::Lacks(format!(
                    "left out of this run: {left_out:?}"
                )));
            }
            expect(targets.len() == 11, || {
                format!("{} stacks: {targets:?}", targets.len())
            })
        },
    },
    Claim {
        name: "comparison.bad-takes-about-ten-sleeps-on-every-stack",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
            every_case(report, "/bad", |case| {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let n = case.n.div_ceil(case.reactor_threads) as f64;
                case.verdict == Verdict::Serialised && (0.9 * n..1.1 * n).contains(&sleeps)
            })
        },
    },
    Claim {
        name: "comparison.both-fixes-take-about-one-sleep-on-every-stack",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
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
        holds: |report| {
            let quick = |case: &Case| {
                let p99 = case.open_loop.as_ref().and_then(|open| open.p99_ms);
                p99.is_some_and(|p99| p99 < case.sleep_ms as f64 / 10.0)
            };
            every_fix(report, quick)
        },
    },
    Claim {
        name: "comparison.bad-serialises-per-thread",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report| {
            for case in rust_cases_of(report, |case| case.route == "/bad") {
                let sleeps = case.wall_ms / case.sleep_ms as f64;
                let ideal = case.n.div_ceil(case.reactor_threads) as f64;
                let serial = case.verdict == Verdict::Serialised && sleeps >= 0.98 * ideal;
                expect(serial, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.the-fixes-stay-concurrent-at-every-thread-count",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report| {
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
        name: "comparison.threads-ntex-ok-blocking-took-one-sleep-with-no-slow-poll",
        dir: THREADS,
        kind: Kind::Physics,
        holds: |report| {
            let ntex = |case: &&Case| case.target == "demo-ntex" && case.route == "/ok-blocking";
            let cases: Vec<&Case> = report.cases.iter().filter(ntex).collect();
            expect(!cases.is_empty(), || "no ntex /ok-blocking case".to_owned())?;
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
        holds: |report| {
            for server in ["demo-axum", "demo-actix", "demo-hyper-tokio", "demo-ntex"] {
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
        name: "comparison.every-bad-sleep-ran-on-the-reactor",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| every_case(report, "/bad", |case| case.on_reactor == Some(true)),
    },
    Claim {
        name: "comparison.one-slow-poll-per-bad-request",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
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
        holds: |report| {
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
        holds: |report| {
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
        name: "comparison.only-actix-fails-open-loop-pings",
        dir: COMPARISON,
        kind: Kind::Observed,
        holds: |report| {
            let failed = (report.cases.iter())
                .filter(|case| case.open_loop.as_ref().is_some_and(|open| open.errors > 0));
            for case in failed {
                expect(case.target == "demo-actix", || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.ok-blocking-sleeps-ran-off-the-reactor",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
            every_case(report, "/ok-blocking", |case| {
                case.on_reactor == Some(false)
            })
        },
    },
    Claim {
        name: "comparison.no-slow-poll-during-the-fixes",
        dir: COMPARISON,
        kind: Kind::Physics,
        holds: |report| {
            let none = |case: &Case| case.stalls.as_ref().is_some_and(|s| s.slow_polls == 0);
            every_fix(report, none)
        },
    },
    Claim {
        name: "comparison.ntex-ok-await-runs-furthest-past-one-sleep",
        dir: COMPARISON,
        kind: Kind::Observed,
        holds: |report| {
            let past = |target: &str| {
                let case = case(report, target, "/ok-await", 1)?;
                Ok::<_, Shortfall>(case.wall_ms - case.sleep_ms as f64)
            };
            let ntex = past("demo-ntex")?;
            for target in SERVERS.iter().filter(|target| **target != "demo-ntex") {
                let other = past(target)?;
                expect(other < ntex, || {
                    format!("past one sleep: ntex {ntex:.1} ms, {target} {other:.1} ms")
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.a-yield-keeps-the-ping-waiting-longer-on-io-uring",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report| {
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
            let (epoll, uring) = (slowest(EPOLL_SERVERS)?, slowest(IO_URING_SERVERS)?);
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
        holds: |report| {
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
        holds: |report| {
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
        holds: |report| rust_cases(report, "/ok-cpu-blocking", at_the_end),
    },
    Claim {
        name: "comparison.cpu-yield-on-epoll-pings-wait-a-round-and-answers-come-at-the-end",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report| {
            for server in EPOLL_SERVERS {
                let case = case(report, server, "/ok-cpu-yield", 1)?;
                let ping = case.closed_loop.as_ref().and_then(|ping| ping.p50_ms);
                let a_round = ping.is_some_and(|p50| p50 < 20.0);
                let jobs = case.wall_ms / (case.n as f64 * case.sleep_ms as f64);
                expect(
                    a_round && (0.95..1.1).contains(&jobs) && at_the_end(case),
                    || {
                        format!(
                            "{server}: ping p50 {ping:?} ms, wall {:.0} ms",
                            case.wall_ms
                        )
                    },
                )?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.cpu-yield-ntex-gets-fewer-pings-through-than-compio",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report| {
            let ntex = case(report, "demo-ntex", "/ok-cpu-yield", 1)?;
            let compio = case(report, "demo-axum-compio", "/ok-cpu-yield", 1)?;
            let (Some(ntex_ping), Some(compio_ping)) = (&ntex.closed_loop, &compio.closed_loop)
            else {
                return Err(Shortfall::Lacks("no closed-loop ping".to_owned()));
            };
            expect(compio_ping.samples > ntex_ping.samples, || {
                format!(
                    "ntex {} pings, compio {} pings",
                    ntex_ping.samples, compio_ping.samples
                )
            })
        },
    },
    Claim {
        name: "comparison.cpu-fastapi-threadpool-takes-as-long-as-the-loop",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report| {
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
        holds: |report| {
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
                    as_badly && slow_polls(threadpool).is_some_and(|polls| polls > 0)
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
        holds: |report| {
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
        holds: |report| {
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
        holds: |report| {
            rust_pairs(report, "/bad-cpu", "/ok-cpu-yield", |on_loop, yielding| {
                (yielding.wall_ms - on_loop.wall_ms).abs() < 0.1 * on_loop.wall_ms
            })
        },
    },
    Claim {
        name: "comparison.cpu-pool-answers-the-median-near-halfway",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report| {
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
        name: "comparison.cpu-two-threads-use-the-cores-on-epoll-and-ntex",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report| {
            let cores = cores(&report.environment)?;
            let servers = EPOLL_SERVERS
                .iter()
                .copied()
                .chain(std::iter::once("demo-ntex"));
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
        name: "comparison.cpu-a-reuse-port-stack-bad-cpu-slowest-at-two-threads",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report| {
            let cases = SERVERS
                .iter()
                .map(|server| case(report, server, "/bad-cpu", 2));
            let cases = cases.collect::<Result<Vec<_>, _>>()?;
            let slowest = (cases.iter())
                .max_by(|a, b| a.wall_ms.total_cmp(&b.wall_ms))
                .ok_or(Shortfall::Lacks(
                    "no /bad-cpu case at two threads".to_owned(),
                ))?;
            let allowed = cpu_wall(
                slowest,
                slowest.reactor_threads,
                cores(&report.environment)?,
            );
            expect(
                REUSE_PORT.contains(&&*slowest.target) && slowest.wall_ms > 1.1 * allowed,
                || described(slowest),
            )
        },
    },
    Claim {
        name: "comparison.hidden-bad-routes-serialise-and-every-fix-overlaps",
        dir: HIDDEN,
        kind: Kind::Physics,
        holds: |report| {
            for case in &report.cases {
                let expected = match case.route.starts_with("/bad-") {
                    true => Verdict::Serialised,
                    false => Verdict::Concurrent,
                };
                expect(case.verdict == expected, || described(case))?;
            }
            expect(!report.cases.is_empty(), || "no case".to_owned())
        },
    },
    Claim {
        name: "comparison.hidden-detector-books-each-bad-route-and-a-few-fix-polls",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            for case in &report.cases {
                let stalls = present(case.stalls.as_ref(), || described(case))?;
                let file_fix_on_python =
                    !SERVERS.contains(&&*case.target) && case.route.contains("-file-");
                let upheld = match case.route.strip_prefix("/bad") {
                    Some(_) => {
                        let booked = [format!("GET {}", case.route)];
                        stalls.slow_polls == case.n as u64 && stalls.routes == booked
                    }
                    None if (case.target.as_str(), case.route.as_str()) == GLOMMIO_FILE => true,
                    None => file_fix_on_python || stalls.slow_polls <= 3,
                };
                expect(upheld, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.hidden-glommio-file-await-holds-the-reactor",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            let (server, route) = GLOMMIO_FILE;
            let case = case(report, server, route, 1)?;
            let stalls = present(case.stalls.as_ref(), || described(case))?;
            let booked = stalls.routes == [format!("GET {route}")];
            expect(stalls.slow_polls == case.n as u64 && booked, || {
                described(case)
            })
        },
    },
    Claim {
        name: "comparison.hidden-the-cpu-tells-a-wait-from-work",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            for case in &report.cases {
                let Some(call) = &case.call else { continue };
                let share = call.cpu_ms.map(|cpu| cpu / call.call_ms);
                let upheld = match &*case.route {
                    "/bad-http" => share.is_some_and(|share| share < 0.05),
                    "/bad-db" => share.is_some_and(|share| share > 0.9),
                    "/bad-file" => share.is_some_and(|share| share > 0.5),
                    _ => true,
                };
                expect(upheld, || format!("{}: {call:?}", described(case)))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.hidden-a-query-takes-longer-on-the-pool",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            for target in report.targets() {
                let call_ms = |route: &str| -> Result<f64, Shortfall> {
                    let case = case(report, target, route, 1)?;
                    let call = present(case.call.as_ref(), || described(case))?;
                    Ok(call.call_ms)
                };
                let (pooled, on_reactor) = (call_ms("/ok-db-blocking")?, call_ms("/bad-db")?);
                expect(pooled > on_reactor, || {
                    format!(
                        "{target}: a query took {pooled:.0} ms on the pool, {on_reactor:.0} ms on the reactor"
                    )
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.hidden-compio-pings-wait-longer-beside-its-file-await",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            let awaited = case(report, "demo-axum-compio", "/ok-file-await", 1)?;
            let pooled = case(report, "demo-axum-compio", "/ok-file-blocking", 1)?;
            let p50 = |case: &Case| case.closed_loop.as_ref().and_then(|ping| ping.p50_ms);
            let longer = p50(awaited).zip(p50(pooled)).is_some_and(|(a, p)| a > p);
            let quiet = awaited
                .stalls
                .as_ref()
                .is_some_and(|stalls| stalls.slow_polls == 0);
            expect(longer && quiet, || {
                format!("{}; {}", described(awaited), described(pooled))
            })
        },
    },
    Claim {
        name: "comparison.cpu-uvloop-gets-in-after-every-bad-cpu-job",
        dir: CPU,
        kind: Kind::Observed,
        holds: |report| {
            let uvloop = case(report, "fastapi-uvloop", "/bad-cpu", 1)?;
            let max = uvloop.closed_loop.as_ref().and_then(|ping| ping.max_ms);
            let job = uvloop.sleep_ms as f64;
            expect(max.is_some_and(|max| max < 1.5 * job), || described(uvloop))
        },
    },
    Claim {
        name: "comparison.cpu-ntex-holds-its-bad-cpu-answers-to-the-end",
        dir: CPU,
        kind: Kind::Physics,
        holds: |report| {
            let ntex = case(report, "demo-ntex", "/bad-cpu", 1)?;
            expect(at_the_end(ntex), || described(ntex))?;
            for server in EPOLL_SERVERS {
                let other = case(report, server, "/bad-cpu", 1)?;
                expect(median_answer(other) < 0.6 * other.wall_ms, || {
                    described(other)
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.threads-the-probe-p99-differs-by-stack-during-bad-at-four",
        dir: THREADS,
        kind: Kind::Observed,
        holds: |report| {
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
    Claim {
        name: "comparison.hidden-the-probe-left-late-in-a-file-case",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report| {
            let lags = (report.cases.iter())
                .filter(|case| case.route.contains("-file"))
                .filter_map(|case| case.open_loop.as_ref()?.p99_send_lag_ms);
            let latest = lags.fold(0.0, f64::max);
            expect(latest > 1.0, || {
                format!("the latest p99 send lag of a file case: {latest:.2} ms")
            })
        },
    },
];

/// The FastAPI apps, on asyncio and on uvloop.
const FASTAPI: &[&str] = &["fastapi-asyncio", "fastapi-uvloop"];

/// Within a tenth of `expected`.
fn near(measured: f64, expected: f64) -> bool {
    (measured - expected).abs() < 0.1 * expected
}

/// The wall time `case`'s CPU-bound jobs (each `sleep_ms` of work) take on `workers` threads
/// that share `cores` cores: in waves of the workers while each has a core of its own,
/// else all sharing the cores.
fn cpu_wall(case: &Case, workers: usize, cores: usize) -> f64 {
    let job = case.sleep_ms as f64;
    match workers <= cores {
        true => case.n.div_ceil(workers) as f64 * job,
        false => case.n as f64 * job / cores as f64,
    }
}

/// The rank (from 0) of the median of `n` answers, as [`percentile`] takes it.
fn median_rank(n: usize) -> usize {
    (0.5 * n.saturating_sub(1) as f64).round_ties_even() as usize
}

/// When a case's median request was answered, from the first send.
fn median_answer(case: &Case) -> f64 {
    case.requests.p50_ms.unwrap_or(f64::INFINITY)
}

/// The median request was answered in the last tenth of the burst.
fn at_the_end(case: &Case) -> bool {
    case.requests
        .p50_ms
        .is_some_and(|p50| p50 >= 0.9 * case.wall_ms)
}

/// Every Rust stack's case of `route` at one reactor thread is `holds`.
fn rust_cases(
    report: &Report,
    route: &str,
    holds: impl Fn(&Case) -> bool,
) -> Result<(), Shortfall> {
    for server in SERVERS {
        let case = case(report, server, route, 1)?;
        expect(holds(case), || described(case))?;
    }
    Ok(())
}

/// On every Rust stack at one reactor thread, its cases of `first` and `second` are `holds`.
fn rust_pairs(
    report: &Report,
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    pairs(report, &SERVERS, first, second, holds)
}

/// As [`rust_pairs`], on the FastAPI apps.
fn fastapi_pairs(
    report: &Report,
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    pairs(report, FASTAPI, first, second, holds)
}

fn pairs(
    report: &Report,
    targets: &[&str],
    first: &str,
    second: &str,
    holds: impl Fn(&Case, &Case) -> bool,
) -> Result<(), Shortfall> {
    for target in targets {
        let (one, other) = (
            case(report, target, first, 1)?,
            case(report, target, second, 1)?,
        );
        expect(holds(one, other), || {
            format!("{}; {}", described(one), described(other))
        })?;
    }
    Ok(())
}

/// The run has cases at one reactor thread and at two.
fn at_one_thread_and_two(report: &Report) -> Result<(), Shortfall> {
    for threads in [1, 2] {
        let any = (report.cases.iter()).any(|case| case.reactor_threads == threads);
        expect(any, || format!("no case at {threads} threads"))?;
    }
    Ok(())
}

/// A case's figures that the claims read, in a few words.
fn described(case: &Case) -> String {
    let ping = case.closed_loop.as_ref().and_then(|ping| ping.p50_ms);
    let probe = case.open_loop.as_ref().and_then(|open| open.p50_ms);
    let slow_polls = case.stalls.as_ref().map(|stalls| stalls.slow_polls);
    format!(
        "{} {} at {} threads: {:?}, wall {:.0} ms, median answer {:?} ms, ping p50 {ping:?} \
         ms, probe p50 {probe:?} ms, slow polls {slow_polls:?}",
        case.target,
        case.route,
        case.reactor_threads,
        case.verdict,
        case.wall_ms,
        case.requests.p50_ms
    )
}

/// `target`'s case of `route` at `threads` reactor threads.
fn case<'a>(
    report: &'a Report,
    target: &str,
    route: &str,
    threads: usize,
) -> Result<&'a Case, Shortfall> {
    let found = (report.cases.iter()).find(|case| {
        case.target == target && case.route == route && case.reactor_threads == threads
    });
    present(found, || {
        format!("no case of {target} {route} at {threads} threads")
    })
}

/// Every case of both fixes, `/ok-blocking` and `/ok-await`, is `holds`.
fn every_fix(report: &Report, holds: fn(&Case) -> bool) -> Result<(), Shortfall> {
    ["/ok-blocking", "/ok-await"]
        .into_iter()
        .try_for_each(|route| every_case(report, route, holds))
}

/// Every case of `route` (at least one) is `holds`.
fn every_case(report: &Report, route: &str, holds: fn(&Case) -> bool) -> Result<(), Shortfall> {
    let cases: Vec<&Case> = report
        .cases
        .iter()
        .filter(|case| case.route == route)
        .collect();
    expect(!cases.is_empty(), || format!("no case of {route}"))?;
    for case in cases {
        expect(holds(case), || {
            let (target, verdict, wall) = (&case.target, case.verdict, case.wall_ms);
            let (on_reactor, stalls) = (case.on_reactor, &case.stalls);
            format!(
                "{target} {route}: {verdict:?}, wall {wall:.0} ms, on the reactor {on_reactor:?}, \
                 stalls {stalls:?}"
            )
        })?;
    }
    Ok(())
}

/// The Rust stacks' cases of `report` that `pick` keeps.
fn rust_cases_of(report: &Report, pick: fn(&Case) -> bool) -> impl Iterator<Item = &Case> {
    (report.cases.iter()).filter(move |case| SERVERS.contains(&&*case.target) && pick(case))
}
