//! A plan of cases: the original experiment's parameters, the defaults of the comparison's
//! command line.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::burst::Connect;
use crate::fixtures::{DEFAULT_FILE_MB, FileCache};
use crate::probe::ProbeChoice;
use crate::session::{ServerOptions, ServerSetup};
use crate::work::WorkPath;

/// The probes' head start before the burst: they are already waiting on the server when the
/// burst arrives.
pub const HEAD_START: Duration = Duration::from_millis(50);

/// The original experiment's parameters: the defaults of [`Plan`] and of the command line.
pub mod defaults {
    use crate::burst::Connect;
    use crate::probe::ProbeChoice;
    use crate::work::WorkPath;

    pub const ROUTES: [WorkPath; 3] = WorkPath::WORK;
    pub const CONCURRENCY: usize = 10;
    pub const SLEEP_MS: u64 = 500;
    pub const PING_EVERY_MS: u64 = 50;
    pub const THREADS: usize = 1;
    pub const PROBE: ProbeChoice = ProbeChoice::Both;
    pub const CONNECT: Connect = Connect::During;
}

/// What to run against each target. The defaults reproduce the original experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The work routes, in order.
    pub routes: Vec<WorkPath>,
    /// Concurrent requests per burst.
    pub concurrency: usize,
    pub sleep_ms: u64,
    pub ping_every_ms: u64,
    /// Reactor-thread counts: every spawned server runs the plan once at each.
    pub threads: Vec<usize>,
    /// Which probes run beside each burst.
    pub probe: ProbeChoice,
    /// How the burst's requests get their connections.
    #[serde(default)]
    pub connect: Connect,
    /// The spawned servers' settings, where not their defaults.
    #[serde(flatten)]
    pub server: ServerOptions,
    /// The size of the file the file routes read, in MiB.
    #[serde(default = "default_file_mb")]
    pub file_mb: u64,
    /// Whether the page cache holds that file when a burst of them starts.
    #[serde(default)]
    pub file_cache: FileCache,
    /// The variant every spawned server was started as (`--variant`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

fn default_file_mb() -> u64 {
    DEFAULT_FILE_MB
}

impl Plan {
    /// How the servers are started for this plan.
    pub fn setup(&self) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            options: self.server,
            ..ServerSetup::default()
        }
    }
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            routes: defaults::ROUTES.to_vec(),
            concurrency: defaults::CONCURRENCY,
            sleep_ms: defaults::SLEEP_MS,
            ping_every_ms: defaults::PING_EVERY_MS,
            threads: vec![defaults::THREADS],
            probe: defaults::PROBE,
            connect: defaults::CONNECT,
            server: ServerOptions::default(),
            file_mb: DEFAULT_FILE_MB,
            file_cache: FileCache::Hot,
            variant: None,
        }
    }
}
