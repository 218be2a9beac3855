//! The audit as the terminal shows it: a section per part, one line per run or claim, and a
//! closing summary that counts each standing.

use std::fmt::Write as _;

use super::{Audit, ClaimLine, RunStanding};
use crate::experiments::claims::{Kind, Standing};

/// Every part of `audit`; `brief` leaves out the fresh runs and the claims that hold.
pub fn text(audit: &Audit, brief: bool) -> String {
    let mut out = format!("audit of {}\n", audit.results.display());
    runs(&mut out, audit, brief);
    blocks(&mut out, audit);
    claims(&mut out, audit, brief);
    let agreement = &audit.agreement;
    let _ = writeln!(
        out,
        "\nthe probe against the comparisons: {}",
        said(agreement)
    );
    for file in &audit.unclaimed {
        let _ = writeln!(out, "no run of the job writes {}", file.display());
    }
    out.push('\n');
    out.push_str(&summary(audit));
    out
}

fn runs(out: &mut String, audit: &Audit, brief: bool) {
    let count = |wanted: fn(&RunStanding) -> bool| {
        audit
            .runs
            .iter()
            .filter(|run| wanted(&run.standing))
            .count()
    };
    let (fresh, not_run) = (
        count(|s| *s == RunStanding::Fresh),
        count(|s| *s == RunStanding::NotRun),
    );
    let stale = audit.runs.len() - fresh - not_run;
    let _ = writeln!(
        out,
        "\nruns: {fresh} fresh, {stale} stale, {not_run} not run"
    );
    for run in &audit.runs {
        match &run.standing {
            RunStanding::Fresh if brief => {}
            RunStanding::Fresh => {
                let _ = writeln!(out, "  fresh    {}", run.name);
            }
            RunStanding::NotRun => {
                let _ = writeln!(out, "  not run  {}: `{}`", run.name, run.rerun);
            }
            RunStanding::Stale(why) => {
                let _ = writeln!(out, "  stale    {}: `{}`", run.name, run.rerun);
                // The lines under explain()'s heading and the run's own line: why.
                for line in why.lines().skip(2) {
                    let _ = writeln!(out, "         {}", line.trim_start());
                }
            }
        }
    }
}

fn blocks(out: &mut String, audit: &Audit) {
    match &audit.blocks {
        None => {
            let _ = writeln!(
                out,
                "\nblocks: not checked (the pages copy the repository's own results/)"
            );
        }
        Some((count, wrong)) => {
            let pages = wrong.len();
            let _ = writeln!(
                out,
                "\nblocks: {count}, on {pages} pages that differ from their results"
            );
            for why in wrong {
                let _ = writeln!(out, "  differs  {why}");
            }
            if !wrong.is_empty() {
                out.push_str("  `bench-client redraw` draws them again, measuring nothing\n");
            }
        }
    }
}

fn claims(out: &mut String, audit: &Audit, brief: bool) {
    let _ = writeln!(out, "\nclaims: {}", counts(&audit.claims));
    for line in &audit.claims {
        if brief && line.standing == Standing::Holds {
            continue;
        }
        let kind = match line.kind {
            Some(Kind::Physics) => "physics",
            Some(Kind::Observed) => "observed",
            None => "unknown",
        };
        let (word, page, at, name) = (line.standing.word(), &line.page, line.line, &line.name);
        let _ = write!(out, "  {word:<8} {page}:{at} {name} ({kind})");
        match line.standing.detail() {
            Some(detail) => {
                let _ = writeln!(out, ": {detail}");
            }
            None => out.push('\n'),
        }
    }
}

/// "N hold, N differ, N n/a, N false".
fn counts(claims: &[ClaimLine]) -> String {
    let count = |word: &str| {
        (claims.iter())
            .filter(|c| c.standing.word() == word)
            .count()
    };
    let mut said = format!(
        "{} hold, {} differ, {} n/a, {} false",
        count("holds"),
        count("differs"),
        count("n/a"),
        count("false")
    );
    if count("unreadable") > 0 {
        let _ = write!(said, ", {} unreadable", count("unreadable"));
    }
    said
}

fn said(standing: &Standing) -> String {
    match standing.detail() {
        Some(detail) => format!("{} ({detail})", standing.word()),
        None => standing.word().to_owned(),
    }
}

/// The closing lines: the counts, and whether the audit passed.
pub fn summary(audit: &Audit) -> String {
    let stale = (audit.runs.iter())
        .filter(|run| matches!(run.standing, RunStanding::Stale(_)))
        .count();
    let blocks = match &audit.blocks {
        Some((count, wrong)) => format!("{count} blocks, on {} pages that differ", wrong.len()),
        None => "blocks not checked".to_owned(),
    };
    let verdict = match audit.fails() {
        true => "FAILED: a false claim, a block that does not match, or a file no run writes",
        false => "passed (stale runs and claims that differ are shown, not failed)",
    };
    format!(
        "audit: {stale} stale runs; {blocks}; claims {}; {verdict}\n",
        counts(&audit.claims)
    )
}
