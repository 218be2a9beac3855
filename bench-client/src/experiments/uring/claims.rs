//! What the pages say the io_uring experiment showed ([`crate::experiments::claims`]).

use super::UringReport;
use super::tally::HeldTally;
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, present};

const URING: &str = "results/uring";

pub const CLAIMS: &[Claim<UringReport>] = &[
    Claim {
        name: "uring.each-change-alone-flips-compios-answers",
        dir: URING,
        kind: Kind::Observed,
        holds: |report| {
            none_one_per_sleep(held(report, "demo-axum-compio")?)?;
            let changed = settings(report, "demo-axum-compio (");
            present(changed.first(), || {
                "no setting that changes compio".to_owned()
            })?;
            changed.into_iter().try_for_each(every_one_per_sleep)
        },
    },
    Claim {
        name: "uring.ntex-needs-two-changes-together",
        dir: URING,
        kind: Kind::Observed,
        holds: |report| {
            let together = "demo-ntex (epoll reactor + write threshold 1 byte)";
            every_one_per_sleep(held(report, together)?)?;
            let others = settings(report, "demo-ntex").into_iter();
            let alone: Vec<&HeldTally> = others.filter(|tally| tally.setting != together).collect();
            present((alone.len() > 1).then_some(()), || {
                "no stock ntex or one change alone".to_owned()
            })?;
            alone.into_iter().try_for_each(none_one_per_sleep)
        },
    },
    Claim {
        name: "uring.glommio-and-monoio-answer-one-per-sleep",
        dir: URING,
        kind: Kind::Observed,
        holds: |report| {
            ["demo-hyper-glommio", "demo-hyper-monoio"]
                .into_iter()
                .try_for_each(|server| every_one_per_sleep(held(report, server)?))
        },
    },
    Claim {
        name: "uring.a-leading-ping-is-served-first-yet-can-be-held",
        dir: URING,
        kind: Kind::Observed,
        holds: |report| {
            let stock = |setting: &str| !setting.contains('(');
            let rows: Vec<_> = report
                .order
                .iter()
                .filter(|row| stock(&row.setting))
                .collect();
            present(rows.first(), || "no ping written before a burst".to_owned())?;
            for row in &rows {
                expect(row.served_first == row.trials - row.failed, || {
                    let (setting, lead, first) = (&row.setting, row.lead_ms, row.served_first);
                    format!(
                        "{setting}, {lead} ms ahead: served first in {first} of {}",
                        row.trials
                    )
                })?;
            }
            let held = rows
                .iter()
                .filter(|row| row.lead_ms <= 1.0 && row.held_to_the_end > 0);
            expect(held.count() > 0, || {
                "no stock answer held to the burst's end".to_owned()
            })
        },
    },
];

/// The tally of `setting`'s bursts with no ping.
fn held<'a>(report: &'a UringReport, setting: &str) -> Result<&'a HeldTally, Shortfall> {
    let found = report.held.iter().find(|tally| tally.setting == setting);
    present(found, || format!("no bursts of {setting}"))
}

/// The tallies of the settings whose label starts with `prefix`.
fn settings<'a>(report: &'a UringReport, prefix: &str) -> Vec<&'a HeldTally> {
    report
        .held
        .iter()
        .filter(|tally| tally.setting.starts_with(prefix))
        .collect()
}

fn every_one_per_sleep(tally: &HeldTally) -> Result<(), Shortfall> {
    let every = tally.trials > 0 && tally.one_per_sleep == tally.trials;
    expect(every, || answers(tally))
}

fn none_one_per_sleep(tally: &HeldTally) -> Result<(), Shortfall> {
    present((tally.trials > tally.failed).then_some(()), || {
        format!("no burst with a verdict: {}", answers(tally))
    })?;
    expect(tally.one_per_sleep == 0, || answers(tally))
}

/// A setting's bursts, in a few words.
fn answers(tally: &HeldTally) -> String {
    format!(
        "{}: of {} bursts, {} answered one per sleep, {} partly held, {} all held, {} failed",
        tally.setting,
        tally.trials,
        tally.one_per_sleep,
        tally.partly_held,
        tally.all_held,
        tally.failed
    )
}
