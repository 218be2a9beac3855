//! The README's results block: one compact table of the comparison, between two markers,
//! rewritten by a full default run. The full tables and the findings stay in `RESULTS.md`.

use std::fmt::Write as _;
use std::path::Path;

use crate::Error;
use crate::error::ONLY_COMPLETE;
use crate::experiments::comparison::Report;
use crate::report::block::{RESULTS, replace_in};
use crate::report::text::{latency_range, range};
use burst_meter::case::{Case, Plan};
use burst_meter::stats::{Verdict, answer_groups, grouped};

/// The README, from the repository's root: its results block is the full comparison's.
pub const README: &str = "README.md";

/// Rewrites the README's results block at `readme` from `report` if it may stand for it:
/// `full`, a run of the full default comparison, and [`stands_for_readme`]. Says what it did.
pub fn refresh_if_full(report: &Report, readme: &Path, full: bool) -> Result<String, Error> {
    if !full || !stands_for_readme(report) {
        return Ok(format!(
            "left {} as it was: {ONLY_COMPLETE}",
            readme.display()
        ));
    }
    refresh(report, readme, None)?;
    Ok(format!(
        "refreshed the results block of {}",
        readme.display()
    ))
}

/// Whether `report` may stand in the README's block: the default plan, nothing failed.
pub fn stands_for_readme(report: &Report) -> bool {
    report.plan == Plan::default() && report.failures.is_empty()
}

/// The block: where the figures come from, the compact table and its legend; `stale`, the
/// note it carries when the code that measured `report` has changed since.
pub fn block(report: &Report, stale: Option<&str>) -> String {
    let environment = &report.environment;
    let mut out = compact_table(report);
    let plan = &report.plan;
    let _ = write!(
        out,
        "\nEach cell: the wall time of {n} concurrent requests, in sleeps of {sleep} ms (1: side \
         by side;\n{n}: one after another); the open-loop `/ping` (one every {every} ms, timed \
         from when it should have left)\nat p50 / p99, in ms; when the {n} answers came: at \
         once, one per sleep as each handler\nended, or held (partly, or all to the end: \
         together after the last handler ended); the pings that failed. A Rust cell gives the range\nover its stacks. \
         Measured by `{command}` on {date} ({cpu}, \
         {cores} cores), code stamp `{stamp}`;\nevery table, with the environment, in \
         [results/RESULTS.md](results/RESULTS.md).\n",
        n = plan.concurrency,
        sleep = plan.sleep_ms,
        every = plan.ping_every_ms,
        command = report.command,
        date = environment.date.get(..10).unwrap_or(&environment.date),
        cpu = environment.cpu,
        cores = environment.cores,
        stamp = environment.code_stamp,
    );
    if let Some(note) = stale {
        // On the legend's last line: a note, not a paragraph of its own.
        out.pop();
        let _ = writeln!(out, " {note}");
    }
    let discontinued = (environment.crates.iter()).filter(|entry| entry.contains("discontinued"));
    for entry in discontinued {
        let _ = writeln!(out, "\nMarked among the stacks' crates: {entry}.");
    }
    out
}

/// The stacks one column of the compact table stands for: the Rust servers on epoll
/// together, those on io_uring together, every other target alone, in the order first
/// measured.
fn columns(report: &Report) -> Vec<(String, Vec<&str>)> {
    let targets = report.targets();
    let mut columns = Vec::new();
    for (design, group) in [
        ("epoll", stacks::on(stacks::Driver::Epoll)),
        ("io_uring", stacks::on(stacks::Driver::IoUring)),
    ] {
        let rust: Vec<&str> = (targets.iter().copied())
            .filter(|target| group.contains(target))
            .collect();
        if !rust.is_empty() {
            columns.push((format!("Rust on {design}, {} stacks", rust.len()), rust));
        }
    }
    columns.extend(
        (targets.iter())
            .filter(|target| !stacks::names().contains(target))
            .map(|target| (target.to_string(), vec![*target])),
    );
    columns
}

/// A row per route, a column per [`columns`] group: wall in sleeps, open-loop ping p50 and
/// p99, when the answers came, failed pings.
fn compact_table(report: &Report) -> String {
    let columns = columns(report);
    let mut out = String::from("| route |");
    for (heading, _) in &columns {
        let _ = write!(out, " {heading} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    let threads = report.plan.threads.first().copied();
    for route in &report.plan.routes {
        let _ = write!(out, "\n| `{route}`: {} |", route.route().runs());
        for (_, targets) in &columns {
            let cases: Vec<&Case> = (report.cases.iter())
                .filter(|case| case.route == route.path() && Some(case.reactor_threads) == threads)
                .filter(|case| targets.contains(&case.target.as_str()))
                .collect();
            let _ = write!(out, " {} |", cell(&cases));
        }
    }
    out.push('\n');
    out
}

/// One cell of the compact table, over the cases of one route and column. A case whose
/// requests failed gives no wall time (it has no verdict), only its count of failures.
fn cell(cases: &[&Case]) -> String {
    let measured = cases.iter().filter(|case| case.verdict != Verdict::Failed);
    let walls: Vec<f64> = measured
        .clone()
        .filter_map(|case| case.times_ideal)
        .collect();
    let answers = answers_line(measured.copied().collect());
    let open = cases.iter().filter_map(|case| case.open_loop.as_ref());
    let p50: Vec<f64> = open.clone().filter_map(|open| open.p50_ms).collect();
    let p99: Vec<f64> = open.filter_map(|open| open.p99_ms).collect();
    let mut out = format!(
        "**{}** sleeps<br>ping {} / {}",
        range(&walls, 2),
        latency_range(&p50),
        latency_range(&p99),
    );
    if let Some(answers) = answers {
        let _ = write!(out, "<br>{answers}");
    }
    let (failed, sent, on) = failed_pings(cases);
    let _ = match failed {
        0 => write!(out, "<br>no ping failed"),
        _ => write!(out, "<br>**{failed} of {sent} pings failed** ({on})"),
    };
    let failed_requests = cases.iter().filter(|case| case.err > 0);
    for case in failed_requests {
        let _ = write!(
            out,
            "<br>**{} of {} requests failed** ({})",
            case.err, case.n, case.target
        );
    }
    out
}

/// How a burst's answers came, from its timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    /// All within half a sleep of each other, within the first sleep and a half.
    AtOnce,
    /// One per sleep, as each handler ended.
    OnePerSleep,
    /// All together, but only after a later sleep ended: held until the last handler ended.
    HeldToTheEnd,
    /// In this many groups, fewer than the answers: some held until a later one.
    InGroups(usize),
}

impl Answers {
    /// `case`'s, from the ends of its answered requests ([`answer_groups`]); `None` without a
    /// timeline or an answer.
    fn of(case: &Case) -> Option<Answers> {
        let answered = (case.timeline.as_ref()?.requests.iter()).filter(|request| request.ok);
        let mut ends: Vec<f64> = answered.map(|request| request.ended_ms).collect();
        ends.sort_by(f64::total_cmp);
        let (first, count) = (*ends.first()?, ends.len());
        Some(match answer_groups(&ends, case.sleep_ms) {
            1 if first < 1.5 * case.sleep_ms as f64 => Answers::AtOnce,
            1 => Answers::HeldToTheEnd,
            groups if groups == count => Answers::OnePerSleep,
            groups => Answers::InGroups(groups),
        })
    }

    fn words(self) -> String {
        match self {
            Answers::AtOnce => "at once".to_owned(),
            Answers::OnePerSleep => "one per sleep".to_owned(),
            Answers::HeldToTheEnd => "all held to the end".to_owned(),
            Answers::InGroups(groups) => format!("partly held ({groups} groups)"),
        }
    }
}

/// When the answers of `cases` came: how most stacks' came, then each other way with the
/// stacks it was theirs; `None` if no case has a timeline.
fn answers_line(cases: Vec<&Case>) -> Option<String> {
    let of: Vec<(Answers, &str)> = (cases.iter())
        .filter_map(|case| Some((Answers::of(case)?, case.target.as_str())))
        .collect();
    let mut ways = grouped(&of, |(answers, _)| *answers);
    ways.sort_by_key(|(_, stacks)| std::cmp::Reverse(stacks.len()));
    let mut ways = ways.into_iter();
    let (most, _) = ways.next()?;
    let mut line = format!("answers {}", most.words());
    for (answers, stacks) in ways {
        let stacks: Vec<&str> = stacks.iter().map(|(_, stack)| *stack).collect();
        let _ = write!(line, "; {} on {}", answers.words(), stacks.join(", "));
    }
    Some(line)
}

/// The pings of both probes that failed, of all sent, and the stacks they failed on.
fn failed_pings(cases: &[&Case]) -> (usize, usize, String) {
    let (mut failed, mut sent, mut on) = (0, 0, Vec::new());
    for case in cases {
        let open = case
            .open_loop
            .as_ref()
            .map_or((0, 0), |o| (o.errors, o.scheduled));
        let closed =
            (case.closed_loop.as_ref()).map_or((0, 0), |c| (c.errors, c.samples + c.errors));
        failed += open.0 + closed.0;
        sent += open.1 + closed.1;
        if open.0 + closed.0 > 0 {
            on.push(case.target.as_str());
        }
    }
    (failed, sent, on.join(", "))
}

/// Rewrites the README's results block ([`RESULTS`]) at `path` with [`block`].
pub fn refresh(report: &Report, path: &Path, stale: Option<&str>) -> Result<(), Error> {
    replace_in(path, RESULTS, &block(report, stale)).map_err(|source| Error::Page {
        page: path.to_owned(),
        source,
    })
}
