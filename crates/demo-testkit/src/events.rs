//! The event record behind `GET /events` (`--events`): accepts and handlers in the order
//! of the clock, drained by each call, and nothing without the flag.

use burst_meter::http::{Connection, Endpoint};
use demo_contract::{Event, EventsBody, What};
use hyper::Method;

use crate::harness::*;

/// `GET /events` on `connection`, checked to be a 200 in JSON with exactly the contract's
/// fields (`route` only where a handler ran), and parsed.
pub(crate) async fn events(connection: &mut Connection) -> EventsBody {
    let reply = connection
        .send(Method::GET, "/events")
        .await
        .expect("an answer to /events");
    assert_json(&reply, 200, "/events");
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    let keys = |value: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = value
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {text}"))
            .keys()
            .cloned()
            .collect();
        keys.sort_unstable();
        keys
    };
    assert_eq!(keys(&value), ["events", "recording"], "{text}");
    let body: EventsBody =
        serde_json::from_value(value.clone()).unwrap_or_else(|error| panic!("{error}: {text}"));
    for (event, value) in body.events.iter().zip(value["events"].as_array().unwrap()) {
        let expected: &[&str] = match event.what {
            What::Accepted => &["at_us", "peer", "what"],
            What::Started | What::Ended => &["at_us", "peer", "route", "what"],
        };
        assert_eq!(keys(value), expected, "{text}");
    }
    body
}

/// The events of the client at port `peer`, as (what, route).
pub(crate) fn events_of(body: &EventsBody, peer: u16) -> Vec<(What, Option<&str>)> {
    body.events
        .iter()
        .filter(|event| event.peer == peer)
        .map(|event| (event.what, event.route.as_deref()))
        .collect()
}

/// With `--events`: two requests on one keep-alive connection and one on another, then
/// `GET /events` on a third. Each connection's `accepted` comes before its handlers, each
/// `started` before its `ended` (at least the 10 ms sleep later), in the order of the clock,
/// under the paths requested; `/events` itself is not recorded, and a second call finds
/// nothing of the first's.
pub fn events_record_accepts_and_handlers_in_order_and_drain(binary: &str) {
    let name = std::path::Path::new(binary)
        .file_name()
        .expect("a file name");
    if !stacks::records_accepts(&name.to_string_lossy()) {
        return events_are_refused(binary);
    }
    block_on(async {
        let server = start(binary, &["--events"]).await;
        let endpoint = server.endpoint();
        let mut watcher = Connection::open(endpoint).await.expect("a connection");
        let mut first = Connection::open(endpoint).await.expect("a connection");
        let mut second = Connection::open(endpoint).await.expect("a connection");
        serve_two_on_one_connection_and_one_on_another(&mut first, &mut second).await;

        let body = events(&mut watcher).await;
        let (first, second) = (first.local_port(), second.local_port());
        check_each_connection_in_order(&body, first, second, watcher.local_port());
        check_the_bad_handler_slept(&body, first);
        check_a_call_drains_the_record(&mut watcher, endpoint).await;
    });
}

/// `/bad` then `/ok-await` on `first`, kept alive between them, and `/ok-def` on `second`:
/// each a 200 in JSON.
async fn serve_two_on_one_connection_and_one_on_another(
    first: &mut Connection,
    second: &mut Connection,
) {
    for (on_first, path) in [
        (true, "/bad?ms=10"),
        (true, "/ok-await?ms=10"),
        (false, "/ok-def?ms=10"),
    ] {
        let connection = if on_first { &mut *first } else { &mut *second };
        let reply = connection.send(Method::GET, path).await.expect("an answer");
        assert_json(&reply, 200, path);
    }
    assert!(!first.is_closed(), "the first connection was kept alive");
}

/// In `body`: on each connection its `accepted`, then its handlers' `started` and `ended` in
/// the order requested; on the `watcher`'s, only its `accepted`; nothing else, in the order of
/// the clock.
fn check_each_connection_in_order(body: &EventsBody, first: u16, second: u16, watcher: u16) {
    assert!(body.recording, "{body:?}");
    assert_eq!(
        events_of(body, first),
        [
            (What::Accepted, None),
            (What::Started, Some("/bad")),
            (What::Ended, Some("/bad")),
            (What::Started, Some("/ok-await")),
            (What::Ended, Some("/ok-await")),
        ],
        "{body:?}"
    );
    assert_eq!(
        events_of(body, second),
        [
            (What::Accepted, None),
            (What::Started, Some("/ok-def")),
            (What::Ended, Some("/ok-def")),
        ],
        "{body:?}"
    );
    assert_eq!(
        events_of(body, watcher),
        [(What::Accepted, None)],
        "/events itself is not recorded: {body:?}"
    );
    assert_eq!(body.events.len(), 9, "nothing else: {body:?}");
    assert!(
        body.events.is_sorted_by_key(|event| event.at_us),
        "not in the order of the clock: {body:?}"
    );
}

/// In `body`: `/bad?ms=10` on `first` ended at least its 10 ms sleep after it started.
fn check_the_bad_handler_slept(body: &EventsBody, first: u16) {
    let at = |peer: u16, what: What, route: &str| -> u64 {
        body.events
            .iter()
            .find(|event| {
                event.peer == peer && event.what == what && event.route.as_deref() == Some(route)
            })
            .map(|event: &Event| event.at_us)
            .expect("the event")
    };
    let slept = at(first, What::Ended, "/bad") - at(first, What::Started, "/bad");
    assert!(slept >= 9_000, "/bad?ms=10 ran for {slept} µs: {body:?}");
}

/// A second `GET /events` on `watcher` finds the record empty, and the next one records a
/// connection opened after the drain, and only it.
async fn check_a_call_drains_the_record(watcher: &mut Connection, endpoint: &Endpoint) {
    let again = events(watcher).await;
    assert_eq!(
        again,
        EventsBody {
            recording: true,
            events: Vec::new()
        },
        "the first call drained the record"
    );
    // A new connection is recorded after the drain, and only it.
    let mut late = Connection::open(endpoint).await.expect("a connection");
    assert_eq!(
        late.send(Method::GET, "/ping").await.expect("/ping").status,
        200
    );
    let body = events(watcher).await;
    let seen: Vec<(u16, What, Option<&str>)> = body
        .events
        .iter()
        .map(|event| (event.peer, event.what, event.route.as_deref()))
        .collect();
    let late = late.local_port();
    assert_eq!(
        seen,
        [
            (late, What::Accepted, None),
            (late, What::Started, Some("/ping")),
            (late, What::Ended, Some("/ping")),
        ],
        "{body:?}"
    );
}

/// Without `--events`, `/events` answers that nothing is recorded, whatever was served.
/// A server whose description says it does not see its accepts refuses `--events` with a
/// usage error that says why, rather than keep a record without them.
fn events_are_refused(binary: &str) {
    let output = std::process::Command::new(binary)
        .args(["--port", "0", "--events"])
        .output()
        .expect("the server runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("does not see its connections accepted"),
        "{stderr}"
    );
}

pub fn events_are_off_without_the_flag(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/bad?ms=10").await.status, 200);
        for _ in 0..2 {
            let reply = get(server.endpoint(), "/events").await;
            assert_json(&reply, 200, "/events");
            assert_eq!(
                String::from_utf8_lossy(&reply.body),
                r#"{"recording":false,"events":[]}"#
            );
        }
    });
}
