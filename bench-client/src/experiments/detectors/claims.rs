//! What the pages say the detectors showed ([`crate::experiments::claims`]).

use super::{DETECTORS as ALL, DetectorsReport, HeldTrial, OnOff, Scorecard};
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, present};

const DETECTORS: &str = "results/detectors";

/// The detectors that read a running poll's start from a thread of their own.
const WATCHDOGS: &[&str] = &[
    "reactor-watch",
    "tokio poll hooks",
    "pyleak no_event_loop_blocking",
];

/// The detectors that time a poll, or a step of the loop, once it returns.
const POLL_TIMERS: &[&str] = &[
    "tokio-metrics TaskMonitor",
    "glommio stall detector",
    "asyncio debug mode",
    "uvloop debug mode",
];

pub const CLAIMS: &[Claim<DetectorsReport>] = &[
    Claim {
        name: "detectors.no-false-alarms",
        dir: DETECTORS,
        kind: Kind::Physics,
        holds: |report, _on| {
            // A detector reports a poll (or a step of the loop) that ran past its threshold;
            // `/ok-await` and `/ok-blocking` never hold the thread, whatever the machine.
            let names: Vec<&str> = ALL.iter().map(|detector| detector.name).collect();
            for verdict in of(report, &names)? {
                let alarms = present(verdict.false_alarms, || {
                    format!("{}: a request of the slow routes failed", named(verdict))
                })?;
                expect(alarms == 0, || {
                    format!("{}: {alarms} false alarms", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.watchdogs-report-while-held-and-poll-timers-after",
        dir: DETECTORS,
        kind: Kind::Physics,
        holds: |report, _on| {
            // A watchdog sees a poll pass the threshold while it runs, and says so within
            // about half a threshold more; a poll timer only once the poll has returned, after
            // the hold. So a hold of two thresholds or more tells them apart, as recorded.
            let (held_ms, threshold_ms) = (report.plan.held_ms, report.plan.threshold_ms);
            present((held_ms >= 2 * threshold_ms).then_some(()), || {
                format!("held {held_ms} ms, under two thresholds of {threshold_ms} ms")
            })?;
            for verdict in of(report, WATCHDOGS)? {
                let held = held_trials(verdict)?
                    .iter()
                    .filter(|trial| trial.while_held())
                    .count();
                expect(held > 0, || {
                    format!("{} reported during none", named(verdict))
                })?;
            }
            for verdict in of(report, POLL_TIMERS)? {
                let held = held_trials(verdict)?
                    .iter()
                    .filter(|trial| trial.while_held())
                    .count();
                let trials = verdict.held.len();
                expect(held == 0, || {
                    format!("{}: {held} of {trials} reported while held", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.pyleak-reports-the-first-held-stall-alone",
        dir: DETECTORS,
        kind: Kind::Observed,
        holds: |report, _on| {
            for verdict in of(report, &["pyleak no_event_loop_blocking"])? {
                let held: Vec<bool> = verdict
                    .held
                    .iter()
                    .map(|trial| trial.while_held())
                    .collect();
                present((held.len() > 1).then_some(()), || {
                    format!("{}: {} held trials answered", named(verdict), held.len())
                })?;
                let first_alone = held[0] && !held[1..].contains(&true);
                expect(first_alone, || {
                    format!("{}: while held {held:?}", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.pyleak-one-line-for-the-burst",
        dir: DETECTORS,
        kind: Kind::Observed,
        holds: |report, _on| {
            for verdict in of(report, &["pyleak no_event_loop_blocking"])? {
                let lines = present(verdict.bad_reports, || {
                    format!("{}: a request of /bad failed", named(verdict))
                })?;
                expect(lines == 1, || {
                    format!("{}: {lines} during /bad", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.reactor-watch-costs-nothing-beyond-the-rounds-spread-on-most-stacks",
        dir: DETECTORS,
        kind: Kind::Observed,
        holds: |report, _on| {
            // A cost: the median with it on above the median without, by more than the
            // rounds' own spread.
            let (mut costly, mut all) = (Vec::new(), 0);
            for verdict in of(report, &["reactor-watch"])? {
                let baseline = Some(baseline(report, verdict)?);
                let ping = OnOff::of(verdict, baseline, |round| round.ping_p50_ms);
                let wall = OnOff::of(verdict, baseline, |round| round.wall_ms);
                let costs = |figure: &OnOff| {
                    figure.beyond_spread() && figure.difference().is_some_and(|more| more > 0.0)
                };
                if costs(&ping) || costs(&wall) {
                    costly.push(format!("{}: ping {ping:?}, wall {wall:?}", named(verdict)));
                }
                all += 1;
            }
            expect(2 * costly.len() < all, || {
                format!(
                    "a cost beyond the spread on {} of {all}: {costly:?}",
                    costly.len()
                )
            })
        },
    },
    Claim {
        name: "detectors.both-debug-modes-cost-wall-time",
        dir: DETECTORS,
        kind: Kind::Observed,
        holds: |report, _on| {
            for verdict in of(report, &["asyncio debug mode", "uvloop debug mode"])? {
                let baseline = Some(baseline(report, verdict)?);
                let wall = OnOff::of(verdict, baseline, |round| round.wall_ms);
                let slower = wall.difference().is_some_and(|difference| difference > 0.0);
                expect(slower && wall.beyond_spread(), || {
                    format!("{}: wall {wall:?}", named(verdict))
                })?;
            }
            Ok(())
        },
    },
];

/// The scorecards of the detectors named `names`, at least one of each; else the run lacks one
/// (the FastAPI app's, without python3).
fn of<'a>(report: &'a DetectorsReport, names: &[&str]) -> Result<Vec<&'a Scorecard>, Shortfall> {
    for name in names {
        let found = report.detected().find(|verdict| verdict.detector == *name);
        present(found, || format!("no verdict of {name}"))?;
    }
    Ok(report
        .detected()
        .filter(|verdict| names.contains(&&*verdict.detector))
        .collect())
}

/// A verdict's held trials with every request answered: at least one, else the run lacks them.
fn held_trials(verdict: &Scorecard) -> Result<&[HeldTrial], Shortfall> {
    let held = &verdict.held[..];
    present((!held.is_empty()).then_some(held), || {
        format!("{}: no held trial answered", named(verdict))
    })
}

/// The verdict of `verdict`'s stack with no detector, with cost rounds of both; else the run
/// lacks the cost.
fn baseline<'a>(
    report: &'a DetectorsReport,
    verdict: &Scorecard,
) -> Result<&'a Scorecard, Shortfall> {
    let baseline = report.baseline(&verdict.stack);
    let both = baseline.filter(|baseline| !baseline.cost.is_empty() && !verdict.cost.is_empty());
    present(both, || {
        format!("{}: no cost rounds beside its baseline", named(verdict))
    })
}

/// A verdict's detector and stack.
fn named(verdict: &Scorecard) -> String {
    format!("{} on {}", verdict.detector, verdict.stack)
}
