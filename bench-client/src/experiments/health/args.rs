//! The health experiment's command line.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::{HealthPlan, defaults};
use crate::experiments::flags::{ServerArgs, concurrency, sleep_ms};
use burst_meter::work::WorkPath;

/// The health check under a block: on each Rust stack, at one reactor thread, with
/// --stall-ms 100 and --health-port 0, each route (/bad, /ok-blocking, /ok-await) kept
/// busy for a window by -n workers while two probes run as a kubelet sends them (one GET
/// every second, a 1 s timeout, a new connection each): the stock /ping through the
/// reactor, and reactor-watch's /health from its own thread; then what each costs at rest
#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Routes under load, comma-separated, each in turn: the sleeps /bad, /ok-blocking,
    /// /ok-await
    #[arg(long, value_delimiter = ',', value_parser = sleep_route, default_values_t = defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// The load's workers, each sending again as its answer comes
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each load request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// How long the workers send again, in milliseconds; their last requests are answered after
    #[arg(long, default_value_t = defaults::WINDOW_MS, value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub window_ms: u64,

    /// Windows per route, each with its probes at another point of a sleep
    #[arg(long, default_value_t = defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=20))]
    pub trials: usize,

    /// How long the servers' health check fails after a stall ends (their
    /// --health-period-ms); 0: only while a poll is past the limit
    #[arg(long, value_name = "MS", default_value_t = defaults::PROBE_EVERY_MS, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub health_period_ms: u64,

    /// Sequential requests to each endpoint at rest (after a warm-up of a tenth as many)
    #[arg(long, default_value_t = defaults::REST_REQUESTS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub rest_requests: usize,

    /// Folder for HEALTH.md and health.json
    #[arg(long, default_value = "results/health")]
    pub out: PathBuf,
}

impl HealthArgs {
    /// The plan; the probes are a kubelet's, the limit the stall detector's default.
    pub fn plan(&self) -> HealthPlan {
        HealthPlan {
            routes: self.routes.clone(),
            concurrency: self.concurrency,
            sleep_ms: self.sleep_ms,
            stall_ms: self.spawn.stall_ms.unwrap_or(defaults::STALL_MS),
            blocking_threads: self.spawn.blocking_threads,
            window_ms: self.window_ms,
            trials: self.trials,
            health_period_ms: self.health_period_ms,
            rest_requests: self.rest_requests,
            rest_warm_up: self.rest_requests.div_ceil(10),
            ..HealthPlan::default()
        }
    }
}

/// One of the three sleeps: the load of this experiment needs no fixture.
fn sleep_route(path: &str) -> Result<WorkPath, String> {
    let route = WorkPath::parse(path).map_err(|error| error.to_string())?;
    match WorkPath::WORK
        .iter()
        .any(|work| work.route() == route.route())
    {
        true => Ok(route),
        false => Err(format!("{path:?}: choose /bad, /ok-blocking or /ok-await")),
    }
}
