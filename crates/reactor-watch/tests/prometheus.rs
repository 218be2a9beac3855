//! reactor-watch's metrics as a real Prometheus server scrapes them: the metrics example
//! (examples/metrics.rs, built here with the `metrics` feature, so that no other crate is) and a
//! `prometheus` of this test's own, on a free port of 127.0.0.1, with its own config (a scrape
//! every second of the example's `/metrics`) and data folder, both stopped when the test ends.
//! A few `/bad` and `/ok` at once, then Prometheus's HTTP API must show the stalls the example
//! reported for `/bad`, none for `/ok`, and the catching-it page's query must name `/bad` alone.
//!
//! Without `prometheus` on PATH this fails (scripts/install-prometheus.sh installs Debian's
//! package; the README's test command runs it), or with `ALLOW_SKIPS=1` is counted as skipped.

mod common;

use std::io::Write as _;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::example::{held, start_with};

const TEST: &str = "prometheus::a_real_prometheus_sees_the_stalls_of_the_blocking_route_only";
/// What this test misses without Prometheus.
const NO_PROMETHEUS: &str =
    "no `prometheus` on PATH (scripts/install-prometheus.sh installs Debian's package)";
/// The catching-it page's query: the routes that stalled in the last 5 minutes. The second
/// half finds a route whose first stall made its series, which `increase` cannot see.
const STALLED_ROUTES: &str = "sum by (route) (increase(reactor_watch_slow_polls_total[5m]) > 0 \
     or (reactor_watch_slow_polls_total > 0 unless reactor_watch_slow_polls_total offset 5m))";
/// How many of each route are sent at once.
const BURST: usize = 3;
/// The longest this test waits for anything: a start, a scrape, an answer.
const PATIENCE: Duration = Duration::from_secs(60);

/// Says that the test cannot run because of `missing`: it fails unless `ALLOW_SKIPS=1`, and
/// is then counted as skipped by `scripts/test.sh` (the convention of `demo_testkit::skip`,
/// which this crate, meant for other people's servers, does not depend on).
fn skip(missing: &str) {
    let allowed = std::env::var("ALLOW_SKIPS").is_ok_and(|value| value == "1");
    assert!(
        allowed,
        "{TEST} cannot run: {missing}. Set ALLOW_SKIPS=1 to run the other tests without it \
         (scripts/test.sh then counts this one as skipped)"
    );
    eprintln!("{TEST}: skipped, {missing}");
    if let Some(log) = std::env::var_os("SKIPPED_TESTS_LOG") {
        let mut file = (std::fs::OpenOptions::new().create(true).append(true))
            .open(log)
            .expect("the skipped tests' log");
        file.write_all(format!("{missing}\t{TEST}\n").as_bytes())
            .expect("the skipped tests' log");
    }
}

/// `prometheus` on PATH, if there is one.
fn prometheus_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("prometheus"))
        .find(|binary| binary.is_file())
}

/// The metrics example, built now with the feature it needs (a no-op when it is up to date), in
/// the target folder and profile this test was built in.
fn metrics_example() -> PathBuf {
    let test = std::env::current_exe().expect("the test's path");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let target = profile.parent().expect("the target folder");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args([
        "build",
        "--locked",
        "-p",
        "reactor-watch",
        "--features",
        "metrics",
    ]);
    build
        .args(["--example", "metrics", "--target-dir"])
        .arg(target);
    if profile.ends_with("release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo build --example metrics");
    assert!(status.success(), "cargo build --example metrics: {status}");
    profile.join("examples").join("metrics")
}

/// Every request here: to 127.0.0.1 only, each bounded in time, any status an answer.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// The status of a GET of `url`; 0 if none came.
fn get(url: &str) -> u16 {
    (agent().get(url).call()).map_or(0, |reply| reply.status().as_u16())
}

/// A folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// This test's Prometheus, killed when dropped, so that a failing check leaves nothing behind.
struct Prometheus {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    url: String,
    log: PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 that was free a moment ago: Prometheus binds the address it is given.
fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Starts `binary` in `dir`, scraping `target` (`host:port`) every second; returns once it
/// answers ready.
fn start_prometheus(binary: &Path, dir: &Path, target: &str) -> Prometheus {
    let config = dir.join("prometheus.yml");
    let yaml = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         scrape_configs:\n  - job_name: reactor-watch\n    static_configs:\n      \
         - targets: ['{target}']\n"
    );
    std::fs::write(&config, yaml).expect("prometheus.yml");
    let log = dir.join("prometheus.log");
    let output = std::fs::File::create(&log).expect("prometheus.log");
    let port = free_port();
    let child = Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(output.try_clone().expect("the log"))
        .stderr(output)
        .spawn()
        .unwrap_or_else(|error| panic!("{}: {error}", binary.display()));
    let mut prometheus = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        log,
    };
    let ready = format!("{}/-/ready", prometheus.url);
    let deadline = Instant::now() + PATIENCE;
    while get(&ready) != 200 {
        let exited = prometheus.child.try_wait().expect("its status");
        assert!(
            exited.is_none() && Instant::now() < deadline,
            "prometheus not ready ({exited:?}):\n{}",
            prometheus.log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    prometheus
}

impl Prometheus {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The instant vector `promql` evaluates to now: each series' `route` label ("" if it has
    /// none) and value, sorted by route.
    fn query(&self, promql: &str) -> Vec<(String, f64)> {
        let mut reply = (agent().get(format!("{}/api/v1/query", self.url)))
            .query("query", promql)
            .call()
            .unwrap_or_else(|error| panic!("{promql}: {error}\n{}", self.log_text()));
        let body = reply.body_mut().read_to_string().expect("a body");
        let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(json["status"], "success", "{promql}: {body}");
        let result = json["data"]["result"].as_array().expect("a vector");
        let mut series: Vec<(String, f64)> = (result.iter())
            .map(|series| {
                let route = series["metric"]["route"].as_str().unwrap_or_default();
                let value = series["value"][1].as_str().expect("a value");
                (route.to_owned(), value.parse().expect("a number"))
            })
            .collect();
        series.sort_by(|a, b| a.0.cmp(&b.0));
        println!("prometheus: {promql} = {series:?}");
        series
    }

    /// Queries `promql` until `done` holds for its answer, within [`PATIENCE`].
    fn wait_for(&self, promql: &str, done: impl Fn(&[(String, f64)]) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !done(&self.query(promql)) {
            assert!(Instant::now() < deadline, "gave up waiting on {promql}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// GETs each of `paths` from `base`, all at once; every answer must be 200.
fn burst(base: &str, paths: &[&str]) {
    let requests: Vec<_> = (paths.iter())
        .map(|path| {
            let url = format!("{base}{path}");
            std::thread::spawn(move || (get(&url), url))
        })
        .collect();
    for request in requests {
        let (status, url) = request.join().expect("a request thread");
        assert_eq!(status, 200, "{url}");
    }
}

/// The value of `route` in `series`, which must have at most one.
fn of(series: &[(String, f64)], route: &str) -> Option<f64> {
    (series.iter()).find_map(|(name, value)| (name == route).then_some(*value))
}

#[test]
fn a_real_prometheus_sees_the_stalls_of_the_blocking_route_only() {
    let Some(binary) = prometheus_binary() else {
        return skip(NO_PROMETHEUS);
    };
    let example = start_with(&metrics_example(), &["--port", "0", "--metrics-port", "0"]);
    let metrics = example.printed("metrics on http://");
    let target = metrics.trim_end_matches("/metrics");
    let base = example.printed("listening on ");
    let scratch = Scratch(
        std::env::temp_dir().join(format!("reactor-watch-prometheus-{}", std::process::id())),
    );
    std::fs::create_dir_all(&scratch.0).expect("the scratch folder");
    let prometheus = start_prometheus(&binary, &scratch.0, target);
    prometheus.wait_for(r#"up{job="reactor-watch"}"#, |up| of(up, "") == Some(1.0));

    let mut paths = vec!["/bad"; BURST];
    paths.extend(["/ok"; BURST]);
    burst(&base, &paths);
    // What the example reported itself: one line per slow poll that returned.
    let stderr = example.stderr_within(Duration::from_secs(1));
    assert_eq!(held(&stderr, "/ok"), 0, "{stderr:#?}");
    let bad = held(&stderr, "/bad") as f64;
    assert!(bad >= 1.0, "the example reported no stall: {stderr:#?}");
    println!("example: {bad} slow polls of /bad reported on stderr, 0 of /ok");

    prometheus.wait_for("reactor_watch_slow_polls_total", |total| {
        of(total, "/bad") == Some(bad)
    });
    let total = prometheus.query("reactor_watch_slow_polls_total");
    assert!(matches!(of(&total, "/ok"), None | Some(0.0)), "{total:?}");
    let count = prometheus.query("reactor_watch_slow_poll_duration_seconds_count");
    assert_eq!(
        count,
        [("/bad".to_owned(), bad)],
        "one duration per slow poll"
    );
    // A slow poll is longer than the example's threshold, 100 ms: none is in the 0.1 s bucket.
    let fast = prometheus.query(r#"reactor_watch_slow_poll_duration_seconds_bucket{le="0.1"}"#);
    assert_eq!(fast, [("/bad".to_owned(), 0.0)]);
    let stalled = prometheus.query("reactor_watch_stalled_threads");
    assert!(
        stalled.iter().all(|(_, threads)| *threads == 0.0),
        "{stalled:?}"
    );
    // Its value is `increase`'s extrapolation over the samples it has, not a count: only the
    // routes it names are checked.
    let routes = prometheus.query(STALLED_ROUTES);
    let routes: Vec<&str> = routes.iter().map(|(route, _)| route.as_str()).collect();
    assert_eq!(routes, ["/bad"], "the page's query");
}
