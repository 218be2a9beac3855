//! monoio's blocking strategies, on a monoio server's `pool` variants (`no-pool` and
//! `execute-local` in its `stack.toml`): monoio's stock
//! `RuntimeBuilder` has no pool, and `spawn_blocking` panics, a 500 the server survives; with
//! `ExecuteLocal`, the closure runs on the reactor thread that called it, and a burst of
//! `/ok-blocking` serialises like `/bad`. (The server's own pool is the contract's
//! `ok_blocking_is_concurrent_off_the_reactor`.) Each shape is read from what the server
//! answered and recorded: the error, or which thread slept.

use demo_contract::variant::FLAG;

use crate::harness::*;

/// What monoio's `spawn_blocking` panics with when no pool is attached (monoio's
/// `blocking.rs`), as the `no-pool` variant's 500 gives it.
const NO_POOL_PANIC: &str = "execute blocking task without thread pool attached";

/// Without a pool, every `/ok-blocking` is a 500 that gives monoio's panic, and the server
/// goes on: `/ping` still answers.
pub fn without_a_pool_spawn_blocking_is_a_500(binary: &str) {
    block_on(async {
        let server = start(binary, &[FLAG, "no-pool"]).await;
        for _twice in 0..2 {
            let reply = get(server.endpoint(), "/ok-blocking?ms=10").await;
            assert_json(&reply, 500, "/ok-blocking without a pool");
            let body: serde_json::Value = reply.json().expect("a JSON error");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(error.contains(NO_POOL_PANIC), "{error}");
        }
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
    });
}

/// With `ExecuteLocal`, `/ok-blocking` sleeps on the reactor thread: a burst takes at least
/// 0.8 × N sleeps, all on one thread, and a `/ping` sent into it waits.
pub fn execute_local_sleeps_on_the_reactor(binary: &str) {
    block_on(async {
        let sleep = SHORT_SLEEP;
        let sleep_ms = sleep.as_millis().to_string();
        let args = [&[FLAG, "execute-local"][..], &["--sleep-ms", &sleep_ms]].concat();
        let server = start(binary, &args).await;
        let (burst, work, ping) = burst_with_ping(server.endpoint(), "/ok-blocking").await;
        assert!(work.iter().all(|work| work.on_reactor), "{work:?}");
        assert_eq!(per_thread(&work).len(), 1, "{work:?}");
        assert!(
            burst.wall >= sleep.mul_f64(0.8 * N as f64),
            "/ok-blocking took {}, less than 0.8 × {N} × sleep",
            in_ms(burst.wall)
        );
        assert!(ping >= sleep / 2, "/ping took only {}", in_ms(ping));
    });
}
