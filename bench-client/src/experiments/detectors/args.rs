//! The detectors experiment's command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::{DetectorsPlan, defaults};
use crate::experiments::flags::{ServerArgs, concurrency, sleep_ms};

/// Catching it, side by side: each way of catching a blocked reactor (reactor-watch,
/// tokio-metrics' TaskMonitor, tokio's poll hooks, tokio-console, asyncio's and uvloop's
/// debug mode, pyleak), each on the stacks it supports, on one workload (/ok-await and
/// /ok-blocking for false alarms, /bad, /bad-cpu, then one request holding the thread,
/// --held-trials times), read from what it prints on the server's stderr
#[derive(Debug, clap::Args)]
pub struct DetectorsArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Concurrent requests of each step but the held one
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each /ok-await, /ok-blocking and /bad request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// CPU work of each /bad-cpu request, in milliseconds
    #[arg(long, default_value_t = defaults::CPU_MS, value_parser = sleep_ms())]
    pub cpu_ms: u64,

    /// How long the held request holds its reactor thread, in milliseconds
    #[arg(long, default_value_t = defaults::HELD_MS, value_parser = sleep_ms())]
    pub held_ms: u64,

    /// How many times the held request is sent, one after another
    #[arg(long, default_value_t = defaults::HELD_TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    pub held_trials: usize,

    /// Rounds of the cost's burst (/ok-await at --cost-concurrency, with the closed-loop
    /// ping) on each detector and on each stack without one
    #[arg(long, default_value_t = defaults::COST_ROUNDS, value_parser = RangedU64ValueParser::<usize>::new().range(0..=100))]
    pub cost_rounds: usize,

    /// Concurrent /ok-await requests of each cost round
    #[arg(long, default_value_t = defaults::COST_CONCURRENCY, value_parser = concurrency())]
    pub cost_concurrency: usize,

    /// Folder for DETECTORS.md and detectors.json
    #[arg(long, default_value = "results/detectors")]
    pub out: PathBuf,
}

impl DetectorsArgs {
    pub fn plan(&self) -> DetectorsPlan {
        DetectorsPlan {
            concurrency: self.concurrency,
            sleep_ms: self.sleep_ms,
            cpu_ms: self.cpu_ms,
            held_ms: self.held_ms,
            held_trials: self.held_trials,
            cost_rounds: self.cost_rounds,
            cost_concurrency: self.cost_concurrency,
            ..DetectorsPlan::default()
        }
    }
}
