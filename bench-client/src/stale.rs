//! Which runs of the main job are stale: their results record another code stamp than the
//! one this binary was built with for their experiment (its `Code`, with what `src/stamps.rs`
//! adds), and why. `bench-client all --stale` reruns those; `bench-client audit` lists them,
//! and every generated block that copies a stale run says so where it stands ([`notes`]).
//! A stale run is shown, never refused: a change that only moves code may land before the
//! rerun.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::experiments::Code;
use crate::experiments::claims::{RESULTS, folder};
use crate::experiments::current_stamp;
use crate::job::runs::{Done, RECORD, Run, main_job, run_each};
use crate::report::pages;

/// Runs only the experiments whose results are stale in the repository at `root` (the
/// working folder), after saying which and why. Writes no record: it tells of a whole run.
pub async fn run(root: &Path) -> Vec<Done> {
    let stale = stale_experiments(root);
    eprintln!("{}", explain(root, &stale));
    let runs: Vec<Run> = stale.iter().map(|stale| stale.run).collect();
    if runs.is_empty() {
        return Vec::new();
    }
    let done = run_each(&runs).await;
    eprintln!("left {RECORD} as it was: it records a whole run of the job");
    refresh_pages(root);
    done
}

/// Rewrites the figures blocks of the README and the lesson pages under `root` from the
/// results there, so that every page states what the runs measured, and which are stale.
pub fn refresh_pages(root: &Path) {
    match pages::refresh_all(root, &notes(root)) {
        Ok(pages) => {
            (pages.iter()).for_each(|page| eprintln!("rewrote the figures of {}", page.display()))
        }
        Err(error) => eprintln!("bench-client: cannot refresh the pages' figures: {error}"),
    }
}

/// A stale run of the main job, and why.
#[derive(Debug, Clone)]
pub struct Stale {
    pub run: Run,
    /// Its results files; none if it has not run.
    pub files: Vec<PathBuf>,
    /// Its stamp in this build.
    pub now: String,
    /// Each of its results files whose stamp is not `now`, with the stamp it records.
    pub recorded: Vec<(PathBuf, Option<String>)>,
    /// The stamped files that changed since the commit its results record, from `git diff`
    /// (empty where the commit is unknown).
    pub changed: Vec<String>,
    /// The command line its results record, where it is not the one its experiment's job
    /// gives: a flag changed there changes what is measured as surely as code.
    pub command_was: Option<String>,
}

/// Every run of the main job whose results, in the repository at `root`, record another
/// stamp than this build's (or none, or have no results file at all).
pub fn stale_experiments(root: &Path) -> Vec<Stale> {
    stale_in(root, &root.join(RESULTS))
}

/// As [`stale_experiments`], for the results folder `results` laid out as `results/` is
/// (the repository's own, or a rerun's elsewhere); `root` is the repository, whose history
/// says what changed.
pub fn stale_in(root: &Path, results: &Path) -> Vec<Stale> {
    main_job()
        .into_iter()
        .filter_map(|run| stale(root, results, run))
        .collect()
}

/// The note every generated block copying a stale run's results carries, with the command
/// that reruns it.
pub fn note(run: &Run) -> String {
    format!(
        "*Stale: the code that measures this has changed since this run; `{}` measures it \
         again.*",
        run.rerun()
    )
}

/// Each results file of a stale run under the repository's `root`, with its [`note`]: what
/// the pages' generated blocks read to say so.
pub fn notes(root: &Path) -> Vec<(PathBuf, String)> {
    notes_of(&stale_experiments(root))
}

/// Each results file of the runs `stale`, with its [`note`].
pub fn notes_of(stale: &[Stale]) -> Vec<(PathBuf, String)> {
    let each = stale.iter().flat_map(|one| {
        let note = note(&one.run);
        one.files
            .iter()
            .map(move |file| (file.clone(), note.clone()))
    });
    each.collect()
}

/// `run`, if it is stale in the results folder `results`.
fn stale(root: &Path, results: &Path, run: Run) -> Option<Stale> {
    let (code, out) = run.results();
    let now = current_stamp(&code);
    let out = folder(results, &out);
    let files = results_files(results, &out);
    // Each file read and parsed once: some records are megabytes of JSON.
    let records: Vec<Record> = files.iter().map(|file| Record::read(file)).collect();
    let mut recorded: Vec<(PathBuf, Option<String>)> = (files.iter().zip(&records))
        .filter(|(_, record)| record.stamp.as_deref() != Some(now.as_str()))
        .map(|(file, record)| (file.clone(), record.stamp.clone()))
        .collect();
    // A script's results record no command line, and are stamped by their script alone.
    let command_was = (records.iter().find_map(|record| record.command.clone()))
        .filter(|was| measured(was) != measured(&run.command_line()));
    if files.is_empty() {
        recorded.push((out, None));
    } else if recorded.is_empty() && command_was.is_none() {
        return None;
    }
    let commit = records.into_iter().find_map(|record| record.commit);
    let changed = commit.map_or_else(Vec::new, |commit| changed_since(root, &commit, &code));
    Some(Stale {
        run,
        files,
        now,
        recorded,
        changed,
        command_was,
    })
}

/// What a command line measures: its words but where it writes (`--out`, `--readme` and
/// their values), so that a rerun into another folder is the same measurement.
fn measured(command: &str) -> Vec<&str> {
    let mut words = command.split_whitespace();
    let mut kept = Vec::new();
    while let Some(word) = words.next() {
        match word {
            "--out" | "--readme" => drop(words.next()),
            _ if word.starts_with("--out=") || word.starts_with("--readme=") => {}
            _ => kept.push(word),
        }
    }
    kept
}

/// The results files of an experiment whose results are at `out` within the results folder
/// `results`: the file itself, or the JSON and Markdown files directly in the folder but
/// those another experiment of the job writes there (the scripts' files) and the job's
/// record.
pub fn results_files(results: &Path, out: &Path) -> Vec<PathBuf> {
    let path = out.to_owned();
    if path.is_file() {
        return vec![path];
    }
    // A script's results are a file, which no folder's experiment wrote.
    let others: Vec<PathBuf> = (main_job().iter())
        .map(|run| folder(results, run.results().1))
        .filter(|path| path.is_file())
        .chain([folder(results, RECORD)])
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
    Parsed::read(path)?.field(json_key, markdown_label)
}

/// What a results file records of the run that wrote it.
struct Record {
    stamp: Option<String>,
    commit: Option<String>,
    /// The command line, which only a JSON record holds.
    command: Option<String>,
}

impl Record {
    fn read(path: &Path) -> Record {
        let parsed = Parsed::read(path);
        let field = |json_key, markdown_label| parsed.as_ref()?.field(json_key, markdown_label);
        let command = match &parsed {
            Some(Parsed::Json(json)) => json["command"].as_str().map(str::to_owned),
            _ => None,
        };
        Record {
            stamp: field("code_stamp", "code stamp"),
            commit: field("git_commit", "git commit"),
            command,
        }
    }
}

/// A results file, read: its JSON, or its Markdown text.
enum Parsed {
    Json(serde_json::Value),
    Markdown(String),
}

impl Parsed {
    fn read(path: &Path) -> Option<Parsed> {
        let text = std::fs::read_to_string(path).ok()?;
        match path.extension()? == "json" {
            true => serde_json::from_str(&text).ok().map(Parsed::Json),
            false => Some(Parsed::Markdown(text)),
        }
    }

    /// `json_key` of the JSON's `environment`, or the Markdown line `- markdown_label: `value``.
    fn field(&self, json_key: &str, markdown_label: &str) -> Option<String> {
        match self {
            Parsed::Json(json) => Some(json["environment"][json_key].as_str()?.to_owned()),
            Parsed::Markdown(text) => {
                let prefix = format!("- {markdown_label}: `");
                let line = text.lines().find_map(|line| line.strip_prefix(&prefix))?;
                Some(line.split('`').next()?.to_owned())
            }
        }
    }
}

/// The files `code` covers that differ between `commit` and the working tree at `root`, by
/// `git diff --name-only`; empty if git cannot say.
fn changed_since(root: &Path, commit: &str, code: &Code) -> Vec<String> {
    let commit = commit.trim_end_matches("+dirty");
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["diff", "--name-only", commit])
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|path| code.covers(path))
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
        let _ = writeln!(out, "- {}: `{}`", one.run.name(), one.run.command_line());
        let mut recorded: Vec<&Option<String>> = one.recorded.iter().map(|(_, s)| s).collect();
        recorded.dedup();
        let files: Vec<String> = one.recorded.iter().map(|(file, _)| shown(file)).collect();
        let recorded: Vec<&str> = (recorded.iter())
            .map(|stamp| stamp.as_deref().unwrap_or("no stamp"))
            .collect();
        let (recorded, now) = (recorded.join(" and "), &one.now);
        if !files.is_empty() {
            let _ = writeln!(
                out,
                "  recorded {recorded}, now {now} ({})",
                files.join(", ")
            );
        }
        if let Some(was) = &one.command_was {
            let _ = writeln!(out, "  run as `{was}`, not as the job's list gives it");
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The at-rest experiment's run of the job, whose results are one JSON file in its folder.
    fn at_rest() -> Run {
        let rest = main_job()
            .into_iter()
            .find(|run| run.experiment.name() == "rest");
        rest.expect("the job runs the at-rest experiment")
    }

    /// A repository holding only the at-rest results, stamped as this build stamps them and
    /// run with `command`.
    fn repository_with(name: &str, command: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("stale-{name}-{}", std::process::id()));
        let out = root.join(at_rest().results().1);
        std::fs::create_dir_all(&out).unwrap();
        let stamp = current_stamp(&at_rest().experiment.code());
        let record = serde_json::json!({
            "environment": { "code_stamp": stamp },
            "command": command,
        });
        std::fs::write(out.join("rest.json"), record.to_string()).unwrap();
        root
    }

    #[test]
    fn results_run_with_the_jobs_command_and_stamp_are_fresh() {
        let root = repository_with("same", &at_rest().command_line());
        let stale = stale(&root, &root.join(RESULTS), at_rest());
        let _ = std::fs::remove_dir_all(&root);
        assert!(stale.is_none(), "{stale:?}");
    }

    #[test]
    fn a_run_into_another_folder_measures_the_same() {
        let job = "bench-client --readme README.md";
        assert_eq!(measured(job), measured("bench-client --out /tmp/rerun"));
        assert_eq!(measured("a --out=x --rounds 2"), ["a", "--rounds", "2"]);
        assert_ne!(measured(job), measured("bench-client --threads 2"));
    }

    #[test]
    fn a_flag_changed_in_the_jobs_list_makes_the_results_stale() {
        let was = "bench-client rest --rounds 1 --out results/rest";
        let root = repository_with("flag", was);
        let stale = stale(&root, &root.join(RESULTS), at_rest());
        let _ = std::fs::remove_dir_all(&root);
        let stale = stale.expect("a results folder run with other flags is stale");
        assert_eq!(stale.command_was.as_deref(), Some(was));
        assert!(stale.recorded.is_empty(), "its stamp is this build's");
        let explained = explain(Path::new("/"), &[stale]);
        assert!(
            explained.contains(&format!("run as `{was}`")),
            "{explained}"
        );
    }
}
