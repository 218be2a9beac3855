//! Thread CPU time, std only, never on the fast path.
//!
//! On Linux the first field of a thread's `schedstat` is the nanoseconds it has spent on a CPU
//! (the scheduler's `sum_exec_runtime`). The kernel brings that sum up to date at context
//! switches and at scheduler ticks, so a reading of a thread that is running may lag by up to
//! one tick (4 ms at `HZ=250`); readings of a sleeping thread are exact. Elsewhere there is no
//! std-only way to read another thread's CPU time, and none is reported.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

/// Where one thread's CPU time can be read, by that thread or by the watchdog.
#[derive(Debug)]
pub(crate) struct ThreadCpu {
    /// `/proc/<pid>/task/<tid>/schedstat`, or `None` where that cannot be read.
    path: Option<PathBuf>,
}

impl ThreadCpu {
    /// Finds the calling thread's `schedstat` and checks that it reports anything.
    pub(crate) fn of_current_thread() -> ThreadCpu {
        if !cfg!(target_os = "linux") {
            return ThreadCpu { path: None };
        }
        // `/proc/thread-self` links to `<pid>/task/<tid>`: a path any thread of the process
        // can open for as long as this thread lives.
        let path = std::fs::read_link("/proc/thread-self")
            .ok()
            .map(|task| PathBuf::from("/proc").join(task).join("schedstat"));
        let cpu = ThreadCpu { path };
        // A kernel without scheduler accounting prints "0 0 0"; a thread reading its own file
        // has been scheduled at least once, so its third field (run count) is not 0.
        match cpu.path.as_ref().and_then(|path| read_schedstat(path)) {
            Some((_, runs)) if runs > 0 => cpu,
            _ => ThreadCpu { path: None },
        }
    }

    /// Whether [`ThreadCpu::read`] can ever answer.
    pub(crate) fn available(&self) -> bool {
        self.path.is_some()
    }

    /// The thread's CPU time so far, in nanoseconds. One `open` and one `read`: never call it
    /// per poll.
    pub(crate) fn read(&self) -> Option<u64> {
        self.path
            .as_ref()
            .and_then(|path| read_schedstat(path))
            .map(|(ns, _)| ns)
    }
}

/// The first (ns on CPU) and third (times scheduled) fields of a `schedstat` file, read into a
/// stack buffer: no allocation.
fn read_schedstat(path: &std::path::Path) -> Option<(u64, u64)> {
    let mut buf = [0_u8; 96];
    let len = File::open(path).ok()?.read(&mut buf).ok()?;
    let text = std::str::from_utf8(&buf[..len]).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let on_cpu = fields.next()?.parse().ok()?;
    let runs = fields.nth(1)?.parse().ok()?;
    Some((on_cpu, runs))
}

#[cfg(test)]
mod tests {
    use super::ThreadCpu;

    #[test]
    fn cpu_time_grows_while_burning() {
        let cpu = ThreadCpu::of_current_thread();
        if !cfg!(target_os = "linux") {
            assert!(!cpu.available());
            return;
        }
        assert!(cpu.available(), "schedstat should be readable on Linux");
        let before = cpu.read().expect("schedstat");
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(0_u64);
        }
        let after = cpu.read().expect("schedstat");
        assert!(after > before, "{after} should exceed {before}");
    }
}
