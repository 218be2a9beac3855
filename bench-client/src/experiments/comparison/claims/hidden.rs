//! What the pages say of the hidden blockers (`results/hidden/`): HTTP, SQLite and a large file.

use super::*;

pub const CLAIMS: &[Claim<Report>] = &[
    Claim {
        name: "comparison.hidden-bad-routes-serialise-and-every-fix-overlaps",
        dir: HIDDEN,
        kind: Kind::Physics,
        holds: |report, _on| {
            for case in &report.cases {
                let expected = match case.route.starts_with("/bad-") {
                    true => Verdict::Serialises,
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
        holds: |report, on| {
            // The page names the stacks whose awaited file read holds the reactor.
            let file_holds = named_on(on, 0)?;
            for case in &report.cases {
                let stalls = present(case.stalls.as_ref(), || described(case))?;
                let file_fix_on_python =
                    !stacks::names().contains(&&*case.target) && case.route.contains("-file-");
                let upheld = match case.route.strip_prefix("/bad") {
                    Some(_) => {
                        let booked = [format!("GET {}", case.route)];
                        stalls.slow_polls == case.n as u64 && stalls.routes == booked
                    }
                    None if case.route == FILE_AWAIT && file_holds.contains(&&*case.target) => true,
                    None => file_fix_on_python || stalls.slow_polls <= 3,
                };
                expect(upheld, || described(case))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.hidden-file-await-holds-the-reactor",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report, on| {
            for server in named_on(on, 1)? {
                let case = case(report, server, FILE_AWAIT, 1)?;
                let stalls = present(case.stalls.as_ref(), || described(case))?;
                let booked = stalls.routes == [format!("GET {FILE_AWAIT}")];
                expect(stalls.slow_polls == case.n as u64 && booked, || {
                    described(case)
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "comparison.hidden-the-cpu-tells-a-wait-from-work",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report, _on| {
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
        holds: |report, _on| {
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
        holds: |report, _on| {
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
        name: "comparison.hidden-the-probe-left-late-in-a-file-case",
        dir: HIDDEN,
        kind: Kind::Observed,
        holds: |report, _on| {
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
