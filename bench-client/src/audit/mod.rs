//! `bench-client audit`: a results folder stood against the code and the pages, apart from the
//! tests, so that a rerun on any machine never fails the test command and still learns which
//! sentences its run does not bear out. It says, for each part:
//!
//! - each run of the main job: `fresh`, `stale` (the code that measures it changed since; with
//!   the command that measures it again) or `not run`;
//! - each generated block of the pages (the README's results block, every page's figures):
//!   whether it is what `bench-client redraw` would draw from the results, stale notes
//!   included (only for the repository's own `results/`, which the pages copy);
//! - every claim the pages name ([`crate::experiments::claims`]): `holds`; `differs` (an
//!   observation of the reference run that this run does not show); `n/a` (the run lacks what
//!   the claim needs); `false` (a physics claim this run contradicts);
//! - the probe's own check against the comparisons of the same routes ([`agreement`]);
//! - any results file that no run of the job writes (it would never be found stale).
//!
//! It fails on a `false` claim, a claim no experiment has, an unreadable record, a block
//! that does not match its results, or a results file no run writes; never on `stale`,
//! `differs` or `n/a`.

mod agreement;
mod text;

use std::path::{Path, PathBuf};

use crate::experiments::Experiment as _;
use crate::experiments::claims::{self, Kind, Standing};
use crate::experiments::comparison::Comparison;
use crate::experiments::comparison::views::readme::{self, README};
use crate::job::runs::{RECORD, main_job};
use crate::redraw::readme_report;
use crate::report::block::{FIGURES, RESULTS};
use crate::report::pages::{self, same_file};
use crate::report::stacks::STACKS;
use crate::stale::{self, Stale, is_results_file, results_files};

/// Where a run of the main job stands in the audited folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStanding {
    Fresh,
    /// Measured by other code than this build's, or with other flags: why, in one line.
    Stale(String),
    /// No results file of it in the folder.
    NotRun,
}

/// One run of the main job, with its command and standing.
#[derive(Debug, Clone)]
pub struct RunLine {
    pub name: &'static str,
    /// The command that measures it again.
    pub rerun: String,
    pub standing: RunStanding,
}

/// One claim named on a page, where it stands.
#[derive(Debug, Clone)]
pub struct ClaimLine {
    /// The page, from the repository's root, and the line of the claim's marker.
    pub page: String,
    pub line: usize,
    pub name: String,
    /// `None`: no experiment has a claim of that name.
    pub kind: Option<Kind>,
    pub standing: Standing,
}

/// Everything one audit found.
#[derive(Debug, Clone)]
pub struct Audit {
    /// The audited folder.
    pub results: PathBuf,
    pub runs: Vec<RunLine>,
    /// How many generated blocks were compared, and each that does not match; `None` where
    /// the folder is not the one the pages copy.
    pub blocks: Option<(usize, Vec<String>)>,
    pub claims: Vec<ClaimLine>,
    /// The probe's verdicts against the comparisons' on the routes both judged.
    pub agreement: Standing,
    /// Results files no run of the job writes.
    pub unclaimed: Vec<PathBuf>,
}

impl Audit {
    /// Audits the results folder `results` against the code of this build and the pages
    /// under the repository's root `root`.
    pub fn of(root: &Path, results: &Path) -> Audit {
        let own = same_file(results, &root.join(claims::RESULTS));
        let stale = stale::stale_in(root, results);
        Audit {
            results: results.to_owned(),
            runs: runs(root, &stale),
            blocks: own.then(|| blocks(root, &stale::notes_of(&stale))),
            claims: claim_lines(root, results),
            agreement: agreement::standing(results),
            unclaimed: unclaimed(results),
        }
    }

    /// Whether the pages may not stand with this folder: a false or unknown claim, an
    /// unreadable record, a block that does not match, a results file no run writes.
    pub fn fails(&self) -> bool {
        let claims = self
            .claims
            .iter()
            .any(|line| line.kind.is_none() || line.standing.fails());
        let blocks = self
            .blocks
            .as_ref()
            .is_some_and(|(_, wrong)| !wrong.is_empty());
        claims || blocks || self.agreement.fails() || !self.unclaimed.is_empty()
    }

    /// The audit as the terminal shows it: every line (`brief`: all but the claims that
    /// hold and the fresh runs), then the summary.
    pub fn text(&self, brief: bool) -> String {
        text::text(self, brief)
    }
}

/// Each run of the main job, as it stands given the runs that are `stale` (those with no
/// results file have not run).
fn runs(root: &Path, stale: &[Stale]) -> Vec<RunLine> {
    let lines = main_job().into_iter().map(|run| {
        let standing = match stale.iter().find(|one| one.run.name() == run.name()) {
            Some(one) if one.files.is_empty() => RunStanding::NotRun,
            Some(one) => RunStanding::Stale(stale::explain(root, std::slice::from_ref(one))),
            None => RunStanding::Fresh,
        };
        RunLine {
            name: run.name(),
            rerun: run.rerun(),
            standing,
        }
    });
    lines.collect()
}

/// How many generated blocks the pages under `root` hold, and each that is not what
/// `redraw` would draw from the committed results, whose stale runs' `notes` they carry.
fn blocks(root: &Path, notes: &pages::Stale) -> (usize, Vec<String>) {
    let (mut count, mut wrong) = (0, Vec::new());
    for page in pages::pages(root) {
        let shown = page
            .strip_prefix(root)
            .unwrap_or(&page)
            .display()
            .to_string();
        let Ok(text) = std::fs::read_to_string(&page) else {
            wrong.push(format!("{shown}: cannot be read"));
            continue;
        };
        count += FIGURES.count(&text) + RESULTS.count(&text) + STACKS.count(&text);
        count += crate::report::stacks::inline_count(&text);
        match pages::refresh(&text, &page, root, notes) {
            Ok(drawn) if drawn == text => {}
            Ok(_) => wrong.push(format!(
                "{shown}: a block differs from its results or the stacks' descriptions"
            )),
            Err(why) => wrong.push(format!("{shown}: {why}")),
        }
    }
    let readme = root.join(README);
    if let Some(why) = readme_block_differs(root, &readme, notes) {
        wrong.push(format!("{README}: {why}"));
    }
    (count, wrong)
}

/// Why the README's results block is not what the committed comparison draws, if it is not.
fn readme_block_differs(root: &Path, readme: &Path, notes: &pages::Stale) -> Option<String> {
    let text = match std::fs::read_to_string(readme) {
        Ok(text) => text,
        Err(error) => return Some(error.to_string()),
    };
    let dir = root.join(claims::RESULTS);
    let report = match readme_report(&dir, readme) {
        Ok(report) => report,
        Err(error) => return Some(error.to_string()),
    };
    let note = pages::note_for(notes, &dir.join(Comparison::RECORD));
    let body = readme::block(&report, note);
    match RESULTS.rewrite(&text, |_| Ok(body.clone())) {
        Ok(drawn) if drawn == text => None,
        Ok(_) => Some("the results block differs from results/results.json".to_owned()),
        Err(why) => Some(why.to_string()),
    }
}

/// Every claim the pages under `root` name, stood against `results`.
fn claim_lines(root: &Path, results: &Path) -> Vec<ClaimLine> {
    let lines = claims::named(root).into_iter().map(|(page, claim)| {
        let standing = claims::check(&claim.name, &claim.on, results);
        ClaimLine {
            page,
            line: claim.line,
            kind: claims::kind(&claim.name),
            standing: standing.unwrap_or_else(|| {
                Standing::False("no experiment has a claim of this name".to_owned())
            }),
            name: claim.name,
        }
    });
    lines.collect()
}

/// Every results file (JSON or Markdown) under `results` that no run of the job writes.
fn unclaimed(results: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    files_under(results, &mut files);
    let claimed: Vec<PathBuf> = (main_job().iter())
        .flat_map(|run| results_files(results, &claims::folder(results, run.results().1)))
        .chain([claims::folder(results, RECORD)])
        .collect();
    files.retain(|file| !claimed.contains(file));
    files
}

fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, found);
        } else if is_results_file(&path) {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests;
