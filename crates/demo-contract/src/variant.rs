//! The experiments' server variants. A server started with `--threads 1 --variant NAME`
//! differs from its stock self in one arrangement, so that an experiment can tell that
//! arrangement's effect apart from everything else about a stack. Each server's `--help`
//! lists its own ([`of_server`]), with what each changes; the parser refuses any other.
//!
//! The first two are the at-rest experiment's ([`VARIANTS`]): they arrange the threads
//! differently, to tell the cost of one thread waking another. The other three are the race
//! experiment's ([`RACE_VARIANTS`]): they change one setting that may decide whether a request
//! arriving during a burst is answered within it, actix-http's `client_request_timeout` (0,
//! off) and `keep_alive` (60 s), and tokio's `event_interval` (1).
//!
//! Each variant is named here only; its arrangement lives beside its stack's stock one, in the
//! function the server's `main` calls:
//! - [`TOKIO_REACTOR_ON_WORKER`] in `for_tokio::run`;
//! - [`SMOL_EXECUTOR_ON_MAIN`] in `for_async_io::run_executor`;
//! - [`ACTIX_REQUEST_TIMEOUT_OFF`] and [`ACTIX_KEEP_ALIVE_60S`] in `for_actix::run`;
//! - [`TOKIO_EVENT_INTERVAL_1`] in the runtime builder of `for_tokio::runtime` (which
//!   `for_tokio::run` uses);
//! - [`AXUM_TASK_MONITOR`], the detectors experiment's, in `for_axum::serve`;
//! - [`TOKIO_POLL_HOOKS`], the detectors experiment's too, in `for_tokio::runtime`'s builder;
//! - [`TOKIO_CONSOLE`], the detectors experiment's too, beside it;
//! - [`COMPIO_EVENT_INTERVAL_1`] and [`NTEX_EVENT_INTERVAL_2`], the CPU experiment's, in the
//!   runtime builders of `for_compio::run` and `for_ntex::run`;
//! - [`COMPIO_EPOLL`], [`COMPIO_SQPOLL`], [`NTEX_EPOLL`] and [`NTEX_DIRECT_WRITE`], the
//!   io_uring experiment's ([`URING_VARIANTS`]), in the same functions;
//! - the `multi-thread` variants ([`multi_thread_variants`]: every stack whose description
//!   serves tokio's own routes has one) and [`TOKIO_LIFO_SLOT_OFF`], tokio's own answers', in
//!   `for_tokio::runtime`; these two run at any `--threads`.
//! - [`MONOIO_NO_POOL`] and [`MONOIO_EXECUTE_LOCAL`] ([`MONOIO_VARIANTS`]), which run at any
//!   `--threads` too, in `for_monoio::run`'s runtime builder;
//! - [`GLOMMIO_STALL_DETECTOR`], the detectors experiment's, in `for_glommio::run`'s.

use std::sync::LazyLock;

use crate::{Args, Route};

/// The flag that selects a variant: `--variant NAME`, repeatable.
pub const FLAG: &str = "--variant";

/// One variant: which server, its name on that server's command line (`--variant NAME`), and
/// its name in the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub server: &'static str,
    pub name: &'static str,
    pub label: &'static str,
    /// Whether it runs at any `--threads`; most change one arrangement of a one-thread
    /// server, and need `--threads 1`.
    pub any_threads: bool,
    /// What it changes, in a sentence, for the results.
    pub about: &'static str,
}

/// demo-hyper-smol with no executor thread (`about` says what changes).
pub const SMOL_EXECUTOR_ON_MAIN: Variant = Variant {
    server: "demo-hyper-smol",
    name: "executor-on-main",
    label: "demo-hyper-smol (executor on main)",
    any_threads: false,
    about: "no executor thread: the main thread runs the executor inside async-io's \
            `block_on`, which waits on epoll itself when it holds the reactor's lock; \
            async-io's own thread still competes for that lock",
};

/// demo-hyper-tokio with its epoll on a worker thread apart (`about` says what changes).
pub const TOKIO_REACTOR_ON_WORKER: Variant = Variant {
    server: "demo-hyper-tokio",
    name: "reactor-on-worker",
    label: "demo-hyper-tokio (reactor on a worker)",
    any_threads: false,
    about: "requests polled on the main thread (a `LocalSet`) while the one worker of a \
            `multi_thread` runtime waits on epoll: every readiness wakes the worker, which \
            wakes the main thread, the hop async-io's reactor thread makes, added to tokio",
};

/// demo-actix with actix-http's `client_request_timeout` off (`about` says what changes).
pub const ACTIX_REQUEST_TIMEOUT_OFF: Variant = Variant {
    server: "demo-actix",
    name: "request-timeout-off",
    label: "demo-actix (client_request_timeout off)",
    any_threads: false,
    about: "actix-http's client_request_timeout set to 0: a new connection has no deadline \
            for its first request's head, so no 408 whatever the worker's cached clock says",
};

/// demo-actix with a keep-alive of 60 s instead of 5 (`about` says what changes).
pub const ACTIX_KEEP_ALIVE_60S: Variant = Variant {
    server: "demo-actix",
    name: "keep-alive-60s",
    label: "demo-actix (keep-alive 60 s)",
    any_threads: false,
    about: "actix-http's keep_alive set to 60 s instead of its default 5 s: an idle \
            keep-alive connection whose next request waits unread behind a blocked worker is \
            not closed when the worker comes back after 5 s",
};

/// A tokio server polling its I/O driver after every task (`about` says what changes).
pub const TOKIO_EVENT_INTERVAL_1: Variant = Variant {
    server: "demo-hyper-tokio",
    name: "event-interval-1",
    label: "demo-hyper-tokio (event_interval 1)",
    any_threads: false,
    about: "tokio's Builder::event_interval(1): the scheduler polls the I/O driver after \
            every task instead of every 61, so readiness of other sockets is seen between \
            two handlers",
};

/// demo-axum with tokio-metrics' `TaskMonitor` on every route (`about` says what changes).
pub const AXUM_TASK_MONITOR: Variant = Variant {
    server: "demo-axum",
    name: "task-monitor",
    label: "demo-axum (tokio-metrics TaskMonitor)",
    any_threads: false,
    about: "one tokio-metrics TaskMonitor per route (slow-poll threshold 100 ms), its \
            intervals sampled every 100 ms by a task on the server's runtime, as the crate's \
            axum example samples them every second; each interval with a slow poll is one line \
            on stderr",
};

/// demo-hyper-tokio with tokio's poll hooks and a watchdog thread (`about` says what
/// changes). Needs a build with `--cfg tokio_unstable`; without it the server says so and
/// exits.
pub const TOKIO_POLL_HOOKS: Variant = Variant {
    server: "demo-hyper-tokio",
    name: "poll-hooks",
    label: "demo-hyper-tokio (tokio poll hooks)",
    any_threads: false,
    about: "tokio's on_before_task_poll and on_after_task_poll (unstable API, in a build \
            with --cfg tokio_unstable) stamping each task poll's start, the task's id and \
            where it was spawned, a watchdog thread that reports a poll running past 100 ms \
            once while it runs, and the after hook reporting one that returned past it",
};

/// demo-hyper-tokio with console-subscriber, watched by console-probe (`about` says what
/// changes). Needs a build with `--cfg tokio_unstable` and `console-probe` beside the server's
/// binary; without either the server says so and exits.
pub const TOKIO_CONSOLE: Variant = Variant {
    server: "demo-hyper-tokio",
    name: "console",
    label: "demo-hyper-tokio (tokio-console)",
    any_threads: false,
    about: "console-subscriber 0.5 (default features off) installed as its README says, in a \
            build with --cfg tokio_unstable, its gRPC server on 127.0.0.1 (the port in \
            DEMO_TOKIO_CONSOLE_PORT, or a free one) publishing an update every second (its \
            default); console-probe (crates/console-probe), started beside the server as you \
            would start tokio-console, reads that stream through console-api as the console's \
            UI does and prints each warning the UI would show as a task gains it \
            (tokio-console/src/warnings.rs), and each poll of 100 ms or more that an update \
            shows running or ended",
};

/// demo-axum-compio polling io_uring after every task (`about` says what changes).
pub const COMPIO_EVENT_INTERVAL_1: Variant = Variant {
    server: "demo-axum-compio",
    name: "event-interval-1",
    label: "demo-axum-compio (event_interval 1)",
    any_threads: false,
    about: "compio's RuntimeBuilder::event_interval(1): the runtime reaps io_uring's \
            completions after every task poll instead of every 61, so a task that yields by \
            waking itself at once no longer keeps new connections and reads waiting",
};

/// demo-ntex polling io_uring after every other task (`about` says what changes).
pub const NTEX_EVENT_INTERVAL_2: Variant = Variant {
    server: "demo-ntex",
    name: "event-interval-2",
    label: "demo-ntex (event_interval 2)",
    any_threads: false,
    about: "ntex-rt's RuntimeBuilder::event_interval(2): the runtime polls its io_uring \
            after every two task polls instead of 61, so a task that yields by waking itself \
            at once no longer keeps new connections and reads waiting (1 is not usable: \
            ntex-rt's RunnableQueue::run counts it down before it takes a task from the queue \
            of wake-ups from other threads, which then never runs)",
};

/// demo-axum-compio on compio's epoll driver (`about` says what changes).
pub const COMPIO_EPOLL: Variant = Variant {
    server: "demo-axum-compio",
    name: "epoll",
    label: "demo-axum-compio (epoll driver)",
    any_threads: false,
    about: "compio's ProactorBuilder::driver_type(DriverType::Poll), the same build's \
            readiness driver: a socket operation is tried at once in the task that makes it \
            (a write is a write(2) there) and waits on epoll only when the socket is not ready, \
            instead of being queued on io_uring for the runtime's next submission",
};

/// demo-axum-compio with io_uring's kernel-side submission polling (`about` says what
/// changes).
pub const COMPIO_SQPOLL: Variant = Variant {
    server: "demo-axum-compio",
    name: "sqpoll",
    label: "demo-axum-compio (io_uring SQPOLL)",
    any_threads: false,
    about: "compio's ProactorBuilder::sqpoll_idle(1 s): a kernel thread polls io_uring's \
            submission queue, so an operation queued by a task (compio publishes the queue's \
            tail at each push) starts without waiting for the runtime's next submission; the \
            kernel thread spins up to 1 s after the last submission, a core's worth of CPU",
};

/// demo-ntex on ntex's epoll reactor (`about` says what changes).
pub const NTEX_EPOLL: Variant = Variant {
    server: "demo-ntex",
    name: "epoll",
    label: "demo-ntex (epoll reactor)",
    any_threads: false,
    about: "ntex-net's polling reactor (ntex::rt::polling, built in every Linux build) in \
            place of its io_uring one: an answer put in a connection's write buffer is written \
            with write(2) at once, in the task that put it there, instead of being queued on \
            io_uring for the runtime's next submission",
};

/// demo-ntex writing an answer from the task that made it (`about` says what changes).
pub const NTEX_DIRECT_WRITE: Variant = Variant {
    server: "demo-ntex",
    name: "direct-write",
    label: "demo-ntex (write threshold 1 byte)",
    any_threads: false,
    about: "ntex-io's IoConfig::set_write_buf_threshold(1) instead of 8 KiB: an answer put in \
            a connection's write buffer is handed to the reactor at once (Handle::write, a \
            write(2) on the epoll reactor, a no-op on io_uring's) instead of by a task spawned \
            to send every connection's buffer, which runs after the tasks already queued",
};

/// The `multi-thread` variants' name, the same on every tokio server.
const MULTI_THREAD: &str = "multi-thread";

/// Whether a tokio server was started as its `multi-thread` variant.
pub fn multi_thread_requested(args: &Args) -> bool {
    args.variants.iter().any(|name| name == MULTI_THREAD)
}

/// The `multi-thread` variant of each stack that serves tokio's own routes (its description
/// names a handler for [`Route::OkBlockInPlace`]): a `multi_thread` runtime of `--threads`
/// workers, one included, the runtime `block_in_place` needs. A stack's description decides,
/// so a tokio stack added by its folder has it too.
pub fn multi_thread_variants() -> &'static [Variant] {
    static VARIANTS: LazyLock<Vec<Variant>> = LazyLock::new(|| {
        let serving = (stacks::all().iter())
            .filter(|stack| stack.handlers.contains_key(Route::OkBlockInPlace.path()));
        serving
            .map(|stack| Variant {
                server: stack.name.as_str(),
                name: MULTI_THREAD,
                // Once per stack, for the life of the process, as the constant variants' labels.
                label: Box::leak(format!("{} (multi_thread)", stack.name).into_boxed_str()),
                any_threads: true,
                about: "tokio's multi_thread runtime at every --threads, 1 included (one worker \
                        thread beside main, instead of current_thread on main): the runtime \
                        tokio::task::block_in_place needs",
            })
            .collect()
    });
    &VARIANTS
}

/// demo-hyper-tokio without the LIFO slot (`about` says what changes). Needs a build with
/// `--cfg tokio_unstable`; without it the server says so and exits.
pub const TOKIO_LIFO_SLOT_OFF: Variant = Variant {
    server: "demo-hyper-tokio",
    name: "lifo-slot-off",
    label: "demo-hyper-tokio (LIFO slot off)",
    any_threads: true,
    about: "tokio's Builder::disable_lifo_slot (unstable API, in a build with --cfg \
            tokio_unstable): a task woken or spawned by a worker goes to the back of that \
            worker's queue, which idle workers steal from, instead of its LIFO slot, which they \
            do not",
};

/// demo-hyper-monoio on monoio's stock `RuntimeBuilder`: no thread pool attached (`about`
/// says what changes).
pub const MONOIO_NO_POOL: Variant = Variant {
    server: "demo-hyper-monoio",
    name: "no-pool",
    label: "demo-hyper-monoio (no pool)",
    any_threads: true,
    about: "monoio's RuntimeBuilder without attach_thread_pool, as it comes: its blocking \
            strategy is BlockingStrategy::Panic, so monoio::spawn_blocking panics (\"execute \
            blocking task without thread pool attached\", monoio's blocking.rs) and every \
            route that offloads answers 500",
};

/// What monoio's `spawn_blocking` panics with when no pool is attached (monoio's
/// `blocking.rs`), as [`MONOIO_NO_POOL`]'s 500 gives it.
pub const MONOIO_NO_POOL_PANIC: &str = "execute blocking task without thread pool attached";

/// demo-hyper-monoio running `spawn_blocking`'s closure where it is called (`about` says what
/// changes).
pub const MONOIO_EXECUTE_LOCAL: Variant = Variant {
    server: "demo-hyper-monoio",
    name: "execute-local",
    label: "demo-hyper-monoio (execute local)",
    any_threads: true,
    about: "monoio's RuntimeBuilder::with_blocking_strategy(BlockingStrategy::ExecuteLocal) \
            and no thread pool, the other way out its panic names: monoio::spawn_blocking runs \
            the closure at once, on the reactor thread that called it",
};

/// monoio's two ways of running `spawn_blocking` without a pool: the side-by-side flips of
/// demo-hyper-monoio's stock pool.
pub const MONOIO_VARIANTS: [Variant; 2] = [MONOIO_NO_POOL, MONOIO_EXECUTE_LOCAL];

/// demo-hyper-glommio with glommio's stall detector (`about` says what changes).
pub const GLOMMIO_STALL_DETECTOR: Variant = Variant {
    server: "demo-hyper-glommio",
    name: "stall-detector",
    label: "demo-hyper-glommio (glommio stall detector)",
    any_threads: false,
    about: "glommio's LocalExecutorBuilder::detect_stalls with its defaults (a task queue \
            running 10 ms past its 100 ms preemption budget; glommio's executor/stall.rs): a \
            timerfd armed as the queue starts running, whose thread sends SIGUSR1 to the \
            executor's thread once it fires; the signal handler records the stalled thread's \
            backtrace, and when the queue yields, DefaultStallDetectionHandler's stall() logs \
            glommio's report (executor, queue, overage, budget, then the backtrace) with \
            log::warn!, which env_logger prints on stderr",
};

/// The io_uring experiment's flips: each changes, on one io_uring server, how (or when) a
/// queued operation reaches the kernel. The two `event_interval` variants are its flips too.
pub const URING_VARIANTS: [Variant; 6] = [
    COMPIO_EPOLL,
    COMPIO_SQPOLL,
    COMPIO_EVENT_INTERVAL_1,
    NTEX_EPOLL,
    NTEX_DIRECT_WRITE,
    NTEX_EVENT_INTERVAL_2,
];

/// The io_uring servers' `event_interval` variants: the CPU experiment's, and the contract
/// check of `/ok-cpu-yield` on those servers.
pub const EVENT_INTERVAL_VARIANTS: [Variant; 2] = [COMPIO_EVENT_INTERVAL_1, NTEX_EVENT_INTERVAL_2];

/// The at-rest experiment's variants, in the order it runs them.
pub const VARIANTS: [Variant; 2] = [TOKIO_REACTOR_ON_WORKER, SMOL_EXECUTOR_ON_MAIN];

/// The race experiment's variants.
pub const RACE_VARIANTS: [Variant; 3] = [
    ACTIX_REQUEST_TIMEOUT_OFF,
    ACTIX_KEEP_ALIVE_60S,
    TOKIO_EVENT_INTERVAL_1,
];

/// Every variant named here, of one server each; with [`multi_thread_variants`], every
/// variant ([`every`]).
pub const ALL: [Variant; 18] = [
    SMOL_EXECUTOR_ON_MAIN,
    TOKIO_REACTOR_ON_WORKER,
    ACTIX_REQUEST_TIMEOUT_OFF,
    ACTIX_KEEP_ALIVE_60S,
    TOKIO_EVENT_INTERVAL_1,
    AXUM_TASK_MONITOR,
    TOKIO_POLL_HOOKS,
    TOKIO_CONSOLE,
    COMPIO_EVENT_INTERVAL_1,
    NTEX_EVENT_INTERVAL_2,
    COMPIO_EPOLL,
    COMPIO_SQPOLL,
    NTEX_EPOLL,
    NTEX_DIRECT_WRITE,
    TOKIO_LIFO_SLOT_OFF,
    MONOIO_NO_POOL,
    MONOIO_EXECUTE_LOCAL,
    GLOMMIO_STALL_DETECTOR,
];

/// Every variant of every server.
pub fn every() -> impl Iterator<Item = &'static Variant> {
    ALL.iter().chain(multi_thread_variants())
}

/// The variants of the server named `server`, which its `--variant` accepts.
pub fn of_server(server: &str) -> impl Iterator<Item = &'static Variant> + '_ {
    every().filter(move |variant| variant.server == server)
}

impl Variant {
    /// Whether this server was started as the variant (`--variant NAME`; the parser allows it
    /// with one reactor thread only, unless it runs at [any](Variant::any_threads)).
    pub fn requested(&self, args: &Args) -> bool {
        args.variants.iter().any(|name| name == self.name)
    }

    /// The arguments that start its server as it: `--variant NAME`.
    pub fn args(&self) -> [&'static str; 2] {
        [FLAG, self.name]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_never_has_two_variants_of_one_name() {
        for variant in every() {
            let same = of_server(variant.server).filter(|v| v.name == variant.name);
            assert_eq!(same.count(), 1, "{variant:?}");
        }
    }
}
