//! A health check that tells the truth while a reactor thread is blocked (feature `health`).
//!
//! A probe served by the reactor it checks waits behind the very stall it should report: it
//! fails late, by timing out, and says nothing about why. A probe served by some other thread
//! that always answers 200 lies. This one is served by a thread of its own (one small
//! current-thread tokio runtime running hyper) and answers from what the watch knows: 503,
//! naming the route and how long it held its thread, while some wrapped poll has run past the
//! limit, or one did within the probe's period; 200 otherwise.

use std::convert::Infallible;
use std::fmt::{self, Write as _};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::stalls::{push_ms, push_string};
use crate::{Label, RunningPoll, Watch};

/// The one path the health server answers; any other is a 404.
pub const HEALTH_PATH: &str = "/health";

/// What a health check answers 503 for: a poll past `limit`, running now or returned within
/// the last `period`. From [`HealthCheck::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    limit: Duration,
    period: Duration,
}

impl HealthCheck {
    /// Kubernetes' default probe period (`periodSeconds: 10`).
    pub const DEFAULT_PERIOD: Duration = Duration::from_secs(10);

    /// 503 while a wrapped poll holds its thread past `limit`, and for
    /// [`DEFAULT_PERIOD`](Self::DEFAULT_PERIOD) after one did. Pass [`Watch::threshold`] for a
    /// readiness probe (take this instance out of the load balancer while it stalls) and a
    /// limit of seconds for a liveness probe (restart only a thread that is stuck); a poll is
    /// remembered only if it passed the watch's threshold, so a limit below it is the
    /// threshold.
    pub const fn new(limit: Duration) -> HealthCheck {
        HealthCheck {
            limit,
            period: HealthCheck::DEFAULT_PERIOD,
        }
    }

    /// Remembers a stall for `period` after it ended: set it to your probe's period, so that
    /// every stall between two probes fails the second, not only the ones a probe lands in.
    /// `Duration::ZERO` answers from the polls running now alone.
    pub const fn period(self, period: Duration) -> HealthCheck {
        HealthCheck { period, ..self }
    }

    /// The limit.
    pub const fn limit(&self) -> Duration {
        self.limit
    }
}

/// The stall a 503 names: the longest past the limit, running now or ended within the period.
struct Named {
    label: Label,
    thread: Arc<str>,
    held: Duration,
    /// How long ago it ended; `None`: it is still running.
    ago: Option<Duration>,
}

/// A running health server, from [`Watch::serve_health`]. Dropping it stops the server and
/// joins its thread; [`Health::detach`] leaves it serving for the life of the process.
pub struct Health {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Health {
    /// The address it listens on (the port the system chose, if you asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Leaves the server running for the life of the process, as a server's own health
    /// check usually should, and returns the address it listens on.
    pub fn detach(mut self) -> SocketAddr {
        // The sender dropped unsent, and the thread's handle with it: the thread serves on.
        drop(self.stop.take());
        drop(self.thread.take());
        self.addr
    }
}

impl fmt::Debug for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Health").field("addr", &self.addr).finish()
    }
}

impl Drop for Health {
    fn drop(&mut self) {
        // The signal wakes the thread, which drops its runtime and every connection.
        if let (Some(stop), Some(thread)) = (self.stop.take(), self.thread.take()) {
            let _ = stop.send(());
            let _ = thread.join();
        }
    }
}

impl Watch {
    /// Serves `GET /health` on `addr` from a thread of its own, named `reactor-watch-health`,
    /// which no executor runs: a blocked reactor cannot starve it.
    ///
    /// It answers `503 Service Unavailable` while some poll wrapped by this watch holds its
    /// thread longer than the check's limit, or one did within its period; `200 OK`
    /// otherwise, both with a JSON body (see [`health_json`](Watch::health_json)).
    ///
    /// Bind a loopback or cluster-internal address: the body names your routes.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the watch is off (it would always answer 200, which is the lie this
    /// exists to avoid); any error binding `addr` or starting the thread or its runtime.
    pub fn serve_health(&self, addr: SocketAddr, check: HealthCheck) -> io::Result<Health> {
        if !self.is_enabled() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "reactor-watch: a health check needs a watch that is on (threshold > 0)",
            ));
        }
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let watch = self.clone();
        let thread = thread::Builder::new()
            .name("reactor-watch-health".into())
            .spawn(move || {
                runtime.block_on(async move {
                    match TcpListener::from_std(listener) {
                        Ok(listener) => drop(tokio::spawn(accept(listener, watch, check))),
                        Err(error) => eprintln!("reactor-watch: health server: {error}"),
                    }
                    // Until the `Health` handle is dropped; a detached one drops its sender
                    // unsent, and the server runs on.
                    if stopped.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                });
            })?;
        Ok(Health {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The health answer now: the status code (200 or 503) and its one-line JSON body.
    ///
    /// ```text
    /// 200 {"status":"ok","limit_ms":100}
    /// 503 {"status":"stalled","limit_ms":100,"route":"GET /bad","thread":"main","held_ms":252,"stalled_threads":1}
    /// 503 {"status":"stalled","limit_ms":100,"route":"GET /bad","thread":"main","held_ms":501,"ended_ms_ago":120,"stalled_threads":0}
    /// ```
    ///
    /// `route`, `thread` and `held_ms` describe the poll past the limit that held its thread
    /// longest, running now or, if none is, ended within the period (`ended_ms_ago` says
    /// when); `stalled_threads` counts the polls past the limit now. `held_ms` is in whole
    /// milliseconds of the watch's coarse clock for a running poll.
    pub fn health_json(&self, check: HealthCheck) -> (u16, String) {
        let running = self.running();
        let stalled_now = running.iter().filter(|p| p.running > check.limit).count();
        let mut body = String::with_capacity(160);
        let Some(named) = self.named_stall(&running, check) else {
            body.push_str("{\"status\":\"ok\",\"limit_ms\":");
            push_ms(&mut body, check.limit);
            body.push('}');
            return (200, body);
        };
        body.push_str("{\"status\":\"stalled\",\"limit_ms\":");
        push_ms(&mut body, check.limit);
        body.push_str(",\"route\":");
        push_string(&mut body, named.label.name());
        body.push_str(",\"thread\":");
        push_string(&mut body, &named.thread);
        let _ = write!(body, ",\"held_ms\":{}", named.held.as_millis());
        if let Some(ago) = named.ago {
            let _ = write!(body, ",\"ended_ms_ago\":{}", ago.as_millis());
        }
        let _ = write!(body, ",\"stalled_threads\":{stalled_now}}}");
        (503, body)
    }

    /// The stall a 503 names: the longest of the `running` polls (longest first) past the
    /// limit, or else the longest that ended within the period.
    fn named_stall(&self, running: &[RunningPoll], check: HealthCheck) -> Option<Named> {
        if let Some(poll) = running.iter().find(|p| p.running > check.limit) {
            return Some(Named {
                label: poll.label,
                thread: Arc::clone(&poll.thread),
                held: poll.running,
                ago: None,
            });
        }
        let ended = (self.ended_stalls(check.period).into_iter()).find(|s| s.held > check.limit);
        ended.map(|stall| Named {
            label: stall.label,
            thread: stall.thread,
            held: stall.held,
            ago: Some(stall.ago),
        })
    }
}

/// The accept loop, on the health thread's runtime: one task per connection.
async fn accept(listener: TcpListener, watch: Watch, check: HealthCheck) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, most likely: wait for some to be freed.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let watch = watch.clone();
        tokio::spawn(async move {
            let answer = service_fn(move |req| {
                let response = respond(&watch, check, &req);
                async move { Ok::<_, Infallible>(response) }
            });
            // A client that goes away or sends garbage only ends its own connection.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), answer)
                .await;
        });
    }
}

fn respond(watch: &Watch, check: HealthCheck, req: &Request<Incoming>) -> Response<String> {
    let (status, body) = if req.uri().path() == HEALTH_PATH {
        watch.health_json(check)
    } else {
        (
            404,
            format!("{{\"error\":\"not found; try {HEALTH_PATH}\"}}"),
        )
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
