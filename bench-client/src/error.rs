//! What can stop the bench client from finishing a command, typed: the library returns these,
//! the binary reports each once, at its edge. A server that fails to start or a request that
//! fails is no error here: it is measured, and recorded as a failure of its step.

use std::path::PathBuf;

use crate::plot::PlotError;
use crate::report::block::BlockError;

/// Why a report was left out of the README: only a complete run of the full default
/// comparison stands for it.
pub const ONLY_COMPLETE: &str = "only a complete run of the full default comparison goes there";

/// Why a command could not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A results file, a page or the job's record could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A record or a page could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A record did not parse as its experiment's.
    #[error("{}: {source}", path.display())]
    Record {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A folder `redraw` was given holds no experiment's record.
    #[error("no record in {} (one of {known})", dir.display())]
    NoRecord { dir: PathBuf, known: String },
    /// A figure could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A page's generated block could not be rewritten: its markers or its source are amiss.
    #[error("{}: {source}", page.display())]
    Page {
        page: PathBuf,
        #[source]
        source: BlockError,
    },
    /// The README's block may stand only for a complete run of the full default comparison.
    #[error("{}: stays as it was: {ONLY_COMPLETE}", page.display())]
    NotFull { page: PathBuf },
    /// A script of the repository could not start, or failed.
    #[error("{script}: {reason}")]
    Script { script: String, reason: String },
    /// A command line of the main job does not parse.
    #[error("bad command line: {0}")]
    CommandLine(#[from] clap::Error),
    /// The probe gave a route a verdict its `--fail-on` names: what it found, in words. Its
    /// results are written; the command exits with its own status ([`Error::exit_status`]).
    #[error("{0}")]
    FailedOn(String),
}

impl Error {
    /// The status the command exits with: the probe's own for a verdict `--fail-on` names,
    /// 1 for any other error.
    pub fn exit_status(&self) -> u8 {
        match self {
            Error::FailedOn(_) => crate::experiments::probe::FAILED_ON_STATUS,
            _ => 1,
        }
    }

    /// The error of writing `path`, for `map_err`.
    pub fn write(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Write { path, source }
    }

    /// The error of reading `path`, for `map_err`.
    pub fn read(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Read { path, source }
    }
}
