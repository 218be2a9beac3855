//! blocking-check used on a crate outside this workspace, as its README says: installed with
//! `cargo install --path`, then `blocking-check scan` on a fresh crate in a temporary folder
//! with one handler that blocks and one that offloads (exit code 1, naming the first only),
//! then on the offloading one alone (exit code 0). The same crate with the project's
//! `clippy.toml` beside its `Cargo.toml`: `cargo clippy -- -D warnings` fails on the blocking
//! call and passes on the offload, whose call is allowed with `#[expect]`. Everything builds
//! in `target/outside/`, kept between runs, with this workspace's `Cargo.lock`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MANIFEST: &str = r#"[package]
name = "yours"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
tokio = { version = "1", default-features = false, features = ["rt"] }
"#;

/// A handler that blocks its reactor thread.
const BLOCKS: &str = r#"
/// Blocks the reactor: the thread that polls this future sleeps.
pub async fn blocks(duration: Duration) {
    std::thread::sleep(duration);
}
"#;

/// A handler that offloads the same call, allowed where it runs off the reactor.
const OFFLOADS: &str = r#"use std::time::Duration;

/// Frees the reactor: the sleep runs on tokio's blocking pool.
pub async fn offloads(duration: Duration) {
    let sleep = tokio::task::spawn_blocking(move || {
        #[expect(clippy::disallowed_methods, reason = "runs on the blocking pool")]
        std::thread::sleep(duration);
    });
    sleep.await.expect("the sleep does not panic");
}
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the outside crates build: beside this workspace's build, kept between runs.
fn outside_target() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
    target
        .unwrap_or_else(|| workspace().join("target"))
        .join("outside")
}

/// A folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// cargo, with nothing of the outer build (its target folder, its flags, a clippy
/// configuration) leaking into the outside crate's.
fn cargo() -> Command {
    let mut cargo = Command::new(env!("CARGO"));
    for outer in ["CARGO_TARGET_DIR", "RUSTFLAGS", "CLIPPY_CONF_DIR"] {
        cargo.env_remove(outer);
    }
    cargo
}

fn output(command: &mut Command) -> Output {
    command.output().expect("the command starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_installed_check_and_clippys_list_work_on_another_crate() {
    let scratch = Scratch(
        std::env::temp_dir().join(format!("blocking-check-outside-{}", std::process::id())),
    );
    let (root, yours) = (scratch.0.join("install"), scratch.0.join("yours"));
    std::fs::create_dir_all(yours.join("src")).expect("the fresh crate's folder");
    let install = output(
        cargo()
            .args(["install", "--locked", "--debug", "--path"])
            .arg(workspace().join("crates/blocking-check"))
            .arg("--root")
            .arg(&root)
            .arg("--target-dir")
            .arg(outside_target()),
    );
    assert!(
        install.status.success(),
        "cargo install: {}",
        text(&install.stderr)
    );
    let check = root.join("bin/blocking-check");

    std::fs::write(yours.join("Cargo.toml"), MANIFEST).expect("manifest");
    std::fs::copy(workspace().join("Cargo.lock"), yours.join("Cargo.lock")).expect("Cargo.lock");
    let clippy_toml = workspace().join("crates/blocking-check/clippy/clippy.toml");
    std::fs::copy(clippy_toml, yours.join("clippy.toml")).expect("clippy.toml");
    let lib = yours.join("src/lib.rs");
    let scan = || output(Command::new(&check).arg("scan").arg(yours.join("src")));
    let clippy = || {
        let mut clippy = cargo();
        clippy
            .current_dir(&yours)
            .args(["clippy", "--target-dir"])
            .arg(outside_target());
        output(clippy.args(["--", "-D", "warnings"]))
    };

    std::fs::write(&lib, format!("{OFFLOADS}{BLOCKS}")).expect("lib.rs");
    let found = scan();
    let report = text(&found.stdout);
    assert_eq!(
        found.status.code(),
        Some(1),
        "scan with a blocking handler: {report}"
    );
    let lines: Vec<&str> = report
        .lines()
        .filter(|line| line.contains("blocking call"))
        .collect();
    assert_eq!(lines.len(), 1, "one blocking call: {report}");
    assert!(
        lines[0].contains("std::thread::sleep") && lines[0].contains("blocks"),
        "{report}"
    );
    let linted = clippy();
    let warnings = text(&linted.stderr);
    assert!(
        !linted.status.success(),
        "clippy passed a blocking handler: {warnings}"
    );
    assert!(
        warnings.contains("disallowed method `std::thread::sleep`"),
        "{warnings}"
    );

    std::fs::write(&lib, OFFLOADS).expect("lib.rs");
    let none = scan();
    assert_eq!(
        none.status.code(),
        Some(0),
        "scan, offload only: {}",
        text(&none.stdout)
    );
    let linted = clippy();
    assert!(
        linted.status.success(),
        "clippy, offload only: {}",
        text(&linted.stderr)
    );
}
