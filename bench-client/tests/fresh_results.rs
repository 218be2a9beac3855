//! The committed results were measured by the code as it is now. Every results file records
//! the code stamp of its experiment: a digest, made from `bench-client/build.rs`'s digests,
//! of the sources that measure it (its `Code`, and what `bench-client/src/stamps.rs` shares:
//! the measuring core, the servers and their crates, the reference app, the build's settings),
//! not of those that write reports. A change to any of them makes that experiment's stamp
//! change, and this test fails, naming each stale experiment and its command, until it has
//! run again (`scripts/run.sh all --stale` reruns exactly those).

use std::path::{Path, PathBuf};

use bench_client::job::{RECORD, main_job};
use bench_client::stale::{self, is_results_file, recorded_field, results_files};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every results file under `dir`.
fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, found);
        } else if is_results_file(&path) {
            found.push(path);
        }
    }
}

#[test]
fn every_experiment_was_measured_by_the_code_as_it_is() {
    let root = repository();
    let stale = stale::stale_experiments(&root);
    let names: Vec<&str> = stale.iter().map(|one| one.run.name()).collect();
    assert!(
        stale.is_empty(),
        "results measured by other code than this, {names:?}; rerun them with \
         `scripts/run.sh all --stale`, or each with its command:\n{}",
        stale::explain(&root, &stale)
    );
}

/// A results file no experiment of the job claims would never be found stale.
#[test]
fn every_results_file_belongs_to_an_experiment_of_the_job() {
    let root = repository();
    let mut files = Vec::new();
    files_under(&root.join("results"), &mut files);
    assert!(files.len() >= 20, "too few results files: {files:?}");
    let claimed: Vec<PathBuf> = main_job()
        .iter()
        .flat_map(|run| results_files(&root, &run.results().1))
        .chain([root.join(RECORD)])
        .collect();
    let unclaimed: Vec<&PathBuf> = files.iter().filter(|f| !claimed.contains(f)).collect();
    assert!(unclaimed.is_empty(), "no experiment writes {unclaimed:?}");
}

#[test]
fn a_file_without_the_stamp_or_with_another_is_told_apart() {
    let dir = std::env::temp_dir().join(format!("fresh-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stamp = "0123456789abcdef";
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        recorded_field(&path, "code_stamp", "code stamp")
    };
    let json = format!(r#"{{"environment": {{"code_stamp": "{stamp}"}}}}"#);
    assert_eq!(write("a.json", json).as_deref(), Some(stamp));
    assert_eq!(write("b.json", r#"{"environment": {}}"#.into()), None);
    let markdown = format!("## Environment\n\n- date: x\n- code stamp: `{stamp}`\n");
    assert_eq!(write("c.md", markdown).as_deref(), Some(stamp));
    assert_eq!(
        write("d.md", "- code stamp: `0123`\n".into()).as_deref(),
        Some("0123")
    );
    assert_eq!(write("e.md", "no environment\n".into()), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
