//! A health check that tells the truth while a reactor thread is blocked (feature `health`).
//!
//! A probe served by the reactor it checks waits behind the very stall it should report: it
//! fails late, by timing out, and says nothing about why. A probe served by some other thread
//! that always answers 200 lies. This one is served by a thread of its own (one small
//! current-thread tokio runtime running hyper) and answers from what the watch's slots say
//! right now: 503, naming the route and how long it has held its thread, while some wrapped
//! poll has run past the limit; 200 otherwise.

use std::convert::Infallible;
use std::fmt::{self, Write as _};
use std::io;
use std::net::SocketAddr;
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
use crate::{RunningPoll, Watch};

/// The one path the health server answers; any other is a 404.
pub const HEALTH_PATH: &str = "/health";

/// A running health server, from [`Watch::serve_health`]. Dropping it stops the server and
/// joins its thread.
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
}

impl fmt::Debug for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Health").field("addr", &self.addr).finish()
    }
}

impl Drop for Health {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread, which drops its runtime and every connection.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Watch {
    /// Serves `GET /health` on `addr` from a thread of its own, named `reactor-watch-health`,
    /// which no executor runs: a blocked reactor cannot starve it.
    ///
    /// It answers `503 Service Unavailable` while some poll wrapped by this watch has held
    /// its thread longer than `limit`, `200 OK` otherwise, both with a JSON body (see
    /// [`health_json`](Watch::health_json)). Pass [`Watch::threshold`] for a readiness probe
    /// (take this instance out of the load balancer while it is stalled) and a limit of
    /// seconds for a liveness probe (restart only a thread that is stuck).
    ///
    /// Bind a loopback or cluster-internal address: the body names your routes.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the watch is off (it would always answer 200, which is the lie this
    /// exists to avoid); any error binding `addr` or starting the thread or its runtime.
    pub fn serve_health(&self, addr: SocketAddr, limit: Duration) -> io::Result<Health> {
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
                        Ok(listener) => drop(tokio::spawn(accept(listener, watch, limit))),
                        Err(error) => eprintln!("reactor-watch: health server: {error}"),
                    }
                    // Until the `Health` handle is dropped.
                    let _ = stopped.await;
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
    /// ```
    ///
    /// `route`, `thread` and `held_ms` describe the poll that has held its thread longest;
    /// `stalled_threads` counts the polls past the limit. `held_ms` is in whole milliseconds
    /// of the watch's coarse clock.
    pub fn health_json(&self, limit: Duration) -> (u16, String) {
        let running = self.running();
        let stalled: Vec<&RunningPoll> = running.iter().filter(|p| p.running > limit).collect();
        let mut body = String::with_capacity(160);
        let Some(longest) = stalled.first() else {
            body.push_str("{\"status\":\"ok\",\"limit_ms\":");
            push_ms(&mut body, limit.as_secs_f64() * 1e3);
            body.push('}');
            return (200, body);
        };
        body.push_str("{\"status\":\"stalled\",\"limit_ms\":");
        push_ms(&mut body, limit.as_secs_f64() * 1e3);
        body.push_str(",\"route\":");
        push_string(&mut body, longest.label.name());
        body.push_str(",\"thread\":");
        push_string(&mut body, &longest.thread);
        let _ = write!(
            body,
            ",\"held_ms\":{},\"stalled_threads\":{}}}",
            longest.running.as_millis(),
            stalled.len()
        );
        (503, body)
    }
}

/// The accept loop, on the health thread's runtime: one task per connection.
async fn accept(listener: TcpListener, watch: Watch, limit: Duration) {
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
                let response = respond(&watch, limit, &req);
                async move { Ok::<_, Infallible>(response) }
            });
            // A client that goes away or sends garbage only ends its own connection.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), answer)
                .await;
        });
    }
}

fn respond(watch: &Watch, limit: Duration, req: &Request<Incoming>) -> Response<String> {
    let (status, body) = if req.uri().path() == HEALTH_PATH {
        watch.health_json(limit)
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
