//! Which source files each experiment's code stamp covers: the code that *measures* it (its
//! own module, the measuring core, the servers and the reference app it drives, the build's
//! settings), never the code that *writes* its reports (`src/report/`, `src/plot/`, the
//! generated docs blocks), so that a change to a table or a plot needs `redraw`, not a rerun.
//!
//! This file is the one table of it: `build.rs` includes it to stamp the binary (every
//! experiment's stamp, in `stamps::current`), and the tests include it, through the library,
//! to stamp a copy of the tree. It uses nothing of the crate for that reason.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// One experiment's entry: its name (what the main job's list refers to) and what of the
/// repository measures it beside the shared parts below.
#[derive(Debug, Clone, Copy)]
pub struct Stamped {
    pub name: &'static str,
    /// Its own code, from the workspace root.
    pub own: &'static [&'static str],
    /// Whether it drives the demo servers through the bench client: then the measuring core,
    /// the command line, every server crate and the reference app are its code too.
    pub drives_servers: bool,
    /// Whether it reads the servers' sources without running them (the static checks): then
    /// every server crate is its code too, but not the bench client's core.
    pub reads_servers: bool,
}

pub const COMPARISON: &str = "comparison";
pub const SWEEP: &str = "sweep";
pub const RACE: &str = "race";
pub const DETECTORS: &str = "detectors";
pub const REST: &str = "rest";
pub const OFFLOAD_COST: &str = "offload-cost";
pub const POLL_COST: &str = "poll-cost";
pub const STATIC: &str = "static";
pub const URING: &str = "uring";
pub const HEALTH: &str = "health";

const EXPERIMENTS_DIR: &str = "bench-client/src/experiments";

/// Every experiment, with its own code. An experiment that builds on another's module (the
/// race and the detectors reuse the comparison's case) names that module too.
pub const EXPERIMENTS: &[Stamped] = &[
    Stamped {
        name: COMPARISON,
        own: &["bench-client/src/experiments/comparison"],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: SWEEP,
        own: &["bench-client/src/experiments/sweep.rs"],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: RACE,
        own: &[
            "bench-client/src/experiments/race",
            "bench-client/src/experiments/comparison",
        ],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: DETECTORS,
        own: &[
            "bench-client/src/experiments/detectors",
            "bench-client/src/experiments/comparison",
            "crates/console-probe",
        ],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: REST,
        own: &["bench-client/src/experiments/rest"],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: URING,
        own: &["bench-client/src/experiments/uring"],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: HEALTH,
        own: &["bench-client/src/experiments/health"],
        drives_servers: true,
        reads_servers: false,
    },
    Stamped {
        name: OFFLOAD_COST,
        own: &["scripts/offload-cost.sh", "crates/offload-cost"],
        drives_servers: false,
        reads_servers: false,
    },
    Stamped {
        name: POLL_COST,
        own: &[
            "scripts/poll-cost.sh",
            "crates/reactor-watch",
            "crates/offload-cost",
        ],
        drives_servers: false,
        reads_servers: false,
    },
    Stamped {
        name: STATIC,
        own: &["scripts/static-checks.sh", "crates/blocking-check"],
        drives_servers: false,
        reads_servers: true,
    },
];

/// What every experiment's stamp covers: the build's settings and the script that builds
/// and runs the job, and this table.
pub const BUILD: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "bench-client/Cargo.toml",
    "bench-client/build.rs",
    "bench-client/src/stamps.rs",
    "scripts/run.sh",
];

/// What the stamp of every experiment that drives the servers covers beside: the binary's
/// entry, the command line and the measuring core of the bench client, the reference app.
pub const DRIVER: &[&str] = &[
    "bench-client/src/bin",
    "bench-client/src/cli.rs",
    "bench-client/src/cli",
    "bench-client/src/measure",
    "reference/fastapi/app.py",
    "reference/fastapi/serve.py",
    "reference/fastapi/requirements.txt",
    "reference/fastapi/setup.sh",
    "reference/fastapi/bin",
];

/// In each crate under `crates/`, what a stamp covers.
pub const CRATE_PARTS: &[&str] = &["Cargo.toml", "src", "benches"];

/// Crates no experiment runs: the tests' kit and the docs' link check.
pub const TEST_ONLY_CRATES: &[&str] = &["demo-testkit", "doc-links"];

/// Crates only the experiments that name them in [`Stamped::own`] run (the criterion
/// benches, the static checks, the console's reader); every other crate under `crates/` (the servers, their contract, the stall
/// detector, any crate added later) is in the stamp of every experiment that drives servers.
pub const OWN_CRATES: &[&str] = &["offload-cost", "blocking-check", "console-probe"];

/// The experiment named `name` in [`EXPERIMENTS`].
pub fn find(name: &str) -> Option<&'static Stamped> {
    EXPERIMENTS.iter().find(|stamped| stamped.name == name)
}

impl Stamped {
    /// The paths, from `root`, its stamp covers and that exist, before expanding folders.
    pub fn paths(&self, root: &Path) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = BUILD.iter().map(|path| root.join(path)).collect();
        if self.drives_servers {
            paths.extend(DRIVER.iter().map(|path| root.join(path)));
        }
        if self.drives_servers || self.reads_servers {
            paths.extend(server_crates(root));
        }
        for own in self.own {
            let path = root.join(own);
            match own.strip_prefix("crates/") {
                Some(_) => paths.extend(CRATE_PARTS.iter().map(|part| path.join(part))),
                None => paths.push(path),
            }
        }
        paths.retain(|path| path.exists());
        paths
    }

    /// Every file its stamp covers, from `root`, sorted, each once.
    pub fn files(&self, root: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for path in self.paths(root) {
            collect_files(&path, &mut files);
        }
        files.sort();
        files.dedup();
        files
    }

    /// Its stamp over the tree at `root`: the first 16 hex digits of a SHA-256 over each of
    /// its files in path order, the path from `root`, then the length and the contents.
    pub fn stamp(&self, root: &Path) -> String {
        let mut digest = Sha256::new();
        for file in self.files(root) {
            let relative = file.strip_prefix(root).unwrap_or(&file);
            let contents = std::fs::read(&file).unwrap_or_default();
            digest.update(relative.to_string_lossy().as_bytes());
            digest.update((contents.len() as u64).to_le_bytes());
            digest.update(&contents);
        }
        let hex: String = digest
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        hex[..16].to_owned()
    }

    /// Its own folder under `bench-client/src/experiments`, if it has one (for the reader).
    pub fn module(&self) -> Option<&'static str> {
        self.own
            .iter()
            .copied()
            .find(|own| own.starts_with(EXPERIMENTS_DIR))
    }
}

/// The stamped parts of each crate under `crates/` that drives or is the servers: all but
/// the test-only ones and those only some experiments run.
fn server_crates(root: &Path) -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|krate| {
            let name = krate.file_name();
            let skipped = TEST_ONLY_CRATES.iter().chain(OWN_CRATES);
            !skipped.into_iter().any(|skip| name == *skip)
        })
        .map(|krate| krate.path())
        .collect();
    crates.sort();
    crates
        .iter()
        .flat_map(|krate| CRATE_PARTS.iter().map(move |part| krate.join(part)))
        .collect()
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
