//! What the probe is pointed at: the reader's server, or, for its own check, servers whose
//! routes' verdicts are known by construction: stub servers from Python's standard library,
//! the FastAPI app and the demo servers, each started here at one reactor thread.

use std::path::{Path, PathBuf};

use demo_contract::Route;
use serde::{Deserialize, Serialize};

use super::args::Call;
use super::verdict::{Finding, Verdict};
use burst_meter::http::Endpoint;
use burst_meter::target::{Folders, Launcher, Target};
use burst_meter::work::WorkPath;

/// What a route of the probe's own check must get: the verdict, and whether the health check
/// waits on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    pub verdict: Verdict,
    pub holds_health: bool,
}

impl Expected {
    /// How `finding` compares with this.
    pub fn met_by(&self, finding: &Finding) -> AsExpected {
        match finding.holds_health {
            Some(holds) if finding.verdict == self.verdict && holds == self.holds_health => {
                AsExpected::Yes
            }
            // It could not tell whether the health check waited: right only if it did not
            // claim a block where there is none.
            None if !self.holds_health && finding.verdict != Verdict::Failed => {
                AsExpected::CannotTell
            }
            _ => AsExpected::No,
        }
    }
}

/// How a route's verdict compares with the one it must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsExpected {
    Yes,
    No,
    /// It could not tell whether the health check waited (the machine was too busy), and
    /// claimed nothing the route does not do.
    CannotTell,
}

/// The verdict of a route that blocks the thread serving the health check.
const SERIALISES: Expected = Expected {
    verdict: Verdict::Serialises,
    holds_health: true,
};

/// The verdict of a route that keeps it free and runs its requests side by side.
const CONCURRENT: Expected = Expected {
    verdict: Verdict::Concurrent,
    holds_health: false,
};

/// The verdict of a route that keeps it free but runs a few requests at a time: on a pool of
/// threads per core, or on the cores themselves.
const BOUNDED: Expected = Expected {
    verdict: Verdict::Bounded,
    holds_health: false,
};

/// One server the probe is pointed at, and the routes it judges there.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The server: spawned here, or the reader's, at its URL.
    pub target: Target,
    /// The health check's path.
    pub health: String,
    /// The routes, each with the verdict it must get, if known.
    pub routes: Vec<(Call, Option<Expected>)>,
    /// Whether it serves the hidden blockers' routes, which need their fixtures.
    pub needs_fixtures: bool,
}

impl Subject {
    /// The reader's server at `endpoint`.
    pub fn external(endpoint: &Endpoint, health: &str, calls: &[Call]) -> Subject {
        Subject {
            target: Target::External {
                label: endpoint.to_string(),
                endpoint: endpoint.clone(),
            },
            health: health.to_owned(),
            routes: calls.iter().map(|call| (call.clone(), None)).collect(),
            needs_fixtures: false,
        }
    }
}

/// The sleep of each work request of the probe's own check, in ms: over the servers' stall
/// limit, and ten of them one after another hold a thread for 1.5 s.
pub const WORK_MS: u64 = 150;

/// The server the CPU routes and the hidden blockers are judged on too: the one the static
/// checks and every detector also read.
pub const ALL_ROUTES_ON: &str = "demo-axum";

/// The stub servers' program, from the repository's root.
pub const STUB_SERVER: &str = "reference/stubs/stub_server.py";

/// The stub server's pool size.
pub const STUB_POOL: usize = 4;

/// Python's standard-library servers as they ship, every default kept.
pub const STDLIB_SERVER: &str = "reference/stubs/stdlib_server.py";

/// uvicorn as it ships, serving a plain ASGI app, on the FastAPI app's venv.
pub const UVICORN_SERVER: &str = "reference/stubs/uvicorn_server.py";

/// The names of the servers as they ship, in the order probed.
pub const AS_SHIPPED: [&str; 4] = [
    "stdlib HTTPServer",
    "stdlib HTTPServer HTTP/1.1",
    "stdlib ThreadingHTTPServer",
    "uvicorn",
];

/// Python's standard-library servers and uvicorn, every default kept, each route with the
/// verdict it must get: `HTTPServer` serves one connection at a time, whether its handler
/// speaks HTTP/1.0 or keeps connections alive with HTTP/1.1; `ThreadingHTTPServer` gives
/// each connection a thread, though its listen backlog of 5 drops some of ten at once;
/// uvicorn runs every request on one event loop, which `time.sleep` blocks and
/// `asyncio.sleep` does not.
pub fn as_shipped(reference_dir: &Path) -> Vec<Subject> {
    let slow = |expected| vec![(Call::get("/slow"), Some(expected))];
    let stdlib = |name: &str, args: &[&str], expected| Subject {
        target: python_script(name, python3(), STDLIB_SERVER, args),
        health: Route::Ping.path().to_owned(),
        routes: slow(expected),
        needs_fixtures: false,
    };
    let python = burst_meter::target::reference_python(reference_dir);
    let [http, http11, threading, uvicorn] = AS_SHIPPED;
    let mut uvicorn = python_script(uvicorn, python, UVICORN_SERVER, &[]);
    if let Target::Spawn { launcher, .. } = &mut uvicorn {
        launcher.ready_within = burst_meter::target::REFERENCE_READY_WITHIN;
    }
    vec![
        stdlib(http, &["http"], SERIALISES),
        stdlib(http11, &["http", "--http11"], SERIALISES),
        stdlib(threading, &["threading"], CONCURRENT),
        Subject {
            target: uvicorn,
            health: Route::Ping.path().to_owned(),
            routes: [("/slow", SERIALISES), ("/slow-await", CONCURRENT)]
                .map(|(path, expected)| (Call::get(path), Some(expected)))
                .to_vec(),
            needs_fixtures: false,
        },
    ]
}

/// The probe's own check: the stub servers, the servers as they ship, the FastAPI app on
/// asyncio, then the demo servers.
pub fn own_check(folders: &Folders) -> Vec<Subject> {
    let stubs = [
        ("stub single thread", vec!["single".to_owned()], SERIALISES),
        (
            "stub pool of 4 threads",
            vec![
                "pool".to_owned(),
                "--workers".to_owned(),
                STUB_POOL.to_string(),
            ],
            Expected {
                verdict: Verdict::Bounded,
                holds_health: true,
            },
        ),
        (
            "stub thread per request",
            vec!["threads".to_owned()],
            CONCURRENT,
        ),
    ];
    let mut subjects: Vec<Subject> = (stubs.into_iter())
        .map(|(name, args, expected)| Subject {
            target: stub(name, args),
            health: "/".to_owned(),
            routes: vec![(Call::get(&format!("/work?ms={WORK_MS}")), Some(expected))],
            needs_fixtures: false,
        })
        .collect();
    subjects.extend(as_shipped(&folders.reference_dir));
    // The reference app on its first event loop, the original's.
    if let Some(name) = burst_meter::target::references().first() {
        let fastapi = one_thread(Target::reference(name, &folders.reference_dir));
        subjects.push(demo(
            fastapi,
            &[Route::Bad, Route::OkBlocking, Route::OkAwait],
        ));
    }
    for server in stacks::names() {
        let target = one_thread(Target::server(server, &folders.bin_dir));
        let mut routes = vec![Route::Bad, Route::OkBlocking, Route::OkAwait];
        if *server == ALL_ROUTES_ON {
            routes.extend(
                WorkPath::CPU
                    .iter()
                    .chain(&WorkPath::HIDDEN)
                    .map(|w| w.route()),
            );
        }
        subjects.push(demo(target, &routes));
    }
    subjects
}

/// `target` judged on `routes`, each with the verdict its kind must get.
fn demo(target: Target, routes: &[Route]) -> Subject {
    let path = |route: Route| match (&target, route) {
        // The FastAPI app serves its threadpool route at the original's path.
        (Target::Spawn { name, .. }, Route::OkBlocking)
            if burst_meter::target::references().contains(&name.as_str()) =>
        {
            "/ok-def"
        }
        _ => route.path(),
    };
    Subject {
        health: Route::Ping.path().to_owned(),
        routes: (routes.iter())
            .map(|&route| {
                let call = Call::get(&format!("{}?ms={WORK_MS}", path(route)));
                (call, Some(expected(route)))
            })
            .collect(),
        needs_fixtures: routes
            .iter()
            .any(|route| WorkPath::HIDDEN.contains(&WorkPath::canonical(*route))),
        target,
    }
}

/// What a demo route must get: a `/bad*` route serialises; a sleep or an upstream's wait off
/// the reactor runs side by side; CPU work, a query or a file read off the reactor is bounded
/// by the cores (and `/ok-cpu-yield` by its one reactor thread, which still answers the
/// health check between slices).
fn expected(route: Route) -> Expected {
    match route {
        Route::OkBlocking | Route::OkAwait => CONCURRENT,
        route if route.path().starts_with("/bad") => SERIALISES,
        route if route.path().starts_with("/ok-http") => CONCURRENT,
        _ => BOUNDED,
    }
}

/// A stub server named `name`, started as `python3 STUB_SERVER args... --port 0`.
pub fn stub(name: &str, args: Vec<String>) -> Target {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    python_script(name, python3(), STUB_SERVER, &args)
}

/// A server named `name`, started as `python SCRIPT args... --port 0`, the script's path
/// from the repository's root.
pub fn python_script(name: &str, python: PathBuf, script: &str, args: &[&str]) -> Target {
    let script = repository().join(script).display().to_string();
    let args = std::iter::once(script).chain(args.iter().map(|arg| arg.to_string()));
    Target::Spawn {
        name: name.to_owned(),
        launcher: Launcher {
            args: args.collect(),
            ..Launcher::program(python)
        },
    }
}

/// The first `python3` on the `PATH`, or the bare name (which then fails to start, by name).
pub fn python3() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    (std::env::split_paths(&path).map(|dir| dir.join("python3")))
        .find(|program| program.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// The repository's root: where this crate's manifest is, one folder up.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target` started with one reactor thread.
fn one_thread(target: Target) -> Target {
    match target {
        Target::Spawn { name, mut launcher } => {
            launcher
                .args
                .extend(["--threads".to_owned(), "1".to_owned()]);
            Target::Spawn { name, launcher }
        }
        external => external,
    }
}
