/// The routes every server serves (the route contract, `docs/contract.md`): the four of the
/// sleep lesson, the four of the CPU lesson, the nine of the hidden blockers (an HTTP call, a
/// database query, a file read: each on the reactor, on the blocking pool, and awaited),
/// `/stalls` and `/events`; and the four of tokio's own answers ([`Route::TOKIO`]), which
/// only the tokio servers serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// Returns at once: shows whether the reactor is free to answer.
    Ping,
    /// An async handler that calls `std::thread::sleep`: blocks the reactor thread.
    Bad,
    /// The same sleep, offloaded to the runtime's blocking pool and awaited.
    OkBlocking,
    /// The runtime's own async timer, awaited: nothing blocks.
    OkAwait,
    /// CPU work in an async handler: computes on the reactor thread, blocking it.
    BadCpu,
    /// The same work, offloaded to the runtime's blocking pool and awaited.
    OkCpuBlocking,
    /// The same work on the reactor thread, in slices of about 1 ms with the runtime's yield
    /// between them.
    OkCpuYield,
    /// The same work on a pool with one thread per core, awaited through a oneshot channel.
    OkCpuPool,
    /// An async handler that calls the upstream (`--upstream`) with a blocking HTTP client:
    /// the reactor thread waits for the answer.
    BadHttp,
    /// The same blocking call, offloaded to the runtime's blocking pool and awaited.
    OkHttpBlocking,
    /// The same call through an async HTTP client on the runtime, awaited.
    OkHttpAwait,
    /// An async handler that runs a query on the SQLite database (`--db`) with a blocking
    /// driver: the reactor thread executes it.
    BadDb,
    /// The same query, offloaded to the runtime's blocking pool and awaited.
    OkDbBlocking,
    /// The same query through an async driver, awaited.
    OkDbAwait,
    /// An async handler that reads the whole file (`--file`) with `std::fs`: the reactor
    /// thread copies it. No `?ms=`: the file's size decides.
    BadFile,
    /// The same read, offloaded to the runtime's blocking pool and awaited.
    OkFileBlocking,
    /// The same read through the runtime's async file API, awaited.
    OkFileAwait,
    /// The stall detector's counters (`--stall-ms`): not a work route, no `?ms=`.
    Stalls,
    /// The server's order of events since the last call (`--events`), drained: not a work
    /// route, no `?ms=`.
    Events,
    /// The sleep under `tokio::task::block_in_place`: tokio hands the worker's other tasks to
    /// a new worker thread, and this one sleeps. Panics on a `current_thread` runtime.
    OkBlockInPlace,
    /// A timer joined (in the same task) with the sleep under `block_in_place`: the timer
    /// fires only when the sleep ends.
    JoinBlockInPlace,
    /// The same join with the sleep on the blocking pool: the timer fires on time.
    JoinSpawnBlocking,
    /// `tokio::spawn`s a task, then sleeps on the worker: the task waits in the worker's LIFO
    /// slot, which idle workers do not steal.
    BadAfterSpawn,
}

impl Route {
    /// Where a work route's work runs, in a few words: the headings of the figures.
    pub const fn runs(self) -> &'static str {
        match self {
            Route::Bad => "sleeps on the reactor",
            Route::OkBlocking => "sleeps on the blocking pool",
            Route::OkAwait => "awaits the runtime's timer",
            Route::BadCpu => "computes on the reactor",
            Route::OkCpuBlocking => "computes on the blocking pool",
            Route::OkCpuYield => "computes on the reactor, yielding",
            Route::OkCpuPool => "computes on a core-sized pool",
            Route::BadHttp => "calls the upstream on the reactor",
            Route::OkHttpBlocking => "calls the upstream on the blocking pool",
            Route::OkHttpAwait => "awaits the upstream with an async client",
            Route::BadDb => "queries the database on the reactor",
            Route::OkDbBlocking => "queries the database on the blocking pool",
            Route::OkDbAwait => "awaits the query through an async driver",
            Route::BadFile => "reads the file on the reactor",
            Route::OkFileBlocking => "reads the file on the blocking pool",
            Route::OkFileAwait => "awaits the runtime's file API",
            Route::Ping => "answers at once",
            Route::Stalls => "reports the stall detector's counts",
            Route::Events => "reports the server's order of events",
            Route::OkBlockInPlace => "sleeps in block_in_place",
            Route::JoinBlockInPlace => "joins a timer with block_in_place",
            Route::JoinSpawnBlocking => "joins a timer with spawn_blocking",
            Route::BadAfterSpawn => "spawns a task, then sleeps on the worker",
        }
    }

    /// The routes that sleep, in the order the bench runs them.
    pub const WORK: [Route; 3] = [Route::Bad, Route::OkBlocking, Route::OkAwait];

    /// The routes that compute, in the order the lesson shows them.
    pub const CPU: [Route; 4] = [
        Route::BadCpu,
        Route::OkCpuBlocking,
        Route::OkCpuYield,
        Route::OkCpuPool,
    ];

    /// The hidden blockers: each of an HTTP call, a query and a file read, first blocking the
    /// reactor, then on the blocking pool, then awaited.
    pub const HIDDEN: [[Route; 3]; 3] = [
        [Route::BadHttp, Route::OkHttpBlocking, Route::OkHttpAwait],
        [Route::BadDb, Route::OkDbBlocking, Route::OkDbAwait],
        [Route::BadFile, Route::OkFileBlocking, Route::OkFileAwait],
    ];

    /// tokio's own answers: only the tokio servers whose descriptions name handlers for them
    /// serve them, every other server answers 404 ([`crate::ApiError::tokio_only`]).
    pub const TOKIO: [Route; 4] = [
        Route::OkBlockInPlace,
        Route::JoinBlockInPlace,
        Route::JoinSpawnBlocking,
        Route::BadAfterSpawn,
    ];

    /// Every route, in the order the 404 message lists them.
    pub const ALL: [Route; 23] = [
        Route::Ping,
        Route::Bad,
        Route::OkBlocking,
        Route::OkAwait,
        Route::BadCpu,
        Route::OkCpuBlocking,
        Route::OkCpuYield,
        Route::OkCpuPool,
        Route::BadHttp,
        Route::OkHttpBlocking,
        Route::OkHttpAwait,
        Route::BadDb,
        Route::OkDbBlocking,
        Route::OkDbAwait,
        Route::BadFile,
        Route::OkFileBlocking,
        Route::OkFileAwait,
        Route::Stalls,
        Route::Events,
        Route::OkBlockInPlace,
        Route::JoinBlockInPlace,
        Route::JoinSpawnBlocking,
        Route::BadAfterSpawn,
    ];

    /// Whether only the tokio servers serve it ([`Route::TOKIO`]).
    pub const fn tokio_only(self) -> bool {
        matches!(
            self,
            Route::OkBlockInPlace
                | Route::JoinBlockInPlace
                | Route::JoinSpawnBlocking
                | Route::BadAfterSpawn
        )
    }

    /// The canonical path.
    pub const fn path(self) -> &'static str {
        match self {
            Route::Ping => "/ping",
            Route::Bad => "/bad",
            Route::OkBlocking => "/ok-blocking",
            Route::OkAwait => "/ok-await",
            Route::BadCpu => "/bad-cpu",
            Route::OkCpuBlocking => "/ok-cpu-blocking",
            Route::OkCpuYield => "/ok-cpu-yield",
            Route::OkCpuPool => "/ok-cpu-pool",
            Route::BadHttp => "/bad-http",
            Route::OkHttpBlocking => "/ok-http-blocking",
            Route::OkHttpAwait => "/ok-http-await",
            Route::BadDb => "/bad-db",
            Route::OkDbBlocking => "/ok-db-blocking",
            Route::OkDbAwait => "/ok-db-await",
            Route::BadFile => "/bad-file",
            Route::OkFileBlocking => "/ok-file-blocking",
            Route::OkFileAwait => "/ok-file-await",
            Route::Stalls => "/stalls",
            Route::Events => "/events",
            Route::OkBlockInPlace => "/ok-block-in-place",
            Route::JoinBlockInPlace => "/join-block-in-place",
            Route::JoinSpawnBlocking => "/join-spawn-blocking",
            Route::BadAfterSpawn => "/bad-after-spawn",
        }
    }

    /// Every path served for this route. `/ok-def` is kept so that clients written for the
    /// original FastAPI demo (where `def` handlers ran on a threadpool) run unchanged.
    pub const fn paths(self) -> &'static [&'static str] {
        match self {
            Route::Ping => &["/ping"],
            Route::Bad => &["/bad"],
            Route::OkBlocking => &["/ok-blocking", "/ok-def"],
            Route::OkAwait => &["/ok-await"],
            Route::BadCpu => &["/bad-cpu"],
            Route::OkCpuBlocking => &["/ok-cpu-blocking"],
            Route::OkCpuYield => &["/ok-cpu-yield"],
            Route::OkCpuPool => &["/ok-cpu-pool"],
            Route::BadHttp => &["/bad-http"],
            Route::OkHttpBlocking => &["/ok-http-blocking"],
            Route::OkHttpAwait => &["/ok-http-await"],
            Route::BadDb => &["/bad-db"],
            Route::OkDbBlocking => &["/ok-db-blocking"],
            Route::OkDbAwait => &["/ok-db-await"],
            Route::BadFile => &["/bad-file"],
            Route::OkFileBlocking => &["/ok-file-blocking"],
            Route::OkFileAwait => &["/ok-file-await"],
            Route::Stalls => &["/stalls"],
            Route::Events => &["/events"],
            Route::OkBlockInPlace => &["/ok-block-in-place"],
            Route::JoinBlockInPlace => &["/join-block-in-place"],
            Route::JoinSpawnBlocking => &["/join-spawn-blocking"],
            Route::BadAfterSpawn => &["/bad-after-spawn"],
        }
    }

    /// Whether the route takes `?ms=`: every work route but the file routes, whose file's
    /// size decides how long they take.
    pub const fn takes_ms(self) -> bool {
        !matches!(
            self,
            Route::Ping
                | Route::Stalls
                | Route::Events
                | Route::BadFile
                | Route::OkFileBlocking
                | Route::OkFileAwait
        )
    }

    /// Whether its work holds the reactor thread (the `/bad…` routes): on one reactor
    /// thread, N requests of it run one after another.
    pub const fn holds_the_reactor(self) -> bool {
        matches!(
            self,
            Route::Bad
                | Route::BadCpu
                | Route::BadHttp
                | Route::BadDb
                | Route::BadFile
                | Route::BadAfterSpawn
        )
    }

    /// The route served at `path`, aliases included.
    pub fn from_path(path: &str) -> Option<Route> {
        Route::ALL
            .into_iter()
            .find(|route| route.paths().contains(&path))
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_maps_back_to_its_route() {
        for route in Route::ALL {
            for path in route.paths() {
                assert_eq!(Route::from_path(path), Some(route), "{path}");
            }
            assert_eq!(route.paths()[0], route.path());
        }
    }

    #[test]
    fn the_fastapi_alias_is_the_offload_route() {
        assert_eq!(Route::from_path("/ok-def"), Some(Route::OkBlocking));
    }

    #[test]
    fn the_cpu_routes_are_no_sleep_routes() {
        for route in Route::CPU {
            assert!(Route::ALL.contains(&route), "{route}");
            assert!(!Route::WORK.contains(&route), "{route}");
        }
        assert_eq!(Route::from_path("/ok-cpu-pool"), Some(Route::OkCpuPool));
    }

    #[test]
    fn tokios_routes_are_the_tokio_only_ones() {
        let only: Vec<Route> = Route::ALL.into_iter().filter(|r| r.tokio_only()).collect();
        assert_eq!(only, Route::TOKIO);
    }

    #[test]
    fn unknown_paths_are_not_routes() {
        for path in [
            "/",
            "/pingx",
            "/bad/",
            "/ok_await",
            "/stalls/",
            "/events/",
            "/cpu",
            "/bad-cpu/",
            "",
        ] {
            assert_eq!(Route::from_path(path), None, "{path}");
        }
    }
}
