//! The bench client: drives every demo server identically and reports. The protocol it
//! follows is described in `docs/protocol.md`, the contract it relies on in
//! `docs/contract.md`.
//!
//! Three layers, each importing only from those below it:
//!
//! - the front: [`cli`], the command line; [`job`], the main job, every experiment's runs;
//!   [`stale`], which of them the code has changed since their results were written;
//!   [`redraw`], every view rewritten from the records; [`audit`], a results folder stood
//!   against the code and the pages' claims;
//! - [`experiments`]: one folder per experiment, with its command line, its plan, its run and
//!   its record, and the one list of them ([`experiments::ALL`]) that everything above reads:
//!   to read one experiment, open `src/experiments/<its name>`; to add one, add a folder and
//!   a line to that list;
//! - the measuring core, a crate of its own ([`burst_meter`]): targets, probes, the burst, the
//!   wire, CPU and kernel figures, statistics, the environment; the experiments, the tests of
//!   every server and the benches' reports measure with it.
//!
//! Beside them, the writers: [`report`] (the terminal, tables, findings, README block and
//! files) and [`plot`] (the SVG figures); [`progress`], the view of where a run is and when it
//! ends; [`stamps`], how an experiment's code stamp is made; and [`Error`], why a command
//! could not finish.

pub mod audit;
pub mod cli;
mod error;
pub mod experiments;
pub mod job;
pub mod plot;
pub mod progress;
pub mod redraw;
pub mod report;
pub mod stale;
pub mod stamps;

pub use error::Error;
