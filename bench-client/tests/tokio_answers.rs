//! tokio's own answers against the real tokio servers, a few requests of each: every shape is
//! read from what the servers recorded (a 500's reason, when a timer fired, where and when a
//! spawned task ran), never from a time the client measured. Needs demo-hyper-tokio built
//! with `--cfg tokio_unstable` (scripts/test.sh builds it).

mod common;

use bench_client::experiments::tokio::{
    TokioPlan, TokioTargets, lifo_targets, servers, tally, tokio_answers,
};
use burst_meter::environment::Environment;
use burst_meter::session::ServerOptions;
use burst_meter::target::{self, Target};
use demo_contract::CURRENT_THREAD_PANIC;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_answer_keeps_its_shape_and_the_slot_flips_the_spawned_task() {
    let dir = target::default_bin_dir();
    for server in servers() {
        common::real_server(server);
    }
    let unstable = target::unstable_bin_dir(&dir).join("demo-hyper-tokio");
    assert!(
        unstable.is_file(),
        "no {}: scripts/test.sh builds it",
        unstable.display()
    );
    let targets = TokioTargets {
        tokio: servers()
            .iter()
            .map(|server| Target::server(server, &dir))
            .collect(),
        lifo: lifo_targets(&dir),
    };
    let plan = TokioPlan {
        trials: 3,
        sleep_ms: 100,
        join_workers: 2,
        workers: vec![2],
        server: ServerOptions::default(),
    };
    let environment = Environment::with_stamp("test".to_owned());
    let report = tokio_answers(&targets, plan, environment, String::new(), &mut |_| {}).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);

    assert_eq!(
        report.refusals.len(),
        2 * servers().len(),
        "{:?}",
        report.refusals
    );
    for refusal in &report.refusals {
        assert_eq!(refusal.status, 500, "{refusal:?}");
        assert!(refusal.error.contains(CURRENT_THREAD_PANIC), "{refusal:?}");
    }

    let joins = tally::joins(&report);
    assert_eq!(joins.len(), 2 * servers().len(), "{joins:?}");
    for join in &joins {
        let held = if join.route == "/join-block-in-place" {
            join.trials
        } else {
            0
        };
        assert_eq!((join.trials, join.held), (3, held), "{join:?}");
    }

    let spawns = tally::spawns(&report);
    assert_eq!(spawns.len(), 2, "{spawns:?}");
    for spawn in &spawns {
        let waited = if spawn.lifo_slot { spawn.trials } else { 0 };
        assert_eq!(
            (spawn.waited, spawn.same_thread),
            (waited, waited),
            "{spawn:?}"
        );
    }
    let page = bench_client::experiments::tokio::views::tokio_markdown(&report);
    assert!(
        page.contains("## The task spawned before a block"),
        "{page}"
    );
}
