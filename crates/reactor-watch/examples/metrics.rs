//! An axum app whose stalls reach Prometheus (feature `metrics`): `/bad` blocks, `/ok` awaits,
//! and `/metrics` on a port of its own serves `reactor_watch_*` by route.
//! `cargo run -p reactor-watch --features metrics --example metrics`, then
//! `curl localhost:3000/bad` and `curl localhost:9000/metrics`.
use std::error::Error;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::{Router, routing::get};
use clap::Parser;
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder};
use reactor_watch::metrics::{SLOW_POLL_BUCKETS, SLOW_POLL_DURATION_SECONDS};
use reactor_watch::{Config, Label, Watch, tower::WatchLayer};

/// The app's ports, on 127.0.0.1; 0 takes any free one (both are printed).
#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 3000)]
    port: u16,
    #[arg(long, default_value_t = 9000)]
    metrics_port: u16,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    let metrics_addr = free_addr(args.metrics_port)?;
    // Before the first label, so that each route's series start at 0.
    install_exporter(metrics_addr)?;
    let watch = Watch::start(Config::default()); // 100 ms, asyncio's debug-mode threshold
    let app = watched(routes(), watch);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, args.port)).await?;
        println!("metrics on http://{metrics_addr}/metrics");
        println!("listening on http://{}", listener.local_addr()?);
        axum::serve(listener, app).await
    })?;
    Ok(())
}

/// Records the watch's metrics and serves them on `addr`, at `/metrics`.
fn install_exporter(addr: SocketAddr) -> Result<(), BuildError> {
    // Outside any tokio runtime, `install` serves /metrics from a thread of its own, which a
    // blocked handler cannot hold. Without buckets, the exporter renders the durations as a
    // summary; these, for stalls from 1 ms to 10 s, make them a histogram.
    PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets_for_metric(
            Matcher::Full(SLOW_POLL_DURATION_SECONDS.into()),
            &SLOW_POLL_BUCKETS,
        )?
        .install()
}

/// `app` with every request future wrapped under the route it matched, as in the axum example.
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

/// `port` on 127.0.0.1, or for 0 a free one: the exporter binds the address it is given and
/// does not say which port it got, so the kernel is asked first.
fn free_addr(port: u16) -> std::io::Result<SocketAddr> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, port))?.local_addr()
}
