//! `bench-client redraw`: every view rewritten from the committed records, measuring
//! nothing. A change to a table, a plot or a page's figures needs this, never a rerun.
//!
//! A results folder is known by the record it holds: each experiment of
//! [`experiments::ALL`] names its own (`results.json`, `race.json`, ...). With no folder
//! named, every such folder under `results/` is redrawn, then the README's results block
//! (from `results/`, the full default comparison) and the figures blocks of every page.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::experiments::claims::RESULTS;
use crate::experiments::comparison::views::readme;
use crate::experiments::comparison::{Comparison, Report};
use crate::experiments::{self, Entry, Experiment as _};
use crate::report::pages;
use crate::stale;

/// What `redraw` does: the folders to redraw, and whether the README's block and the
/// pages' figures follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redraw {
    pub dirs: Vec<PathBuf>,
    pub readme: Option<PathBuf>,
    pub pages: bool,
}

impl Redraw {
    /// Everything, from the repository's root `root`.
    pub fn everything(root: &Path) -> Redraw {
        Redraw {
            dirs: results_dirs(&root.join(RESULTS)),
            readme: Some(root.join(readme::README)),
            pages: true,
        }
    }

    /// Redraws each folder, then the README's block and the pages, as asked; `root` is the
    /// repository's root, from which the pages are found.
    pub fn run(&self, root: &Path) -> Result<(), Error> {
        for dir in &self.dirs {
            redraw_dir(dir)?;
            eprintln!("redrew {}", dir.display());
        }
        let notes = stale::notes(root);
        if let Some(readme) = &self.readme {
            let comparison = self.dirs.first().map_or(root.join(RESULTS), Clone::clone);
            redraw_readme(&comparison, readme, &notes)?;
        }
        if self.pages {
            for page in pages::refresh_all(root, &notes)? {
                eprintln!("redrew the figures of {}", page.display());
            }
            eprintln!("`bench-client audit` stands the pages' claims against the results");
        }
        Ok(())
    }
}

/// The experiment whose record `dir` holds.
fn recorded_in(dir: &Path) -> Option<&'static dyn Entry> {
    (experiments::ALL.iter().copied()).find(|entry| {
        entry
            .record()
            .is_some_and(|record| dir.join(record).is_file())
    })
}

/// Every folder under `results` (itself included) that holds a record, in path order.
pub fn results_dirs(results: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    collect_dirs(results, &mut dirs);
    dirs.sort();
    dirs
}

fn collect_dirs(dir: &Path, dirs: &mut Vec<PathBuf>) {
    if recorded_in(dir).is_some() {
        dirs.push(dir.to_owned());
    }
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    for entry in entries.filter(|entry| entry.path().is_dir()) {
        collect_dirs(&entry.path(), dirs);
    }
}

/// Rewrites one folder's views from the record it holds.
fn redraw_dir(dir: &Path) -> Result<(), Error> {
    match recorded_in(dir) {
        Some(entry) => entry.redraw(dir),
        None => Err(Error::NoRecord {
            dir: dir.to_owned(),
            known: (experiments::ALL.iter())
                .filter_map(|entry| entry.record())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The README's block from the comparison in `dir`, which must be a complete default one;
/// `notes`, what [`stale::notes`] says of the stale runs.
fn redraw_readme(dir: &Path, page: &Path, notes: &pages::Stale) -> Result<(), Error> {
    let report = readme_report(dir, page)?;
    let note = pages::note_for(notes, &dir.join(Comparison::RECORD));
    readme::refresh(&report, page, note)
}

/// The comparison in `dir` that the README's block at `page` is drawn from: a complete run
/// of the full default comparison, or an error saying the page stays as it was.
pub fn readme_report(dir: &Path, page: &Path) -> Result<Report, Error> {
    let report = experiments::read_record::<Comparison>(dir)?;
    if !readme::stands_for_readme(&report) {
        return Err(Error::NotFull {
            page: page.to_owned(),
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_known_by_its_record() {
        let root = std::env::temp_dir().join(format!("redraw-{}", std::process::id()));
        for (dir, record) in [
            ("", "results.json"),
            ("race", "race.json"),
            ("a/b", "sweep.json"),
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join(record), "{}").unwrap();
        }
        std::fs::create_dir_all(root.join("static")).unwrap();
        std::fs::write(root.join("static/static.json"), "{}").unwrap();
        let found = results_dirs(&root);
        assert_eq!(found, [root.clone(), root.join("a/b"), root.join("race")]);
        let error = redraw_dir(&root.join("static")).unwrap_err().to_string();
        assert!(error.starts_with("no record in "), "{error}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
