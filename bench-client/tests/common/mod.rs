//! Helpers shared by the bench client's integration tests that run the real binaries.
#![allow(dead_code)] // each test binary uses its own subset

use std::convert::Infallible;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use bench_client::experiments::comparison::Report;
use burst_meter::http::Endpoint;
use burst_meter::target;
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The bench-client binary under test.
pub fn bench_client() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-client"))
}

/// A fresh, empty folder for one test's output, removed with what is in it when the value
/// is dropped, at the end of the test (a failing test's too: a panic drops it as well).
pub fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("bench-client-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A folder that goes when this does; it derefs to its path.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = PathBuf;

    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A demo server binary, beside the test binary; the README's `cargo test --workspace` has
/// built it.
pub fn real_server(name: &str) -> PathBuf {
    let binary = target::default_bin_dir().join(name);
    assert!(
        binary.is_file(),
        "no {}: build the servers first (cargo build --workspace)",
        binary.display()
    );
    binary
}

/// The `results.json` a run wrote into `dir`.
pub fn read_report(dir: &Path) -> Report {
    let json = std::fs::read_to_string(dir.join("results.json")).expect("results.json is written");
    serde_json::from_str(&json).expect("results.json parses as a report")
}

/// Says that `test` cannot run because of `missing`: it fails unless `ALLOW_SKIPS=1`, and is
/// then counted as skipped by `scripts/test.sh` (the convention of `demo_testkit::skip`,
/// which these tests cannot depend on: the test kit depends on the bench client).
pub fn skip(test: &str, missing: &str) {
    use std::io::Write as _;
    let allowed = std::env::var("ALLOW_SKIPS").is_ok_and(|value| value == "1");
    assert!(
        allowed,
        "{test} cannot run: {missing}. Set ALLOW_SKIPS=1 to run the other tests without it"
    );
    eprintln!("{test}: skipped, {missing}");
    if let Some(log) = std::env::var_os("SKIPPED_TESTS_LOG") {
        let mut file = (std::fs::OpenOptions::new().create(true).append(true))
            .open(log)
            .expect("the skipped tests' log");
        file.write_all(format!("{missing}\t{test}\n").as_bytes())
            .expect("the skipped tests' log");
    }
}

/// A bench client running in the background, stopped when the value is dropped (a failed
/// assertion's too): SIGTERM, which makes it stop its servers, then SIGKILL if it is still
/// there 5 s later.
#[derive(Debug)]
pub struct Running(pub Child);

impl std::ops::Deref for Running {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !matches!(self.0.try_wait(), Ok(None)) {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.0.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A stub server on loopback, for the tests that need one of their own rather than a demo
/// server; it stops with the test's runtime. Each connection it accepts goes to `accept`,
/// awaited before the next accept (so a slow `accept` is a slow accept loop), which serves it
/// with [`answer_each`] or not.
pub async fn loopback_stub<A, F>(mut accept: A) -> Endpoint
where
    A: FnMut(TcpStream) -> F + Send + 'static,
    F: Future<Output = ()> + Send,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            accept(stream).await;
        }
    });
    Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap()
}

/// Serves HTTP/1 on `stream`, in a task of its own: each request is answered `{}` once the
/// future `before_answer` makes for it is done.
pub fn answer_each<B, F>(stream: TcpStream, before_answer: B)
where
    B: Fn() -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        let service = service_fn(move |_: hyper::Request<hyper::body::Incoming>| {
            let waited = before_answer();
            async move {
                waited.await;
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"{}"))))
            }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .await;
    });
}
