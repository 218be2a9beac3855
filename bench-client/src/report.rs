//! Reports: the original bench's block per case on the terminal, and `RESULTS.md` and
//! `results.json`, written atomically, with the environment beside every figure.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bench::{Case, Failure, Plan};
use crate::environment::Environment;
use crate::plot::{self, LatencySamples, PlotError};
use crate::stats::{Ideals, OpenLoopStats, Verdict};

/// The markers of the README's results block, which [`Report::refresh_readme`] rewrites.
pub const README_BEGIN: &str = "<!-- results:begin (written by bench-client; do not edit) -->";
pub const README_END: &str = "<!-- results:end -->";

/// Everything one run produced: what `results.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub environment: Environment,
    pub plan: Plan,
    /// The command line that produced this report.
    pub command: String,
    pub cases: Vec<Case>,
    pub failures: Vec<Failure>,
    pub timing: Timing,
}

/// Where the run's time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// From start to the last server stopped.
    pub total_s: f64,
    /// The bursts' wall times added up: the sleeps themselves, as each server served them.
    pub bursts_s: f64,
    /// The protocol's fixed waits: head start and pause per case.
    pub protocol_waits_s: f64,
}

impl Timing {
    /// The share of the run that is neither a burst nor a fixed wait: starting, warming up
    /// and stopping servers, and the client's own work.
    pub fn overhead_percent(&self) -> f64 {
        let rest = self.total_s - self.bursts_s - self.protocol_waits_s;
        if self.total_s > 0.0 {
            100.0 * rest.max(0.0) / self.total_s
        } else {
            0.0
        }
    }
}

/// A latency for a table: one decimal, two below 1 ms (loopback pings take tens of µs).
fn ms(value: Option<f64>) -> String {
    match value {
        Some(value) if value < 1.0 => format!("{value:.2}"),
        Some(value) => format!("{value:.1}"),
        None => "-".to_owned(),
    }
}

/// The original bench's block for one case, plus where the sleep ran and the ping errors.
pub fn terminal_block(case: &Case) -> String {
    let mut out = format!(
        "=== {} ({} concurrent, sleep={}s each) ===\n",
        case.route,
        case.n,
        case.sleep_ms as f64 / 1000.0
    );
    let ping = &case.ping;
    let _ = writeln!(out, "work wall_ms : {:.1}", case.wall_ms);
    let _ = writeln!(out, "work ok/err  : {}/{}", case.ok, case.err);
    for error in &case.errors {
        let _ = writeln!(out, "  {} × {}", error.count, error.reason);
    }
    let _ = writeln!(out, "slept on     : {}", where_it_ran(case));
    let _ = writeln!(out, "ping samples : {}", ping.samples);
    let _ = writeln!(out, "ping errors  : {}", ping.errors);
    let _ = writeln!(out, "ping mean_ms : {}", ms(ping.mean_ms));
    let _ = writeln!(out, "ping p50_ms  : {}", ms(ping.p50_ms));
    let _ = writeln!(out, "ping p95_ms  : {}", ms(ping.p95_ms));
    let _ = writeln!(out, "ping max_ms  : {}", ms(ping.max_ms));
    if let Some(open) = &case.open_loop {
        let _ = writeln!(
            out,
            "open loop    : {} sent, {} answered, p50 {} / p99 {} / max {} ms",
            open.scheduled,
            with_failed(open.answered, open.errors),
            ms(open.p50_ms),
            ms(open.p99_ms),
            ms(open.max_ms)
        );
    }
    out
}

/// "reactor: main", "pool: blocking-* (10 threads)", or what is known.
fn where_it_ran(case: &Case) -> String {
    let place = match case.on_reactor {
        Some(true) => "reactor",
        Some(false) => "pool",
        None => "mixed",
    };
    match &case.sleep_thread {
        Some(thread) => format!("{place}: {}", shorten(thread)),
        None => "not reported".to_owned(),
    }
}

/// Many pool threads make a long list; the table needs the gist: `blocking-* (10 threads)`
/// when the names differ only in their number.
fn shorten(threads: &str) -> String {
    let names: Vec<&str> = threads.split(", ").collect();
    if names.len() <= 2 {
        return threads.to_owned();
    }
    let stem = |name: &'_ str| {
        name.trim_end_matches(|c: char| c.is_ascii_digit())
            .to_owned()
    };
    let first = stem(names[0]);
    if names.iter().all(|name| stem(name) == first) {
        format!("{first}* ({} threads)", names.len())
    } else {
        format!("{}, {}, … ({} threads)", names[0], names[1], names.len())
    }
}

impl Report {
    /// `RESULTS.md`.
    pub fn to_markdown(&self) -> String {
        let plan = &self.plan;
        let mut out = String::from("# Blocking the reactor: results\n\n");
        let _ = writeln!(
            out,
            "Written by `{}`; every figure below comes from that run. Do not edit by hand: \
             run the command again.\n",
            self.command
        );
        out.push_str("## Environment\n\n");
        out.push_str(&self.environment.to_markdown());
        out.push_str("\n## Parameters\n\n");
        let _ = writeln!(
            out,
            "- {} concurrent requests per burst, each sleeping {} ms; routes {}",
            plan.concurrency,
            plan.sleep_ms,
            plan.routes
                .iter()
                .map(|route| route.path())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            out,
            "- a closed-loop pinger: `GET /ping` on one keep-alive connection, then {} ms pause, \
             repeated; started {} ms before the burst",
            plan.ping_every_ms,
            crate::bench::HEAD_START.as_millis()
        );
        let threads: Vec<String> = plan.threads.iter().map(usize::to_string).collect();
        let _ = writeln!(
            out,
            "- reactor threads per spawned server: {}; targets measured one after another",
            threads.join(", ")
        );
        out.push_str("\n## Comparison\n\n");
        out.push_str(&self.comparison_table());
        if let Some(probes) = self.probe_table() {
            out.push_str("\n## The two probes\n\n");
            out.push_str(&probes);
            out.push('\n');
            for route in self.cdf_routes() {
                let _ = writeln!(out, "![{route}]({})", Self::cdf_name(route));
            }
        }
        if !self.failures.is_empty() {
            out.push_str("\n## Failures\n\n");
            for failure in &self.failures {
                let _ = writeln!(
                    out,
                    "- {} ({}){}: {}",
                    failure.target,
                    reactor_threads(failure.reactor_threads),
                    failure
                        .route
                        .as_deref()
                        .map(|route| format!(", {route}"))
                        .unwrap_or_default(),
                    failure.reason.replace('\n', " "),
                );
            }
        }
        out.push_str("\n## What is the same across executors, and what differs\n\n");
        for sentence in self.findings() {
            let _ = writeln!(out, "- {sentence}");
        }
        let timing = &self.timing;
        let _ = writeln!(
            out,
            "\n## Run time\n\n{:.1} s in all: {:.1} s of bursts, {:.1} s of the protocol's fixed \
             waits, {:.1}% for starting, warming up and stopping servers and the client itself.",
            timing.total_s,
            timing.bursts_s,
            timing.protocol_waits_s,
            timing.overhead_percent()
        );
        out
    }

    /// The comparison table and its legend.
    pub fn comparison_table(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "| stack | runtime (reactor threads) | route | where the sleep ran | wall ms | × ideal | ok/err \
             | ping samples | ping p50 | p95 | max | verdict |\n\
             |---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        );
        for case in &self.cases {
            let samples = with_failed(case.ping.samples, case.ping.errors);
            let _ = writeln!(
                out,
                "| {} | {} ({}) | {} | {} | {:.1} | {} | {}/{} | {} | {} | {} | {} | {} |",
                cell(&case.target),
                cell(case.runtime.as_deref().unwrap_or("?")),
                case.reactor_threads,
                case.route,
                cell(&where_it_ran(case)),
                case.wall_ms,
                case.times_ideal
                    .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}")),
                case.ok,
                case.err,
                samples,
                ms(case.ping.p50_ms),
                ms(case.ping.p95_ms),
                ms(case.ping.max_ms),
                case.verdict,
            );
        }
        for (failure, route) in self.failed_cases() {
            let _ = writeln!(
                out,
                "| {} | ? ({}) | {route} | failed: see Failures | - | - | - | - | - | - | - | failed |",
                cell(&failure.target),
                failure.reactor_threads,
            );
        }
        out.push_str(
            "\n`× ideal` is the wall time in sleeps: 1.00 means every request slept side by side. \
             The verdict is `serialised` when the wall time is nearer the serialised ideal, \
             ⌈N / threads⌉ × sleep, than one sleep (the line is their geometric mean). Ping latencies are in ms; percentiles use \
             the original bench's nearest-rank rule.\n",
        );
        out
    }

    /// The two probes side by side, if the open-loop one ran: what the closed loop saw, and
    /// what a client sending on schedule saw.
    pub fn probe_table(&self) -> Option<String> {
        if self.cases.iter().all(|case| case.open_loop.is_none()) {
            return None;
        }
        let mut out = String::from(
            "| stack | reactor threads | route | closed loop: samples | p50 | p95 | max \
             | open loop: sent | answered | p50 | p99 | max |\n\
             |---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for case in &self.cases {
            let Some(open) = &case.open_loop else {
                continue;
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&case.target),
                case.reactor_threads,
                case.route,
                with_failed(case.ping.samples, case.ping.errors),
                ms(case.ping.p50_ms),
                ms(case.ping.p95_ms),
                ms(case.ping.max_ms),
                open.scheduled,
                with_failed(open.answered, open.errors),
                ms(open.p50_ms),
                ms(open.p99_ms),
                ms(open.max_ms),
            );
        }
        out.push_str(
            "\nThe closed loop sends a ping only after the last one returned, so a stall costs it \
             samples; the open loop keeps its schedule and times each ping from when it should \
             have left (the correction wrk2 makes for coordinated omission). Open-loop \
             percentiles come from an HDR histogram (3 significant digits), and include the \
             client's own timer granularity: tokio's timer counts whole milliseconds, so a ping \
             may leave up to a millisecond or two after its time (results.json records the \
             largest lag of each case as `max_send_lag_ms`).\n",
        );
        Some(out)
    }

    /// Each case that was planned but not measured, with the first failure of its target:
    /// a target that failed in one case never ran the ones after it.
    fn failed_cases(&self) -> Vec<(&Failure, &str)> {
        let mut failed: Vec<(&Failure, &str)> = Vec::new();
        for failure in &self.failures {
            let same_target = |other: &Failure| {
                other.target == failure.target && other.reactor_threads == failure.reactor_threads
            };
            if failed.iter().any(|(first, _)| same_target(first)) {
                continue;
            }
            for route in self.plan.routes.iter().map(|route| route.path()) {
                let measured = self.cases.iter().any(|case| {
                    case.target == failure.target
                        && case.reactor_threads == failure.reactor_threads
                        && case.route == route
                });
                if !measured {
                    failed.push((failure, route));
                }
            }
        }
        failed
    }

    /// The README's results block: the table, the findings and where they come from.
    pub fn readme_block(&self) -> String {
        let mut out = format!(
            "Measured by `{}` on {} ({}, {} cores), commit `{}`; the full record, with the \
             environment, is [results/RESULTS.md](results/RESULTS.md).\n\n",
            self.command,
            self.environment
                .date
                .get(..10)
                .unwrap_or(&self.environment.date),
            self.environment.cpu,
            self.environment.cores,
            self.environment
                .git_commit
                .get(..12)
                .unwrap_or(&self.environment.git_commit),
        );
        out.push_str(&self.comparison_table());
        if let Some(probes) = self.probe_table() {
            out.push_str("\nThe two probes, side by side:\n\n");
            out.push_str(&probes);
        }
        out.push('\n');
        for sentence in self.findings() {
            let _ = writeln!(out, "- {sentence}");
        }
        out
    }

    /// Replaces what stands between [`README_BEGIN`] and [`README_END`] in the file at
    /// `path` with [`Self::readme_block`], atomically.
    pub fn refresh_readme(&self, path: &Path) -> std::io::Result<()> {
        let text = std::fs::read_to_string(path)?;
        let (Some(begin), Some(end)) = (text.find(README_BEGIN), text.find(README_END)) else {
            return Err(std::io::Error::other(format!(
                "{} has no {README_BEGIN} ... {README_END} block",
                path.display()
            )));
        };
        let head = &text[..begin + README_BEGIN.len()];
        let tail = &text[end..];
        let refreshed = format!("{head}\n{}{tail}", self.readme_block());
        write_atomically(path, refreshed.as_bytes())
    }

    /// Plain sentences derived from this run's figures, one or two per route.
    pub fn findings(&self) -> Vec<String> {
        let mut sentences = Vec::new();
        let matrix = self.plan.threads.len() > 1;
        for &threads in &self.plan.threads {
            for route in &self.plan.routes {
                let cases: Vec<&Case> = self
                    .cases
                    .iter()
                    .filter(|case| case.route == route.path() && case.reactor_threads == threads)
                    .collect();
                if cases.is_empty() {
                    continue;
                }
                let at = if matrix {
                    format!("With {}, ", reactor_threads(threads))
                } else {
                    String::new()
                };
                sentences.extend(self.route_findings(&at, route.path(), &cases));
            }
        }
        if !self.failures.is_empty() {
            sentences.push(format!(
                "{} target(s) could not be measured in full; see Failures.",
                self.failures.len()
            ));
        }
        sentences
    }

    /// The sentences about one route at one thread count; `at` leads the first of them.
    fn route_findings(&self, at: &str, route: &str, cases: &[&Case]) -> Vec<String> {
        let mut sentences = Vec::new();
        let serialised: Vec<&str> = names(cases, |case| case.verdict == Verdict::Serialised);
        let concurrent: Vec<&str> = names(cases, |case| case.verdict == Verdict::Concurrent);
        let every = match cases {
            [only] => only.target.clone(),
            [_, _] => "both stacks".to_owned(),
            _ => format!("all {} stacks", cases.len()),
        };
        let verdicts = match (serialised.is_empty(), concurrent.is_empty()) {
            (false, true) => format!("serialised on {every}"),
            (true, false) => format!("concurrent on {every}"),
            _ => format!(
                "serialised on {} but concurrent on {}",
                serialised.join(", "),
                concurrent.join(", ")
            ),
        };
        let walls: Vec<f64> = cases.iter().map(|case| case.wall_ms).collect();
        let p50s: Vec<f64> = cases.iter().filter_map(|case| case.ping.p50_ms).collect();
        let maxes: Vec<f64> = cases.iter().filter_map(|case| case.ping.max_ms).collect();
        let samples: Vec<f64> = cases.iter().map(|case| case.ping.samples as f64).collect();
        let ideals = Ideals::new(
            self.plan.concurrency,
            self.plan.sleep_ms,
            cases[0].reactor_threads,
        );
        let against = if serialised.is_empty() {
            format!("one sleep of {} ms", self.plan.sleep_ms)
        } else {
            format!(
                "one sleep of {} ms, or {:.0} ms for ⌈N / threads⌉ × sleep",
                self.plan.sleep_ms, ideals.serialised_ms
            )
        };
        sentences.push(format!(
            "{at}`{route}` was {verdicts}: wall {} ms against {against}; the closed-loop pinger \
                 got {} samples, p50 {} ms, max {} ms.",
            range(&walls, 0),
            range(&samples, 0),
            range_ms(&p50s),
            range_ms(&maxes),
        ));
        if !serialised.is_empty() && self.plan.sleep_ms > 0 {
            sentences.push(self.slowest_ping(route, cases));
        }
        let on_reactor = names(cases, |case| case.on_reactor == Some(true));
        let off_reactor = names(cases, |case| case.on_reactor == Some(false));
        if !on_reactor.is_empty() && !off_reactor.is_empty() {
            sentences.push(format!(
                "`{route}` slept on a reactor thread on {} and on a pool thread on {}.",
                on_reactor.join(", "),
                off_reactor.join(", ")
            ));
        }
        let failing: Vec<String> = cases
            .iter()
            .filter(|case| case.ping.errors > 0 || case.err > 0)
            .map(|case| {
                let first = case.errors.first().map(|e| e.reason.as_str()).or(case
                    .ping
                    .error_reasons
                    .first()
                    .map(String::as_str));
                format!(
                    "on {}, {} of {} requests and {} of {} pings failed (first: {})",
                    case.target,
                    case.err,
                    case.n,
                    case.ping.errors,
                    case.ping.errors + case.ping.samples,
                    first.unwrap_or("no reason given")
                )
            })
            .collect();
        if !failing.is_empty() {
            sentences.push(format!("During `{route}`, {}.", failing.join("; ")));
        }
        if let Some(sentence) = open_loop_finding(route, cases) {
            sentences.push(sentence);
        }
        sentences
    }

    /// How long the slowest answered ping waited, from the stack where it waited least to
    /// the one where it waited most, in ms and in sleeps; and where pings failed instead.
    fn slowest_ping(&self, route: &str, cases: &[&Case]) -> String {
        let sleep = self.plan.sleep_ms as f64;
        let mut slowest: Vec<(f64, &str)> = cases
            .iter()
            .filter(|case| case.ping.errors == 0)
            .filter_map(|case| Some((case.ping.max_ms?, case.target.as_str())))
            .collect();
        slowest.sort_by(|a, b| a.0.total_cmp(&b.0));
        let waited = |(ms, target): (f64, &str)| {
            format!("{ms:.0} ms ({:.1} sleeps, on {target})", ms / sleep)
        };
        let mut sentence = match (slowest.first(), slowest.last()) {
            (Some(&least), Some(&most)) if least.1 != most.1 => {
                format!(
                    "During `{route}` the slowest ping waited from {} to {}",
                    waited(least),
                    waited(most)
                )
            }
            (Some(&only), _) => {
                format!("During `{route}` the slowest ping waited {}", waited(only))
            }
            _ => format!("During `{route}` no stack answered every ping"),
        };
        for case in cases.iter().filter(|case| case.ping.errors > 0) {
            let reason = case.ping.error_reasons.first().map_or("", String::as_str);
            sentence.push_str(&format!(
                "; on {} a ping failed instead ({reason})",
                case.target
            ));
        }
        sentence.push('.');
        sentence
    }

    /// `results.json`: every figure and the raw samples.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises") + "\n"
    }

    /// The file name of a route's latency CDF, e.g. `ping-cdf-bad.svg`.
    pub fn cdf_name(route: &str) -> String {
        format!("ping-cdf-{}.svg", route.trim_start_matches('/'))
    }

    /// The cases of `route`, at the first thread count, that carry open-loop samples: what
    /// its latency CDF is drawn from.
    fn cdf_cases<'a>(
        &'a self,
        route: &'a str,
    ) -> impl Iterator<Item = (&'a Case, &'a OpenLoopStats)> {
        let threads = self.plan.threads.first().copied();
        self.cases
            .iter()
            .filter(move |case| case.route == route && Some(case.reactor_threads) == threads)
            .filter_map(|case| Some((case, case.open_loop.as_ref()?)))
    }

    /// The routes that get a latency CDF: those with open-loop samples.
    fn cdf_routes(&self) -> Vec<&'static str> {
        self.plan
            .routes
            .iter()
            .map(|route| route.path())
            .filter(|route| self.cdf_cases(route).next().is_some())
            .collect()
    }

    /// One route's latency CDF: the open-loop probe's samples (every scheduled ping, so a
    /// stall shows at its true weight), one line per stack, at the first thread count.
    pub fn latency_cdf(&self, route: &str) -> Result<String, PlotError> {
        let samples: Vec<LatencySamples> = self
            .cdf_cases(route)
            .map(|(case, open)| {
                // A stack whose pings failed shows fewer samples: say so in its label.
                let label = if open.errors == 0 {
                    case.target.clone()
                } else {
                    format!(
                        "{} ({} of {} answered)",
                        case.target, open.answered, open.scheduled
                    )
                };
                LatencySamples {
                    label,
                    latencies_ms: open.raw_ms.clone(),
                }
            })
            .collect();
        let threads = self.plan.threads.first().copied().unwrap_or(1);
        let title = format!(
            "{route}: /ping latency from its scheduled send, {} concurrent × {} ms, {}",
            self.plan.concurrency,
            self.plan.sleep_ms,
            reactor_threads(threads)
        );
        plot::latency_cdf(&title, &samples)
    }

    /// Writes `RESULTS.md`, `results.json` and a latency CDF per route into `dir`, each
    /// atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for route in self.cdf_routes() {
            let svg = self.latency_cdf(route).map_err(std::io::Error::other)?;
            write_atomically(&dir.join(Self::cdf_name(route)), svg.as_bytes())?;
        }
        write_atomically(&dir.join("results.json"), self.to_json().as_bytes())?;
        write_atomically(&dir.join("RESULTS.md"), self.to_markdown().as_bytes())
    }
}

/// "1 reactor thread", "4 reactor threads".
pub fn reactor_threads(n: usize) -> String {
    format!("{n} reactor thread{}", if n == 1 { "" } else { "s" })
}

/// Table cells cannot hold a bare `|` (actix-web names its threads `actix-rt|system:0|...`).
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// "12", or "11 (+1 failed)".
fn with_failed(answered: usize, failed: usize) -> String {
    if failed == 0 {
        answered.to_string()
    } else {
        format!("{answered} (+{failed} failed)")
    }
}

/// What the open-loop probe saw beside the closed loop, if it ran.
fn open_loop_finding(route: &str, cases: &[&Case]) -> Option<String> {
    let open: Vec<(&Case, &OpenLoopStats)> = cases
        .iter()
        .filter_map(|case| Some((*case, case.open_loop.as_ref()?)))
        .collect();
    if open.is_empty() {
        return None;
    }
    let values = |pick: fn(&OpenLoopStats) -> Option<f64>| -> Vec<f64> {
        open.iter().filter_map(|(_, o)| pick(o)).collect()
    };
    let scheduled: Vec<f64> = open.iter().map(|(_, o)| o.scheduled as f64).collect();
    let closed: Vec<f64> = open
        .iter()
        .map(|(case, _)| case.ping.samples as f64)
        .collect();
    Some(format!(
        "During `{route}` the open-loop probe sent {} pings on schedule where the closed loop got {} \
         samples; measured from their scheduled times, p50 {} ms, p99 {} ms, max {} ms.",
        range(&scheduled, 0),
        range(&closed, 0),
        range_ms(&values(|o| o.p50_ms)),
        range_ms(&values(|o| o.p99_ms)),
        range_ms(&values(|o| o.max_ms)),
    ))
}

fn names<'a>(cases: &[&'a Case], keep: impl Fn(&Case) -> bool) -> Vec<&'a str> {
    cases
        .iter()
        .filter(|case| keep(case))
        .map(|case| case.target.as_str())
        .collect()
}

/// "12" or "12–40", with `decimals` places; "-" for nothing.
fn range(values: &[f64], decimals: usize) -> String {
    let min = values.iter().copied().reduce(f64::min);
    let max = values.iter().copied().reduce(f64::max);
    match (min, max) {
        (Some(min), Some(max)) if format!("{min:.decimals$}") == format!("{max:.decimals$}") => {
            format!("{min:.decimals$}")
        }
        (Some(min), Some(max)) => format!("{min:.decimals$}–{max:.decimals$}"),
        _ => "-".to_owned(),
    }
}

/// A range of latencies, each end as the tables print it ("0.04–0.61", "2408.4–4960.3").
fn range_ms(values: &[f64]) -> String {
    let min = values.iter().copied().reduce(f64::min);
    let max = values.iter().copied().reduce(f64::max);
    match (ms(min), ms(max)) {
        (min, max) if min == max => min,
        (min, max) => format!("{min}–{max}"),
    }
}

/// Writes `bytes` to `path` so that a reader (or a killed run) sees either the old file or
/// the new one, never half of one: a temporary file in the same folder, synced, renamed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("out");
    let temp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists_keep_their_gist() {
        assert_eq!(shorten("main"), "main");
        assert_eq!(shorten("a, b"), "a, b");
        assert_eq!(
            shorten("blocking-1, blocking-10, blocking-2"),
            "blocking-* (3 threads)"
        );
        assert_eq!(shorten("x-1, y-2, z-3"), "x-1, y-2, … (3 threads)");
    }

    #[test]
    fn ranges_collapse_when_equal_and_say_dash_when_empty() {
        assert_eq!(range(&[1.04, 1.01], 1), "1.0");
        assert_eq!(range(&[3.0, 12.0], 0), "3–12");
        assert_eq!(range(&[], 1), "-");
        assert_eq!(range_ms(&[0.04, 0.61]), "0.04–0.61");
        assert_eq!(range_ms(&[0.5, 2408.44]), "0.50–2408.4");
        assert_eq!(range_ms(&[]), "-");
    }
}
