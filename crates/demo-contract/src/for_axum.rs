//! axum glue: [`Sleep`] as an extractor, the bodies as responses, the JSON fallback, the
//! stall detector's layer (which also marks the reactor thread), and [`serve`], which
//! records the order of events (`--events`).

use std::io;
use std::net::SocketAddr;

use axum::Router;
use axum::extract::connect_info::{Connected, IntoMakeServiceWithConnectInfo};
use axum::extract::{ConnectInfo, FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, Uri, header};
use axum::middleware::{AddExtension, Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::serve::{IncomingStream, Listener, Serve};
use reactor_watch::Label;
use reactor_watch::tower::WatchLayer;
use tokio::net::{TcpListener, TcpStream};

use crate::body::to_json;
use crate::task_monitor::{RouteMonitors, monitor_request};
use crate::{
    ApiError, CpuWork, Demo, EventsBody, IoWork, Joined, Pong, Sleep, Spawned, StallsJson, Work,
    reactor,
};

/// Extractors run inside the handler's future, on the reactor thread that polls it: the
/// right place to mark that thread.
impl FromRequestParts<Demo> for Sleep {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, demo: &Demo) -> Result<Self, ApiError> {
        demo.mark_reactor_and_read_sleep(parts.uri.query())
    }
}

fn json(status: u16, body: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body).into_response()
}

impl IntoResponse for Pong {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for Work {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for CpuWork {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

/// A hidden blocker's body; its `Result<IoWork, ApiError>` answers the error's JSON and status.
impl IntoResponse for IoWork {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

/// The join routes' body, tokio's.
impl IntoResponse for Joined {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

/// `/bad-after-spawn`'s body, tokio's.
impl IntoResponse for Spawned {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for StallsJson {
    fn into_response(self) -> Response {
        json(200, self.0.into_bytes())
    }
}

impl IntoResponse for EventsBody {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json(self.status, to_json(&self))
    }
}

/// Both the fallback and the method-not-allowed fallback: JSON 404 or 405.
pub async fn unmatched(method: Method, uri: Uri) -> ApiError {
    ApiError::unmatched(method.as_str(), uri.path())
}

/// `GET /stalls`: the stall detector's counters.
pub async fn stalls(State(demo): State<Demo>) -> StallsJson {
    demo.stalls()
}

/// `GET /events`: the order of events since the last call, drained.
pub async fn events(State(demo): State<Demo>) -> EventsBody {
    demo.events()
}

/// The layer (reactor-watch's tower [`WatchLayer`], added with `Router::layer`, which axum
/// applies to each route and fallback, so after routing) that times every poll of the rest of
/// the request, handler included, under the route axum matched (`MatchedPath`; none in the
/// fallback).
///
/// Its label function also marks the thread as a reactor thread ([`reactor::mark`]): it runs
/// in the layer's `call`, inside every request's future, which only reactor threads poll. So
/// the routes that read no `?ms=` (the file routes), and hence never call
/// [`Demo::mark_reactor_and_read_sleep`], report `on_reactor` truthfully too.
pub fn watch_layer(demo: Demo) -> WatchLayer<impl Fn(&Request) -> Label + Clone> {
    WatchLayer::new(demo.watch.watch().clone(), move |req: &Request| {
        reactor::mark();
        let matched = req.extensions().get::<MatchedPath>();
        demo.watch
            .label(req.method().as_str(), matched.map(MatchedPath::as_str))
    })
}

/// `axum::serve(listener, app)`, with the order of events recorded when `--events` asks for it:
/// each connection's `accepted` as axum's accept loop takes it from `listener`
/// ([`Accepts`]), and each request's `started` and `ended` around the rest of the request,
/// handler included, in a middleware added to `app` as its outermost layer
/// (`Router::layer`, so after routing, fallback included). Without `--events` the app is
/// served as it is. Started as the `task-monitor` variant, each request also runs
/// under its route's tokio-metrics `TaskMonitor` ([`crate::task_monitor`]).
pub fn serve(
    demo: Demo,
    listener: TcpListener,
    app: Router,
) -> Serve<
    Accepts,
    IntoMakeServiceWithConnectInfo<Router, Peer>,
    AddExtension<Router, ConnectInfo<Peer>>,
> {
    let app = if demo.runs("task-monitor") {
        let monitors: &'static RouteMonitors = Box::leak(Box::default());
        tokio::spawn(monitors.report());
        app.layer(from_fn_with_state(monitors, monitor_request))
    } else {
        app
    };
    let listener = Accepts { listener, demo };
    axum::serve(
        listener,
        with_events(demo, app).into_make_service_with_connect_info::<Peer>(),
    )
}

/// `app` with, when `--events` asks for it, the middleware that records each request's
/// `started` and `ended` ([`record_events`]) as its outermost layer.
pub(crate) fn with_events(demo: Demo, app: Router) -> Router {
    if demo.events.is_recording() {
        app.layer(from_fn_with_state(demo, record_events))
    } else {
        app
    }
}

/// A tokio `TcpListener` as axum's accept loop uses it (accept errors handled by axum's own
/// `Listener` impl), recording each connection's `accepted` (`--events`) as it returns it.
#[derive(Debug)]
pub struct Accepts {
    listener: TcpListener,
    demo: Demo,
}

impl Listener for Accepts {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        let (io, peer) = Listener::accept(&mut self.listener).await;
        self.demo.events.accepted(peer.port());
        (io, peer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Listener::local_addr(&self.listener)
    }
}

/// The client's port, as a request extension (`ConnectInfo<Peer>`), for the order of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub u16);

impl Connected<IncomingStream<'_, Accepts>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Accepts>) -> Peer {
        Peer(stream.remote_addr().port())
    }
}

/// Middleware (added by [`serve`] with `--events`): records `started` when the rest of the
/// request is first polled and `ended` when it returns its response, under the client's port
/// and the path requested.
async fn record_events(
    State(demo): State<Demo>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    req: Request,
    next: Next,
) -> Response {
    let events = demo.events.request(peer, req.uri().path());
    events.around(next.run(req)).await
}
