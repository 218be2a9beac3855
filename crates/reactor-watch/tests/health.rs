//! The health check (feature `health`): served by its own thread, it answers promptly while a
//! wrapped poll blocks, 503 naming the route past the limit and for its period after, 200
//! otherwise.

mod common;

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use common::block_on;
use reactor_watch::{Config, HealthCheck, Label, Watch};

const LIMIT: Duration = Duration::from_millis(100);
const BLOCK: Duration = Duration::from_millis(300);
/// The checks' period: how long a stall that ended still fails the check.
const PERIOD: Duration = Duration::from_millis(400);

fn loopback() -> SocketAddr {
    ([127, 0, 0, 1], 0).into()
}

/// A watch with a threshold of [`LIMIT`] and its health server, answering past `limit` and
/// for [`PERIOD`] after; the health URL.
fn watch_with_health(limit: Duration) -> (Watch, reactor_watch::Health, String) {
    let watch = Watch::start(Config::new(LIMIT));
    let check = HealthCheck::new(limit).period(PERIOD);
    let health = watch
        .serve_health(loopback(), check)
        .expect("a health server");
    let url = format!("http://{}/health", health.local_addr());
    (watch, health, url)
}

/// One GET: the status, the body and how long the answer took.
fn probe(url: &str) -> (u16, String, Duration) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let sent = Instant::now();
    let mut reply = agent.get(url).call().expect("an answer");
    let body = reply.body_mut().read_to_string().expect("a body");
    (reply.status().as_u16(), body, sent.elapsed())
}

#[test]
fn answers_503_naming_the_route_while_a_poll_blocks_and_200_otherwise() {
    let (watch, _health, url) = watch_with_health(LIMIT);
    assert_eq!(
        probe(&url).1,
        r#"{"status":"ok","limit_ms":100}"#,
        "at rest"
    );

    let bad = Label::new("GET /bad");
    let blocked = watch.clone();
    let blocker =
        thread::spawn(move || block_on(blocked.wrap(bad, async { thread::sleep(BLOCK) })));
    thread::sleep(BLOCK / 2 + Duration::from_millis(30));
    let (status, body, took) = probe(&url);
    assert_eq!(status, 503, "{body}");
    assert!(
        body.starts_with(r#"{"status":"stalled","limit_ms":100,"route":"GET /bad","thread":"#),
        "{body}"
    );
    assert!(body.ends_with(r#","stalled_threads":1}"#), "{body}");
    assert!(
        took < BLOCK / 3,
        "answered in {took:?}, during a {BLOCK:?} block"
    );
    blocker.join().expect("the blocking thread");

    // Returned, the stall is still named for the check's period, with how long ago it ended.
    let (status, body, _) = probe(&url);
    assert_eq!(status, 503, "just after the poll returned: {body}");
    assert!(body.contains(r#""route":"GET /bad""#), "{body}");
    assert!(body.contains(r#""ended_ms_ago":"#), "{body}");
    assert!(body.ends_with(r#","stalled_threads":0}"#), "{body}");
    thread::sleep(PERIOD + Duration::from_millis(50));
    assert_eq!(probe(&url).0, 200, "a period after the poll returned");
}

#[test]
fn a_stall_between_two_probes_fails_the_second_within_the_period() {
    let (watch, _health, url) = watch_with_health(LIMIT);
    let (held, quick) = (Label::new("GET /held"), Label::new("GET /quick"));
    block_on(watch.wrap(held, async { thread::sleep(LIMIT * 2) }));
    // Another stall, shorter than the first, ends later: the 503 names the longest.
    block_on(watch.wrap(quick, async { thread::sleep(LIMIT + LIMIT / 2) }));
    let (status, body, _) = probe(&url);
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains(r#""route":"GET /held""#),
        "the longest: {body}"
    );
    // With no period, only what runs now counts.
    let now_only = watch
        .serve_health(loopback(), HealthCheck::new(LIMIT).period(Duration::ZERO))
        .expect("a health server");
    let url = format!("http://{}/health", now_only.local_addr());
    assert_eq!(probe(&url).0, 200);
}

#[test]
fn a_poll_under_the_limit_is_healthy() {
    // A liveness limit, far above the watch's threshold.
    let (watch, _health, url) = watch_with_health(Duration::from_secs(2));
    let label = Label::new("GET /slowish");
    let blocked = watch.clone();
    let blocker =
        thread::spawn(move || block_on(blocked.wrap(label, async { thread::sleep(BLOCK) })));
    thread::sleep(BLOCK / 2);
    let (status, body, _) = probe(&url);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"status":"ok","limit_ms":2000}"#)
    );
    blocker.join().expect("the blocking thread");
}

#[test]
fn other_paths_are_404_and_a_watch_that_is_off_serves_no_health() {
    let (_watch, _health, url) = watch_with_health(LIMIT);
    let (status, _, _) = probe(&url.replace("/health", "/stalls"));
    assert_eq!(status, 404);
    let error = Watch::disabled()
        .serve_health(loopback(), HealthCheck::new(LIMIT))
        .expect_err("a watch that is off would always answer 200");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn running_lists_the_polls_of_this_watch_longest_first() {
    let watch = Watch::start(Config::new(LIMIT));
    assert!(watch.running().is_empty());
    let label = Label::new("GET /running");
    let blocked = watch.clone();
    let blocker =
        thread::spawn(move || block_on(blocked.wrap(label, async { thread::sleep(BLOCK) })));
    thread::sleep(BLOCK / 2);
    let running = watch.running();
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(running[0].label, label);
    assert!(running[0].running >= BLOCK / 4, "{running:?}");
    assert!(
        Watch::start(Config::new(LIMIT)).running().is_empty(),
        "another watch's"
    );
    blocker.join().expect("the blocking thread");
    assert!(watch.running().is_empty());
}

#[test]
fn dropping_the_handle_stops_the_server_and_a_detached_one_serves_on() {
    let (_watch, health, url) = watch_with_health(LIMIT);
    assert_eq!(probe(&url).0, 200);
    drop(health);
    let refused = ureq::get(&url).call();
    assert!(refused.is_err(), "answered after the drop: {refused:?}");

    let watch = Watch::start(Config::new(LIMIT));
    let check = HealthCheck::new(LIMIT).period(PERIOD);
    let addr = (watch.serve_health(loopback(), check))
        .expect("a health server")
        .detach();
    let (status, body, _) = probe(&format!("http://{addr}/health"));
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"status":"ok","limit_ms":100}"#)
    );
}
