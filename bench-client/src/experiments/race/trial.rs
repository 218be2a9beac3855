//! One trial of the race, its outcome read from the closed loop's slowest wait, and the
//! trials of one target and connect mode counted.

use serde::{Deserialize, Serialize};

use super::PROBE_TIMEOUT_MS;
use burst_meter::burst::{Connect, ErrorCount};
use burst_meter::case::Case;
use burst_meter::stats::{grouped, spread};

/// A closed loop whose slowest wait was under this many sleeps got in between every sleep.
pub const INTERLEAVED_BELOW: f64 = 1.5;

/// One whose slowest wait was over this share of the other N − 1 sleeps waited for them all.
pub const WAITED_FOR_ALL_SHARE: f64 = 0.8;

/// How a trial's closed-loop ping fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GotIn {
    /// Got in between every sleep: its slowest wait under 1.5 sleeps.
    Interleaved,
    /// Got in somewhere, not between every sleep.
    Partly,
    /// Waited behind every queued request: its slowest wait over 0.8 × (N − 1) sleeps.
    WaitedForAll,
    /// A burst request or a closed-loop ping failed: no verdict.
    Failed,
}

impl GotIn {
    /// The outcome of a closed loop whose slowest wait was `slowest_ms`, in a burst of `n`
    /// sleeps of `sleep_ms`.
    pub fn of(slowest_ms: f64, sleep_ms: u64, n: usize) -> GotIn {
        let sleeps = slowest_ms / sleep_ms as f64;
        if sleeps < INTERLEAVED_BELOW {
            GotIn::Interleaved
        } else if sleeps > WAITED_FOR_ALL_SHARE * n.saturating_sub(1) as f64 {
            GotIn::WaitedForAll
        } else {
            GotIn::Partly
        }
    }
}

/// One trial, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub target: String,
    pub connect: Connect,
    pub index: usize,
    pub outcome: GotIn,
    /// The closed loop's slowest answered ping, in sleeps.
    pub slowest_sleeps: Option<f64>,
    /// Open-loop pings scheduled, and those over [`PROBE_TIMEOUT_MS`] or failed.
    pub open_scheduled: usize,
    pub open_over_timeout: usize,
    /// Why open-loop pings failed, each reason with its count.
    pub open_errors: Vec<ErrorCount>,
}

impl Trial {
    /// The trial that `case` was.
    pub fn from_case(case: &Case, connect: Connect, index: usize) -> Trial {
        let closed = case.closed_loop.as_ref();
        let slowest_ms = closed.and_then(|ping| ping.max_ms);
        let failed = case.err > 0 || closed.is_none_or(|ping| ping.errors > 0);
        let outcome = match slowest_ms {
            Some(ms) if !failed => GotIn::of(ms, case.sleep_ms, case.n),
            _ => GotIn::Failed,
        };
        let open = case.open_loop.as_ref();
        let over = |ms: &&f64| **ms > PROBE_TIMEOUT_MS;
        Trial {
            target: case.target.clone(),
            connect,
            index,
            outcome,
            slowest_sleeps: slowest_ms.map(|ms| ms / case.sleep_ms as f64),
            open_scheduled: open.map_or(0, |open| open.scheduled),
            open_over_timeout: open.map_or(0, |open| {
                open.raw_ms.iter().filter(over).count() + open.errors
            }),
            open_errors: ErrorCount::count_all(
                (open.iter().flat_map(|open| &open.error_reasons))
                    .map(|reason| without_time(reason)),
            ),
        }
    }
}

/// `reason` without the time it came after (` after 2488 ms`), so that failures for one
/// reason count as one.
fn without_time(reason: &str) -> String {
    reason.split(" after ").next().unwrap_or(reason).to_owned()
}

/// The trials of one target in one connect mode, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub target: String,
    pub connect: Connect,
    pub trials: usize,
    pub interleaved: usize,
    pub partly: usize,
    pub waited_for_all: usize,
    pub failed: usize,
    /// The slowest wait, in sleeps, over the trials with a verdict: min, median, max.
    pub slowest_sleeps: Option<[f64; 3]>,
    /// Open-loop pings over 1 s (or failed), of all scheduled, over every trial.
    pub open_over_timeout: usize,
    pub open_scheduled: usize,
    /// Why open-loop pings failed, over every trial.
    pub open_errors: Vec<ErrorCount>,
}

/// Each (target, connect mode)'s trials counted, in the order first measured.
pub fn tally(trials: &[Trial]) -> Vec<Tally> {
    let groups = grouped(trials, |trial| (trial.target.as_str(), trial.connect));
    (groups.into_iter())
        .map(|((target, connect), mine)| tally_of(target, connect, &mine))
        .collect()
}

fn tally_of(target: &str, connect: Connect, trials: &[&Trial]) -> Tally {
    let count = |outcome: GotIn| trials.iter().filter(|t| t.outcome == outcome).count();
    let sleeps: Vec<f64> = (trials.iter())
        .filter(|t| t.outcome != GotIn::Failed)
        .filter_map(|t| t.slowest_sleeps)
        .collect();
    let errors = (trials.iter()).flat_map(|t| {
        (t.open_errors.iter()).flat_map(|e| std::iter::repeat_n(e.reason.clone(), e.count))
    });
    Tally {
        target: target.to_owned(),
        connect,
        trials: trials.len(),
        interleaved: count(GotIn::Interleaved),
        partly: count(GotIn::Partly),
        waited_for_all: count(GotIn::WaitedForAll),
        failed: count(GotIn::Failed),
        slowest_sleeps: spread(sleeps),
        open_over_timeout: trials.iter().map(|t| t.open_over_timeout).sum(),
        open_scheduled: trials.iter().map(|t| t.open_scheduled).sum(),
        open_errors: ErrorCount::count_all(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_wait_decides_the_outcome() {
        assert_eq!(GotIn::of(140.0, 100, 10), GotIn::Interleaved);
        assert_eq!(GotIn::of(160.0, 100, 10), GotIn::Partly);
        assert_eq!(GotIn::of(720.0, 100, 10), GotIn::Partly);
        assert_eq!(GotIn::of(730.0, 100, 10), GotIn::WaitedForAll);
        assert_eq!(GotIn::of(990.0, 100, 10), GotIn::WaitedForAll);
    }

    #[test]
    fn a_tally_counts_each_outcome_and_spreads_the_slowest_waits() {
        let trial = |outcome, sleeps| Trial {
            target: "t".into(),
            connect: Connect::During,
            index: 0,
            outcome,
            slowest_sleeps: Some(sleeps),
            open_scheduled: 10,
            open_over_timeout: 2,
            open_errors: vec![ErrorCount {
                reason: "status 408".to_owned(),
                count: 1,
            }],
        };
        let trials = [
            trial(GotIn::Interleaved, 1.1),
            trial(GotIn::WaitedForAll, 9.9),
            trial(GotIn::WaitedForAll, 9.8),
            trial(GotIn::Failed, 0.0),
        ];
        let tally = &tally(&trials)[0];
        let counts = (
            tally.interleaved,
            tally.partly,
            tally.waited_for_all,
            tally.failed,
        );
        assert_eq!(counts, (1, 0, 2, 1));
        assert_eq!(tally.slowest_sleeps, Some([1.1, 9.8, 9.9]));
        assert_eq!((tally.open_over_timeout, tally.open_scheduled), (8, 40));
        let reasons = ErrorCount::count_all(vec!["status 408".to_owned(); 4]);
        assert_eq!(tally.open_errors, reasons);
    }
}
