//! The comparison's command line: the bare `bench-client`, with the original experiment's
//! parameters as its defaults.

use std::path::PathBuf;

use crate::experiments::flags::{ServerArgs, concurrency, labelled_url, sleep_ms, threads};
use burst_meter::burst::Connect;
use burst_meter::case::{Plan, defaults};
use burst_meter::fixtures::{DEFAULT_FILE_MB, FileCache};
use burst_meter::http::Endpoint;
use burst_meter::probe::ProbeChoice;
use burst_meter::target::{self, Target};
use burst_meter::work::WorkPath;

/// The comparison's arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ComparisonArgs {
    #[command(flatten)]
    pub spawn: ServerArgs,

    /// An external target, e.g. the original FastAPI app: LABEL=http://HOST:PORT (repeatable).
    /// It gets the sleep as ?ms=.
    #[arg(long = "url", value_name = "LABEL=URL", value_parser = labelled_url)]
    pub urls: Vec<(String, Endpoint)>,

    /// Work routes to run, comma-separated, in order
    #[arg(long, value_delimiter = ',', value_parser = WorkPath::parse, default_values_t = defaults::ROUTES)]
    pub routes: Vec<WorkPath>,

    /// Concurrent requests per burst
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = concurrency())]
    pub concurrency: usize,

    /// Sleep of each work request, in milliseconds
    #[arg(long, default_value_t = defaults::SLEEP_MS, value_parser = sleep_ms())]
    pub sleep_ms: u64,

    /// Pause of the pinger between an answer and the next ping; the open loop's interval
    #[arg(long, default_value_t = defaults::PING_EVERY_MS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub ping_every_ms: u64,

    /// Reactor threads of each spawned server, comma-separated: `1,2,4` runs every server at
    /// each count (the thread matrix)
    #[arg(long, value_delimiter = ',', default_values_t = [defaults::THREADS], value_parser = threads())]
    pub threads: Vec<usize>,

    /// The pingers beside each burst: the original's closed loop, an open loop that keeps its
    /// schedule and measures from it (correcting coordinated omission), or both
    #[arg(long, value_enum, default_value_t = defaults::PROBE)]
    pub probe: ProbeChoice,

    /// How each burst request gets its connection: opened as it is sent (the original), or
    /// all N opened and accepted by the server first, then the N requests written at once
    #[arg(long, value_enum, default_value_t = defaults::CONNECT)]
    pub connect: Connect,

    /// Size of the file the file routes (/bad-file, /ok-file-*) read, in MiB; the bench
    /// writes it, and the server's database, in a temporary folder it removes after
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_FILE_MB, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub file_mb: u64,

    /// Whether the page cache holds that file when a burst of the file routes starts: hot
    /// (read once before), or cold (dropped with posix_fadvise first)
    #[arg(long, value_enum, default_value_t = FileCache::Hot)]
    pub file_cache: FileCache,

    /// Start each spawned server as its variant NAME, at every --threads it runs at (e.g.
    /// multi-thread: tokio's multi_thread runtime, one worker at --threads 1); without
    /// --servers, the servers that have it; of those asked for, one without it is left out
    #[arg(long, value_name = "NAME", value_parser = variant_name)]
    pub variant: Option<String>,

    /// Folder for RESULTS.md and results.json
    #[arg(long, default_value = "results")]
    pub out: PathBuf,

    /// Also rewrite the results block of this Markdown file (the README); done only for the
    /// full default comparison, so that a partial run never stands in for it
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
}

impl ComparisonArgs {
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
            variant: self.variant.clone(),
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
        let folders = self.spawn.folders();
        // With a variant and no servers asked for: the servers that have it.
        let asked = match (&self.variant, self.spawn.servers.is_empty()) {
            (Some(variant), true) => (demo_contract::variant::every())
                .filter(|own| own.name == variant)
                .map(|own| own.server.to_owned())
                .collect(),
            _ => self.spawn.servers.clone(),
        };
        let (targets, mut notes) = target::for_comparison(&asked, &folders, externals.collect());
        let Some(variant) = &self.variant else {
            return (targets, notes);
        };
        let (targets, left_out) = target::as_variants(targets, variant, &folders.bin_dir);
        notes.extend(left_out);
        (targets, notes)
    }
}

/// A variant of some server, any thread count allowed: one the comparison can run.
fn variant_name(name: &str) -> Result<String, String> {
    let any_threads = demo_contract::variant::every().filter(|v| v.any_threads);
    let names: Vec<&str> = any_threads.map(|variant| variant.name).collect();
    if names.contains(&name) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "{name:?} is no variant the comparison can run; choose from {}",
            names.join(", ")
        ))
    }
}
