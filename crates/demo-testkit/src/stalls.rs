//! The stall detector behind `GET /stalls`: blocking polls are counted and logged under
//! their route, short polls are not, and `--stall-ms 0` turns it off.

use std::time::{Duration, Instant};

use burst_meter::burst::{self, Connect};
use burst_meter::http::Endpoint;

use crate::harness::*;

/// A stall: a `/bad` sleep of this long is one poll that holds the reactor thread three times
/// the default threshold (100 ms).
pub(crate) const STALL: Duration = Duration::from_millis(300);
/// How many `/bad` stalls a check fires at once.
pub(crate) const STALLS: usize = 3;

/// `GET /stalls`, checked to be a 200 in JSON, as text and parsed.
pub(crate) async fn stalls(endpoint: &Endpoint) -> (String, serde_json::Value) {
    let reply = get(endpoint, "/stalls").await;
    assert_json(&reply, 200, "/stalls");
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let body = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    (text, body)
}

/// Fires `n` concurrent requests of `path` and expects every one to succeed.
pub(crate) async fn fire_all(endpoint: &Endpoint, path: &str, n: usize) {
    let burst = burst::fire(endpoint, path, n, TIMEOUT, Connect::During).await;
    assert_eq!(burst.ok(), n, "{path}: {:?}", burst.errors());
}

/// A number field of a `/stalls` body.
pub(crate) fn number(body: &serde_json::Value, field: &str) -> f64 {
    body[field]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {field:?} in {body}"))
}

/// `/stalls` counted no slow poll, at the threshold `threshold_ms`.
pub(crate) fn assert_no_stalls(body: &serde_json::Value, threshold_ms: f64) {
    assert_eq!(number(body, "threshold_ms"), threshold_ms, "{body}");
    assert_eq!(number(body, "slow_polls"), 0.0, "{body}");
    assert_eq!(number(body, "longest_ms"), 0.0, "{body}");
    assert_eq!(body["by_route"], serde_json::json!({}), "{body}");
}

/// Three concurrent `/bad?ms=300` on one reactor thread: three polls of 300 ms, each counted
/// as a slow poll under `GET /bad`. (The FastAPI reference app passes it too; the exact body and
/// the log lines of the Rust servers are the next check's.)
pub fn blocking_polls_are_counted_as_stalls(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        let (_, body) = stalls(server.endpoint()).await;
        assert_eq!(number(&body, "threshold_ms"), 100.0, "{body}");
        assert_eq!(number(&body, "slow_polls"), STALLS as f64, "{body}");
        let longest = number(&body, "longest_ms");
        assert!(longest >= STALL.as_secs_f64() * 1e3 * 0.8, "{body}");
        let by_route = body["by_route"].as_object().expect("a by_route object");
        let routes: Vec<&str> = by_route.keys().map(String::as_str).collect();
        assert_eq!(routes, ["GET /bad"], "{body}");
        let bad = &by_route["GET /bad"];
        assert_eq!(number(bad, "slow_polls"), STALLS as f64, "{body}");
        assert_eq!(number(bad, "longest_ms"), longest, "{body}");
    });
}

/// The same stalls as the Rust servers report them: the body exactly as reactor-watch writes
/// it, under the label `GET /bad`, and on stderr a line for each while it still runs (the
/// watchdog's) and once it returned.
pub fn stalls_are_logged_while_they_run_under_their_route(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        let (text, body) = stalls(server.endpoint()).await;
        let longest = number(&body, "longest_ms");
        let expected = format!(
            r#"{{"threshold_ms":100,"slow_polls":{STALLS},"longest_ms":{longest},"by_route":{{"GET /bad":{{"slow_polls":{STALLS},"longest_ms":{longest}}}}},"still_running_reports":"#
        );
        assert!(text.starts_with(&expected), "{text}\nexpected {expected}…");
        let still_running = body["still_running_reports"].as_u64().expect("a count");
        assert!((1..=STALLS as u64).contains(&still_running), "{text}");

        // stderr is read by a task of ours: give it a moment to catch up.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let lines = server.stderr().lines();
            let running = lines
                .iter()
                .filter(|line| line.ends_with(" in GET /bad (still running)"))
                .count();
            let held = lines
                .iter()
                .filter(|line| line.starts_with("GET /bad held reactor thread "))
                .count();
            if running as u64 == still_running && held == STALLS {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{running} still-running and {held} held lines for {text}{}",
                server.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// Slow requests are no stalls when their polls are short: ten `/ok-await` and ten
/// `/ok-blocking` of 300 ms each hold the reactor thread for microseconds at a time.
pub fn slow_requests_with_short_polls_are_no_stalls(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        for route in ["/ok-await", "/ok-blocking"] {
            let path = format!("{route}?ms={}", STALL.as_millis());
            fire_all(server.endpoint(), &path, 10).await;
        }
        assert_no_stalls(&stalls(server.endpoint()).await.1, 100.0);
    });
}

/// A poll that blocks for less than the threshold is not counted: `/bad?ms=20` at 100 ms.
pub fn a_block_under_the_threshold_is_no_stall(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/bad?ms=20").await.status, 200);
        assert_no_stalls(&stalls(server.endpoint()).await.1, 100.0);
    });
}

/// `--stall-ms 0`: the same stalls as above are neither counted nor logged.
pub fn stall_ms_0_turns_the_detector_off(binary: &str) {
    block_on(async {
        let server = start(binary, &["--stall-ms", "0"]).await;
        let path = format!("/bad?ms={}", STALL.as_millis());
        fire_all(server.endpoint(), &path, STALLS).await;
        assert_no_stalls(&stalls(server.endpoint()).await.1, 0.0);
        let lines = server.stderr().lines();
        assert!(
            !lines
                .iter()
                .any(|line| line.contains("(still running)") || line.contains(" held reactor ")),
            "{lines:?}"
        );
    });
}
