//! The main job: every run of every experiment of [`experiments::ALL`], each experiment's
//! runs as its own folder lists them ([`Experiment::JOB`](crate::experiments::Experiment)),
//! one after another under one progress view, each run's duration recorded in [`RECORD`].
//! `--stale` runs only those whose code changed since their results were written
//! ([`crate::stale::run`]).
//!
//! Each run is the command line that runs it alone (`scripts/run.sh ARGS`, or
//! `bench-client ARGS` with the binaries built), parsed by its experiment's own arguments:
//! what the job runs and what a reader types are the same thing.

use std::path::Path;

use crate::report::write_atomically;
use crate::stale;
use burst_meter::environment::Environment;

mod record;
pub mod runs;

pub use record::{floors, in_short, record};
pub use runs::{Done, RECORD, RECORD_STAMP, Run, main_job, run_each};

/// Runs the main job: every run, then its record, then the pages' figures (the README's
/// sentence on the job among them, copied from the record's "In short").
pub async fn run() -> Vec<Done> {
    let environment = Environment::with_stamp(RECORD_STAMP.to_owned());
    let done = run_each(&main_job()).await;
    let record = record(&environment, &done);
    if let Err(error) = write_atomically(Path::new(RECORD), record.as_bytes()) {
        eprintln!("bench-client: cannot write {RECORD}: {error}");
    }
    eprintln!("wrote {RECORD}");
    stale::refresh_pages(Path::new("."));
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_of_the_job_parses_as_its_command_line_does() {
        for run in main_job() {
            run.plan()
                .unwrap_or_else(|error| panic!("{}: {error}", run.name()));
            let line = run.command_line();
            if let Some(args) = line.strip_prefix("bench-client") {
                let argv = std::iter::once("bench-client").chain(args.split_whitespace());
                let parsed = crate::cli::parse_from(argv);
                assert!(
                    matches!(&parsed, Ok(crate::cli::Parsed::Experiment { entry, .. })
                        if entry.name() == run.experiment.name()),
                    "{line}: {parsed:?}"
                );
            }
        }
    }

    #[test]
    fn every_run_of_the_job_has_its_own_results() {
        let mut outs = Vec::new();
        for run in main_job() {
            let (_, out) = run.results();
            assert!(!outs.contains(&out), "{}: {}", run.name(), out.display());
            outs.push(out);
        }
    }
}
