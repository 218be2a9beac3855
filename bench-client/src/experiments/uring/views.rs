//! `URING.md`: on the io_uring stacks, stock and as each variant, whether a burst's answers
//! came one per sleep or were held, and whether a ping leading the burst was served first and
//! answered at once.

use std::fmt::Write as _;

use crate::Error;
use crate::experiments::uring::{HeldTally, OrderTally, UringReport};
use crate::report::View;
use crate::report::sections::document;
use crate::report::text::spread;

/// The io_uring experiment's one view, `URING.md`.
pub fn views(report: &UringReport) -> Result<Vec<View>, Error> {
    Ok(vec![("URING.md".to_owned(), uring_markdown(report))])
}

/// `URING.md`.
pub fn uring_markdown(report: &UringReport) -> String {
    document(
        "Where io_uring differs: held answers and the order of service",
        &report.command,
        &report.environment,
        &[
            parameters(report),
            settings(report),
            held_table(&report.held, report.plan.concurrency),
            order_table(&report.order),
        ],
        &report.failures,
    )
}

fn parameters(report: &UringReport) -> String {
    let plan = &report.plan;
    let leads: Vec<String> = plan
        .leads_ms
        .iter()
        .map(|lead| format!("{lead} ms"))
        .collect();
    format!(
        "\n## Parameters\n\n- each setting's server started once, with one reactor thread and \
         `--events`; in each trial {n} connections (one more for a ping) opened and used once \
         each, so that the server has accepted them and waits on each for its next request, \
         then {n} `/bad` requests sleeping {sleep} ms written back to back, one per connection\n\
         - {trials} trials per setting with no ping; on the settings of the order table, {trials} \
         more per lead with a `/ping` written that long before the burst: {leads}\n\
         - an answer's time runs from the burst's first write; answers less than half a sleep \
         apart count as one group\n\n",
        n = plan.concurrency,
        sleep = plan.sleep_ms,
        trials = plan.trials,
        leads = leads.join(", "),
    )
}

fn settings(report: &UringReport) -> String {
    let mut out = String::from("## Settings\n\n");
    for setting in &report.settings {
        let _ = write!(out, "- **{}**", setting.label);
        if setting.variants.is_empty() {
            out.push_str(": the stock server\n");
        }
        for (index, (started_with, about)) in setting.variants.iter().enumerate() {
            let joint = if index == 0 { ":" } else { "; and" };
            let _ = write!(out, "{joint} `{started_with}`, {about}");
        }
        if !setting.variants.is_empty() {
            out.push('\n');
        }
    }
    out
}

fn held_table(tallies: &[HeldTally], n: usize) -> String {
    let mut out = format!(
        "\n## Answers held\n\nWith no ping: did the {n} answers come one per sleep, as each \
         handler ended (the server's record says when), or together?\n\n\
         | setting | trials | one per sleep | partly held | all held | failed \
         | first answer, sleeps: min / median / max | handlers ended one per sleep (server) |\n\
         |---|---:|---:|---:|---:|---:|---|---:|\n"
    );
    for tally in tallies {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            tally.setting,
            tally.trials,
            tally.one_per_sleep,
            tally.partly_held,
            tally.all_held,
            tally.failed,
            spread(tally.first_answer_sleeps),
            tally.handlers_one_per_sleep,
        );
    }
    out
}

/// The order of service, or nothing where no trial measured it.
fn order_table(tallies: &[OrderTally]) -> String {
    if tallies.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Order of service\n\nA `/ping` written on its open connection, the lead before \
         the burst: did its handler start before every `/bad` one (the server's record), and \
         was it answered within the first sleep, or held with the burst's last answer?\n\n\
         | setting | lead | trials | ping's handler first | answered within a sleep \
         | held to the end | between | failed |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for tally in tallies {
        let _ = writeln!(
            out,
            "| {} | {} ms | {} | {} | {} | {} | {} | {} |",
            tally.setting,
            tally.lead_ms,
            tally.trials,
            tally.served_first,
            tally.within_a_sleep,
            tally.held_to_the_end,
            tally.between,
            tally.failed,
        );
    }
    out
}
