//! What the watch says when a poll holds a thread too long.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// One report of a stall, handed to the sink ([`Config::on_report`](crate::Config::on_report),
/// or stderr by default). Its `Display` is the log line.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Report {
    /// Sent by the watchdog thread, once per poll, the first time it sees a poll running past
    /// the threshold; the poll is still running. A poll that never returns is reported this
    /// way and no other.
    ///
    /// `reactor thread main blocked for 250 ms in GET /bad (still running)`
    StillRunning {
        /// The wrapped future's label.
        label: &'static str,
        /// The name of the thread the poll holds, or `<unnamed>`.
        thread: Arc<str>,
        /// How long the poll had been running when the watchdog saw it.
        blocked: Duration,
        /// The watch's threshold.
        threshold: Duration,
    },
    /// Sent by the polling thread itself, right after a poll that took longer than the
    /// threshold returned (and before the executor gets the thread back).
    ///
    /// `GET /bad held reactor thread main for 501 ms (limit 100 ms; 0.1 ms on the CPU in its
    /// last 480 ms)`
    Returned {
        /// The wrapped future's label.
        label: &'static str,
        /// The name of the thread the poll held, or `<unnamed>`.
        thread: Arc<str>,
        /// How long the poll ran, from just before the inner poll to just after.
        held: Duration,
        /// The watch's threshold.
        threshold: Duration,
        /// How much of the poll the thread spent on a CPU, as far as it can be known.
        cpu: CpuTime,
    },
}

impl Report {
    /// The label of the poll reported.
    pub fn label(&self) -> &'static str {
        match self {
            Report::StillRunning { label, .. } | Report::Returned { label, .. } => label,
        }
    }

    /// The name of the thread the poll held.
    pub fn thread(&self) -> &str {
        match self {
            Report::StillRunning { thread, .. } | Report::Returned { thread, .. } => thread,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Report::StillRunning {
                label,
                thread,
                blocked,
                ..
            } => write!(
                f,
                "reactor thread {thread} blocked for {} ms in {label} (still running)",
                Ms(*blocked)
            ),
            Report::Returned {
                label,
                thread,
                held,
                threshold,
                cpu,
            } => write!(
                f,
                "{label} held reactor thread {thread} for {} ms (limit {} ms; {cpu})",
                Ms(*held),
                Ms(*threshold)
            ),
        }
    }
}

/// How much CPU time a slow poll used.
///
/// A thread's CPU time cannot be read per poll without a system call, so the watchdog samples
/// it when it first sees a poll running (within one watchdog interval, threshold/2, of the
/// poll's start) and the thread reads its own at the end of a slow poll. The figure therefore
/// covers the part of the poll from that sample to its end, and says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuTime {
    /// The thread spent `on_cpu` on a CPU during the last `window` of the poll.
    ///
    /// **Interpretation**: `on_cpu` close to `window` means the poll computed (a hot loop, a
    /// big serialisation, a blocking mutex spinning); `on_cpu` near zero means it slept or
    /// waited (a blocking read, `std::thread::sleep`, a contended lock). Accurate to about one
    /// scheduler tick (4 ms at `HZ=250`): Linux brings a running thread's CPU time up to date
    /// at ticks and context switches. Displays as `0.1 ms on the CPU in its last 401 ms`.
    Sampled {
        /// CPU time the thread used during `window` (at most `window`).
        on_cpu: Duration,
        /// The span measured: from the watchdog's sample to the end of the poll.
        window: Duration,
    },
    /// The watchdog did not see the poll running (it was starved of CPU, or the poll ended
    /// between its sight of it and its sample), so there is no start to measure from.
    /// Displays as `CPU time not sampled`.
    NotSampled,
    /// This platform gives no std-only way to read a thread's CPU time (anything but Linux,
    /// or a Linux kernel without scheduler accounting). Displays as `CPU time not available`.
    Unavailable,
}

impl fmt::Display for CpuTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuTime::Sampled { on_cpu, window } => write!(
                f,
                "{} ms on the CPU in its last {} ms",
                Ms(*on_cpu),
                Ms(*window)
            ),
            CpuTime::NotSampled => f.write_str("CPU time not sampled"),
            CpuTime::Unavailable => f.write_str("CPU time not available"),
        }
    }
}

/// Milliseconds for people: whole from 10 ms up, one decimal below.
struct Ms(Duration);

impl fmt::Display for Ms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_secs_f64() * 1e3;
        if ms >= 10.0 {
            write!(f, "{ms:.0}")
        } else {
            write!(f, "{ms:.1}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CpuTime, Report};
    use std::time::Duration;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn still_running_line() {
        let report = Report::StillRunning {
            label: "GET /bad",
            thread: "main".into(),
            blocked: Duration::from_micros(250_400),
            threshold: ms(100),
        };
        assert_eq!(
            report.to_string(),
            "reactor thread main blocked for 250 ms in GET /bad (still running)"
        );
        assert_eq!(report.label(), "GET /bad");
        assert_eq!(report.thread(), "main");
    }

    #[test]
    fn returned_lines() {
        let returned = |cpu| Report::Returned {
            label: "GET /bad",
            thread: "main".into(),
            held: Duration::from_micros(501_300),
            threshold: ms(100),
            cpu,
        };
        let sampled = CpuTime::Sampled {
            on_cpu: Duration::from_micros(120),
            window: Duration::from_micros(401_200),
        };
        assert_eq!(
            returned(sampled).to_string(),
            "GET /bad held reactor thread main for 501 ms (limit 100 ms; 0.1 ms on the CPU in its last 401 ms)"
        );
        assert_eq!(
            returned(CpuTime::NotSampled).to_string(),
            "GET /bad held reactor thread main for 501 ms (limit 100 ms; CPU time not sampled)"
        );
        assert_eq!(
            returned(CpuTime::Unavailable).to_string(),
            "GET /bad held reactor thread main for 501 ms (limit 100 ms; CPU time not available)"
        );
    }

    #[test]
    fn short_limits_keep_a_decimal() {
        let report = Report::Returned {
            label: "/x",
            thread: "<unnamed>".into(),
            held: Duration::from_micros(12_600),
            threshold: Duration::from_micros(2_500),
            cpu: CpuTime::Unavailable,
        };
        assert_eq!(
            report.to_string(),
            "/x held reactor thread <unnamed> for 13 ms (limit 2.5 ms; CPU time not available)"
        );
    }
}
