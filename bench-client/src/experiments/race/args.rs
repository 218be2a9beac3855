//! The race's command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::arrival::{self, ArrivalPlan, PingAt};
use super::{RacePlan, defaults, ping_every_ms};
use crate::experiments::flags::{ServerArgs, concurrency, sleep_ms, threads};
use burst_meter::burst::Connect;

/// The health check's race: the /bad case repeated --trials times per server and connect
/// mode, each trial on fresh connections, counting in how many the original's pinger got
/// in between every sleep, got in somewhere, or waited behind every queued request; then
/// one ping sent at each of --points, --arrival-trials times, placed among the burst by
/// the server's own record of events; then, on the servers that have one, each variant
/// that tests a mechanism against its stock server
#[derive(Debug, clap::Args)]
pub struct RaceArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Trials per server and connect mode
    #[arg(long, default_value_t = defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub trials: usize,

    /// Reactor threads of every server; a target that runs only at one (the FastAPI app) is
    /// left out at more, and so are the variants. The trials with the ping's arrival
    /// controlled run at one
    #[arg(long, default_value_t = 1, value_parser = threads())]
    pub threads: usize,

    /// Sleep of each /bad request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Concurrent /bad requests per trial
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// The connect modes, comma-separated, each in turn (see the comparison's --connect)
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Connect::During, Connect::Before])]
    pub connect: Vec<Connect>,

    /// Trials per server and point of arrival; 0 leaves the arrival out
    #[arg(long, default_value_t = arrival::defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(0..=1000))]
    pub arrival_trials: usize,

    /// Sleep of each /bad request in the trials with the ping's arrival controlled
    #[arg(long, default_value_t = arrival::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub arrival_sleep_ms: u64,

    /// The points of arrival, comma-separated
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = PingAt::ALL)]
    pub points: Vec<PingAt>,

    /// Leaves out the tests of the variants that change one mechanism each
    #[arg(long)]
    pub no_variants: bool,

    /// Folder for RACE.md, race.json and the plot
    #[arg(long, default_value = "results/race")]
    pub out: PathBuf,
}

impl RaceArgs {
    pub fn plan(&self) -> RacePlan {
        RacePlan {
            trials: self.trials,
            threads: self.threads,
            sleep_ms: self.sleep_ms,
            concurrency: self.concurrency,
            ping_every_ms: ping_every_ms(self.sleep_ms),
            connects: self.connect.clone(),
            arrival: ArrivalPlan {
                trials: self.arrival_trials,
                sleep_ms: self.arrival_sleep_ms,
                concurrency: self.concurrency,
                points: self.points.clone(),
            },
        }
    }
}
