//! One hyper 1 service adapter for the three hyper servers: routing, validation, JSON bodies
//! (the hidden blockers' errors with their status), `/stalls` and the stall detector's wrapper,
//! `/events` and the order of events (accepts in the accept loop, handlers in the service), the
//! accept loop and the graceful stop. Each server brings its handlers (as [`Handlers`]), its
//! listener, its way to spawn a task and its timer.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_lite::{FutureExt as _, Stream, StreamExt as _, future};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::rt::{Read, Timer, Write};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::server::graceful::GracefulShutdown;
use serde::Serialize;

use crate::body::to_json;
use crate::{
    ApiError, CpuWork, Demo, IoWork, Joined, Pong, Route, SHUTDOWN_GRACE, Spawned, Work,
    parse_sleep, reactor,
};

/// The handlers of one hyper server. The adapter has already checked the method, the path
/// and `?ms=`, on the reactor thread that polls the request (which it marks as one, for every
/// request): `duration` is how long this request's work sleeps, `cpu` how much CPU time it
/// computes for, `delay` how long the upstream waits before it answers, `ms` how long the
/// query takes. The hidden blockers find their upstream, database or file in
/// `demo.blockers`; the file routes take no `?ms=`.
pub trait Handlers: Send + Sync + 'static {
    fn ping(&self, demo: &Demo) -> impl Future<Output = Pong> + Send;
    fn bad(&self, duration: Duration) -> impl Future<Output = Work> + Send;
    fn ok_blocking(&self, duration: Duration) -> impl Future<Output = Work> + Send;
    fn ok_await(&self, duration: Duration) -> impl Future<Output = Work> + Send;
    fn bad_cpu(&self, cpu: Duration) -> impl Future<Output = CpuWork> + Send;
    fn ok_cpu_blocking(&self, cpu: Duration) -> impl Future<Output = CpuWork> + Send;
    fn ok_cpu_yield(&self, cpu: Duration) -> impl Future<Output = CpuWork> + Send;
    fn ok_cpu_pool(&self, cpu: Duration) -> impl Future<Output = CpuWork> + Send;
    fn bad_http(&self, demo: &Demo, delay: Duration) -> impl Future<Output = IoResult> + Send;
    fn ok_http_blocking(
        &self,
        demo: &Demo,
        delay: Duration,
    ) -> impl Future<Output = IoResult> + Send;
    fn ok_http_await(&self, demo: &Demo, delay: Duration) -> impl Future<Output = IoResult> + Send;
    fn bad_db(&self, demo: &Demo, ms: Duration) -> impl Future<Output = IoResult> + Send;
    fn ok_db_blocking(&self, demo: &Demo, ms: Duration) -> impl Future<Output = IoResult> + Send;
    fn ok_db_await(&self, demo: &Demo, ms: Duration) -> impl Future<Output = IoResult> + Send;
    fn bad_file(&self, demo: &Demo) -> impl Future<Output = IoResult> + Send;
    fn ok_file_blocking(&self, demo: &Demo) -> impl Future<Output = IoResult> + Send;
    fn ok_file_await(&self, demo: &Demo) -> impl Future<Output = IoResult> + Send;

    /// tokio's own answers ([`Route::TOKIO`]): a 404 that says so, unless the server runs on
    /// tokio and serves them.
    fn ok_block_in_place(&self, _: Duration) -> impl Future<Output = Answer<Work>> + Send {
        future::ready(Err(ApiError::tokio_only(Route::OkBlockInPlace)))
    }
    fn join_block_in_place(&self, _: Duration) -> impl Future<Output = Answer<Joined>> + Send {
        future::ready(Err(ApiError::tokio_only(Route::JoinBlockInPlace)))
    }
    fn join_spawn_blocking(&self, _: Duration) -> impl Future<Output = Answer<Joined>> + Send {
        future::ready(Err(ApiError::tokio_only(Route::JoinSpawnBlocking)))
    }
    fn bad_after_spawn(&self, _: Duration) -> impl Future<Output = Answer<Spawned>> + Send {
        future::ready(Err(ApiError::tokio_only(Route::BadAfterSpawn)))
    }
}

/// What a handler that may fail answers: its body, or an error with its status.
pub type Answer<T> = Result<T, ApiError>;

/// What a hidden blocker's handler answers: its body, or an error with its status (a flag not
/// given, the upstream failing, the database locked, the file unreadable).
pub type IoResult = Answer<IoWork>;

/// A spawned connection task.
pub type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Answers one request, whose path matched `route` (`None`: no route).
pub async fn respond<H: Handlers, B>(
    handlers: &H,
    demo: &Demo,
    route: Option<Route>,
    req: &Request<B>,
) -> Response<Full<Bytes>> {
    let Some(route) = route.filter(|_| req.method() == Method::GET) else {
        return error(ApiError::unmatched(req.method().as_str(), req.uri().path()));
    };
    // This runs where the request future is polled, so on a reactor thread: marked for every
    // route, the file routes (no `?ms=`) included, and even when `?ms=` turns out invalid.
    reactor::mark();
    let duration = if route.takes_ms() {
        match parse_sleep(req.uri().query(), demo.default_sleep) {
            Ok(duration) => duration,
            Err(ms_error) => return error(ms_error),
        }
    } else {
        Duration::ZERO
    };
    // A handler's panic is its request's 500, and the server goes on: on a thread-per-core
    // runtime it would otherwise unwind through the runtime and end the thread.
    let answered = AssertUnwindSafe(answer_route(handlers, demo, route, duration));
    (answered.catch_unwind().await)
        .unwrap_or_else(|panic| error(ApiError::panicked("the handler", &*panic)))
}

/// Answers one request to `route`, whose sleep (or CPU time, or delay) is `duration`.
async fn answer_route<H: Handlers>(
    handlers: &H,
    demo: &Demo,
    route: Route,
    duration: Duration,
) -> Response<Full<Bytes>> {
    match route {
        Route::Ping => ok(handlers.ping(demo).await),
        Route::Stalls => json(200, demo.stalls().0.into_bytes()),
        Route::Events => ok(demo.events()),
        Route::Bad => ok(handlers.bad(duration).await),
        Route::OkBlocking => ok(handlers.ok_blocking(duration).await),
        Route::OkAwait => ok(handlers.ok_await(duration).await),
        Route::BadCpu => ok(handlers.bad_cpu(duration).await),
        Route::OkCpuBlocking => ok(handlers.ok_cpu_blocking(duration).await),
        Route::OkCpuYield => ok(handlers.ok_cpu_yield(duration).await),
        Route::OkCpuPool => ok(handlers.ok_cpu_pool(duration).await),
        Route::BadHttp => answer(handlers.bad_http(demo, duration).await),
        Route::OkHttpBlocking => answer(handlers.ok_http_blocking(demo, duration).await),
        Route::OkHttpAwait => answer(handlers.ok_http_await(demo, duration).await),
        Route::BadDb => answer(handlers.bad_db(demo, duration).await),
        Route::OkDbBlocking => answer(handlers.ok_db_blocking(demo, duration).await),
        Route::OkDbAwait => answer(handlers.ok_db_await(demo, duration).await),
        Route::BadFile => answer(handlers.bad_file(demo).await),
        Route::OkFileBlocking => answer(handlers.ok_file_blocking(demo).await),
        Route::OkFileAwait => answer(handlers.ok_file_await(demo).await),
        Route::OkBlockInPlace => answer(handlers.ok_block_in_place(duration).await),
        Route::JoinBlockInPlace => answer(handlers.join_block_in_place(duration).await),
        Route::JoinSpawnBlocking => answer(handlers.join_spawn_blocking(duration).await),
        Route::BadAfterSpawn => answer(handlers.bad_after_spawn(duration).await),
    }
}

/// A 200 with `body` as JSON.
fn ok(body: impl Serialize) -> Response<Full<Bytes>> {
    json(200, to_json(&body))
}

/// `{"error": ...}` with the error's status.
fn error(error: ApiError) -> Response<Full<Bytes>> {
    json(error.status, to_json(&error))
}

/// A fallible handler's answer: its body with 200, or its error with the error's status.
fn answer(result: Answer<impl Serialize>) -> Response<Full<Bytes>> {
    match result {
        Ok(body) => ok(body),
        Err(failed) => error(failed),
    }
}

fn json(status: u16, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Accepts connections from `incoming` (each with its client's address, as `accept` returns
/// it) and serves each, as its own task, over HTTP/1.1 with hyper's defaults (keep-alive on),
/// until `shutdown` completes; then stops accepting and waits up to [`SHUTDOWN_GRACE`] for
/// the connections in flight.
///
/// With `--events`, a connection's `accepted` is recorded here, as the accept loop takes it
/// from `incoming`, and each request's `started` and `ended` around its response future.
///
/// An accept error (such as EMFILE when out of file descriptors) is logged and the loop goes
/// on after a short pause: a server must not die because one connection could not be taken.
pub async fn serve<H, I, T>(
    handlers: H,
    demo: Demo,
    incoming: impl Stream<Item = io::Result<(I, SocketAddr)>>,
    spawn: impl Fn(Task),
    timer: T,
    shutdown: impl Future<Output = ()>,
) where
    H: Handlers,
    I: Read + Write + Unpin + Send + 'static,
    T: Timer + Clone + Send + Sync + 'static,
{
    let handlers = Arc::new(handlers);
    let graceful = GracefulShutdown::new();
    let mut incoming = pin!(incoming);
    let mut shutdown = pin!(shutdown);
    while let Some((io, peer)) = next_connection(&demo, &mut incoming, &mut shutdown, &timer).await
    {
        demo.events.accepted(peer.port());
        let handlers = handlers.clone();
        let service =
            service_fn(move |req| watched_response(handlers.clone(), demo, peer.port(), req));
        let connection = http1::Builder::new()
            .timer(timer.clone())
            .serve_connection(io, service);
        let connection = graceful.watch(connection);
        spawn(Box::pin(async move {
            // A client that goes away mid-request is its own business, not the server's.
            let _ = connection.await;
        }));
    }
    drain(graceful, &timer).await;
}

/// The next accepted connection, or `None` once `shutdown` completes or `incoming` ends. An
/// accept error is logged, and the wait goes on after a pause of 50 ms.
async fn next_connection<I>(
    demo: &Demo,
    incoming: &mut (impl Stream<Item = io::Result<I>> + Unpin),
    shutdown: &mut (impl Future<Output = ()> + Unpin),
    timer: &impl Timer,
) -> Option<I> {
    enum Event<I> {
        Connection(Option<io::Result<I>>),
        Shutdown,
    }

    loop {
        let next = async { Event::Connection(incoming.next().await) };
        let stop = async {
            (&mut *shutdown).await;
            Event::Shutdown
        };
        match future::or(stop, next).await {
            Event::Connection(Some(Ok(io))) => return Some(io),
            Event::Connection(Some(Err(error))) => {
                eprintln!("{}: accept failed ({error}); going on", demo.stack.server);
                timer.sleep(Duration::from_millis(50)).await;
            }
            Event::Connection(None) | Event::Shutdown => return None,
        }
    }
}

/// The response to one request from the client at port `peer`, every poll of it (handler
/// included) timed by the stall detector under the request's route, and its start and end
/// recorded in the order of events (`--events`).
fn watched_response<H: Handlers>(
    handlers: Arc<H>,
    demo: Demo,
    peer: u16,
    req: Request<Incoming>,
) -> impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static {
    // Routing is ours here: the path the route was matched at is its label.
    let route = Route::from_path(req.uri().path());
    let matched_path = route.map(|_| req.uri().path());
    let label = demo.watch.label(req.method().as_str(), matched_path);
    let events = demo.events.request(peer, req.uri().path());
    let response = async move { Ok(respond(&*handlers, &demo, route, &req).await) };
    events.around(demo.watch.wrap(label, response))
}

/// Waits for the connections in flight to finish, up to [`SHUTDOWN_GRACE`].
async fn drain(graceful: GracefulShutdown, timer: &impl Timer) {
    let drained = async {
        graceful.shutdown().await;
        true
    };
    let grace_over = async {
        timer.sleep(SHUTDOWN_GRACE).await;
        false
    };
    if !future::or(drained, grace_over).await {
        eprintln!("{}", crate::GRACE_OVER);
    }
}
