//! `bench-client redraw`: every view rewritten from the committed records, measuring
//! nothing. A change to a table, a plot or a page's figures needs this, never a rerun.
//!
//! A results folder is known by the record it holds: `results.json` (the comparison),
//! `race.json`, `sweep.json`, `rest.json`, `uring.json`, `health.json` or `detectors.json`.
//! With no folder named, every such folder under `results/` is redrawn, then the README's
//! results block (from `results/`, the full default comparison) and the figures blocks of
//! every page.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::{
    DetectorsReport, HealthReport, RaceReport, Report, RestReport, SweepReport, UringReport, pages,
    readme,
};

/// Where the committed results live, from the repository's root.
pub const RESULTS: &str = "results";
/// The page whose results block the full comparison rewrites.
pub const README: &str = "README.md";

/// The records a results folder may hold, by file name.
const RECORDS: [&str; 7] = [
    "results.json",
    "race.json",
    "sweep.json",
    "rest.json",
    "uring.json",
    "health.json",
    "detectors.json",
];

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
            readme: Some(root.join(README)),
            pages: true,
        }
    }

    /// Redraws each folder, then the README's block and the pages, as asked; `root` is the
    /// repository's root, from which the pages are found.
    pub fn run(&self, root: &Path) -> Result<(), String> {
        for dir in &self.dirs {
            redraw_dir(dir).map_err(|error| format!("cannot redraw {}: {error}", dir.display()))?;
            eprintln!("redrew {}", dir.display());
        }
        if let Some(readme) = &self.readme {
            let comparison = self.dirs.first().map_or(root.join(RESULTS), Clone::clone);
            redraw_readme(&comparison, readme)?;
        }
        if self.pages {
            for page in pages::refresh_all(root)? {
                eprintln!("redrew the figures of {}", page.display());
            }
        }
        Ok(())
    }
}

/// Every folder under `results` (itself included) that holds a record, in path order.
pub fn results_dirs(results: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    collect_dirs(results, &mut dirs);
    dirs.sort();
    dirs
}

fn collect_dirs(dir: &Path, dirs: &mut Vec<PathBuf>) {
    if RECORDS.iter().any(|record| dir.join(record).is_file()) {
        dirs.push(dir.to_owned());
    }
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    for entry in entries.filter(|entry| entry.path().is_dir()) {
        collect_dirs(&entry.path(), dirs);
    }
}

/// Rewrites one folder's views from the record it holds.
fn redraw_dir(dir: &Path) -> Result<(), String> {
    let views = |result: std::io::Result<()>| result.map_err(|error| error.to_string());
    match RECORDS.iter().find(|record| dir.join(record).is_file()) {
        Some(&"results.json") => views(read::<Report>(dir, "results.json")?.write_views(dir)),
        Some(&"race.json") => views(read::<RaceReport>(dir, "race.json")?.write_views(dir)),
        Some(&"sweep.json") => views(read::<SweepReport>(dir, "sweep.json")?.write_views(dir)),
        Some(&"rest.json") => views(read::<RestReport>(dir, "rest.json")?.write_views(dir)),
        Some(&"uring.json") => views(read::<UringReport>(dir, "uring.json")?.write_views(dir)),
        Some(&"health.json") => views(read::<HealthReport>(dir, "health.json")?.write_views(dir)),
        Some(_) => views(read::<DetectorsReport>(dir, "detectors.json")?.write_views(dir)),
        None => Err(format!("no record here (one of {})", RECORDS.join(", "))),
    }
}

/// The record `name` in `dir`, read back.
fn read<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<T, String> {
    let json = std::fs::read_to_string(dir.join(name)).map_err(|error| error.to_string())?;
    serde_json::from_str(&json).map_err(|error| format!("{name}: {error}"))
}

/// The README's block from the comparison in `dir`, which must be a complete default one.
fn redraw_readme(dir: &Path, page: &Path) -> Result<(), String> {
    let report: Report = read(dir, "results.json")
        .map_err(|error| format!("cannot redraw {}: {error}", page.display()))?;
    if !readme::stands_for_readme(&report) {
        let why = readme::ONLY_COMPLETE;
        return Err(format!("{} stays as it was: {why}", page.display()));
    }
    readme::refresh(&report, page)
        .map_err(|error| format!("cannot refresh {}: {error}", page.display()))
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
        let error = redraw_dir(&root.join("static")).unwrap_err();
        assert!(error.contains("no record here"), "{error}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
