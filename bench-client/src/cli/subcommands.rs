//! The subcommands' arguments, each turned into its experiment's plan.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use super::{ServerArgs, concurrency, sleep_ms, threads};
use crate::experiments::detectors::{self, DetectorsPlan};
use crate::experiments::health::{self, HealthPlan};
use crate::experiments::race::arrival::{self, ArrivalPlan, Point};
use crate::experiments::race::{self, RacePlan};
use crate::experiments::rest::RestPlan;
use crate::experiments::sweep::{self, SweepPlan};
use crate::experiments::uring::{self, UringPlan};
use crate::measure::burst::Connect;
use crate::measure::target;
use crate::measure::work::WorkPath;

/// `bench-client all`.
#[derive(Debug, clap::Args)]
pub struct AllArgs {
    /// Runs only the experiments whose results were measured by other code than this
    /// binary's (their recorded code stamp differs from the one it was built with), and says
    /// which and why; leaves results/main-job.md and README.md's sentence on the job as they
    /// are, since they tell of a whole run
    #[arg(long)]
    pub stale: bool,
}

/// `bench-client race`.
#[derive(Debug, clap::Args)]
pub struct RaceArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Trials per server and connect mode
    #[arg(long, default_value_t = race::defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub trials: usize,

    /// Sleep of each /bad request, in milliseconds
    /// Reactor threads of every server; a target that runs only at one (the FastAPI app) is
    /// left out at more, and so are the flips' variants. The trials with the ping's arrival
    /// controlled run at one
    #[arg(long, default_value_t = 1, value_parser = threads())]
    pub threads: usize,

    #[arg(long, default_value_t = race::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Concurrent /bad requests per trial
    #[arg(short = 'n', long, default_value_t = race::defaults::CONCURRENCY, value_parser = concurrency())]
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
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Point::ALL)]
    pub points: Vec<Point>,

    /// Leaves out the runs of the variants that change one mechanism each
    #[arg(long)]
    pub no_flips: bool,

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
            ping_every_ms: race::ping_every_ms(self.sleep_ms),
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

/// `bench-client uring`.
#[derive(Debug, clap::Args)]
pub struct UringArgs {
    /// The io_uring servers to run, comma-separated, each stock and with its flips
    #[arg(long, value_delimiter = ',', default_values_t = target::IO_URING_SERVERS.iter().map(|name| name.to_string()), value_parser = clap::builder::PossibleValuesParser::new(target::IO_URING_SERVERS.iter().copied()))]
    pub servers: Vec<String>,

    /// Folder of the server binaries [default: the folder of this binary]
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,

    /// Trials per setting, and per setting and lead
    #[arg(long, default_value_t = uring::defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub trials: usize,

    /// Sleep of each /bad request, in milliseconds
    #[arg(long, default_value_t = uring::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Concurrent /bad requests per trial
    #[arg(short = 'n', long, default_value_t = uring::defaults::CONCURRENCY, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub concurrency: usize,

    /// How long the ping leads the burst, in milliseconds, comma-separated; each in turn
    #[arg(long, value_delimiter = ',', default_values_t = uring::defaults::LEADS_MS, value_parser = lead_ms)]
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

/// `bench-client detectors`.
#[derive(Debug, clap::Args)]
pub struct DetectorsArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Concurrent requests of each step but the held one
    #[arg(short = 'n', long, default_value_t = detectors::defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each /ok-await, /ok-blocking and /bad request, in milliseconds
    #[arg(long, default_value_t = detectors::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// CPU work of each /bad-cpu request, in milliseconds
    #[arg(long, default_value_t = detectors::defaults::CPU_MS, value_parser = sleep_ms())]
    pub cpu_ms: u64,

    /// How long the held request holds its reactor thread, in milliseconds
    #[arg(long, default_value_t = detectors::defaults::HELD_MS, value_parser = sleep_ms())]
    pub held_ms: u64,

    /// How many times the held request is sent, one after another
    #[arg(long, default_value_t = detectors::defaults::HELD_TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    pub held_trials: usize,

    /// Rounds of the cost's burst (/ok-await at --cost-concurrency, with the closed-loop
    /// ping) on each detector and on each stack without one
    #[arg(long, default_value_t = detectors::defaults::COST_ROUNDS, value_parser = RangedU64ValueParser::<usize>::new().range(0..=100))]
    pub cost_rounds: usize,

    /// Concurrent /ok-await requests of each cost round
    #[arg(long, default_value_t = detectors::defaults::COST_CONCURRENCY, value_parser = concurrency())]
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

/// `bench-client redraw`.
#[derive(Debug, clap::Args)]
pub struct RedrawArgs {
    /// Folders holding a record (results.json, race.json, sweep.json, rest.json or
    /// detectors.json), e.g. results results/race; none: every folder under results/, the
    /// README's block and every page's figures (run from the repository's root)
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Also rewrite this file's results block (README.md) from the first folder's results, if
    /// they are a complete run of the full default comparison
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,

    /// Also rewrite every figures block of README.md and docs/*.md from the results files
    /// they copy (run from the repository's root)
    #[arg(long)]
    pub pages: bool,
}

impl RedrawArgs {
    /// What to redraw: the folders named, or everything.
    pub fn plan(&self) -> crate::report::redraw::Redraw {
        if self.dirs.is_empty() {
            return crate::report::redraw::Redraw::everything(std::path::Path::new("."));
        }
        crate::report::redraw::Redraw {
            dirs: self.dirs.clone(),
            readme: self.readme.clone(),
            pages: self.pages,
        }
    }
}

/// `bench-client rest`.
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

/// `bench-client sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Work routes to sweep, comma-separated
    #[arg(long, value_delimiter = ',', value_parser = WorkPath::parse, default_values_t = sweep::defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// The concurrency values, comma-separated
    #[arg(short = 'n', long, value_delimiter = ',', default_values_t = sweep::defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: Vec<usize>,

    /// Sleep of each work request, in milliseconds (short: /bad at N = 1000 takes N sleeps)
    #[arg(long, default_value_t = sweep::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Reactor threads of each server
    #[arg(long, default_value_t = sweep::defaults::THREADS, value_parser = threads())]
    pub threads: usize,

    /// How each burst request gets its connection (see the comparison's --connect)
    #[arg(long, value_enum, default_value_t = sweep::defaults::CONNECT)]
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

/// `bench-client health`.
#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// Routes under load, comma-separated, each in turn: the sleeps /bad, /ok-blocking,
    /// /ok-await
    #[arg(long, value_delimiter = ',', value_parser = sleep_route, default_values_t = health::defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// The load's workers, each sending again as its answer comes
    #[arg(short = 'n', long, default_value_t = health::defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each load request, in milliseconds
    #[arg(long, default_value_t = health::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// How long the workers send again, in milliseconds; their last requests are answered after
    #[arg(long, default_value_t = health::defaults::WINDOW_MS, value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub window_ms: u64,

    /// Windows per route, each with its probes at another point of a sleep
    #[arg(long, default_value_t = health::defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=20))]
    pub trials: usize,

    /// How long the servers' health check fails after a stall ends (their
    /// --health-period-ms); 0: only while a poll is past the limit
    #[arg(long, value_name = "MS", default_value_t = health::defaults::PROBE_EVERY_MS, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub health_period_ms: u64,

    /// Sequential requests to each endpoint at rest (after a warm-up of a tenth as many)
    #[arg(long, default_value_t = health::defaults::REST_REQUESTS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
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
            stall_ms: self.spawn.stall_ms.unwrap_or(health::defaults::STALL_MS),
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
    let route = WorkPath::parse(path)?;
    match WorkPath::WORK
        .iter()
        .any(|work| work.route() == route.route())
    {
        true => Ok(route),
        false => Err(format!("{path:?}: choose /bad, /ok-blocking or /ok-await")),
    }
}
