//! CPU time of the client and of the server during a case: a figure is the server's only if
//! the client was not the bottleneck, and on two shared cores the client's work competes
//! with the server's. Read from `/proc/PID/stat` (Linux; elsewhere "not available").

use serde::{Deserialize, Serialize};

/// The kernel counts `utime` and `stime` in `/proc` in clock ticks of `USER_HZ`, which the
/// kernel fixes at 100 per second for user space on every architecture Linux supports: a
/// tick is 10 ms, the resolution of these figures.
const TICK_MS: f64 = 10.0;

/// CPU time, user and system, of a whole process (every thread, live or exited), in ms.
pub fn process_cpu_ms(pid: u32) -> Option<f64> {
    cpu_ms_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// CPU time, user and system, of the calling thread so far, in ms, to the nanosecond
/// (`CLOCK_THREAD_CPUTIME_ID`, not `/proc`'s 10 ms ticks): for the probe's own threads, whose
/// cost is a fraction of a millisecond per ping.
pub fn this_thread_cpu_ms() -> Option<f64> {
    use nix::time::{ClockId, clock_gettime};
    let spent = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(spent.tv_sec() as f64 * 1000.0 + spent.tv_nsec() as f64 / 1e6)
}

/// CPU time the hypervisor gave to other machines while this one's cores wanted to run
/// ("steal"), summed over the cores since boot, in ms; `None` where `/proc/stat` says nothing.
/// A virtual machine's threads stop for it without any sign in their own figures.
pub fn machine_steal_ms() -> Option<f64> {
    steal_ms_in(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The steal time since a reading of [`machine_steal_ms`], in ms; `None` if either is unknown.
fn steal_since(then: Option<f64>) -> Option<f64> {
    Option::zip(machine_steal_ms(), then).map(|(now, then)| now - then)
}

/// The steal time of one `/proc/stat` text: the 8th value of its `cpu` line.
pub fn steal_ms_in(stat: &str) -> Option<f64> {
    let all_cores = stat.lines().find(|line| line.starts_with("cpu "))?;
    let steal = all_cores.split_whitespace().nth(8)?.parse::<f64>().ok()?;
    Some(steal * TICK_MS)
}

/// The CPU time of one `/proc/PID/stat` text.
pub fn cpu_ms_in(stat: &str) -> Option<f64> {
    // The command name, field 2, is in parentheses and may hold spaces: count from after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let ticks = |index: usize| fields.get(index)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) * TICK_MS)
}

/// The CPU time the client and the server each spent during a case, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// This bench client: its probes, its burst's requests and answers (with their
    /// connections only when they are made during the burst: the connections made before it
    /// are not metered), its own bookkeeping.
    pub client_ms: f64,
    /// The spawned server, every thread of it; `None` for a server we did not start.
    pub server_ms: Option<f64>,
    /// The machine's steal time ([`machine_steal_ms`]) meanwhile: time the hypervisor took
    /// the cores away from every thread here, client's and server's alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ms: Option<f64>,
}

impl CpuUse {
    /// Whether the client used more CPU than the server: then the client may have set the
    /// pace, and the figure is not the server's alone.
    pub fn client_heavier(&self) -> bool {
        self.server_ms.is_some_and(|server| self.client_ms > server)
    }

    /// The core time not left to the server: the client's and what the hypervisor stole, ms.
    pub fn taken_from_the_server_ms(&self) -> f64 {
        self.client_ms + self.steal_ms.unwrap_or_default()
    }

    /// This and `other` added up, each figure only where both have it: for figures pooled
    /// over runs.
    pub fn plus(self, other: CpuUse) -> CpuUse {
        let sum = |a: Option<f64>, b: Option<f64>| Option::zip(a, b).map(|(a, b)| a + b);
        CpuUse {
            client_ms: self.client_ms + other.client_ms,
            server_ms: sum(self.server_ms, other.server_ms),
            steal_ms: sum(self.steal_ms, other.steal_ms),
        }
    }
}

/// A reading at the start of a case, to be closed with [`CpuMeter::stop`].
#[derive(Debug, Clone, Copy)]
pub struct CpuMeter {
    server: Option<u32>,
    client_ms: Option<f64>,
    server_ms: Option<f64>,
    steal_ms: Option<f64>,
}

impl CpuMeter {
    /// Starts measuring this process and `server`, if given.
    pub fn start(server: Option<u32>) -> CpuMeter {
        CpuMeter {
            server,
            client_ms: process_cpu_ms(std::process::id()),
            server_ms: server.and_then(process_cpu_ms),
            steal_ms: machine_steal_ms(),
        }
    }

    /// What each used since [`CpuMeter::start`]; `None` where `/proc` cannot tell.
    pub fn stop(self) -> Option<CpuUse> {
        let client_ms = process_cpu_ms(std::process::id())? - self.client_ms?;
        let server_now = self.server.and_then(process_cpu_ms);
        let server_ms = Option::zip(server_now, self.server_ms).map(|(now, then)| now - then);
        Some(CpuUse {
            client_ms,
            server_ms,
            steal_ms: steal_since(self.steal_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime() {
        // Recorded from a demo server, with a space in the command name to be safe.
        let stat = "4242 (demo hyper) S 1 4242 4242 0 -1 4194560 521 0 0 0 37 12 0 0 20 0 3 0 \
                    123456 0 0";
        assert_eq!(cpu_ms_in(stat), Some(490.0));
        assert_eq!(cpu_ms_in("garbage"), None);
    }

    #[test]
    fn a_spinning_thread_counts_its_own_time() {
        let before = this_thread_cpu_ms().expect("a thread CPU clock");
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        let spent = this_thread_cpu_ms().expect("a thread CPU clock") - before;
        // Spinning 20 ms of wall time costs CPU time, never more than the wall time; the
        // lower bound leaves room for a busy machine that took the core away.
        assert!(spent > 1.0 && spent < 25.0, "{spent} ms");
    }

    #[test]
    fn steal_is_read_from_the_all_cores_line() {
        // Recorded from this machine's /proc/stat (Linux 6.18), first lines.
        let stat = "cpu  694032 8946 184934 6715794 17272 0 8566 4198 0 0\n\
                    cpu0 347016 4473 92467 3357897 8636 0 4283 2099 0 0\n";
        assert_eq!(steal_ms_in(stat), Some(41_980.0));
        assert_eq!(steal_ms_in("cpu0 1 2 3\n"), None);
    }

    #[test]
    fn this_process_has_a_cpu_time() {
        if cfg!(target_os = "linux") {
            assert!(process_cpu_ms(std::process::id()).is_some());
        }
    }

    #[test]
    fn the_client_is_heavier_only_when_both_are_known() {
        let cpu = |client_ms, server_ms| CpuUse {
            client_ms,
            server_ms,
            steal_ms: None,
        };
        assert!(cpu(30.0, Some(20.0)).client_heavier());
        assert!(!cpu(10.0, Some(20.0)).client_heavier());
        assert!(!cpu(30.0, None).client_heavier());
    }
}
