//! The stall detector of one server (`--stall-ms`, `GET /stalls`, `--health-port`): a
//! [`reactor_watch::Watch`] and the label of every request future it times.
//!
//! Each stack's glue wraps every request future with [`RequestWatch::wrap`] (axum's with
//! reactor-watch's tower layer around the same watch), naming the route its router matched,
//! so that a poll holding a reactor thread past the threshold is logged on stderr and counted
//! under that route. Everything here goes through reactor-watch's public API.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use reactor_watch::{Config, HealthCheck, Label, Watch, Watched};

use crate::Route;

/// The methods labelled by name; any other is labelled `OTHER`. Labels live as long as the
/// process, so a client that invents methods must not be able to make new ones.
const METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];
const OTHER_METHOD: &str = "OTHER";

/// The labels of one method.
#[derive(Debug)]
struct MethodLabels {
    method: &'static str,
    /// `METHOD PATH` for every path of every [`Route`], aliases included.
    by_path: BTreeMap<&'static str, Label>,
    /// `METHOD (unmatched)`: no route matched the path.
    unmatched: Label,
}

impl MethodLabels {
    fn new(method: &'static str) -> MethodLabels {
        let by_path = Route::ALL
            .iter()
            .flat_map(|route| route.paths())
            .map(|&path| (path, Label::new(&format!("{method} {path}"))))
            .collect();
        MethodLabels {
            method,
            by_path,
            unmatched: Label::new(&format!("{method} (unmatched)")),
        }
    }
}

/// The stall detector of one server, with every label a request can get made once, at
/// start-up: a label names method and path, and looking both up here makes no string per
/// request.
#[derive(Debug)]
pub struct RequestWatch {
    watch: Watch,
    by_method: BTreeMap<&'static str, MethodLabels>,
    other_method: MethodLabels,
    /// Where `GET /health` is served (`--health-port`), if it is.
    health: Option<SocketAddr>,
}

/// Where the health check is served and how long it fails after a stall ends
/// (`--health-port`, `--health-period-ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthOn {
    pub port: u16,
    pub period: Duration,
}

impl RequestWatch {
    /// Starts the detector with a threshold of `stall_ms` (0: off, no watchdog thread) and
    /// makes the labels; with `health`, starts the health check too
    /// ([`RequestWatch::health`]). Reports go to stderr.
    pub fn start(stall_ms: u64, health: Option<HealthOn>) -> io::Result<RequestWatch> {
        let mut watch =
            RequestWatch::with(Watch::start(Config::new(Duration::from_millis(stall_ms))));
        if let Some(HealthOn { port, period }) = health {
            watch.health = Some(watch.serve_health(port, period)?);
        }
        Ok(watch)
    }

    /// The labels around an existing watch.
    pub fn with(watch: Watch) -> RequestWatch {
        RequestWatch {
            watch,
            by_method: METHODS
                .into_iter()
                .map(|method| (method, MethodLabels::new(method)))
                .collect(),
            other_method: MethodLabels::new(OTHER_METHOD),
            health: None,
        }
    }

    /// The label of a request: `GET /bad`, with the path as the router matched it (`GET
    /// /ok-def` for the alias), or `GET (unmatched)` when no route matched.
    pub fn label(&self, method: &str, matched_path: Option<&str>) -> Label {
        let labels = self.by_method.get(method).unwrap_or(&self.other_method);
        match matched_path {
            None => labels.unmatched,
            Some(path) => match labels.by_path.get(path) {
                Some(&label) => label,
                // A path the router matched that no `Route` has: labelled now.
                None => Label::new(&format!("{} {path}", labels.method)),
            },
        }
    }

    /// Wraps a request future so that each of its polls is timed under `label` (from
    /// [`RequestWatch::label`]). The handler runs inside these polls, so a handler that
    /// blocks is caught.
    pub fn wrap<F: Future>(&self, label: Label, future: F) -> Watched<F> {
        self.watch.wrap(label, future)
    }

    /// The body of `GET /stalls`.
    pub fn stalls_json(&self) -> String {
        self.watch.stalls_json()
    }

    /// The watch itself, for an adapter that wraps request futures (axum's tower layer).
    pub fn watch(&self) -> &Watch {
        &self.watch
    }

    /// Where `GET /health` is served, if `--health-port` asked for it.
    pub fn health(&self) -> Option<SocketAddr> {
        self.health
    }

    /// `GET /health` on `127.0.0.1:port` (0: any free port), served by reactor-watch's own
    /// thread, 503 while a request's poll holds its thread past the stall threshold, or did
    /// within `period`. Runs for the life of the process; returns the address it bound.
    fn serve_health(&self, port: u16, period: Duration) -> io::Result<SocketAddr> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let check = HealthCheck::new(self.watch.threshold()).period(period);
        Ok(self.watch.serve_health(addr, check)?.detach())
    }
}

/// The line a server prints on stdout, right after its readiness line, when `--health-port`
/// is given: `health on http://127.0.0.1:PORT/health`.
pub fn health_line(addr: SocketAddr) -> String {
    format!("health on http://{addr}{}", reactor_watch::HEALTH_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll_ready;

    #[test]
    fn labels_name_the_method_and_the_matched_path() {
        let watch = RequestWatch::with(Watch::disabled());
        let name = |method, path| watch.label(method, path).name();
        assert_eq!(name("GET", Some("/bad")), "GET /bad");
        assert_eq!(name("GET", Some("/ok-def")), "GET /ok-def");
        assert_eq!(name("POST", Some("/stalls")), "POST /stalls");
        assert_eq!(name("GET", None), "GET (unmatched)");
        assert_eq!(name("BREW", Some("/ping")), "OTHER /ping");
        assert_eq!(name("BREW", None), "OTHER (unmatched)");
        assert_eq!(name("GET", Some("/users/{id}")), "GET /users/{id}");
    }

    #[test]
    fn a_blocking_poll_is_counted_under_its_label() {
        let watch = RequestWatch::with(Watch::start(Config::new(Duration::from_millis(20))));
        let blocking = watch.wrap(watch.label("GET", Some("/bad")), async {
            std::thread::sleep(Duration::from_millis(60));
        });
        poll_ready(blocking);
        let json = watch.stalls_json();
        assert!(
            json.starts_with(r#"{"threshold_ms":20,"slow_polls":1,"#),
            "{json}"
        );
        assert!(
            json.contains(r#""by_route":{"GET /bad":{"slow_polls":1,"#),
            "{json}"
        );
    }
}
