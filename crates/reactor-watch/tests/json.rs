//! The counters as JSON (what a server's `/stalls` answers): the exact text for known
//! counters, rounding and escaping, and a live watch's.

mod common;

use std::collections::BTreeMap;
use std::thread;
use std::time::Duration;

use common::{Capture, STALL, block_on, watch};
use reactor_watch::{Label, RouteStalls, Stalls};

#[test]
fn stalls_json_golden() {
    let stalls = Stalls {
        threshold: Duration::from_millis(100),
        slow_polls: 3,
        longest: Duration::from_micros(301_200),
        by_route: BTreeMap::from([(
            "GET /bad".to_owned(),
            RouteStalls {
                slow_polls: 3,
                longest: Duration::from_micros(301_200),
            },
        )]),
        still_running_reports: 3,
    };
    assert_eq!(
        stalls.to_json(),
        r#"{"threshold_ms":100,"slow_polls":3,"longest_ms":301.2,"by_route":{"GET /bad":{"slow_polls":3,"longest_ms":301.2}},"still_running_reports":3}"#
    );
}

#[test]
fn stalls_json_rounds_to_the_microsecond_and_escapes_labels() {
    let route = |slow_polls, longest| RouteStalls {
        slow_polls,
        longest,
    };
    let long = Duration::from_nanos(150_123_457);
    let stalls = Stalls {
        threshold: Duration::from_micros(2_500),
        slow_polls: 3,
        longest: long,
        by_route: BTreeMap::from([
            ("GET /\"quoted\"\\back".to_owned(), route(1, long)),
            (
                "tab\tnew\nline\u{1}é".to_owned(),
                route(2, Duration::from_nanos(400)),
            ),
        ]),
        still_running_reports: 0,
    };
    assert_eq!(
        stalls.to_json(),
        concat!(
            r#"{"threshold_ms":2.5,"slow_polls":3,"longest_ms":150.123,"by_route":{"#,
            r#""GET /\"quoted\"\\back":{"slow_polls":1,"longest_ms":150.123},"#,
            r#""tab\tnew\nline\u0001é":{"slow_polls":2,"longest_ms":0}},"#,
            r#""still_running_reports":0}"#
        )
    );
    assert_eq!(
        Stalls::default().to_json(),
        r#"{"threshold_ms":0,"slow_polls":0,"longest_ms":0,"by_route":{},"still_running_reports":0}"#
    );
}

#[test]
fn a_live_watch_renders_its_counters() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = Label::new("GET /json \"live\"");
    block_on(w.wrap(label, async { thread::sleep(STALL) }));
    let json = w.stalls_json();
    assert!(
        json.starts_with(r#"{"threshold_ms":50,"slow_polls":1,"longest_ms":"#),
        "{json}"
    );
    assert!(
        json.contains(r#","by_route":{"GET /json \"live\"":{"slow_polls":1,"longest_ms":"#),
        "{json}"
    );
    assert!(json.ends_with(r#"}},"still_running_reports":1}"#), "{json}");
}
