//! Builds (cargo builds every example before the tests) and runs each example: started on
//! port 0, it serves one `/bad` and must report the slow poll on stderr under `/bad`,
//! and one `/ok`, an awaited sleep as long, which it must not report.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// The example's process, killed when dropped, so that a failing check leaves nothing behind.
struct Example {
    child: Child,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `target/<profile>/examples/<name>` (this test runs from `target/<profile>/deps/`). A plain
/// `cargo test` builds every example before it runs the tests; a filtered run (`--test
/// examples`) builds none, and then it is built here (not always: with the features of this
/// one package, that could build a second set of dependencies).
fn example_path(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's path");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let path = profile.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "reactor-watch", "--example", name]);
        if profile.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo build --example");
        assert!(status.success(), "cargo build --example {name}: {status}");
    }
    path
}

/// Each line of `reader`, sent on the returned channel from a thread of its own.
fn lines(reader: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    receive
}

fn start(name: &str) -> Example {
    let mut child = Command::new(example_path(name))
        .arg("0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("example {name}: {error}"));
    let stdout = lines(child.stdout.take().expect("piped stdout"));
    let stderr = lines(child.stderr.take().expect("piped stderr"));
    Example {
        child,
        stdout,
        stderr,
    }
}

impl Example {
    /// The next stdout line that starts with `prefix`, without it.
    fn printed(&self, prefix: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.stdout.recv_timeout(left).expect("a line on stdout");
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
    }

    /// Every stderr line printed within `wait`.
    fn stderr_within(&self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut lines = Vec::new();
        while let Ok(line) = self
            .stderr
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            lines.push(line);
        }
        lines
    }
}

fn get(url: &str) -> u16 {
    ureq::get(url)
        .call()
        .map_or(0, |reply| reply.status().as_u16())
}

fn reports_the_blocking_route_only(name: &str) {
    let example = start(name);
    let base = example.printed("listening on ");
    assert_eq!(get(&format!("{base}/ok")), 200, "{name}: /ok");
    assert_eq!(get(&format!("{base}/bad")), 200, "{name}: /bad");
    let stderr = example.stderr_within(Duration::from_secs(1));
    let held = |route: &str| {
        let prefix = format!("{route} held reactor thread ");
        stderr
            .iter()
            .filter(|line| line.starts_with(&prefix))
            .count()
    };
    assert_eq!(held("/bad"), 1, "{name}: {stderr:#?}");
    assert_eq!(
        stderr.len(),
        2,
        "{name}: one still-running and one held line: {stderr:#?}"
    );
    assert!(
        stderr
            .iter()
            .any(|line| line.ends_with(" in /bad (still running)")),
        "{name}: {stderr:#?}"
    );
}

#[test]
fn the_axum_example_reports_its_blocking_route() {
    reports_the_blocking_route_only("axum");
}

#[test]
fn the_actix_example_reports_its_blocking_route() {
    reports_the_blocking_route_only("actix");
}

#[test]
fn the_smol_example_reports_its_blocking_route() {
    reports_the_blocking_route_only("smol");
}

/// The axum example's health check: 503 naming `/bad` while it blocks and for its period (1 s)
/// after, 200 at rest and once the period has passed.
#[test]
fn the_axum_example_health_check_names_the_blocking_route() {
    let example = start("axum");
    let health = example.printed("health on ");
    let base = example.printed("listening on ");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let probe = |agent: &ureq::Agent| {
        let mut reply = agent.get(&health).call().expect("a health answer");
        let body = reply.body_mut().read_to_string().expect("a body");
        (reply.status().as_u16(), body)
    };
    assert_eq!(probe(&agent).0, 200, "at rest");
    let bad = std::thread::spawn(move || get(&format!("{base}/bad")));
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = probe(&agent);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains(r#""route":"/bad""#), "{body}");
    assert_eq!(bad.join().expect("the /bad request"), 200);
    let (status, body) = probe(&agent);
    assert_eq!(status, 503, "just after /bad: {body}");
    assert!(body.contains(r#""ended_ms_ago":"#), "{body}");
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(probe(&agent).0, 200, "a period after /bad");
}
