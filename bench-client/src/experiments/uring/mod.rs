//! Where io_uring differs: on the two io_uring stacks a blocked reactor holds back answers it
//! has already computed, and a ping sent just before a burst, though served first, may be
//! answered only after it. Each setting is a server, stock or with flips that change one
//! mechanism each ([`SETTINGS`]); each runs `trials` bursts of `/bad` on connections already
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
use demo_contract::variant::{
    COMPIO_EPOLL, COMPIO_EVENT_INTERVAL_1, COMPIO_SQPOLL, NTEX_DIRECT_WRITE, NTEX_EPOLL,
    NTEX_EVENT_INTERVAL_2, Variant,
};
use serde::{Deserialize, Serialize};

use crate::measure::environment::Environment;
use crate::measure::session::{self, Event, Failure, Running, ServerSetup, Step};
use crate::measure::target::{Launcher, Target};
use crate::measure::wire::Request;
use crate::measure::work::WorkPath;
use crate::progress::Stage;

pub mod tally;
pub mod trial;

pub use tally::{Held, HeldTally, OrderTally, PingAnswer, held_of, ping_answer_of};
pub use trial::Trial;

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

/// A server as the experiment runs it: stock, or with `flips` (each a variant's variable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub server: &'static str,
    pub flips: &'static [Variant],
    /// Whether it runs the order-of-service trials too.
    pub order: bool,
}

/// Every setting, in the order they run: each io_uring server stock, then each flip alone,
/// and on ntex the two that free its answers only together.
pub const SETTINGS: [Setting; 9] = [
    Setting::of("demo-axum-compio", &[], true),
    Setting::of("demo-axum-compio", &[COMPIO_EPOLL], true),
    Setting::of("demo-axum-compio", &[COMPIO_SQPOLL], true),
    Setting::of("demo-axum-compio", &[COMPIO_EVENT_INTERVAL_1], true),
    Setting::of("demo-ntex", &[], true),
    Setting::of("demo-ntex", &[NTEX_EPOLL], false),
    Setting::of("demo-ntex", &[NTEX_DIRECT_WRITE], false),
    Setting::of("demo-ntex", &[NTEX_EPOLL, NTEX_DIRECT_WRITE], true),
    Setting::of("demo-ntex", &[NTEX_EVENT_INTERVAL_2], false),
];

impl Setting {
    const fn of(server: &'static str, flips: &'static [Variant], order: bool) -> Setting {
        Setting {
            server,
            flips,
            order,
        }
    }

    /// The server's name, with what each flip changes in brackets (the variants' own words).
    pub fn label(&self) -> String {
        let changes: Vec<&str> = (self.flips.iter())
            .map(|flip| {
                let inner = flip
                    .label
                    .split_once(" (")
                    .map_or(flip.label, |(_, rest)| rest);
                inner.trim_end_matches(')')
            })
            .collect();
        match changes.is_empty() {
            true => self.server.to_owned(),
            false => format!("{} ({})", self.server, changes.join(" + ")),
        }
    }

    /// The server in `bin_dir`, with each flip's variable set to `1`, at one reactor thread.
    pub fn target(&self, bin_dir: &Path) -> Target {
        let env = (self.flips.iter())
            .map(|flip| (flip.variable.to_owned(), "1".to_owned()))
            .collect();
        Target::Spawn {
            name: self.label(),
            launcher: Launcher {
                env,
                only_threads: Some(1),
                ..Launcher::program(bin_dir.join(self.server))
            },
        }
    }
}

/// The settings of `servers`, in [`SETTINGS`]' order.
pub fn settings_of(servers: &[&str]) -> Vec<Setting> {
    (SETTINGS.iter().copied())
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
    estimate: Duration,
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

    fn estimate(&self, _threads: usize) -> Duration {
        self.estimate
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
        let estimate = (burst + BETWEEN_TRIALS) * self.trials as u32;
        let leads = (self.leads_ms.iter()).filter(|_| setting.order);
        (std::iter::once(None).chain(leads.map(|&lead| Some(lead))))
            .map(|lead_ms| UringStep {
                lead_ms,
                trials: self.trials,
                estimate,
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
    /// Each flip's variable and what it changes.
    pub flips: Vec<(String, String)>,
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
    pub trials: Vec<Trial>,
    pub failures: Vec<Failure>,
}

/// The experiment from its first trial to its report, written into `out`.
pub async fn uring(
    settings: &[Setting],
    bin_dir: &Path,
    plan: UringPlan,
    command: String,
    out: &Path,
    on: &mut impl FnMut(Event<'_, Vec<Trial>>),
) -> Result<UringReport, String> {
    let environment = Environment::capture(crate::stamps::URING);
    let mut outcome = session::Outcome::default();
    for setting in settings {
        let ran = run(setting, bin_dir, &plan, on).await;
        outcome.measured.extend(ran.measured.into_iter().flatten());
        outcome.failures.extend(ran.failures);
    }
    let trials: Vec<Trial> = outcome.measured;
    let report = UringReport {
        environment,
        command,
        settings: settings.iter().map(record).collect(),
        held: tally::held(&trials, plan.sleep_ms),
        order: tally::order(&trials, plan.sleep_ms),
        trials,
        plan,
        failures: outcome.failures,
    };
    report.write(out).map_err(super::cannot_write(out))?;
    Ok(report)
}

fn record(setting: &Setting) -> SettingRecord {
    SettingRecord {
        label: setting.label(),
        server: setting.server.to_owned(),
        flips: (setting.flips.iter())
            .map(|flip| (flip.variable.to_owned(), flip.about.to_owned()))
            .collect(),
    }
}

/// Every step of `setting`, on one server started for them all.
pub async fn run(
    setting: &Setting,
    bin_dir: &Path,
    plan: &UringPlan,
    on: &mut impl FnMut(Event<'_, Vec<Trial>>),
) -> session::Outcome<Vec<Trial>> {
    let target = setting.target(bin_dir);
    let label = setting.label();
    let measure = async |running: &Running, step: &UringStep| {
        let burst = trial::Burst {
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
