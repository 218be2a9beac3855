//! The committed results were written by the code as it is now. Every results file records
//! the code stamp of the binary that wrote it: a digest, made by `bench-client/build.rs`, of
//! every source that measures or writes results (the bench client, the servers and their
//! crates, the reference app, the build's settings, the scripts of the main job). A change
//! to any of them changes the stamp, and this test fails until the main job has run again.

use std::path::{Path, PathBuf};

/// The stamp of the code this test was built from.
const STAMP: &str = env!("BENCH_CODE_STAMP");

/// Every file under `dir` whose name ends in one of `extensions`.
fn files_under(dir: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, extensions, found);
        } else if (path.extension()).is_some_and(|ext| extensions.iter().any(|e| ext == *e)) {
            found.push(path);
        }
    }
}

/// The stamp a results file records: the environment's `code_stamp` in JSON, its line in
/// Markdown.
fn recorded_stamp(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    if path.extension()? == "json" {
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        return Some(json["environment"]["code_stamp"].as_str()?.to_owned());
    }
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("- code stamp: `"))?;
    Some(line.split('`').next()?.to_owned())
}

#[test]
fn every_committed_result_was_written_by_the_code_as_it_is() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let mut files = Vec::new();
    files_under(&results, &["json", "md"], &mut files);
    assert!(
        files.len() >= 20,
        "too few results files under {}: {files:?}",
        results.display()
    );
    let stale: Vec<String> = files
        .iter()
        .filter_map(|file| match recorded_stamp(file) {
            Some(stamp) if stamp == STAMP => None,
            found => Some(format!(
                "{} ({})",
                file.display(),
                found.as_deref().unwrap_or("no stamp")
            )),
        })
        .collect();
    assert!(
        stale.is_empty(),
        "results written by other code than this ({STAMP}); run the main job again \
         (scripts/run.sh), or the experiment's own command listed in results/main-job.md:\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_file_without_the_stamp_or_with_another_is_told_apart() {
    let dir = std::env::temp_dir().join(format!("fresh-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        recorded_stamp(&path)
    };
    let json = format!(r#"{{"environment": {{"code_stamp": "{STAMP}"}}}}"#);
    assert_eq!(write("a.json", json).as_deref(), Some(STAMP));
    assert_eq!(write("b.json", r#"{"environment": {}}"#.into()), None);
    let markdown = format!("## Environment\n\n- date: x\n- code stamp: `{STAMP}`\n");
    assert_eq!(write("c.md", markdown).as_deref(), Some(STAMP));
    assert_eq!(
        write("d.md", "- code stamp: `0123`\n".into()).as_deref(),
        Some("0123")
    );
    assert_eq!(write("e.md", "no environment\n".into()), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
