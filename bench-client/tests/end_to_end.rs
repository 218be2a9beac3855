//! The bench client against the real servers, with short sleeps: the report's shape, not
//! its speed. The servers are found beside the test binary, so build them first: the
//! README's `cargo test --workspace` does.

mod common;

use std::path::Path;

use burst_meter::stats::Verdict;
use burst_meter::target::ServerProcess;
use common::{read_report, real_server, temp_dir};

/// Runs the client to its end with `args` and `--out dir`, once every server it may spawn is
/// built, and checks that it succeeded.
fn bench_client_into<S: AsRef<std::ffi::OsStr>>(args: &[S], dir: &Path) -> std::process::Output {
    for server in stacks::names() {
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
        stacks::names()
            .iter()
            .all(|server| targets.contains(server)),
        "{targets:?}"
    );
    assert_eq!(report.cases.len(), targets.len() * 3);
    for case in &report.cases {
        let expected = if case.route == "/bad" {
            Verdict::Serialises
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
        served[..stacks::names().len()],
        *stacks::names(),
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
        ("external", "/bad", Verdict::Serialises)
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
    assert_eq!(report.plan.connect, burst_meter::burst::Connect::Before);
    let verdicts: Vec<(&str, Verdict)> = report
        .cases
        .iter()
        .map(|case| (case.route.as_str(), case.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("/bad", Verdict::Serialises),
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

/// The README's command for an app somebody else runs, `bench-client --url
/// fastapi=URL --routes /bad,/ok-def,/ok-await`, requests `/ok-def` as `/ok-def` and judges
/// each route by what the app did.
#[test]
fn an_external_fastapi_app_is_measured_at_the_paths_given() {
    use burst_meter::case::{self, Plan};
    use burst_meter::probe::ProbeChoice;
    use burst_meter::stats::Verdict;
    use burst_meter::target::{self, ServerProcess, Target};
    use burst_meter::work::WorkPath;

    if std::env::var_os("REFERENCE_APP").is_some_and(|value| value == "missing") {
        let test = "an_external_fastapi_app_is_measured_at_the_paths_given";
        return common::skip(test, "no python3 with venv for the FastAPI reference app");
    }
    let dir = target::default_reference_dir();
    let script = dir.join("bin").join("fastapi-asyncio");
    assert!(
        target::reference_python(&dir).is_file(),
        "run reference/fastapi/setup.sh first (the README's test command does)"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = ServerProcess::start_within(
            "fastapi-asyncio",
            script.as_ref(),
            &[],
            target::REFERENCE_READY_WITHIN,
        )
        .await
        .unwrap_or_else(|error| panic!("{error}"));
        let targets = [Target::External {
            label: "fastapi".into(),
            endpoint: server.endpoint().clone(),
        }];
        let routes = ["/bad", "/ok-def", "/ok-await"].map(|path| WorkPath::parse(path).unwrap());
        let plan = Plan {
            routes: routes.to_vec(),
            concurrency: 4,
            sleep_ms: 100,
            probe: ProbeChoice::Closed,
            ..Plan::default()
        };
        let outcome = case::run_plan(&targets, &plan, &mut |_| {}).await;
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
        let seen: Vec<(&str, usize, Verdict)> = outcome
            .measured
            .iter()
            .map(|case| (case.route.as_str(), case.ok, case.verdict))
            .collect();
        assert_eq!(
            seen,
            [
                ("/bad", 4, Verdict::Serialises),
                ("/ok-def", 4, Verdict::Concurrent),
                ("/ok-await", 4, Verdict::Concurrent),
            ]
        );
    });
}
