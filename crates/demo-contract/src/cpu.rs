//! CPU-bound work, the other way to block: real computation (hashing a 64 KiB buffer over and
//! over) until the thread running it has spent a given CPU time of its own.
//!
//! A sleep only waits, so offloading it costs nothing and any number of sleeps overlap. CPU
//! work is different: wherever it runs, it needs a core, and there are only so many. The
//! budget is counted on the thread's own CPU clock (`CLOCK_THREAD_CPUTIME_ID`), not on the
//! wall clock, so one unit of work is the same amount of computing on any machine and under
//! any load: time spent waiting for a core while other threads compute is not counted.
//!
//! - [`burn`]: the work, at once, on the calling thread;
//! - [`burn_in_slices`]: the same in slices of about [`SLICE`], awaiting the runtime's yield
//!   between them;
//! - [`on_pool`]: runs a job on the shared pool of [`pool_threads`] threads (rayon) and awaits
//!   it through a oneshot channel, on any runtime.

use std::future::Future;
use std::hash::{DefaultHasher, Hasher as _};
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use nix::time::{ClockId, clock_gettime};

/// The buffer hashed over and over. One pass over it takes tens of microseconds, far below a
/// slice, so the clock is read often enough to stop close to the budget.
const BUFFER_BYTES: usize = 64 * 1024;

/// The CPU time of one slice of [`burn_in_slices`]: the longest the reactor thread is held
/// between two yields.
pub const SLICE: Duration = Duration::from_millis(1);

/// What one piece of CPU work cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burned {
    /// CPU time used, on the thread CPU clock of the thread that ran it (summed over the
    /// slices, which may run on different threads).
    pub cpu: Duration,
    /// Wall time from the work's start to its end.
    pub wall: Duration,
}

/// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`): user and system time of
/// this thread alone.
pub fn thread_cpu_time() -> Duration {
    let now = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .expect("every thread has a CPU-time clock on the platforms nix supports");
    Duration::from(now)
}

/// Computes on the calling thread until it has spent `cpu` of its own CPU time.
pub fn burn(cpu: Duration) -> Burned {
    let start = Instant::now();
    let used = Hashing::new().run_for(cpu);
    Burned {
        cpu: used,
        wall: start.elapsed(),
    }
}

/// The same work as [`burn`], in slices of about [`SLICE`] of CPU time, awaiting
/// `yield_now()` between them: while this task waits to be polled again, the thread polls the
/// others. Works with any runtime's yield (`tokio::task::yield_now`,
/// `async_std::task::yield_now`, `futures_lite::future::yield_now`).
pub async fn burn_in_slices<Y>(cpu: Duration, mut yield_now: impl FnMut() -> Y) -> Burned
where
    Y: Future<Output = ()>,
{
    let start = Instant::now();
    let mut hashing = Hashing::new();
    let mut used = Duration::ZERO;
    while used < cpu {
        // Each slice is timed on the thread that runs it: the task may move between slices.
        used += hashing.run_for((cpu - used).min(SLICE));
        if used < cpu {
            yield_now().await;
        }
    }
    Burned {
        cpu: used,
        wall: start.elapsed(),
    }
}

/// How many threads the pool of [`on_pool`] runs: one per core this process may use.
pub fn pool_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The pool for CPU work: one per process, started at its first job, its threads named
/// `cpu-pool-N`. Never a reactor thread, so never marked as one.
static POOL: LazyLock<rayon::ThreadPool> = LazyLock::new(|| {
    rayon::ThreadPoolBuilder::new()
        .num_threads(pool_threads())
        .thread_name(|n| format!("cpu-pool-{n}"))
        .build()
        .expect("the CPU pool's threads start")
});

/// Queues `job` on the CPU pool at once and returns a future of its result, which any
/// runtime can await (a `futures-channel` oneshot wakes it). With one thread per core, a
/// burst of jobs runs a core's worth at a time while the rest queue, instead of every job
/// competing for the cores as on a blocking pool. As with `spawn_blocking`, the job runs to
/// its end even if the future is dropped, and a panic in it resumes in the awaiting task.
pub fn on_pool<T, F>(job: F) -> impl Future<Output = T> + Send + 'static
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (done, answer) = oneshot::channel();
    POOL.spawn(move || {
        // Caught, so that it reaches the awaiting task: rayon aborts the process on a panic
        // that escapes a spawned job.
        let outcome = panic::catch_unwind(AssertUnwindSafe(job));
        // An error means the future was dropped: nobody waits for the answer any more.
        let _ = done.send(outcome);
    });
    async move {
        let outcome = answer.await.expect("the pool runs every job it is given");
        outcome.unwrap_or_else(|panic| panic::resume_unwind(panic))
    }
}

/// The computation: a 64 KiB buffer, hashed whole with std's SipHash again and again, each
/// digest written back into the buffer so that every pass hashes new bytes.
struct Hashing {
    buffer: Vec<u8>,
    digest: u64,
}

impl Hashing {
    fn new() -> Hashing {
        Hashing {
            buffer: (0..BUFFER_BYTES).map(|i| i as u8).collect(),
            digest: 0,
        }
    }

    /// Hashes until the calling thread has spent `cpu` of CPU time since the call, checking
    /// its clock after each pass; returns the CPU time spent, at least `cpu`.
    fn run_for(&mut self, cpu: Duration) -> Duration {
        let start = thread_cpu_time();
        let mut used = Duration::ZERO;
        while used < cpu {
            let mut hasher = DefaultHasher::new();
            hasher.write_u64(self.digest);
            hasher.write(&self.buffer);
            self.digest = std::hint::black_box(hasher.finish());
            self.buffer[..8].copy_from_slice(&self.digest.to_le_bytes());
            used = thread_cpu_time().saturating_sub(start);
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = Duration::from_millis(20);

    #[test]
    fn burn_spends_the_cpu_time_asked_for_and_little_more() {
        let burned = burn(BUDGET);
        assert!(burned.cpu >= BUDGET, "{burned:?}");
        // A pass is tens of microseconds; a busy machine may add a tick of accounting.
        assert!(burned.cpu < BUDGET * 2, "{burned:?}");
        // Wall time includes waiting for a core, CPU time does not.
        assert!(burned.wall >= burned.cpu.mul_f64(0.9), "{burned:?}");
        assert_eq!(burn(Duration::ZERO).cpu, Duration::ZERO);
    }

    #[test]
    fn a_sleep_costs_no_cpu_time() {
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(20));
        assert!(thread_cpu_time() - before < Duration::from_millis(5));
    }

    #[test]
    fn slices_yield_between_them_and_add_up() {
        let mut yields = 0;
        let burned = block_on(burn_in_slices(BUDGET, || {
            yields += 1;
            std::future::ready(())
        }));
        assert!(burned.cpu >= BUDGET, "{burned:?}");
        // One yield between each two slices of about 1 ms (each may overrun by a pass).
        let slices = (BUDGET.as_millis() / SLICE.as_millis()) as usize;
        assert!(
            (slices / 2..slices).contains(&yields),
            "{yields} yields for {burned:?}"
        );
    }

    #[test]
    fn on_pool_runs_off_the_calling_thread_and_answers() {
        let caller = std::thread::current().id();
        let (thread, burned) = block_on(on_pool(move || {
            (
                std::thread::current().name().map(str::to_owned),
                burn(BUDGET),
            )
        }));
        assert!(thread.is_some_and(|name| name.starts_with("cpu-pool-")));
        assert!(burned.cpu >= BUDGET);
        assert_ne!(block_on(on_pool(|| std::thread::current().id())), caller);
    }

    #[test]
    fn a_panic_on_the_pool_resumes_in_the_awaiting_task() {
        let outcome = panic::catch_unwind(|| {
            block_on(on_pool(|| -> u8 { panic!("boom") }));
        });
        assert!(outcome.is_err());
        // The pool survives it.
        assert_eq!(block_on(on_pool(|| 7)), 7);
    }

    /// A minimal `block_on`: the futures here are woken by another thread or are ready.
    fn block_on<F: Future>(future: F) -> F::Output {
        use std::sync::Arc;
        use std::task::{Context, Poll, Wake};

        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Arc::new(Unpark(std::thread::current())).into();
        let mut context = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
            std::thread::park();
        }
    }
}
