//! Builds (cargo builds every example before the tests) and runs each example: started on
//! port 0, it serves one `/bad` and must report the slow poll on stderr under `/bad`,
//! and one `/ok`, an awaited sleep as long, which it must not report.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::example::{get, reports_the_blocking_route_only, start};

/// `target/<profile>/examples/<name>` (this test runs from `target/<profile>/deps/`). A plain
/// `cargo test` builds every example before it runs the tests; a filtered run (`--test
/// examples`) builds none, and then it is built here (not always: with the features of this
/// one package, that could build a second set of dependencies).
fn example_path(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's path");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let path = profile.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "reactor-watch", "--example", name]);
        if profile.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo build --example");
        assert!(status.success(), "cargo build --example {name}: {status}");
    }
    path
}

#[test]
fn the_axum_example_reports_its_blocking_route() {
    reports_the_blocking_route_only(&example_path("axum"));
}

#[test]
fn the_actix_example_reports_its_blocking_route() {
    reports_the_blocking_route_only(&example_path("actix"));
}

#[test]
fn the_smol_example_reports_its_blocking_route() {
    reports_the_blocking_route_only(&example_path("smol"));
}

/// The axum example's two health checks while `/bad` blocks for 300 ms: readiness (the
/// watch's threshold) 503 naming `/bad`, during the stall and just after it (its period, 5 s,
/// is `tests/health.rs`'s to time out); liveness (a limit of seconds) 200 throughout.
#[test]
fn the_axum_example_health_checks_tell_readiness_from_liveness() {
    let example = start(&example_path("axum"));
    let ready = example.printed("ready on ");
    let alive = example.printed("alive on ");
    let base = example.printed("listening on ");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let probe = |url: &str| {
        let mut reply = agent.get(url).call().expect("a health answer");
        let body = reply.body_mut().read_to_string().expect("a body");
        (reply.status().as_u16(), body)
    };
    assert_eq!(probe(&ready).0, 200, "ready at rest");
    assert_eq!(probe(&alive).0, 200, "alive at rest");
    let bad = std::thread::spawn(move || get(&format!("{base}/bad")));
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = probe(&ready);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains(r#""route":"/bad""#), "{body}");
    let (status, body) = probe(&alive);
    assert_eq!(status, 200, "alive while /bad blocks: {body}");
    assert_eq!(bad.join().expect("the /bad request"), 200);
    let (status, body) = probe(&ready);
    assert_eq!(status, 503, "just after /bad: {body}");
    assert!(body.contains(r#""ended_ms_ago":"#), "{body}");
    assert_eq!(probe(&alive).0, 200, "alive just after /bad");
}
