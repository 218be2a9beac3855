//! The probes and the cost at rest, counted from the records: per stack, route under load
//! and endpoint, what the probes got and when the first failing answer was known; per stack
//! and endpoint, the latency at rest.

use serde::{Deserialize, Serialize};

use super::{Answer, Check, Probed, RestCost};
use burst_meter::stats::{counted, grouped, percentile};

/// The route whose handler holds its reactor thread: a 503 under any other load is false.
pub const BLOCKING_ROUTE: &str = "/bad";

/// A stack's probes of one endpoint during one window of a route's load, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeTally {
    pub stack: String,
    pub route: String,
    /// The window, from 0: its probes land at one point of a sleep (the plan's `first_probe`).
    #[serde(default)]
    pub trial: usize,
    pub endpoint: Probed,
    pub probes: usize,
    pub timed_out: usize,
    /// Failed otherwise: another status, or the connection failed.
    pub failed: usize,
    /// Answered 503, each route its reason named with how many named it.
    pub unavailable: usize,
    pub named: Vec<(String, usize)>,
    pub ok: usize,
    /// From the load's start to the first failing answer, in ms: a timeout is known when the
    /// timeout ends, any other failure when it arrives; `None`: none failed.
    pub first_failing_ms: Option<f64>,
}

impl ProbeTally {
    /// The 503s that are false: any during a load that does not hold its thread.
    pub fn false_unavailable(&self) -> usize {
        match self.route == BLOCKING_ROUTE {
            true => 0,
            false => self.unavailable,
        }
    }
}

/// When `check`'s failure was known, in ms from the load's start; `None` for a 200.
pub fn failure_known_ms(check: &Check, timeout_ms: u64) -> Option<f64> {
    match check.outcome {
        Answer::Ok => None,
        Answer::TimedOut => Some(check.sent_ms + timeout_ms as f64),
        Answer::Unavailable { .. } | Answer::Failed { .. } => {
            Some(check.sent_ms + check.latency_ms.unwrap_or(timeout_ms as f64))
        }
    }
}

/// Each (stack, route, window, endpoint)'s probes, counted, in the order first recorded.
pub fn probes(checks: &[Check], timeout_ms: u64) -> Vec<ProbeTally> {
    let groups = grouped(checks, |check| {
        let (stack, route) = (check.stack.as_str(), check.route.as_str());
        (stack, route, check.trial, check.endpoint)
    });
    (groups.into_iter())
        .map(|((stack, route, trial, endpoint), mine)| {
            let count = |matches: fn(&Answer) -> bool| {
                mine.iter().filter(|check| matches(&check.outcome)).count()
            };
            let named = (mine.iter()).filter_map(|check| match &check.outcome {
                Answer::Unavailable { route, .. } => {
                    Some(route.clone().unwrap_or_else(|| "(no reason)".to_owned()))
                }
                _ => None,
            });
            let known = mine.iter().filter_map(|c| failure_known_ms(c, timeout_ms));
            ProbeTally {
                stack: stack.to_owned(),
                route: route.to_owned(),
                trial,
                endpoint,
                probes: mine.len(),
                timed_out: count(|outcome| matches!(outcome, Answer::TimedOut)),
                failed: count(|outcome| matches!(outcome, Answer::Failed { .. })),
                unavailable: count(|outcome| matches!(outcome, Answer::Unavailable { .. })),
                named: counted(named),
                ok: count(|outcome| matches!(outcome, Answer::Ok)),
                first_failing_ms: known.min_by(f64::total_cmp),
            }
        })
        .collect()
}

/// A stack's endpoint at rest: its latency's median and 99th percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestTally {
    pub stack: String,
    pub endpoint: Probed,
    pub requests: usize,
    pub failed: usize,
    pub median_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

/// Each cost at rest, its percentiles read (the original bench's nearest rank).
pub fn at_rest(costs: &[RestCost]) -> Vec<RestTally> {
    (costs.iter())
        .map(|cost| {
            let mut sorted = cost.latencies_ms.clone();
            sorted.sort_by(f64::total_cmp);
            RestTally {
                stack: cost.stack.clone(),
                endpoint: cost.endpoint,
                requests: sorted.len(),
                failed: cost.failed,
                median_ms: percentile(&sorted, 50.0),
                p99_ms: percentile(&sorted, 99.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(route: &str, trial: usize, endpoint: Probed, sent_ms: f64, outcome: Answer) -> Check {
        let latency_ms = match outcome {
            Answer::TimedOut => None,
            _ => Some(2.0),
        };
        Check {
            stack: "demo-x".to_owned(),
            route: route.to_owned(),
            trial,
            endpoint,
            sent_ms,
            outcome,
            latency_ms,
        }
    }

    fn stalled(route: &str) -> Answer {
        Answer::Unavailable {
            route: Some(route.to_owned()),
            held_ms: Some(250.0),
        }
    }

    #[test]
    fn probes_are_counted_per_route_window_and_endpoint_with_the_first_failing_answer() {
        let (ping, health) = (Probed::Ping, Probed::Health);
        let checks = [
            check("/bad", 0, ping, 500.0, Answer::Ok),
            check("/bad", 0, health, 500.0, stalled("GET /bad")),
            check("/bad", 0, ping, 1500.0, Answer::TimedOut),
            check("/bad", 0, health, 1500.0, stalled("GET /bad")),
            check("/bad", 1, ping, 250.0, Answer::TimedOut),
            check("/bad", 1, health, 250.0, Answer::Ok),
            check("/bad", 1, health, 1250.0, stalled("GET /other")),
            check("/ok-await", 0, health, 500.0, stalled("GET /ok-await")),
            check(
                "/ok-await",
                0,
                ping,
                500.0,
                Answer::Failed {
                    reason: "reset".into(),
                },
            ),
        ];
        let tallies = probes(&checks, 1000);
        let keys: Vec<(&str, usize, Probed)> = (tallies.iter())
            .map(|t| (t.route.as_str(), t.trial, t.endpoint))
            .collect();
        assert_eq!(
            keys,
            [
                ("/bad", 0, ping),
                ("/bad", 0, health),
                ("/bad", 1, ping),
                ("/bad", 1, health),
                ("/ok-await", 0, health),
                ("/ok-await", 0, ping)
            ]
        );
        let counts = |t: &ProbeTally| (t.probes, t.timed_out, t.unavailable, t.ok);
        // Window 0: the ping answered at 500 ms, then timed out when sent at 1500 ms, known
        // at 2500; window 1: timed out when sent at 250, known at 1250.
        assert_eq!(counts(&tallies[0]), (2, 1, 0, 1));
        assert_eq!(tallies[0].first_failing_ms, Some(2500.0));
        assert_eq!(counts(&tallies[2]), (1, 1, 0, 0));
        assert_eq!(tallies[2].first_failing_ms, Some(1250.0));
        // /health: a 503 at 500 + 2 ms in window 0; in window 1 a 200, then a 503 at 1252.
        assert_eq!(counts(&tallies[1]), (2, 0, 2, 0));
        assert_eq!(tallies[1].named, [("GET /bad".to_owned(), 2)]);
        assert_eq!(tallies[1].first_failing_ms, Some(502.0));
        assert_eq!(counts(&tallies[3]), (2, 0, 1, 1));
        assert_eq!(tallies[3].named, [("GET /other".to_owned(), 1)]);
        assert_eq!(tallies[3].first_failing_ms, Some(1252.0));
        assert_eq!(tallies[1].false_unavailable(), 0);
        assert_eq!(tallies[4].false_unavailable(), 1);
        assert_eq!((tallies[5].failed, tallies[5].false_unavailable()), (1, 0));
        assert_eq!(tallies[5].first_failing_ms, Some(502.0));
    }

    #[test]
    fn the_cost_at_rest_is_read_from_the_latencies() {
        let cost = RestCost {
            stack: "demo-x".to_owned(),
            endpoint: Probed::Health,
            latencies_ms: vec![0.3, 0.1, 0.2, 0.9],
            failed: 1,
        };
        let tally = &at_rest(&[cost])[0];
        assert_eq!((tally.requests, tally.failed), (4, 1));
        // Nearest rank over 4 sorted values: p50 at round(1.5) = 2, p99 at round(2.97) = 3.
        assert_eq!((tally.median_ms, tally.p99_ms), (Some(0.3), Some(0.9)));
    }
}
