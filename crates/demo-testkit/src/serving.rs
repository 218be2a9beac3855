//! HTTP behaviour every server shares: the FastAPI client's paths, a bad `?ms=` as a 400 in
//! JSON, unknown paths and methods, signals, malformed requests, loopback by default, and
//! running out of file descriptors.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use burst_meter::http::{Connection, Endpoint, get_once};
use burst_meter::target::ServerProcess;
use demo_contract::variant::{self, Variant};
use demo_contract::{CpuWork, Pong, Route, Work};
use hyper::Method;
use nix::sys::signal::Signal;

use crate::harness::*;

pub fn fastapi_client_paths_work_unchanged(binary: &str) {
    block_on(async {
        let server = start(binary, &["--sleep-ms", "1"]).await;
        for (path, route) in [
            ("/bad", "/bad"),
            ("/ok-def", "/ok-blocking"),
            ("/ok-await", "/ok-await"),
        ] {
            let reply = get(server.endpoint(), path).await;
            assert_json(&reply, 200, path);
            let work: Work = reply.json().expect("a work body");
            assert_eq!((work.route.as_str(), work.slept_ms), (route, 1), "{path}");
        }
        let work: Work = get(server.endpoint(), "/ok-def?ms=3")
            .await
            .json()
            .expect("a work body");
        assert_eq!(work.slept_ms, 3);
        assert!(!work.on_reactor, "/ok-def is the offload route");
    });
}

pub fn bad_ms_is_a_400_in_json_and_the_server_goes_on(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        let hidden = Route::HIDDEN
            .into_iter()
            .flatten()
            .filter(|route| route.takes_ms());
        let routes = Route::WORK.into_iter().chain(Route::CPU).chain(hidden);
        let routes: Vec<&str> = routes.map(Route::path).collect();
        for query in ["ms=abc", "ms=-1", "ms=10001", "ms=", "ms=1&ms=2", "ms=1.5"] {
            for &route in &routes {
                let path = format!("{route}?{query}");
                let reply = get(server.endpoint(), &path).await;
                assert_json(&reply, 400, &path);
                let body: serde_json::Value = reply.json().expect("a JSON error");
                assert!(
                    body.get("error")
                        .and_then(|e| e.as_str())
                        .is_some_and(|e| !e.is_empty()),
                    "{path}"
                );
            }
        }
        assert_eq!(get(server.endpoint(), "/bad?ms=0").await.status, 200);
        let reply = get(server.endpoint(), "/bad-cpu?ms=0").await;
        assert_json(&reply, 200, "/bad-cpu?ms=0");
        let body: CpuWork = reply.json().expect("a CPU work body");
        assert_eq!(body.work.slept_ms, 0);
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
        // `/stalls` and `/events` are no work routes: they take no `?ms=` and ignore their query.
        for path in ["/stalls?ms=abc", "/events?ms=abc"] {
            assert_json(&get(server.endpoint(), path).await, 200, path);
        }
    });
}

pub fn unknown_paths_are_404_and_other_methods_405(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_json(&get(server.endpoint(), "/nope").await, 404, "/nope");
        let mut connection = Connection::open(server.endpoint())
            .await
            .expect("a connection");
        for path in [
            "/ping",
            "/bad",
            "/ok-def",
            "/ok-cpu-pool",
            "/stalls",
            "/events",
        ] {
            let reply = connection
                .send(Method::POST, path)
                .await
                .expect("an answer");
            assert_json(&reply, 405, &format!("POST {path}"));
        }
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
    });
}

/// Sends `signal` once the server has served a request and had a moment to settle, and
/// expects exit 0 within 5 s.
pub(crate) fn exits_0_promptly_on(binary: &str, signal: Signal) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        assert_eq!(get(server.endpoint(), "/ping").await.status, 200);
        // ntex-server subscribes to signals in tasks it spawns after it starts (ntex-rt's
        // `signals::signal` registers from a spawned task, and a signal that comes before is
        // handed to nobody): once, with the test binary's other servers starting beside it, a
        // SIGTERM sent straight after the first answer never stopped demo-ntex. A signal
        // sent in the server's first moments is not what this checks.
        tokio::time::sleep(Duration::from_millis(200)).await;
        server.signal(signal).expect("the signal is sent");
        let sent = Instant::now();
        let status = tokio::time::timeout(Duration::from_secs(5), server.wait())
            .await
            .expect("the server exits within 5 s")
            .expect("the exit status");
        assert!(status.success(), "{signal} gave {status}");
        assert!(sent.elapsed() < Duration::from_secs(5));
    });
}

pub fn sigterm_exits_0_promptly(binary: &str) {
    exits_0_promptly_on(binary, Signal::SIGTERM);
}

pub fn sigint_exits_0_promptly(binary: &str) {
    exits_0_promptly_on(binary, Signal::SIGINT);
}

pub fn sigterm_lets_the_request_in_flight_finish(binary: &str) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        let endpoint = server.endpoint().clone();
        let in_flight =
            tokio::spawn(async move { get_once(&endpoint, "/ok-await?ms=400", TIMEOUT).await });
        tokio::time::sleep(Duration::from_millis(150)).await;
        server.signal(Signal::SIGTERM).expect("the signal is sent");
        let reply = in_flight
            .await
            .expect("the request task")
            .expect("an answer after SIGTERM");
        assert_eq!(reply.status, 200);
        let status = server.wait().await.expect("the exit status");
        assert!(status.success(), "{status}");
    });
}

/// Writes `raw` bytes to the server on a fresh connection and returns what came back before
/// the server closed the connection or went quiet for 5 s.
pub(crate) fn exchange_raw(endpoint: &Endpoint, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect((endpoint.host.as_str(), endpoint.port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a read timeout");
    // The server may close as soon as it has seen enough: a failed write is an answer too.
    let _ = stream.write_all(raw);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The server answered `raw` with a 4xx or by closing the connection, and still serves.
pub(crate) fn survives_raw(binary: &str, raw: &[u8], what: &str) {
    block_on(async {
        let mut server = start(binary, &[]).await;
        let endpoint = server.endpoint().clone();
        let raw = raw.to_vec();
        let answer = tokio::task::spawn_blocking(move || exchange_raw(&endpoint, &raw))
            .await
            .unwrap();
        assert!(
            answer.is_empty()
                || answer.starts_with("HTTP/1.1 4")
                || answer.starts_with("HTTP/1.0 4"),
            "{what}: answered {answer:?}"
        );
        assert_eq!(
            server.exited(),
            None,
            "{what} stopped the server: {}",
            server.stderr()
        );
        assert_eq!(
            get(server.endpoint(), "/ping").await.status,
            200,
            "after {what}"
        );
    });
}

pub fn malformed_requests_get_an_error_and_serving_goes_on(binary: &str) {
    survives_raw(
        binary,
        b"THIS IS NOT HTTP\r\n\r\n",
        "a malformed request line",
    );
    survives_raw(
        binary,
        b"GET /ping HTTP/1.1\r\nHost localhost\r\n\r\n",
        "a header without a colon",
    );
}

pub fn oversized_headers_get_an_error_and_serving_goes_on(binary: &str) {
    let mut raw = b"GET /ping HTTP/1.1\r\nHost: localhost\r\nX-Big: ".to_vec();
    raw.extend(std::iter::repeat_n(b'a', 1 << 20));
    raw.extend(b"\r\n\r\n");
    survives_raw(binary, &raw, "a 1 MiB header");
}

pub fn binds_loopback_by_default_and_says_so(binary: &str) {
    block_on(async {
        let server = start(binary, &[]).await;
        assert_eq!(server.endpoint().host, "127.0.0.1");
        // The stderr line comes just before the readiness line, and a task of ours reads it:
        // wait for it, up to a few seconds.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let said = server.stderr().to_string();
            if said.contains("bound to 127.0.0.1:") && said.contains("loopback only") {
                break;
            }
            assert!(Instant::now() < deadline, "no loopback line in 5 s: {said}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// Starts the server with a soft limit of 64 open files, opens more connections than that,
/// closes them, and expects the server to serve again: a failed `accept` (EMFILE) must be a
/// pause, not the end.
pub fn keeps_accepting_after_running_out_of_file_descriptors(binary: &str) {
    block_on(async {
        let script = r#"ulimit -Sn 64 && exec "$0" "$@""#;
        let args = ["-c".to_owned(), script.to_owned(), binary.to_owned()];
        let name = Path::new(binary)
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or(binary);
        let mut server = ServerProcess::start(name, Path::new("/bin/sh"), &args)
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        let endpoint = server.endpoint().clone();
        let flood = (0..120)
            .filter_map(|_| TcpStream::connect((endpoint.host.as_str(), endpoint.port)).ok())
            .collect::<Vec<_>>();
        tokio::time::sleep(Duration::from_millis(500)).await;
        drop(flood);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match get_once(&endpoint, "/ping", Duration::from_secs(2)).await {
                Ok(reply) if reply.status == 200 => break,
                outcome => assert!(
                    Instant::now() < deadline,
                    "no /ping 10 s after the flood: {outcome:?}; {}",
                    server.stderr()
                ),
            }
        }
        assert_eq!(server.exited(), None);
    });
}

/// Every variant of the server is in its `--help` with what it changes, and none of another
/// server's is taken; a variant that swaps the driver (io_uring for epoll) is what `/ping`
/// reports.
pub fn variants_are_in_the_help_and_ping_names_the_driver(binary: &str) {
    let server = server_name(binary);
    let help = std::process::Command::new(binary)
        .arg("--help")
        .output()
        .expect("the server runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let variants: Vec<&Variant> = variant::of_server(server).collect();
    for variant in &variants {
        let line = format!("  {}: ", variant.name);
        assert!(
            help.contains(&line),
            "{server} --help lacks {line:?}:\n{help}"
        );
    }
    assert_eq!(help.contains("--variant"), !variants.is_empty(), "{help}");
    let foreign = variant::every().find(|v| !variants.iter().any(|own| own.name == v.name));
    if let Some(foreign) = foreign {
        let refused = std::process::Command::new(binary)
            .args(foreign.args())
            .output()
            .expect("the server runs");
        assert_eq!(refused.status.code(), Some(2), "{server} took {foreign:?}");
    }
    let Some(epoll) = variants.iter().find(|variant| variant.name == "epoll") else {
        return;
    };
    block_on(async {
        for (args, driver) in [(&[][..], "io_uring"), (&epoll.args()[..], "epoll")] {
            let server = start(binary, args).await;
            let pong: Pong = get(server.endpoint(), "/ping")
                .await
                .json()
                .expect("a pong");
            assert!(pong.runtime.contains(driver), "{args:?}: {}", pong.runtime);
        }
    });
}
