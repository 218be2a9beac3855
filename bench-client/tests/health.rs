//! The health check under a block, against a real server (demo-axum, on a free port): while
//! `/bad` holds the reactor, reactor-watch's `/health` answers at once with a 503 naming the
//! route; while `/ok-await` runs, it never answers 503. Shapes, with short windows; how each
//! stack fares is the results run's to count.

mod common;

use bench_client::experiments::health::{self, Answer, HealthPlan, Measured, Probed, tally};
use burst_meter::target::{self, Target};
use burst_meter::work::WorkPath;
use demo_contract::Route;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_names_the_blocking_route_and_stays_ok_under_awaiting_load() {
    common::real_server("demo-axum");
    let plan = HealthPlan {
        routes: vec![
            WorkPath::canonical(Route::Bad),
            WorkPath::canonical(Route::OkAwait),
        ],
        concurrency: 3,
        sleep_ms: 600,
        window_ms: 1500,
        rest_requests: 20,
        rest_warm_up: 2,
        ..HealthPlan::default()
    };
    let target = Target::server("demo-axum", &target::default_bin_dir());
    let ran = health::run(&[target], &plan, &mut |_| {}).await;
    assert!(ran.failures.is_empty(), "{:?}", ran.failures);
    let mut checks = Vec::new();
    let mut rest = Vec::new();
    for measured in ran.measured {
        match measured {
            Measured::Window(_, mine) => checks.extend(mine),
            Measured::Rest(costs) => rest.extend(costs),
            Measured::NoHealth(target) => panic!("{target}: no health URL read"),
        }
    }
    let tallies = tally::probes(&checks, plan.probe_timeout_ms);
    let of = |route: &str, endpoint: Probed| {
        (tallies.iter())
            .find(|t| t.route == route && t.endpoint == endpoint)
            .unwrap_or_else(|| panic!("no probes of {endpoint:?} during {route}: {checks:?}"))
    };
    let bad = of("/bad", Probed::Health);
    assert!(bad.unavailable >= 1, "{bad:?}");
    assert_eq!(
        bad.named,
        [("GET /bad".to_owned(), bad.unavailable)],
        "{bad:?}"
    );
    assert_eq!(bad.timed_out, 0, "served by its own thread: {bad:?}");
    let held = checks.iter().filter_map(|check| match check.outcome {
        Answer::Unavailable { held_ms, .. } => held_ms,
        _ => None,
    });
    assert!(held.clone().all(|ms| ms > 100.0), "{checks:?}");
    let calm = of("/ok-await", Probed::Health);
    assert_eq!(calm.unavailable, 0, "{calm:?}");
    assert!(calm.ok >= 1, "{calm:?}");
    assert_eq!(of("/bad", Probed::Ping).probes, bad.probes);
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(
        rest.iter()
            .all(|cost| cost.latencies_ms.len() == 20 && cost.failed == 0)
    );
}
