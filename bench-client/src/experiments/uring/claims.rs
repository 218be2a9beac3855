//! What the pages say the io_uring experiment showed ([`crate::experiments::claims`]).

use super::UringReport;
use super::tally::HeldTally;
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, named_on, present};

const URING: &str = "results/uring";

pub const CLAIMS: &[Claim<UringReport>] = &[
    Claim {
        name: "uring.each-change-alone-flips-the-answers",
        dir: URING,
        kind: Kind::Observed,
        holds: |report, on| {
            for server in named_on(on, 1)? {
                none_one_per_sleep(held(report, server)?)?;
                let changed = settings(report, &format!("{server} ("));
                present(changed.first(), || {
                    format!("no setting that changes {server}")
                })?;
                changed.into_iter().try_for_each(every_one_per_sleep)?;
            }
            Ok(())
        },
    },
    Claim {
        name: "uring.needs-two-changes-together",
        dir: URING,
        kind: Kind::Observed,
        holds: |report, on| {
            // The stack, then its setting of two changes as the page names it.
            let [server, together] = named_on(on, 2)?[..] else {
                return Err(Shortfall::Lacks(
                    "a stack and its two-change variant".to_owned(),
                ));
            };
            let variant = demo_contract::variant::of_server(server).find(|v| v.name == together);
            let together = present(variant, || format!("no variant {together} of {server}"))?;
            let together = together.label;
            every_one_per_sleep(held(report, together)?)?;
            let others = settings(report, server).into_iter();
            let alone: Vec<&HeldTally> = others.filter(|tally| tally.setting != together).collect();
            present((alone.len() > 1).then_some(()), || {
                "no stock ntex or one change alone".to_owned()
            })?;
            alone.into_iter().try_for_each(none_one_per_sleep)
        },
    },
    Claim {
        name: "uring.answer-one-per-sleep",
        dir: URING,
        kind: Kind::Observed,
        holds: |report, on| {
            (named_on(on, 1)?.into_iter())
                .try_for_each(|server| every_one_per_sleep(held(report, server)?))
        },
    },
    Claim {
        name: "uring.a-leading-ping-is-served-first-yet-can-be-held",
        dir: URING,
        kind: Kind::Observed,
        holds: |report, _on| {
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
