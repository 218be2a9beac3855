//! The thread wake-ups behind each ping at rest: each server thread's voluntary context
//! switches, read from `/proc/PID/task/TID/status` before and after a probe.

use std::collections::BTreeMap;

/// Each thread of process `pid` and its voluntary context switches so far, by thread id.
pub fn thread_switches(pid: u32) -> BTreeMap<u32, (String, u64)> {
    let mut threads = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return threads;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        if let Some(thread) = switches_in(&status) {
            threads.insert(tid, thread);
        }
    }
    threads
}

/// The thread name and voluntary context switches of one `/proc/PID/task/TID/status` text.
pub fn switches_in(status: &str) -> Option<(String, u64)> {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(str::trim)
    };
    let name = field("Name:")?.to_owned();
    let switches = field("voluntary_ctxt_switches:")?.parse().ok()?;
    Some((name, switches))
}

/// Voluntary context switches of each thread name between two readings; threads that came
/// or went in between count from zero or not at all.
pub fn switches_by_name(
    before: &BTreeMap<u32, (String, u64)>,
    after: &BTreeMap<u32, (String, u64)>,
) -> BTreeMap<String, u64> {
    let mut per_name: BTreeMap<String, u64> = BTreeMap::new();
    for (tid, (name, now)) in after {
        let then = before.get(tid).map_or(0, |(_, then)| *then);
        *per_name.entry(name.clone()).or_default() += now.saturating_sub(then);
    }
    per_name
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from a demo server's thread (Linux 6.18), the fields around the two read.
    const STATUS: &str = "Name:\tsmol-executor-0
Umask:\t0022
State:\tS (sleeping)
Tgid:\t4242
Pid:\t4243
voluntary_ctxt_switches:\t1502
nonvoluntary_ctxt_switches:\t7
";

    #[test]
    fn a_threads_switches_are_read_from_its_status() {
        assert_eq!(switches_in(STATUS), Some(("smol-executor-0".into(), 1502)));
        assert_eq!(switches_in("Name:\tx\n"), None);
    }

    #[test]
    fn switches_are_counted_by_thread_name() {
        let before = BTreeMap::from([
            (1, ("main".to_owned(), 100)),
            (2, ("async-io".to_owned(), 10)),
        ]);
        let after = BTreeMap::from([
            (1, ("main".to_owned(), 300)),
            (2, ("async-io".to_owned(), 10)),
            (3, ("blocking-1".to_owned(), 4)),
        ]);
        assert_eq!(
            switches_by_name(&before, &after),
            BTreeMap::from([
                ("main".to_owned(), 200),
                ("async-io".to_owned(), 0),
                ("blocking-1".to_owned(), 4)
            ])
        );
    }

    #[test]
    fn this_process_has_threads_to_count() {
        if cfg!(target_os = "linux") {
            assert!(!thread_switches(std::process::id()).is_empty());
        }
    }
}
