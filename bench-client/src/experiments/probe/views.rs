//! The probe's views: a line per route on the terminal, `PROBE.md` (the table), and
//! `verdicts.json` (each route's verdict and figures, for a script to read).

use std::fmt::Write as _;

use serde::Serialize;

use super::subjects::{ALL_ROUTES_ON, AS_SHIPPED, AsExpected, Expected};
use super::verdict::Finding;
use super::{ProbeReport, RouteProbe, Trial};
use crate::report::View;
use crate::report::files;
use crate::report::sections::document;
use crate::report::text::{cell, kernel_note, latency, whole};
use burst_meter::environment::Environment;
use burst_meter::kernel::TcpCounters;
use burst_meter::probe::Connections;

/// The probe's views.
pub fn views(report: &ProbeReport) -> Vec<View> {
    vec![
        ("PROBE.md".to_owned(), probe_markdown(report)),
        ("verdicts.json".to_owned(), files::json(&verdicts(report))),
    ]
}

/// `verdicts.json`: every route's verdict and figures, with the run they come from.
#[derive(Debug, Serialize)]
pub struct Verdicts<'a> {
    pub environment: &'a Environment,
    pub command: &'a str,
    pub verdicts: Vec<Judged<'a>>,
}

/// One route's verdict and figures, as `verdicts.json` lists them.
#[derive(Debug, Serialize)]
pub struct Judged<'a> {
    pub server: &'a str,
    pub route: String,
    pub health: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
    /// The verdict in words, as the terminal gives it.
    pub says: String,
    /// What the server's listener did, in words, with what to do; none if it dropped nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_says: Option<String>,
    #[serde(flatten)]
    pub finding: Finding,
}

/// Every route's verdict, in the order probed.
pub fn verdicts(report: &ProbeReport) -> Verdicts<'_> {
    let verdicts = (report.routes.iter())
        .map(|probe| {
            let finding = probe.finding();
            Judged {
                server: &probe.server,
                route: probe.call.to_string(),
                health: &probe.health,
                expected: probe.expected,
                says: finding.says(),
                network_says: finding.network.says(),
                finding,
            }
        })
        .collect();
    Verdicts {
        environment: &report.environment,
        command: &report.command,
        verdicts,
    }
}

/// The terminal's line for one route: the verdict, then the figures behind it.
pub fn line(probe: &RouteProbe) -> String {
    let finding = probe.finding();
    let mut out = format!("  {}  {}", probe.call, finding.says());
    if let (Some(alone), Some(wall)) = (finding.alone_ms, finding.wall_ms) {
        let _ = write!(
            out,
            "\n    alone {alone:.0} ms; {} at once {wall:.0} ms ({}×){}; {} {}",
            probe.n,
            ratio(finding.ratio),
            once_connected(&finding),
            probe.health,
            health(&finding)
        );
    }
    if let Some(expected) = probe
        .expected
        .filter(|expected| expected.met_by(&finding) == AsExpected::No)
    {
        let _ = write!(out, "\n    expected: {}", expectation(expected));
    }
    match (finding.network.says(), kernel_note(kernel(&probe.trials))) {
        (Some(network), _) => {
            let _ = write!(out, "\n    network: {network}");
        }
        // Machine-wide: no connection of the probe's was dropped, so these may be another's.
        (None, Some(note)) => {
            let _ = write!(
                out,
                "\n    {note} (machine-wide: no connect of the probe's waited)"
            );
        }
        (None, None) => {}
    }
    out
}

/// `, each 205 ms at most once connected`, where the listener's waits made the wall longer
/// than the longest wait once connected; nothing otherwise.
fn once_connected(finding: &Finding) -> String {
    let Some(longest) = finding.once_connected_ms else {
        return String::new();
    };
    match finding.network.requests_resent {
        0 => String::new(),
        _ => format!(", each {longest:.0} ms at most once connected"),
    }
}

/// The health check's p50 and p99 at rest and during the rounds (once connected), and its
/// failures.
fn health(finding: &Finding) -> String {
    let pair = |p50_p99| pair(p50_p99, "/");
    let failed = match finding.health_failed {
        0 => String::new(),
        k => format!(", {k} failed"),
    };
    format!(
        "p50/p99 {} ms at rest, {} ms during{failed}",
        pair(finding.health_at_rest_ms),
        pair(finding.health_during_ms)
    )
}

/// A p50 and a p99 in ms, as `latency` prints each, with `between` between them; "-" for
/// none.
fn pair(p50_p99: Option<[f64; 2]>, between: &str) -> String {
    p50_p99.map_or("-".to_owned(), |[p50, p99]| {
        format!("{}{between}{}", latency(Some(p50)), latency(Some(p99)))
    })
}

fn ratio(ratio: Option<f64>) -> String {
    ratio.map_or("-".to_owned(), |ratio| format!("{ratio:.1}"))
}

/// "serialises, holds the health check", "bounded".
fn expectation(expected: Expected) -> String {
    let holds = if expected.holds_health {
        ", holds the health check"
    } else {
        ""
    };
    format!("{}{holds}", expected.verdict)
}

/// The kernel's counters over every round.
fn kernel(trials: &[Trial]) -> Option<TcpCounters> {
    (trials.iter()).try_fold(TcpCounters::default(), |sum, trial| {
        Some(sum.plus(trial.kernel?))
    })
}

/// `PROBE.md`.
pub fn probe_markdown(report: &ProbeReport) -> String {
    document(
        "The probe: a verdict per route, from outside",
        &report.command,
        &report.environment,
        &[
            parameters(report),
            table(report),
            two_ways(report),
            terminal(report),
            as_shipped(report),
        ],
        &report.failures,
    )
}

fn parameters(report: &ProbeReport) -> String {
    let plan = &report.plan;
    let connections = match plan.health_connections {
        Connections::NewEach => "each on a new connection closed after its answer",
        Connections::KeptAlive => "on one connection kept alive",
    };
    format!(
        "\n## Parameters\n\n- per route: {alone} requests alone, one after another, after one \
         that warms it up; then {trials} rounds of {n} at once, each on a connection of its \
         own, closed after its answer\n- the health check: GET on its path every {every} ms on \
         a fixed schedule, {connections}, each timed from when it was due, from {rest} \
         periods before each round to its last answer\n\
         - a request may take {timeout} ms\n\n",
        alone = plan.alone,
        trials = plan.trials,
        n = plan.concurrency,
        every = plan.every_ms,
        rest = super::REST_CHECKS,
        timeout = plan.timeout_ms,
    )
}

fn table(report: &ProbeReport) -> String {
    let expected = report.routes.iter().any(|probe| probe.expected.is_some());
    let mut out = String::from("## Verdicts\n\n");
    out.push_str(if expected {
        "| server | route | expected | verdict | as expected | alone (ms) | N at once (ms) | ratio | health p50 / p99 at rest (ms) | during (ms) |\n|---|---|---|---|---|---:|---:|---:|---|---|\n"
    } else {
        "| server | route | verdict | alone (ms) | N at once (ms) | ratio | health p50 / p99 at rest (ms) | during (ms) |\n|---|---|---|---:|---:|---:|---|---|\n"
    });
    for probe in &report.routes {
        let finding = probe.finding();
        let pair = |p50_p99| pair(p50_p99, " / ");
        let mut row = format!(
            "| {} | `{}` |",
            cell(&probe.server),
            cell(&probe.call.to_string())
        );
        if expected {
            let _ = write!(
                row,
                " {} | {} | {} |",
                probe.expected.map_or("-".to_owned(), expectation),
                cell(&finding.says()),
                match probe.expected.map(|expected| expected.met_by(&finding)) {
                    Some(AsExpected::Yes) => "yes",
                    Some(AsExpected::No) => "**no**",
                    Some(AsExpected::CannotTell) => "could not tell",
                    None => "-",
                }
            );
        } else {
            let _ = write!(row, " {} |", cell(&finding.says()));
        }
        let _ = writeln!(
            row,
            " {} | {} | {} | {} | {} |",
            whole(finding.alone_ms),
            whole(finding.wall_ms),
            ratio(finding.ratio),
            pair(finding.health_at_rest_ms),
            pair(finding.health_during_ms),
        );
        out.push_str(&row);
    }
    out.push_str(
        "\nN at once: the median of the rounds' walls, from the first send to the last answer; \
         ratio: that over a request alone. The health check's latencies run from when each was \
         due, less the time its connect took.\n\n",
    );
    out.push_str(&listeners(report));
    if let Some(note) = kernel_note(kernel_all(report)) {
        let _ = writeln!(out, "During the rounds, {note} (machine-wide).\n");
    }
    out
}

/// What the servers' listeners did to the routes' connections, a line per route where they
/// dropped some; nothing if none did.
fn listeners(report: &ProbeReport) -> String {
    let dropped: Vec<String> = (report.routes.iter())
        .filter_map(|probe| {
            let network = probe.finding().network.says()?;
            Some(format!(
                "- {} `{}`: {network}\n",
                cell(&probe.server),
                probe.call
            ))
        })
        .collect();
    match dropped.is_empty() {
        true => String::new(),
        false => format!("What the listeners did:\n\n{}\n", dropped.concat()),
    }
}

/// Under load and while it runs, on the server probed on every route: what the probe said of
/// each route beside what the server's own stall detector booked while the probe ran it, and
/// how many blocking routes each caught.
fn two_ways(report: &ProbeReport) -> String {
    let probes: Vec<&RouteProbe> = (report.routes.iter())
        .filter(|probe| probe.server == ALL_ROUTES_ON)
        .collect();
    if probes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## Under load and while it runs, on {ALL_ROUTES_ON}\n\n\
         A `/bad*` route blocks the reactor: the probe *catches* it when it says the route \
         holds the health check; reactor-watch, the server's stall detector (100 ms), when it \
         books a slow poll to the route while the probe runs it. On any other route, either \
         is a *false alarm*.\n\n\
         | route | under load: the probe | while it runs: reactor-watch |\n|---|---|---|\n"
    );
    let mut tally = Tally::default();
    for probe in &probes {
        let finding = probe.finding();
        let probe_says = finding.holds_health == Some(true);
        let watched = probe.stalls.as_ref();
        let booked =
            watched.is_some_and(|seen| seen.routes.iter().any(|r| r.ends_with(path_of(probe))));
        tally.count(path_of(probe).starts_with("/bad"), probe_says, booked);
        let detector = match watched {
            Some(seen) if seen.slow_polls > 0 => format!(
                "{} slow polls, booked to {}",
                seen.slow_polls,
                if seen.routes.is_empty() {
                    "-".to_owned()
                } else {
                    seen.routes.join(", ")
                }
            ),
            Some(_) => "none".to_owned(),
            None => "not read".to_owned(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            path_of(probe),
            cell(&finding.says()),
            detector
        );
    }
    let _ = writeln!(
        out,
        "\nOf {blocking} routes that block, the probe caught {probe_caught} and reactor-watch \
         {watch_caught}; of {other} that do not, the probe raised {probe_false} false alarms and \
         reactor-watch {watch_false}.\n",
        blocking = tally.blocking,
        other = tally.other,
        probe_caught = tally.probe_caught,
        watch_caught = tally.watch_caught,
        probe_false = tally.probe_false,
        watch_false = tally.watch_false,
    );
    out
}

/// How many blocking and other routes each way flagged.
#[derive(Debug, Default)]
struct Tally {
    blocking: usize,
    other: usize,
    probe_caught: usize,
    watch_caught: usize,
    probe_false: usize,
    watch_false: usize,
}

impl Tally {
    fn count(&mut self, blocks: bool, probe: bool, watch: bool) {
        let (count, probe_hits, watch_hits) = match blocks {
            true => (
                &mut self.blocking,
                &mut self.probe_caught,
                &mut self.watch_caught,
            ),
            false => (
                &mut self.other,
                &mut self.probe_false,
                &mut self.watch_false,
            ),
        };
        *count += 1;
        *probe_hits += usize::from(probe);
        *watch_hits += usize::from(watch);
    }
}

/// The route's path, without its query.
fn path_of(probe: &RouteProbe) -> &str {
    probe.call.path.split('?').next().unwrap_or_default()
}

/// The server whose lines [`terminal`] shows: the original demonstration's stack, on its
/// blocking route and its threadpool fix.
pub const SHOWN: (&str, [&str; 2]) = ("fastapi-asyncio", ["/bad", "/ok-def"]);

/// What the terminal showed of [`SHOWN`]'s routes, as `bench-client probe URL --route ...`
/// prints it; nothing if the run has none of them.
fn terminal(report: &ProbeReport) -> String {
    let (server, paths) = SHOWN;
    let lines: Vec<String> = (report.routes.iter())
        .filter(|probe| probe.server == server && paths.contains(&path_of(probe)))
        .map(line)
        .collect();
    text_section("The FastAPI app, as the terminal shows it", &lines)
}

/// What the terminal showed of the servers as they ship, each under its name; nothing if the
/// run has none of them.
fn as_shipped(report: &ProbeReport) -> String {
    let lines: Vec<String> = (AS_SHIPPED.iter())
        .flat_map(|server| {
            let routes = report.routes.iter().filter(|probe| probe.server == *server);
            let lines: Vec<String> = routes.map(line).collect();
            let named = (!lines.is_empty()).then(|| format!("{server}:"));
            named.into_iter().chain(lines)
        })
        .collect();
    text_section("Servers as they ship, as the terminal shows them", &lines)
}

/// A section `title` holding `lines` as text; nothing if there are none.
fn text_section(title: &str, lines: &[String]) -> String {
    match lines.is_empty() {
        true => String::new(),
        false => format!("## {title}\n\n```text\n{}\n```\n\n", lines.join("\n")),
    }
}

/// The kernel's counters over every route's rounds.
fn kernel_all(report: &ProbeReport) -> Option<TcpCounters> {
    (report.routes.iter())
        .map(|probe| kernel(&probe.trials))
        .try_fold(TcpCounters::default(), |sum, counters| {
            Some(sum.plus(counters?))
        })
}
