//! `TOKIO.md`: what `block_in_place` answers on `current_thread`, when the timer joined beside
//! a sleep fired, and when the task spawned just before a block ran, stock and with the LIFO
//! slot off.

use std::fmt::Write as _;

use super::tally::{self, JoinTally, SpawnTally};
use super::{Refusal, TokioReport};
use crate::report::View;
use crate::report::sections::document;
use crate::report::text::spread;

/// The experiment's one view, `TOKIO.md`.
pub fn views(report: &TokioReport) -> Vec<View> {
    vec![("TOKIO.md".to_owned(), tokio_markdown(report))]
}

/// `TOKIO.md`.
pub fn tokio_markdown(report: &TokioReport) -> String {
    document(
        "tokio's own answers: block_in_place, its sibling, the LIFO slot",
        &report.command,
        &report.environment,
        &[
            parameters(report),
            refusals(&report.refusals),
            joins(&tally::joins(report)),
            spawns(&tally::spawns(report)),
        ],
        &report.failures,
    )
}

fn parameters(report: &TokioReport) -> String {
    let plan = &report.plan;
    format!(
        "\n## Parameters\n\n- one request at a time, each on a connection of its own, each \
         sleeping {sleep} ms (`?ms={sleep}`)\n\
         - on `current_thread` (`--threads 1`): one request of each route that calls \
         `block_in_place`\n\
         - the join: {trials} requests of `/join-block-in-place`, then {trials} of \
         `/join-spawn-blocking`, on {join} workers (`--threads {join}`)\n\
         - the LIFO slot: {trials} requests of `/bad-after-spawn` on demo-hyper-tokio built \
         with `--cfg tokio_unstable`, stock and with `--variant lifo-slot-off`, at {workers} \
         workers\n\n",
        sleep = plan.sleep_ms,
        trials = plan.trials,
        join = plan.join_workers,
        workers = plan
            .workers
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" and "),
    )
}

fn refusals(refusals: &[Refusal]) -> String {
    let mut out = String::from(
        "## block_in_place on current_thread\n\n| server | route | status | error |\n|---|---|---:|---|\n",
    );
    for refusal in refusals {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} |",
            refusal.target, refusal.route, refusal.status, refusal.error
        );
    }
    out.push('\n');
    out
}

fn joins(tallies: &[JoinTally]) -> String {
    let mut out = String::from(
        "## The timer joined beside the sleep\n\nThe timer is due the given ms after the handler \
         starts; it is held when it fired only once the sleep had ended.\n\n\
         | server | workers | route | due (ms) | fired (ms): min / median / max | held |\n\
         |---|---:|---|---:|---|---:|\n",
    );
    for tally in tallies {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} | {} | {} of {} |",
            tally.target,
            tally.workers,
            tally.route,
            tally.timer_due_ms,
            spread(tally.fired_ms),
            tally.held,
            tally.trials
        );
    }
    out.push('\n');
    out
}

fn spawns(tallies: &[SpawnTally]) -> String {
    let mut out = String::from(
        "## The task spawned before a block\n\nWhen the task `/bad-after-spawn` spawns first \
         ran, after the spawn; it waited when it ran only once the handler's sleep had ended.\n\n\
         | setting | workers | ran after (ms): min / median / max | waited for the sleep | on the sleeping thread |\n\
         |---|---:|---|---:|---:|\n",
    );
    for tally in tallies {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} of {} | {} of {} |",
            tally.target,
            tally.workers,
            spread(tally.ran_ms),
            tally.waited,
            tally.trials,
            tally.same_thread,
            tally.trials
        );
    }
    out.push('\n');
    out
}
