//! Faults: whatever ends a run, no server is left behind; a target that fails is reported by
//! name and the run goes on; results are never half written. Loopback only, every wait bounded.

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use burst_meter::target::{self, ServerProcess, TargetError};
use common::{Running, bench_client, read_report, real_server, temp_dir};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The live children of `pid`, from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace()
            .collect();
        if fields.get(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(pid) && fields[0] != "Z"
        {
            found.push(child);
        }
    }
    found
}

/// Whether `pid` is still a running process (a zombie, waiting to be reaped, is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Reads the child's stderr until a line contains `needle` (within 20 s); returns the lines.
fn wait_for_line(child: &mut Child, needle: &str) -> Vec<String> {
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tell, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Keep draining after the caller has stopped listening: a closed pipe would make the
        // client's next eprintln! panic.
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tell.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return seen;
            }
        }
    }
    panic!("no line with {needle:?} within 20 s; saw {seen:?}");
}

/// Starts `bench-client ARGS --out OUT` in the background and waits until its first server
/// is running `/bad` (the client's progress line on stderr).
fn start_mid_run(args: &[&str], out: &Path) -> Running {
    let mut client = Running(
        bench_client()
            .args(args)
            .arg("--out")
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for_line(&mut client, "demo-axum /bad");
    client
}

fn wait_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("bench-client still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to a bench-client in the middle of a case and checks that it stops its
/// server, exits non-zero and leaves the previous results as they were.
fn interrupting_stops_every_server(signal: Signal) {
    let out = temp_dir(&format!("{signal}"));
    std::fs::write(out.join("RESULTS.md"), "the previous run\n").unwrap();
    let mut client = start_mid_run(
        &[
            "--servers",
            "demo-axum,demo-hyper-smol",
            "--sleep-ms",
            "1000",
        ],
        &out,
    );
    let servers = children(client.id());
    assert_eq!(servers.len(), 1, "one server runs at a time: {servers:?}");
    kill(Pid::from_raw(client.id() as i32), signal).unwrap();
    let status = wait_within(&mut client, Duration::from_secs(10));
    assert!(!status.success(), "{signal} gave {status}");
    for server in servers {
        assert!(!alive(server), "server {server} survived {signal}");
    }
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["RESULTS.md"], "nothing new, nothing half-written");
    assert_eq!(
        std::fs::read_to_string(out.join("RESULTS.md")).unwrap(),
        "the previous run\n"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn sigint_mid_run_stops_every_server_and_exits_non_zero() {
    interrupting_stops_every_server(Signal::SIGINT);
}

#[test]
fn sigterm_mid_run_stops_every_server_and_exits_non_zero() {
    interrupting_stops_every_server(Signal::SIGTERM);
}

#[test]
fn a_panic_still_stops_the_server() {
    let binary = real_server("demo-hyper-tokio");
    let (tell, pid) = std::sync::mpsc::channel();
    let panicked = std::thread::spawn(move || {
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let server = ServerProcess::start("demo-hyper-tokio", &binary, &[])
                .await
                .unwrap();
            tell.send(server.pid().unwrap()).unwrap();
            panic!("a bug in the bench client");
        })
    })
    .join();
    assert!(panicked.is_err());
    let pid = pid.recv().unwrap();
    assert!(!alive(pid), "the server outlived the panic");
}

#[test]
fn a_server_that_dies_mid_case_is_reported_and_the_run_goes_on() {
    let out = temp_dir("dies");
    let args = [
        "--servers",
        "demo-axum,demo-hyper-tokio",
        "--routes",
        "/bad,/ok-await",
        "-n",
        "3",
        "--sleep-ms",
        "400",
    ];
    let mut client = start_mid_run(&args, &out);
    std::thread::sleep(Duration::from_millis(200));
    for server in children(client.id()) {
        kill(Pid::from_raw(server as i32), Signal::SIGKILL).unwrap();
    }
    let status = wait_within(&mut client, Duration::from_secs(30));
    assert_eq!(status.code(), Some(1), "a failed target makes the run fail");
    let report = read_report(&out);
    let failure = report
        .failures
        .iter()
        .find(|f| f.target == "demo-axum")
        .expect("demo-axum's failure");
    assert!(failure.reason.contains("died"), "{}", failure.reason);
    let measured: Vec<(&str, &str)> = report
        .cases
        .iter()
        .map(|c| (c.target.as_str(), c.route.as_str()))
        .collect();
    assert_eq!(
        measured,
        [
            ("demo-hyper-tokio", "/bad"),
            ("demo-hyper-tokio", "/ok-await")
        ]
    );
    let markdown = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    assert!(
        markdown.contains("| demo-axum | ? (1) | /bad | failed"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| demo-axum | ? (1) | /ok-await | failed"),
        "{markdown}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn servers_that_fail_to_start_are_named_with_the_reason_and_the_run_goes_on() {
    let bin = temp_dir("bin");
    std::os::unix::fs::symlink(real_server("demo-axum"), bin.join("demo-axum")).unwrap();
    // demo-actix is missing.
    script(
        &bin,
        "demo-hyper-tokio",
        "echo 'error: Address already in use (os error 98)' >&2; exit 1",
    );
    script(&bin, "demo-hyper-async-std", "echo 'hello'; exec sleep 30");
    let out = temp_dir("start");
    let run = bench_client()
        .args([
            "--servers",
            "demo-axum,demo-actix,demo-hyper-tokio,demo-hyper-async-std",
        ])
        .args([
            "--routes",
            "/ok-await",
            "-n",
            "2",
            "--sleep-ms",
            "20",
            "--bin-dir",
        ])
        .arg(&bin)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report = read_report(&out);
    assert_eq!(report.cases.len(), 1, "demo-axum still ran");
    assert_eq!(report.cases[0].target, "demo-axum");
    for (target, says) in [
        ("demo-actix", "no binary at"),
        ("demo-hyper-tokio", "Address already in use"),
        ("demo-hyper-async-std", "readiness line \"hello\""),
    ] {
        let failure = report
            .failures
            .iter()
            .find(|f| f.target == target)
            .unwrap_or_else(|| panic!("{target}"));
        assert!(
            failure.reason.contains(says),
            "{target}: {}",
            failure.reason
        );
        assert!(stderr.contains(&format!("FAILED {target}")), "{stderr}");
    }
    std::fs::remove_dir_all(&bin).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

#[tokio::test]
async fn a_server_without_a_readiness_line_is_given_up_on() {
    let bin = temp_dir("silent");
    script(&bin, "silent", "exec sleep 30");
    let started = Instant::now();
    let error = ServerProcess::start_within(
        "silent",
        &bin.join("silent"),
        &[],
        Duration::from_millis(300),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, TargetError::NotReady { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("silent: printed no readiness line"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    std::fs::remove_dir_all(&bin).unwrap();
}

#[test]
fn an_unreachable_url_is_named_within_seconds() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = temp_dir("url");
    let started = Instant::now();
    let run = bench_client()
        .args([
            "--url",
            &format!("gone=http://127.0.0.1:{port}"),
            "-n",
            "1",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("FAILED gone") && stderr.contains(&format!("http://127.0.0.1:{port}/ping")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_flags_are_usage_errors() {
    for (args, says) in [
        (&["--concurrency", "0"][..], "--concurrency"),
        (&["--concurrency", "banana"], "banana"),
        (&["--servers", "demo-nowhere"], "demo-hyper-smol"),
        (&["--url", "nolabel"], "LABEL=URL"),
    ] {
        let run = bench_client().args(args).output().unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// 10,000 concurrent `/ok-await` requests on every server, with 0 errors, started from the
/// usual soft limit of 1024 open files: the bench client must raise it (for itself and the
/// servers it spawns), and the servers' listen backlog must hold the burst. A stack whose
/// framework binds with a backlog of its own (its description's `listen_backlog`) may see
/// connects dropped and resent past the request timeout: it is held to
/// reporting every request, answered or failed.
#[test]
fn ten_thousand_concurrent_awaits_complete_on_every_server() {
    let out = temp_dir("10k");
    let command = format!(
        r#"ulimit -Sn 1024 && exec "{}" --servers {} --routes /ok-await -n 10000 --sleep-ms 500 --out "{}""#,
        env!("CARGO_BIN_EXE_bench-client"),
        stacks::names().join(","),
        out.display()
    );
    let run = Command::new("/bin/sh")
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = read_report(&out);
    assert_eq!(report.cases.len(), stacks::names().len());
    for case in &report.cases {
        // ntex refuses a request whose head it has not read within its `headers_read_rate`
        // timeout (1 s) with a 408, which a busy machine trips at this N: an answer, and the
        // only error it may give.
        let refused = match case.target.as_str() {
            "demo-ntex" => refused_with_408(case),
            _ => 0,
        };
        let own_backlog = stacks::named(&case.target).and_then(|stack| stack.listen_backlog);
        if own_backlog.is_some() {
            assert_eq!(
                case.ok + case.err,
                10_000,
                "{}: {:?}",
                case.target,
                case.errors
            );
            continue;
        }
        assert_eq!(
            (case.ok + refused, case.err - refused),
            (10_000, 0),
            "{}: {:?}",
            case.target,
            case.errors
        );
        assert!(case.ok > 0, "{}: nothing answered 200", case.target);
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// The requests of `case` refused with status 408.
fn refused_with_408(case: &burst_meter::case::Case) -> usize {
    (case.errors.iter())
        .filter(|error| error.reason == "status 408")
        .map(|error| error.count)
        .sum()
}

/// A server that ignores SIGTERM is killed once the grace period is over.
#[tokio::test]
async fn a_server_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let bin = temp_dir("stubborn");
    // `trap '' TERM` is inherited across exec: the sleep ignores SIGTERM too.
    script(
        &bin,
        "stubborn",
        "trap '' TERM; echo 'listening on http://127.0.0.1:9'; exec sleep 30",
    );
    let server = ServerProcess::start("stubborn", &bin.join("stubborn"), &[])
        .await
        .expect("it prints a readiness line");
    let pid = server.pid().expect("a running process");
    let dropped = Instant::now();
    drop(server);
    let took = dropped.elapsed();
    // SIGKILL is sent as the drop ends; give the kernel a moment to carry it out.
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        !alive(pid)
    });
    assert!(gone, "still running after the drop");
    assert!(
        took >= target::DROP_GRACE && took < target::DROP_GRACE + Duration::from_secs(2),
        "{took:?}"
    );
    std::fs::remove_dir_all(&bin).unwrap();
}
