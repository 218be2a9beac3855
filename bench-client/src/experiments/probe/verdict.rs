//! A route's verdict, derived once from its record: how many of N requests sent at once the
//! server served at a time, and whether the health check waited meanwhile.
//!
//! - *How many at a time*: from each request's time once its connection was established
//!   ([`waves`]): the first wave, or where more, what sharing the cores would make of the
//!   round. 1: one after another; all it had connected at once: all at once.
//! - *The health check held*: its 99th percentile during the rounds, once connected, reached
//!   half a request's time alone (and [`HELD_AT_LEAST_MS`]), or a check failed then. A thread
//!   that serves it was busy with the route for that long. Unless the probe's own checks left
//!   late by more than a [`LATE_FACTOR`]th of that: then the machine, not only the server,
//!   was too busy to answer, and the probe cannot tell.
//!
//! One at a time with the health check held: the route **serialises** (it blocks the thread
//! that serves the health check). All at once in most rounds: **concurrent**. Anything
//! between: **bounded**, with how many at a time. A route too fast to tell, rounds that
//! disagree (one at a time in one, all at once in another), or one at a time while the probe
//! could not tell whether the health check waited, are **inconclusive**, with what would tell.
//! A connect's own wait (a SYN the server's listener dropped) is left out of both: it is the
//! listener's, and its finding of its own ([`Network`]).

use serde::{Deserialize, Serialize};

use super::RouteProbe;
use super::network::Network;
use super::waves::{self, Round};
use burst_meter::stats::{percentile, spread};

/// The least a request alone must take, in ms, to tell a block from a queue: below it, N
/// connections opened at once on two cores cost the client and the server a fair part of a
/// request, and the walls say more of that than of the route.
pub const MIN_ALONE_MS: f64 = 20.0;

/// The fewest health checks due while N requests run one after another: fewer, and a held
/// check may fall between two.
pub const MIN_CHECKS: f64 = 4.0;

/// How many times the probe's own lateness the health check's wait must be to be the server's.
pub const LATE_FACTOR: f64 = 5.0;

/// The least the health check's p99 during the bursts must reach, in ms, to count as held:
/// above what two busy cores add to any answer.
pub const HELD_AT_LEAST_MS: f64 = 10.0;

/// What the probe concludes of one route: the one route verdict of every experiment.
pub use burst_meter::stats::Verdict;

/// A route's verdict with the figures behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub verdict: Verdict,
    /// Why it failed or could not be told; `None` for a verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// How many requests the server served at a time (median over the rounds).
    pub at_once: Option<usize>,
    /// The most requests connected and waiting at one moment (median over the rounds): fewer
    /// than N where the listener dropped some. `at_once` equal to it is all at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_at_once: Option<usize>,
    /// Whether the health check waited on the route; `None` where the probe cannot tell.
    pub holds_health: Option<bool>,
    /// The latest the probe's own health checks left during the rounds, ms.
    pub probe_late_ms: Option<f64>,
    /// Median of the requests alone, ms.
    pub alone_ms: Option<f64>,
    /// Median of the rounds' walls (first send to last answer), ms.
    pub wall_ms: Option<f64>,
    /// `wall_ms` over `alone_ms`: N when one after another, 1 when all at once.
    pub ratio: Option<f64>,
    /// The longest a request waited once connected, ms (median over the rounds): beside
    /// `wall_ms`, what is left of the round without the listener's waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once_connected_ms: Option<f64>,
    /// The health check before the bursts: p50 and p99, ms.
    pub health_at_rest_ms: Option<[f64; 2]>,
    /// The health check due during the bursts, each once connected: p50 and p99, ms.
    pub health_during_ms: Option<[f64; 2]>,
    /// Health checks due during the bursts that failed (a timeout, a refusal).
    pub health_failed: usize,
    /// What the server's listener did to the connections.
    #[serde(default)]
    pub network: Network,
}

impl Finding {
    /// The figures of `probe`, before any verdict: failed until judged.
    fn figures(probe: &RouteProbe) -> Finding {
        let alone_ms = spread(probe.alone_ms.clone()).map(|[_, median, _]| median);
        let wall_ms = spread(probe.trials.iter().map(|t| t.wall_ms).collect()).map(|s| s[1]);
        let p50_p99 = |values: Vec<f64>| {
            let mut sorted = values;
            sorted.sort_by(f64::total_cmp);
            Some([percentile(&sorted, 50.0)?, percentile(&sorted, 99.0)?])
        };
        let rest = probe
            .trials
            .iter()
            .flat_map(|t| t.health_at_rest_ms.iter().copied());
        let during = (probe.trials.iter()).flat_map(|t| t.health_once_connected_ms());
        let once_connected = (probe.trials.iter()).map(|t| {
            let served = t.served().into_iter();
            served
                .map(|r| r.done_ms - r.connected_ms)
                .fold(0.0, f64::max)
        });
        let late = probe
            .trials
            .iter()
            .flat_map(|t| t.health_lag_ms.iter().copied());
        Finding {
            verdict: Verdict::Failed,
            why: None,
            at_once: None,
            connected_at_once: None,
            holds_health: None,
            alone_ms,
            wall_ms,
            ratio: Option::zip(wall_ms, alone_ms).map(|(wall, alone)| wall / alone),
            once_connected_ms: spread(once_connected.collect()).map(|s| s[1]),
            health_at_rest_ms: p50_p99(rest.collect()),
            health_during_ms: p50_p99(during.collect()),
            health_failed: probe.trials.iter().map(|t| t.health_failed).sum(),
            probe_late_ms: late.reduce(f64::max),
            network: Network::of(&probe.trials),
        }
    }

    /// The finding of `probe`.
    pub fn of(probe: &RouteProbe) -> Finding {
        let (n, every_ms) = (probe.n, probe.every_ms);
        let mut finding = Finding::figures(probe);
        let (alone_ms, wall_ms) = (finding.alone_ms, finding.wall_ms);
        if let Some(error) = &probe.error {
            finding.why = Some(error.clone());
            return finding;
        }
        let (Some(alone), Some(_)) = (alone_ms, wall_ms) else {
            finding.why = Some("nothing was measured".to_owned());
            return finding;
        };
        finding.holds_health = finding.held(alone);
        if let Some(why) = too_fast(alone, n, every_ms) {
            finding.verdict = Verdict::Inconclusive;
            finding.why = Some(why);
            return finding;
        }
        let rounds: Vec<Round> = (probe.trials.iter())
            .map(|t| waves::round(&t.served(), alone))
            .collect();
        let all = rounds.iter().filter(|round| round.all()).count();
        if all > 0 && rounds.iter().any(|round| round.at_once == 1) {
            finding.verdict = Verdict::Inconclusive;
            finding.why = Some(disagree(&rounds));
            return finding;
        }
        let median = |each: fn(&Round) -> usize| {
            let all = rounds.iter().map(|round| each(round) as f64).collect();
            spread(all).map_or(1, |[_, median, _]| median.round() as usize)
        };
        let at_once = median(|round| round.at_once);
        finding.at_once = Some(at_once);
        finding.connected_at_once = Some(median(|round| round.offered));
        finding.verdict = match (at_once, finding.holds_health) {
            (1, Some(true)) => Verdict::Serialises,
            (1, None) => {
                finding.why = Some(format!(
                    "about one at a time, but the probe's own health checks left up to {:.0} ms \
                     late: this machine was too busy to tell whether your health check \
                     waited; run the probe from another machine (--allow-remote)",
                    finding.probe_late_ms.unwrap_or_default()
                ));
                Verdict::Inconclusive
            }
            _ if 2 * all > rounds.len() => Verdict::Concurrent,
            _ => Verdict::Bounded,
        };
        finding
    }

    /// Whether the health check waited on a route whose requests take `alone_ms` alone;
    /// `None` if it waited, but the probe's own lateness could account for it.
    fn held(&self, alone_ms: f64) -> Option<bool> {
        let p99 = self.health_during_ms.map_or(0.0, |[_, p99]| p99);
        let waited = p99 >= (alone_ms / 2.0).max(HELD_AT_LEAST_MS);
        if !waited && self.health_failed == 0 {
            return Some(false);
        }
        let late = self.probe_late_ms.unwrap_or_default();
        (self.health_failed > 0 || p99 >= LATE_FACTOR * late).then_some(true)
    }

    /// The verdict in words, as the terminal and the tables give it.
    pub fn says(&self) -> String {
        let health = match self.holds_health {
            Some(true) => ", holds the health check".to_owned(),
            Some(false) => String::new(),
            None => format!(
                "; the health check: cannot tell (the probe's own checks left up to {:.0} ms late)",
                self.probe_late_ms.unwrap_or_default()
            ),
        };
        match (self.verdict, self.at_once) {
            (Verdict::Serialises, _) => format!("serialises: one at a time{health}"),
            (Verdict::Bounded, Some(k)) => format!("bounded: about {k} at a time{health}"),
            (Verdict::Concurrent, _) => format!("concurrent{health}"),
            (verdict, _) => match &self.why {
                Some(why) => format!("{verdict}: {why}"),
                None => verdict.to_string(),
            },
        }
    }
}

/// Why a route whose requests take `alone_ms` alone is too fast to judge with `n` at once and
/// a health check every `every_ms`; `None` if it is not.
fn too_fast(alone_ms: f64, n: usize, every_ms: u64) -> Option<String> {
    if alone_ms < MIN_ALONE_MS {
        return Some(format!(
            "a request alone takes {alone_ms:.1} ms, too little to tell a block from a queue: \
             give it work of at least {MIN_ALONE_MS} ms (a larger input, a slower query)"
        ));
    }
    let checks = n as f64 * alone_ms / every_ms as f64;
    (checks < MIN_CHECKS).then(|| {
        format!(
            "{n} requests of {alone_ms:.0} ms one after another leave room for {checks:.1} \
             health checks every {every_ms} ms: send more at once (-n) or check more often \
             (--every-ms)"
        )
    })
}

/// Why rounds that found both one and all at a time cannot be told apart.
fn disagree(rounds: &[Round]) -> String {
    let each: Vec<String> = rounds
        .iter()
        .map(|round| round.at_once.to_string())
        .collect();
    format!(
        "the rounds disagree: {} at a time; run more --trials, or give each request longer work",
        each.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::{RouteProbe, Trial};
    use super::*;
    use crate::experiments::probe::args::Call;

    /// A route of `alone` ms, whose `n` requests came back at `waves` (ms each), the health
    /// check taking `health` ms during each round.
    fn probe(alone: f64, waves: &[&[f64]], health: f64) -> RouteProbe {
        RouteProbe {
            server: "stub".to_owned(),
            call: Call::get("/work"),
            health: "/".to_owned(),
            n: waves.first().map_or(10, |done| done.len()),
            every_ms: 50,
            expected: None,
            alone_ms: vec![alone; 5],
            trials: waves
                .iter()
                .map(|done| Trial {
                    wall_ms: done.iter().copied().fold(0.0, f64::max),
                    done_ms: done.to_vec(),
                    health_at_rest_ms: vec![0.5; 4],
                    health_during_ms: vec![health; 10],
                    health_lag_ms: vec![0.01; 10],
                    ..Trial::default()
                })
                .collect(),
            error: None,
            stalls: None,
        }
    }

    fn steps(alone: f64, per_wave: usize, n: usize) -> Vec<f64> {
        (0..n).map(|i| alone * (i / per_wave + 1) as f64).collect()
    }

    #[test]
    fn one_at_a_time_with_the_health_check_held_serialises() {
        let done = steps(100.0, 1, 10);
        let finding = Finding::of(&probe(100.0, &[&done, &done], 900.0));
        assert_eq!(
            (finding.verdict, finding.at_once),
            (Verdict::Serialises, Some(1))
        );
        assert_eq!(finding.ratio, Some(10.0));
        assert_eq!(
            finding.says(),
            "serialises: one at a time, holds the health check"
        );
    }

    #[test]
    fn waves_of_k_are_bounded_with_k() {
        let done = steps(100.0, 4, 10);
        let finding = Finding::of(&probe(100.0, &[&done], 100.0));
        assert_eq!(
            (finding.verdict, finding.at_once),
            (Verdict::Bounded, Some(4))
        );
        assert_eq!(finding.holds_health, Some(true));
    }

    #[test]
    fn requests_sharing_two_cores_are_bounded_at_two() {
        let done = vec![500.0; 10];
        let finding = Finding::of(&probe(100.0, &[&done], 1.0));
        assert_eq!(
            (finding.verdict, finding.at_once),
            (Verdict::Bounded, Some(2))
        );
        assert_eq!(finding.holds_health, Some(false));
    }

    #[test]
    fn one_at_a_time_with_the_health_check_answered_is_bounded_at_one() {
        let done = vec![1000.0; 10];
        let finding = Finding::of(&probe(100.0, &[&done], 2.0));
        assert_eq!(
            (finding.verdict, finding.at_once),
            (Verdict::Bounded, Some(1))
        );
    }

    #[test]
    fn all_at_once_unharmed_is_concurrent() {
        let done = vec![105.0; 10];
        let finding = Finding::of(&probe(100.0, &[&done], 1.0));
        assert_eq!(
            (finding.verdict, finding.at_once),
            (Verdict::Concurrent, Some(10))
        );
        assert_eq!(finding.says(), "concurrent");
    }

    #[test]
    fn a_fast_route_or_disagreeing_rounds_are_inconclusive_and_say_why() {
        let finding = Finding::of(&probe(2.0, &[&[2.0; 10]], 1.0));
        assert_eq!(finding.verdict, Verdict::Inconclusive);
        assert!(finding.why.unwrap().contains("too little"));
        let finding = Finding::of(&probe(25.0, &[&[25.0; 4]], 1.0));
        assert!(finding.why.unwrap().contains("-n"), "4 × 25 ms: two checks");
        let (serial, parallel) = (steps(100.0, 1, 10), vec![100.0; 10]);
        let finding = Finding::of(&probe(100.0, &[&serial, &parallel], 1.0));
        assert_eq!(finding.verdict, Verdict::Inconclusive);
        assert!(finding.why.unwrap().contains("1, 10 at a time"));
    }

    #[test]
    fn a_wait_the_probes_own_lateness_could_explain_is_not_the_servers() {
        let done = vec![700.0; 10];
        let mut late = probe(300.0, &[&done], 500.0);
        late.trials[0].health_lag_ms = vec![180.0];
        let finding = Finding::of(&late);
        assert_eq!(
            (finding.verdict, finding.holds_health),
            (Verdict::Bounded, None)
        );
        assert!(finding.says().contains("cannot tell"), "{}", finding.says());
        let serial = steps(300.0, 1, 10);
        let mut late = probe(300.0, &[&serial], 500.0);
        late.trials[0].health_lag_ms = vec![180.0];
        assert_eq!(Finding::of(&late).verdict, Verdict::Inconclusive);
        late.trials[0].health_during_ms = vec![2900.0];
        assert_eq!(
            Finding::of(&late).verdict,
            Verdict::Serialises,
            "16 × the lateness"
        );
    }

    #[test]
    fn what_the_listener_dropped_is_left_out_of_the_verdict() {
        // A thread per connection behind a backlog of 5: three requests and a health check
        // connected a second late, each then as quick as the rest.
        let mut late = probe(200.0, &[&[205.0; 10]], 2.0);
        let trial = &mut late.trials[0];
        trial.done_ms = [vec![205.0; 7], vec![1210.0; 3]].concat();
        trial.connect_ms = [vec![0.5; 7], vec![1005.0; 3]].concat();
        trial.connected_ms = trial.connect_ms.clone();
        trial.wall_ms = 1210.0;
        trial.health_during_ms[0] = 1003.0;
        trial.health_connect_ms = [vec![1001.0], vec![0.3; 9]].concat();
        let finding = Finding::of(&late);
        assert_eq!(
            (finding.verdict, finding.holds_health, finding.at_once),
            (Verdict::Concurrent, Some(false), Some(7))
        );
        assert_eq!(finding.connected_at_once, Some(7));
        assert_eq!(
            (
                finding.network.requests_resent,
                finding.network.checks_resent
            ),
            (3, 1)
        );
        assert!(finding.network.says().unwrap().contains("raise it"));
    }

    #[test]
    fn a_probe_with_an_error_failed_with_it() {
        let mut failed = probe(100.0, &[], 0.0);
        failed.error = Some("answered 500".to_owned());
        let finding = Finding::of(&failed);
        assert_eq!(finding.verdict, Verdict::Failed);
        assert_eq!(finding.says(), "failed: answered 500");
    }
}
