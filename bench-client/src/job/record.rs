//! The job's record, [`super::RECORD`], and its sentence in the README.

use std::fmt::Write as _;
use std::time::Duration;

use super::Done;
use crate::experiments::Ran;
use crate::progress;
use burst_meter::environment::Environment;

/// The README's sentence on the job: how long it took, and where the record is.
pub fn readme_sentence(done: &[Done]) -> String {
    let took: Duration = done.iter().map(|experiment| experiment.took).sum();
    let complete = done
        .iter()
        .filter(|experiment| experiment.complete())
        .count();
    let (minutes, seconds) = (took.as_secs() / 60, took.as_secs() % 60);
    let floor: Duration = done.iter().map(|experiment| experiment.floor).sum();
    let mut sentence = format!(
        "The main job took {minutes} min {seconds} s here after the release build ({} × its \
         plan's estimate): {} experiments",
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
        ", each with its duration and the command that runs it alone in \
         [results/main-job.md](results/main-job.md).\n",
    );
    sentence
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

/// [`RECORD`]: the environment, then each experiment with its command and duration.
pub fn record(environment: &Environment, done: &[Done]) -> String {
    let mut out = String::from("# The main job's run time\n\n");
    out.push_str(
        "Written by `bench-client all` (`scripts/run.sh`, after the release build); every \
         experiment can be run alone with its command (`scripts/run.sh` followed by the \
         arguments builds first).\n\n## Environment\n\n",
    );
    out.push_str(&environment.to_markdown());
    out.push_str(
        "\n## Experiments\n\nEach run's estimate is its plan's own, as the progress view shows it: \
         its sleeps, its CPU work on the cores, its trials and the protocol's fixed waits, by \
         the protocol's formulas (a bench: its warm-up and measurement). It is not a floor: \
         where a run took less, its plan assumed more than the run needed.\n\n\
         | experiment | command | code stamp | seconds | estimate s | × estimate | outcome |\n\
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

/// `took` over `estimate`, two decimals; `-` where nothing is estimated.
pub fn ratio(took: Duration, floor: Duration) -> String {
    match floor.is_zero() {
        true => "-".to_owned(),
        false => format!("{:.2}", took.as_secs_f64() / floor.as_secs_f64()),
    }
}
