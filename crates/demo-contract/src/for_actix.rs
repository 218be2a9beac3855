//! actix-web glue: [`Sleep`] as an extractor, the bodies as responses, JSON 404/405, the
//! stall detector's middleware, the order of events (`--events`: accepts in `on_connect`,
//! handlers in a middleware), and [`run`]: the server set up from the command line, with a
//! graceful stop on our own signal handlers, and the home of the race experiment's variants
//! the `request-timeout-off` variant and the `keep-alive-60s` variant.

use std::any::Any;
use std::fmt;
use std::future::{Future, Ready, ready};
use std::io;
use std::time::Duration;

use actix_http::Request;
use actix_service::IntoServiceFactory;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{AppConfig, Payload, Response, Service, ServiceFactory, ServiceRequest};
use actix_web::http::StatusCode;
use actix_web::rt::net::TcpStream;
use actix_web::web::{self, Data};
use actix_web::{
    FromRequest, Handler, HttpRequest, HttpResponse, HttpServer, Resource, Responder, ResponseError,
};
use reactor_watch::Watched;

use crate::body::to_json;
use crate::for_tokio::Shutdown;
use crate::{
    ApiError, Args, CpuWork, Demo, EventsBody, IoWork, Pong, Route, SHUTDOWN_GRACE, Sleep,
    StallsJson, Work, reactor,
};

/// Extractors run on the worker thread that polls the handler: the right place to mark it.
impl FromRequest for Sleep {
    type Error = ApiError;
    type Future = Ready<Result<Sleep, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let demo = req
            .app_data::<Data<Demo>>()
            .expect("the App registers Data<Demo>");
        ready(demo.mark_reactor_and_read_sleep(Some(req.query_string())))
    }
}

fn json(status: u16, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .content_type("application/json")
        .body(body)
}

impl Responder for Pong {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for Work {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for CpuWork {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

/// A hidden blocker's body; its `Result<IoWork, ApiError>` answers the error's JSON and status
/// (through [`ResponseError`]).
impl Responder for IoWork {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for StallsJson {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, self.0.into_bytes())
    }
}

impl Responder for EventsBody {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for ApiError {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        self.error_response()
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
    fn error_response(&self) -> HttpResponse {
        json(self.status, to_json(self))
    }
}

/// JSON 404 for unknown paths and 405 for other methods on known ones. (A resource does not
/// inherit the app's default service, so each resource gets it too.)
pub async fn unmatched(req: HttpRequest) -> ApiError {
    ApiError::unmatched(req.method().as_str(), req.path())
}

/// `GET /stalls`: the stall detector's counters.
pub async fn stalls(demo: Data<Demo>) -> StallsJson {
    demo.stalls()
}

/// `GET /events`: the order of events since the last call, drained.
pub async fn events(demo: Data<Demo>) -> EventsBody {
    demo.events()
}

/// The resources for `route`, answering GET with `handler`: one per path, so that
/// `match_pattern` names the alias requested (a resource at several paths is named by its
/// first).
pub fn get<F, Args>(route: Route, handler: F) -> Vec<Resource>
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    get_resources!(route, handler)
}

/// For `App::wrap_fn`: times every poll of the rest of the request, handler included, under
/// the resource pattern actix-web matched (`match_pattern`; none for the default service).
///
/// It also marks the thread as a reactor thread ([`reactor::mark`]): it is called on the
/// worker that serves the request, the only thread that polls its handler. So the routes that
/// read no `?ms=` (the file routes), and hence never call
/// [`Demo::mark_reactor_and_read_sleep`], report `on_reactor` truthfully too.
pub fn watch_request<S: Service<ServiceRequest>>(
    demo: &Demo,
    req: ServiceRequest,
    service: &S,
) -> Watched<S::Future> {
    reactor::mark();
    let label = demo
        .watch
        .label(req.method().as_str(), req.match_pattern().as_deref());
    demo.watch.wrap(label, service.call(req))
}

/// For `App::wrap_fn`, outside [`watch_request`]: with `--events`, records `started` when
/// the rest of the request is first polled and `ended` when it returns its response, under
/// the client's port and the path requested.
pub fn record_events<S: Service<ServiceRequest>>(
    demo: &Demo,
    req: ServiceRequest,
    service: &S,
) -> impl Future<Output = Result<S::Response, S::Error>> + use<S> {
    let peer = req.peer_addr().map_or(0, |peer| peer.port());
    let events = demo.events.request(peer, req.path());
    events.around(service.call(req))
}

/// Sets `server` up as the command line asks, binds it, announces it, and runs it until
/// SIGINT or SIGTERM, then stops it gracefully (its `shutdown_timeout` bounds the wait).
///
/// - `--threads`: that many workers; `--blocking-threads K`: a blocking pool of K threads per
///   worker (`worker_max_blocking_threads`).
/// - Signals: actix-web's own handlers are off; ours ([`Shutdown`]) are installed before the
///   readiness line, and the graceful stop is bounded by [`SHUTDOWN_GRACE`] as on every server
///   here (actix-web's own default is 30 s).
/// - `--events`: each connection's `accepted` is recorded in `on_connect`, which runs on the
///   worker when it takes the connection from the accept thread, not when the accept thread
///   accepted it: a worker blocked by `/bad` records its new connections only once free.
/// - With the `request-timeout-off` variant requested, the race experiment's variant:
///   actix-http's `client_request_timeout` is 0, so a new connection has no deadline for its
///   first request's head; with the `keep-alive-60s` variant, an idle connection is kept 60 s
///   instead of 5.
pub async fn run<F, I, S, B>(
    demo: Demo,
    args: &Args,
    server: HttpServer<F, I, S, B>,
) -> io::Result<()>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let mut server = server
        .workers(args.threads)
        .disable_signals()
        .shutdown_timeout(SHUTDOWN_GRACE.as_secs());
    if args.wants("request-timeout-off") {
        server = server.client_request_timeout(Duration::ZERO);
    }
    if args.wants("keep-alive-60s") {
        server = server.keep_alive(Duration::from_secs(60));
    }
    if let Some(pool) = args.blocking_threads {
        server = server.worker_max_blocking_threads(pool);
    }
    if demo.events.is_recording() {
        server = server.on_connect(move |io, _| accepted(&demo, io));
    }
    let server = server.listen(crate::listen(args.addr())?)?;
    let stop = Shutdown::on_signal()?;
    demo.announce(server.addrs()[0]);
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        stop.requested().await;
        handle.stop(true).await;
    });
    server.await
}

/// `on_connect`, on the worker that took the connection: records its `accepted`.
fn accepted(demo: &Demo, io: &dyn Any) {
    let peer = io
        .downcast_ref::<TcpStream>()
        .and_then(|stream| stream.peer_addr().ok())
        .map_or(0, |peer| peer.port());
    demo.events.accepted(peer);
}
