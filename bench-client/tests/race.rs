//! The race against the real servers: where a ping sent at a chosen point is handled, as the
//! server's own record says, and the variants the flips start. Orders, not timings, with short
//! sleeps; the outcomes that depend on the race itself are the results run's, not these.

mod common;

use bench_client::experiments::race::arrival::{self, ArrivalPlan, ArrivalTrial, PingAt};
use bench_client::experiments::race::{self, GotIn, RacePlan};
use burst_meter::burst::Connect;
use burst_meter::target::{self, Target};
use demo_contract::variant::{self, runs_in};

const SLEEP_MS: u64 = 40;
const N: usize = 4;

async fn arrivals(server: &str, points: Vec<PingAt>) -> Vec<ArrivalTrial> {
    let binary = common::real_server(server);
    let target = Target::server(server, binary.parent().unwrap());
    let plan = ArrivalPlan {
        trials: 2,
        sleep_ms: SLEEP_MS,
        concurrency: N,
        points,
    };
    let outcome = arrival::run(&[target], &plan, &mut |_| {}).await;
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let trials: Vec<ArrivalTrial> = outcome.measured.into_iter().flatten().collect();
    for trial in &trials {
        assert_eq!(trial.error, None, "{trial:?}");
    }
    trials
}

/// A ping whose bytes are there before any burst connection exists is handled before any
/// `/bad`; one on a connection opened during the first sleep, after at least that one, and
/// only once the server had accepted its connection and the burst's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_record_places_the_ping_among_the_burst() {
    for server in ["demo-axum", "demo-actix", "demo-hyper-smol"] {
        let points = vec![PingAt::BeforeBurst, PingAt::OwnConnection];
        let trials = arrivals(server, points).await;
        assert_eq!(trials.len(), 4, "{trials:?}");
        for trial in &trials {
            let order = trial.order.expect("the server recorded the ping");
            let (handled, accepted) = (order.handled_after, order.accepted_before);
            match trial.point {
                PingAt::BeforeBurst => assert_eq!(handled, 0, "{server}: {trial:?}"),
                _ => {
                    assert!((1..=N).contains(&handled), "{server}: {trial:?}");
                    assert_eq!(accepted, N, "{server}: {trial:?}");
                    let waited = trial.ping_ms.expect("answered") / SLEEP_MS as f64;
                    assert!(waited >= 0.3, "{server}: {trial:?}");
                }
            }
        }
    }
}

/// One trial of the race on each variant the flips run: it starts, serves the burst and the
/// pings, and has a verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_variant_of_the_flips_runs_a_trial() {
    let plan = RacePlan {
        trials: 1,
        sleep_ms: SLEEP_MS,
        concurrency: N,
        connects: vec![Connect::During],
        ..RacePlan::default()
    };
    for variant in variant::running_in(runs_in::RACE) {
        common::real_server(variant.server);
        let target = Target::variant(variant, &target::default_bin_dir());
        let outcome = race::run(&[target], &plan, &mut |_| {}).await;
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
        let trial = &outcome.measured[0];
        assert_eq!(trial.target, variant.label);
        assert_ne!(trial.outcome, GotIn::Failed, "{trial:?}");
    }
}
