//! What each (detector, stack) showed over the whole workload.

use serde::{Deserialize, Serialize};

use burst_meter::stats::{grouped, spread};

use super::*;

/// What one (detector, stack) showed over the whole workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scorecard {
    pub detector: String,
    pub stack: String,
    /// Reports during `/ok-await` and `/ok-blocking`; `None` if a request there failed.
    pub false_alarms: Option<usize>,
    /// Reports during `/bad`, and whether one named the route; `None` if a request failed.
    pub bad_reports: Option<usize>,
    pub names_route: Option<bool>,
    pub bad_cpu_reports: Option<usize>,
    /// Per held trial with every request answered: when the first report came, from the send
    /// (`None`: no report), and when the held request was answered.
    pub held: Vec<HeldTrial>,
    /// The first line it printed during `/bad`, as a sample of what it says.
    pub sample: Option<String>,
    /// The cost rounds with every request and ping answered.
    pub cost: Vec<CostRound>,
    /// Lines it printed during the cost rounds (`/ok-await`, never blocking).
    pub cost_reports: usize,
}

/// One cost round: the burst's wall time and the closed-loop ping's p50 beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostRound {
    pub wall_ms: f64,
    pub ping_p50_ms: f64,
}

/// One held trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeldTrial {
    pub first_report_ms: Option<f64>,
    /// How long the request held its thread: its handler started after the send, so a
    /// report sooner than this after the send came while the thread was held.
    pub held_ms: u64,
    pub answered_ms: f64,
}

impl HeldTrial {
    /// Whether the detector reported while the thread was still held. Not "before the
    /// answer": a detector that reports when the poll returns prints before the server
    /// writes the answer.
    pub fn while_held(&self) -> bool {
        self.first_report_ms
            .is_some_and(|at| at < self.held_ms as f64)
    }
}

impl Scorecard {
    /// min / median / max of the first reports' delays over the trials that had one.
    pub fn first_report_spread(&self) -> Option<[f64; 3]> {
        spread(
            self.held
                .iter()
                .filter_map(|trial| trial.first_report_ms)
                .collect(),
        )
    }
}

/// The verdict of each (detector, stack) from its observations.
pub fn scorecards(observations: &[Observation]) -> Vec<Scorecard> {
    let runs = grouped(observations, |o| (o.detector.as_str(), o.stack.as_str()));
    (runs.into_iter())
        .map(|((detector, stack), observations)| {
            let mut verdict = Scorecard {
                detector: detector.to_owned(),
                stack: stack.to_owned(),
                false_alarms: Some(0),
                bad_reports: None,
                names_route: None,
                bad_cpu_reports: None,
                held: Vec::new(),
                sample: None,
                cost: Vec::new(),
                cost_reports: 0,
            };
            for observation in observations {
                add(&mut verdict, observation);
            }
            verdict
        })
        .collect()
}

/// Adds one step's observation to its verdict.
fn add(verdict: &mut Scorecard, observation: &Observation) {
    let reports = observation.complete().then_some(observation.reports.len());
    match observation.phase {
        Phase::OkAwait | Phase::OkBlocking => {
            verdict.false_alarms = verdict.false_alarms.zip(reports).map(|(a, b)| a + b);
        }
        Phase::Bad => {
            verdict.bad_reports = reports;
            verdict.names_route = observation.complete().then(|| observation.names_route());
            verdict.sample = observation.reports.first().map(|line| line.text.clone());
        }
        Phase::BadCpu => verdict.bad_cpu_reports = reports,
        Phase::Held(_) if observation.complete() => verdict.held.push(HeldTrial {
            first_report_ms: observation.first_report_ms(),
            held_ms: observation.ms,
            answered_ms: observation.wall_ms,
        }),
        Phase::Held(_) => {}
        Phase::Cost(_) => {
            verdict.cost_reports += observation.reports.len();
            if let (true, Some(ping_p50_ms)) = (observation.complete(), observation.ping_p50_ms) {
                verdict.cost.push(CostRound {
                    wall_ms: observation.wall_ms,
                    ping_p50_ms,
                });
            }
        }
    }
}

/// One figure of the cost rounds (the ping's p50 or the wall) with a detector on and with
/// none on the same stack: min / median / max of each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnOff {
    pub on: Option<[f64; 3]>,
    pub off: Option<[f64; 3]>,
}

impl OnOff {
    /// `figure` of `verdict`'s rounds beside `baseline`'s, its stack's with no detector.
    pub fn of(
        verdict: &Scorecard,
        baseline: Option<&Scorecard>,
        figure: fn(&CostRound) -> f64,
    ) -> OnOff {
        let rounds = |verdict: &Scorecard| verdict.cost.iter().map(figure).collect::<Vec<f64>>();
        OnOff {
            on: spread(rounds(verdict)),
            off: baseline.and_then(|baseline| spread(rounds(baseline))),
        }
    }

    /// On − off, of the medians.
    pub fn difference(&self) -> Option<f64> {
        Some(self.on?[1] - self.off?[1])
    }

    /// Whether the difference is larger than both ranges (max − min) it comes from: larger
    /// than the rounds' own spread.
    pub fn beyond_spread(&self) -> bool {
        let (Some(on), Some(off), Some(difference)) = (self.on, self.off, self.difference()) else {
            return false;
        };
        difference.abs() > (on[2] - on[0]).max(off[2] - off[0])
    }
}
