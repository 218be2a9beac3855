//! `RACE.md`: over repeated trials of `/bad`, how often the health check got in between the
//! blocked requests, on each stack and in each connect mode.

use std::fmt::Write as _;

use super::sections::{failures, heading};
use super::text::connect_text;
use crate::race::{PROBE_TIMEOUT_MS, RaceReport, Tally};

/// The table's header.
const TABLE_HEADER: &str = "| stack | connect | trials | got in between every sleep \
    | got in somewhere | waited for all | failed | slowest wait, sleeps: min / median / max \
    | open-loop pings over 1 s |\n|---|---|---:|---:|---:|---:|---:|---|---:|\n";

/// `RACE.md`.
pub fn race_markdown(race: &RaceReport) -> String {
    let mut out = heading("The health check's race", &race.command, &race.environment);
    out.push_str(&parameters(race));
    out.push_str("## Outcomes\n\n");
    out.push_str(TABLE_HEADER);
    for tally in &race.tallies {
        out.push_str(&row(tally));
    }
    out.push_str(&legend(race));
    out.push_str(&failures(&race.failures, false));
    out
}

fn parameters(race: &RaceReport) -> String {
    let plan = &race.plan;
    format!(
        "\n## Parameters\n\n- {} trials per stack and connect mode of the comparison's `/bad` \
         case: {} concurrent requests each sleeping {} ms on one reactor thread, the \
         original's pinger (closed loop) and the open-loop probe every {} ms; each trial on \
         fresh connections, the server started once per stack and connect mode\n\n",
        plan.trials, plan.concurrency, plan.sleep_ms, plan.ping_every_ms
    )
}

fn row(tally: &Tally) -> String {
    let spread = tally
        .slowest_sleeps
        .map_or("-".to_owned(), |[min, median, max]| {
            format!("{min:.1} / {median:.1} / {max:.1}")
        });
    let share = match tally.open_scheduled {
        0 => "-".to_owned(),
        scheduled => {
            let percent = 100.0 * tally.open_over_timeout as f64 / scheduled as f64;
            format!(
                "{percent:.0} % ({} of {scheduled})",
                tally.open_over_timeout
            )
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {spread} | {share} |",
        tally.target,
        connect_text(tally.connect),
        tally.trials,
        tally.interleaved,
        tally.partly,
        tally.waited_for_all,
        tally.failed
    );
    out
}

fn legend(race: &RaceReport) -> String {
    let n = race.plan.concurrency;
    format!(
        "\nA trial's outcome is the closed-loop ping's slowest wait, in sleeps: under 1.5, it got \
         in between every sleep; over 0.8 × (N − 1) = {:.1}, it waited behind every queued \
         request; between, it got in somewhere. A trial in which a burst request or a \
         closed-loop ping failed has no verdict. The last column counts the open-loop pings \
         slower than {PROBE_TIMEOUT_MS:.0} ms (Kubernetes' default liveness-probe timeout) or \
         failed, over every trial.\n",
        0.8 * n.saturating_sub(1) as f64
    )
}
