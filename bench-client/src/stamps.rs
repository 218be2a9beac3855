//! What an experiment's code stamp covers, and how a stamp is made: a digest of the code that
//! *measures* the experiment (its own folder, the measuring core, the servers and the
//! reference app it drives, the build's settings), never of the code that *writes* its
//! reports (`src/report/`, `src/plot/`, the generated docs blocks), so that a change to a
//! table or a plot needs `redraw`, not a rerun.
//!
//! Each experiment names its own code ([`Code`], in its folder, whose parts that read results,
//! [`READS_RESULTS`], it leaves out);
//! the parts every experiment shares are here. `build.rs` includes this file to digest, at build time, every file a
//! stamp can cover ([`digests`]), so that the binary stamps its results with the code it was
//! built from, whatever the working tree holds when it runs; the tests digest a copy of the
//! tree with the same function. It uses nothing of the crate for that reason.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// The code that measures one experiment, beside the parts every experiment shares.
#[derive(Debug, Clone, Copy)]
pub struct Code {
    /// Its own code, from the workspace root: its folder (and any other experiment's it
    /// measures with), a script, or a crate under `crates/`.
    pub own: &'static [&'static str],
    /// Whether it drives the demo servers through the bench client: then the measuring core,
    /// the command line, every server crate and the reference app are its code too.
    pub drives_servers: bool,
    /// Whether it reads the servers' sources without running them (the static checks): then
    /// every server crate is its code too, but not the bench client's core.
    pub reads_servers: bool,
}

/// What every experiment's stamp covers: the build's settings and the script that builds
/// and runs the job, and this file.
pub const BUILD: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "bench-client/Cargo.toml",
    "bench-client/build.rs",
    "bench-client/src/stamps.rs",
    "scripts/run.sh",
];

/// What the stamp of every experiment that drives the servers covers beside: the binary's
/// entry, the command line, the experiments' common room and flags, the reference app (and
/// the measuring core, [`CORE_CRATES`]).
pub const DRIVER: &[&str] = &[
    "bench-client/src/bin",
    "bench-client/src/cli.rs",
    "bench-client/src/cli",
    "bench-client/src/experiments/mod.rs",
    "bench-client/src/experiments/flags.rs",
    "reference/fastapi/app.py",
    "reference/fastapi/serve.py",
    "reference/fastapi/requirements.txt",
    "reference/fastapi/setup.sh",
    "reference/fastapi/bin",
];

/// Where the experiments' own folders are.
pub const EXPERIMENTS_DIR: &str = "bench-client/src/experiments";

/// The parts of an experiment's folder that read its results rather than measure them, each
/// a `NAME.rs` file or a `NAME/` folder: its views (tables, plots) and its claims (what the
/// pages say it showed). No stamp covers them, so that a change to one needs `redraw` or the
/// test command, not a rerun.
pub const READS_RESULTS: &[&str] = &["views", "claims"];

/// Where the scripts an experiment may name as its own are.
pub const SCRIPTS_DIR: &str = "scripts";

/// Where the servers that are not this project's, which an experiment may name as its own
/// (the probe's stubs), are.
pub const STUBS_DIR: &str = "reference/stubs";

/// In each crate under `crates/`, what a stamp covers.
pub const CRATE_PARTS: &[&str] = &["Cargo.toml", "src", "benches"];

/// Crates no experiment runs: the tests' kit and the docs' link check.
pub const TEST_ONLY_CRATES: &[&str] = &["demo-testkit", "doc-links"];

/// Crates only the experiments that name them in [`Code::own`] run (the criterion benches,
/// the static checks, the console's reader); every other crate under `crates/` (the servers,
/// their contract, the stall detector, any crate added later) is in the stamp of every
/// experiment that drives or reads servers.
pub const OWN_CRATES: &[&str] = &["offload-cost", "blocking-check", "console-probe"];

/// The measuring core: in the stamp of every experiment that drives the servers, not of one
/// that only reads their sources.
pub const CORE_CRATES: &[&str] = &["burst-meter"];

/// A stampable file: its path from the workspace root (`/` between parts) and the hex
/// SHA-256 of its length and contents.
pub type Digest<'a> = (&'a str, &'a str);

impl Code {
    /// Whether its stamp covers the file at `path`, from the workspace root.
    pub fn covers(&self, path: &str) -> bool {
        if BUILD.iter().any(|build| under(path, build)) {
            return true;
        }
        if path.starts_with("crates/") {
            // Only a crate's stamped parts: its tests and examples measure nothing.
            let Some(krate) = crate_of(path) else {
                return false;
            };
            let core = CORE_CRATES.contains(&krate);
            let server = ![TEST_ONLY_CRATES, OWN_CRATES, CORE_CRATES]
                .iter()
                .any(|list| list.contains(&krate));
            let own = (self.own.iter()).any(|own| own.strip_prefix("crates/") == Some(krate));
            return own
                || (core && self.drives_servers)
                || (server && (self.drives_servers || self.reads_servers));
        }
        (self.drives_servers && DRIVER.iter().any(|driver| under(path, driver)))
            || (self.own.iter().any(|own| under(path, own)) && !reads_results(path))
    }

    /// Its stamp over `digests` (sorted by path, as [`digests`] gives them): the first 16 hex
    /// digits of a SHA-256 over each file it covers, its path, then its digest.
    pub fn stamp(&self, digests: &[(impl AsRef<str>, impl AsRef<str>)]) -> String {
        let mut stamp = Sha256::new();
        for (path, digest) in digests
            .iter()
            .filter(|(path, _)| self.covers(path.as_ref()))
        {
            stamp.update(path.as_ref().as_bytes());
            stamp.update(digest.as_ref().as_bytes());
        }
        hex(&stamp.finalize())[..16].to_owned()
    }

    /// Its own folder under [`EXPERIMENTS_DIR`], if it has one (for the reader).
    pub fn module(&self) -> Option<&'static str> {
        self.own
            .iter()
            .copied()
            .find(|own| own.starts_with(EXPERIMENTS_DIR))
    }
}

/// Every file under `root` that some stamp may cover, with its digest as it is now, sorted by
/// path: what `build.rs` records of the tree it builds, and the tests of a copy of it. An
/// experiment's own code must lie among these (a unit test checks that every one does).
pub fn digests(root: &Path) -> Vec<(String, String)> {
    let mut paths: Vec<PathBuf> = (BUILD.iter().chain(DRIVER))
        .chain([&EXPERIMENTS_DIR, &SCRIPTS_DIR, &STUBS_DIR])
        .map(|path| root.join(path))
        .collect();
    for krate in std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        paths.extend(CRATE_PARTS.iter().map(|part| krate.path().join(part)));
    }
    let mut files = Vec::new();
    for path in paths {
        collect_files(&path, &mut files);
    }
    let mut digests: Vec<(String, String)> = files
        .iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(root).ok()?.to_str()?.to_owned();
            Some((relative, hex(&digest_bytes(&std::fs::read(file).ok()?))))
        })
        .collect();
    digests.sort();
    digests.dedup();
    digests
}

/// SHA-256 over the length of `contents`, then them.
fn digest_bytes(contents: &[u8]) -> [u8; 32] {
    let mut digest = Sha256::new();
    digest.update((contents.len() as u64).to_le_bytes());
    digest.update(contents);
    digest.finalize().into()
}

/// `bytes` in lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether `path` is a part of an experiment that reads its results ([`READS_RESULTS`]),
/// which its stamp leaves out.
fn reads_results(path: &str) -> bool {
    path.split('/').any(|part| {
        let name = part.strip_suffix(".rs").unwrap_or(part);
        READS_RESULTS.contains(&name)
    })
}

/// Whether `path` is `prefix` or lies under it.
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The crate under `crates/` whose stamped part ([`CRATE_PARTS`]) holds `path`, if one does.
fn crate_of(path: &str) -> Option<&str> {
    let (krate, rest) = path.strip_prefix("crates/")?.split_once('/')?;
    CRATE_PARTS
        .iter()
        .any(|part| under(rest, part))
        .then_some(krate)
}

/// `path` if it is a file, else every file under it.
fn collect_files(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_file() {
        files.push(path.to_owned());
        return;
    }
    for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
        collect_files(&entry.path(), files);
    }
}
