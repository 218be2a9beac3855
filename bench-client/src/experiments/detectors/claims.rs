//! What the pages say the detectors showed ([`crate::experiments::claims`]).

use super::{DetectorsReport, OnOff, Verdict};
use crate::experiments::claims::{Claim, expect};

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
        holds: |report| {
            let alarms = |verdict: &&Verdict| verdict.false_alarms != Some(0);
            let raised: Vec<String> = report.detected().filter(alarms).map(named).collect();
            expect(raised.is_empty(), || {
                format!("false alarms or no verdict: {raised:?}")
            })
        },
    },
    Claim {
        name: "detectors.watchdogs-report-while-held-and-poll-timers-after",
        dir: DETECTORS,
        holds: |report| {
            for verdict in of(report, WATCHDOGS)? {
                let held = verdict
                    .held
                    .iter()
                    .filter(|trial| trial.while_held())
                    .count();
                expect(held > 0, || {
                    format!("{} reported during none", named(verdict))
                })?;
            }
            for verdict in of(report, POLL_TIMERS)? {
                let held = verdict
                    .held
                    .iter()
                    .filter(|trial| trial.while_held())
                    .count();
                let trials = verdict.held.len();
                expect(trials > 0 && held == 0, || {
                    format!("{}: {held} of {trials} reported while held", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.pyleak-reports-the-first-held-stall-alone",
        dir: DETECTORS,
        holds: |report| {
            for verdict in of(report, &["pyleak no_event_loop_blocking"])? {
                let held: Vec<bool> = verdict
                    .held
                    .iter()
                    .map(|trial| trial.while_held())
                    .collect();
                let first_alone = held.len() > 1 && held[0] && !held[1..].contains(&true);
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
        holds: |report| {
            for verdict in of(report, &["pyleak no_event_loop_blocking"])? {
                let lines = verdict.bad_reports;
                expect(lines == Some(1), || {
                    format!("{}: {lines:?} during /bad", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.reactor-watch-costs-a-fraction-of-a-millisecond-and-a-few-percent",
        dir: DETECTORS,
        holds: |report| {
            for verdict in of(report, &["reactor-watch"])? {
                let baseline = report.baseline(&verdict.stack);
                let ping = OnOff::of(verdict, baseline, |round| round.ping_p50_ms);
                let wall = OnOff::of(verdict, baseline, |round| round.wall_ms);
                let off_wall = wall.off.map(|off| off[1]);
                let small = ping.difference().is_some_and(|more| more <= 0.2)
                    && (wall.difference().zip(off_wall))
                        .is_some_and(|(more, off)| more <= 0.1 * off);
                expect(small, || {
                    format!("{}: ping {ping:?}, wall {wall:?}", named(verdict))
                })?;
            }
            Ok(())
        },
    },
    Claim {
        name: "detectors.both-debug-modes-cost-wall-time",
        dir: DETECTORS,
        holds: |report| {
            for verdict in of(report, &["asyncio debug mode", "uvloop debug mode"])? {
                let baseline = report.baseline(&verdict.stack);
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

/// The verdicts of the detectors named `names`, at least one of each.
fn of<'a>(report: &'a DetectorsReport, names: &[&str]) -> Result<Vec<&'a Verdict>, String> {
    for name in names {
        let found = report.detected().any(|verdict| verdict.detector == *name);
        expect(found, || format!("no verdict of {name}"))?;
    }
    Ok(report
        .detected()
        .filter(|verdict| names.contains(&&*verdict.detector))
        .collect())
}

/// A verdict's detector and stack.
fn named(verdict: &Verdict) -> String {
    format!("{} on {}", verdict.detector, verdict.stack)
}
