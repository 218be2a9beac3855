//! The probe, pointed at servers that are not this project's demos (Python's standard
//! library: one thread, a pool of four, a thread per request), at the FastAPI app and at demo
//! servers, each route with the verdict it must get; and at what must fail or be refused.
//! Loopback only; every server is started on port 0 in a guard that stops it.

mod common;

use std::path::PathBuf;
use std::process::Output;

use bench_client::experiments::probe::subjects;
use burst_meter::target::{self, READY_WITHIN, REFERENCE_READY_WITHIN, ServerProcess, Target};
use common::{bench_client, real_server, skip, temp_dir};
use serde_json::Value;
use tokio::sync::Mutex;

/// One probe at a time: two would share the machine's two cores, and each other's waits.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// The work of each request: long enough to tell a block from a queue, short enough for ten
/// of them one after another to take a second.
const WORK: &str = "/work?ms=100";

/// The stub server of `kind` (and its flags), started on port 0 as the probe's own check
/// starts it.
async fn stub(args: &[&str]) -> ServerProcess {
    let args = args.iter().map(|arg| arg.to_string()).collect();
    let Target::Spawn { launcher, .. } = subjects::stub("stub", args) else {
        unreachable!("a stub is spawned");
    };
    (launcher.start("stub", &[]).await).expect("the stub server starts")
}

/// `bench-client probe URL ARGS...` into a folder of its own: its output, and the verdicts
/// of its verdicts.json (`Null` if it wrote none).
fn probe(url: &str, args: &[&str]) -> (Output, Value) {
    let out = temp_dir("probe");
    let output = bench_client()
        .args(["probe", url])
        .args(args)
        .arg("--out")
        .arg(&*out)
        .output()
        .expect("the bench client runs");
    let verdicts = std::fs::read_to_string(out.join("verdicts.json")).map_or(Value::Null, |json| {
        serde_json::from_str::<Value>(&json).unwrap()
    });
    let verdicts = verdicts["verdicts"].clone();
    (output, verdicts)
}

/// The verdicts of `routes` on the server at `url`, ten at once, two rounds, asserted to
/// have all been written.
fn verdicts(url: &str, health: &str, routes: &[&str]) -> Vec<Value> {
    let mut args = vec!["--health", health, "--trials", "2", "--alone", "3"];
    for route in routes {
        args.extend(["--route", route]);
    }
    let (output, verdicts) = probe(url, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let listed = verdicts.as_array().cloned().unwrap_or_default();
    assert_eq!(listed.len(), routes.len(), "{stderr}");
    listed
}

/// `verdict`'s verdict and whether it holds the health check.
fn said(verdict: &Value) -> (&str, Option<bool>) {
    (
        verdict["verdict"].as_str().unwrap_or("?"),
        verdict["holds_health"].as_bool(),
    )
}

#[tokio::test]
async fn each_stub_server_gets_the_verdict_its_threads_make() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let cases = [
        (&["single"][..], ("serialises", Some(true)), Some(1)),
        (
            &["pool", "--workers", "4"][..],
            ("bounded", Some(true)),
            Some(4),
        ),
        (&["threads"][..], ("concurrent", Some(false)), Some(10)),
    ];
    for (args, expected, at_once) in cases {
        let server = stub(args).await;
        let found = verdicts(&server.endpoint().to_string(), "/", &[WORK]);
        assert_eq!(said(&found[0]), expected, "{args:?}: {:#}", found[0]);
        assert_eq!(
            found[0]["at_once"].as_u64(),
            at_once.map(|k| k as u64),
            "{args:?}"
        );
    }
}

#[tokio::test]
async fn what_cannot_be_judged_fails_with_its_reason_and_never_a_guess() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = stub(&["threads"]).await;
    let url = server.endpoint().to_string();
    let routes = [
        "--route",
        "/fail",
        "--route",
        "/hang",
        "--route",
        "/work?ms=1",
    ];
    let (output, found) = probe(&url, &[&routes[..], &["--timeout-ms", "300"]].concat());
    assert_eq!(output.status.code(), Some(1), "two routes failed");
    let whys: Vec<(&str, &str)> = (found.as_array().unwrap().iter())
        .map(|v| (said(v).0, v["why"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(whys[0].0, "failed");
    assert!(whys[0].1.contains("answered 500"), "{whys:?}");
    assert_eq!(whys[1].0, "failed");
    assert!(whys[1].1.contains("no answer within 300ms"), "{whys:?}");
    assert_eq!(whys[2].0, "inconclusive", "1 ms of work cannot tell");
    assert!(whys[2].1.contains("at least 20 ms"), "{whys:?}");

    let (output, found) = probe(&url, &["--route", WORK, "--health", "/nope"]);
    let why = found[0]["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("answered 404") && why.contains("--health"),
        "{why}"
    );
    assert_eq!(output.status.code(), Some(1));
    drop(server);

    let (_, found) = probe(&url, &["--route", WORK]);
    let why = found[0]["why"].as_str().unwrap_or_default();
    assert_eq!(said(&found[0]).0, "failed");
    assert!(
        why.contains("Connection refused"),
        "a stopped server: {why}"
    );
}

#[test]
fn a_bad_command_line_is_a_usage_error_that_probes_nothing() {
    let cases = [
        (
            &["http://192.0.2.7:8000", "--route", "/x"][..],
            "--allow-remote",
        ),
        (
            &["ftp://127.0.0.1:1", "--route", "/x"][..],
            "must start with http://",
        ),
        (&["http://127.0.0.1:1"][..], "--route"),
        (
            &["http://127.0.0.1:1", "--route", "report"][..],
            "is not [METHOD ]PATH",
        ),
        (
            &["http://127.0.0.1:1", "--route", "/x", "-n", "1"][..],
            "concurrency",
        ),
        (
            &[
                "http://127.0.0.1:1",
                "--route",
                "/x",
                "--fail-on",
                "serialises,slow",
            ][..],
            "\"slow\" is not a verdict",
        ),
    ];
    for (args, told) in cases {
        let out = temp_dir("probe-usage");
        let output = bench_client()
            .arg("probe")
            .args(args)
            .arg("--out")
            .arg(&*out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(told), "{args:?}: {stderr}");
        assert!(
            !out.join("probe.json").exists(),
            "{args:?} probed something"
        );
    }
}

#[tokio::test]
async fn the_fastapi_app_serialises_its_async_sleep_and_not_its_fixes() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = target::default_reference_dir();
    if !target::reference_python(&dir).is_file() {
        return skip("fastapi probe", "no venv for the FastAPI reference app");
    }
    let program = dir.join("bin").join("fastapi-asyncio");
    let server = ServerProcess::spawn("fastapi", &program, &[], &[], REFERENCE_READY_WITHIN)
        .await
        .expect("the FastAPI app starts");
    let routes = ["/bad?ms=100", "/ok-def?ms=100", "/ok-await?ms=100"];
    let found = verdicts(&server.endpoint().to_string(), "/ping", &routes);
    let expected = [
        ("serialises", Some(true)),
        ("concurrent", Some(false)),
        ("concurrent", Some(false)),
    ];
    for ((route, verdict), expected) in routes.iter().zip(&found).zip(expected) {
        assert_eq!(said(verdict), expected, "{route}: {verdict:#}");
    }
}

#[tokio::test]
async fn demo_servers_get_the_comparisons_verdicts() {
    let _alone = ONE_AT_A_TIME.lock().await;
    for name in ["demo-axum", "demo-hyper-glommio"] {
        let binary: PathBuf = real_server(name);
        let args = ["--threads".to_owned(), "1".to_owned()];
        let server = ServerProcess::spawn(name, &binary, &args, &[], READY_WITHIN)
            .await
            .expect("the demo server starts");
        let routes = ["/bad?ms=100", "/ok-blocking?ms=100", "/ok-await?ms=100"];
        let found = verdicts(&server.endpoint().to_string(), "/ping", &routes);
        let verdicts: Vec<_> = found.iter().map(said).collect();
        assert_eq!(
            verdicts,
            [
                ("serialises", Some(true)),
                ("concurrent", Some(false)),
                ("concurrent", Some(false))
            ],
            "{name}"
        );
    }
}
