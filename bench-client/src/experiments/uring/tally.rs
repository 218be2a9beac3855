//! The trials read and counted: whether a burst's answers came one per sleep or were held,
//! and whether a ping leading the burst was served first and answered at once.

use serde::{Deserialize, Serialize};

use super::UringTrial;
use burst_meter::stats::{answer_groups, grouped, spread};

/// How a burst's answers came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Held {
    /// One per sleep, as each handler ended: no two less than half a sleep apart.
    OnePerSleep,
    /// In some groups: some answers held until a later one was sent.
    PartlyHeld,
    /// All together: every answer held until the last handler ended.
    AllHeld,
    /// A request failed, or the server's record lacks some: no verdict.
    Failed,
}

/// The outcome of a trial's burst.
pub fn held_of(trial: &UringTrial, sleep_ms: u64) -> Held {
    if trial.error.is_some() || trial.answers_ms.is_empty() {
        return Held::Failed;
    }
    match answer_groups(&trial.answers_ms, sleep_ms) {
        1 => Held::AllHeld,
        n if n == trial.answers_ms.len() => Held::OnePerSleep,
        _ => Held::PartlyHeld,
    }
}

/// When a ping's answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PingAnswer {
    /// Before the first sleep ended.
    WithinASleep,
    /// With the burst's last answer (within half a sleep of it), or after.
    HeldToTheEnd,
    /// Between.
    Between,
}

/// When `trial`'s ping was answered; `None` for a trial with no ping or no verdict.
pub fn ping_answer_of(trial: &UringTrial, sleep_ms: u64) -> Option<PingAnswer> {
    let (ping, last) = (trial.ping_ms?, trial.answers_ms.last()?);
    let sleep = sleep_ms as f64;
    Some(if ping < sleep {
        PingAnswer::WithinASleep
    } else if ping >= last - sleep / 2.0 {
        PingAnswer::HeldToTheEnd
    } else {
        PingAnswer::Between
    })
}

/// A setting's bursts with no ping, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldTally {
    pub setting: String,
    pub trials: usize,
    pub one_per_sleep: usize,
    pub partly_held: usize,
    pub all_held: usize,
    pub failed: usize,
    /// The first answer, in sleeps: min, median, max over the trials with a verdict.
    pub first_answer_sleeps: Option<[f64; 3]>,
    /// Trials in which the server's record shows the handlers ending one per sleep.
    pub handlers_one_per_sleep: usize,
}

/// Each setting's bursts with no ping, counted, in the order first measured.
pub fn held(trials: &[UringTrial], sleep_ms: u64) -> Vec<HeldTally> {
    let unpinged: Vec<UringTrial> = trials
        .iter()
        .filter(|t| t.lead_ms.is_none())
        .cloned()
        .collect();
    let groups_of = grouped(&unpinged, |trial| trial.setting.as_str());
    (groups_of.into_iter())
        .map(|(setting, mine)| {
            let count = |held: Held| mine.iter().filter(|t| held_of(t, sleep_ms) == held).count();
            let measured = mine.iter().filter(|t| held_of(t, sleep_ms) != Held::Failed);
            let first = measured.clone().filter_map(|t| t.answers_ms.first());
            let one_per_sleep = |t: &&&UringTrial| {
                answer_groups(&t.handlers_ended_ms, sleep_ms) == t.handlers_ended_ms.len()
            };
            HeldTally {
                setting: setting.to_owned(),
                trials: mine.len(),
                one_per_sleep: count(Held::OnePerSleep),
                partly_held: count(Held::PartlyHeld),
                all_held: count(Held::AllHeld),
                failed: count(Held::Failed),
                first_answer_sleeps: spread(first.map(|ms| ms / sleep_ms as f64).collect()),
                handlers_one_per_sleep: measured.filter(one_per_sleep).count(),
            }
        })
        .collect()
}

/// A setting's trials with a ping leading the burst by one lead, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderTally {
    pub setting: String,
    pub lead_ms: f64,
    pub trials: usize,
    /// Trials in which the ping's handler started before every `/bad` handler.
    pub served_first: usize,
    pub within_a_sleep: usize,
    pub held_to_the_end: usize,
    pub between: usize,
    pub failed: usize,
}

/// Each (setting, lead)'s trials, counted, in the order first measured.
pub fn order(trials: &[UringTrial], sleep_ms: u64) -> Vec<OrderTally> {
    let pinged: Vec<UringTrial> = trials
        .iter()
        .filter(|t| t.lead_ms.is_some())
        .cloned()
        .collect();
    let groups_of = grouped(&pinged, |t| {
        (t.setting.as_str(), t.lead_ms.unwrap_or_default())
    });
    (groups_of.into_iter())
        .map(|((setting, lead_ms), mine)| {
            let answers: Vec<Option<PingAnswer>> = (mine.iter())
                .map(|t| {
                    t.error
                        .is_none()
                        .then(|| ping_answer_of(t, sleep_ms))
                        .flatten()
                })
                .collect();
            let count = |answer| answers.iter().filter(|a| **a == Some(answer)).count();
            OrderTally {
                setting: setting.to_owned(),
                lead_ms,
                trials: mine.len(),
                served_first: (mine.iter())
                    .filter(|t| t.error.is_none() && t.ping_started_after == Some(0))
                    .count(),
                within_a_sleep: count(PingAnswer::WithinASleep),
                held_to_the_end: count(PingAnswer::HeldToTheEnd),
                between: count(PingAnswer::Between),
                failed: answers.iter().filter(|a| a.is_none()).count(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(answers_ms: &[f64], lead_ms: Option<f64>, ping_ms: Option<f64>) -> UringTrial {
        UringTrial {
            setting: "s".to_owned(),
            lead_ms,
            index: 0,
            answers_ms: answers_ms.to_vec(),
            handlers_ended_ms: vec![0.0, 100.0, 200.0],
            ping_ms,
            ping_started_after: Some(0),
            error: None,
        }
    }

    #[test]
    fn a_burst_is_one_per_sleep_partly_or_all_held() {
        let held = |answers: &[f64]| held_of(&trial(answers, None, None), 100);
        assert_eq!(held(&[101.0, 201.0, 302.0]), Held::OnePerSleep);
        assert_eq!(held(&[101.0, 302.0, 303.0]), Held::PartlyHeld);
        assert_eq!(held(&[302.0, 302.5, 303.0]), Held::AllHeld);
        let mut failed = trial(&[101.0], None, None);
        failed.error = Some("status 500".to_owned());
        assert_eq!(held_of(&failed, 100), Held::Failed);
    }

    #[test]
    fn a_ping_is_answered_within_a_sleep_held_or_between() {
        let answer =
            |ping| ping_answer_of(&trial(&[300.0, 300.5, 301.0], Some(0.0), Some(ping)), 100);
        assert_eq!(answer(0.5), Some(PingAnswer::WithinASleep));
        assert_eq!(answer(299.0), Some(PingAnswer::HeldToTheEnd));
        assert_eq!(answer(150.0), Some(PingAnswer::Between));
        assert_eq!(ping_answer_of(&trial(&[1.0], None, None), 100), None);
    }

    #[test]
    fn tallies_count_the_bursts_and_the_pings_per_setting_and_lead() {
        let trials = [
            trial(&[101.0, 201.0, 302.0], None, None),
            trial(&[302.0, 302.5, 303.0], None, None),
            trial(&[302.0, 302.5, 303.0], Some(1.0), Some(302.0)),
            trial(&[101.0, 201.0, 302.0], Some(1.0), Some(1.0)),
        ];
        let held = &held(&trials, 100)[0];
        let counts = (held.trials, held.one_per_sleep, held.all_held, held.failed);
        assert_eq!(counts, (2, 1, 1, 0));
        assert_eq!(held.handlers_one_per_sleep, 2);
        assert_eq!(held.first_answer_sleeps, Some([1.01, 1.01, 3.02]));
        let order = &order(&trials, 100)[0];
        let counts = (
            order.trials,
            order.served_first,
            order.within_a_sleep,
            order.held_to_the_end,
        );
        assert_eq!(counts, (2, 2, 1, 1));
    }
}
