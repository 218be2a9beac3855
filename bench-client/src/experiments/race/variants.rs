//! The variants' tests: each changes one thing a mechanism names, run against its stock
//! server, to see whether the race's outcome flips.

use std::path::Path;

use demo_contract::variant::{self, Variant, runs_in};
use serde::{Deserialize, Serialize};

use burst_meter::burst::Connect;
use burst_meter::target::Target;

use super::{RacePlan, Tally, Trial, defaults, tally};

/// A variant against its stock server, in the condition where the outcome showed: whether
/// the one thing it changes flips the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantTest {
    /// The variant's name, as the stack that describes it for the race (`runs_in` `race`)
    /// names it.
    pub variant: &'static str,
    pub sleep_ms: u64,
    pub connect: Connect,
    /// Trials per server; `None`: the race's own count.
    pub trials: Option<usize>,
    /// The mechanism it tests, in a sentence, for the results.
    pub tests: &'static str,
}

/// Every variant's test, in the order they run.
pub const VARIANT_TESTS: [VariantTest; 3] = [
    VariantTest {
        variant: "request-timeout-off",
        sleep_ms: 500,
        connect: Connect::Before,
        trials: Some(3),
        tests: "actix-web's 408s: a connection's deadline for its first request is counted \
                from the worker's cached clock, which a blocked worker does not update, so it \
                runs out early; with client_request_timeout off there is no deadline",
    },
    VariantTest {
        variant: "keep-alive-60s",
        sleep_ms: 500,
        connect: Connect::Before,
        trials: Some(3),
        tests: "actix-web's reset connections: the pinger's idle keep-alive connection is \
                closed when its 5 s keep-alive runs out, which it does while the worker is \
                blocked for 5 s and the next ping waits unread; kept 60 s, it is not",
    },
    VariantTest {
        variant: "event-interval-1",
        sleep_ms: defaults::SLEEP_MS,
        connect: Connect::During,
        trials: None,
        tests: "whether tokio's scheduler polling its I/O driver only every 61 tasks keeps the \
                ping out: with event_interval(1) it polls the driver after every task",
    },
];

impl VariantTest {
    /// Its variant, as the stack's description gives it.
    pub fn described(&self) -> Option<&'static Variant> {
        variant::in_experiment(runs_in::RACE, self.variant)
    }

    /// The race's plan narrowed to this test's condition.
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

/// A variant's test ready to run: its stock server and its variant.
#[derive(Debug, Clone)]
pub struct VariantRun {
    pub test: VariantTest,
    pub variant: &'static Variant,
    pub targets: [Target; 2],
}

/// The variants' tests whose stock server is among `targets`, each with its variant, built
/// in `bin_dir`.
pub fn variant_runs(targets: &[Target], bin_dir: &Path) -> Vec<VariantRun> {
    (VARIANT_TESTS.iter())
        .filter_map(|test| {
            let variant = test.described()?;
            let stock = targets.iter().find(|t| t.label() == variant.server)?;
            Some(VariantRun {
                test: *test,
                variant,
                targets: [stock.clone(), Target::variant(variant, bin_dir)],
            })
        })
        .collect()
}

/// One variant's test: its outcome beside its stock server's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantReport {
    pub server: String,
    pub variant: String,
    pub tests: String,
    pub sleep_ms: u64,
    pub connect: Connect,
    /// The stock server's, then the variant's.
    pub tallies: Vec<Tally>,
}

impl VariantRun {
    pub(super) fn report(&self, trials: &[Trial]) -> VariantReport {
        VariantReport {
            server: self.variant.server.to_owned(),
            variant: self.variant.label.to_owned(),
            tests: self.test.tests.to_owned(),
            sleep_ms: self.test.sleep_ms,
            connect: self.test.connect,
            tallies: tally(trials),
        }
    }
}
