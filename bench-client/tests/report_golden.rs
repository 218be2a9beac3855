//! The Markdown and JSON writers against golden files. After an intended change of format,
//! regenerate them with `UPDATE_GOLDEN=1 cargo test -p bench-client --test report_golden`
//! and read the diff.

use std::path::Path;

use bench_client::experiments::comparison::views::{readme, results_md};
use bench_client::experiments::comparison::{Report, Timing};
use bench_client::report::write_atomically;
use burst_meter::burst::ErrorCount;
use burst_meter::case::{Case, Plan};
use burst_meter::environment::Environment;
use burst_meter::probe::ProbeRecord;
use burst_meter::session::{Confounders, Failure};
use burst_meter::stalls::StallsSeen;
use burst_meter::stats::{Ideals, OpenLoopStats, PingStats, RequestTimes, Verdict};
use burst_meter::timeline::{Span, Timeline};
use burst_meter::work::WorkPath;

fn closed_loop(latencies_ms: Vec<f64>, errors: Vec<String>) -> ProbeRecord {
    ProbeRecord::of(
        latencies_ms
            .into_iter()
            .map(Ok)
            .chain(errors.into_iter().map(Err)),
    )
}

/// An open-loop record: every ping answered, each with its send lag.
fn open_loop(latencies_ms: Vec<f64>, send_lag_ms: f64, cpu_ms: f64) -> ProbeRecord {
    let mut record = ProbeRecord::of(latencies_ms.into_iter().map(Ok));
    for ping in &mut record.pings {
        ping.send_lag_ms = Some(send_lag_ms);
    }
    record.cpu_ms = Some(cpu_ms);
    record.realtime = true;
    record
}

fn case(
    target: &str,
    route: &str,
    wall_ms: f64,
    thread: &str,
    on_reactor: bool,
    pings: Vec<f64>,
) -> Case {
    let ideals = Ideals::new(10, 500, 1);
    Case {
        target: target.into(),
        runtime: Some("tokio current_thread".into()),
        reactor_threads: 1,
        route: route.into(),
        n: 10,
        sleep_ms: 500,
        wall_ms,
        times_ideal: ideals.times_ideal(wall_ms),
        ok: 10,
        err: 0,
        errors: Vec::new(),
        verdict: ideals.verdict(wall_ms, 0),
        sleep_thread: Some(thread.into()),
        on_reactor: Some(on_reactor),
        closed_loop: Some(PingStats::from_record(closed_loop(pings, Vec::new()))),
        open_loop: None,
        requests: RequestTimes::from_ms(&[wall_ms]),
        stalls: None,
        confounders: Confounders::default(),
        timeline: None,
        call: None,
    }
}

fn report() -> Report {
    let mut actix_bad = case(
        "demo-actix",
        "/bad",
        5004.9,
        "actix-rt|system:0|arbiter:0",
        true,
        vec![0.9, 498.0, 500.2],
    );
    actix_bad.runtime = Some("actix-rt (tokio current_thread per worker)".into());
    actix_bad.closed_loop = Some(PingStats::from_record(closed_loop(
        vec![0.9, 498.0, 500.2],
        vec!["connection closed before message completed".into()],
    )));
    let mut actix_await = case(
        "demo-actix",
        "/ok-await",
        30512.0,
        "actix-rt|system:0|arbiter:0",
        true,
        vec![0.7],
    );
    actix_await.runtime = actix_bad.runtime.clone();
    actix_await.ok = 9;
    actix_await.err = 1;
    actix_await.verdict = Verdict::Failed;
    actix_await.errors = vec![ErrorCount {
        reason: "no answer within 30s".into(),
        count: 1,
    }];
    let mut axum_bad = case(
        "demo-axum",
        "/bad",
        5012.3,
        "main",
        true,
        vec![1.0, 451.0, 500.5, 499.9],
    );
    axum_bad.stalls = Some(StallsSeen {
        threshold_ms: 100.0,
        slow_polls: 10,
        longest_ms: Some(501.2),
        routes: vec!["GET /bad".into()],
    });
    // Its first answer as its sleep ended, its last after all ten.
    let answered = |sent_ms, ended_ms| Span {
        sent_ms,
        ended_ms,
        ok: true,
    };
    axum_bad.timeline = Some(Timeline {
        requests: vec![answered(0.0, 501.0), answered(0.1, 5012.3)],
        closed_loop: Vec::new(),
        open_loop: Vec::new(),
    });
    // Both its answers held until its last handler ended, as on an io_uring stack.
    actix_bad.timeline = Some(Timeline {
        requests: vec![answered(0.0, 5009.0), answered(0.1, 5010.1)],
        closed_loop: Vec::new(),
        open_loop: Vec::new(),
    });
    axum_bad.open_loop = Some(OpenLoopStats::from_record(open_loop(
        vec![0.4, 4950.0, 4900.0, 4850.0, 4800.0, 4750.0],
        0.1,
        1.5,
    )));
    let mut axum_await = case(
        "demo-axum",
        "/ok-await",
        503.4,
        "main",
        true,
        vec![0.8, 0.6, 1.1],
    );
    let mut await_pings = open_loop(vec![0.9, 0.7, 1.0], 0.01, 0.9);
    await_pings.pings[1].send_lag_ms = Some(0.02);
    axum_await.open_loop = Some(OpenLoopStats::from_record(await_pings));
    Report {
        environment: Environment {
            date: "2026-12-02T12:00:00Z".into(),
            git_commit: "0123abc".into(),
            code_stamp: "89abcdef01234567".into(),
            rustc: "rustc 1.95.0".into(),
            cpu: "Test CPU".into(),
            cores: 2,
            memory: "24 GB".into(),
            os: "Debian".into(),
            kernel: "6.1".into(),
            crates: vec!["tokio 1.54.1".into()],
            stacks: Vec::new(),
        },
        plan: Plan {
            routes: vec![WorkPath::WORK[0], WorkPath::WORK[2]],
            ..Plan::default()
        },
        command: "bench-client".into(),
        cases: vec![axum_bad, axum_await, actix_bad, actix_await],
        failures: vec![Failure {
            target: "demo-hyper-smol".into(),
            reactor_threads: 1,
            route: None,
            reason: "demo-hyper-smol: exited with exit status: 1 before it was ready".into(),
        }],
        timing: Timing {
            total_s: 20.0,
            bursts_s: 15.0,
            protocol_waits_s: 1.4,
        },
    }
}

fn check(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs from its golden file; see the module docs"
    );
}

#[test]
fn markdown_matches_its_golden_file() {
    check("RESULTS.md", &results_md::results_markdown(&report()));
}

#[test]
fn readme_block_matches_its_golden_file() {
    check("README-block.md", &readme::block(&report(), None));
}

#[test]
fn json_matches_its_golden_file() {
    check(
        "results.json",
        &bench_client::report::files::json(&report()),
    );
}

#[test]
fn json_round_trips_and_has_the_documented_keys() {
    let report = report();
    let json = bench_client::report::files::json(&report);
    assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let case = &value["cases"][0];
    for key in [
        "target",
        "route",
        "reactor_threads",
        "n",
        "sleep_ms",
        "wall_ms",
        "ok",
        "err",
        "verdict",
        "sleep_thread",
        "on_reactor",
    ] {
        assert!(!case[key].is_null(), "cases[0].{key}");
    }
    for key in [
        "samples", "errors", "mean_ms", "p50_ms", "p95_ms", "max_ms", "raw_ms",
    ] {
        assert!(!case["ping"][key].is_null(), "cases[0].ping.{key}");
    }
    assert_eq!(case["verdict"], "serialises");
    assert_eq!(value["cases"][1]["verdict"], "concurrent");
    assert!(value["environment"]["rustc"].is_string());
}

#[test]
fn writing_is_atomic_and_leaves_no_temporary_file() {
    let dir = std::env::temp_dir().join(format!("bench-client-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("RESULTS.md");
    std::fs::write(&path, "old").unwrap();
    write_atomically(&path, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    let json = [(
        "results.json".to_owned(),
        bench_client::report::files::json(&report()),
    )];
    bench_client::report::files::write_all(&dir, &json).unwrap();
    let views = bench_client::experiments::comparison::views::views(&report()).unwrap();
    bench_client::report::files::write_all(&dir, &views).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // A CDF per route with open-loop samples, the timeline of the case that has one; no
    // temporary file.
    assert_eq!(
        names,
        [
            "RESULTS.md",
            "ping-cdf-bad.svg",
            "ping-cdf-ok-await.svg",
            "results.json",
            "timeline.svg"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
