//! The race with the order of arrival controlled. In the race's trials ([`crate::experiments::race`]) the
//! pinger sends whenever its last answer came, and where its ping lands among the burst's
//! connections and requests is left to chance. Here one ping is sent at a chosen point of the
//! burst ([`PingAt`]), trial after trial, so that each point's outcome either repeats or does
//! not. The server's own record of events (`--events`, `GET /events`, see
//! `docs/contract.md`) says where the ping was handled: after how many of the burst's blocked
//! requests had ended, and how many of their connections had been accepted by then. That is
//! observed on the server, not inferred from the ping's wait.

use std::sync::Arc;
use std::time::Duration;

use demo_contract::{EventsBody, Route};
use serde::{Deserialize, Serialize};

use burst_meter::burst::REQUEST_TIMEOUT;
use burst_meter::http::{self, HttpError};
use burst_meter::session::{self, Event, Running, ServerSetup, Step};
use burst_meter::stats::{counted, grouped, spread};
use burst_meter::target::Target;
use burst_meter::wire::{Peer, Request};
use burst_meter::work::WorkPath;

mod send;

use send::PlacedBurst;

/// The arrival experiment's defaults.
pub mod defaults {
    /// Trials per target and point: enough to see whether a point's outcome repeats (three:
    /// the six points on nine servers are most of the race's time).
    pub const TRIALS: usize = 3;
    /// Half the race's sleep: a trial is the burst's ten sleeps, and there are six points.
    pub const SLEEP_MS: u64 = 25;
}

/// The route of the burst.
const BAD: WorkPath = WorkPath::canonical(Route::Bad);

/// The pause between two trials on one server, for it to close the last trial's connections.
const BETWEEN_TRIALS: Duration = Duration::from_millis(50);

/// How long the server may take to answer `GET /events` after a trial.
const EVENTS_WITHIN: Duration = Duration::from_secs(3);

/// When the ping is sent, relative to the burst ([`PingAt::explain`] says each in full).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PingAt {
    BeforeBurst,
    AfterAccepts,
    AfterWrites,
    InFirstSleep,
    InFirstSleepAcceptedFirst,
    OwnConnection,
}

impl PingAt {
    /// Every point, in the order of the burst.
    pub const ALL: [PingAt; 6] = [
        PingAt::BeforeBurst,
        PingAt::AfterAccepts,
        PingAt::AfterWrites,
        PingAt::InFirstSleep,
        PingAt::InFirstSleepAcceptedFirst,
        PingAt::OwnConnection,
    ];

    /// When the ping is sent, in full.
    pub fn explain(self) -> &'static str {
        match self {
            PingAt::BeforeBurst => {
                "on the pinger's open connection, before the burst's first connection is opened"
            }
            PingAt::AfterAccepts => {
                "on the pinger's open connection, once the server has accepted every burst \
                 connection (its listen queue empty) and before any burst request is written"
            }
            PingAt::AfterWrites => {
                "on the pinger's open connection, as soon as every burst request is written, \
                 each on a connection opened as it was sent: long before the first sleep ends"
            }
            PingAt::InFirstSleep => {
                "on the pinger's open connection, half a sleep after every burst request was \
                 written"
            }
            PingAt::InFirstSleepAcceptedFirst => {
                "the same, but on burst connections all opened and accepted by the server \
                 before the first request was written, as the comparison's `--connect before`: \
                 the one thing it changes from the point before"
            }
            PingAt::OwnConnection => {
                "on a connection of its own, opened half a sleep after every burst request \
                 was written: the original's client, whose pool lent the pinger's idle \
                 connection to a burst request, so that its next ping opened a new one"
            }
        }
    }

    /// The point in a few words, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            PingAt::BeforeBurst => "before the burst",
            PingAt::AfterAccepts => "after the accepts",
            PingAt::AfterWrites => "after the writes",
            PingAt::InFirstSleep => "in the first sleep",
            PingAt::InFirstSleepAcceptedFirst => "in the first sleep, accepted first",
            PingAt::OwnConnection => "own connection, first sleep",
        }
    }
}

/// What to run: `trials` bursts of `concurrency` `/bad` sleeping `sleep_ms`, at each point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrivalPlan {
    pub trials: usize,
    pub sleep_ms: u64,
    pub concurrency: usize,
    pub points: Vec<PingAt>,
}

impl ArrivalPlan {
    /// How the servers are started: one reactor thread, recording their events.
    pub fn setup(&self) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            events: true,
            ..ServerSetup::default()
        }
    }

    /// One step per point, each its `trials` bursts; none if there are no trials.
    pub fn steps(&self) -> Vec<PointStep> {
        if self.trials == 0 {
            return Vec::new();
        }
        let burst = Duration::from_millis(self.sleep_ms) * self.concurrency as u32;
        let floor = (burst + BETWEEN_TRIALS) * self.trials as u32;
        (self.points.iter())
            .map(|&point| PointStep {
                point,
                trials: self.trials,
                floor,
            })
            .collect()
    }
}

/// The trials of one point on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointStep {
    pub point: PingAt,
    pub trials: usize,
    floor: Duration,
}

impl Step for PointStep {
    fn route(&self) -> WorkPath {
        BAD
    }

    fn describe(&self) -> String {
        format!("ping {} ({} trials)", self.point.describe(), self.trials)
    }

    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        self.floor
    }
}

/// One trial, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrivalTrial {
    pub target: String,
    pub point: PingAt,
    pub index: usize,
    /// From the ping's write to its whole answer.
    pub ping_ms: Option<f64>,
    /// Where the server's record places the ping; `None` if it recorded none.
    pub order: Option<ServerOrder>,
    /// Why the trial has no verdict: a request or the ping failed.
    pub error: Option<String>,
}

/// Where the server's own record of events places the ping among the burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerOrder {
    /// Burst requests whose handler had ended when the ping's started.
    pub handled_after: usize,
    /// Burst connections the server had accepted when the ping's handler started.
    pub accepted_before: usize,
    /// Burst connections it had accepted when the first burst handler started: those whose
    /// requests were queued before the first sleep.
    pub accepted_before_first: usize,
}

/// Runs every point's trials on each target, one reactor thread each.
pub async fn run(
    targets: &[Target],
    plan: &ArrivalPlan,
    on: &mut impl FnMut(Event<'_, Vec<ArrivalTrial>>),
) -> session::Outcome<Vec<ArrivalTrial>> {
    let steps = plan.steps();
    if steps.is_empty() {
        return session::Outcome::default();
    }
    let schedule: Vec<(&Target, usize)> = targets.iter().map(|t| (t, 1)).collect();
    let measure = async |running: &Running, step: &PointStep| {
        let mut trials = Vec::with_capacity(step.trials);
        for index in 0..step.trials {
            trials.push(trial(running, plan, step.point, index).await);
            tokio::time::sleep(BETWEEN_TRIALS).await;
        }
        trials
    };
    session::run_each(&schedule, &plan.setup(), &steps, on, measure).await
}

/// One burst with the ping at `point`, and where the server says the ping was handled.
async fn trial(running: &Running, plan: &ArrivalPlan, point: PingAt, index: usize) -> ArrivalTrial {
    let endpoint = &running.endpoint;
    // What the server recorded before this trial (its warm-up, the last trial) is read and
    // dropped, so that the record read after it holds this trial alone.
    let cleared = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
    let burst = PlacedBurst {
        peer: Arc::new(Peer::resolve(endpoint).await),
        bad: Request::get(endpoint, &format!("{}{}", BAD.path(), running.query)),
        ping: Request::get(endpoint, "/ping"),
        n: plan.concurrency,
        half_sleep: Duration::from_millis(plan.sleep_ms) / 2,
        port: endpoint.port,
    };
    let outcome = match cleared {
        Ok(_) => match tokio::time::timeout(REQUEST_TIMEOUT, burst.run(point)).await {
            Ok(sent) => sent.map_err(|error| error.to_string()),
            Err(_) => Err(HttpError::Timeout(REQUEST_TIMEOUT).describe()),
        },
        Err(error) => Err(format!("GET /events: {}", error.describe())),
    };
    let events = http::get_once(endpoint, "/events", EVENTS_WITHIN).await;
    let events = events.ok().and_then(|reply| reply.json::<EventsBody>());
    let target = running.label.clone();
    match outcome {
        Ok(arrival) => arrival.trial(target, point, index, events.as_ref()),
        Err(error) => ArrivalTrial {
            target,
            point,
            index,
            ping_ms: None,
            order: None,
            error: Some(error),
        },
    }
}

/// The trials of one target at one point, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrivalTally {
    pub target: String,
    pub point: PingAt,
    pub trials: usize,
    pub failed: usize,
    /// How many burst requests had ended when the ping was handled: each count seen, and in
    /// how many trials, smallest first.
    pub handled_after: Vec<(usize, usize)>,
    /// The ping's wait in sleeps over the trials with a verdict: min, median, max.
    pub ping_sleeps: Option<[f64; 3]>,
    /// Burst connections accepted when the ping's handler started: min, median, max.
    pub accepted_before: Option<[f64; 3]>,
    /// Burst connections accepted when the first burst handler started: min, median, max.
    pub accepted_before_first: Option<[f64; 3]>,
}

/// Each (target, point)'s trials counted, in the order first measured.
pub fn tally(trials: &[ArrivalTrial], sleep_ms: u64) -> Vec<ArrivalTally> {
    let groups = grouped(trials, |trial| (trial.target.as_str(), trial.point));
    (groups.into_iter())
        .map(|((target, point), mine)| tally_of(target, point, &mine, sleep_ms))
        .collect()
}

fn tally_of(target: &str, point: PingAt, trials: &[&ArrivalTrial], sleep_ms: u64) -> ArrivalTally {
    let orders: Vec<ServerOrder> = trials.iter().filter_map(|trial| trial.order).collect();
    let mut handled_after = counted(orders.iter().map(|order| order.handled_after));
    handled_after.sort_unstable();
    let sleeps: Vec<f64> = (trials.iter())
        .filter_map(|trial| trial.ping_ms)
        .map(|ms| ms / sleep_ms as f64)
        .collect();
    ArrivalTally {
        target: target.to_owned(),
        point,
        trials: trials.len(),
        failed: trials.iter().filter(|trial| trial.error.is_some()).count(),
        handled_after,
        ping_sleeps: spread(sleeps),
        accepted_before: spread(orders.iter().map(|o| o.accepted_before as f64).collect()),
        accepted_before_first: spread(
            (orders.iter())
                .map(|order| order.accepted_before_first as f64)
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use demo_contract::Event as ServerEvent;
    use demo_contract::What;
    use send::Arrival;

    fn event(at_us: u64, what: What, peer: u16, route: Option<&str>) -> ServerEvent {
        ServerEvent {
            at_us,
            what,
            peer,
            route: route.map(str::to_owned),
        }
    }

    #[test]
    fn the_server_record_places_the_ping_among_the_burst() {
        use What::{Accepted, Ended, Started};
        let events = EventsBody {
            recording: true,
            events: vec![
                event(1, Accepted, 9, None),
                event(2, Started, 9, Some("/ping")),
                event(3, Ended, 9, Some("/ping")),
                event(10, Accepted, 1, None),
                event(11, Started, 1, Some("/bad")),
                event(20, Accepted, 2, None),
                event(50, Ended, 1, Some("/bad")),
                event(51, Started, 2, Some("/bad")),
                event(52, Accepted, 3, None),
                event(90, Ended, 2, Some("/bad")),
                event(91, Started, 9, Some("/ping")),
                event(92, Ended, 9, Some("/ping")),
                event(93, Started, 3, Some("/bad")),
                event(99, Ended, 3, Some("/bad")),
            ],
        };
        let arrival = Arrival {
            ping_ms: 80.0,
            ping_port: 9,
            burst_ports: vec![1, 2, 3],
        };
        let order = ServerOrder {
            handled_after: 2,
            accepted_before: 3,
            accepted_before_first: 1,
        };
        assert_eq!(arrival.order(&events), Some(order));
        let silent = EventsBody {
            recording: false,
            events: Vec::new(),
        };
        assert_eq!(arrival.order(&silent), None);
    }

    #[test]
    fn a_tally_counts_each_place_the_ping_was_handled() {
        let trial = |handled: Option<usize>, error: Option<&str>| ArrivalTrial {
            target: "t".to_owned(),
            point: PingAt::AfterWrites,
            index: 0,
            ping_ms: handled.map(|k| 50.0 * (k + 1) as f64),
            order: handled.map(|handled_after| ServerOrder {
                handled_after,
                accepted_before: 4,
                accepted_before_first: 1,
            }),
            error: error.map(str::to_owned),
        };
        let trials = [
            trial(Some(10), None),
            trial(Some(1), None),
            trial(Some(10), None),
            trial(None, Some("status 408")),
        ];
        let tally = &tally(&trials, 50)[0];
        assert_eq!(tally.handled_after, [(1, 1), (10, 2)]);
        assert_eq!((tally.trials, tally.failed), (4, 1));
        assert_eq!(tally.ping_sleeps, Some([2.0, 11.0, 11.0]));
    }
}
