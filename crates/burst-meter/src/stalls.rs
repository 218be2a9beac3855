//! What a server's own stall detector saw: `GET /stalls` read before and after each case.
//! The demo servers answer from their reactor-stall detector (`crates/reactor-watch`), the
//! FastAPI reference app from asyncio's debug mode; a server without the route is "not
//! reported".

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::http::{Endpoint, get_once};

/// How long reading `/stalls` may take: the reactor is free between cases.
const READ_WITHIN: Duration = Duration::from_secs(5);

/// The `/stalls` body: counts since the server started (more fields may follow).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StallsBody {
    /// The detector's threshold, in ms; 0 when it is off.
    pub threshold_ms: f64,
    /// Polls of a request future (asyncio: callbacks or task steps) longer than the threshold.
    pub slow_polls: u64,
    pub longest_ms: f64,
    /// The same, by the route the request was on ("GET /bad").
    #[serde(default)]
    pub by_route: BTreeMap<String, RouteStalls>,
}

/// Slow polls under one route label.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RouteStalls {
    pub slow_polls: u64,
    pub longest_ms: f64,
}

/// What the server's detector reported over one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StallsSeen {
    /// The detector's threshold, in ms; 0 when it was off.
    pub threshold_ms: f64,
    /// Slow polls during the case.
    pub slow_polls: u64,
    /// The longest of them: the longest recorded for a route whose count rose during the
    /// case (each route runs once per server start, so that is this case's).
    pub longest_ms: Option<f64>,
    /// The routes the detector booked them to ("GET /bad-db"), in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<String>,
}

/// The server's `/stalls`, or `None` if it has no such route or its answer is not the
/// contract's.
pub async fn read(endpoint: &Endpoint) -> Option<StallsBody> {
    let reply = get_once(endpoint, "/stalls", READ_WITHIN).await.ok()?;
    (reply.status == 200).then(|| reply.json::<StallsBody>())?
}

/// What happened between two readings.
pub fn between(before: &StallsBody, after: &StallsBody) -> StallsSeen {
    let rose = |label: &String, now: &RouteStalls| {
        let then = before.by_route.get(label).map_or(0, |r| r.slow_polls);
        (now.slow_polls > then).then_some(now.longest_ms)
    };
    let risen: Vec<(&String, f64)> = (after.by_route.iter())
        .filter_map(|(label, now)| Some((label, rose(label, now)?)))
        .collect();
    StallsSeen {
        threshold_ms: after.threshold_ms,
        slow_polls: after.slow_polls.saturating_sub(before.slow_polls),
        longest_ms: risen.iter().map(|(_, longest)| *longest).reduce(f64::max),
        routes: risen.iter().map(|(label, _)| label.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> StallsBody {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_case_sees_what_rose_during_it() {
        let before = body(
            r#"{"threshold_ms":100,"slow_polls":10,"longest_ms":501.0,
                "by_route":{"GET /bad":{"slow_polls":10,"longest_ms":501.0}}}"#,
        );
        let after = body(
            r#"{"threshold_ms":100,"slow_polls":12,"longest_ms":501.0,"still_running_reports":2,
                "by_route":{"GET /bad":{"slow_polls":10,"longest_ms":501.0},
                            "GET /bad-cpu":{"slow_polls":2,"longest_ms":250.5}}}"#,
        );
        let seen = between(&before, &after);
        assert_eq!((seen.slow_polls, seen.longest_ms), (2, Some(250.5)));
        assert_eq!(seen.routes, ["GET /bad-cpu"]);
        let quiet = between(&after, &after);
        assert_eq!((quiet.slow_polls, quiet.longest_ms), (0, None));
        assert!(quiet.routes.is_empty());
    }

    #[test]
    fn the_reference_apps_body_reads_too() {
        let fastapi = body(
            r#"{"threshold_ms":100,"slow_polls":3,"longest_ms":204.2,
                "by_route":{"GET /bad":{"slow_polls":3,"longest_ms":204.2}},
                "detector":"asyncio debug mode (slow_callback_duration)"}"#,
        );
        assert_eq!(fastapi.slow_polls, 3);
        assert!(serde_json::from_str::<StallsBody>(r#"{"error":"no route"}"#).is_err());
    }
}
