//! hyper on smol, whose blocking route reactor-watch catches: wrap the service's future.
//! `cargo run -p reactor-watch --example smol`, then `curl localhost:3000/bad` and read stderr.
use std::convert::Infallible;
use std::time::Duration;

use hyper::{Request, Response, body::Incoming, server::conn::http1, service::service_fn};
use reactor_watch::{Config, Label, Watch};
use smol_hyper::rt::FuturesIo;

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(3000, |p| p.parse().expect("a port"));
    let watch = Watch::start(Config::default()); // 100 ms, asyncio's debug-mode threshold
    // A label per route, made once (labels live as long as the process), and every request's
    // future wrapped under its route.
    let (bad, other) = (Label::new("/bad"), Label::new("(other)"));
    let service = service_fn(move |req: Request<Incoming>| {
        let label = if req.uri().path() == "/bad" {
            bad
        } else {
            other
        };
        watch.wrap(label, answer(req))
    });
    smol::block_on(async {
        let listener = smol::net::TcpListener::bind(("127.0.0.1", port)).await?;
        println!("listening on http://{}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            let connection =
                http1::Builder::new().serve_connection(FuturesIo::new(stream), service.clone());
            smol::spawn(connection).detach();
        }
    })
}

async fn answer(req: Request<Incoming>) -> Result<Response<String>, Infallible> {
    if req.uri().path() == "/bad" {
        std::thread::sleep(Duration::from_millis(300)); // blocks the executor thread: reported
    }
    Ok(Response::new("done\n".into()))
}
