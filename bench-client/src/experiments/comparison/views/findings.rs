//! Plain sentences read from a run's figures, one or a few per route: what the tables say,
//! for a reader who will not compare forty cells. Every number in them is a range over the
//! stacks of that run.

use crate::experiments::comparison::Report;
use crate::report::text::{kernel_note, latency_range, range, reactor_threads, signed_range};
use burst_meter::case::Case;
use burst_meter::stalls::StallsSeen;
use burst_meter::stats::{OpenLoopStats, PingStats, Verdict};
use burst_meter::work::WorkPath;

/// Every finding of `report`, route by route, at each thread count.
pub fn findings(report: &Report) -> Vec<String> {
    let plan = &report.plan;
    let mut sentences = Vec::new();
    for &threads in &plan.threads {
        for route in &plan.routes {
            let cases: Vec<&Case> = report
                .cases
                .iter()
                .filter(|case| case.route == route.path() && case.reactor_threads == threads)
                .collect();
            if cases.is_empty() {
                continue;
            }
            let at = if plan.threads.len() > 1 {
                format!("With {}, ", reactor_threads(threads))
            } else {
                String::new()
            };
            sentences.extend(route_findings(report, &at, *route, &cases));
        }
    }
    if !report.failures.is_empty() {
        sentences.push(format!(
            "{} target(s) could not be measured in full; see Failures.",
            report.failures.len()
        ));
    }
    sentences
}

/// The sentences about one route at one thread count; `at` leads the first of them.
fn route_findings(report: &Report, at: &str, work: WorkPath, cases: &[&Case]) -> Vec<String> {
    let mut sentences = vec![verdict_finding(report, at, work, cases)];
    let route = work.path();
    let serialised = cases.iter().any(|case| case.verdict == Verdict::Serialises);
    if serialised && report.plan.sleep_ms > 0 {
        sentences.push(slowest_ping(report.plan.sleep_ms, route, cases));
    }
    sentences.extend(where_it_slept(route, cases));
    sentences.extend(failures(route, cases));
    sentences.extend(kernel_finding(route, cases));
    sentences.extend(stalls_finding(route, cases));
    sentences.extend(open_loop_finding(route, cases));
    sentences
}

/// "`/bad` was serialised on all 5 stacks: wall … against …; the closed-loop pinger got …".
fn verdict_finding(report: &Report, at: &str, route: WorkPath, cases: &[&Case]) -> String {
    let plan = &report.plan;
    let serialised = names(cases, |case| case.verdict == Verdict::Serialises);
    let verdicts = verdicts(cases);
    let ideals = burst_meter::case::ideals(
        route,
        plan.concurrency,
        cases[0].sleep_ms,
        cases[0].reactor_threads,
    );
    let against = match route.cpu_place() {
        Some(_) => format!(
            "{:.0} ms, the fastest it can be on {} cores, and {:.0} ms on one",
            ideals.best_ms,
            burst_meter::case::cores(),
            ideals.serialised_ms
        ),
        None if serialised.is_empty() => format!("one sleep of {} ms", plan.sleep_ms),
        None => format!(
            "one sleep of {} ms, or {:.0} ms for ⌈N / threads⌉ × sleep",
            plan.sleep_ms, ideals.serialised_ms
        ),
    };
    let walls: Vec<f64> = cases.iter().map(|case| case.wall_ms).collect();
    let pings: Vec<&PingStats> = cases
        .iter()
        .filter_map(|c| c.closed_loop.as_ref())
        .collect();
    let samples: Vec<f64> = pings.iter().map(|ping| ping.samples as f64).collect();
    let p50s: Vec<f64> = pings.iter().filter_map(|ping| ping.p50_ms).collect();
    let maxes: Vec<f64> = pings.iter().filter_map(|ping| ping.max_ms).collect();
    format!(
        "{at}`{route}` was {verdicts}: wall {} ms against {against}; the closed-loop pinger \
         got {} samples, p50 {} ms, max {} ms.",
        range(&walls, 0),
        range(&samples, 0),
        latency_range(&p50s),
        latency_range(&maxes),
    )
}

/// "serialised on all 5 stacks", or each verdict with its stacks: "serialised on a, b;
/// concurrent on c; failed on d (10 of 10 requests)".
fn verdicts(cases: &[&Case]) -> String {
    let every = match cases {
        [only] => only.target.clone(),
        [_, _] => "both stacks".to_owned(),
        _ => format!("all {} stacks", cases.len()),
    };
    if cases
        .iter()
        .all(|case| case.verdict == cases[0].verdict && case.err == cases[0].err)
    {
        return match cases[0].verdict {
            Verdict::Failed => format!(
                "failed on {every} ({} of {} requests)",
                cases[0].err, cases[0].n
            ),
            verdict => format!("{} on {every}", verdict.was()),
        };
    }
    let mut groups = Vec::new();
    for verdict in [Verdict::Serialises, Verdict::Concurrent] {
        let on = names(cases, |case| case.verdict == verdict);
        if !on.is_empty() {
            groups.push(format!("{} on {}", verdict.was(), on.join(", ")));
        }
    }
    let failed: Vec<String> = cases
        .iter()
        .filter(|case| case.verdict == Verdict::Failed)
        .map(|case| format!("{} ({} of {} requests)", case.target, case.err, case.n))
        .collect();
    if !failed.is_empty() {
        groups.push(format!("failed on {}", failed.join(", ")));
    }
    groups.join("; ")
}

/// How long the slowest answered ping waited, from the stack where it waited least to
/// the one where it waited most, in ms and in sleeps; and where pings failed instead.
fn slowest_ping(sleep_ms: u64, route: &str, cases: &[&Case]) -> String {
    let pinged: Vec<(&Case, &PingStats)> = cases
        .iter()
        .filter_map(|case| Some((*case, case.closed_loop.as_ref()?)))
        .collect();
    let mut slowest: Vec<(f64, &str)> = pinged
        .iter()
        .filter(|(_, ping)| ping.errors == 0)
        .filter_map(|(case, ping)| Some((ping.max_ms?, case.target.as_str())))
        .collect();
    slowest.sort_by(|a, b| a.0.total_cmp(&b.0));
    let waited = |(ms, target): (f64, &str)| {
        format!(
            "{ms:.0} ms ({:.1} sleeps, on {target})",
            ms / sleep_ms as f64
        )
    };
    let mut sentence = match (slowest.first(), slowest.last()) {
        (Some(&least), Some(&most)) if least.1 != most.1 => format!(
            "During `{route}` the slowest ping waited from {} to {}",
            waited(least),
            waited(most)
        ),
        (Some(&only), _) => format!("During `{route}` the slowest ping waited {}", waited(only)),
        _ => format!("During `{route}` no stack answered every ping"),
    };
    for (case, ping) in pinged.iter().filter(|(_, ping)| ping.errors > 0) {
        let reason = ping.error_reasons.first().map_or("", String::as_str);
        sentence.push_str(&format!(
            "; on {} a ping failed instead ({reason})",
            case.target
        ));
    }
    sentence.push('.');
    sentence
}

/// Where the stacks disagree on the kind of thread the sleep ran on.
fn where_it_slept(route: &str, cases: &[&Case]) -> Option<String> {
    let on_reactor = names(cases, |case| case.on_reactor == Some(true));
    let off_reactor = names(cases, |case| case.on_reactor == Some(false));
    (!on_reactor.is_empty() && !off_reactor.is_empty()).then(|| {
        format!(
            "`{route}` slept on a reactor thread on {} and on a pool thread on {}.",
            on_reactor.join(", "),
            off_reactor.join(", ")
        )
    })
}

/// The requests and pings that failed, per stack, with the first reason.
fn failures(route: &str, cases: &[&Case]) -> Option<String> {
    let failing: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let (pings_failed, pings_sent, ping_reason) = match &case.closed_loop {
                Some(p) => (p.errors, p.errors + p.samples, p.error_reasons.first()),
                None => (0, 0, None),
            };
            if pings_failed == 0 && case.err == 0 {
                return None;
            }
            let first = case.errors.first().map(|e| &e.reason).or(ping_reason);
            Some(format!(
                "on {}, {} of {} requests and {pings_failed} of {pings_sent} pings failed (first: {})",
                case.target,
                case.err,
                case.n,
                first.map_or("no reason given", String::as_str)
            ))
        })
        .collect();
    (!failing.is_empty()).then(|| format!("During `{route}`, {}.", failing.join("; ")))
}

/// Where the kernel dropped or retransmitted connections: those figures are not the
/// server's alone.
fn kernel_finding(route: &str, cases: &[&Case]) -> Option<String> {
    let disturbed: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            Some(format!(
                "on {} ({})",
                case.target,
                kernel_note(case.confounders.kernel)?
            ))
        })
        .collect();
    (!disturbed.is_empty()).then(|| {
        format!(
            "During `{route}` the kernel dropped or retransmitted connections {}: those \
             figures include its retransmission timers and are not the server's alone.",
            disturbed.join(", ")
        )
    })
}

/// What the servers' own stall detectors reported: the Rust answer to asyncio's debug mode,
/// and the debug mode itself on the FastAPI app.
fn stalls_finding(route: &str, cases: &[&Case]) -> Option<String> {
    let reported: Vec<(&Case, &StallsSeen)> = cases
        .iter()
        .filter_map(|case| Some((*case, case.stalls.as_ref()?)))
        .filter(|(_, seen)| seen.threshold_ms > 0.0)
        .collect();
    if reported.is_empty() {
        return None;
    }
    let counts: Vec<f64> = reported.iter().map(|(_, s)| s.slow_polls as f64).collect();
    let longest: Vec<f64> = reported.iter().filter_map(|(_, s)| s.longest_ms).collect();
    let silent = names(cases, |case| case.stalls.is_none());
    let mut sentence = format!(
        "During `{route}` the servers' own stall detectors reported {} slow polls",
        range(&counts, 0)
    );
    if !longest.is_empty() {
        sentence.push_str(&format!(", the longest {} ms", range(&longest, 0)));
    }
    if !silent.is_empty() {
        sentence.push_str(&format!("; not reported by {}", silent.join(", ")));
    }
    sentence.push('.');
    Some(sentence)
}

/// What the open-loop probe saw beside the closed loop, if it ran, and how far its own
/// punctuality and cost could have moved that.
fn open_loop_finding(route: &str, cases: &[&Case]) -> Option<String> {
    let open: Vec<(&Case, &OpenLoopStats)> = cases
        .iter()
        .filter_map(|case| Some((*case, case.open_loop.as_ref()?)))
        .collect();
    if open.is_empty() {
        return None;
    }
    let values = |pick: fn(&OpenLoopStats) -> Option<f64>| -> Vec<f64> {
        open.iter().filter_map(|(_, o)| pick(o)).collect()
    };
    let scheduled: Vec<f64> = open.iter().map(|(_, o)| o.scheduled as f64).collect();
    let closed: Vec<f64> = open
        .iter()
        .filter_map(|(case, _)| Some(case.closed_loop.as_ref()?.samples as f64))
        .collect();
    let mut sentence = format!(
        "During `{route}` the open-loop probe sent {} pings on schedule where the closed loop got {} \
         samples; measured from their scheduled times, p50 {} ms, p99 {} ms, max {} ms. \
         99% of its pings left within {} ms of their time",
        range(&scheduled, 0),
        range(&closed, 0),
        latency_range(&values(|o| o.p50_ms)),
        latency_range(&values(|o| o.p99_ms)),
        latency_range(&values(|o| o.max_ms)),
        latency_range(&values(|o| o.p99_send_lag_ms)),
    );
    sentence.push_str(&open_loop_cost(&open));
    sentence.push_str(&probes_gap(&open));
    sentence.push('.');
    Some(sentence)
}

/// What the open loop's threads cost per ping, and what the hypervisor took meanwhile, as
/// the rest of the open-loop finding's sentence.
fn open_loop_cost(open: &[(&Case, &OpenLoopStats)]) -> String {
    let mut clause = String::new();
    let per_ping: Vec<f64> = open
        .iter()
        .filter_map(|(_, o)| Some(o.probe_cpu_ms? / o.scheduled.max(1) as f64))
        .collect();
    if !per_ping.is_empty() {
        clause.push_str(&format!(
            ", at a cost of {} ms of CPU per ping",
            latency_range(&per_ping)
        ));
    }
    let steal: Vec<f64> = open
        .iter()
        .filter_map(|(case, _)| case.confounders.cpu?.steal_ms)
        .collect();
    if !steal.is_empty() {
        clause.push_str(&format!(
            " (the hypervisor took {} ms of the cores meanwhile)",
            range(&steal, 0)
        ));
    }
    clause
}

/// How far the two probes' medians part where nothing blocked the pings, as the rest of
/// the open-loop finding's sentence; nothing if no case ran concurrently.
fn probes_gap(open: &[(&Case, &OpenLoopStats)]) -> String {
    // Where nothing blocked the pings, both probes time the same idle server: their medians
    // should agree, and how far they do not is the probes' own doing.
    let gaps: Vec<f64> = open
        .iter()
        .filter(|(case, _)| case.verdict == Verdict::Concurrent)
        .filter_map(|(case, o)| Some(o.p50_ms? - case.closed_loop.as_ref()?.p50_ms?))
        .collect();
    if gaps.is_empty() {
        return String::new();
    }
    format!(
        "; where the requests ran concurrently, its p50 minus the closed loop's: {} ms",
        signed_range(&gaps)
    )
}

/// The targets of the cases that `keep` keeps.
fn names<'a>(cases: &[&'a Case], keep: impl Fn(&Case) -> bool) -> Vec<&'a str> {
    cases
        .iter()
        .filter(|case| keep(case))
        .map(|case| case.target.as_str())
        .collect()
}
