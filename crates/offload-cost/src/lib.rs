//! The price of offloading: what one trip to the blocking pool and back costs on each runtime
//! the demo servers use.
//!
//! `/ok-blocking` frees the reactor by sending the sleep to a pool thread; `/ok-await` frees it
//! by awaiting the runtime's timer. Both keep `/ping` fast, so which one to pick comes down to
//! what each costs when there is nothing to wait for. The bench (`benches/offload.rs`) times,
//! on one reactor thread per runtime:
//!
//! - awaiting an already-ready future: the floor, what an `.await` costs at all;
//! - a zero-length timer: the cheapest trip through the runtime's timer;
//! - one no-op closure to the blocking pool and back, with the pool warm;
//! - 64 such offloads in flight at once, then all joined.
//!
//! This library holds what the bench and the report share: the plan of the run (which
//! runtimes, which cases, criterion's settings), the reading of criterion's
//! `estimates.json` files ([`estimates`]) and the Markdown report ([`report`]).
//! The `offload-report` binary turns a finished run into `results/offload-cost.md`.
//!
//! The same reading of criterion's files serves one more report: [`poll_cost`], the stall
//! detector's price per poll, from reactor-watch's own bench (`poll-cost-report`,
//! `results/poll-cost.md`).

use std::time::Duration;

pub mod estimates;
pub mod poll_cost;
pub mod report;

/// How many offloads the in-flight case starts before it awaits the first of them.
pub const IN_FLIGHT: usize = 64;

/// The runtimes under test, in the order of the table's rows.
///
/// Each one's [`id`](Runtime::id) is its criterion function name inside every case's group,
/// and so the directory criterion writes its estimates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Tokio,
    ActixWeb,
    AsyncStd,
    Smol,
    Compio,
    Ntex,
}

impl Runtime {
    pub const ALL: [Runtime; 6] = [
        Runtime::Tokio,
        Runtime::ActixWeb,
        Runtime::AsyncStd,
        Runtime::Smol,
        Runtime::Compio,
        Runtime::Ntex,
    ];

    /// The criterion function name, and the directory of its results.
    pub fn id(self) -> &'static str {
        match self {
            Runtime::Tokio => "tokio",
            Runtime::ActixWeb => "actix-web",
            Runtime::AsyncStd => "async-std",
            Runtime::Smol => "smol",
            Runtime::Compio => "compio",
            Runtime::Ntex => "ntex",
        }
    }

    /// The one reactor thread, set up the way the demo server sets it up with `--threads 1`.
    pub fn reactor(self) -> &'static str {
        match self {
            Runtime::Tokio => "tokio `current_thread` runtime",
            Runtime::ActixWeb => "actix-rt `System` (tokio `current_thread` + `LocalSet`)",
            Runtime::AsyncStd => "async-std global executor, `ASYNC_STD_THREAD_COUNT=1`",
            Runtime::Smol => "own `smol::Executor` run on one thread",
            Runtime::Compio => "compio `Runtime` (io_uring) on the bench thread",
            Runtime::Ntex => "ntex `System` (its io_uring runtime) on one thread",
        }
    }

    /// The call that sends a closure to the blocking pool.
    pub fn offload(self) -> &'static str {
        match self {
            Runtime::Tokio => "`tokio::task::spawn_blocking`",
            Runtime::ActixWeb => "`actix_web::web::block`",
            Runtime::AsyncStd => "`async_std::task::spawn_blocking`",
            Runtime::Smol => "`smol::unblock`",
            Runtime::Compio => "`compio::runtime::spawn_blocking`",
            Runtime::Ntex => "`ntex::rt::spawn_blocking`",
        }
    }

    /// The timer the zero-length case awaits.
    pub fn timer(self) -> &'static str {
        match self {
            Runtime::Tokio => "`tokio::time::sleep`",
            Runtime::ActixWeb => "`actix_web::rt::time::sleep`",
            Runtime::AsyncStd => "`async_std::task::sleep`",
            Runtime::Smol => "`smol::Timer::after`",
            Runtime::Compio => "`compio::time::sleep`",
            Runtime::Ntex => "`ntex::time::sleep`",
        }
    }
}

/// What one iteration of a benchmark does, in the order of the table's columns.
///
/// Each one's [`id`](Case::id) is a criterion group name, and so a directory of its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Await `std::future::ready`: no runtime involved at all.
    ReadyFuture,
    /// Await the runtime's timer with a zero duration.
    ZeroTimer,
    /// Send one no-op closure to the blocking pool and await its return.
    OneOffload,
    /// Start [`IN_FLIGHT`] offloads, then await them all.
    InFlight,
}

impl Case {
    pub const ALL: [Case; 4] = [
        Case::ReadyFuture,
        Case::ZeroTimer,
        Case::OneOffload,
        Case::InFlight,
    ];

    /// The criterion group name, and the directory of its results.
    pub fn id(self) -> &'static str {
        match self {
            Case::ReadyFuture => "ready-future",
            Case::ZeroTimer => "zero-timer",
            Case::OneOffload => "offload-1",
            Case::InFlight => "offload-64",
        }
    }

    /// The column head in the report.
    pub fn title(self) -> &'static str {
        match self {
            Case::ReadyFuture => "ready future",
            Case::ZeroTimer => "zero-length timer",
            Case::OneOffload => "1 offload",
            Case::InFlight => "64 in flight",
        }
    }

    /// How many offloads one iteration makes: the report divides by it for a per-offload
    /// figure. Zero where the case offloads nothing.
    pub fn offloads(self) -> usize {
        match self {
            Case::ReadyFuture | Case::ZeroTimer => 0,
            Case::OneOffload => 1,
            Case::InFlight => IN_FLIGHT,
        }
    }
}

/// criterion's settings for every benchmark (each case on each runtime), kept short so that
/// the whole run takes under a minute on 2 cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Run untimed first: this is also what warms the blocking pools up, so that the
    /// measured offloads find idle pool threads waiting.
    pub warm_up: Duration,
    /// Time spent collecting samples.
    pub measurement: Duration,
    /// Samples per benchmark; each is the mean over many iterations.
    pub sample_size: usize,
}

pub const SETTINGS: Settings = Settings {
    warm_up: Duration::from_millis(500),
    measurement: Duration::from_secs(1),
    sample_size: 50,
};
