use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cpu::Burned;

/// The body of `GET /ping`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pong {
    pub ok: bool,
    pub server: String,
    pub runtime: String,
    pub reactor_threads: usize,
}

/// The body of a work route: what slept, for how long, and on which thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// The canonical path of the route (`/ok-blocking` also when called as `/ok-def`).
    pub route: String,
    /// How the route waits, e.g. `tokio::task::spawn_blocking + std::thread::sleep`.
    pub how: String,
    pub slept_ms: u64,
    /// The name of the OS thread where the sleep (or the timer wait) started.
    pub thread: String,
    /// That thread's OS id (`gettid`), which tells apart threads that share a name: tokio
    /// names every worker alike, and a test reads from it how a burst was spread.
    pub thread_id: u64,
    /// Whether that thread polls request futures (see [`crate::reactor`]).
    pub on_reactor: bool,
}

/// The body of a CPU route: the work body (`slept_ms` is the CPU time asked for; `thread` and
/// `on_reactor` are the thread where the work started), then what the work cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuWork {
    #[serde(flatten)]
    pub work: Work,
    /// CPU time the work used, on the thread CPU clock of the thread that ran it (for
    /// `/ok-cpu-yield`, the sum over its slices), to 0.01 ms.
    pub cpu_ms: f64,
    /// Wall time from the work's start to its end, to 0.01 ms: above `cpu_ms` by the time
    /// the work waited for a core (or, sliced, for its turn on the reactor).
    pub work_wall_ms: f64,
}

impl CpuWork {
    /// The body of work that was described as `work` when it started, and cost `burned`.
    pub fn new(work: Work, burned: Burned) -> CpuWork {
        CpuWork {
            work,
            cpu_ms: millis(burned.cpu),
            work_wall_ms: millis(burned.wall),
        }
    }
}

/// The body of a hidden blocker's route: the work body (`slept_ms` is the `?ms=` asked for, 0
/// on the file routes; `thread` and `on_reactor` are where the call started), then what the
/// call cost and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoWork {
    #[serde(flatten)]
    pub work: Work,
    /// Wall time of the call (the blocking call, or the awaited one), to 0.01 ms.
    pub call_ms: f64,
    /// CPU time the calling thread used during a blocking call, to 0.01 ms: near zero when the
    /// thread only waited (for the upstream, for the disk), near `call_ms` when it worked
    /// (the query, copying the file from the page cache). `None` for an awaited call, whose
    /// work is spread over polls and threads.
    pub cpu_ms: Option<f64>,
    /// What the call did, in one line: `upstream answered 200 after 500 ms`,
    /// `counted 4990000 rows in 500 passes`, `read 268435456 bytes`.
    pub detail: String,
}

/// When the join routes' timer is due, after the handler starts: well inside any sleep worth
/// measuring, so that a timer held by the sleep shows as fired at its end.
pub const JOIN_TIMER: Duration = Duration::from_millis(20);

/// The body of the join routes (`/join-block-in-place`, `/join-spawn-blocking`): the work
/// body, then when the timer joined beside the sleep, in the same task, was due and fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Joined {
    #[serde(flatten)]
    pub work: Work,
    /// [`JOIN_TIMER`], in ms after the handler started.
    pub timer_due_ms: u64,
    /// When the timer's branch of the join went on, in ms after the handler started, to
    /// 0.01 ms.
    pub timer_fired_ms: f64,
}

impl Joined {
    /// The body of a join whose sleep was `work` and whose timer fired `fired` after the start.
    pub fn new(work: Work, fired: Duration) -> Joined {
        Joined {
            work,
            timer_due_ms: millis(JOIN_TIMER).round() as u64,
            timer_fired_ms: millis(fired),
        }
    }
}

/// When and where a spawned task first ran: what `/bad-after-spawn`'s task reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ran {
    /// After the spawn.
    pub after: Duration,
    /// On which thread (`gettid`).
    pub thread_id: u64,
}

impl Ran {
    /// The task spawned at `spawned`: reports where and when it is first polled.
    pub async fn since(spawned: std::time::Instant) -> Ran {
        Ran {
            after: spawned.elapsed(),
            thread_id: crate::thread_id(),
        }
    }
}

/// The body of `/bad-after-spawn`: the work body (the handler's sleep), then when and where
/// the task spawned just before that sleep first ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spawned {
    #[serde(flatten)]
    pub work: Work,
    /// In ms after the spawn, to 0.01 ms: near 0 if another worker took it at once, the
    /// sleep's length if it waited for the sleep.
    pub spawned_ran_ms: f64,
    /// The thread it ran on (`gettid`), to compare with `thread_id`, the sleep's.
    pub spawned_thread_id: u64,
}

impl Spawned {
    /// The body of a handler that slept as `work`, and whose spawned task ran as `ran`.
    pub fn new(work: Work, ran: Ran) -> Spawned {
        Spawned {
            work,
            spawned_ran_ms: millis(ran.after),
            spawned_thread_id: ran.thread_id,
        }
    }
}

/// A duration in ms, to 0.01 ms.
fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e5).round() / 100.0
}

/// The body of `GET /stalls`: the stall detector's counters, already JSON, exactly as
/// `reactor_watch::Watch::stalls_json` renders them (`docs/contract.md` says what each field
/// means).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallsJson(pub String);

/// The body of `GET /events`: the server's order of events since the last call (which it
/// drains), in the order recorded; `recording` is `--events`, and without it `events` is empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsBody {
    pub recording: bool,
    pub events: Vec<Event>,
}

/// One entry of [`EventsBody`]: `{"at_us":1300,"what":"started","peer":54321,"route":"/bad"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When, in microseconds since the server started, on a monotonic clock.
    pub at_us: u64,
    pub what: What,
    /// The client's port: the connection's remote port, as the server saw it.
    pub peer: u16,
    /// The request's path, without its query; absent on `accepted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

/// What happened: a connection was accepted, or a request's handler started or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum What {
    /// The server took a new connection (on actix-web: a worker took it from the accept
    /// thread; on uvicorn: `connection_made`).
    Accepted,
    /// A request's handler (with the layers around it) was first polled.
    Started,
    /// That handler returned its response.
    Ended,
}

/// An error answer: `{"error": "..."}` with a 4xx or 5xx status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    #[serde(skip)]
    pub status: u16,
    pub error: String,
}

impl ApiError {
    pub fn bad_request(error: impl Into<String>) -> Self {
        ApiError {
            status: 400,
            error: error.into(),
        }
    }

    /// 500: the server could not do what the route does (a file it cannot read).
    pub fn internal(error: impl Into<String>) -> Self {
        ApiError {
            status: 500,
            error: error.into(),
        }
    }

    /// 500: `what` panicked; the error gives the panic's message.
    pub fn panicked(what: &str, panic: &(dyn std::any::Any + Send)) -> Self {
        let reason = (panic.downcast_ref::<&str>().copied())
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        ApiError::internal(format!("{what} panicked: {reason}"))
    }

    /// 502: the upstream the route calls failed.
    pub fn bad_gateway(error: impl Into<String>) -> Self {
        ApiError {
            status: 502,
            error: error.into(),
        }
    }

    /// 503: what the route needs is not there now (a flag not given, a database locked).
    pub fn unavailable(error: impl Into<String>) -> Self {
        ApiError {
            status: 503,
            error: error.into(),
        }
    }

    pub fn not_found(path: &str) -> Self {
        let paths: Vec<&str> = crate::Route::ALL
            .iter()
            .flat_map(|route| route.paths())
            .copied()
            .collect();
        let (last, others) = paths.split_last().expect("there are routes");
        ApiError {
            status: 404,
            error: format!("no route at {path:?}; try {} or {last}", others.join(", ")),
        }
    }

    /// 404 on a server that does not run tokio: `route` is one of tokio's own answers.
    pub fn tokio_only(route: crate::Route) -> Self {
        let serving: Vec<&str> = (stacks::all().iter())
            .filter(|stack| stack.handlers.contains_key(route.path()))
            .map(|stack| stack.name.as_str())
            .collect();
        ApiError {
            status: 404,
            error: format!(
                "{route} is one of tokio's own routes: only {} serve it",
                serving.join(", ")
            ),
        }
    }

    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        ApiError {
            status: 405,
            error: format!("{path} answers GET only, not {method}"),
        }
    }

    /// The answer to a request that matched no route: 405 on a known path, else 404; a GET of
    /// one of tokio's routes that reached here is on a server that does not serve them.
    pub fn unmatched(method: &str, path: &str) -> Self {
        match crate::Route::from_path(path) {
            Some(route) if route.tokio_only() && method == "GET" => ApiError::tokio_only(route),
            Some(_) => ApiError::method_not_allowed(method, path),
            None => ApiError::not_found(path),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.error)
    }
}

/// Serialises a body to JSON. Our bodies are plain structs of strings and numbers, so this
/// cannot fail.
#[cfg(any(
    feature = "axum",
    feature = "actix",
    feature = "hyper",
    feature = "ntex"
))]
pub(crate) fn to_json(body: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(body).expect("demo bodies always serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_serialise_as_error_only() {
        let json = serde_json::to_string(&ApiError::bad_request("nope")).unwrap();
        assert_eq!(json, r#"{"error":"nope"}"#);
    }

    #[test]
    fn unmatched_tells_405_from_404() {
        assert_eq!(ApiError::unmatched("POST", "/ok-def").status, 405);
        assert_eq!(ApiError::unmatched("POST", "/stalls").status, 405);
        assert_eq!(ApiError::unmatched("POST", "/events").status, 405);
        assert_eq!(ApiError::unmatched("GET", "/nope").status, 404);
        assert_eq!(ApiError::unmatched("POST", "/bad-after-spawn").status, 405);
        let tokio = ApiError::unmatched("GET", "/ok-block-in-place");
        assert_eq!(tokio.status, 404);
        assert!(tokio.error.contains("one of tokio's own routes"), "{tokio}");
    }

    #[test]
    fn not_found_lists_every_path() {
        assert_eq!(
            ApiError::not_found("/nope").error,
            r#"no route at "/nope"; try /ping, /bad, /ok-blocking, /ok-def, /ok-await, /bad-cpu, /ok-cpu-blocking, /ok-cpu-yield, /ok-cpu-pool, /bad-http, /ok-http-blocking, /ok-http-await, /bad-db, /ok-db-blocking, /ok-db-await, /bad-file, /ok-file-blocking, /ok-file-await, /stalls, /events, /ok-block-in-place, /join-block-in-place, /join-spawn-blocking or /bad-after-spawn"#
        );
    }

    #[test]
    fn events_serialise_with_the_contract_field_names() {
        let body = EventsBody {
            recording: true,
            events: vec![
                Event {
                    at_us: 1234,
                    what: What::Accepted,
                    peer: 54321,
                    route: None,
                },
                Event {
                    at_us: 1300,
                    what: What::Started,
                    peer: 54321,
                    route: Some("/bad".into()),
                },
                Event {
                    at_us: 101_300,
                    what: What::Ended,
                    peer: 54321,
                    route: Some("/bad".into()),
                },
            ],
        };
        let json = serde_json::to_string(&body).unwrap();
        assert_eq!(
            json,
            r#"{"recording":true,"events":[{"at_us":1234,"what":"accepted","peer":54321},{"at_us":1300,"what":"started","peer":54321,"route":"/bad"},{"at_us":101300,"what":"ended","peer":54321,"route":"/bad"}]}"#
        );
        assert_eq!(serde_json::from_str::<EventsBody>(&json).unwrap(), body);
        let off = EventsBody {
            recording: false,
            events: Vec::new(),
        };
        assert_eq!(
            serde_json::to_string(&off).unwrap(),
            r#"{"recording":false,"events":[]}"#
        );
    }

    #[test]
    fn work_round_trips_with_the_contract_field_names() {
        let work = Work {
            route: "/bad".into(),
            how: "async fn + std::thread::sleep".into(),
            slept_ms: 500,
            thread: "main".into(),
            thread_id: 7,
            on_reactor: true,
        };
        let json = serde_json::to_string(&work).unwrap();
        assert_eq!(
            json,
            r#"{"route":"/bad","how":"async fn + std::thread::sleep","slept_ms":500,"thread":"main","thread_id":7,"on_reactor":true}"#
        );
        assert_eq!(serde_json::from_str::<Work>(&json).unwrap(), work);
    }

    #[test]
    fn cpu_work_is_the_work_body_and_two_fields_more() {
        let work = Work {
            route: "/bad-cpu".into(),
            how: "async fn + cpu::burn".into(),
            slept_ms: 50,
            thread: "main".into(),
            thread_id: 7,
            on_reactor: true,
        };
        let burned = Burned {
            cpu: Duration::from_micros(50_123),
            wall: Duration::from_nanos(61_234_567),
        };
        let body = CpuWork::new(work.clone(), burned);
        let json = serde_json::to_string(&body).unwrap();
        assert_eq!(
            json,
            r#"{"route":"/bad-cpu","how":"async fn + cpu::burn","slept_ms":50,"thread":"main","thread_id":7,"on_reactor":true,"cpu_ms":50.12,"work_wall_ms":61.23}"#
        );
        assert_eq!(serde_json::from_str::<CpuWork>(&json).unwrap(), body);
        // A client that knows only the sleep routes' body still reads it.
        assert_eq!(serde_json::from_str::<Work>(&json).unwrap(), work);
    }
}
