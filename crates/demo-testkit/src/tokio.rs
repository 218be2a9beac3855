//! tokio's own answers ([`Route::TOKIO`]): on the tokio servers, `block_in_place` as a 500 on
//! `current_thread` and concurrent on one `multi_thread` worker, the timer joined beside it held
//! for the whole sleep, the task spawned before a block held in the worker's LIFO slot (and,
//! with the slot off, taken by the idle worker); on every other server, a 404 that says whose
//! routes they are. Each shape is read from what the server recorded: which thread ran what,
//! and when the timer or the spawned task went on.

use std::path::Path;

use burst_meter::http::Endpoint;
use burst_meter::target;
use demo_contract::CURRENT_THREAD_PANIC;
use demo_contract::variant::{self, runs_in};
use demo_contract::{Joined, Pong, Route, Spawned};

use crate::harness::*;

/// Every server that does not run tokio answers each of tokio's routes 404, saying so.
pub fn tokio_routes_are_404_elsewhere(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        for route in Route::TOKIO {
            let reply = get(server.endpoint(), &format!("{route}?ms=1")).await;
            assert_json(&reply, 404, route.path());
            let body: serde_json::Value = reply.json().expect("a JSON error");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("one of tokio's own routes"),
                "{route}: {error}"
            );
        }
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
    });
}

/// On `current_thread` (`--threads 1`), `block_in_place` panics before it runs its closure:
/// both routes that call it answer 500 with tokio's reason, and the server goes on.
pub fn block_in_place_is_a_500_on_current_thread(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        for route in [Route::OkBlockInPlace, Route::JoinBlockInPlace] {
            let reply = get(server.endpoint(), &format!("{route}?ms=1")).await;
            assert_json(&reply, 500, route.path());
            let body: serde_json::Value = reply.json().expect("a JSON error");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(error.contains(CURRENT_THREAD_PANIC), "{route}: {error}");
        }
        let pong: Pong = get(server.endpoint(), "/ping")
            .await
            .json()
            .expect("a pong");
        assert_eq!(pong.runtime, "tokio current_thread");
    });
}

/// On one `multi_thread` worker, a burst of `/ok-block-in-place` sleeps concurrently, each
/// request on a thread of its own (tokio hands the worker's other tasks to a new thread each
/// time), and a `/ping` sent into it is answered within half a sleep.
pub fn block_in_place_frees_the_one_worker(binary: &str) {
    block_on(async {
        let sleep = CONCURRENT_SLEEP;
        let sleep_ms = sleep.as_millis().to_string();
        let server = start(binary, &multi_thread(&["--sleep-ms", &sleep_ms])).await;
        let pong: Pong = get(server.endpoint(), "/ping")
            .await
            .json()
            .expect("a pong");
        assert_eq!(
            (pong.runtime.as_str(), pong.reactor_threads),
            ("tokio multi_thread", 1)
        );
        let path = Route::OkBlockInPlace.path();
        let (burst, work, ping) = burst_with_ping(server.endpoint(), path).await;
        assert!(burst.wall < sleep * 3, "{path} took {}", in_ms(burst.wall));
        assert!(ping < sleep / 2, "/ping during {path} took {}", in_ms(ping));
        assert_eq!(per_thread(&work).len(), N, "{path}: {work:?}");
    });
}

/// In one task, a timer joined with a sleep under `block_in_place` fires only when the sleep
/// has ended; joined with the same sleep under `spawn_blocking`, before it ends.
pub fn the_timer_beside_block_in_place_waits_for_the_sleep(binary: &str) {
    block_on(async {
        let server = start(binary, &multi_thread(&[])).await;
        let endpoint = server.endpoint();
        let held = joined(endpoint, Route::JoinBlockInPlace).await;
        let slept = held.work.slept_ms as f64;
        assert!(held.timer_fired_ms >= slept, "{held:?}");
        let free = joined(endpoint, Route::JoinSpawnBlocking).await;
        assert!(free.timer_fired_ms < slept, "{free:?}");
        assert!(free.timer_fired_ms >= free.timer_due_ms as f64, "{free:?}");
    });
}

/// On two workers, a task spawned by a handler that then blocks waits for the block on that
/// handler's thread: it sat in the worker's LIFO slot, which the idle worker does not steal.
/// Where the server has the variant without the slot (built with `--cfg tokio_unstable`), the
/// same request's task runs on the other worker before the block ends.
pub fn the_task_spawned_before_a_block_waits_in_the_lifo_slot(binary: &str) {
    block_on(async {
        let server = start(binary, &["--threads", "2"]).await;
        let held = spawned(server.endpoint()).await;
        assert_eq!(held.spawned_thread_id, held.work.thread_id, "{held:?}");
        assert!(held.spawned_ran_ms >= held.work.slept_ms as f64, "{held:?}");
    });
    let server = server_name(binary);
    // The flip of tokio's own answers: its LIFO slot off.
    let Some(lifo_slot_off) = variant::of_server(server)
        .find(|variant| variant.runs_in(runs_in::TOKIO) && variant.name == "lifo-slot-off")
    else {
        return;
    };
    let unstable = target::unstable_bin_dir(Path::new(binary).parent().unwrap()).join(server);
    assert!(
        unstable.is_file(),
        "no {}: scripts/test.sh builds it",
        unstable.display()
    );
    block_on(async {
        let [flag, name] = lifo_slot_off.args();
        let args = ["--threads", "2", flag, name];
        let server = start(unstable.to_str().expect("a UTF-8 path"), &args).await;
        let free = spawned(server.endpoint()).await;
        assert_ne!(free.spawned_thread_id, free.work.thread_id, "{free:?}");
        assert!(free.spawned_ran_ms < free.work.slept_ms as f64, "{free:?}");
    });
}

/// `args` with the server's `multi-thread` variant: one `multi_thread` worker.
fn multi_thread<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![variant::FLAG, variant::MULTI_THREAD];
    all.extend_from_slice(args);
    all
}

/// The body of one join route's request, sleeping [`CONCURRENT_SLEEP`].
async fn joined(endpoint: &Endpoint, route: Route) -> Joined {
    let path = format!("{route}?ms={}", CONCURRENT_SLEEP.as_millis());
    let reply = get(endpoint, &path).await;
    assert_json(&reply, 200, &path);
    reply.json().expect("a join body")
}

/// The body of one `/bad-after-spawn` request, sleeping [`CONCURRENT_SLEEP`].
async fn spawned(endpoint: &Endpoint) -> Spawned {
    let path = format!(
        "{}?ms={}",
        Route::BadAfterSpawn,
        CONCURRENT_SLEEP.as_millis()
    );
    let reply = get(endpoint, &path).await;
    assert_json(&reply, 200, &path);
    reply.json().expect("a spawn body")
}
