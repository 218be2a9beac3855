//! An actix-web app whose blocking route reactor-watch catches: the wrapper is one `wrap_fn`.
//! `cargo run -p reactor-watch --example actix`, then `curl localhost:3000/bad` and read stderr.
use std::time::Duration;

use actix_web::dev::Service;
use actix_web::{App, HttpServer, web};
use reactor_watch::{Config, Label, Watch};

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(3000, |p| p.parse().expect("a port"));
    let watch = Watch::start(Config::default()); // 100 ms, asyncio's debug-mode threshold
    actix_web::rt::System::new().block_on(async move {
        let server = HttpServer::new(move || {
            // Each worker builds its own App: a clone of the watch each, one watchdog for all.
            let watch = watch.clone();
            App::new()
                .wrap_fn(move |req, service| {
                    let route = req.match_pattern();
                    let label = Label::new(route.as_deref().unwrap_or("?"));
                    watch.wrap(label, service.call(req))
                })
                .route("/bad", web::get().to(bad))
                .route("/ok", web::get().to(ok))
        })
        .workers(1)
        .bind(("127.0.0.1", port))?;
        println!("listening on http://{}", server.addrs()[0]);
        server.run().await
    })
}

async fn bad() -> &'static str {
    std::thread::sleep(Duration::from_millis(300)); // blocks the worker: reported
    "blocked"
}

async fn ok() -> &'static str {
    actix_web::rt::time::sleep(Duration::from_millis(300)).await; // yields: not reported
    "awaited"
}
