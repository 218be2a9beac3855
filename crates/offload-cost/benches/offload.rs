//! The price of offloading, side by side: one criterion group per case, one function per
//! runtime in each (see the crate docs for the cases).
//!
//! Each runtime gets one reactor thread, set up as its demo server sets it up with
//! `--threads 1`, built once before any timing. Every criterion sample then runs as a task
//! on that thread, as a request handler would, and the task times itself: the clock starts
//! and stops on the reactor thread, so handing the task over and its result back to the
//! bench thread is not part of any figure.

use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use offload_cost::{Case, IN_FLIGHT, Runtime, SETTINGS};

/// What a runtime brings to the cases: its one reactor thread, its offload and its timer.
trait Reactor {
    /// Sends a no-op closure to the blocking pool at once; the future resolves when the
    /// closure has run and its result is back. Sending at the call, not at the first poll, is
    /// what lets the in-flight case have all 64 in the pool before it awaits any.
    fn offload() -> impl Future<Output = ()> + Send + 'static;

    /// The runtime's own timer, due at once.
    fn zero_timer() -> impl Future<Output = ()> + Send + 'static;

    /// Runs `task` as a task on the reactor thread and waits, on this thread, for its output.
    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T;
}

/// One criterion sample: `iters` iterations of `case` on `reactor`, timed by the task itself.
fn sample<R: Reactor>(reactor: &R, case: Case, iters: u64) -> Duration {
    reactor.run(async move {
        match case {
            Case::ReadyFuture => one_by_one(iters, || std::future::ready(black_box(1_u64))).await,
            Case::ZeroTimer => one_by_one(iters, R::zero_timer).await,
            Case::OneOffload => one_by_one(iters, R::offload).await,
            Case::InFlight => all_at_once(iters, R::offload).await,
        }
    })
}

/// Starts one future and awaits it, `iters` times.
async fn one_by_one<F: Future>(iters: u64, mut start: impl FnMut() -> F) -> Duration {
    let clock = Instant::now();
    for _ in 0..iters {
        // Keeps the compiler from proving the loop useless and deleting it (the ready case).
        black_box(start().await);
    }
    clock.elapsed()
}

/// Starts [`IN_FLIGHT`] futures, then awaits them in turn, `iters` times. Awaiting in order is
/// enough: all of them were started before the first await, so the pool works on them
/// together while we wait for the first, and the later ones are mostly done by their turn.
async fn all_at_once<F: Future>(iters: u64, mut start: impl FnMut() -> F) -> Duration {
    // Allocated once, outside the clock: the vector is the harness, not the offload.
    let mut in_flight = Vec::with_capacity(IN_FLIGHT);
    let clock = Instant::now();
    for _ in 0..iters {
        in_flight.extend((0..IN_FLIGHT).map(|_| start()));
        for offload in in_flight.drain(..) {
            black_box(offload.await);
        }
    }
    clock.elapsed()
}

/// tokio: a `current_thread` runtime, as `demo-axum` and `demo-hyper-tokio` build it: the
/// thread that calls `block_on` is the reactor.
struct Tokio {
    runtime: tokio::runtime::Runtime,
}

impl Tokio {
    fn start() -> Tokio {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cannot build a tokio runtime");
        Tokio { runtime }
    }
}

impl Reactor for Tokio {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        let back = tokio::task::spawn_blocking(|| ());
        async move { back.await.expect("a no-op closure does not panic") }
    }

    fn zero_timer() -> impl Future<Output = ()> + Send + 'static {
        tokio::time::sleep(Duration::ZERO)
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        self.runtime
            .block_on(async { tokio::spawn(task).await })
            .expect("the bench task panicked")
    }
}

/// actix-web: an actix-rt `System`, the runtime each actix-web worker runs: a tokio
/// `current_thread` runtime with a `LocalSet`, whose tasks never leave the thread.
struct ActixWeb {
    system: actix_web::rt::SystemRunner,
}

impl ActixWeb {
    fn start() -> ActixWeb {
        ActixWeb {
            system: actix_web::rt::System::new(),
        }
    }
}

impl Reactor for ActixWeb {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        // `web::block` is tokio's `spawn_blocking` underneath: it needs to be called inside a
        // running tokio runtime (here, the System's), and it sends the closure at the call.
        let back = actix_web::web::block(|| ());
        async move { back.await.expect("a no-op closure does not panic") }
    }

    fn zero_timer() -> impl Future<Output = ()> + Send + 'static {
        actix_web::rt::time::sleep(Duration::ZERO)
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        // `rt::spawn` puts the task on the System's `LocalSet`, so it must be called inside
        // `block_on`.
        self.system
            .block_on(async { actix_web::rt::spawn(task).await })
            .expect("the bench task panicked")
    }
}

/// async-std: its global executor, on the one thread `main` asks for through
/// `ASYNC_STD_THREAD_COUNT`, as `demo-hyper-async-std --threads 1` runs it.
struct AsyncStd;

impl AsyncStd {
    /// The executor's threads are named `async-std/runtime`.
    const THREAD_NAME: &str = "async-std/runtime";

    fn start() -> AsyncStd {
        // The first spawn starts the executor; then make sure it really has one thread,
        // since the variable only counts if it was set before that first use.
        AsyncStd.run(async {});
        if let Some(threads) = threads_named(AsyncStd::THREAD_NAME) {
            assert_eq!(threads, 1, "async-std must run one executor thread");
        }
        AsyncStd
    }
}

impl Reactor for AsyncStd {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        // Note: async-std wraps the `blocking` crate's task in a task of its own on the
        // executor, so its trip holds one more task hop than smol's.
        async_std::task::spawn_blocking(|| ())
    }

    fn zero_timer() -> impl Future<Output = ()> + Send + 'static {
        async_std::task::sleep(Duration::ZERO)
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        // `block_on` alone would poll the task here, on the bench thread, outside the
        // executor: spawn it onto the executor's thread, and only wait here.
        async_std::task::block_on(async_std::task::spawn(task))
    }
}

/// smol: an own `Executor` run on one thread, as `demo-hyper-smol --threads 1` runs it.
struct Smol;

/// The executor every smol bench task is polled on.
static SMOL_EXECUTOR: smol::Executor<'static> = smol::Executor::new();

impl Smol {
    fn start() -> Smol {
        std::thread::Builder::new()
            .name("smol-executor-0".to_owned())
            .spawn(|| smol::block_on(SMOL_EXECUTOR.run(smol::future::pending::<()>())))
            .expect("cannot start the smol executor thread");
        Smol
    }
}

impl Reactor for Smol {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        smol::unblock(|| ())
    }

    // `Timer` resolves to the `Instant` it fired at; the cases want `()`.
    async fn zero_timer() {
        smol::Timer::after(Duration::ZERO).await;
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        smol::block_on(SMOL_EXECUTOR.spawn(task))
    }
}

/// compio: a compio `Runtime` on the bench thread, one of the per-thread runtimes
/// `demo-axum-compio --threads 1` runs.
struct Compio {
    runtime: compio::runtime::Runtime,
}

impl Compio {
    fn start() -> Compio {
        let runtime = compio::runtime::Runtime::new().expect("compio needs io_uring");
        Compio { runtime }
    }
}

impl Reactor for Compio {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        let back = compio::runtime::spawn_blocking(|| ());
        async move { back.await.expect("a no-op closure does not panic") }
    }

    fn zero_timer() -> impl Future<Output = ()> + Send + 'static {
        // compio's timer is `!Send`; it never leaves the runtime's thread (as in the server).
        send_wrapper::SendWrapper::new(compio::time::sleep(Duration::ZERO))
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        self.runtime
            .block_on(self.runtime.spawn(task))
            .expect("the bench task panicked")
    }
}

/// A task for the ntex thread, boxed to cross the channel.
type NtexJob = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// ntex: an ntex `System` on a thread of its own, running each bench task it is sent, as
/// one worker of `demo-ntex --threads 1` runs requests. (An ntex `SystemRunner` blocks on one
/// future and is gone, so the bench cannot call it once per sample as it does compio's.)
struct Ntex {
    jobs: futures_channel::mpsc::UnboundedSender<NtexJob>,
}

impl Ntex {
    fn start() -> Ntex {
        let (jobs, mut queue) = futures_channel::mpsc::unbounded::<NtexJob>();
        std::thread::Builder::new()
            .name("ntex-bench".to_owned())
            .spawn(move || {
                ntex::rt::System::new("offload-bench", ntex::rt::DefaultRuntime).block_on(
                    async move {
                        while let Some(job) = futures_lite::StreamExt::next(&mut queue).await {
                            ntex::rt::spawn(job);
                        }
                    },
                );
            })
            .expect("cannot start the ntex thread");
        Ntex { jobs }
    }
}

impl Reactor for Ntex {
    fn offload() -> impl Future<Output = ()> + Send + 'static {
        let back = ntex::rt::spawn_blocking(|| ());
        async move { back.await.expect("a no-op closure does not panic") }
    }

    fn zero_timer() -> impl Future<Output = ()> + Send + 'static {
        // ntex's timer is `!Send`; it never leaves the runtime's thread (as in the server).
        send_wrapper::SendWrapper::new(ntex::time::sleep(Duration::ZERO))
    }

    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        let (output, result) = std::sync::mpsc::sync_channel(1);
        let job = async move {
            let _ = output.send(task.await);
        };
        self.jobs
            .unbounded_send(Box::pin(job))
            .expect("the ntex thread is running");
        result.recv().expect("the bench task panicked")
    }
}

/// How many of this process's threads are named `name`, where the system can tell (Linux:
/// `/proc/self/task/*/comm`, which keeps the first 15 bytes of the name).
fn threads_named(name: &str) -> Option<usize> {
    let name = &name.as_bytes()[..name.len().min(15)];
    let threads = std::fs::read_dir("/proc/self/task").ok()?;
    let named = threads
        .filter_map(Result::ok)
        .filter_map(|thread| std::fs::read(thread.path().join("comm")).ok())
        .filter(|comm| comm.strip_suffix(b"\n").unwrap_or(comm) == name)
        .count();
    Some(named)
}

/// One benchmark: `case` on `runtime`, whose reactor is `reactor`.
fn bench<R: Reactor>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    runtime: Runtime,
    reactor: &R,
    case: Case,
) {
    group.bench_function(runtime.id(), |bencher| {
        bencher.iter_custom(|iters| sample(reactor, case, iters));
    });
}

#[allow(unsafe_code)] // one write to the environment, see the SAFETY note
fn main() {
    // async-std reads its executor's thread count once, at its first use. One thread, like
    // the servers' default `--threads 1`, whatever the caller's environment says.
    // SAFETY: this is the first line of `main`: no other thread exists yet that could read
    // the environment while we write it.
    unsafe { std::env::set_var("ASYNC_STD_THREAD_COUNT", "1") };

    // No plots: the report reads criterion's estimates.json files, and plotting 16
    // benchmarks would take longer than some of them.
    // 10,000 bootstrap resamples rather than 100,000: the analysis, not the sampling, was most
    // of the bench's time.
    let mut criterion = Criterion::default()
        .configure_from_args()
        .without_plots()
        .nresamples(10_000);

    let tokio = Tokio::start();
    let actix_web = ActixWeb::start();
    let async_std = AsyncStd::start();
    let smol = Smol::start();
    let compio = Compio::start();
    let ntex = Ntex::start();

    for case in Case::ALL {
        let mut group = criterion.benchmark_group(case.id());
        group
            .warm_up_time(SETTINGS.warm_up)
            .measurement_time(SETTINGS.measurement)
            .sample_size(SETTINGS.sample_size);
        for runtime in Runtime::ALL {
            // The match is exhaustive: a runtime added to the plan does not build until it
            // has a reactor here.
            match runtime {
                Runtime::Tokio => bench(&mut group, runtime, &tokio, case),
                Runtime::ActixWeb => bench(&mut group, runtime, &actix_web, case),
                Runtime::AsyncStd => bench(&mut group, runtime, &async_std, case),
                Runtime::Smol => bench(&mut group, runtime, &smol, case),
                Runtime::Compio => bench(&mut group, runtime, &compio, case),
                Runtime::Ntex => bench(&mut group, runtime, &ntex, case),
            }
        }
        group.finish();
    }

    criterion.final_summary();
}
