//! The bench client against the real servers, with short sleeps: the report's shape, not
//! its speed. The servers are found beside the test binary, so build them first: the
//! README's `cargo test --workspace` does.

mod common;

use std::path::Path;

use bench_client::measure::stats::Verdict;
use bench_client::measure::target::{SERVERS, ServerProcess};
use common::{read_report, real_server, temp_dir};

/// Runs the client to its end with `args` and `--out dir`, once every server it may spawn is
/// built, and checks that it succeeded.
fn bench_client_into<S: AsRef<std::ffi::OsStr>>(args: &[S], dir: &Path) -> std::process::Output {
    for server in SERVERS {
        real_server(server);
    }
    let out = common::bench_client()
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .expect("bench-client runs");
    assert!(
        out.status.success(),
        "bench-client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_default_comparison_shows_bad_serialised_on_every_stack() {
    let dir = temp_dir("all");
    let out = bench_client_into(
        &["--sleep-ms", "100", "-n", "5", "--ping-every-ms", "20"],
        &dir,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("=== /bad (5 concurrent, sleep=0.1s each) ==="),
        "{stdout}"
    );

    let report = read_report(&dir);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    // Every Rust server, and the FastAPI reference targets where their venv is set up.
    let targets: std::collections::BTreeSet<&str> = report
        .cases
        .iter()
        .map(|case| case.target.as_str())
        .collect();
    assert!(
        SERVERS.iter().all(|server| targets.contains(server)),
        "{targets:?}"
    );
    assert_eq!(report.cases.len(), targets.len() * 3);
    for case in &report.cases {
        let expected = if case.route == "/bad" {
            Verdict::Serialised
        } else {
            Verdict::Concurrent
        };
        assert_eq!(
            case.verdict, expected,
            "{} {}: {} ms",
            case.target, case.route, case.wall_ms
        );
        assert_eq!(
            (case.ok, case.err),
            (5, 0),
            "{} {}",
            case.target,
            case.route
        );
        let ping = case.closed_loop.as_ref().expect("the closed loop ran");
        assert_eq!(
            ping.errors, 0,
            "{} {}: {:?}",
            case.target, case.route, ping.error_reasons
        );
        assert!(ping.samples >= 1, "{} {}", case.target, case.route);
        assert_eq!(
            case.on_reactor,
            Some(case.route != "/ok-blocking"),
            "{} {}",
            case.target,
            case.route
        );
    }
    let served: Vec<&str> = report
        .cases
        .iter()
        .step_by(3)
        .map(|case| case.target.as_str())
        .collect();
    assert_eq!(
        served[..SERVERS.len()],
        SERVERS,
        "the Rust servers first, in order"
    );

    let markdown = std::fs::read_to_string(dir.join("RESULTS.md")).expect("RESULTS.md is written");
    assert!(
        markdown.contains("| stack | runtime (reactor threads) | route |"),
        "{markdown}"
    );
    let all = format!("`/bad` was serialised on all {} stacks", targets.len());
    assert!(markdown.contains(&all), "{markdown}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_url_target_is_driven_identically_with_the_sleep_as_a_query() {
    let binary = real_server("demo-hyper-tokio");
    // The server's own default sleep is 500 ms: only `?ms=50` makes the burst short.
    let server = ServerProcess::start("demo-hyper-tokio", &binary, &[])
        .await
        .expect("the server starts");
    let url = format!("external={}", server.endpoint());
    let dir = temp_dir("url");
    let args = [
        "--url",
        &url,
        "--routes",
        "/bad,/ok-await",
        "-n",
        "4",
        "--sleep-ms",
        "50",
    ]
    .map(str::to_owned);
    let out_dir = dir.to_path_buf();
    // The client is a process of its own; wait for it off this test's runtime.
    tokio::task::spawn_blocking(move || bench_client_into(&args, &out_dir))
        .await
        .unwrap();
    let report = read_report(&dir);
    assert_eq!(report.cases.len(), 2);
    let bad = &report.cases[0];
    assert_eq!(
        (bad.target.as_str(), bad.route.as_str(), bad.verdict),
        ("external", "/bad", Verdict::Serialised)
    );
    assert!(
        bad.wall_ms >= 0.8 * 4.0 * 50.0 && bad.wall_ms < 0.8 * 4.0 * 500.0,
        "{} ms",
        bad.wall_ms
    );
    assert_eq!(report.cases[1].verdict, Verdict::Concurrent);
    assert_eq!(bad.runtime.as_deref(), Some("tokio current_thread"));
    server.stop().await.expect("the server stops");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_sweep_writes_a_table_and_a_well_formed_plot_per_route() {
    let dir = temp_dir("sweep");
    bench_client_into(
        &[
            "sweep",
            "--servers",
            "demo-hyper-tokio",
            "-n",
            "1,10",
            "--sleep-ms",
            "10",
        ],
        &dir,
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(
        json["points"].as_array().map(Vec::len),
        Some(6),
        "3 routes × 2 values of N"
    );
    let markdown = std::fs::read_to_string(dir.join("SWEEP.md")).unwrap();
    for route in ["bad", "ok-blocking", "ok-await"] {
        let name = format!("wall-vs-n-{route}.svg");
        assert!(markdown.contains(&name), "SWEEP.md links {name}");
        let svg = std::fs::read_to_string(dir.join(&name)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        assert!(
            svg.contains("demo-hyper-tokio") && svg.contains("wall time (ms)"),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn connecting_before_the_burst_tells_the_same_story_and_reads_the_kernel() {
    let dir = temp_dir("before");
    bench_client_into(
        &[
            "--servers",
            "demo-axum",
            "--connect",
            "before",
            "--sleep-ms",
            "100",
            "-n",
            "5",
            "--routes",
            "/bad,/ok-await",
        ],
        &dir,
    );
    let report = read_report(&dir);
    assert_eq!(
        report.plan.connect,
        bench_client::measure::burst::Connect::Before
    );
    let verdicts: Vec<(&str, Verdict)> = report
        .cases
        .iter()
        .map(|case| (case.route.as_str(), case.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("/bad", Verdict::Serialised),
            ("/ok-await", Verdict::Concurrent)
        ]
    );
    if cfg!(target_os = "linux") {
        assert!(
            report
                .cases
                .iter()
                .all(|case| case.confounders.kernel.is_some() && case.confounders.cpu.is_some())
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
