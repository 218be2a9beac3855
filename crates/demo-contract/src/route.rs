/// The routes every server serves (the route contract, `docs/contract.md`): the four of the
/// lesson, and `/stalls`.
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
    /// The stall detector's counters (`--stall-ms`): not a work route, no `?ms=`.
    Stalls,
}

impl Route {
    /// The routes that sleep, in the order the bench runs them.
    pub const WORK: [Route; 3] = [Route::Bad, Route::OkBlocking, Route::OkAwait];

    /// Every route, in the order the 404 message lists them.
    pub const ALL: [Route; 5] = [
        Route::Ping,
        Route::Bad,
        Route::OkBlocking,
        Route::OkAwait,
        Route::Stalls,
    ];

    /// The canonical path.
    pub const fn path(self) -> &'static str {
        match self {
            Route::Ping => "/ping",
            Route::Bad => "/bad",
            Route::OkBlocking => "/ok-blocking",
            Route::OkAwait => "/ok-await",
            Route::Stalls => "/stalls",
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
            Route::Stalls => &["/stalls"],
        }
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
    fn unknown_paths_are_not_routes() {
        for path in ["/", "/pingx", "/bad/", "/ok_await", "/stalls/", ""] {
            assert_eq!(Route::from_path(path), None, "{path}");
        }
    }
}
