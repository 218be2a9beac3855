//! An axum app whose blocking route reactor-watch catches, with the health checks of a
//! readiness and a liveness probe beside it. `cargo run -p reactor-watch --example axum`, then
//! `curl localhost:3000/bad` and read stderr; `curl` the health addresses it prints while
//! `/bad` runs. Its arguments are its ports, `[PORT [READY_PORT [ALIVE_PORT]]]` (0 takes a
//! free one); in a Kubernetes pod, give it the pod's IP in `POD_IP`.
use std::error::Error;
use std::net::{AddrParseError, IpAddr, Ipv4Addr, SocketAddr};
use std::num::ParseIntError;
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::{Router, routing::get};
use reactor_watch::{Config, HealthCheck, Label, Watch, tower::WatchLayer};

/// The app's port, unless the command line gives another.
const PORT: u16 = 3000;
/// The readiness check's port: the readiness probe's `httpGet` port.
const READY_PORT: u16 = 9000;
/// The liveness check's port: the liveness probe's `httpGet` port.
const ALIVE_PORT: u16 = 9001;

fn main() -> Result<(), Box<dyn Error>> {
    let [port, ready_port, alive_port] = ports()?;
    let ip = pod_ip_or_loopback()?;
    let watch = Watch::start(Config::default()); // 100 ms, asyncio's debug-mode threshold
    // The probes' checks, each served by a thread of its own, before `watched` takes the watch:
    // readiness at the watch's threshold, liveness at seconds; each period is its probe's.
    let ready = HealthCheck::new(watch.threshold()).period(Duration::from_secs(5));
    let alive = HealthCheck::new(Duration::from_secs(5)).period(Duration::from_secs(10));
    let ready = watch.serve_health((ip, ready_port).into(), ready)?.detach();
    let alive = watch.serve_health((ip, alive_port).into(), alive)?.detach();
    let app = watched(routes(), watch);
    serve(app, (ip, port).into(), [ready, alive])?;
    Ok(())
}

/// `app` with every request future wrapped under the route it matched: `route_layer` runs
/// after routing, so `MatchedPath` is there, and its template, not the raw path, is the label
/// (labels live as long as the process).
fn watched(app: Router, watch: Watch) -> Router {
    app.route_layer(WatchLayer::new(watch, |req: &Request| {
        let route = req.extensions().get::<MatchedPath>();
        Label::new(route.map_or("?", MatchedPath::as_str))
    }))
}

/// `/bad` blocks its thread for 300 ms, which the watch reports; `/ok` awaits as long.
fn routes() -> Router {
    Router::new()
        .route(
            "/bad",
            get(|| async { std::thread::sleep(Duration::from_millis(300)) }),
        )
        .route(
            "/ok",
            get(|| tokio::time::sleep(Duration::from_millis(300))),
        )
}

/// Where the app and its checks listen. In a pod, the pod's IP (`POD_IP`, from the downward
/// API's `status.podIP`): the kubelet sends its probes there, not to loopback. Never a public
/// address: the checks' bodies name your routes.
fn pod_ip_or_loopback() -> Result<IpAddr, AddrParseError> {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    std::env::var("POD_IP").map_or(Ok(loopback), |ip| ip.parse())
}

/// The app's port and the two checks', from the command line or else the defaults.
fn ports() -> Result<[u16; 3], ParseIntError> {
    let mut ports = [PORT, READY_PORT, ALIVE_PORT];
    for (port, arg) in ports.iter_mut().zip(std::env::args().skip(1)) {
        *port = arg.parse()?;
    }
    Ok(ports)
}

/// Serves `app` on `addr` on one thread, after printing where it and the checks listen.
fn serve(app: Router, addr: SocketAddr, [ready, alive]: [SocketAddr; 2]) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        println!("ready on http://{ready}/health");
        println!("alive on http://{alive}/health");
        println!("listening on http://{}", listener.local_addr()?);
        axum::serve(listener, app).await
    })
}
