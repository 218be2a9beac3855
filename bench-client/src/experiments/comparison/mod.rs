//! The comparison: the original experiment, on every target. For each target and each work
//! route, the probes start on their own keep-alive connections, the burst follows after a
//! short head start, then the probes stop. The protocol, step by step, is in
//! `docs/protocol.md`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun};
use crate::progress::Stage;
use burst_meter::case::{Case, HEAD_START, Plan, run_plan, schedule};
use burst_meter::environment::Environment;
use burst_meter::session::{Event, Failure, Outcome, PAUSE};
use burst_meter::target::Target;

mod args;
mod claims;
mod job;
pub mod views;

pub use args::ComparisonArgs;

/// The plan on `targets`, for the progress view: how many cases, and what they should take.
pub fn stage(plan: &Plan, name: &str, targets: &[Target]) -> Stage {
    Stage::of(name, &schedule(targets, plan), &plan.steps())
}

/// The comparison, in [`crate::experiments::ALL`]: the bare command line.
#[derive(Debug, Clone, Copy)]
pub struct Comparison;

impl Experiment for Comparison {
    const NAME: &'static str = "comparison";
    const TITLE: &'static str = "the comparison";
    const RECORD: &'static str = "results.json";
    const CLAIMS: &'static [&'static [Claim<Report>]] = claims::GROUPS;
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/comparison"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &job::RUNS;
    const BARE: bool = true;

    type Args = ComparisonArgs;
    type Plan = (Plan, Vec<Target>);
    type Step = Case;
    type Record = Report;

    fn plan(args: &ComparisonArgs) -> ((Plan, Vec<Target>), Vec<String>) {
        let (targets, notes) = args.targets();
        ((args.plan(), targets), notes)
    }

    fn out(args: &ComparisonArgs) -> &Path {
        &args.out
    }

    fn stage((plan, targets): &(Plan, Vec<Target>), title: &str) -> Stage {
        stage(plan, title, targets)
    }

    async fn run(
        (plan, targets): (Plan, Vec<Target>),
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Case>),
    ) -> Report {
        compare(&targets, plan, environment, command, on).await
    }

    fn views(report: &Report) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &Report) -> usize {
        report.failures.len()
    }

    fn floor_measured(planned: Duration, report: &Report) -> Duration {
        report.plan.floor_measured(planned, &report.cases)
    }

    /// Each case's block as the original bench printed it, under its server's heading.
    fn told(event: &Event<'_, Case>) -> Option<String> {
        match event {
            Event::Starting { target, threads } => Some(format!(
                "\n##### {target} ({})",
                crate::report::text::reactor_threads(*threads)
            )),
            Event::Measured(case) => Some(views::terminal::block(case)),
            Event::Running { .. } | Event::Failed(_) => None,
        }
    }

    /// The README's block, if `--readme` asks for it and this run may stand for it.
    fn after(args: &ComparisonArgs, report: &Report) -> Result<Option<String>, Error> {
        let Some(readme) = &args.readme else {
            return Ok(None);
        };
        views::readme::refresh_if_full(report, readme, args.is_full_comparison()).map(Some)
    }
}

/// Everything one comparison run produced: what `results.json` holds.
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

impl Report {
    /// The targets that have cases, in the order they were measured.
    pub fn targets(&self) -> Vec<&str> {
        let mut targets: Vec<&str> = self.cases.iter().map(|case| case.target.as_str()).collect();
        targets.dedup();
        targets
    }
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

/// The comparison from its first case to its record, measured in `environment`; `command` is
/// the command line the record says made it.
pub async fn compare(
    targets: &[Target],
    plan: Plan,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Case>),
) -> Report {
    let started = Instant::now();
    let Outcome { measured, failures } = run_plan(targets, &plan, on).await;
    let bursts_s = measured.iter().map(|case| case.wall_ms / 1000.0).sum();
    let timing = Timing {
        total_s: started.elapsed().as_secs_f64(),
        bursts_s,
        protocol_waits_s: measured.len() as f64 * (HEAD_START + PAUSE).as_secs_f64(),
    };
    Report {
        environment,
        command,
        plan,
        timing,
        cases: measured,
        failures,
    }
}
