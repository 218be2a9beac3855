//! Records, at build time, what every run's environment reports about the build
//! (`src/environment.rs`): the compiler that built the binaries, and the versions of the
//! stacks under test as Cargo.lock pins them.

use std::process::Command;

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
    "glommio",
    "hyper",
    "hyper-util",
    "libsqlite3-sys",
    "monoio",
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

    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock");
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
}
