//! The flips: runs that change one thing a mechanism names, each variant against its stock
//! server, to see whether the race's outcome flips.

use std::path::Path;

use demo_contract::variant::{
    ACTIX_KEEP_ALIVE_60S, ACTIX_REQUEST_TIMEOUT_OFF, TOKIO_EVENT_INTERVAL_1, Variant,
};
use serde::{Deserialize, Serialize};

use crate::measure::burst::Connect;
use crate::measure::target::Target;

use super::{RacePlan, Tally, Trial, defaults, tally};

/// A run that changes one thing a mechanism names, to see whether the outcome flips: the
/// stock server against its variant, in the condition where the outcome showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flip {
    pub variant: Variant,
    pub sleep_ms: u64,
    pub connect: Connect,
    /// Trials per server; `None`: the race's own count.
    pub trials: Option<usize>,
    /// The mechanism it tests, in a sentence, for the results.
    pub tests: &'static str,
}

/// Every flip, in the order they run.
pub const FLIPS: [Flip; 3] = [
    Flip {
        variant: ACTIX_REQUEST_TIMEOUT_OFF,
        sleep_ms: 500,
        connect: Connect::Before,
        trials: Some(3),
        tests: "actix-web's 408s: a connection's deadline for its first request is counted \
                from the worker's cached clock, which a blocked worker does not update, so it \
                runs out early; with client_request_timeout off there is no deadline",
    },
    Flip {
        variant: ACTIX_KEEP_ALIVE_60S,
        sleep_ms: 500,
        connect: Connect::Before,
        trials: Some(3),
        tests: "actix-web's reset connections: the pinger's idle keep-alive connection is \
                closed when its 5 s keep-alive runs out, which it does while the worker is \
                blocked for 5 s and the next ping waits unread; kept 60 s, it is not",
    },
    Flip {
        variant: TOKIO_EVENT_INTERVAL_1,
        sleep_ms: defaults::SLEEP_MS,
        connect: Connect::During,
        trials: None,
        tests: "whether tokio's scheduler polling its I/O driver only every 61 tasks keeps the \
                ping out: with event_interval(1) it polls the driver after every task",
    },
];

impl Flip {
    /// The race's plan narrowed to this flip's condition.
    pub fn plan(&self, race: &RacePlan) -> RacePlan {
        RacePlan {
            trials: self.trials.unwrap_or(race.trials),
            threads: 1,
            sleep_ms: self.sleep_ms,
            ping_every_ms: super::ping_every_ms(self.sleep_ms),
            connects: vec![self.connect],
            ..race.clone()
        }
    }
}

/// A flip ready to run: its stock server and its variant.
#[derive(Debug, Clone)]
pub struct FlipRun {
    pub flip: Flip,
    pub targets: [Target; 2],
}

/// The flips whose stock server is among `targets`, each with its variant, built in `bin_dir`.
pub fn flip_runs(targets: &[Target], bin_dir: &Path) -> Vec<FlipRun> {
    (FLIPS.iter())
        .filter_map(|flip| {
            let stock = targets.iter().find(|t| t.label() == flip.variant.server)?;
            Some(FlipRun {
                flip: *flip,
                targets: [stock.clone(), Target::variant(&flip.variant, bin_dir)],
            })
        })
        .collect()
}

/// One flip's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlipReport {
    pub server: String,
    pub variant: String,
    pub tests: String,
    pub sleep_ms: u64,
    pub connect: Connect,
    /// The stock server's, then the variant's.
    pub tallies: Vec<Tally>,
}

impl FlipRun {
    pub(super) fn report(&self, trials: &[Trial]) -> FlipReport {
        FlipReport {
            server: self.flip.variant.server.to_owned(),
            variant: self.flip.variant.label.to_owned(),
            tests: self.flip.tests.to_owned(),
            sleep_ms: self.flip.sleep_ms,
            connect: self.flip.connect,
            tallies: tally(trials),
        }
    }
}
