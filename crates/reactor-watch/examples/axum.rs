//! An axum app whose blocking route reactor-watch catches, with a health check beside it.
//! `cargo run -p reactor-watch --example axum`, then `curl localhost:3000/bad` and read stderr;
//! `curl` the health address it prints while `/bad` runs.
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::{Router, routing::get};
use reactor_watch::{Config, HealthCheck, Label, Watch, tower::WatchLayer};

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(3000, |p| p.parse().expect("a port"));
    // 1. A watch: any poll that holds its thread over 100 ms is a stall, reported on stderr.
    let watch = Watch::start(Config::default());
    // Optional: GET /health, from a thread of its own: 503 while a poll is past the limit,
    // and for the probe's period (here 1 s) after one was.
    let check = HealthCheck::new(watch.threshold()).period(Duration::from_secs(1));
    let health = watch.serve_health(([127, 0, 0, 1], 0).into(), check)?;
    let app = Router::new()
        .route(
            "/bad",
            get(|| async { std::thread::sleep(Duration::from_millis(300)) }),
        )
        .route(
            "/ok",
            get(|| tokio::time::sleep(Duration::from_millis(300))),
        )
        // 2. Wrap every request future under its route (no lock, no allocation per request).
        .route_layer(WatchLayer::new(watch, |req: &Request| {
            Label::new(
                req.extensions()
                    .get::<MatchedPath>()
                    .map_or("?", MatchedPath::as_str),
            )
        }));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        println!("health on http://{}/health", health.local_addr());
        println!("listening on http://{}", listener.local_addr()?);
        axum::serve(listener, app).await
    })
}
