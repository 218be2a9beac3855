//! The demo routes on Rocket 0.5 and tokio.
//!
//! - Reactor: Rocket runs on the tokio runtime this server builds (`for_tokio::runtime`): with
//!   `--threads 1` a `current_thread` runtime, whose `main` thread polls every request future
//!   and drives epoll and the timers; with `--threads N` a `multi_thread` runtime of N
//!   work-stealing workers. Rocket's own runtime, launch banner, logging and signal handling
//!   are not used: the readiness line, the stop and the detector are the contract's.
//! - Offload: `rocket::tokio::task::spawn_blocking`, tokio's blocking pool: up to 512 threads;
//!   `--blocking-threads` sets that limit (`for_tokio::runtime`).
//! - Stalls: every route's handler is wrapped (`Watched`) so that the stall detector times
//!   each of its polls under the route's path; `GET /stalls` reports them.
//! - Events: Rocket 0.5 binds and accepts on its own, with no hook (its `http_server`, which
//!   takes a listener, is crate-private), so this server cannot see its accepts and refuses
//!   `--events` (its `stack.toml` says `sees_accepts = false`).
//! - Answers: Rocket's `Json` for a body; an error is a `Failed`, the contract's JSON error
//!   with its status, and whatever Rocket rejects itself goes to one catcher (`refused`).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use demo_contract::for_tokio::{self, Shutdown};
use demo_contract::{
    ApiError, Args, CpuWork, Demo, EventsBody, IoWork, Pong, Route, SHUTDOWN_GRACE, Stack, Work,
    cpu,
};
use hyper_util::rt::TokioIo;
use rocket::config::LogLevel;
use rocket::fairing::AdHoc;
use rocket::http::{ContentType, Status};
use rocket::request::{self, FromRequest};
use rocket::response::{self, Responder};
use rocket::route::{self as handler, Handler};
use rocket::serde::json::Json;
use rocket::{Data, Request, State, catch, catchers, get, routes};
use tokio::net::TcpStream;

/// What this stack is (runtime, driver, its two fixes, each route's handler), described once
/// in its crate's `stack.toml`, which `--describe` prints.
static STACK: LazyLock<Stack> = LazyLock::new(|| Stack::described(include_str!("../stack.toml")));

/// Answers at once, if the reactor thread is free to poll it.
#[get("/ping")]
fn ping(demo: &State<Demo>) -> Json<Pong> {
    Json(demo.pong())
}

/// Blocks the reactor: the thread that should poll every other request sleeps instead.
#[get("/bad")]
async fn bad(sleep: Sleep) -> Json<Work> {
    let work = STACK.work_here(Route::Bad, sleep.0);
    std::thread::sleep(sleep.0);
    Json(work)
}

/// Frees the reactor: the sleep runs on a blocking-pool thread while this task waits.
#[get("/ok-blocking")]
async fn ok_blocking(sleep: Sleep) -> Json<Work> {
    let work = rocket::tokio::task::spawn_blocking(move || {
        let work = STACK.work_here(Route::OkBlocking, sleep.0);
        std::thread::sleep(sleep.0);
        work
    })
    .await
    .expect("the sleep does not panic");
    Json(work)
}

/// Frees the reactor: the task yields to the timer, and the thread polls others meanwhile.
#[get("/ok-await")]
async fn ok_await(sleep: Sleep) -> Json<Work> {
    let work = STACK.work_here(Route::OkAwait, sleep.0);
    rocket::tokio::time::sleep(sleep.0).await;
    Json(work)
}

/// Blocks the reactor: the thread that should poll every other request computes instead.
#[get("/bad-cpu")]
async fn bad_cpu(sleep: Sleep) -> Json<CpuWork> {
    Json(STACK.burn_here(Route::BadCpu, sleep.0))
}

/// Frees the reactor: the work runs on a blocking-pool thread, one per request, and all of
/// them share the cores.
#[get("/ok-cpu-blocking")]
async fn ok_cpu_blocking(sleep: Sleep) -> Json<CpuWork> {
    let work =
        rocket::tokio::task::spawn_blocking(move || STACK.burn_here(Route::OkCpuBlocking, sleep.0));
    Json(work.await.expect("the work does not panic"))
}

/// Shares the reactor: after each ~1 ms slice the task yields, and the thread polls others.
#[get("/ok-cpu-yield")]
async fn ok_cpu_yield(sleep: Sleep) -> Json<CpuWork> {
    let yield_now = rocket::tokio::task::yield_now;
    Json(
        STACK
            .burn_in_slices_here(Route::OkCpuYield, sleep.0, yield_now)
            .await,
    )
}

/// Frees the reactor: the work queues for the rayon pool, one thread per core.
#[get("/ok-cpu-pool")]
async fn ok_cpu_pool(sleep: Sleep) -> Json<CpuWork> {
    Json(cpu::on_pool(move || STACK.burn_here(Route::OkCpuPool, sleep.0)).await)
}

/// Blocks the reactor: the thread waits inside ureq for the upstream's answer.
#[get("/bad-http")]
async fn bad_http(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let upstream = demo.blockers.upstream()?;
    Ok(Json(upstream.get_blocking(
        &STACK,
        Route::BadHttp,
        sleep.0,
    )?))
}

/// Frees the reactor: ureq waits on a blocking-pool thread while this task waits.
#[get("/ok-http-blocking")]
async fn ok_http_blocking(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let upstream = demo.blockers.upstream()?;
    let call = move || upstream.get_blocking(&STACK, Route::OkHttpBlocking, sleep.0);
    let work = rocket::tokio::task::spawn_blocking(call).await;
    Ok(Json(work.expect("the call does not panic")?))
}

/// Frees the reactor: hyper's client awaits the upstream on tokio's sockets.
#[get("/ok-http-await")]
async fn ok_http_await(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let connect = |addr| async move { TcpStream::connect(addr).await.map(TokioIo::new) };
    let upstream = demo.blockers.upstream()?;
    let work = upstream.get_over(&STACK, Route::OkHttpAwait, sleep.0, connect);
    Ok(Json(work.await?))
}

/// Blocks the reactor: rusqlite executes the query on this thread.
#[get("/bad-db")]
async fn bad_db(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let db = demo.blockers.database()?;
    Ok(Json(db.query_blocking(&STACK, Route::BadDb, sleep.0)?))
}

/// Frees the reactor: rusqlite executes the query on a blocking-pool thread.
#[get("/ok-db-blocking")]
async fn ok_db_blocking(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let db = demo.blockers.database()?;
    let query = move || db.query_blocking(&STACK, Route::OkDbBlocking, sleep.0);
    let work = rocket::tokio::task::spawn_blocking(query).await;
    Ok(Json(work.expect("the query does not panic")?))
}

/// Frees the reactor: sqlx's worker thread runs the query; this task awaits its answer.
#[get("/ok-db-await")]
async fn ok_db_await(demo: &State<Demo>, sleep: Sleep) -> Answer<IoWork> {
    let db = demo.blockers.database()?;
    Ok(Json(
        db.query_async(&STACK, Route::OkDbAwait, sleep.0).await?,
    ))
}

/// Blocks the reactor: the thread reads (and copies) the whole file.
#[get("/bad-file")]
async fn bad_file(demo: &State<Demo>) -> Answer<IoWork> {
    Ok(Json(
        demo.blockers
            .file()?
            .read_blocking(&STACK, Route::BadFile)?,
    ))
}

/// Frees the reactor: a blocking-pool thread reads the file while this task waits.
#[get("/ok-file-blocking")]
async fn ok_file_blocking(demo: &State<Demo>) -> Answer<IoWork> {
    let file = demo.blockers.file()?;
    let read = move || file.read_blocking(&STACK, Route::OkFileBlocking);
    let work = rocket::tokio::task::spawn_blocking(read).await;
    Ok(Json(work.expect("the read does not panic")?))
}

/// Frees the reactor: tokio's `fs::read` is `std::fs::read` on the blocking pool.
#[get("/ok-file-await")]
async fn ok_file_await(demo: &State<Demo>) -> Answer<IoWork> {
    let file = demo.blockers.file()?;
    let read = rocket::tokio::fs::read(file.path());
    Ok(Json(
        file.read_awaited(&STACK, Route::OkFileAwait, read).await?,
    ))
}

/// The stall detector's findings; answered at once, like `/ping`, if the reactor is free.
#[get("/stalls")]
fn stalls(demo: &State<Demo>) -> (ContentType, String) {
    (ContentType::JSON, demo.stalls().0)
}

/// The record of events, which this server never keeps (it refuses `--events`).
#[get("/events")]
fn events(demo: &State<Demo>) -> Json<EventsBody> {
    Json(demo.events())
}

/// Frees the reactor as `/ok-blocking` does: FastAPI's name for it (a plain `def`).
#[get("/ok-def")]
async fn ok_def(sleep: Sleep) -> Json<Work> {
    ok_blocking(sleep).await
}

/// `?ms=`: the sleep (or CPU time) of a work route. A bad value is a 400 whose JSON the
/// catcher finds in the request's cache.
struct Sleep(Duration);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Sleep {
    type Error = ApiError;

    async fn from_request(request: &'r Request<'_>) -> request::Outcome<Self, ApiError> {
        let demo = request
            .rocket()
            .state::<Demo>()
            .expect("the Demo is managed");
        let query = request.uri().query().map(|query| query.as_str());
        match demo.mark_reactor_and_read_sleep(query) {
            Ok(sleep) => request::Outcome::Success(Sleep(sleep.0)),
            Err(error) => {
                request.local_cache(|| Some(error.clone()));
                request::Outcome::Error((Status::BadRequest, error))
            }
        }
    }
}

/// A route's answer: its body in JSON, or the contract's error.
type Answer<T> = Result<Json<T>, Failed>;

/// The contract's error answer: its status, and `{"error": ...}`.
#[derive(Debug)]
struct Failed(ApiError);

impl From<ApiError> for Failed {
    fn from(error: ApiError) -> Failed {
        Failed(error)
    }
}

impl<'r> Responder<'r, 'static> for Failed {
    fn respond_to(self, request: &'r Request<'_>) -> response::Result<'static> {
        let status = Status::from_code(self.0.status).unwrap_or(Status::InternalServerError);
        let body = rocket::serde::json::to_string(&self.0).expect("an error always serialises");
        let mut response = (ContentType::JSON, body).respond_to(request)?;
        response.set_status(status);
        Ok(response)
    }
}

/// Every error Rocket makes itself: a bad `?ms=` (the error the guard cached), a path or
/// method no route matched (404 or 405, as the contract says), anything else with its status.
#[catch(default)]
fn refused(status: Status, request: &Request<'_>) -> Failed {
    if let Some(error) = request.local_cache(|| None::<ApiError>) {
        return Failed(error.clone());
    }
    match status {
        Status::NotFound => Failed(ApiError::unmatched(
            request.method().as_str(),
            request.uri().path().as_str(),
        )),
        _ => Failed(ApiError {
            status: status.code,
            error: status.reason_lossy().to_owned(),
        }),
    }
}

/// A route's handler, each poll of it timed by the stall detector under the route's path.
#[derive(Clone)]
struct Watched {
    inner: Box<dyn Handler>,
    path: &'static str,
}

#[rocket::async_trait]
impl Handler for Watched {
    async fn handle<'r>(&self, request: &'r Request<'_>, data: Data<'r>) -> handler::Outcome<'r> {
        demo_contract::reactor::mark();
        let demo = request
            .rocket()
            .state::<Demo>()
            .expect("the Demo is managed");
        let label = demo.watch.label(request.method().as_str(), Some(self.path));
        demo.watch
            .wrap(label, self.inner.handle(request, data))
            .await
    }
}

/// `routes`, each handler [`Watched`].
fn watched(routes: Vec<rocket::Route>) -> Vec<rocket::Route> {
    (routes.into_iter())
        .map(|mut route| {
            let path = route.uri.path().to_string().leak();
            let inner = route.handler.clone();
            route.handler = Box::new(Watched { inner, path });
            route
        })
        .collect()
}

/// Rocket's configuration from the command line: the address, no logging or colours (the
/// server's lines are the contract's), no signal handling of its own, the contract's grace.
fn config(args: &Args) -> rocket::Config {
    rocket::Config {
        address: args.host,
        port: args.port,
        log_level: LogLevel::Off,
        cli_colors: false,
        shutdown: rocket::config::Shutdown {
            ctrlc: false,
            signals: HashSet::new(),
            grace: SHUTDOWN_GRACE.as_secs() as u32,
            ..rocket::config::Shutdown::default()
        },
        ..rocket::Config::release_default()
    }
}

fn main() -> std::io::Result<()> {
    let args = STACK.args();
    let (runtime, flavour) = for_tokio::runtime(&args)?;
    let demo = Demo::new(&STACK, flavour, &args);
    let routes = routes![
        ping,
        bad,
        ok_blocking,
        ok_def,
        ok_await,
        bad_cpu,
        ok_cpu_blocking,
        ok_cpu_yield,
        ok_cpu_pool,
        bad_http,
        ok_http_blocking,
        ok_http_await,
        bad_db,
        ok_db_blocking,
        ok_db_await,
        bad_file,
        ok_file_blocking,
        ok_file_await,
        stalls,
        events,
    ];
    let ready = AdHoc::on_liftoff("the readiness line", move |rocket| {
        let config = rocket.config();
        let addr = SocketAddr::new(config.address, config.port);
        Box::pin(async move { demo.announce(addr) })
    });
    runtime.block_on(async {
        let stop = Shutdown::on_signal()?;
        let rocket = rocket::custom(config(&args))
            .manage(demo)
            .mount("/", watched(routes))
            .register("/", catchers![refused])
            .attach(ready)
            .ignite()
            .await
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        let stopping = rocket.shutdown();
        let requested = stop.requested();
        tokio::spawn(async move {
            requested.await;
            stopping.notify();
        });
        let served = async {
            let launched = rocket.launch().await;
            launched
                .map(drop)
                .map_err(|error| std::io::Error::other(error.to_string()))
        };
        stop.bounded(served).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocket::http::Method;

    #[test]
    fn every_route_is_watched_under_its_path() {
        let routes = watched(routes![bad, ok_def]);
        let paths: Vec<String> = routes
            .iter()
            .map(|route| route.uri.path().to_string())
            .collect();
        assert_eq!(paths, ["/bad", "/ok-def"]);
        assert_eq!(routes[0].method, Method::Get);
    }
}
