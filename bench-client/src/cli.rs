//! The command line: what to run, parsed and checked before anything starts.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::RangedU64ValueParser;
use demo_contract::MAX_SLEEP_MS;

use crate::experiments::comparison::{self, HEAD_START, Plan};
use crate::measure::burst::Connect;
use crate::measure::fixtures::{DEFAULT_FILE_MB, FileCache};
use crate::measure::http::Endpoint;
use crate::measure::probe::ProbeChoice;
use crate::measure::session::ServerOptions;
use crate::measure::target::{self, Folders, SERVERS, Target};
use crate::measure::work::WorkPath;

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
    #[arg(long, value_delimiter = ',', value_parser = WorkPath::parse, default_values_t = comparison::defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// Concurrent requests per burst
    #[arg(short = 'n', long, default_value_t = comparison::defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each work request, in milliseconds
    #[arg(long, default_value_t = comparison::defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Pause of the pinger between an answer and the next ping; the open loop's interval
    #[arg(long, default_value_t = comparison::defaults::PING_EVERY_MS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub ping_every_ms: u64,

    /// Reactor threads of each spawned server, comma-separated: `1,2,4` runs every server at
    /// each count (the thread matrix)
    #[arg(long, value_delimiter = ',', default_values_t = [comparison::defaults::THREADS], value_parser = threads())]
    pub threads: Vec<usize>,

    /// The pingers beside each burst: the original's closed loop, an open loop that keeps its
    /// schedule and measures from it (correcting coordinated omission), or both
    #[arg(long, value_enum, default_value_t = comparison::defaults::PROBE)]
    pub probe: ProbeChoice,

    /// How each burst request gets its connection: opened as it is sent (the original), or
    /// all N opened and accepted by the server first, then the N requests written at once
    #[arg(long, value_enum, default_value_t = comparison::defaults::CONNECT)]
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
    /// What the flags change of the spawned servers' defaults.
    pub fn options(&self) -> ServerOptions {
        ServerOptions {
            blocking_threads: self.blocking_threads,
            stall_ms: self.stall_ms,
        }
    }

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
    /// tokio-metrics' TaskMonitor, tokio's poll hooks, tokio-console, asyncio's and uvloop's
    /// debug mode, pyleak), each on the stacks it supports, on one workload (/ok-await and
    /// /ok-blocking for false alarms, /bad, /bad-cpu, then one request holding the thread,
    /// --held-trials times), read from what it prints on the server's stderr
    Detectors(DetectorsArgs),
    /// Where io_uring differs: on each io_uring server, stock and with each flip of the
    /// mechanism (crates/demo-contract/src/variant.rs), --trials bursts of /bad on
    /// connections already open, counting whether the answers came one per sleep or were held
    /// until the reactor was free; then, on some of them, a /ping written each of --leads-ms
    /// before the burst, counting whether it was served first (the server's record of events)
    /// and answered within a sleep
    Uring(UringArgs),
    /// The health check under a block: on each Rust stack, at one reactor thread, with
    /// --stall-ms 100 and --health-port 0, each route (/bad, /ok-blocking, /ok-await) kept
    /// busy for a window by -n workers while two probes run as a kubelet sends them (one GET
    /// every second, a 1 s timeout, a new connection each): the stock /ping through the
    /// reactor, and reactor-watch's /health from its own thread; then what each costs at rest
    Health(HealthArgs),
    /// Redraws tables, plots and the pages' figures from the committed records, measuring
    /// nothing: for a change of format or figure, not of figures (no folder: everything)
    Redraw(RedrawArgs),
    /// The main job: every experiment whose results are committed, in order, into results/
    /// (and README.md's block), each one's duration recorded in results/main-job.md, where
    /// each one's command to run it alone is listed too. Run from the repository's root
    /// (scripts/run.sh does, after building)
    All(AllArgs),
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
            server: self.spawn.options(),
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

mod subcommands;
#[cfg(test)]
mod tests;

pub use subcommands::{
    AllArgs, DetectorsArgs, HealthArgs, RaceArgs, RedrawArgs, RestArgs, SweepArgs, UringArgs,
};
