//! A spawned server's process: started with the contract's command line on a free port, its
//! readiness line awaited, and stopped by its own PID, gracefully or not, whatever happens to
//! the client.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use crate::http::Endpoint;

/// How long a spawned server may take to print its readiness line.
pub const READY_WITHIN: Duration = Duration::from_secs(10);

/// How long a server may take to exit after SIGTERM before it is killed: longer than the
/// servers' own bound on a graceful stop.
pub const STOP_WITHIN: Duration = Duration::from_secs(15);

/// How long dropping a [`ServerProcess`] waits after SIGTERM before it kills the process.
/// Short: a drop happens on an error path or an interruption, where nobody waits for results.
pub const DROP_GRACE: Duration = Duration::from_secs(2);

/// Why a target could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{name}: no binary at {path}; build the servers first (`cargo build --release --workspace`)"
    )]
    Missing { name: String, path: PathBuf },
    #[error("{name}: cannot start {path}: {source}")]
    Spawn {
        name: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{name}: exited with {status} before it was ready{stderr}")]
    Exited {
        name: String,
        status: ExitStatus,
        stderr: StderrTail,
    },
    #[error("{name}: printed no readiness line within {waited:?}{stderr}")]
    NotReady {
        name: String,
        waited: Duration,
        stderr: StderrTail,
    },
    #[error("{name}: its readiness line {line:?} is not `listening on http://HOST:PORT`")]
    BadReadiness { name: String, line: String },
    #[error("{name}: its second line {line:?} is not `health on http://HOST:PORT/PATH`")]
    BadHealthLine { name: String, line: String },
}

/// The flag that starts a server's health check (`--health-port`); a server started with it
/// prints the health check's URL as its second line, which is then read too.
pub const HEALTH_PORT_FLAG: &str = "--health-port";

/// What a server wrote on stderr, each line with the moment the client read it: the last
/// lines say why a server failed, and the lines of a stretch of time are what its stall
/// detector reported then (the detectors experiment).
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<(Instant, String)>>>);

impl StderrTail {
    /// Lines kept: far more than a detector prints in one step of the detectors experiment.
    const KEEP: usize = 4096;
    /// Lines shown when a server failed.
    const SHOWN: usize = 20;

    fn collect(&self, stderr: impl AsyncRead + Unpin + Send + 'static) {
        let lines = self.0.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let read_at = Instant::now();
                let mut lines = lines.lock().unwrap_or_else(|poison| poison.into_inner());
                if lines.len() == Self::KEEP {
                    lines.pop_front();
                }
                lines.push_back((read_at, line));
            }
        });
    }

    /// The last lines, to say why the server failed.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        let skip = lines.len().saturating_sub(Self::SHOWN);
        lines
            .iter()
            .skip(skip)
            .map(|(_, line)| line.clone())
            .collect()
    }

    /// The lines read at or after `start`, each with how long after `start` it was read.
    pub fn since(&self, start: Instant) -> Vec<(Duration, String)> {
        let lines = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        (lines.iter())
            .filter(|(read_at, _)| *read_at >= start)
            .map(|(read_at, line)| (*read_at - start, line.clone()))
            .collect()
    }
}

impl std::fmt::Display for StderrTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines = self.lines();
        if lines.is_empty() {
            Ok(())
        } else {
            write!(f, "; its stderr ends:\n  {}", lines.join("\n  "))
        }
    }
}

/// A spawned server. Dropping it stops the process (SIGTERM, then SIGKILL after
/// [`DROP_GRACE`]), so that no error path, panic, interruption or failed test leaves a server
/// behind; [`ServerProcess::stop`] is the patient way.
#[derive(Debug)]
pub struct ServerProcess {
    name: String,
    child: Child,
    endpoint: Endpoint,
    /// The health check's URL, if the server was started with [`HEALTH_PORT_FLAG`]: its path
    /// is the endpoint's prefix.
    health: Option<Endpoint>,
    stderr: StderrTail,
}

impl ServerProcess {
    /// Starts `binary ARGS... --port 0` and waits up to [`READY_WITHIN`] for its readiness line.
    pub async fn start(
        name: &str,
        binary: &Path,
        args: &[String],
    ) -> Result<ServerProcess, TargetError> {
        Self::start_within(name, binary, args, READY_WITHIN).await
    }

    /// [`Self::start`] with another limit on the wait for the readiness line.
    pub async fn start_within(
        name: &str,
        binary: &Path,
        args: &[String],
        ready_within: Duration,
    ) -> Result<ServerProcess, TargetError> {
        Self::spawn(name, binary, args, &[], ready_within).await
    }

    /// [`Self::start_within`] with variables `env` set for the server.
    pub async fn spawn(
        name: &str,
        binary: &Path,
        args: &[String],
        env: &[(String, String)],
        ready_within: Duration,
    ) -> Result<ServerProcess, TargetError> {
        let mut child = Command::new(binary)
            .args(args)
            // A panic's backtrace, if the caller's shell asks for one, is printed on the thread
            // that panicked, which may be a reactor thread: that time is the shell's, not the
            // server's (`env` may still ask for it).
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .envs(env.iter().map(|(key, value)| (key, value)))
            .args(["--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| TargetError::Spawn {
                name: name.to_owned(),
                path: binary.to_owned(),
                source,
            })?;
        let stderr = StderrTail::default();
        if let Some(pipe) = child.stderr.take() {
            stderr.collect(pipe);
        }
        let health = args.iter().any(|arg| arg == HEALTH_PORT_FLAG);
        // On an error `child` is dropped, and `kill_on_drop` ends a server that printed no line.
        let (endpoint, health) =
            read_readiness(&mut child, name, ready_within, &stderr, health).await?;
        Ok(ServerProcess {
            name: name.to_owned(),
            child,
            endpoint,
            health,
            stderr,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The health check's URL (its path as the endpoint's prefix), if it was asked for.
    pub fn health(&self) -> Option<&Endpoint> {
        self.health.as_ref()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// What the server wrote on stderr lately.
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// `Some(status)` if the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends `signal` to this server's own PID.
    pub fn signal(&self, signal: Signal) -> nix::Result<()> {
        match self.child.id() {
            Some(pid) => kill(Pid::from_raw(pid as i32), signal),
            None => Ok(()), // already reaped
        }
    }

    /// Waits for the server to exit by itself (or after a signal sent with [`Self::signal`]).
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Stops the server gracefully (SIGTERM), and kills it if it has not exited within
    /// [`STOP_WITHIN`]. Returns its exit status.
    pub async fn stop(mut self) -> std::io::Result<ExitStatus> {
        self.stop_within(STOP_WITHIN).await
    }

    async fn stop_within(&mut self, grace: Duration) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.exited() {
            return Ok(status);
        }
        self.signal(Signal::SIGTERM)?;
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                eprintln!(
                    "{}: still running {grace:?} after SIGTERM; killing it",
                    self.name
                );
                self.child.kill().await?;
                self.child.wait().await
            }
        }
    }
}

/// Waits up to `ready_within` for the readiness line on `child`'s stdout and reads the
/// endpoint from it, and with `health` the health check's line after it; then keeps draining
/// stdout, so that a chatty server never blocks on a full pipe.
async fn read_readiness(
    child: &mut Child,
    name: &str,
    ready_within: Duration,
    stderr: &StderrTail,
    health: bool,
) -> Result<(Endpoint, Option<Endpoint>), TargetError> {
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    let deadline = tokio::time::Instant::now() + ready_within;
    let mut next = async || {
        let line = tokio::time::timeout_at(deadline, lines.next_line()).await;
        line.map(|line| line.ok().flatten())
    };
    let first = next().await;
    let second = match (&first, health) {
        (Ok(Some(_)), true) => Some(next().await),
        _ => None,
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let line = printed(first, child, name, ready_within, stderr).await?;
    let name = name.to_owned();
    let Some(endpoint) = url_after(&line, "listening on ") else {
        return Err(TargetError::BadReadiness { name, line });
    };
    let Some(second) = second else {
        return Ok((endpoint, None));
    };
    let line = printed(second, child, &name, ready_within, stderr).await?;
    match url_after(&line, "health on ") {
        Some(health) => Ok((endpoint, Some(health))),
        None => Err(TargetError::BadHealthLine { name, line }),
    }
}

/// The URL of a line `PREFIX http://...`, if it is one.
fn url_after(line: &str, prefix: &str) -> Option<Endpoint> {
    Endpoint::parse(line.strip_prefix(prefix)?).ok()
}

/// The line a server printed, or why it printed none: it exited, or `ready_within` passed.
async fn printed(
    line: Result<Option<String>, tokio::time::error::Elapsed>,
    child: &mut Child,
    name: &str,
    ready_within: Duration,
    stderr: &StderrTail,
) -> Result<String, TargetError> {
    match line {
        Ok(Some(line)) => Ok(line),
        Ok(None) => {
            let status = child.wait().await.unwrap_or_default();
            // Give the stderr reader a moment to take the last words.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(TargetError::Exited {
                name: name.to_owned(),
                status,
                stderr: stderr.clone(),
            })
        }
        Err(_) => Err(TargetError::NotReady {
            name: name.to_owned(),
            waited: ready_within,
            stderr: stderr.clone(),
        }),
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.exited().is_some() || self.signal(Signal::SIGTERM).is_err() {
            return;
        }
        let deadline = std::time::Instant::now() + DROP_GRACE;
        while std::time::Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // `kill_on_drop` would do this too; doing it here says so.
        eprintln!(
            "{}: still running {DROP_GRACE:?} after SIGTERM; killing it",
            self.name
        );
        let _ = self.child.start_kill();
    }
}
