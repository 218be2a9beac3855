//! The life of one target in a run: started (if it is ours to start) and warmed up, measured
//! step by step while we watch that it stays alive, then stopped. The comparison and the
//! sweep both go through [`run_each`]; they differ only in what one step measures.
//!
//! Targets run one after another, never side by side: they would share the machine's cores.

use std::process::ExitStatus;
use std::time::Duration;

use demo_contract::Pong;
use serde::{Deserialize, Serialize};

use crate::cpu::{CpuMeter, CpuUse};
use crate::http::{Endpoint, get_once};
use crate::kernel::TcpCounters;
use crate::target::{HEALTH_PORT_FLAG, ServerProcess, StderrTail, Target, TargetError};
use crate::work::WorkPath;

/// How long the warm-up may take to reach a target: an unreachable one is reported in
/// seconds, not after a ping's 10 s timeout.
pub const REACH_WITHIN: Duration = Duration::from_secs(3);

/// The pause after each step, so that one step's connections are closed before the next.
pub const PAUSE: Duration = Duration::from_millis(20);

/// Why a target, or one of its steps, could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Start(#[from] TargetError),
    #[error("cannot reach {endpoint}/ping: {reason}")]
    Unreachable { endpoint: Endpoint, reason: String },
    #[error("{endpoint}/ping answered {status}")]
    PingStatus { endpoint: Endpoint, status: u16 },
    #[error("the server died during the case ({status}){stderr}")]
    Died {
        status: ExitStatus,
        stderr: StderrTail,
    },
    #[error("did not stop cleanly: {0}")]
    Unclean(ExitStatus),
    #[error("could not be stopped: {0}")]
    Stop(std::io::Error),
}

/// A target, or one of its steps, that could not be measured: what the reports list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub target: String,
    pub reactor_threads: usize,
    /// The case it failed in; `None` if the target failed before or after its cases.
    pub route: Option<String>,
    pub reason: String,
}

impl Failure {
    /// `target` at `reactor_threads` failed, in `route` if it got that far, for `reason`.
    pub fn new(
        target: &str,
        reactor_threads: usize,
        route: Option<WorkPath>,
        reason: String,
    ) -> Failure {
        Failure {
            target: target.to_owned(),
            reactor_threads,
            route: route.map(|route| route.path().to_owned()),
            reason,
        }
    }
}

/// How the servers we spawn are set up, beyond their reactor threads: what a plan passes
/// on their command lines. An external target gets only the sleep, as `?ms=`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSetup {
    /// The sleep of a work request, in ms (`--sleep-ms`).
    pub sleep_ms: u64,
    #[serde(flatten)]
    pub options: ServerOptions,
    /// Whether the server records its order of events (`--events`, read by `GET /events`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub events: bool,
    /// With a period in ms, the server serves its health check on a port of its own
    /// (`--health-port 0`, the URL it prints then read: `ServerProcess::health`), failing for
    /// that long after a stall ends (`--health-period-ms`): the probes' period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_period_ms: Option<u64>,
    /// The flags that point the server at the hidden blockers' fixtures (`--upstream`,
    /// `--db`, `--file`: [`crate::fixtures::Fixtures::server_args`]); empty if the plan has
    /// none of their routes.
    #[serde(skip)]
    pub fixtures: Vec<String>,
}

/// What a plan may change of a spawned server's own defaults, recorded in the plan as it ran:
/// one type for every plan that takes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerOptions {
    /// The blocking pool's size (`--blocking-threads`); `None`: the runtime's own default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking_threads: Option<usize>,
    /// The stall detector's threshold (`--stall-ms`; 0 turns it off); `None`: the server's
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ms: Option<u64>,
}

impl ServerOptions {
    /// The stall detector off: its watchdog wakes up on its own.
    pub const DETECTOR_OFF: ServerOptions = ServerOptions {
        blocking_threads: None,
        stall_ms: Some(0),
    };
}

impl ServerSetup {
    /// The command line of a server with `threads` reactor threads.
    fn args(&self, threads: usize) -> Vec<String> {
        let mut args = vec![
            "--threads".to_owned(),
            threads.to_string(),
            "--sleep-ms".to_owned(),
            self.sleep_ms.to_string(),
        ];
        if let Some(blocking) = self.options.blocking_threads {
            args.extend(["--blocking-threads".to_owned(), blocking.to_string()]);
        }
        if let Some(stall_ms) = self.options.stall_ms {
            args.extend(["--stall-ms".to_owned(), stall_ms.to_string()]);
        }
        if self.events {
            args.push("--events".to_owned());
        }
        if let Some(period_ms) = self.health_period_ms {
            args.extend([HEALTH_PORT_FLAG.to_owned(), "0".to_owned()]);
            args.extend(["--health-period-ms".to_owned(), period_ms.to_string()]);
        }
        args.extend(self.fixtures.iter().cloned());
        args
    }
}

/// A target ready to measure: started if it is ours to start, and warmed up.
#[derive(Debug)]
pub struct Running {
    /// The target's name in the reports.
    pub label: String,
    /// The reactor threads asked for.
    pub threads: usize,
    /// The spawned server; `None` for an external target.
    pub server: Option<ServerProcess>,
    pub endpoint: Endpoint,
    /// Appended to each work route: `?ms=` for an external target, which we cannot start
    /// with `--sleep-ms`.
    pub query: String,
    /// The server's description of itself, if it gives one (an external app may not).
    pub pong: Option<Pong>,
}

impl Running {
    /// Spawns the target (with `threads` reactor threads, set up as `setup` says) or takes
    /// its URL, then warms it up.
    pub async fn start(
        target: &Target,
        threads: usize,
        setup: &ServerSetup,
    ) -> Result<Running, SessionError> {
        let (server, endpoint, query) = match target {
            Target::Spawn { name, launcher } => {
                let server = launcher.start(name, &setup.args(threads)).await?;
                let endpoint = server.endpoint().clone();
                (Some(server), endpoint, String::new())
            }
            Target::External { endpoint, .. } => {
                (None, endpoint.clone(), format!("?ms={}", setup.sleep_ms))
            }
        };
        // On failure `server` is dropped here, which stops it.
        let pong = warm_up(&endpoint).await?;
        Ok(Running {
            label: target.label().to_owned(),
            threads,
            server,
            endpoint,
            query,
            pong,
        })
    }

    /// The executor, as the server's `/ping` described it.
    pub fn runtime(&self) -> Option<String> {
        self.pong.as_ref().map(|pong| pong.runtime.clone())
    }

    /// The reactor threads the server says it runs, or else the count asked for.
    pub fn reactor_threads(&self) -> usize {
        self.pong
            .as_ref()
            .map_or(self.threads, |pong| pong.reactor_threads)
    }

    /// Why the spawned server is gone, if it died.
    pub fn died(&mut self) -> Option<SessionError> {
        let server = self.server.as_mut()?;
        let status = server.exited()?;
        Some(SessionError::Died {
            status,
            stderr: server.stderr().clone(),
        })
    }

    /// Stops a spawned server; one that does not exit cleanly is a failure of its own.
    pub async fn finish(self) -> Result<(), SessionError> {
        let Some(server) = self.server else {
            return Ok(());
        };
        match server.stop().await {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(SessionError::Unclean(status)),
            Err(error) => Err(SessionError::Stop(error)),
        }
    }
}

/// One `GET /ping` before measuring: the first connection and the lazy set-up of each
/// stack are paid here, not in the first case. Returns the server's self-description if it
/// gives one.
async fn warm_up(endpoint: &Endpoint) -> Result<Option<Pong>, SessionError> {
    match get_once(endpoint, "/ping", REACH_WITHIN).await {
        Ok(reply) if reply.status == 200 => Ok(reply.json::<Pong>()),
        Ok(reply) => Err(SessionError::PingStatus {
            endpoint: endpoint.clone(),
            status: reply.status,
        }),
        Err(error) => Err(SessionError::Unreachable {
            endpoint: endpoint.clone(),
            reason: error.describe(),
        }),
    }
}

/// What else could have set a step's figures: the kernel dropping or retransmitting
/// connections, and the client's CPU against the server's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Confounders {
    /// What the kernel's TCP counters rose by during the step, machine-wide; `None` where
    /// they cannot be read. Any rise means some latency here was the kernel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<TcpCounters>,
    /// The CPU time the client and the server spent during the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
}

impl Confounders {
    /// This and `other` added up, each part only where both have it: for figures pooled over
    /// several steps.
    pub fn plus(self, other: Confounders) -> Confounders {
        Confounders {
            kernel: Option::zip(self.kernel, other.kernel).map(|(a, b)| a.plus(b)),
            cpu: Option::zip(self.cpu, other.cpu).map(|(a, b)| a.plus(b)),
        }
    }
}

/// Reads the [`Confounders`] of one step: started before it, stopped after.
#[derive(Debug)]
pub struct ConfounderMeter {
    counters: Option<TcpCounters>,
    cpu: CpuMeter,
}

impl ConfounderMeter {
    pub fn start(running: &Running) -> ConfounderMeter {
        let server = running.server.as_ref().and_then(ServerProcess::pid);
        ConfounderMeter {
            counters: TcpCounters::read(),
            cpu: CpuMeter::start(server),
        }
    }

    pub fn stop(self) -> Confounders {
        let counters = Option::zip(TcpCounters::read(), self.counters);
        Confounders {
            kernel: counters.map(|(after, before)| after.since(before)),
            cpu: self.cpu.stop(),
        }
    }
}

/// One unit of measurement on a running target: a case of the comparison, a point of the
/// sweep, a pause at rest.
pub trait Step {
    /// The route it measures, for a failure report.
    fn route(&self) -> WorkPath;
    /// What the progress line says while it runs.
    fn describe(&self) -> String;
    /// The least time measuring it can take on the target labelled `target`, with `threads`
    /// reactor threads: what its plan forces (its sleeps as the protocol's ideals place them,
    /// on the target's pool as its stack describes it, its fixed waits; [`PAUSE`] is added by
    /// the session), which no quicker client could save. The progress view's time left is
    /// made of these, scaled by how the steps done compared.
    fn floor(&self, target: &str, threads: usize) -> Duration;
}

/// What happens while a run goes on, for the terminal.
#[derive(Debug)]
pub enum Event<'a, T> {
    Starting {
        target: &'a str,
        threads: usize,
    },
    /// A step starts, and should take `estimate`.
    Running {
        target: &'a str,
        step: String,
        estimate: Duration,
    },
    Measured(&'a T),
    Failed(&'a Failure),
}

impl<'a, T> Event<'a, T> {
    /// The same event for a watcher of another kind of measurement: `None` for `Measured`,
    /// whose measurement is of this kind only.
    pub fn untyped<U>(&self) -> Option<Event<'a, U>> {
        match *self {
            Event::Starting { target, threads } => Some(Event::Starting { target, threads }),
            Event::Running {
                target,
                ref step,
                estimate,
            } => Some(Event::Running {
                target,
                step: step.clone(),
                estimate,
            }),
            Event::Measured(_) => None,
            Event::Failed(failure) => Some(Event::Failed(failure)),
        }
    }
}

/// Everything a run measured, and what it could not.
#[derive(Debug)]
pub struct Outcome<T> {
    pub measured: Vec<T>,
    pub failures: Vec<Failure>,
}

impl<T> Default for Outcome<T> {
    fn default() -> Self {
        Outcome {
            measured: Vec::new(),
            failures: Vec::new(),
        }
    }
}

/// Runs `steps` on each (target, reactor threads) pair of `schedule`, in order: start,
/// `measure` each step (then [`PAUSE`]), stop. A target that fails to start, dies in a step
/// or does not stop cleanly is recorded as a [`Failure`], never raised: the run goes on with
/// the next target.
pub async fn run_each<S: Step, T>(
    schedule: &[(&Target, usize)],
    setup: &ServerSetup,
    steps: &[S],
    on: &mut impl FnMut(Event<'_, T>),
    mut measure: impl AsyncFnMut(&Running, &S) -> T,
) -> Outcome<T> {
    let mut outcome = Outcome::default();
    for &(target, threads) in schedule {
        let label = target.label();
        on(Event::Starting {
            target: label,
            threads,
        });
        let measured = &mut outcome.measured;
        let run = run_target(target, threads, setup, steps, on, &mut measure, measured);
        if let Err((route, error)) = run.await {
            let failure = Failure::new(label, threads, route, error.to_string());
            on(Event::Failed(&failure));
            outcome.failures.push(failure);
        }
    }
    outcome
}

/// [`run_each`] for one target: what it measures goes into `measured` as it comes, so that
/// a target dying in its third step keeps its first two.
async fn run_target<S: Step, T>(
    target: &Target,
    threads: usize,
    setup: &ServerSetup,
    steps: &[S],
    on: &mut impl FnMut(Event<'_, T>),
    measure: &mut impl AsyncFnMut(&Running, &S) -> T,
    measured: &mut Vec<T>,
) -> Result<(), (Option<WorkPath>, SessionError)> {
    let mut running = Running::start(target, threads, setup)
        .await
        .map_err(|error| (None, error))?;
    for step in steps {
        on(Event::Running {
            target: target.label(),
            step: step.describe(),
            estimate: step.floor(target.label(), threads) + PAUSE,
        });
        let result = measure(&running, step).await;
        // Checked after the pause: a server killed during the step may take a moment to
        // exit, and a step it died in is not a measurement of it.
        tokio::time::sleep(PAUSE).await;
        if let Some(error) = running.died() {
            return Err((Some(step.route()), error));
        }
        on(Event::Measured(&result));
        measured.push(result);
    }
    running.finish().await.map_err(|error| (None, error))
}
