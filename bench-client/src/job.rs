//! The main job: every experiment whose results are committed, one after another, under one
//! progress view, each experiment's duration recorded in [`RECORD`].
//!
//! Each experiment is written here as the command line that runs it alone
//! (`scripts/run.sh ARGS`, or `bench-client ARGS` with the binaries built), parsed by the
//! same parser: what the job runs and what a reader types are the same thing.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser as _;

use crate::cli::Cli;
use crate::command::{self, Ran};
use crate::environment::Environment;
use crate::progress::{self, Progress, Stage};
use crate::report::{readme, write_atomically};

/// Where the job records how long each experiment took.
pub const RECORD: &str = "results/main-job.md";

/// The README, whose results block the comparison rewrites and whose sentence on the job's
/// duration the job rewrites, between [`BEGIN`] and [`END`].
pub const README: &str = "README.md";
pub const BEGIN: &str = "<!-- main-job:begin (written by bench-client all; do not edit) -->";
pub const END: &str = "<!-- main-job:end -->";

/// One experiment of the main job.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// What it is, and the folder it writes.
    pub name: &'static str,
    pub run: Run,
}

/// How an experiment runs.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// `bench-client` with these arguments.
    Command(&'static [&'static str]),
    /// A script of the repository, run from its root, with what it should take: for the
    /// criterion benches, which are not this binary's to run.
    Script {
        path: &'static str,
        estimate: Duration,
    },
}

/// The main job, in order.
pub const MAIN_JOB: [Experiment; 21] = [
    Experiment {
        name: "the comparison (results/, README.md's block)",
        run: Run::Command(&["--readme", README]),
    },
    Experiment {
        name: "connect before (results/connect-before/)",
        run: Run::Command(&["--connect", "before", "--out", "results/connect-before"]),
    },
    Experiment {
        name: "the health check's race (results/race/)",
        run: Run::Command(&["race", "--servers", "all", "--out", "results/race"]),
    },
    Experiment {
        name: "the race at 500 ms (results/race-500ms/)",
        run: Run::Command(&[
            "race",
            "--servers",
            "all",
            "--sleep-ms",
            "500",
            "--trials",
            "3",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--no-flips",
            "--out",
            "results/race-500ms",
        ]),
    },
    Experiment {
        name: "catching it, side by side (results/detectors/)",
        run: Run::Command(&[
            "detectors",
            "--servers",
            "all",
            "--out",
            "results/detectors",
        ]),
    },
    Experiment {
        name: "the thread matrix (results/threads/)",
        run: Run::Command(&["--threads", "1,2,4", "--out", "results/threads"]),
    },
    Experiment {
        name: "the race per core, 2 threads (results/per-core/threads-2/)",
        run: Run::Command(&[
            "race",
            "--threads",
            "2",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-2",
        ]),
    },
    Experiment {
        name: "the race per core, 4 threads (results/per-core/threads-4/)",
        run: Run::Command(&[
            "race",
            "--threads",
            "4",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-4",
        ]),
    },
    Experiment {
        name: "CPU-bound work (results/cpu/)",
        run: Run::Command(&[
            "--routes",
            "/bad-cpu,/ok-cpu-blocking,/ok-cpu-yield,/ok-cpu-pool",
            "--threads",
            "1,2",
            "--out",
            "results/cpu",
        ]),
    },
    Experiment {
        name: "the hidden blockers (results/hidden/)",
        run: Run::Command(&[
            "--routes",
            "/bad-http,/ok-http-blocking,/ok-http-await,/bad-db,/ok-db-blocking,/ok-db-await,\
             /bad-file,/ok-file-blocking,/ok-file-await",
            "--out",
            "results/hidden",
        ]),
    },
    Experiment {
        name: "the hidden blockers, the file not cached (results/hidden-cold/)",
        run: Run::Command(&[
            "--routes",
            "/bad-file,/ok-file-blocking,/ok-file-await",
            "--file-cache",
            "cold",
            "--out",
            "results/hidden-cold",
        ]),
    },
    Experiment {
        name: "the sweep (results/sweep/)",
        run: Run::Command(&["sweep", "--out", "results/sweep"]),
    },
    Experiment {
        name: "500 ms at scale (results/scale-500ms/)",
        run: Run::Command(&[
            "sweep",
            "--routes",
            "/ok-blocking,/ok-await",
            "-n",
            "1000,10000",
            "--sleep-ms",
            "500",
            "--out",
            "results/scale-500ms",
        ]),
    },
    Experiment {
        name: "the pool staircase (results/staircase/)",
        run: Run::Command(&[
            "sweep",
            "--servers",
            "all",
            "--blocking-threads",
            "40",
            "--sleep-ms",
            "100",
            "--routes",
            "/ok-def,/ok-await",
            "-n",
            "10,20,40,41,80,81,120,160,200",
            "--out",
            "results/staircase",
        ]),
    },
    Experiment {
        name: "at rest (results/rest/)",
        run: Run::Command(&["rest", "--out", "results/rest"]),
    },
    Experiment {
        name: "the detector on (results/detector-on/)",
        run: Run::Command(&DETECTOR_ON),
    },
    Experiment {
        name: "the detector off (results/detector-off/)",
        run: Run::Command(&DETECTOR_OFF),
    },
    Experiment {
        name: "the detector on, N = 1,000 (results/detector-on/n1000/)",
        run: Run::Command(&DETECTOR_ON_AT_SCALE),
    },
    Experiment {
        name: "the detector off, N = 1,000 (results/detector-off/n1000/)",
        run: Run::Command(&DETECTOR_OFF_AT_SCALE),
    },
    Experiment {
        name: "the offload's price (results/offload-cost.md)",
        run: Run::Script {
            path: "scripts/offload-cost.sh",
            // crates/offload-cost: 16 benchmarks × (1 s warm-up + 3 s measurement), and
            // criterion's analysis; the bench is built with the binaries, before the job.
            estimate: Duration::from_secs(75),
        },
    },
    Experiment {
        name: "the stall detector's price per poll (results/poll-cost.md)",
        run: Run::Script {
            path: "scripts/poll-cost.sh",
            // crates/reactor-watch: 10 benchmarks × (3 s warm-up + 5 s measurement, criterion's
            // defaults), and criterion's analysis; built with the binaries, before the job.
            estimate: Duration::from_secs(95),
        },
    },
];

const DETECTOR_ON: [&str; 8] = detector("100", "results/detector-on");
const DETECTOR_OFF: [&str; 8] = detector("0", "results/detector-off");
const DETECTOR_ON_AT_SCALE: [&str; 11] = detector_at_scale("100", "results/detector-on/n1000");
const DETECTOR_OFF_AT_SCALE: [&str; 11] = detector_at_scale("0", "results/detector-off/n1000");

/// The stall detector's cost: `/ok-await` on every server at `--stall-ms MS`.
const fn detector(stall_ms: &'static str, out: &'static str) -> [&'static str; 8] {
    [
        "--servers",
        "all",
        "--routes",
        "/ok-await",
        "--stall-ms",
        stall_ms,
        "--out",
        out,
    ]
}

/// The stall detector's cost at N = 1,000 × 500 ms.
const fn detector_at_scale(stall_ms: &'static str, out: &'static str) -> [&'static str; 11] {
    [
        "sweep",
        "--routes",
        "/ok-await",
        "-n",
        "1000",
        "--sleep-ms",
        "500",
        "--stall-ms",
        stall_ms,
        "--out",
        out,
    ]
}

/// One experiment as the job ran it, for [`RECORD`].
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub name: &'static str,
    pub command: String,
    pub took: Duration,
    /// What it wrote, or why it did not finish.
    pub outcome: Result<Ran, String>,
}

impl Done {
    /// Whether it wrote its results with nothing failed.
    pub fn complete(&self) -> bool {
        matches!(&self.outcome, Ok(ran) if ran.failures == 0)
    }
}

impl Experiment {
    /// The command line that runs it alone.
    pub fn command_line(&self) -> String {
        match self.run {
            Run::Command(args) => std::iter::once("bench-client")
                .chain(args.iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
            Run::Script { path, .. } => path.to_owned(),
        }
    }

    /// Its command line, parsed as the binary parses its own.
    pub fn parse(&self) -> Option<Result<Cli, clap::Error>> {
        match self.run {
            Run::Command(args) => {
                let argv = std::iter::once("bench-client").chain(args.iter().copied());
                Some(Cli::try_parse_from(argv))
            }
            Run::Script { .. } => None,
        }
    }

    /// Its stage in the progress view.
    fn stage(&self) -> Stage {
        let estimate = match (self.parse(), self.run) {
            (Some(Ok(cli)), _) => command::stage(&cli, self.name),
            (_, Run::Script { estimate, .. }) => Some(Stage {
                name: self.name.to_owned(),
                steps: 1,
                estimate,
            }),
            _ => None,
        };
        estimate.unwrap_or_else(|| Stage {
            name: self.name.to_owned(),
            steps: 0,
            estimate: Duration::ZERO,
        })
    }

    /// Runs it, shown in `progress`.
    async fn run(&self, progress: &mut Progress) -> Result<Ran, String> {
        match (self.parse(), self.run) {
            (Some(Ok(cli)), _) => command::run(&cli, self.command_line(), progress, false).await,
            (Some(Err(error)), _) => Err(format!("bad command line: {error}")),
            (None, Run::Script { path, .. }) => {
                progress.step("", path, self.stage().estimate);
                script::run(Path::new(path)).await
            }
            (None, Run::Command(_)) => unreachable!("a command always parses to something"),
        }
    }
}

/// Runs the main job: every experiment, whatever the others did, then the record. Returns
/// what each did.
pub async fn run() -> Vec<Done> {
    let stages = MAIN_JOB.iter().map(Experiment::stage).collect();
    let mut progress = Progress::new(stages);
    let environment = Environment::capture();
    let mut done = Vec::new();
    for experiment in &MAIN_JOB {
        let started = Instant::now();
        let outcome = experiment.run(&mut progress).await;
        let took = started.elapsed();
        progress.print(&ended_line(experiment.name, took, &outcome));
        progress.next_stage();
        done.push(Done {
            name: experiment.name,
            command: experiment.command_line(),
            took,
            outcome,
        });
    }
    progress.finish();
    if let Err(error) = write_atomically(Path::new(RECORD), record(&environment, &done).as_bytes())
    {
        eprintln!("bench-client: cannot write {RECORD}: {error}");
    }
    let sentence = readme_sentence(&done);
    if let Err(error) = readme::replace_block(Path::new(README), (BEGIN, END), &sentence) {
        eprintln!("bench-client: cannot refresh {README}: {error}");
    }
    done
}

/// The README's sentence on the job: how long it took, and where the record is.
pub fn readme_sentence(done: &[Done]) -> String {
    let took: Duration = done.iter().map(|experiment| experiment.took).sum();
    let complete = done
        .iter()
        .filter(|experiment| experiment.complete())
        .count();
    let (minutes, seconds) = (took.as_secs() / 60, took.as_secs() % 60);
    let mut sentence = format!(
        "The main job took {minutes} min {seconds} s here after the release build: {} \
         experiments",
        done.len()
    );
    if complete < done.len() {
        let _ = write!(
            sentence,
            " ({} of them with failures)",
            done.len() - complete
        );
    }
    sentence.push_str(
        ", each with its duration and the command that runs it alone in \
         [results/main-job.md](results/main-job.md).\n",
    );
    sentence
}

/// The line that says how an experiment ended.
fn ended_line(name: &str, took: Duration, outcome: &Result<Ran, String>) -> String {
    let took = progress::clock(took);
    match outcome {
        Ok(ran) if ran.failures == 0 => format!("done in {took}: {name}: wrote {}", ran.wrote),
        Ok(ran) => format!(
            "done in {took} with {} failed: {name}: wrote {}",
            ran.failures, ran.wrote
        ),
        Err(error) => format!("FAILED after {took}: {name}: {error}"),
    }
}

/// [`RECORD`]: the environment, then each experiment with its command and duration.
pub fn record(environment: &Environment, done: &[Done]) -> String {
    let mut out = String::from("# The main job's run time\n\n");
    out.push_str(
        "Written by `bench-client all` (`scripts/run.sh`, after the release build); every \
         experiment can be run alone with its command (`scripts/run.sh` followed by the \
         arguments builds first).\n\n## Environment\n\n",
    );
    out.push_str(&environment.to_markdown());
    out.push_str(
        "\n## Experiments\n\n| experiment | command | seconds | outcome |\n|---|---|---:|---|\n",
    );
    for experiment in done {
        let outcome = match &experiment.outcome {
            _ if experiment.complete() => "complete".to_owned(),
            Ok(ran) => format!("{} failed", ran.failures),
            Err(error) => format!("not written: {error}"),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {outcome} |",
            experiment.name,
            experiment.command,
            experiment.took.as_secs()
        );
    }
    let total: Duration = done.iter().map(|experiment| experiment.took).sum();
    let _ = writeln!(out, "| **all** | | **{}** | |", total.as_secs());
    out
}

/// Running a script of the repository as one experiment.
mod script {
    use std::path::Path;
    use std::process::Stdio;

    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    use super::Ran;

    /// Runs `path` in a process group of its own, its output into a log file beside the
    /// build (the progress view stays readable); the whole group is stopped if the job is.
    pub async fn run(path: &Path) -> Result<Ran, String> {
        let log_path = std::env::temp_dir().join("bench-client-script.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|error| format!("cannot create {}: {error}", log_path.display()))?;
        let err_log = log.try_clone().map_err(|error| error.to_string())?;
        let mut child = tokio::process::Command::new(path)
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(err_log))
            .process_group(0)
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", path.display()))?;
        let group = child.id().map(|pid| Group(Pid::from_raw(pid as i32)));
        let status = child.wait().await.map_err(|error| error.to_string())?;
        if let Some(group) = group {
            group.finished();
        }
        if status.success() {
            Ok(Ran {
                wrote: format!("what {} writes", path.display()),
                failures: 0,
            })
        } else {
            Err(format!(
                "{} {status}; its output: {}",
                path.display(),
                log_path.display()
            ))
        }
    }

    /// A process group that is sent SIGTERM when dropped before it finished.
    struct Group(Pid);

    impl Group {
        fn finished(self) {
            std::mem::forget(self);
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            let _ = killpg(self.0, Signal::SIGTERM);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_of_the_job_is_a_valid_command_line() {
        for experiment in &MAIN_JOB {
            if let Some(parsed) = experiment.parse() {
                let cli = parsed.unwrap_or_else(|error| panic!("{}: {error}", experiment.name));
                assert!(
                    command::stage(&cli, experiment.name).is_some(),
                    "{}",
                    experiment.name
                );
            }
        }
    }
}
