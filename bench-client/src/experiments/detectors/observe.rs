//! One step on one (detector, stack): the load it runs and what the detector printed.

use std::time::{Duration, Instant};

use demo_contract::Route;

use serde::{Deserialize, Serialize};

use burst_meter::burst::{self, Connect, ErrorCount};
use burst_meter::case;
use burst_meter::session::Running;
use burst_meter::work::WorkPath;

use super::*;

/// One line a detector printed, and when the client read it, from the step's first send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportLine {
    pub at_ms: f64,
    pub text: String,
}

/// One step on one (detector, stack).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub detector: String,
    /// The server, by its own name.
    pub stack: String,
    pub phase: Phase,
    pub route: String,
    pub n: usize,
    pub ms: u64,
    /// From the first send to the last answer.
    pub wall_ms: f64,
    /// Requests that failed, and in a cost round failed pings too.
    pub failed: usize,
    pub errors: Vec<ErrorCount>,
    /// A cost round's closed-loop ping p50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_p50_ms: Option<f64>,
    /// The detector's lines read from the step's start until the plan's `listen_after_ms`
    /// past the last answer.
    pub reports: Vec<ReportLine>,
}

impl Observation {
    /// Whether every request was answered: a step with a failed request gets no verdict.
    pub fn complete(&self) -> bool {
        self.failed == 0
    }

    /// How long after the first send the detector first reported, if it did.
    pub fn first_report_ms(&self) -> Option<f64> {
        self.reports.first().map(|line| line.at_ms)
    }

    /// Whether any report names the route, by its path.
    pub fn names_route(&self) -> bool {
        self.reports
            .iter()
            .any(|line| line.text.contains(&self.route))
    }
}

/// Runs one step on a running server and reads what the detector printed meanwhile.
pub(super) async fn observe(
    running: &Running,
    run: &DetectorRun,
    step: &PhaseStep,
    plan: &DetectorsPlan,
) -> Observation {
    let start = Instant::now();
    let measured = match step.phase {
        Phase::Cost(_) => cost(running, plan).await,
        _ => load(running, step).await,
    };
    tokio::time::sleep(Duration::from_millis(plan.listen_after_ms)).await;
    let lines =
        (running.server.as_ref()).map_or_else(Vec::new, |server| server.stderr().since(start));
    let detector = run.detector;
    let here = here();
    let reports = (lines.into_iter())
        .filter(|(_, text)| detector != BASELINE && text.contains(detector.marker))
        .map(|(at, text)| ReportLine {
            at_ms: burst_meter::units::millis(at),
            text: relative_paths(&text, &here),
        })
        .collect();
    Observation {
        detector: detector.name.to_owned(),
        stack: run.stack.clone(),
        phase: step.phase,
        route: step.route.path().to_owned(),
        n: step.n,
        ms: step.ms,
        wall_ms: measured.wall_ms,
        failed: measured.failed,
        errors: measured.errors,
        ping_p50_ms: measured.ping_p50_ms,
        reports,
    }
}

/// The folder the client runs in (the repository's root, in the main job), with a
/// trailing `/`; empty if unknown.
fn here() -> String {
    std::env::current_dir().map_or_else(|_| String::new(), |dir| format!("{}/", dir.display()))
}

/// `text` with each path under `here` written relative to it: a detector quotes its own
/// source files (asyncio's debug mode names the coroutine's file), and a record names no
/// machine's folders.
fn relative_paths(text: &str, here: &str) -> String {
    if here.len() > 1 {
        text.replace(here, "")
    } else {
        text.to_owned()
    }
}

/// What a step's requests showed.
struct Measured {
    wall_ms: f64,
    failed: usize,
    errors: Vec<ErrorCount>,
    ping_p50_ms: Option<f64>,
}

/// A workload step: its burst, connecting during it.
async fn load(running: &Running, step: &PhaseStep) -> Measured {
    let timeout = step.expected() * 2 + burst::REQUEST_TIMEOUT;
    let path = step.path_and_query();
    let burst = burst::fire(&running.endpoint, &path, step.n, timeout, Connect::During).await;
    Measured {
        wall_ms: burst.wall_ms(),
        failed: burst.err(),
        errors: burst.errors(),
        ping_p50_ms: None,
    }
}

/// A cost round: the comparison's case of the plan's cost, closed-loop ping and all.
async fn cost(running: &Running, plan: &DetectorsPlan) -> Measured {
    let route = WorkPath::canonical(Route::OkAwait);
    let case = case::measure(running, route, &plan.cost_plan(), None).await;
    let ping = case.closed_loop.as_ref();
    let ping_failed = ping.map_or(1, |ping| ping.errors);
    Measured {
        wall_ms: case.wall_ms,
        failed: case.err + ping_failed,
        errors: case.errors,
        ping_p50_ms: ping.and_then(|ping| ping.p50_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::relative_paths;

    #[test]
    fn a_quoted_path_under_the_root_is_written_relative_to_it() {
        let line = "Executing <Task coro=<run() defined at /srv/repo/reference/fastapi/.venv/x.py:4>> \
                    took 0.201 seconds";
        assert_eq!(
            relative_paths(line, "/srv/repo/"),
            "Executing <Task coro=<run() defined at reference/fastapi/.venv/x.py:4>> took 0.201 seconds"
        );
        assert_eq!(
            relative_paths("/elsewhere/x.py", "/srv/repo/"),
            "/elsewhere/x.py"
        );
        assert_eq!(relative_paths("/srv/repo/x.py", ""), "/srv/repo/x.py");
    }
}
