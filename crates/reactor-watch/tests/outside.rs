//! reactor-watch used as another project uses it: `cargo package` makes the crate a registry
//! would get, and a fresh crate in a temporary folder, outside this workspace, depends on that
//! packaged copy alone (no path into this repository). It builds with no feature, with each
//! feature, and with `tower` and `health` together, running the packaged axum example, which
//! must report its `/bad` and not its `/ok`. The fresh crate gets this workspace's
//! `Cargo.lock`, so that it builds the versions tested here from the registry's cache; it
//! builds in `target/outside/`, kept between runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::example::reports_the_blocking_route_only;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The fresh crate's manifest: a feature of its own for each of reactor-watch's, and one for
/// the example, which needs both and axum.
const MANIFEST: &str = r#"[package]
name = "outside"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
reactor-watch = { path = "../packaged/reactor-watch-VERSION" }
axum = { version = "0.8", default-features = false, features = ["http1", "tokio", "matched-path"], optional = true }
tokio = { version = "1", features = ["rt", "net", "time"], optional = true }

[features]
tower = ["reactor-watch/tower"]
health = ["reactor-watch/health"]
metrics = ["reactor-watch/metrics"]
example = ["tower", "health", "dep:axum", "dep:tokio"]

[[bin]]
name = "axum-example"
path = "src/main.rs"
required-features = ["example"]
"#;

/// The fresh crate's library: what each feature adds, named.
const LIB: &str = r#"pub use reactor_watch::{Config, Label, Watch};
#[cfg(feature = "health")]
pub use reactor_watch::HealthCheck;
#[cfg(feature = "tower")]
pub use reactor_watch::tower::WatchLayer;
#[cfg(feature = "metrics")]
pub use reactor_watch::metrics::SLOW_POLLS_TOTAL;
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the fresh crates build: beside this workspace's build, kept between runs.
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

fn run(command: &mut Command) {
    let output = command.output().expect("the command starts");
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

fn cargo() -> Command {
    let mut cargo = Command::new(env!("CARGO"));
    // The fresh crate is not this workspace's: nothing of the outer build may leak in.
    cargo.env_remove("CARGO_TARGET_DIR").env_remove("RUSTFLAGS");
    cargo
}

#[test]
fn the_packaged_crate_builds_and_reports_from_another_project() {
    let scratch =
        Scratch(std::env::temp_dir().join(format!("reactor-watch-outside-{}", std::process::id())));
    let packaged = scratch.0.join("packaged");
    let app = scratch.0.join("outside");
    std::fs::create_dir_all(&packaged).expect("the scratch folder");
    std::fs::create_dir_all(app.join("src")).expect("the fresh crate's folder");

    run(cargo()
        .current_dir(workspace())
        .args([
            "package",
            "-p",
            "reactor-watch",
            "--no-verify",
            "--allow-dirty",
        ])
        .arg("--target-dir")
        .arg(scratch.0.join("package-target")));
    let crate_file = scratch.0.join(format!(
        "package-target/package/reactor-watch-{VERSION}.crate"
    ));
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(&packaged));

    let example = packaged.join(format!("reactor-watch-{VERSION}/examples/axum.rs"));
    std::fs::copy(&example, app.join("src/main.rs"))
        .expect("the packaged crate has its axum example");
    std::fs::write(app.join("Cargo.toml"), MANIFEST.replace("VERSION", VERSION)).expect("manifest");
    std::fs::write(app.join("src/lib.rs"), LIB).expect("lib.rs");
    std::fs::copy(workspace().join("Cargo.lock"), app.join("Cargo.lock")).expect("Cargo.lock");

    let target = outside_target();
    for features in [
        None,
        Some("tower"),
        Some("health"),
        Some("metrics"),
        Some("example"),
    ] {
        let mut build = cargo();
        build
            .current_dir(&app)
            .arg("build")
            .arg("--target-dir")
            .arg(&target);
        run(build.args(
            features
                .map(|features| ["--features", features])
                .into_iter()
                .flatten(),
        ));
    }
    reports_the_blocking_route_only(&target.join("debug/axum-example"));
}
