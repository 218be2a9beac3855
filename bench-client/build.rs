//! Records, at build time, what the results' environment section reports about the build:
//! the compiler that built the binaries, the versions of the stacks under test, as
//! Cargo.lock pins them, and the code stamp: a digest of every source that measures or
//! writes the results, so that a results folder written by older code is caught (the test
//! `fresh_results` compares the stamp each folder records with this one).

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest as _, Sha256};

/// What the code stamp covers, from the workspace root: the bench client, every crate the
/// main job builds and runs (the servers, their contract, the detector, the offload benches),
/// the FastAPI reference app, the build's settings and the scripts that run the job. Tests
/// and documentation are not in it: they change no figure.
const STAMPED: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "bench-client/Cargo.toml",
    "bench-client/build.rs",
    "bench-client/src",
    "reference/fastapi/app.py",
    "reference/fastapi/serve.py",
    "reference/fastapi/requirements.txt",
    "reference/fastapi/setup.sh",
    "reference/fastapi/bin",
    "scripts/run.sh",
    "scripts/offload-cost.sh",
];

/// In each crate under crates/, what the stamp covers; crates the results never run are left
/// out whole.
const CRATE_PARTS: &[&str] = &["Cargo.toml", "src", "benches"];
const UNSTAMPED_CRATES: &[&str] = &["demo-testkit", "doc-links"];

/// The crates whose versions decide what the demo servers do.
const STACK_CRATES: &[&str] = &[
    "actix-web",
    "async-executor",
    "async-io",
    "async-std",
    "axum",
    "blocking",
    "compio-runtime",
    "cyper-axum",
    "hyper",
    "hyper-util",
    "libsqlite3-sys",
    "ntex",
    "ntex-rt",
    "rusqlite",
    "smol",
    "smol-hyper",
    "sqlx-sqlite",
    "tokio",
    "ureq",
];

/// Stack crates whose upstream has stopped, with what says so: marked wherever the results
/// list the crates.
const DISCONTINUED: &[(&str, &str)] = &[("async-std", "discontinued upstream: RUSTSEC-2025-0052")];

#[derive(serde::Deserialize)]
struct Lock {
    package: Vec<Package>,
}

#[derive(serde::Deserialize)]
struct Package {
    name: String,
    version: String,
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BENCH_RUSTC_VERSION={}", version.trim());

    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let versions = std::fs::read_to_string(lock_path)
        .ok()
        .and_then(|text| toml::from_str::<Lock>(&text).ok())
        .map(|lock| {
            let mut found: Vec<String> = lock
                .package
                .into_iter()
                .filter(|package| STACK_CRATES.contains(&package.name.as_str()))
                .map(|package| {
                    let note = DISCONTINUED.iter().find(|(name, _)| *name == package.name);
                    match note {
                        Some((_, note)) => format!("{} {} ({note})", package.name, package.version),
                        None => format!("{} {}", package.name, package.version),
                    }
                })
                .collect();
            found.sort();
            found.dedup();
            found.join(",")
        })
        .unwrap_or_default();
    println!("cargo:rustc-env=BENCH_CRATE_VERSIONS={versions}");
    println!("cargo:rustc-env=BENCH_CODE_STAMP={}", code_stamp());
}

/// The first 16 hex digits of a SHA-256 over every stamped file, in path order: each file's
/// path from the workspace root, then its length and contents.
fn code_stamp() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for path in stamped_paths(&root) {
        println!("cargo:rerun-if-changed={}", path.display());
        collect_files(&path, &mut files);
    }
    files.sort();
    let mut digest = Sha256::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        let contents = std::fs::read(file).unwrap_or_default();
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

/// The top-level stamped paths, and the stamped parts of each crate.
fn stamped_paths(root: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = STAMPED.iter().map(|path| root.join(path)).collect();
    let crates = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten();
    for krate in crates {
        let name = krate.file_name();
        if UNSTAMPED_CRATES.iter().any(|unstamped| name == *unstamped) {
            continue;
        }
        paths.extend(CRATE_PARTS.iter().map(|part| krate.path().join(part)));
    }
    paths.retain(|path| path.exists());
    paths
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
