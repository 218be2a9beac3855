//! At rest's command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::RestPlan;
use crate::experiments::flags::ServerArgs;

/// At rest: a lone /ping on each demo server (and, by default, the variants the stacks'
/// descriptions tag `rest`, which move the reactor to another thread or off it) at pauses of 0, 1, 5, 10 and 50 ms (both probes), and each server thread's wake-ups
/// per request
#[derive(Debug, clap::Args)]
pub struct RestArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// The pauses between pings, in ms, comma-separated
    #[arg(long, value_delimiter = ',', default_values_t = RestPlan::default().pauses_ms, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub pauses_ms: Vec<u64>,

    /// How long each probe runs at each pause in each round, in ms
    #[arg(long, default_value_t = RestPlan::default().probe_ms, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub probe_ms: u64,

    /// How many rounds of every target at every pause; each target's figures pool them
    #[arg(long, default_value_t = RestPlan::default().rounds, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    pub rounds: usize,

    /// Folder for REST.md and rest.json
    #[arg(long, default_value = "results/rest")]
    pub out: PathBuf,
}

impl RestArgs {
    pub fn plan(&self) -> RestPlan {
        RestPlan {
            pauses_ms: self.pauses_ms.clone(),
            probe_ms: self.probe_ms,
            rounds: self.rounds,
        }
    }
}
