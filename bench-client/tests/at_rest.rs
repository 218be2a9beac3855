//! The at-rest experiment against the real servers: what each variant changes shows in the
//! wake-up counts. Counts, not timings: a thread that waits on epoll is woken by every ping
//! that arrives while it sleeps, however busy the machine.

mod common;

use bench_client::experiments::rest::{self, RestPlan, RestPoint};
use burst_meter::target::{self, Target};
use demo_contract::variant::{self, Variant, runs_in};

/// Pings 10 ms apart, in two rounds of 200 ms: about 40, each arriving while every server
/// thread sleeps.
fn plan() -> RestPlan {
    RestPlan {
        pauses_ms: vec![10],
        probe_ms: 200,
        rounds: 2,
    }
}

async fn at_rest(target: Target) -> RestPoint {
    let outcome = rest::run(&[target], &plan(), &mut |_| {}).await;
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    // The two rounds pooled into one point.
    assert_eq!(outcome.measured.len(), 1, "{:?}", outcome.measured);
    let point = outcome.measured.into_iter().next().expect("one point");
    assert!(point.closed_loop.samples >= 20, "{point:?}");
    point
}

fn variant(variant: &Variant) -> Target {
    common::real_server(variant.server);
    Target::variant(variant, &target::default_bin_dir())
}

/// Stock demo-hyper-tokio on one thread: the main thread waits on epoll and runs the request,
/// so it alone wakes, once per ping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_current_thread_wakes_one_thread_per_ping() {
    let server = common::real_server("demo-hyper-tokio");
    let point = at_rest(Target::server("demo-hyper-tokio", server.parent().unwrap())).await;
    let main = point.wakeups_per_ping["demo-hyper-toki"];
    assert!((0.8..1.5).contains(&main), "{:?}", point.wakeups_per_ping);
    assert!(
        !point.wakeups_per_ping.contains_key("tokio-rt-worker"),
        "{:?}",
        point.wakeups_per_ping
    );
}

/// The variant adds the hop: its worker waits on epoll and is woken by every ping, and wakes
/// the main thread, which runs the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reactor_on_a_worker_adds_a_wake_up_per_ping() {
    let point = at_rest(variant(
        variant::in_experiment(runs_in::REST, "reactor-on-worker").unwrap(),
    ))
    .await;
    assert_eq!(
        point.runtime.as_deref(),
        Some("tokio LocalSet on main, epoll on a multi_thread worker")
    );
    let wakes = |thread: &str| point.wakeups_per_ping.get(thread).copied().unwrap_or(0.0);
    assert!(
        wakes("demo-hyper-toki") >= 0.8,
        "{:?}",
        point.wakeups_per_ping
    );
    assert!(
        wakes("tokio-rt-worker") >= 0.8,
        "{:?}",
        point.wakeups_per_ping
    );
}
