//! tokio's own answers' command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::{TokioPlan, defaults};
use crate::experiments::flags::{ServerArgs, sleep_ms, threads};

/// tokio's own answers: on the stacks that serve tokio's own routes, /ok-block-in-place and
/// /join-block-in-place on current_thread (a 500 each); the timer joined beside a sleep under
/// block_in_place against spawn_blocking, at 2 workers; and the task spawned just before a
/// block (/bad-after-spawn) on the stack whose description has the LIFO slot off, built with
/// --cfg tokio_unstable, stock against that variant, at each worker count
#[derive(Debug, clap::Args)]
pub struct TokioArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Requests per route and setting, one at a time
    #[arg(long, default_value_t = defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub trials: usize,

    /// Sleep of each request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Worker counts of the LIFO slot's trials, comma-separated
    #[arg(long, value_delimiter = ',', default_values_t = defaults::WORKERS, value_parser = threads())]
    pub workers: Vec<usize>,

    /// Folder for TOKIO.md and tokio.json
    #[arg(long, default_value = "results/tokio")]
    pub out: PathBuf,
}

impl TokioArgs {
    pub fn plan(&self) -> TokioPlan {
        TokioPlan {
            trials: self.trials,
            sleep_ms: self.sleep_ms,
            join_workers: defaults::JOIN_WORKERS,
            workers: self.workers.clone(),
            server: self.spawn.options(),
        }
    }
}
