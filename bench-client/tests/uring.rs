//! Where io_uring differs, against the real servers: every setting starts and runs its trials,
//! the server's record shows the handlers ending one per sleep on all of them, and on the
//! epoll settings the answers come one per sleep too. Shapes, with short sleeps; whether the
//! stock io_uring servers hold their answers is the results run's to count.

mod common;

use bench_client::experiments::uring::{self, Held, UringPlan, held_of};
use burst_meter::target;
use demo_contract::IO_URING_REFUSED;

const SLEEP_MS: u64 = 40;
const N: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_setting_runs_and_the_epoll_ones_answer_one_per_sleep() {
    let plan = UringPlan {
        trials: 2,
        sleep_ms: SLEEP_MS,
        concurrency: N,
        leads_ms: vec![0.0],
    };
    for setting in uring::settings() {
        common::real_server(setting.server);
        let ran = uring::run(&setting, &target::default_bin_dir(), &plan, &mut |_| {}).await;
        if ran
            .failures
            .iter()
            .any(|f| f.reason.contains(IO_URING_REFUSED))
        {
            // Counted like every skip: a failure unless ALLOW_SKIPS=1.
            let test = format!("uring::every_setting_runs ({})", setting.label());
            common::skip(&test, IO_URING_REFUSED);
            continue;
        }
        assert!(ran.failures.is_empty(), "{:?}", ran.failures);
        let trials: Vec<_> = ran.measured.into_iter().flatten().collect();
        let pinged = trials.iter().filter(|t| t.lead_ms.is_some()).count();
        assert_eq!(pinged, if setting.order { 2 } else { 0 }, "{trials:?}");
        for trial in &trials {
            assert_eq!(trial.error, None, "{trial:?}");
            assert_eq!(
                burst_meter::stats::answer_groups(&trial.handlers_ended_ms, SLEEP_MS),
                N,
                "{trial:?}"
            );
        }
        // The settings that write each answer in the task that made it.
        let epoll = [
            ("demo-axum-compio", "epoll"),
            ("demo-ntex", "epoll-direct-write"),
        ];
        let variant = setting
            .variant
            .map(|variant| (variant.server, variant.name));
        if variant.is_some_and(|variant| epoll.contains(&variant)) {
            for trial in &trials {
                assert_eq!(held_of(trial, SLEEP_MS), Held::OnePerSleep, "{trial:?}");
            }
        }
    }
}
