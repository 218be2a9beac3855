//! The experiments that are scripts of the repository rather than this binary's runs: the
//! criterion benches (the offload's price, the stall detector's price per poll) and the
//! static checks. Each runs from the repository's root; its plan is its script's, and it
//! writes its own results.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::{Code, Entry, JobRun, Planned, Ran, job_run};
use crate::Error;
use crate::experiments::current_stamp;
use crate::progress::{Progress, Stage};

/// An experiment that is a script of the repository, in [`super::ALL`].
#[derive(Debug, Clone, Copy)]
pub struct Script {
    pub name: &'static str,
    pub title: &'static str,
    /// The script, from the repository's root.
    pub path: &'static str,
    /// The file or folder it writes.
    pub writes: &'static str,
    pub code: Code,
    /// What it should take, for the progress view.
    pub estimate: Duration,
    /// What its criterion settings force: each benchmark's warm-up and measurement.
    pub floor: Duration,
    /// Its one run in the main job.
    pub job: &'static [JobRun],
}

/// The offload's price: crates/offload-cost's criterion bench.
pub static OFFLOAD_COST: Script = Script {
    name: "offload-cost",
    title: "the offload's price",
    path: "scripts/offload-cost.sh",
    writes: "results/offload-cost.md",
    code: Code {
        own: &["scripts/offload-cost.sh", "crates/offload-cost"],
        drives_servers: false,
        reads_servers: false,
    },
    // 24 benchmarks (4 cases on 6 runtimes) × (0.5 s warm-up + 1 s measurement), and
    // criterion's analysis; the bench is built with the binaries, before the job. The floor
    // is checked against the bench's settings by crates/offload-cost/tests/floors.rs.
    estimate: Duration::from_secs(50),
    floor: Duration::from_secs(36),
    job: &[job_run(
        "the offload's price (results/offload-cost.md)",
        &[],
    )],
};

/// The stall detector's price per poll: crates/reactor-watch's criterion bench.
pub static POLL_COST: Script = Script {
    name: "poll-cost",
    title: "the stall detector's price per poll",
    path: "scripts/poll-cost.sh",
    writes: "results/poll-cost.md",
    code: Code {
        own: &[
            "scripts/poll-cost.sh",
            "crates/reactor-watch",
            "crates/offload-cost",
        ],
        drives_servers: false,
        reads_servers: false,
    },
    // 16 benchmarks (14 in the first run, the 2 `wrapped_metrics` in the second) × (0.5 s
    // warm-up + 1 s measurement), and criterion's analysis; built with the binaries, before
    // the job. The floor is checked by crates/offload-cost/tests/floors.rs.
    estimate: Duration::from_secs(35),
    floor: Duration::from_secs(24),
    job: &[job_run(
        "the stall detector's price per poll (results/poll-cost.md)",
        &[],
    )],
};

/// Catching it before it ships: clippy's and blocking-check's static checks of the servers.
pub static STATIC: Script = Script {
    name: "static",
    title: "catching it before it ships",
    path: "scripts/static-checks.sh",
    writes: "results/static",
    code: Code {
        own: &["scripts/static-checks.sh", "crates/blocking-check"],
        drives_servers: false,
        reads_servers: true,
    },
    // clippy over the servers and their contract with the experiment's configuration (their
    // dependencies checked before the job), then the context-aware check's parse.
    estimate: Duration::from_secs(60),
    // No sleep or setting forces any of it: all of it is the checks' own work.
    floor: Duration::ZERO,
    job: &[job_run(
        "catching it before it ships (results/static/)",
        &[],
    )],
};

impl Entry for Script {
    fn name(&self) -> &'static str {
        self.name
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn code(&self) -> Code {
        self.code
    }

    fn job(&self) -> &'static [JobRun] {
        self.job
    }

    fn argv(&self, _run: &JobRun) -> Vec<&'static str> {
        vec![self.path]
    }

    fn subcommand(&self) -> Option<clap::Command> {
        None
    }

    fn record(&self) -> Option<&'static str> {
        None
    }

    fn redraw(&self, dir: &Path) -> Result<(), Error> {
        Err(Error::Script {
            script: self.path.to_owned(),
            reason: format!(
                "writes {} itself; nothing to redraw in {}",
                self.writes,
                dir.display()
            ),
        })
    }

    fn planned(&self, _matches: &clap::ArgMatches) -> Result<Box<dyn Planned>, clap::Error> {
        Ok(Box::new(*self))
    }

    fn planned_run(&self, _run: &JobRun) -> Result<Box<dyn Planned>, clap::Error> {
        Ok(Box::new(*self))
    }
}

impl Planned for Script {
    fn stage(&self) -> Stage {
        Stage {
            name: self.title.to_owned(),
            steps: 1,
            estimate: self.estimate,
        }
    }

    fn out(&self) -> &Path {
        Path::new(self.writes)
    }

    fn floor(&self) -> Duration {
        self.floor
    }

    fn stamp(&self) -> String {
        current_stamp(&self.code)
    }

    fn run<'a>(
        self: Box<Self>,
        _command: String,
        progress: &'a mut Progress,
        _alone: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Ran, Error>> + 'a>> {
        Box::pin(async move {
            progress.step("", self.path, self.estimate);
            run(Path::new(self.path), &self.stamp()).await?;
            Ok(Ran {
                wrote: self.writes.to_owned(),
                failures: 0,
                floor: self.floor,
            })
        })
    }
}

/// Runs `path` in a process group of its own, its output into a log file beside the
/// build (the progress view stays readable); the whole group is stopped if the job is. The
/// script gets its experiment's code stamp in `BENCH_CODE_STAMP`, for a writer that is not
/// this crate's to record it.
pub async fn run(path: &Path, stamp: &str) -> Result<(), Error> {
    let failed = |reason: String| Error::Script {
        script: path.display().to_string(),
        reason,
    };
    let log_path = std::env::temp_dir().join("bench-client-script.log");
    let log = std::fs::File::create(&log_path).map_err(Error::write(&log_path))?;
    let err_log = log.try_clone().map_err(Error::write(&log_path))?;
    let mut child = tokio::process::Command::new(path)
        .env("BENCH_CODE_STAMP", stamp)
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err_log))
        .process_group(0)
        .spawn()
        .map_err(|error| failed(format!("cannot start: {error}")))?;
    let mut group = Group(child.id().map(|pid| Pid::from_raw(pid as i32)));
    let status = (child.wait().await).map_err(|error| failed(error.to_string()))?;
    group.finished();
    match status.success() {
        true => Ok(()),
        false => Err(failed(format!(
            "{status}; its output: {}",
            log_path.display()
        ))),
    }
}

/// A process group that is sent SIGTERM when dropped before it finished (the job stopped
/// while the script ran).
struct Group(Option<Pid>);

impl Group {
    fn finished(&mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = killpg(group, Signal::SIGTERM);
        }
    }
}
