//! `RACE.md`: over repeated trials of `/bad`, how often the health check got in between the
//! blocked requests, on each stack and in each connect mode; where a ping sent at a chosen
//! point of the burst was handled; and the runs that flip one mechanism each.

use std::fmt::Write as _;

use super::RACE;
use crate::experiments::race::arrival::{ArrivalTally, PingAt};
use crate::experiments::race::{PROBE_TIMEOUT_MS, RaceReport, Tally, VariantReport};
use crate::report::sections::{failures, heading};
use crate::report::text::{cell, connect_text, spread, spread_to};
use burst_meter::burst::ErrorCount;

/// The outcome tables' header.
const TABLE_HEADER: &str = "| stack | connect | trials | got in between every sleep \
    | got in somewhere | waited for all | failed | slowest wait, sleeps: min / median / max \
    | open-loop pings over 1 s | open-loop failures |\n\
    |---|---|---:|---:|---:|---:|---:|---|---:|---|\n";

/// `RACE.md`.
pub fn race_markdown(race: &RaceReport) -> String {
    let mut out = heading("The health check's race", &race.command, &race.environment);
    out.push_str(&parameters(race));
    out.push_str("## Outcomes\n\n");
    out.push_str(&outcome_table(&race.tallies));
    out.push_str(&legend(race));
    let _ = writeln!(
        out,
        "\n![Each trial's slowest closed-loop wait, in sleeps, per stack and connect mode]({RACE})"
    );
    out.push_str(&arrival(race));
    out.push_str(&variants(&race.variants));
    out.push_str(&failures(&race.failures, false));
    out
}

fn parameters(race: &RaceReport) -> String {
    let plan = &race.plan;
    let mut out = format!(
        "\n## Parameters\n\n- {} trials per stack and connect mode of the comparison's `/bad` \
         case: {} concurrent requests each sleeping {} ms on {}, the \
         original's pinger (closed loop) and the open-loop probe every {} ms; each trial on \
         fresh connections, the server started once per stack and connect mode\n",
        plan.trials,
        plan.concurrency,
        plan.sleep_ms,
        match plan.threads {
            1 => "one reactor thread".to_owned(),
            n => format!("{n} reactor threads"),
        },
        plan.ping_every_ms,
    );
    let arrival = &plan.arrival;
    if !race.arrival.is_empty() {
        let _ = writeln!(
            out,
            "- {} trials per stack and point of arrival: {} concurrent `/bad` sleeping {} ms, \
             one ping sent at the point, the server started with `--events`",
            arrival.trials, arrival.concurrency, arrival.sleep_ms,
        );
    }
    out.push('\n');
    out
}

fn outcome_table(tallies: &[Tally]) -> String {
    let mut out = TABLE_HEADER.to_owned();
    for tally in tallies {
        out.push_str(&row(tally));
    }
    out
}

fn row(tally: &Tally) -> String {
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
        "| {} | {} | {} | {} | {} | {} | {} | {} | {share} | {} |",
        tally.target,
        connect_text(tally.connect),
        tally.trials,
        tally.interleaved,
        tally.partly,
        tally.waited_for_all,
        tally.failed,
        spread(tally.slowest_sleeps),
        reasons(&tally.open_errors),
    );
    out
}

/// Each reason with its count (`status 408 ×12; connection reset ×3`), or `-`.
fn reasons(errors: &[ErrorCount]) -> String {
    if errors.is_empty() {
        return "-".to_owned();
    }
    let each: Vec<String> = (errors.iter())
        .map(|error| format!("{} ×{}", error.reason, error.count))
        .collect();
    cell(&each.join("; "))
}

fn legend(race: &RaceReport) -> String {
    let n = race.plan.concurrency;
    format!(
        "\nA trial's outcome is the closed-loop ping's slowest wait, in sleeps: under 1.5, it got \
         in between every sleep; over 0.8 × (N − 1) = {:.1}, it waited behind every queued \
         request; between, it got in somewhere. A trial in which a burst request or a \
         closed-loop ping failed has no verdict. The open-loop columns count the pings slower \
         than {PROBE_TIMEOUT_MS:.0} ms (Kubernetes' default liveness-probe timeout) or failed, \
         and why they failed, over every trial.\n",
        0.8 * n.saturating_sub(1) as f64
    )
}

/// The arrival tables: where the ping was handled, and how long it waited, per stack and point.
fn arrival(race: &RaceReport) -> String {
    if race.arrival.is_empty() {
        return String::new();
    }
    let points = &race.plan.arrival.points;
    let mut out = format!(
        "\n## Where the ping was handled, by when it arrived\n\n\
         After how many of the burst's {n} blocked requests the server started the ping's \
         handler (its own record, `GET /events`), and in how many trials: `1 ×7 · 10 ×3` is \
         seven trials after one request, three after all ten. A trial whose ping or burst \
         failed has no place and is counted as failed.\n\n",
        n = race.plan.arrival.concurrency
    );
    out.push_str(&matrix(&race.arrival, points, handled_cell));
    out.push_str(
        "\nThe ping's wait, from its write to its answer, in sleeps: min / median / max.\n\n",
    );
    out.push_str(&matrix(&race.arrival, points, |tally| {
        spread(tally.ping_sleeps)
    }));
    out.push_str(
        "\nThe burst connections the server had accepted when it started the ping's handler \
         (its own record): min / median / max.\n\n",
    );
    out.push_str(&matrix(&race.arrival, points, |tally| {
        spread_to(tally.accepted_before, 0)
    }));
    out.push_str(
        "\nThe burst connections it had accepted when it started the first burst handler, the \
         requests queued before the first sleep: min / median / max.\n\n",
    );
    out.push_str(&matrix(&race.arrival, points, |tally| {
        spread_to(tally.accepted_before_first, 0)
    }));
    out.push_str(&points_legend(points));
    out
}

/// A table of one row per stack and one column per point, each cell `cell_of` its tally.
fn matrix(
    tallies: &[ArrivalTally],
    points: &[PingAt],
    cell_of: impl Fn(&ArrivalTally) -> String,
) -> String {
    let mut out = String::from("| stack |");
    for point in points {
        let _ = write!(out, " {} |", point.describe());
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(points.len()));
    out.push('\n');
    let mut stacks: Vec<&str> = Vec::new();
    for tally in tallies {
        if !stacks.contains(&tally.target.as_str()) {
            stacks.push(&tally.target);
        }
    }
    for stack in stacks {
        let _ = write!(out, "| {stack} |");
        for &point in points {
            let tally = (tallies.iter()).find(|t| t.target == stack && t.point == point);
            let _ = write!(out, " {} |", tally.map_or("-".to_owned(), &cell_of));
        }
        out.push('\n');
    }
    out
}

fn handled_cell(tally: &ArrivalTally) -> String {
    let mut each: Vec<String> = (tally.handled_after.iter())
        .map(|(after, trials)| format!("{after} ×{trials}"))
        .collect();
    let unplaced =
        tally.trials - tally.failed - tally.handled_after.iter().map(|(_, n)| n).sum::<usize>();
    if unplaced > 0 {
        each.push(format!("not recorded ×{unplaced}"));
    }
    if tally.failed > 0 {
        each.push(format!("failed ×{}", tally.failed));
    }
    each.join(" · ")
}

fn points_legend(points: &[PingAt]) -> String {
    let mut out = String::from("\nThe points:\n\n");
    for point in points {
        let _ = writeln!(out, "- **{}**: {}", point.describe(), point.explain());
    }
    out
}

/// Each variant's test: the mechanism it tests, and the stock server's outcomes against the
/// variant's.
fn variants(variants: &[VariantReport]) -> String {
    if variants.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Runs that change one thing\n\nEach runs a stock server and its variant, which \
         changes the one thing a mechanism names, in the condition where the outcome showed.\n",
    );
    for test in variants {
        let _ = write!(
            out,
            "\n### {}\n\nTests {}. `/bad` sleeping {} ms, connections {}.\n\n",
            test.variant,
            test.tests,
            test.sleep_ms,
            connect_text(test.connect),
        );
        out.push_str(&outcome_table(&test.tallies));
    }
    out
}
