//! The bench client: drives every demo server identically and reports. The protocol it
//! follows is described in `docs/protocol.md`, the contract it relies on in
//! `docs/contract.md`.
//!
//! Three layers, each importing only from those below it:
//!
//! - the front: [`cli`], the command line; [`command`], one command run; [`job`], the main
//!   job, a list of experiments; [`stale`], which of them the code has changed since their
//!   results were written; [`progress`], the view of where a run is and when it ends;
//! - [`experiments`]: one module (or folder) per experiment, with its plan, its run and its
//!   record: to read one experiment, open `src/experiments/<its name>`;
//! - [`measure`]: the measuring core every experiment shares (targets, probes, the burst,
//!   the wire, CPU and kernel figures, statistics, the environment).
//!
//! Beside them, the writers: [`report`] (the terminal, tables, findings, README block and
//! files) and [`plot`] (the SVG figures); and [`stamps`], which source files each
//! experiment's code stamp covers.

pub mod cli;
pub mod command;
pub mod experiments;
pub mod job;
pub mod measure;
pub mod plot;
pub mod progress;
pub mod report;
pub mod stale;
pub mod stamps;
