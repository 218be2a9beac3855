//! Each experiment's code stamp covers the code that measures it, not the code that writes
//! its reports: stamped over a copy of the repository's sources, a change to a report
//! writer changes no stamp, and a change to one experiment's folder changes its stamp alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bench_client::experiments::ALL;
use bench_client::stamps;

/// A copy of the repository's stamped sources (and the writers beside them) in a temporary
/// folder, removed when dropped.
struct Tree(PathBuf);

impl Tree {
    fn copy(name: &str) -> Tree {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let root = std::env::temp_dir().join(format!("stamps-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut sources: Vec<PathBuf> = (stamps::digests(&repo).into_iter())
            .map(|(path, _)| repo.join(path))
            .collect();
        for extra in ["bench-client/src", "crates/demo-testkit/src"] {
            sources.extend(files_under(&repo.join(extra)));
        }
        for file in sources {
            let copy = root.join(file.strip_prefix(&repo).unwrap());
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::copy(&file, &copy).unwrap();
        }
        Tree(root)
    }

    /// Every experiment's stamp over this tree.
    fn stamps(&self) -> BTreeMap<&'static str, String> {
        let digests = stamps::digests(&self.0);
        (ALL.iter())
            .map(|experiment| (experiment.name(), experiment.code().stamp(&digests)))
            .collect()
    }

    /// Appends a line to the file at `path`, creating it (and its folder) if need be.
    fn touch(&self, path: &str) {
        let file = self.0.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(&file).unwrap_or_default();
        text.push_str("\n// changed by the test\n");
        std::fs::write(&file, text).unwrap();
    }

    /// The experiments whose stamp changes when `change` is made.
    fn changed_by(&self, change: impl FnOnce(&Tree)) -> Vec<&'static str> {
        let before = self.stamps();
        change(self);
        let after = self.stamps();
        (before.into_iter())
            .filter(|(name, stamp)| after[name] != *stamp)
            .map(|(name, _)| name)
            .collect()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        match entry.path() {
            path if path.is_dir() => files.extend(files_under(&path)),
            path => files.push(path),
        }
    }
    files
}

/// The experiments that drive the servers through the bench client.
fn drivers() -> Vec<&'static str> {
    let mut names: Vec<&str> = (ALL.iter())
        .filter(|experiment| experiment.code().drives_servers)
        .map(|experiment| experiment.name())
        .collect();
    names.sort();
    names
}

/// `names` with `one` more, in order.
fn with(mut names: Vec<&'static str>, one: &'static str) -> Vec<&'static str> {
    names.push(one);
    names.sort();
    names
}

#[test]
fn every_experiments_own_code_is_stamped() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let digests = stamps::digests(&repo);
    for experiment in ALL {
        for own in experiment.code().own {
            assert!(
                digests.iter().any(|(path, _)| path.starts_with(own)),
                "{}: {own} is no file a stamp can cover",
                experiment.name()
            );
        }
    }
}

#[test]
fn a_change_to_a_report_writer_leaves_every_experiment_fresh() {
    let tree = Tree::copy("writers");
    let changed = tree.changed_by(|tree| {
        tree.touch("bench-client/src/report/mod.rs");
        tree.touch("bench-client/src/experiments/race/views/race_md.rs");
        tree.touch("bench-client/src/experiments/rest/views.rs");
        tree.touch("bench-client/src/plot/mod.rs");
        tree.touch("bench-client/src/job/mod.rs");
        tree.touch("bench-client/src/redraw.rs");
        tree.touch("README.md");
    });
    assert_eq!(changed, Vec::<&str>::new());
}

#[test]
fn a_change_to_one_experiments_folder_makes_it_alone_stale() {
    let tree = Tree::copy("one");
    for (file, experiment) in [
        ("bench-client/src/experiments/sweep/mod.rs", "sweep"),
        ("bench-client/src/experiments/rest/switches.rs", "rest"),
        ("bench-client/src/experiments/race/arrival/mod.rs", "race"),
        ("bench-client/src/experiments/detectors/mod.rs", "detectors"),
        ("bench-client/src/experiments/uring/trial.rs", "uring"),
        ("bench-client/src/experiments/health/window.rs", "health"),
        ("scripts/poll-cost.sh", "poll-cost"),
        ("scripts/offload-cost.sh", "offload-cost"),
    ] {
        assert_eq!(
            tree.changed_by(|tree| tree.touch(file)),
            [experiment],
            "{file}"
        );
    }
}

/// The race and the detectors measure with the comparison's case: its folder is theirs too.
#[test]
fn a_change_to_the_comparison_makes_those_built_on_it_stale() {
    let tree = Tree::copy("comparison");
    let changed =
        tree.changed_by(|tree| tree.touch("bench-client/src/experiments/comparison/mod.rs"));
    assert_eq!(changed, ["comparison", "detectors", "race"]);
}

#[test]
fn a_change_to_the_measuring_core_or_a_server_makes_every_driver_stale() {
    let tree = Tree::copy("core");
    for file in [
        "crates/burst-meter/src/burst.rs",
        "bench-client/src/experiments/mod.rs",
        "reference/fastapi/app.py",
    ] {
        assert_eq!(
            tree.changed_by(|tree| tree.touch(file)),
            drivers(),
            "{file}"
        );
    }
    // A server's source is also what the static checks read.
    let server = tree.changed_by(|tree| tree.touch("crates/demo-axum/src/main.rs"));
    assert_eq!(server, with(drivers(), "static"));
}

#[test]
fn a_crate_added_is_stamped_and_the_test_only_ones_are_not() {
    let tree = Tree::copy("crates");
    let added = tree.changed_by(|tree| tree.touch("crates/demo-new/src/main.rs"));
    assert_eq!(added, with(drivers(), "static"));
    let detector = with(with(drivers(), "poll-cost"), "static");
    let bench = tree.changed_by(|tree| tree.touch("crates/reactor-watch/benches/per_poll.rs"));
    assert_eq!(
        bench, detector,
        "the stall detector: the servers', the static checks' and the poll cost's"
    );
    let test_only = tree.changed_by(|tree| tree.touch("crates/demo-testkit/src/lib.rs"));
    assert_eq!(test_only, Vec::<&str>::new());
    let a_test = tree.changed_by(|tree| tree.touch("crates/reactor-watch/tests/stalls.rs"));
    assert_eq!(
        a_test,
        Vec::<&str>::new(),
        "a crate's tests measure nothing"
    );
    let everyone = tree.changed_by(|tree| tree.touch("Cargo.lock"));
    assert_eq!(everyone.len(), ALL.len());
}
