//! ntex glue, for `demo-ntex`: [`Sleep`] as an extractor, the bodies as responses, JSON
//! 404/405, the stall detector, the reactor mark and the order of events in one middleware
//! ([`WatchRequests`]), each worker's HTTP client for the upstream ([`upstream_client`]), and
//! [`run`]: the server set up from the command line on ntex's own io_uring runtime.

use std::any::Any;
use std::convert::Infallible;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

use ntex::client::error::ClientBuilderError;
use ntex::client::{Client, Connector};
use ntex::http::{HttpService, StatusCode};
use ntex::io::IoConfig;
use ntex::rt::{
    BlockFuture, Reactor, Runner, RuntimeBuilder, System, polling, uring, with_reactor,
};
use ntex::server::Stream;
use ntex::service::cfg::SharedCfg;
use ntex::service::{Middleware, Service, ServiceCtx};
use ntex::web::{
    self, App, DefaultError, FromRequest, HttpRequest, HttpResponse, Responder, WebRequest,
    WebResponse, WebResponseError,
};

use crate::blockers::UPSTREAM_TIMEOUT;
use crate::body::to_json;
use crate::{
    ApiError, Args, CpuWork, Demo, EventsBody, IoWork, Pong, Route, SHUTDOWN_GRACE, Sleep,
    StallsJson, Work, exit_without_io_uring,
};

/// The label `/ping` reports: the driver the command line chose.
pub fn runtime(args: &Args) -> &'static str {
    match epoll(args) {
        false => "ntex-rt neon (io_uring), one runtime per worker",
        true => "ntex-rt neon (epoll), one runtime per worker",
    }
}

/// Extractors run on the worker that polls the handler: the right place to mark it.
impl<Err> FromRequest<Err> for Sleep {
    type Error = ApiError;

    async fn from_request(
        req: &HttpRequest,
        _: &mut ntex::http::Payload,
    ) -> Result<Self, ApiError> {
        let demo = req.app_state::<Demo>().expect("the App has the Demo state");
        demo.mark_reactor_and_read_sleep(Some(req.query_string()))
    }
}

fn json(status: u16, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .content_type("application/json")
        .body(body)
}

impl Responder for Pong {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for Work {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for CpuWork {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for IoWork {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for StallsJson {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, self.0.into_bytes())
    }
}

impl Responder for EventsBody {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for ApiError {
    async fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(self.status, to_json(&self))
    }
}

impl WebResponseError<DefaultError> for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self, _: &HttpRequest) -> HttpResponse {
        json(self.status, to_json(self))
    }
}

/// JSON 404 for unknown paths and 405 for other methods on known ones.
pub async fn unmatched(req: HttpRequest) -> ApiError {
    ApiError::unmatched(req.method().as_str(), req.path())
}

/// `GET /stalls`: the stall detector's counters.
pub async fn stalls(demo: web::types::State<Demo>) -> StallsJson {
    demo.stalls()
}

/// `GET /events`: the order of events since the last call, drained.
pub async fn events(demo: web::types::State<Demo>) -> EventsBody {
    demo.events()
}

/// Middleware (`App::middleware`): marks the worker as a reactor thread (the file routes read no
/// `?ms=`, so [`Sleep`] alone would not mark it for them), times every poll of the rest of the
/// request, handler included, under the route its path names (ntex's router does not tell a
/// middleware which resource matched), and, with `--events`, records its `started` and `ended`.
#[derive(Debug, Clone, Copy)]
pub struct WatchRequests(pub Demo);

impl<S> Middleware<S, SharedCfg> for WatchRequests {
    type Service = Watching<S>;

    fn create(&self, service: S, _: SharedCfg) -> Watching<S> {
        Watching {
            service,
            demo: self.0,
        }
    }
}

/// [`WatchRequests`] around one service.
#[derive(Debug)]
pub struct Watching<S> {
    service: S,
    demo: Demo,
}

impl<S, E> Service<WebRequest<E>> for Watching<S>
where
    S: Service<WebRequest<E>, Response = WebResponse>,
{
    type Response = WebResponse;
    type Error = S::Error;

    ntex::forward_poll!(service);
    ntex::forward_ready!(service);
    ntex::forward_shutdown!(service);

    async fn call(
        &self,
        req: WebRequest<E>,
        ctx: ServiceCtx<'_, Self>,
    ) -> Result<WebResponse, S::Error> {
        // Only a worker polls a request's service: the thread is a reactor thread.
        crate::reactor::mark();
        let demo = self.demo;
        let path = req.path().to_owned();
        let matched = Route::from_path(&path).map(|_| path.as_str());
        let label = demo.watch.label(req.method().as_str(), matched);
        let peer = req.peer_addr().map_or(0, |peer| peer.port());
        let events = demo.events.request(peer, &path);
        events
            .around(demo.watch.wrap(label, ctx.call(&self.service, req)))
            .await
    }
}

/// This worker's HTTP client for `/ok-http-await`, the state every worker's app builds once
/// (`App::state_factory`): ntex's own client, over this worker's io_uring sockets. Its
/// connection pool is a task on this worker's runtime, so each worker has its own client.
///
/// The pool opens one connection to a host at a time (others wait for it; ntex-3.12.3
/// src/client/pool.rs:330) and holds at most `limit` (ntex's default 8 would queue a burst's
/// requests). `limit(0)`, documented as "no limit", never wakes a waiting request (pool.rs:340
/// compares `acquired < limit`), so the limit is the largest number instead. No redirects, and
/// the contract's timeout for the whole answer.
pub async fn upstream_client() -> Result<Client, ClientBuilderError> {
    Client::builder()
        // `connector` has a type parameter that it does not use: name any type.
        .connector::<Connector>(Connector::default().limit(usize::MAX))
        .response_timeout(UPSTREAM_TIMEOUT)
        .response_payload_timeout(UPSTREAM_TIMEOUT.into())
        .disable_redirects()
        .build(SharedCfg::default())
        .await
}

/// An error of ntex's client, shown with its causes: ntex's own messages leave the cause out
/// ("Failed to connect to host: Connector has been disconnected", without "Connection
/// refused").
#[derive(Debug)]
pub struct ClientFailure(Box<dyn std::error::Error>);

impl<E: std::error::Error + 'static> From<E> for ClientFailure {
    fn from(error: E) -> Self {
        ClientFailure(Box::new(error))
    }
}

impl std::fmt::Display for ClientFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = self.0.to_string();
        let mut cause = self.0.source();
        while let Some(error) = cause {
            let text = error.to_string();
            // A wrapper's message often embeds its cause's already.
            if !shown.contains(&text) {
                shown = format!("{shown}: {text}");
            }
            cause = error.source();
        }
        f.write_str(&shown)
    }
}

/// The resources for `route`, answering GET with `handler`: one per path, each answering
/// other methods with [`unmatched`]'s 405.
pub fn get<F, Args>(route: Route, handler: F) -> Vec<web::Resource<DefaultError>>
where
    F: web::Handler<Args, DefaultError> + Clone + 'static,
    Args: FromRequest<DefaultError> + 'static,
    Args::Error: Into<web::Error>,
{
    get_resources!(route, handler)
}

/// Builds the app on every worker (`routes`, the demo's state, the worker's
/// [`upstream_client`], [`unmatched`] for every other path, [`WatchRequests`] around all),
/// serves it as the command line asks, announces it, and runs until SIGINT or SIGTERM, then
/// stops gracefully within [`SHUTDOWN_GRACE`].
///
/// - `--threads N`: N workers (`ntex:worker:0`, ...), each its own single-threaded runtime on
///   its own io_uring. One accept thread takes every connection and deals it to a worker,
///   round-robin, where it stays: nothing is stolen.
/// - `--blocking-threads K`: the one blocking pool of `ntex::rt::spawn_blocking`, shared by
///   the workers, up to K threads (ntex's default 256); beyond, work queues for a free one.
/// - Without io_uring, the server says so in one line and exits with status 1.
/// - ntex's arbiter pings are off (`ping_interval(0)`): the system would otherwise ping each
///   worker every 2 s and try to capture a backtrace of one slow to answer, a stall detector
///   of its own that this project does not measure.
/// - `--events`: each connection's `accepted` is recorded in ntex-server's `on_accept`, which
///   runs on the worker when it takes the connection, as actix-web's `on_connect` does.
pub fn run(demo: Demo, args: &Args, routes: fn(&mut web::ServiceConfig)) -> io::Result<()> {
    let epoll = epoll(args);
    if !epoll && let Err(error) = uring::Reactor::new(URING_ENTRIES) {
        exit_without_io_uring(demo.stack, error);
    }
    let runner = Neon {
        event_interval: if args.wants("event-interval-2") {
            2
        } else {
            61
        },
        epoll,
    };
    let mut system = System::build()
        .name(demo.stack.server)
        .signals(true)
        .ping_interval(0);
    if let Some(pool) = args.blocking_threads {
        system = system.thread_pool_limit(pool);
    }
    let listener = crate::listen(args.addr())?;
    let addr = listener.local_addr()?;
    let threads = args.threads;
    let direct_write = args.wants("direct-write") || args.wants(EPOLL_DIRECT_WRITE);
    system.build(runner).block_on(async move {
        let mut server = ntex::server::build()
            .workers(threads)
            .shutdown_timeout(ntex::time::Seconds(SHUTDOWN_GRACE.as_secs() as u16))
            .listen("demo", listener, async move |_| {
                HttpService::new(
                    App::new()
                        .state(demo)
                        .state_factory(upstream_client)
                        .configure(routes)
                        .default_service(web::to(unmatched))
                        .middleware(WatchRequests(demo)),
                )
            })?;
        if direct_write {
            server = server.config("demo", direct_write_config());
        }
        if demo.events.is_recording() {
            server = server.on_accept(async move |_, stream: Stream| {
                demo.events.accepted(peer_port(&stream));
                Ok::<_, Infallible>(stream)
            });
        }
        let server = server.run();
        // ntex-server asks for signals in a task of its own, and ntex-rt registers the ask in
        // another: let both run before a signal may come.
        ntex::time::sleep(ntex::time::Millis(10)).await;
        demo.announce(addr);
        server.await
    })
}

/// the `direct-write` variant's connections: ntex-io hands a write buffer of 1 byte or more to
/// the reactor at once (ntex-io 3.14.0 src/ioref.rs, `consolidate_write_state`); below its
/// default threshold (8 KiB, half a write page) it spawns a task to do it.
fn direct_write_config() -> SharedCfg {
    SharedCfg::new("demo")
        .add(IoConfig::new().set_write_buf_threshold(1))
        .build()
}

/// The submission queue's size, as ntex's own `DefaultRuntime` makes it.
const URING_ENTRIES: u32 = 2048;

fn peer_port(stream: &Stream) -> u16 {
    match stream {
        Stream::Tcp(tcp) => tcp.peer_addr().map_or(0, |peer| peer.port()),
        #[allow(unreachable_patterns)]
        _ => 0,
    }
}

/// ntex's own io_uring runner (`DefaultRuntime` of ntex-net with `neon-uring`), with the
/// setting it does not expose: how many tasks the runtime polls before it polls io_uring
/// again (ntex-rt's `RuntimeBuilder::event_interval`, 61 unless the `event-interval-2` variant);
/// and, for the `epoll` variant, ntex-net's epoll reactor in its place (`DefaultRuntime` with
/// `neon-polling`), which every Linux build of ntex-net has.
#[derive(Debug)]
struct Neon {
    event_interval: usize,
    epoll: bool,
}

impl Runner for Neon {
    fn block_on(&self, future: BlockFuture) -> Result<(), Box<dyn Any + Send>> {
        let driver: Box<dyn Reactor> = if self.epoll {
            Box::new(polling::Reactor::new().expect("the kernel gave an epoll"))
        } else {
            // `run` checked that the kernel gives an io_uring before starting the system.
            Box::new(
                uring::Reactor::new(URING_ENTRIES).expect("the kernel gave an io_uring at start"),
            )
        };
        with_reactor(&driver, || {
            catch_unwind(AssertUnwindSafe(|| {
                let runtime = RuntimeBuilder::new()
                    .event_interval(self.event_interval)
                    .build(driver.handle());
                runtime.block_on(future, &*driver);
            }))
        })
    }
}

/// The variant that is `epoll` and `direct-write` at once: the two that free ntex's answers
/// only together.
const EPOLL_DIRECT_WRITE: &str = "epoll-direct-write";

/// Whether the server runs on ntex-net's epoll reactor: the `epoll` variant, alone or with
/// `direct-write`.
fn epoll(args: &Args) -> bool {
    args.wants("epoll") || args.wants(EPOLL_DIRECT_WRITE)
}
