//! What every demo server shares, so that each server's `main.rs` holds only its lesson: the
//! handlers on its own stack.
//!
//! The route contract (`docs/contract.md` at the repository's root), implemented once:
//! - [`Route`]: the paths `/ping`, `/bad`, `/ok-blocking` (alias `/ok-def`), `/ok-await`, the
//!   CPU routes `/bad-cpu`, `/ok-cpu-blocking`, `/ok-cpu-yield`, `/ok-cpu-pool`, the hidden
//!   blockers `/bad-http`, `/ok-http-blocking`, `/ok-http-await` and their `-db` and `-file`
//!   twins, `/stalls` and `/events`, and tokio's own four ([`Route::TOKIO`]);
//! - [`Args`]: `--host`, `--port`, `--threads`, `--sleep-ms`, `--blocking-threads`,
//!   `--stall-ms`, `--events`, `--health-port`, `--health-period-ms`, `--upstream`, `--db`,
//!   `--file`, parsed by clap;
//! - [`Pong`], [`Work`], [`CpuWork`], [`IoWork`], [`Joined`], [`Spawned`], [`StallsJson`],
//!   [`EventsBody`] and [`ApiError`]: the JSON bodies;
//! - [`cpu`]: the CPU routes' work, measured on the thread CPU clock, and the pool they may
//!   run it on;
//! - [`blockers`]: the hidden blockers' calls (`--upstream`, `--db`, `--file`), blocking and
//!   async, and the database they query;
//! - [`parse_sleep`]: the `?ms=` rule, 0..=10000, anything else a 400;
//! - [`Demo::announce`]: the readiness line `listening on http://127.0.0.1:PORT`;
//! - [`listen`] and, for a thread-per-core server, [`listen_reuse_port`]: the listening
//!   sockets; [`exit_without_io_uring`]: the one line of a server the kernel refuses io_uring;
//! - [`reactor`]: marking the threads that poll request futures, so that `on_reactor` is a fact
//!   about the thread the sleep ran on, not a guess from the route's name;
//! - [`RequestWatch`]: the stall detector every request future is wrapped with, and its
//!   health check ([`HealthOn`]);
//! - [`EventLog`]: the server's own order of events (`--events`, `GET /events`): connections
//!   accepted, handlers started and ended;
//! - [`variant`]: the experiments' server variants, and how each is selected; their
//!   arrangements are in `for_tokio`, `for_async_io::run_executor` and `for_actix::run`.
//!
//! The `for_*` modules, each behind the feature of the same name, glue these to one stack:
//! `for_axum`, `for_actix`, `for_hyper`, `for_tokio` and `for_async_io` on readiness (epoll)
//! runtimes, `for_compio`, `for_ntex`, `for_glommio` and `for_monoio` on thread-per-core
//! runtimes over io_uring (the last two through `for_local`, hyper's side of them).

mod args;

/// What tokio's panic says when `block_in_place` runs on `current_thread`
/// (`runtime/scheduler/multi_thread/worker.rs`): the reason the tokio servers' 500 gives,
/// which their tests and the bench client's claims look for.
pub const CURRENT_THREAD_PANIC: &str =
    "can call blocking only when running on the multi-threaded runtime";

pub mod blockers;
mod body;
pub mod cpu;
mod events;
mod listening;
pub mod reactor;
mod route;
mod sleep;
pub mod variant;
mod watch;

#[cfg(test)]
mod health_tests;

pub use args::{Args, DEFAULT_STALL_MS};
pub use blockers::Blockers;
pub use body::{
    ApiError, CpuWork, Event, EventsBody, IoWork, JOIN_TIMER, Joined, Pong, Ran, Spawned,
    StallsJson, What, Work,
};
pub use events::{EventLog, RequestEvents};
pub use listening::{
    IO_URING_REFUSED, LISTEN_BACKLOG, exit_without_io_uring, listen, listen_reuse_port,
    readiness_line,
};
pub use route::Route;
pub use sleep::{MAX_SLEEP_MS, Sleep, parse_sleep};
pub use watch::{HealthOn, RequestWatch, health_line};

// `get_resources!`, for the two stacks that spell routing alike.
#[cfg(any(feature = "actix", feature = "ntex"))]
#[macro_use]
mod get_resources;
#[cfg(feature = "actix")]
pub mod for_actix;
#[cfg(feature = "async-io")]
pub mod for_async_io;
#[cfg(feature = "axum")]
pub mod for_axum;
#[cfg(feature = "compio")]
pub mod for_compio;
#[cfg(feature = "glommio")]
pub mod for_glommio;
#[cfg(feature = "hyper")]
pub mod for_hyper;
#[cfg(feature = "local")]
pub mod for_local;
#[cfg(feature = "monoio")]
pub mod for_monoio;
#[cfg(feature = "ntex")]
pub mod for_ntex;
#[cfg(feature = "tokio")]
pub mod for_tokio;
#[cfg(all(feature = "tokio", tokio_unstable))]
pub mod poll_hooks;
#[cfg(feature = "tokio")]
mod shutdown;
#[cfg(feature = "axum")]
pub mod task_monitor;
#[cfg(all(feature = "tokio", tokio_unstable))]
pub mod tokio_console;

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

/// This thread's OS id (`gettid`).
fn thread_id() -> u64 {
    u64::try_from(nix::unistd::gettid().as_raw()).unwrap_or(0)
}

/// How long a server waits, after SIGINT or SIGTERM, for requests in flight before it exits.
/// One maximal `?ms=` sleep fits in it.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What a server says on stderr when SIGINT or SIGTERM asks it to stop.
pub const STOPPING: &str = "signal received: no new connections, finishing requests in flight";

/// What it says if [`SHUTDOWN_GRACE`] runs out before the requests in flight end.
pub const GRACE_OVER: &str = "grace period over: exiting with requests still in flight";

/// The facts about one server that do not change while it runs, from its crate's
/// `stack.toml` ([`Stack::described`]): a `static` at the top of each server's `main.rs`.
#[derive(Debug)]
pub struct Stack {
    /// The binary's name, reported by `/ping`.
    pub server: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// The call that moves a blocking closure to the runtime's blocking pool.
    pub offload: &'static str,
    /// The runtime's async timer.
    pub timer: &'static str,
    /// The runtime's yield: the task goes to the back of the queue, so the thread polls others.
    pub yield_now: &'static str,
    /// The async HTTP client `/ok-http-await` awaits, on this runtime's sockets.
    pub http_client: &'static str,
    /// The runtime's async file read, as `/ok-file-await` calls it, and what it does
    /// underneath (from the runtime's source).
    pub file_api: &'static str,
    /// The description it was read from, which `--describe` prints.
    pub description: &'static str,
    /// Whether it sees each connection accepted, so that it can keep the record of events
    /// (`--events`), which it refuses otherwise.
    pub sees_accepts: bool,
    /// Its variants, which its `--variant` accepts ([`variant::of_description`]).
    pub variants: &'static [variant::Variant],
}

impl Stack {
    /// The stack `description` (its crate's `stack.toml`, `include_str!`ed) describes.
    /// Panics if it does not parse: the crate's contract test reads it first.
    pub fn described(description: &'static str) -> Stack {
        let stack =
            stacks::Stack::parse(description).unwrap_or_else(|error| panic!("stack.toml: {error}"));
        // Leaked once per process: the server's facts live as long as it does.
        let variants = variant::of_description(Box::leak(Box::new(stack.clone()))).leak();
        let keep = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        Stack {
            server: keep(stack.name),
            about: keep(stack.about),
            offload: keep(stack.offload.call),
            timer: keep(stack.timer.call),
            yield_now: keep(stack.yield_now),
            http_client: keep(stack.http_client),
            file_api: keep(stack.file_api),
            description,
            sees_accepts: stack.sees_accepts,
            variants,
        }
    }

    /// Parses the command line, with `--help` and errors under this server's name.
    pub fn args(&'static self) -> Args {
        Args::parse_for(self)
    }

    /// The body of a work route, reporting the thread this is called on: call it where the
    /// sleep (or the timer wait, or the CPU work) starts.
    pub fn work_here(&self, route: Route, slept: Duration) -> Work {
        let how = match route {
            Route::Ping => "returns at once".to_owned(),
            Route::Bad => "async fn + std::thread::sleep".to_owned(),
            Route::OkBlocking => format!("{} + std::thread::sleep", self.offload),
            Route::OkAwait => format!("{}(..).await", self.timer),
            Route::BadCpu => "async fn + cpu::burn".to_owned(),
            Route::OkCpuBlocking => format!("{} + cpu::burn", self.offload),
            Route::OkCpuYield => format!("cpu::burn_in_slices + {}().await", self.yield_now),
            Route::OkCpuPool => format!(
                "cpu::on_pool (rayon, {} threads) + cpu::burn",
                cpu::pool_threads()
            ),
            Route::BadHttp => format!("async fn + {}", blockers::BLOCKING_HTTP),
            Route::OkHttpBlocking => format!("{} + {}", self.offload, blockers::BLOCKING_HTTP),
            Route::OkHttpAwait => format!("{}.await", self.http_client),
            Route::BadDb => format!("async fn + {}", blockers::BLOCKING_DB),
            Route::OkDbBlocking => format!("{} + {}", self.offload, blockers::BLOCKING_DB),
            Route::OkDbAwait => format!("{}.await", blockers::ASYNC_DB),
            Route::BadFile => format!("async fn + {}", blockers::BLOCKING_FILE),
            Route::OkFileBlocking => format!("{} + {}", self.offload, blockers::BLOCKING_FILE),
            Route::OkFileAwait => format!("{}.await", self.file_api),
            Route::Stalls => "reports the stall detector's counters".to_owned(),
            Route::Events => "reports and drains the server's order of events".to_owned(),
            Route::OkBlockInPlace => "tokio::task::block_in_place + std::thread::sleep".to_owned(),
            Route::JoinBlockInPlace => {
                "tokio::join!(timer, block_in_place + std::thread::sleep)".to_owned()
            }
            Route::JoinSpawnBlocking => {
                "tokio::join!(timer, spawn_blocking + std::thread::sleep)".to_owned()
            }
            Route::BadAfterSpawn => "tokio::spawn, then std::thread::sleep".to_owned(),
        };
        let thread = std::thread::current();
        Work {
            route: route.path().to_owned(),
            how,
            slept_ms: u64::try_from(slept.as_millis()).unwrap_or(u64::MAX),
            thread: thread.name().unwrap_or("<unnamed>").to_owned(),
            thread_id: thread_id(),
            // block_in_place runs its closure only after handing this worker's role (its
            // queue, its I/O and timers) to another thread: this one polls nothing meanwhile.
            on_reactor: reactor::is_marked()
                && !matches!(route, Route::OkBlockInPlace | Route::JoinBlockInPlace),
        }
    }

    /// The body of a CPU route, after computing here, at once, until this thread has spent
    /// `cpu` of its own CPU time ([`cpu::burn`]).
    pub fn burn_here(&self, route: Route, cpu: Duration) -> CpuWork {
        let work = self.work_here(route, cpu);
        CpuWork::new(work, cpu::burn(cpu))
    }

    /// The body of a CPU route, after computing `cpu` of CPU time in slices of about 1 ms,
    /// awaiting `yield_now()` between them ([`cpu::burn_in_slices`]).
    pub async fn burn_in_slices_here<Y>(
        &self,
        route: Route,
        cpu: Duration,
        yield_now: impl FnMut() -> Y,
    ) -> CpuWork
    where
        Y: std::future::Future<Output = ()>,
    {
        let work = self.work_here(route, cpu);
        CpuWork::new(work, cpu::burn_in_slices(cpu, yield_now).await)
    }
}

/// One running server: its [`Stack`] and what its command line chose. Cheap to copy into
/// every handler.
#[derive(Debug, Clone, Copy)]
pub struct Demo {
    pub stack: &'static Stack,
    /// The executor as the server set it up, e.g. `tokio current_thread`.
    pub runtime: &'static str,
    /// How many threads poll request futures.
    pub reactor_threads: usize,
    /// The variants it was started as (`--variant`): the names its command line gave.
    pub variants: &'static [String],
    /// The sleep of a work route without `?ms=`.
    pub default_sleep: Duration,
    /// The stall detector (`--stall-ms`). Made once per process and leaked: it lives as long
    /// as the server anyway, and a `&'static` keeps `Demo` `Copy`, so copying it into a
    /// handler copies a pointer instead of bumping a shared reference count per request.
    pub watch: &'static RequestWatch,
    /// The order of events (`--events`), leaked for the same reason.
    pub events: &'static EventLog,
    /// What the hidden blockers' routes use: the upstream, the database, the file.
    pub blockers: &'static Blockers,
}

impl Demo {
    /// The server's setup from its command line; starts the stall detector (its watchdog
    /// thread, unless `--stall-ms 0`) and the clock of the order of events (`--events`), and
    /// sets up the database (`--db`) and the health check (`--health-port`). A database or a
    /// health port that cannot be set up ends the process with one line on stderr and status
    /// 1, as a bad flag would.
    pub fn new(stack: &'static Stack, runtime: &'static str, args: &Args) -> Self {
        let exit = |error: String| -> ! {
            eprintln!("{}: {error}", stack.server);
            std::process::exit(1)
        };
        let blockers = Blockers::open(args).unwrap_or_else(|error| exit(error));
        let health = (args.health_port).map(|port| HealthOn {
            port,
            period: Duration::from_millis(args.health_period_ms),
        });
        let watch = RequestWatch::start(args.stall_ms, health)
            .unwrap_or_else(|error| exit(format!("--health-port: {error}")));
        Demo {
            blockers: Box::leak(Box::new(blockers)),
            stack,
            runtime,
            reactor_threads: args.threads,
            variants: args.variants.clone().leak(),
            default_sleep: Duration::from_millis(args.sleep_ms),
            watch: Box::leak(Box::new(watch)),
            events: Box::leak(Box::new(EventLog::start(args.events))),
        }
    }

    /// Whether it was started as the variant `name` ([`Args::wants`]).
    pub fn runs(&self, name: &str) -> bool {
        self.variants.iter().any(|given| given == name)
    }

    /// The body of `/ping`.
    pub fn pong(&self) -> Pong {
        Pong {
            ok: true,
            server: self.stack.server.to_owned(),
            runtime: self.runtime.to_owned(),
            reactor_threads: self.reactor_threads,
        }
    }

    /// The body of `/stalls`.
    pub fn stalls(&self) -> StallsJson {
        StallsJson(self.watch.stalls_json())
    }

    /// The body of `/events`, which drains the record.
    pub fn events(&self) -> EventsBody {
        self.events.drain()
    }

    /// Marks the calling thread as a reactor thread, then reads the work route's sleep from
    /// its query (`?ms=`, else the default).
    ///
    /// Marking here is honest: only the async code that extracts a request's sleep calls
    /// this, and async code runs only on threads that poll request futures. So the mark is
    /// set exactly on reactor threads, whatever they are named. It is set even when the
    /// query is invalid: the thread polled a request either way.
    pub fn mark_reactor_and_read_sleep(&self, query: Option<&str>) -> Result<Sleep, ApiError> {
        reactor::mark();
        parse_sleep(query, self.default_sleep).map(Sleep)
    }

    /// Says where the server listens (on stderr, for the person running it), then prints the
    /// readiness line on stdout and flushes it: whoever spawned us may now connect.
    pub fn announce(&self, addr: SocketAddr) {
        let scope = if addr.ip().is_loopback() {
            "loopback only; --host to change"
        } else {
            "reachable from other hosts"
        };
        eprintln!(
            "{}: bound to {addr} ({scope}); {} with {} reactor thread(s); default sleep {} ms",
            self.stack.server,
            self.runtime,
            self.reactor_threads,
            self.default_sleep.as_millis(),
        );
        let mut out = std::io::stdout().lock();
        // If stdout is gone, whoever waits for this line is gone too: nothing to report to.
        let _ = writeln!(out, "{}", readiness_line(addr));
        if let Some(health) = self.watch.health() {
            let _ = writeln!(out, "{}", health_line(health));
        }
        let _ = out.flush();
    }
}

/// Polls a future that never returns `Pending` to its end: the unit tests' executor.
#[cfg(test)]
pub(crate) fn poll_ready<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the test future does not wait"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static STACK: Stack = Stack {
        server: "demo-test",
        about: "test",
        offload: "pool::offload",
        timer: "timer::sleep",
        yield_now: "task::yield_now",
        http_client: "client::get",
        file_api: "fs::read",
        description: "",
        sees_accepts: true,
        variants: &[],
    };

    static EVENTS_OFF: EventLog = EventLog::off();

    fn watch_off() -> &'static RequestWatch {
        Box::leak(Box::new(RequestWatch::with(
            reactor_watch::Watch::disabled(),
        )))
    }

    #[test]
    fn demo_new_starts_the_watch_the_command_line_asks_for() {
        let args = Args::try_parse_for(&STACK, ["demo-test", "--stall-ms", "0"]).unwrap();
        let demo = Demo::new(&STACK, "test", &args);
        assert_eq!(
            demo.stalls().0,
            r#"{"threshold_ms":0,"slow_polls":0,"longest_ms":0,"by_route":{},"still_running_reports":0}"#
        );
        let demo = Demo::new(
            &STACK,
            "test",
            &Args::try_parse_for(&STACK, ["demo-test"]).unwrap(),
        );
        assert!(demo.stalls().0.starts_with(r#"{"threshold_ms":100,"#));
    }

    #[test]
    fn work_names_its_route_and_how() {
        let work = STACK.work_here(Route::OkBlocking, Duration::from_millis(7));
        assert_eq!(work.route, "/ok-blocking");
        assert_eq!(work.how, "pool::offload + std::thread::sleep");
        assert_eq!(work.slept_ms, 7);
        assert_eq!(
            STACK.work_here(Route::OkAwait, Duration::ZERO).how,
            "timer::sleep(..).await"
        );
        assert_eq!(
            STACK.work_here(Route::Bad, Duration::ZERO).how,
            "async fn + std::thread::sleep"
        );
    }

    #[test]
    fn cpu_work_names_where_it_runs_and_what_it_cost() {
        let body = STACK.burn_here(Route::OkCpuBlocking, Duration::from_millis(5));
        assert_eq!(body.work.route, "/ok-cpu-blocking");
        assert_eq!(body.work.how, "pool::offload + cpu::burn");
        assert_eq!(body.work.slept_ms, 5);
        assert!(
            body.cpu_ms >= 5.0 && body.work_wall_ms >= body.cpu_ms * 0.9,
            "{body:?}"
        );
        assert_eq!(
            STACK.work_here(Route::OkCpuYield, Duration::ZERO).how,
            "cpu::burn_in_slices + task::yield_now().await"
        );
        assert!(
            STACK
                .work_here(Route::OkCpuPool, Duration::ZERO)
                .how
                .starts_with("cpu::on_pool (rayon, ")
        );
    }

    #[test]
    fn reading_the_sleep_marks_the_calling_thread_only() {
        let demo = Demo {
            stack: &STACK,
            runtime: "test",
            reactor_threads: 1,
            variants: &[],
            default_sleep: Duration::from_millis(5),
            watch: watch_off(),
            events: &EVENTS_OFF,
            blockers: &Blockers::NONE,
        };
        std::thread::spawn(move || {
            assert!(!STACK.work_here(Route::Bad, Duration::ZERO).on_reactor);
            let Sleep(duration) = demo.mark_reactor_and_read_sleep(None).unwrap();
            assert_eq!(duration, Duration::from_millis(5));
            assert!(STACK.work_here(Route::Bad, duration).on_reactor);
            // A thread the "handler" hands work to carries no mark.
            let pool = std::thread::spawn(|| STACK.work_here(Route::OkBlocking, Duration::ZERO));
            assert!(!pool.join().unwrap().on_reactor);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reading_the_sleep_marks_even_when_the_query_is_bad() {
        let demo = Demo {
            stack: &STACK,
            runtime: "test",
            reactor_threads: 1,
            variants: &[],
            default_sleep: Duration::ZERO,
            watch: watch_off(),
            events: &EVENTS_OFF,
            blockers: &Blockers::NONE,
        };
        std::thread::spawn(move || {
            let error = demo.mark_reactor_and_read_sleep(Some("ms=x")).unwrap_err();
            assert_eq!(error.status, 400);
            assert!(reactor::is_marked());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pong_reports_the_setup() {
        let demo = Demo {
            stack: &STACK,
            runtime: "rt",
            reactor_threads: 3,
            variants: &[],
            default_sleep: Duration::ZERO,
            watch: watch_off(),
            events: &EVENTS_OFF,
            blockers: &Blockers::NONE,
        };
        let json = serde_json::to_string(&demo.pong()).unwrap();
        assert_eq!(
            json,
            r#"{"ok":true,"server":"demo-test","runtime":"rt","reactor_threads":3}"#
        );
    }
}
