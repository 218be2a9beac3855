//! The job's record, [`super::RECORD`], and its sentence in the README.

use std::fmt::Write as _;
use std::time::Duration;

use super::{Done, Run};
use crate::experiments::Ran;
use crate::progress;
use burst_meter::environment::Environment;

/// The job in one sentence: how long it took against its floor, and how many experiments
/// it ran: the section "In short" of [`RECORD`](super::RECORD), which the README copies.
pub fn in_short(done: &[Done]) -> String {
    let took: Duration = done.iter().map(|experiment| experiment.took).sum();
    let complete = done
        .iter()
        .filter(|experiment| experiment.complete())
        .count();
    let (minutes, seconds) = (took.as_secs() / 60, took.as_secs() % 60);
    let floor: Duration = done.iter().map(|experiment| experiment.floor).sum();
    let mut sentence = format!(
        "The main job took {minutes} min {seconds} s after the release build ({} × its \
         floor, what its plans take as the protocol's ideals place their sleeps): {} \
         experiments",
        ratio(took, floor),
        done.len()
    );
    if complete < done.len() {
        let _ = write!(
            sentence,
            " ({} of them with failures)",
            done.len() - complete
        );
    }
    sentence.push_str(
        ", each with its duration, its floor and the command that runs it alone in \
         [results/main-job.md](main-job.md).\n",
    );
    sentence
}

/// `runs` with their commands and floors, and the total: what `all --plan` prints. A run
/// whose arguments do not parse says why, and counts nothing.
pub fn floors(runs: &[Run]) -> String {
    let mut out = String::from("floor s  run\n");
    let mut total = Duration::ZERO;
    for run in runs {
        let floor = run.plan().map(|planned| planned.floor());
        let shown = match &floor {
            Ok(floor) => format!("{:>7.0}", floor.as_secs_f64()),
            Err(error) => format!("{:>7}  (does not parse: {error})", "-"),
        };
        total += floor.unwrap_or_default();
        let _ = writeln!(out, "{shown}  {}\n         {}", run.name(), run.rerun());
    }
    let _ = writeln!(out, "{:>7.0}  the whole job", total.as_secs_f64());
    out
}

/// The line that says how an experiment ended.
pub(super) fn ended_line(name: &str, took: Duration, outcome: &Result<Ran, String>) -> String {
    let took = progress::clock(took);
    match outcome {
        Ok(ran) if ran.failures == 0 => format!("done in {took}: {name}: wrote {}", ran.wrote),
        Ok(ran) => format!(
            "done in {took} with {} failed: {name}: wrote {}",
            ran.failures, ran.wrote
        ),
        Err(error) => format!("FAILED after {took}: {name}: {error}"),
    }
}

/// [`RECORD`]: the job in short, the environment, then each experiment with its command,
/// duration and floor.
pub fn record(environment: &Environment, done: &[Done]) -> String {
    let mut out = String::from("# The main job's run time\n\n");
    out.push_str(
        "Written by `bench-client all` (`scripts/run.sh`, after the release build); every \
         experiment can be run alone with its command (`scripts/run.sh` followed by the \
         arguments builds first).\n\n## In short\n\n",
    );
    out.push_str(&in_short(done));
    out.push_str("\n## Environment\n\n");
    out.push_str(&environment.to_markdown());
    out.push_str(
        "\n## Experiments\n\nEach run's floor is the time its plan takes with its sleeps as \
         the protocol's ideals place them (one after another on the reactor threads for a \
         route that holds them), its CPU work on the cores, each file read at the time its \
         case timed alone, its trials and fixed waits (a bench: its warm-up and measurement). \
         What a run takes beyond it is the servers' own time and the client's; a server that \
         departs from the ideals can take less. `bench-client all --plan` lists the floors \
         without running anything, each file read at the plan's assumed rate.\n\n\
         | experiment | command | code stamp | seconds | floor s | × floor | outcome |\n\
         |---|---|---|---:|---:|---:|---|\n",
    );
    for experiment in done {
        let outcome = match &experiment.outcome {
            _ if experiment.complete() => "complete".to_owned(),
            Ok(ran) => format!("{} failed", ran.failures),
            Err(error) => format!("not written: {error}"),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | `{}` | {} | {:.0} | {} | {outcome} |",
            experiment.name,
            experiment.command,
            experiment.stamp,
            experiment.took.as_secs(),
            experiment.floor.as_secs_f64(),
            ratio(experiment.took, experiment.floor),
        );
    }
    let total: Duration = done.iter().map(|experiment| experiment.took).sum();
    let floor: Duration = done.iter().map(|experiment| experiment.floor).sum();
    let _ = writeln!(
        out,
        "| **all** | | | **{}** | **{:.0}** | **{}** | |",
        total.as_secs(),
        floor.as_secs_f64(),
        ratio(total, floor)
    );
    out
}

/// `took` over `floor`, two decimals; `-` where the floor is zero.
pub fn ratio(took: Duration, floor: Duration) -> String {
    match floor.is_zero() {
        true => "-".to_owned(),
        false => format!("{:.2}", took.as_secs_f64() / floor.as_secs_f64()),
    }
}
