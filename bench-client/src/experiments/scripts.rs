//! The experiments that are criterion benches rather than this binary's runs: the offload's
//! price (`scripts/offload-cost.sh`, crates/offload-cost) and the stall detector's price per
//! poll (`scripts/poll-cost.sh`, crates/reactor-watch). Each runs as a script of the
//! repository, from its root; their plans are their benches'.
use std::path::Path;
use std::process::Stdio;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Runs `path` in a process group of its own, its output into a log file beside the
/// build (the progress view stays readable); the whole group is stopped if the job is. The
/// script gets its experiment's code stamp in `BENCH_CODE_STAMP`, for a writer that is not
/// this crate's to record it.
pub async fn run(path: &Path, stamp: &str) -> Result<(), String> {
    let log_path = std::env::temp_dir().join("bench-client-script.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|error| format!("cannot create {}: {error}", log_path.display()))?;
    let err_log = log.try_clone().map_err(|error| error.to_string())?;
    let mut child = tokio::process::Command::new(path)
        .env("BENCH_CODE_STAMP", stamp)
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
        Ok(())
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
