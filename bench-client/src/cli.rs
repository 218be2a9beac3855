//! The command line: what to run, parsed and checked before anything starts.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::RangedU64ValueParser;
use demo_contract::MAX_SLEEP_MS;

use crate::arrival::{self, ArrivalPlan, Point};
use crate::bench::{self, HEAD_START, Plan};
use crate::burst::Connect;
use crate::detectors::{self, DetectorsPlan};
use crate::fixtures::{DEFAULT_FILE_MB, FileCache};
use crate::http::Endpoint;
use crate::probe::ProbeChoice;
use crate::race::{self, RacePlan};
use crate::rest::RestPlan;
use crate::sweep::{self, SweepPlan};
use crate::target::{self, Folders, SERVERS, Target};
use crate::work::WorkPath;

/// Reproduces, on seven Rust async stacks at once, the FastAPI experiment in which one
/// handler that blocks the reactor stalls every other request.
#[derive(Debug, Parser)]
#[command(name = "bench-client", version, long_about = long_about())]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub spawn: ServerArgs,

    /// An external target, e.g. the original FastAPI app: LABEL=http://HOST:PORT (repeatable).
    /// It gets the sleep as ?ms=.
    #[arg(long = "url", value_name = "LABEL=URL", value_parser = labelled_url)]
    pub urls: Vec<(String, Endpoint)>,

    /// Work routes to run, comma-separated, in order
    #[arg(long, value_delimiter = ',', value_parser = WorkPath::parse, default_values_t = bench::defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// Concurrent requests per burst
    #[arg(short = 'n', long, default_value_t = bench::defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each work request, in milliseconds
    #[arg(long, default_value_t = bench::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Pause of the pinger between an answer and the next ping; the open loop's interval
    #[arg(long, default_value_t = bench::defaults::PING_EVERY_MS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub ping_every_ms: u64,

    /// Reactor threads of each spawned server, comma-separated: `1,2,4` runs every server at
    /// each count (the thread matrix)
    #[arg(long, value_delimiter = ',', default_values_t = [bench::defaults::THREADS], value_parser = threads())]
    pub threads: Vec<usize>,

    /// The pingers beside each burst: the original's closed loop, an open loop that keeps its
    /// schedule and measures from it (correcting coordinated omission), or both
    #[arg(long, value_enum, default_value_t = bench::defaults::PROBE)]
    pub probe: ProbeChoice,

    /// How each burst request gets its connection: opened as it is sent (the original), or
    /// all N opened and accepted by the server first, then the N requests written at once
    #[arg(long, value_enum, default_value_t = bench::defaults::CONNECT)]
    pub connect: Connect,

    /// Size of the file the file routes (/bad-file, /ok-file-*) read, in MiB; the bench
    /// writes it, and the server's database, in a temporary folder it removes after
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_FILE_MB, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub file_mb: u64,

    /// Whether the page cache holds that file when a burst of the file routes starts: hot
    /// (read once before), or cold (dropped with posix_fadvise first)
    #[arg(long, value_enum, default_value_t = FileCache::Hot)]
    pub file_cache: FileCache,

    /// Folder for RESULTS.md and results.json
    #[arg(long, default_value = "results")]
    pub out: PathBuf,

    /// Also rewrite the results block of this Markdown file (the README); done only for the
    /// full default comparison, so that a partial run never stands in for it
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
}

/// Which servers to spawn, and where to find them.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Servers to spawn, comma-separated: the seven demo servers and the FastAPI reference
    /// targets (fastapi-asyncio, fastapi-uvloop), or `all` [default: all of them, unless
    /// --url is given (the sweep: the seven demo servers); the FastAPI ones only where their
    /// venv is set up]
    #[arg(long, value_delimiter = ',', value_parser = server_name)]
    pub servers: Vec<String>,

    /// Folder of the server binaries [default: the folder of this binary]
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,

    /// Folder of the FastAPI reference app and its .venv [default: reference/fastapi in this
    /// repository]
    #[arg(long, value_name = "DIR")]
    pub reference_dir: Option<PathBuf>,

    /// The spawned servers' blocking pool size (their --blocking-threads) [default: each
    /// runtime's own]
    #[arg(long, value_name = "K", value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub blocking_threads: Option<usize>,

    /// The spawned servers' stall threshold in ms, 0 = detector off (their --stall-ms)
    /// [default: the servers' own]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub stall_ms: Option<u64>,
}

impl ServerArgs {
    /// The folders the servers are found in, as given or by default.
    pub fn folders(&self) -> Folders {
        Folders::or_default(self.bin_dir.clone(), self.reference_dir.clone())
    }

    /// The servers named, or `defaults` if none were, and a note for each default left out:
    /// see [`target::choose`].
    pub fn targets(&self, defaults: &[&str]) -> (Vec<Target>, Vec<String>) {
        target::choose(&self.servers, defaults, &self.folders())
    }
}

/// What else the bench client can do.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// The concurrency sweep: each work route at each N on each server (no pinger), with a
    /// table and an SVG plot (wall time against N, log axes) per route
    Sweep(SweepArgs),
    /// At rest: a lone /ping on each demo server (and, by default, the variants of
    /// demo-hyper-tokio and demo-hyper-smol that move the reactor to another thread or off
    /// it) at pauses of 0, 1, 5, 10 and 50 ms (both probes), and each server thread's wake-ups
    /// per request
    Rest(RestArgs),
    /// The health check's race: the /bad case repeated --trials times per server and connect
    /// mode, each trial on fresh connections, counting in how many the original's pinger got
    /// in between every sleep, got in somewhere, or waited behind every queued request; then
    /// one ping sent at each of --points, --arrival-trials times, placed among the burst by
    /// the server's own record of events; then, on the servers that have one, each variant
    /// that tests a mechanism against its stock server
    Race(RaceArgs),
    /// Catching it, side by side: each way of catching a blocked reactor (reactor-watch,
    /// tokio-metrics' TaskMonitor, asyncio's and uvloop's debug mode, pyleak), each on the
    /// stacks it supports, on one workload (/ok-await and /ok-blocking for false alarms,
    /// /bad, /bad-cpu, then one request holding the thread, --held-trials times), read from
    /// what it prints on the server's stderr
    Detectors(DetectorsArgs),
    /// Redraws a comparison's RESULTS.md and plots from its results.json, measuring nothing:
    /// for a change of format or figure, not of figures
    Redraw(RedrawArgs),
    /// The main job: every experiment whose results are committed, in order, into results/
    /// (and README.md's block), each one's duration recorded in results/main-job.md, where
    /// each one's command to run it alone is listed too. Run from the repository's root
    /// (scripts/run.sh does, after building)
    All,
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
            ping_every_ms: bench::defaults::PING_EVERY_MS,
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
        }
    }
}

/// `bench-client redraw`.
#[derive(Debug, clap::Args)]
pub struct RedrawArgs {
    /// Folders holding a results.json, e.g. results results/threads
    #[arg(value_name = "DIR", required_unless_present = "pages")]
    pub dirs: Vec<PathBuf>,

    /// Also rewrite every figures block of README.md and docs/*.md from the results files
    /// they name (run from the repository's root)
    #[arg(long)]
    pub pages: bool,

    /// Also rewrite this file's results block (README.md) from the first folder's results, if
    /// they are a complete run of the full default comparison
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
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
            blocking_threads: self.spawn.blocking_threads,
            stall_ms: self.spawn.stall_ms,
        }
    }
}

impl Cli {
    pub fn plan(&self) -> Plan {
        Plan {
            routes: self.routes.clone(),
            concurrency: self.concurrency,
            sleep_ms: self.sleep_ms,
            ping_every_ms: self.ping_every_ms,
            threads: self.threads.clone(),
            probe: self.probe,
            connect: self.connect,
            blocking_threads: self.spawn.blocking_threads,
            stall_ms: self.spawn.stall_ms,
            file_mb: self.file_mb,
            file_cache: self.file_cache,
        }
    }

    /// Whether this is the full default comparison: every server, the original's parameters.
    pub fn is_full_comparison(&self) -> bool {
        self.urls.is_empty() && self.spawn.servers.is_empty() && self.plan() == Plan::default()
    }

    /// The targets, spawned servers first, and a note for each default one left out: see
    /// [`target::for_comparison`].
    pub fn targets(&self) -> (Vec<Target>, Vec<String>) {
        let externals = self.urls.iter().map(|(label, endpoint)| Target::External {
            label: label.clone(),
            endpoint: endpoint.clone(),
        });
        target::for_comparison(
            &self.spawn.servers,
            &self.spawn.folders(),
            externals.collect(),
        )
    }
}

/// The long help: the experiment in a paragraph, with the protocol's own numbers.
fn long_about() -> String {
    format!(
        "Reproduces, on {} Rust async stacks at once, the FastAPI experiment in which one \
         handler that blocks the reactor stalls every other request.\n\n\
         For each target, and for each work route in turn (/bad: std::thread::sleep on the \
         reactor; /ok-blocking: the same sleep on the blocking pool; /ok-await: the async \
         timer), a pinger sends GET /ping on one keep-alive connection every --ping-every-ms, \
         and after a {} ms head start --concurrency requests of the route are fired at once, \
         each on its own connection. The burst's wall time says whether the sleeps ran one \
         after another (serialised) or side by side (concurrent); the pinger's latencies say \
         what every other client of that server saw meanwhile.\n\n\
         Without --servers or --url it runs the full comparison of the {} demo servers \
         (found beside this binary) and writes RESULTS.md and results.json into --out.",
        SERVERS.len(),
        HEAD_START.as_millis(),
        SERVERS.len(),
    )
}

fn concurrency() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(1..=100_000)
}

fn threads() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(1..=256)
}

fn sleep_ms() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=MAX_SLEEP_MS)
}

fn server_name(name: &str) -> Result<String, String> {
    let all = target::all_servers();
    if all.contains(&name) || name == target::ALL {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "unknown server {name:?}; the servers are {}",
            all.join(", ")
        ))
    }
}

fn labelled_url(value: &str) -> Result<(String, Endpoint), String> {
    let (label, url) = value
        .split_once('=')
        .filter(|(label, _)| !label.is_empty())
        .ok_or_else(|| format!("{value:?} is not LABEL=URL, e.g. fastapi=http://127.0.0.1:8000"))?;
    Ok((label.to_owned(), Endpoint::parse(url)?))
}

#[cfg(test)]
mod tests;
