//! The flags several experiments share: which servers to spawn and where they are, and the
//! parsers of the values every experiment bounds alike (concurrency, threads, a sleep).

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use demo_contract::MAX_SLEEP_MS;

use burst_meter::http::Endpoint;
use burst_meter::session::ServerOptions;
use burst_meter::target::{self, Folders, Target};

/// Which servers to spawn, and where to find them.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Servers to spawn, comma-separated: the workspace's stacks and the FastAPI reference
    /// targets by name, `all`, or `runs-in:TAG`, the stacks with a variant that the
    /// experiment TAG starts (their stack.toml says) [default: all of them, unless --url is
    /// given (the sweep: the stacks alone); the FastAPI ones only where their venv is set up]
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

/// Concurrent requests: 1 to 100,000.
pub fn concurrency() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(1..=100_000)
}

/// Reactor threads: 1 to 256.
pub fn threads() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(1..=256)
}

/// A sleep, as the servers' `?ms=` takes it.
pub fn sleep_ms() -> RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=MAX_SLEEP_MS)
}

/// A server the client can spawn, or `all`.
fn server_name(name: &str) -> Result<String, String> {
    let all = target::all_servers();
    let tagged = name.strip_prefix(target::RUNS_IN);
    let known_tag = tagged.is_some_and(|tag| demo_contract::variant::runs_in::ALL.contains(&tag));
    if all.contains(&name) || name == target::ALL || known_tag {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "unknown server {name:?}; the servers are {}, or {}TAG with TAG one of {}",
            all.join(", "),
            target::RUNS_IN,
            demo_contract::variant::runs_in::ALL.join(", ")
        ))
    }
}

/// `LABEL=URL`: an external target.
pub fn labelled_url(value: &str) -> Result<(String, Endpoint), String> {
    let (label, url) = value
        .split_once('=')
        .filter(|(label, _)| !label.is_empty())
        .ok_or_else(|| format!("{value:?} is not LABEL=URL, e.g. fastapi=http://127.0.0.1:8000"))?;
    let endpoint = Endpoint::parse(url).map_err(|error| error.to_string())?;
    Ok((label.to_owned(), endpoint))
}
