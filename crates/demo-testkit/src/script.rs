//! A shell script run as a reader would paste it, in a process group of its own that is
//! killed when the run ends, so that a server the script starts in the background never
//! outlives the test, whether the script ends, fails or hangs.

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// What a script printed, and how it ended.
#[derive(Debug)]
pub struct ScriptRun {
    /// Its exit status; `None` if it was still running at its deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// The process group of a running script, killed whole when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        let group = Pid::from_raw(self.0.id() as i32);
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

/// Runs `script` with `bash` in `dir`, with `env` added, for at most `within`.
pub fn run_script(script: &str, dir: &Path, env: &[(&str, &str)], within: Duration) -> ScriptRun {
    let child = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .envs(env.iter().copied())
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let mut group = Group(child);
    let stdout = read_all(group.0.stdout.take());
    let stderr = read_all(group.0.stderr.take());
    let deadline = Instant::now() + within;
    let mut status = None;
    while Instant::now() < deadline {
        status = group.0.try_wait().expect("the script's status");
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Whatever the script left in the background dies here, which closes its pipes.
    drop(group);
    ScriptRun {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    }
}

/// Everything `pipe` yields until every writer has closed it, read on a thread of its own.
fn read_all(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_read_whole_and_its_background_killed() {
        let dir = std::env::temp_dir();
        let run = run_script(
            "sleep 60 & echo \"$GREETING\"; echo to-stderr >&2",
            &dir,
            &[("GREETING", "hello")],
            Duration::from_secs(10),
        );
        assert!(run.status.is_some_and(|status| status.success()), "{run:?}");
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            ("hello\n", "to-stderr\n")
        );
    }

    #[test]
    fn a_script_past_its_deadline_has_no_status() {
        let started = Instant::now();
        let run = run_script(
            "sleep 60",
            &std::env::temp_dir(),
            &[],
            Duration::from_millis(200),
        );
        assert!(run.status.is_none(), "{run:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
