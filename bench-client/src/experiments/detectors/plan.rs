//! The detectors' plan: the steps each (detector, stack) runs, and their setup.

use std::time::Duration;

use demo_contract::Route;

use serde::{Deserialize, Serialize};

use crate::progress::Stage;
use burst_meter::burst::Connect;
use burst_meter::case;
use burst_meter::probe::ProbeChoice;
use burst_meter::session::{ServerOptions, ServerSetup, Step};
use burst_meter::work::WorkPath;

use super::*;

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectorsPlan {
    pub concurrency: usize,
    pub sleep_ms: u64,
    pub cpu_ms: u64,
    pub held_ms: u64,
    pub held_trials: usize,
    /// Rounds of the cost's burst on each (detector, stack) and on each stack without one.
    pub cost_rounds: usize,
    pub cost_concurrency: usize,
    /// Every detector's threshold, where it takes one ([`THRESHOLD_MS`]).
    #[serde(default = "before_recorded::threshold_ms")]
    pub threshold_ms: u64,
    /// How long the client listened past a step's last answer ([`LISTEN_AFTER`]).
    #[serde(default = "before_recorded::listen_after_ms")]
    pub listen_after_ms: u64,
}

/// What the runs recorded before these fields were ran with.
mod before_recorded {
    pub fn threshold_ms() -> u64 {
        100
    }

    pub fn listen_after_ms() -> u64 {
        200
    }
}

impl Default for DetectorsPlan {
    fn default() -> DetectorsPlan {
        DetectorsPlan {
            concurrency: defaults::CONCURRENCY,
            sleep_ms: defaults::SLEEP_MS,
            cpu_ms: defaults::CPU_MS,
            held_ms: defaults::HELD_MS,
            held_trials: defaults::HELD_TRIALS,
            cost_rounds: defaults::COST_ROUNDS,
            cost_concurrency: defaults::COST_CONCURRENCY,
            threshold_ms: THRESHOLD_MS,
            listen_after_ms: LISTEN_AFTER.as_millis() as u64,
        }
    }
}

/// One step of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// `/ok-await`: slow, never blocking. A report is a false alarm.
    OkAwait,
    /// `/ok-blocking`: the same on the blocking pool.
    OkBlocking,
    Bad,
    BadCpu,
    /// One `/bad` holding the thread for the plan's `held_ms`; the trial's number from 0.
    Held(usize),
    /// The cost: `/ok-await` at the plan's `cost_concurrency`, connecting before, with the
    /// closed-loop ping beside it, as the comparison measures a case; the round from 0.
    Cost(usize),
}

/// A step as the session runs it: the phase, its request and what it should take.
#[derive(Debug, Clone)]
pub struct PhaseStep {
    pub phase: Phase,
    pub route: Route,
    pub n: usize,
    pub ms: u64,
}

impl PhaseStep {
    pub(super) fn path_and_query(&self) -> String {
        format!("{}?ms={}", self.route.path(), self.ms)
    }

    /// One reactor thread: the blocking routes serialise, the others overlap.
    pub(super) fn expected(&self) -> Duration {
        let one = Duration::from_millis(self.ms);
        if self.route.holds_the_reactor() {
            one * self.n as u32
        } else {
            one
        }
    }
}

impl Step for PhaseStep {
    fn route(&self) -> WorkPath {
        WorkPath::canonical(self.route)
    }

    fn describe(&self) -> String {
        match self.phase {
            Phase::Cost(round) => format!(
                "cost: {} × {} at {} ms, round {}",
                self.route.path(),
                self.n,
                self.ms,
                round + 1
            ),
            Phase::Held(trial) => format!(
                "{} held {} ms, trial {}",
                self.route.path(),
                self.ms,
                trial + 1
            ),
            _ => format!("{} × {} at {} ms", self.route.path(), self.n, self.ms),
        }
    }

    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        self.expected() + LISTEN_AFTER
    }
}

impl DetectorsPlan {
    /// The steps of `detector`, in the order each server runs them: the false alarms first,
    /// on a server that has not yet stalled, then the stalls, then the cost rounds; the
    /// baseline runs the cost rounds alone.
    pub fn steps(&self, detector: &Detector) -> Vec<PhaseStep> {
        let cost = (0..self.cost_rounds).map(|round| PhaseStep {
            phase: Phase::Cost(round),
            route: Route::OkAwait,
            n: self.cost_concurrency,
            ms: self.sleep_ms,
        });
        let mut steps = match detector == &BASELINE {
            true => Vec::new(),
            false => self.workload(),
        };
        steps.extend(cost);
        steps
    }

    fn workload(&self) -> Vec<PhaseStep> {
        let step = |phase, route, n, ms| PhaseStep {
            phase,
            route,
            n,
            ms,
        };
        let n = self.concurrency;
        let mut steps = vec![
            step(Phase::OkAwait, Route::OkAwait, n, self.sleep_ms),
            step(Phase::OkBlocking, Route::OkBlocking, n, self.sleep_ms),
            step(Phase::Bad, Route::Bad, n, self.sleep_ms),
            step(Phase::BadCpu, Route::BadCpu, n, self.cpu_ms),
        ];
        steps.extend(
            (0..self.held_trials)
                .map(|trial| step(Phase::Held(trial), Route::Bad, 1, self.held_ms)),
        );
        steps
    }

    pub(super) fn setup(&self, detector: &Detector) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            options: ServerOptions {
                blocking_threads: None,
                stall_ms: Some(detector.stall_ms),
            },
            ..ServerSetup::default()
        }
    }

    /// The plan on `runs`, for the progress view.
    pub fn stage(&self, name: &str, runs: &[DetectorRun]) -> Stage {
        let stages: Vec<Stage> = (runs.iter())
            .map(|run| Stage::of(name, &[(&run.target, 1)], &self.steps(&run.detector)))
            .collect();
        Stage {
            name: name.to_owned(),
            steps: stages.iter().map(|stage| stage.steps).sum(),
            estimate: stages.iter().map(|stage| stage.estimate).sum(),
        }
    }

    /// The comparison's plan for one cost round.
    pub(super) fn cost_plan(&self) -> case::Plan {
        case::Plan {
            routes: vec![WorkPath::canonical(Route::OkAwait)],
            concurrency: self.cost_concurrency,
            sleep_ms: self.sleep_ms,
            probe: ProbeChoice::Closed,
            connect: Connect::Before,
            ..case::Plan::default()
        }
    }
}
