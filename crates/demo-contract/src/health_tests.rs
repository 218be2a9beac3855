//! `--health-port` on real servers (demo-axum, demo-actix and demo-hyper-smol, started as
//! processes on port 0): while `/bad` blocks the only reactor thread, `GET /health` answers at
//! once, 503 naming the route; while `/ok-await` sleeps, and at rest, 200.

use std::io::{BufRead, BufReader, Lines};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The block (and the awaited sleep) each check asks for: three times the stall threshold.
const BLOCK: Duration = Duration::from_millis(300);

/// A server process, killed when dropped, so that a failing check leaves nothing behind.
struct Server {
    child: Child,
    base: String,
    health: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `target/<profile>/<name>`: `cargo test --workspace` builds every server before it runs the
/// tests.
fn binary(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's path");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    profile.join(name)
}

/// Builds `name` into [`binary`]'s place. Only when a run of this crate's tests alone found no
/// server, or one built before `--health-port`: a server built alone gets a second set of
/// dependencies, with other features than the workspace's.
fn build(name: &str) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", name]);
    if binary(name)
        .parent()
        .is_some_and(|dir| dir.ends_with("release"))
    {
        build.arg("--release");
    }
    assert!(build.status().expect("cargo build").success(), "{name}");
}

/// The line after `prefix` on the server's stdout, or `None` if it printed another (or none).
fn next_line(lines: &mut Lines<BufReader<ChildStdout>>, prefix: &str) -> Option<String> {
    let line = lines.next()?.ok()?;
    line.strip_prefix(prefix).map(str::to_owned)
}

/// Starts the server on port 0 with `--health-port 0`; `None` if it printed no readiness and
/// health lines (it exited: missing, or too old to know the flag).
fn try_start(name: &str) -> Option<Server> {
    let mut child = Command::new(binary(name))
        .args([
            "--port",
            "0",
            "--health-port",
            "0",
            "--health-period-ms",
            "1000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut lines = BufReader::new(child.stdout.take()?).lines();
    let base = next_line(&mut lines, "listening on ");
    let health = next_line(&mut lines, "health on ");
    let server = Server {
        child,
        base: base.unwrap_or_default(),
        health: health.unwrap_or_default(),
    };
    (!server.base.is_empty() && !server.health.is_empty()).then_some(server)
}

fn start(name: &str) -> Server {
    try_start(name).unwrap_or_else(|| {
        build(name);
        try_start(name).unwrap_or_else(|| panic!("{name} printed no readiness and health lines"))
    })
}

/// One GET: its status, its body and how long the answer took.
fn get(url: &str) -> (u16, String, Duration) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let sent = Instant::now();
    let mut reply = agent
        .get(url)
        .call()
        .unwrap_or_else(|error| panic!("{url}: {error}"));
    let body = reply.body_mut().read_to_string().expect("a body");
    (reply.status().as_u16(), body, sent.elapsed())
}

/// The health answer half-way through a request of `route`, and how long it took.
fn health_during(server: &Server, route: &str) -> (u16, String, Duration) {
    let url = format!("{}{route}?ms={}", server.base, BLOCK.as_millis());
    let request = thread::spawn(move || get(&url).0);
    thread::sleep(BLOCK / 2);
    let health = get(&server.health);
    assert_eq!(request.join().expect("the request"), 200, "{route}");
    health
}

fn tells_the_truth(name: &str) {
    let server = start(name);
    assert!(server.health.ends_with("/health"), "{}", server.health);
    let at_rest = get(&server.health);
    let ok = (200, r#"{"status":"ok","limit_ms":100}"#.to_owned());
    assert_eq!((at_rest.0, at_rest.1), ok, "{name} at rest");

    let (status, body, took) = health_during(&server, "/ok-await");
    assert_eq!((status, body), ok.clone(), "{name} during /ok-await");
    assert!(
        took < BLOCK / 3,
        "{name}: answered in {took:?} during /ok-await"
    );

    let (status, body, took) = health_during(&server, "/bad");
    assert_eq!(status, 503, "{name} during /bad: {body}");
    assert!(body.contains(r#""route":"GET /bad""#), "{name}: {body}");
    assert!(took < BLOCK / 3, "{name}: answered in {took:?} during /bad");

    // Within the period (1 s) after it ended, the stall still fails the check.
    let (status, body, _) = get(&server.health);
    assert_eq!(status, 503, "{name} just after /bad: {body}");
    assert!(body.contains(r#""ended_ms_ago":"#), "{name}: {body}");
}

#[test]
fn the_health_check_of_demo_axum_tells_the_truth() {
    tells_the_truth("demo-axum");
}

#[test]
fn the_health_check_of_demo_actix_tells_the_truth() {
    tells_the_truth("demo-actix");
}

/// On smol the executor thread that `/bad` holds is not the `async-io` reactor's: the health
/// check names the route all the same.
#[test]
fn the_health_check_of_demo_hyper_smol_tells_the_truth() {
    tells_the_truth("demo-hyper-smol");
}
