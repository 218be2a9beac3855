//! The README's results block: the comparison table and the findings, between two markers,
//! rewritten by a full default run.

use std::fmt::Write as _;
use std::path::Path;

use super::Report;
use super::findings::findings;
use super::tables::{comparison_table, probe_table};
use super::write_atomically;

/// The markers of the README's results block, which [`refresh`] rewrites.
pub const BEGIN: &str = "<!-- results:begin (written by bench-client; do not edit) -->";
pub const END: &str = "<!-- results:end -->";

/// The block: where the figures come from, the tables and the findings.
pub fn block(report: &Report) -> String {
    let environment = &report.environment;
    let mut out = format!(
        "Measured by `{}` on {} ({}, {} cores), commit `{}`; the full record, with the \
         environment, is [results/RESULTS.md](results/RESULTS.md).\n\n",
        report.command,
        environment.date.get(..10).unwrap_or(&environment.date),
        environment.cpu,
        environment.cores,
        environment
            .git_commit
            .get(..12)
            .unwrap_or(&environment.git_commit),
    );
    out.push_str(&comparison_table(report));
    if let Some(probes) = probe_table(report) {
        out.push_str("\nThe two probes, side by side:\n\n");
        out.push_str(&probes);
    }
    out.push('\n');
    for sentence in findings(report) {
        let _ = writeln!(out, "- {sentence}");
    }
    out
}

/// Replaces what stands between [`BEGIN`] and [`END`] in the file at `path` with
/// [`block`], atomically.
pub fn refresh(report: &Report, path: &Path) -> std::io::Result<()> {
    let text = std::fs::read_to_string(path)?;
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        return Err(std::io::Error::other(format!(
            "{} has no {BEGIN} ... {END} block",
            path.display()
        )));
    };
    let head = &text[..begin + BEGIN.len()];
    let tail = &text[end..];
    let refreshed = format!("{head}\n{}{tail}", block(report));
    write_atomically(path, refreshed.as_bytes())
}
