//! The sweep's command line.

use std::path::PathBuf;

use super::{SweepPlan, defaults};
use crate::experiments::flags::{ServerArgs, concurrency, sleep_ms, threads};
use burst_meter::burst::Connect;
use burst_meter::work::WorkPath;

/// The concurrency sweep: each work route at each N on each server (no pinger), with a
/// table and an SVG plot (wall time against N, log axes) per route
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Work routes to sweep, comma-separated
    #[arg(long, value_delimiter = ',', value_parser = WorkPath::parse, default_values_t = defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// The concurrency values, comma-separated
    #[arg(short = 'n', long, value_delimiter = ',', default_values_t = defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: Vec<usize>,

    /// Sleep of each work request, in milliseconds (short: /bad at N = 1000 takes N sleeps)
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Reactor threads of each server
    #[arg(long, default_value_t = defaults::THREADS, value_parser = threads())]
    pub threads: usize,

    /// How each burst request gets its connection (see the comparison's --connect)
    #[arg(long, value_enum, default_value_t = defaults::CONNECT)]
    pub connect: Connect,

    /// Folder for SWEEP.md, sweep.json and the plots
    #[arg(long, default_value = "results/sweep")]
    pub out: PathBuf,
}

impl SweepArgs {
    pub fn plan(&self) -> SweepPlan {
        SweepPlan {
            routes: self.routes.clone(),
            concurrency: self.concurrency.clone(),
            sleep_ms: self.sleep_ms,
            threads: self.threads,
            connect: self.connect,
            server: self.spawn.options(),
        }
    }
}
