//! A work route as the user asked for it: the route of the contract, and the path to send.
//! `/ok-def` and `/ok-blocking` name the same route, but a server may serve only one of them
//! (the original FastAPI app serves `/ok-def`), so the client sends the path it was given.

use std::fmt;

use demo_contract::Route;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::CpuPlace;

/// A work route and the path it is requested at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkPath {
    route: Route,
    path: &'static str,
}

impl WorkPath {
    /// The work routes at their canonical paths, in the order the bench runs them.
    pub const WORK: [WorkPath; 3] = [
        WorkPath::canonical(Route::Bad),
        WorkPath::canonical(Route::OkBlocking),
        WorkPath::canonical(Route::OkAwait),
    ];

    /// The CPU routes at their canonical paths: `/bad-cpu`, `/ok-cpu-blocking`,
    /// `/ok-cpu-yield`, `/ok-cpu-pool`.
    pub const CPU: [WorkPath; 4] = [
        WorkPath::canonical(Route::BadCpu),
        WorkPath::canonical(Route::OkCpuBlocking),
        WorkPath::canonical(Route::OkCpuYield),
        WorkPath::canonical(Route::OkCpuPool),
    ];

    /// The hidden blockers' routes at their canonical paths: for an HTTP call, a query and a
    /// file read in turn, `/bad-*`, `/ok-*-blocking`, `/ok-*-await`.
    pub const HIDDEN: [WorkPath; 9] = [
        WorkPath::canonical(Route::HIDDEN[0][0]),
        WorkPath::canonical(Route::HIDDEN[0][1]),
        WorkPath::canonical(Route::HIDDEN[0][2]),
        WorkPath::canonical(Route::HIDDEN[1][0]),
        WorkPath::canonical(Route::HIDDEN[1][1]),
        WorkPath::canonical(Route::HIDDEN[1][2]),
        WorkPath::canonical(Route::HIDDEN[2][0]),
        WorkPath::canonical(Route::HIDDEN[2][1]),
        WorkPath::canonical(Route::HIDDEN[2][2]),
    ];

    /// `route` at its canonical path.
    pub const fn canonical(route: Route) -> WorkPath {
        WorkPath {
            route,
            path: route.path(),
        }
    }

    /// The work route served at `path`, aliases included; `/ping`, `/stalls` and unknown paths
    /// are not.
    pub fn parse(path: &str) -> Result<WorkPath, NotAWorkRoute> {
        WorkPath::routes()
            .find_map(|route| {
                let path = route.paths().iter().find(|known| **known == path)?;
                Some(WorkPath { route, path })
            })
            .ok_or_else(|| NotAWorkRoute(path.to_owned()))
    }

    /// Every path a work route is served at, aliases included.
    pub fn known() -> Vec<&'static str> {
        WorkPath::routes()
            .flat_map(|r| r.paths())
            .copied()
            .collect()
    }

    /// Every work route: the sleeps, the CPU work, the hidden blockers, tokio's own.
    fn routes() -> impl Iterator<Item = Route> {
        (Route::WORK.into_iter())
            .chain(Route::CPU)
            .chain(Route::HIDDEN.into_iter().flatten())
            .chain(Route::TOKIO)
    }

    pub fn route(self) -> Route {
        self.route
    }

    /// Whether the route reads the file (`/bad-file`, `/ok-file-*`): its unit of work is one
    /// read of the whole file, not `?ms=`.
    pub fn reads_the_file(self) -> bool {
        !self.route.takes_ms()
    }

    /// Where a route's CPU work runs, for the routes whose cost is CPU time: the CPU routes,
    /// the query (SQLite computes in-process) and the file read (a copy from the page cache,
    /// in the kernel, on the reading thread). `None` for the sleeps and the HTTP call, which
    /// only wait.
    pub fn cpu_place(self) -> Option<CpuPlace> {
        match self.route {
            Route::BadCpu | Route::OkCpuYield | Route::BadDb | Route::BadFile => {
                Some(CpuPlace::Reactor)
            }
            // sqlx's pool runs each connection on a thread of its own: many threads, too.
            Route::OkCpuBlocking
            | Route::OkDbBlocking
            | Route::OkDbAwait
            | Route::OkFileBlocking
            | Route::OkFileAwait => Some(CpuPlace::ManyThreads),
            Route::OkCpuPool => Some(CpuPlace::CorePool),
            _ => None,
        }
    }

    /// The path sent, as given.
    pub fn path(self) -> &'static str {
        self.path
    }
}

impl fmt::Display for WorkPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path)
    }
}

impl Serialize for WorkPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.path)
    }
}

impl<'de> Deserialize<'de> for WorkPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let path = String::deserialize(deserializer)?;
        WorkPath::parse(&path).map_err(serde::de::Error::custom)
    }
}

/// A path that no work route is served at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path:?} is not a work route; choose from {known}", path = self.0, known = WorkPath::known().join(", "))]
pub struct NotAWorkRoute(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_keeps_its_own_path() {
        let asked = WorkPath::parse("/ok-def").unwrap();
        assert_eq!(
            (asked.route(), asked.path()),
            (Route::OkBlocking, "/ok-def")
        );
        assert_eq!(
            WorkPath::parse("/ok-blocking").unwrap().path(),
            "/ok-blocking"
        );
        assert_eq!(serde_json::to_string(&asked).unwrap(), "\"/ok-def\"");
    }

    #[test]
    fn cpu_routes_parse_and_say_where_they_run() {
        let pool = WorkPath::parse("/ok-cpu-pool").unwrap();
        assert_eq!(pool.cpu_place(), Some(CpuPlace::CorePool));
        assert_eq!(WorkPath::WORK[0].cpu_place(), None);
        assert_eq!(WorkPath::CPU.map(|r| r.path())[0], "/bad-cpu");
    }

    #[test]
    fn only_work_routes_parse() {
        for path in ["/ping", "/stalls", "/nope", ""] {
            let error = WorkPath::parse(path).unwrap_err();
            assert!(error.to_string().contains("not a work route"), "{error}");
        }
    }
}
