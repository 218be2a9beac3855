//! The counts of tokio's own answers, each derived once from the records.

use serde::{Deserialize, Serialize};

use super::{JoinTrial, SpawnTrial, TokioReport};
use burst_meter::stats::{grouped, spread};

/// The trials of one join route on one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JoinTally {
    pub target: String,
    pub workers: usize,
    pub route: String,
    pub trials: usize,
    pub timer_due_ms: u64,
    /// In how many the timer fired only once the sleep had ended.
    pub held: usize,
    /// When it fired: the smallest, the median and the largest, in ms.
    pub fired_ms: Option<[f64; 3]>,
}

/// The trials of one LIFO setting at one worker count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpawnTally {
    pub target: String,
    pub lifo_slot: bool,
    pub workers: usize,
    pub trials: usize,
    /// In how many the spawned task waited for the whole sleep.
    pub waited: usize,
    /// In how many it ran on the thread that slept.
    pub same_thread: usize,
    /// When it first ran after the spawn: the smallest, the median and the largest, in ms.
    pub ran_ms: Option<[f64; 3]>,
}

/// Each join route's trials on each server, in the order run.
pub fn joins(report: &TokioReport) -> Vec<JoinTally> {
    let key = |trial: &JoinTrial| (trial.target.clone(), trial.workers, trial.route.clone());
    (grouped(&report.joins, key).into_iter())
        .map(|((target, workers, route), trials)| JoinTally {
            target,
            workers,
            route,
            trials: trials.len(),
            timer_due_ms: trials.first().map_or(0, |trial| trial.timer_due_ms),
            held: trials.iter().filter(|trial| trial.held()).count(),
            fired_ms: spread(trials.iter().map(|trial| trial.timer_fired_ms).collect()),
        })
        .collect()
}

/// Each LIFO setting's trials at each worker count, in the order run.
pub fn spawns(report: &TokioReport) -> Vec<SpawnTally> {
    let key = |trial: &SpawnTrial| (trial.target.clone(), trial.lifo_slot, trial.workers);
    (grouped(&report.spawns, key).into_iter())
        .map(|((target, lifo_slot, workers), trials)| SpawnTally {
            target,
            lifo_slot,
            workers,
            trials: trials.len(),
            waited: trials.iter().filter(|trial| trial.waited()).count(),
            same_thread: trials.iter().filter(|trial| trial.same_thread).count(),
            ran_ms: spread(trials.iter().map(|trial| trial.spawned_ran_ms).collect()),
        })
        .collect()
}
