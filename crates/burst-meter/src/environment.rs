//! Where a run happened: recorded beside every figure, so that numbers are never read
//! without the machine that produced them.

use std::process::Command;

use serde::{Deserialize, Serialize};

/// The machine, the build and the commit of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// When the run started, RFC 3339, UTC.
    pub date: String,
    /// `git rev-parse HEAD`, with `+dirty` if the tracked files other than the results and
    /// the README differ from it.
    pub git_commit: String,
    /// A digest of the sources that measure this experiment (its `Code`, `src/stamps.rs`),
    /// as this binary was built from them: results that record another were measured by
    /// other code, which `bench-client audit` shows and `bench-client all --stale` reruns.
    /// Empty in results from before it.
    #[serde(default)]
    pub code_stamp: String,
    /// The compiler that built this binary (and, built in the same workspace, the servers).
    pub rustc: String,
    pub cpu: String,
    /// Cores this process may use.
    pub cores: usize,
    pub memory: String,
    pub os: String,
    pub kernel: String,
    /// The stacks' crates as Cargo.lock pins them, e.g. `tokio 1.45.1`.
    pub crates: Vec<String>,
    /// The workspace's stacks when it ran ([`stacks::names`]): what "every stack" meant for
    /// this run, whatever stacks were added since. Empty in results from before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<String>,
}

impl Environment {
    /// Reads the environment of this machine and process now, with `code_stamp` (the digest
    /// of the code that measures the run, which the caller knows).
    pub fn with_stamp(code_stamp: String) -> Environment {
        Environment {
            date: now_utc(),
            git_commit: git_commit(),
            code_stamp,
            rustc: env!("BENCH_RUSTC_VERSION").to_owned(),
            cpu: proc_field("/proc/cpuinfo", "model name").unwrap_or_else(unknown),
            cores: std::thread::available_parallelism().map_or(0, usize::from),
            memory: proc_field("/proc/meminfo", "MemTotal").unwrap_or_else(unknown),
            os: os_name(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(unknown),
            crates: env!("BENCH_CRATE_VERSIONS")
                .split(',')
                .filter(|entry| !entry.is_empty())
                .map(str::to_owned)
                .collect(),
            stacks: (stacks::names().iter())
                .map(|name| name.to_string())
                .collect(),
        }
    }

    /// A Markdown bullet list, for the head of a results file.
    pub fn to_markdown(&self) -> String {
        format!(
            "- date: {}\n- git commit: `{}`\n- code stamp: `{}`\n- rustc: {}\n\
             - CPU: {} ({} cores usable)\n- memory: {}\n- OS: {}, kernel {}\n- crates: {}\n",
            self.date,
            self.git_commit,
            self.code_stamp,
            self.rustc,
            self.cpu,
            self.cores,
            self.memory,
            self.os,
            self.kernel,
            self.crates.join(", "),
        )
    }
}

fn unknown() -> String {
    "unknown".to_owned()
}

fn now_utc() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| unknown())
}

fn git_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "HEAD"]) {
        // What the runs themselves write (results/, the README's block) does not make the
        // code that produced them dirty: the main job runs three commands in a row.
        Some(commit) => match git(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":!results",
            ":!README.md",
        ]) {
            Some(changes) if changes.is_empty() => commit,
            _ => format!("{commit}+dirty"),
        },
        None => unknown(),
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

/// The value of the first `key : value` line of a /proc file.
fn proc_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim().to_owned())
    })
}

fn os_name() -> String {
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|name| name.trim_matches('"').to_owned())
        })
        .unwrap_or_else(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_fills_what_this_machine_can_tell() {
        let env = Environment::with_stamp("0123456789abcdef".to_owned());
        assert_eq!(env.code_stamp, "0123456789abcdef");
        assert!(env.cores >= 1);
        assert!(env.rustc.starts_with("rustc "), "{}", env.rustc);
        assert!(
            env.crates.iter().any(|c| c.starts_with("tokio ")),
            "{:?}",
            env.crates
        );
        assert!(env.date.ends_with('Z'), "{}", env.date);
    }

    #[test]
    fn markdown_lists_every_field() {
        let env = Environment {
            date: "2026-01-01T00:00:00Z".into(),
            git_commit: "abc".into(),
            code_stamp: "0123456789abcdef".into(),
            rustc: "rustc 1.0".into(),
            cpu: "cpu".into(),
            cores: 2,
            memory: "1 kB".into(),
            os: "os".into(),
            kernel: "6.1".into(),
            crates: vec!["tokio 1.0.0".into(), "smol 2.0.0".into()],
            stacks: Vec::new(),
        };
        assert_eq!(
            env.to_markdown(),
            "- date: 2026-01-01T00:00:00Z\n- git commit: `abc`\n- code stamp: `0123456789abcdef`\n\
             - rustc: rustc 1.0\n\
             - CPU: cpu (2 cores usable)\n- memory: 1 kB\n- OS: os, kernel 6.1\n\
             - crates: tokio 1.0.0, smol 2.0.0\n"
        );
    }
}
