//! Which experiments of the main job are stale: their results record another code stamp than
//! the one this binary was built with for them (`src/stamps.rs` says what each stamp
//! covers), and why. `bench-client all --stale` reruns those; the test `fresh_results`
//! fails while there are any.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::job::{self, Done, Experiment, MAIN_JOB, RECORD, Run};
use crate::measure::environment::current_stamp;
use crate::stamps;

/// Runs only the experiments whose results are stale in the repository at `root` (the
/// working folder), after saying which and why. Writes no record: it tells of a whole run.
pub async fn run(root: &Path) -> Vec<Done> {
    let stale = stale_experiments(root);
    eprintln!("{}", explain(root, &stale));
    let experiments: Vec<&'static Experiment> = stale.iter().map(|s| s.experiment).collect();
    if experiments.is_empty() {
        return Vec::new();
    }
    let done = job::run_each(&experiments).await;
    eprintln!("left {RECORD} as it was: it records a whole run of the job");
    job::refresh_pages();
    done
}

/// A stale experiment of the main job, and why.
#[derive(Debug, Clone)]
pub struct Stale {
    pub experiment: &'static Experiment,
    /// Its stamp in this build.
    pub now: &'static str,
    /// Each of its results files whose stamp is not `now`, with the stamp it records.
    pub recorded: Vec<(PathBuf, Option<String>)>,
    /// The stamped files that changed since the commit its results record, from `git diff`
    /// (empty where the commit is unknown).
    pub changed: Vec<String>,
}

/// Every experiment of the main job whose results, in the repository at `root`, record
/// another stamp than this build's (or none, or have no results file at all).
pub fn stale_experiments(root: &Path) -> Vec<Stale> {
    MAIN_JOB
        .iter()
        .filter_map(|experiment| stale(root, experiment))
        .collect()
}

/// `experiment`, if it is stale.
fn stale(root: &Path, experiment: &'static Experiment) -> Option<Stale> {
    let (name, out) = experiment.results();
    let now = current_stamp(name);
    let files = results_files(root, &out);
    let mut recorded: Vec<(PathBuf, Option<String>)> = files
        .iter()
        .map(|file| {
            (
                file.clone(),
                recorded_field(file, "code_stamp", "code stamp"),
            )
        })
        .filter(|(_, stamp)| stamp.as_deref() != Some(now))
        .collect();
    if files.is_empty() {
        recorded.push((root.join(&out), None));
    } else if recorded.is_empty() {
        return None;
    }
    let commit = (files.iter()).find_map(|file| recorded_field(file, "git_commit", "git commit"));
    let changed = commit.map_or_else(Vec::new, |commit| changed_since(root, &commit, name));
    Some(Stale {
        experiment,
        now,
        recorded,
        changed,
    })
}

/// The results files of an experiment whose results are at `out` under `root`: the file
/// itself, or the JSON and Markdown files directly in the folder but those another
/// experiment of the job writes there (the scripts' files) and the job's record.
pub fn results_files(root: &Path, out: &Path) -> Vec<PathBuf> {
    let path = root.join(out);
    if path.is_file() {
        return vec![path];
    }
    let others: Vec<PathBuf> = (MAIN_JOB.iter())
        .filter_map(|experiment| match experiment.run {
            Run::Script { writes, .. } => Some(root.join(writes)),
            Run::Command(_) => None,
        })
        .chain([root.join(RECORD)])
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|file| file.is_file() && is_results_file(file) && !others.contains(file))
        .collect();
    files.sort();
    files
}

/// A JSON or Markdown file: what records a stamp (the plots do not).
pub fn is_results_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "json" || ext == "md")
}

/// A field of the environment a results file records: `json_key` of its JSON
/// `environment`, or its Markdown line `- markdown_label: `value``.
pub fn recorded_field(path: &Path, json_key: &str, markdown_label: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    if path.extension()? == "json" {
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        return Some(json["environment"][json_key].as_str()?.to_owned());
    }
    let prefix = format!("- {markdown_label}: `");
    let line = text.lines().find_map(|line| line.strip_prefix(&prefix))?;
    Some(line.split('`').next()?.to_owned())
}

/// The files `stamps` covers for the experiment `name` that differ between `commit` and
/// the working tree at `root`, by `git diff --name-only`; empty if git cannot say.
fn changed_since(root: &Path, commit: &str, name: &str) -> Vec<String> {
    let Some(stamped) = stamps::find(name) else {
        return Vec::new();
    };
    let commit = commit.trim_end_matches("+dirty");
    let paths = stamped.paths(root);
    let relative = paths.iter().filter_map(|path| path.strip_prefix(root).ok());
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["diff", "--name-only", commit, "--"])
        .args(relative)
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// How many changed files [`explain`] names for one experiment.
const SHOWN: usize = 12;

/// Which experiments are stale and why, each with the command that reruns it alone; paths
/// from `root`.
pub fn explain(root: &Path, stale: &[Stale]) -> String {
    if stale.is_empty() {
        return "every experiment's results were measured by the code as it is: none is stale"
            .to_owned();
    }
    let shown = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let mut out = format!("{} stale experiment(s):\n", stale.len());
    for one in stale {
        let experiment = one.experiment;
        let _ = writeln!(
            out,
            "- {}: `{}`",
            experiment.name,
            experiment.command_line()
        );
        let mut recorded: Vec<&Option<String>> = one.recorded.iter().map(|(_, s)| s).collect();
        recorded.dedup();
        let files: Vec<String> = one.recorded.iter().map(|(file, _)| shown(file)).collect();
        let recorded: Vec<&str> = (recorded.iter())
            .map(|stamp| stamp.as_deref().unwrap_or("no stamp"))
            .collect();
        let (recorded, now) = (recorded.join(" and "), one.now);
        let _ = writeln!(
            out,
            "  recorded {recorded}, now {now} ({})",
            files.join(", ")
        );
        let (first, more) = one.changed.split_at(one.changed.len().min(SHOWN));
        if !first.is_empty() {
            let _ = write!(
                out,
                "  changed since the commit they record: {}",
                first.join(", ")
            );
            match more.len() {
                0 => out.push('\n'),
                more => {
                    let _ = writeln!(out, " and {more} more");
                }
            }
        }
    }
    out
}
