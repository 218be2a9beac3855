//! An example's process, as the examples' tests and the outside crate's test run it: started
//! on port 0, its stdout and stderr read line by line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// The example's process, killed when dropped, so that a failing check leaves nothing behind.
pub struct Example {
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

/// Starts the example binary at `path`, on port 0 for each port it takes: the axum example
/// takes three (the app's and its two health checks'), so that runs side by side never meet.
pub fn start(path: &Path) -> Example {
    start_with(path, &["0", "0", "0"])
}

/// Starts the example binary at `path` with `args`.
pub fn start_with(path: &Path, args: &[&str]) -> Example {
    let name = path.display();
    let mut child = Command::new(path)
        .args(args)
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
    pub fn printed(&self, prefix: &str) -> String {
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
    pub fn stderr_within(&self, wait: Duration) -> Vec<String> {
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

/// The status of a GET of `url`; 0 if none came.
pub fn get(url: &str) -> u16 {
    ureq::get(url)
        .call()
        .map_or(0, |reply| reply.status().as_u16())
}

/// How many of an example's `stderr` lines report a slow poll of `route` that returned.
pub fn held(stderr: &[String], route: &str) -> usize {
    let prefix = format!("{route} held reactor thread ");
    (stderr.iter())
        .filter(|line| line.starts_with(&prefix))
        .count()
}

/// Checks that the example at `path` reports its `/bad` and not its `/ok`.
pub fn reports_the_blocking_route_only(path: &Path) {
    let name = path.display();
    let example = start(path);
    let base = example.printed("listening on ");
    assert_eq!(get(&format!("{base}/ok")), 200, "{name}: /ok");
    assert_eq!(get(&format!("{base}/bad")), 200, "{name}: /bad");
    let stderr = example.stderr_within(Duration::from_secs(1));
    assert_eq!(held(&stderr, "/bad"), 1, "{name}: {stderr:#?}");
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
