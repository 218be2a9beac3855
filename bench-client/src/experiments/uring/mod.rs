//! Where io_uring differs: on the two io_uring stacks a blocked reactor holds back answers it
//! has already computed, and a ping sent just before a burst, though served first, may be
//! answered only after it. Each setting is a server, stock or started as variants that change
//! one mechanism each ([`settings`]); each runs `trials` bursts of `/bad` on connections already
//! open ([`trial`]), with no ping (are the answers held?), then with a ping leading the burst
//! by each of `leads` (on the settings that run them: is the ping served first, and is its
//! answer held?).
//!
//! A burst's outcome is read from when its answers came: grouped where two came less than
//! half a sleep apart, one group per answer is one per sleep, as on an epoll stack
//! ([`Held::OnePerSleep`]); one group is every answer held to the last ([`Held::AllHeld`]).
//! Beside it, the server's record of when each handler ended, which shows them one per sleep
//! whatever the client saw.

use std::path::Path;
use std::time::Duration;

use demo_contract::Route;
use demo_contract::variant::{self, Variant, runs_in};
use serde::{Deserialize, Serialize};
use stacks::Driver;

use crate::Error;
use crate::experiments::claims::Claim;
use crate::experiments::{Code, Experiment, JobRun, job_run};
use crate::progress::Stage;
use burst_meter::environment::Environment;
use burst_meter::session::{self, Event, Failure, Running, ServerSetup, Step};
use burst_meter::target::{self, Target};
use burst_meter::wire::Request;
use burst_meter::work::WorkPath;

mod args;
mod claims;
pub mod tally;
pub mod trial;
pub mod views;

pub use args::UringArgs;

/// Where io_uring differs, in [`crate::experiments::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Uring;

/// The io_uring experiment's plan, its settings, and where their servers are.
#[derive(Debug)]
pub struct Planned {
    pub plan: UringPlan,
    pub settings: Vec<Setting>,
    pub bin_dir: std::path::PathBuf,
}

impl Experiment for Uring {
    const NAME: &'static str = "uring";
    const TITLE: &'static str = "where io_uring differs";
    const RECORD: &'static str = "uring.json";
    const CLAIMS: &'static [&'static [Claim<UringReport>]] = &[claims::CLAIMS];
    const CODE: Code = Code {
        own: &["bench-client/src/experiments/uring"],
        drives_servers: true,
        reads_servers: false,
    };
    const JOB: &'static [JobRun] = &[job_run(
        "where io_uring differs (results/uring/)",
        &["--out", "results/uring"],
    )];

    type Args = UringArgs;
    type Plan = Planned;
    type Step = Vec<UringTrial>;
    type Record = UringReport;

    fn plan(args: &UringArgs) -> (Planned, Vec<String>) {
        let servers: Vec<&str> = args.servers.iter().map(String::as_str).collect();
        let planned = Planned {
            plan: args.plan(),
            settings: settings_of(&servers),
            bin_dir: (args.bin_dir.clone()).unwrap_or_else(target::default_bin_dir),
        };
        (planned, Vec::new())
    }

    fn out(args: &UringArgs) -> &Path {
        &args.out
    }

    fn stage(planned: &Planned, title: &str) -> Stage {
        planned
            .plan
            .stage(title, &planned.settings, &planned.bin_dir)
    }

    async fn run(
        planned: Planned,
        environment: Environment,
        command: String,
        on: &mut impl FnMut(Event<'_, Vec<UringTrial>>),
    ) -> UringReport {
        uring(planned, environment, command, on).await
    }

    fn views(report: &UringReport) -> Result<Vec<(String, String)>, Error> {
        views::views(report)
    }

    fn failures(report: &UringReport) -> usize {
        report.failures.len()
    }
}

pub use tally::{Held, HeldTally, OrderTally, PingAnswer, held_of, ping_answer_of};
pub use trial::UringTrial;

/// The experiment's defaults.
pub mod defaults {
    /// Trials per setting and lead: ten, as every setting's outcome so far was the same in
    /// nearly every trial, and the settings and leads make most of the trials.
    pub const TRIALS: usize = 10;
    /// Half a sleep (the grouping of answers) is 25 ms, far over the gaps between answers
    /// written together. Not shorter: at 25 ms, stock ntex's answer to a ping sent with the
    /// burst came within a sleep in 3 trials of 10, against 10 of 10 at 50 ms.
    pub const SLEEP_MS: u64 = 50;
    pub const CONCURRENCY: usize = 10;
    /// How long the ping leads the burst, in ms: from none to a lead long past the server's
    /// turn around its loop (1 ms).
    pub const LEADS_MS: [f64; 3] = [0.0, 0.1, 1.0];
}

/// The route of the burst.
const BAD: WorkPath = WorkPath::canonical(Route::Bad);

/// The pause between two trials on one server, for it to close the last trial's connections.
const BETWEEN_TRIALS: Duration = Duration::from_millis(50);

/// A server as the experiment runs it: stock, or started as one of its variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub server: &'static str,
    pub variant: Option<&'static Variant>,
    /// Whether it runs the order-of-service trials too.
    pub order: bool,
}

/// Every setting, in the order they run: each io_uring stack stock, then as each of its
/// variants tagged `uring` (bursts only) or `uring-order` (the ping's trials too), in its
/// description's order.
pub fn settings() -> Vec<Setting> {
    let of = |stack: &'static stacks::Stack| {
        let variants = variant::of_server(&stack.name).filter_map(|variant| {
            let order = variant.runs_in(runs_in::URING_ORDER);
            (order || variant.runs_in(runs_in::URING)).then_some((Some(variant), order))
        });
        (std::iter::once((None, true)).chain(variants)).map(|(variant, order)| Setting {
            server: stack.name.as_str(),
            variant,
            order,
        })
    };
    stacks::of(Driver::IoUring).flat_map(of).collect()
}

impl Setting {
    /// The server's name, with what its variant changes in brackets.
    pub fn label(&self) -> String {
        self.variant.map_or_else(
            || self.server.to_owned(),
            |variant| variant.label.to_owned(),
        )
    }

    /// The server in `bin_dir`, started as its variant, at one reactor thread.
    pub fn target(&self, bin_dir: &Path) -> Target {
        match self.variant {
            Some(variant) => Target::variant(variant, bin_dir),
            None => Target::server(self.server, bin_dir),
        }
    }
}

/// The settings of `servers`, in [`settings`]' order.
pub fn settings_of(servers: &[&str]) -> Vec<Setting> {
    (settings().into_iter())
        .filter(|setting| servers.contains(&setting.server))
        .collect()
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UringPlan {
    pub trials: usize,
    pub sleep_ms: u64,
    pub concurrency: usize,
    pub leads_ms: Vec<f64>,
}

impl Default for UringPlan {
    fn default() -> UringPlan {
        UringPlan {
            trials: defaults::TRIALS,
            sleep_ms: defaults::SLEEP_MS,
            concurrency: defaults::CONCURRENCY,
            leads_ms: defaults::LEADS_MS.to_vec(),
        }
    }
}

/// One step on a setting: `trials` bursts, with no ping or with one leading by `lead_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct UringStep {
    pub lead_ms: Option<f64>,
    pub trials: usize,
    floor: Duration,
}

impl Step for UringStep {
    fn route(&self) -> WorkPath {
        BAD
    }

    fn describe(&self) -> String {
        match self.lead_ms {
            None => format!("/bad, no ping ({} trials)", self.trials),
            Some(lead) => format!("/bad, a ping {lead} ms before ({} trials)", self.trials),
        }
    }

    fn floor(&self, _target: &str, _threads: usize) -> Duration {
        self.floor
    }
}

impl UringPlan {
    /// How the servers are started: one reactor thread, recording their events.
    pub fn setup(&self) -> ServerSetup {
        ServerSetup {
            sleep_ms: self.sleep_ms,
            events: true,
            ..ServerSetup::default()
        }
    }

    /// The steps on `setting`: the bursts with no ping, then, if it runs them, each lead's.
    pub fn steps(&self, setting: &Setting) -> Vec<UringStep> {
        let burst = Duration::from_millis(self.sleep_ms) * self.concurrency as u32;
        let floor = (burst + BETWEEN_TRIALS) * self.trials as u32;
        let leads = (self.leads_ms.iter()).filter(|_| setting.order);
        (std::iter::once(None).chain(leads.map(|&lead| Some(lead))))
            .map(|lead_ms| UringStep {
                lead_ms,
                trials: self.trials,
                floor,
            })
            .collect()
    }

    /// The plan on `settings` (found in `bin_dir`), for the progress view.
    pub fn stage(&self, name: &str, settings: &[Setting], bin_dir: &Path) -> Stage {
        let stages: Vec<Stage> = (settings.iter())
            .map(|setting| {
                let target = setting.target(bin_dir);
                Stage::of(name, &[(&target, 1)], &self.steps(setting))
            })
            .collect();
        Stage {
            name: name.to_owned(),
            steps: stages.iter().map(|stage| stage.steps).sum(),
            estimate: stages.iter().map(|stage| stage.estimate).sum(),
        }
    }
}

/// What a setting changes, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingRecord {
    pub label: String,
    pub server: String,
    /// Each variant's arguments (`--variant NAME`) and what it changes (`flips` in records
    /// from before the name changed).
    #[serde(alias = "flips")]
    pub variants: Vec<(String, String)>,
}

/// Everything one run produced: `uring.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UringReport {
    pub environment: Environment,
    pub plan: UringPlan,
    pub command: String,
    pub settings: Vec<SettingRecord>,
    pub held: Vec<HeldTally>,
    pub order: Vec<OrderTally>,
    pub trials: Vec<UringTrial>,
    pub failures: Vec<Failure>,
}

/// The experiment from its first trial to its record, measured in `environment`.
pub async fn uring(
    Planned {
        plan,
        settings,
        bin_dir,
    }: Planned,
    environment: Environment,
    command: String,
    on: &mut impl FnMut(Event<'_, Vec<UringTrial>>),
) -> UringReport {
    let mut outcome = session::Outcome::default();
    for setting in &settings {
        let ran = run(setting, &bin_dir, &plan, on).await;
        outcome.measured.extend(ran.measured.into_iter().flatten());
        outcome.failures.extend(ran.failures);
    }
    let trials: Vec<UringTrial> = outcome.measured;
    UringReport {
        environment,
        command,
        settings: settings.iter().map(record).collect(),
        held: tally::held(&trials, plan.sleep_ms),
        order: tally::order(&trials, plan.sleep_ms),
        trials,
        plan,
        failures: outcome.failures,
    }
}

fn record(setting: &Setting) -> SettingRecord {
    SettingRecord {
        label: setting.label(),
        server: setting.server.to_owned(),
        variants: (setting.variant.iter())
            .map(|variant| (variant.args().join(" "), variant.about.to_owned()))
            .collect(),
    }
}

/// Every step of `setting`, on one server started for them all.
pub async fn run(
    setting: &Setting,
    bin_dir: &Path,
    plan: &UringPlan,
    on: &mut impl FnMut(Event<'_, Vec<UringTrial>>),
) -> session::Outcome<Vec<UringTrial>> {
    let target = setting.target(bin_dir);
    let label = setting.label();
    let measure = async |running: &Running, step: &UringStep| {
        let burst = trial::PlacedBurst {
            running,
            n: plan.concurrency,
            bad: Request::get(&running.endpoint, BAD.path()),
            ping: Request::get(&running.endpoint, Route::Ping.path()),
            lead: (step.lead_ms).map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        };
        let mut trials = Vec::with_capacity(step.trials);
        for index in 0..step.trials {
            trials.push(burst.trial(&label, index).await);
            tokio::time::sleep(BETWEEN_TRIALS).await;
        }
        trials
    };
    let steps = plan.steps(setting);
    session::run_each(&[(&target, 1)], &plan.setup(), &steps, on, measure).await
}
