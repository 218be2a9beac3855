//! The command line: what to run, parsed and checked before anything starts.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::RangedU64ValueParser;
use demo_contract::MAX_SLEEP_MS;

use crate::bench::{self, HEAD_START, Plan};
use crate::burst::Connect;
use crate::http::Endpoint;
use crate::probe::ProbeChoice;
use crate::rest::RestPlan;
use crate::sweep::{self, SweepPlan};
use crate::target::{self, REFERENCES, SERVERS, Target};
use crate::work::WorkPath;

/// Reproduces, on five Rust async stacks at once, the FastAPI experiment in which one
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
    /// Servers to spawn, comma-separated: the five demo servers and the FastAPI reference
    /// targets (fastapi-asyncio, fastapi-uvloop), or `all` [default: all of them, unless
    /// --url is given (the sweep: the five demo servers); the FastAPI ones only where their
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

/// The `--servers` value that names every server.
const ALL: &str = "all";

/// Every server the client can spawn: the demo servers, then the reference targets.
pub fn all_servers() -> Vec<&'static str> {
    SERVERS.into_iter().chain(REFERENCES).collect()
}

impl ServerArgs {
    /// The servers named, or `defaults` if none were, with a note for each default left
    /// out: a reference target whose venv is not set up (the Rust comparison never fails
    /// for want of Python). A named server that is missing is still a target: it fails at
    /// its turn, by name, and the others run.
    pub fn targets(&self, defaults: &[&str]) -> (Vec<Target>, Vec<String>) {
        let every = all_servers();
        let named = !self.servers.is_empty() && self.servers != [ALL];
        let names: Vec<&str> = match self.servers.as_slice() {
            [] => defaults.to_vec(),
            [all] if all == ALL => every,
            servers => servers.iter().map(String::as_str).collect(),
        };
        let bin_dir = self.bin_dir.clone().unwrap_or_else(target::default_bin_dir);
        let reference_dir =
            (self.reference_dir.clone()).unwrap_or_else(target::default_reference_dir);
        let mut targets = Vec::new();
        let mut notes = Vec::new();
        for name in names {
            if !REFERENCES.contains(&name) {
                targets.push(Target::server(name, &bin_dir));
                continue;
            }
            let python = target::reference_python(&reference_dir);
            if named || python.is_file() {
                targets.push(Target::reference(name, &reference_dir));
            } else {
                notes.push(format!(
                    "{name}: left out, no {} (reference/fastapi/setup.sh makes it)",
                    python.display()
                ));
            }
        }
        (targets, notes)
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
    /// Redraws a comparison's RESULTS.md and plots from its results.json, measuring nothing:
    /// for a change of format or figure, not of figures
    Redraw(RedrawArgs),
}

/// `bench-client redraw`.
#[derive(Debug, clap::Args)]
pub struct RedrawArgs {
    /// Folders holding a results.json, e.g. results results/threads
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

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
        }
    }

    /// Whether this is the full default comparison: every server, the original's parameters.
    pub fn is_full_comparison(&self) -> bool {
        self.urls.is_empty() && self.spawn.servers.is_empty() && self.plan() == Plan::default()
    }

    /// The targets, spawned servers first, and a note for each default one left out.
    pub fn targets(&self) -> (Vec<Target>, Vec<String>) {
        let defaults = if self.urls.is_empty() {
            all_servers()
        } else {
            Vec::new()
        };
        let (mut targets, notes) = self.spawn.targets(&defaults);
        targets.extend(self.urls.iter().map(|(label, endpoint)| Target::External {
            label: label.clone(),
            endpoint: endpoint.clone(),
        }));
        (targets, notes)
    }
}

/// The long help: the experiment in a paragraph, with the protocol's own numbers.
fn long_about() -> String {
    format!(
        "Reproduces, on five Rust async stacks at once, the FastAPI experiment in which one \
         handler that blocks the reactor stalls every other request.\n\n\
         For each target, and for each work route in turn (/bad: std::thread::sleep on the \
         reactor; /ok-blocking: the same sleep on the blocking pool; /ok-await: the async \
         timer), a pinger sends GET /ping on one keep-alive connection every --ping-every-ms, \
         and after a {} ms head start --concurrency requests of the route are fired at once, \
         each on its own connection. The burst's wall time says whether the sleeps ran one \
         after another (serialised) or side by side (concurrent); the pinger's latencies say \
         what every other client of that server saw meanwhile.\n\n\
         Without --servers or --url it runs the full comparison of the five demo servers \
         (found beside this binary) and writes RESULTS.md and results.json into --out.",
        HEAD_START.as_millis()
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
    let all = all_servers();
    if all.contains(&name) || name == ALL {
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
mod tests {
    use super::*;
    use demo_contract::Route;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_reproduce_the_original_experiment() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.plan(), Plan::default());
        assert!(cli.spawn.servers.is_empty() && cli.urls.is_empty() && cli.command.is_none());
        assert_eq!(cli.out, PathBuf::from("results"));
        assert!(cli.is_full_comparison());
        assert!(!parse(&["-n", "3"]).unwrap().is_full_comparison());
        assert!(
            !parse(&["--servers", "demo-axum"])
                .unwrap()
                .is_full_comparison()
        );
    }

    #[test]
    fn subsets_and_urls_are_read() {
        let cli = parse(&[
            "--servers",
            "demo-axum,demo-hyper-smol",
            "--url",
            "fastapi=http://127.0.0.1:8000",
            "--routes",
            "/bad,/ok-def",
            "-n",
            "3",
            "--sleep-ms",
            "20",
            "--ping-every-ms",
            "5",
        ])
        .unwrap();
        assert_eq!(cli.spawn.servers, ["demo-axum", "demo-hyper-smol"]);
        assert_eq!(cli.urls[0].0, "fastapi");
        assert_eq!(cli.urls[0].1.port, 8000);
        assert_eq!(
            cli.routes
                .iter()
                .map(|r| (r.route(), r.path()))
                .collect::<Vec<_>>(),
            [(Route::Bad, "/bad"), (Route::OkBlocking, "/ok-def")],
            "an alias is sent as given"
        );
        assert_eq!(
            (cli.concurrency, cli.sleep_ms, cli.ping_every_ms),
            (3, 20, 5)
        );
    }

    #[test]
    fn bad_flags_are_usage_errors_that_say_what_is_wrong() {
        for (args, says) in [
            (&["--concurrency", "0"][..], "0"),
            (&["--concurrency", "banana"], "banana"),
            (&["--servers", "demo-rocket"], "demo-axum, demo-actix"),
            (&["--url", "http://127.0.0.1:1"], "LABEL=URL"),
            (&["--url", "x=https://example"], "http://"),
            (&["--routes", "/ping"], "not a work route"),
            (&["--sleep-ms", "10001"], "10001"),
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{args:?}");
            assert!(error.to_string().contains(says), "{args:?}: {error}");
        }
    }

    #[test]
    fn the_sweep_reads_its_lists() {
        let cli = parse(&["sweep"]).unwrap();
        let Some(Command::Sweep(sweep)) = cli.command else {
            panic!("a sweep")
        };
        assert_eq!(sweep.plan(), SweepPlan::default());
        assert_eq!(sweep.out, PathBuf::from("results/sweep"));
        let cli = parse(&[
            "sweep",
            "-n",
            "1,50,5000",
            "--routes",
            "/ok-await",
            "--servers",
            "demo-actix",
            "--threads",
            "2",
        ])
        .unwrap();
        let Some(Command::Sweep(sweep)) = cli.command else {
            panic!("a sweep")
        };
        assert_eq!(sweep.plan().concurrency, [1, 50, 5000]);
        assert_eq!(sweep.plan().routes, [WorkPath::canonical(Route::OkAwait)]);
        assert_eq!(sweep.plan().threads, 2);
        assert_eq!(sweep.spawn.targets(&SERVERS).0.len(), 1);
    }

    #[test]
    fn the_sweep_refuses_bad_lists() {
        for args in [
            &["sweep", "-n", "1,0"][..],
            &["sweep", "-n", "1,x"],
            &["sweep", "-n", ""],
            &["sweep", "--routes", "/ping"],
            &["-n", "3", "sweep"],
        ] {
            assert_eq!(parse(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn the_thread_matrix_is_a_list() {
        assert_eq!(
            parse(&["--threads", "1,2,4"]).unwrap().plan().threads,
            [1, 2, 4]
        );
        assert_eq!(parse(&["--threads", "1,0"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn all_names_every_server() {
        let cli = parse(&["sweep", "--servers", "all"]).unwrap();
        let Some(Command::Sweep(sweep)) = cli.command else {
            panic!("a sweep")
        };
        let (targets, notes) = sweep.spawn.targets(&SERVERS);
        let names: Vec<&str> = targets.iter().map(Target::label).collect();
        assert_eq!(
            names.len() + notes.len(),
            all_servers().len(),
            "{names:?} {notes:?}"
        );
        assert_eq!(names[..SERVERS.len()], SERVERS);
    }

    #[test]
    fn a_url_alone_spawns_nothing() {
        let cli = parse(&["--url", "x=http://127.0.0.1:9"]).unwrap();
        let (targets, _) = cli.targets();
        assert_eq!(targets.len(), 1);
        assert!(matches!(&targets[0], Target::External { label, .. } if label == "x"));
    }
}
