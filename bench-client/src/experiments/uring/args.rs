//! The io_uring experiment's command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::{UringPlan, defaults};
use crate::experiments::flags::sleep_ms;

/// Where io_uring differs: on each io_uring server, stock and as each variant that changes
/// the mechanism (--variant, crates/demo-contract/src/variant.rs), --trials bursts of /bad on
/// connections already open, counting whether the answers came one per sleep or were held
/// until the reactor was free; then, on some of them, a /ping written each of --leads-ms
/// before the burst, counting whether it was served first (the server's record of events)
/// and answered within a sleep
#[derive(Debug, clap::Args)]
pub struct UringArgs {
    /// The io_uring servers to run, comma-separated, each stock and as each of its variants
    #[arg(long, value_delimiter = ',', default_values_t = stacks::on(stacks::Driver::IoUring).iter().map(|name| name.to_string()), value_parser = clap::builder::PossibleValuesParser::new(stacks::on(stacks::Driver::IoUring).iter().copied()))]
    pub servers: Vec<String>,

    /// Folder of the server binaries [default: the folder of this binary]
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,

    /// Trials per setting, and per setting and lead
    #[arg(long, default_value_t = defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub trials: usize,

    /// Sleep of each /bad request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Concurrent /bad requests per trial
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub concurrency: usize,

    /// How long the ping leads the burst, in milliseconds, comma-separated; each in turn
    #[arg(long, value_delimiter = ',', default_values_t = defaults::LEADS_MS, value_parser = lead_ms)]
    pub leads_ms: Vec<f64>,

    /// Folder for URING.md and uring.json
    #[arg(long, default_value = "results/uring")]
    pub out: PathBuf,
}

impl UringArgs {
    pub fn plan(&self) -> UringPlan {
        UringPlan {
            trials: self.trials,
            sleep_ms: self.sleep_ms,
            concurrency: self.concurrency,
            leads_ms: self.leads_ms.clone(),
        }
    }
}

/// A lead of 0 to 1,000 ms.
fn lead_ms(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(ms) if (0.0..=1000.0).contains(&ms) => Ok(ms),
        _ => Err(format!("{text} is not a number of ms from 0 to 1000")),
    }
}
