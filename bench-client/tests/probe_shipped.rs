//! The probe on servers as they ship, every default kept: Python's standard-library
//! `HTTPServer`, with HTTP/1.0 and with HTTP/1.1 keep-alive, and `ThreadingHTTPServer`, whose
//! listen backlog of 5 drops some of ten connections at once
//! (reference/stubs/stdlib_server.py); and uvicorn serving a plain ASGI app
//! (reference/stubs/uvicorn_server.py). Each route with the verdict it must get, the exit
//! status of `--fail-on serialises`, and the verdicts `--json` prints, parsed. Loopback only;
//! every server on port 0 in a guard that stops it.

mod common;

use std::time::{Duration, Instant};

use bench_client::experiments::probe::subjects::{self, STDLIB_SERVER};
use burst_meter::target::{self, ServerProcess, Target};
use common::{bench_client, skip, temp_dir};
use serde_json::Value;
use tokio::sync::Mutex;

/// One probe at a time: two would share the machine's two cores, and each other's waits.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// The probe's usual time, at its defaults: a route's verdict within it, not a timeout.
const WITHIN: Duration = Duration::from_secs(30);

/// The status of a route that got a verdict `--fail-on` names.
const FAILED_ON: i32 = 3;

/// `target` started on port 0; dropping it stops it.
async fn start(target: Target) -> ServerProcess {
    let Target::Spawn { name, launcher } = target else {
        unreachable!("these servers are spawned");
    };
    (launcher.start(&name, &[]).await).expect("the server starts")
}

/// What one probe did: its exit status, the verdicts it printed on stdout, how long it took.
struct Probed {
    status: Option<i32>,
    verdicts: Vec<Value>,
    took: Duration,
    stderr: String,
}

/// `bench-client probe URL --health /ping --route ROUTE... --json --fail-on serialises`, every
/// other flag at its default. Asserts that stdout holds verdicts.json's verdicts and nothing
/// else.
fn probe(url: &str, routes: &[&str]) -> Probed {
    let out = temp_dir("probe-shipped");
    let mut command = bench_client();
    command.args([
        "probe",
        url,
        "--health",
        "/ping",
        "--json",
        "--fail-on",
        "serialises",
    ]);
    for route in routes {
        command.args(["--route", route]);
    }
    let started = Instant::now();
    let output = command.arg("--out").arg(&*out).output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let printed: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {stderr}"));
    let written = std::fs::read_to_string(out.join("verdicts.json")).unwrap();
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(printed, written, "--json prints verdicts.json");
    let verdicts = printed["verdicts"].as_array().cloned().unwrap_or_default();
    assert_eq!(verdicts.len(), routes.len(), "{stderr}");
    Probed {
        status: output.status.code(),
        verdicts,
        took,
        stderr,
    }
}

/// `verdict`'s verdict and whether it holds the health check.
fn said(verdict: &Value) -> (&str, Option<bool>) {
    (
        verdict["verdict"].as_str().unwrap_or("?"),
        verdict["holds_health"].as_bool(),
    )
}

/// Where the listener dropped connections, the probe names its backlog as the kernel shows
/// it (socketserver's 5, uvicorn's 2048) and says to raise it.
fn names_the_backlog(verdict: &Value, backlog: u64) {
    let network = &verdict["network"];
    if let Some(shown) = network["listener"]["backlog"].as_u64() {
        assert_eq!(shown, backlog, "{network:#}");
    }
    let resent = ["requests_resent", "checks_resent"].map(|k| network[k].as_u64().unwrap());
    let says = verdict["network_says"].as_str();
    if resent != [0, 0] {
        let says = says.expect("a finding of its own");
        assert!(
            says.contains(&format!("backlog of {backlog} dropped")),
            "{says}"
        );
        assert!(says.contains("raise it"), "{says}");
    }
}

#[tokio::test]
async fn the_standard_librarys_servers_get_their_verdicts_as_they_ship() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let cases = [
        (&["http"][..], ("serialises", Some(true)), Some(FAILED_ON)),
        (
            &["http", "--http11"],
            ("serialises", Some(true)),
            Some(FAILED_ON),
        ),
        (&["threading"], ("concurrent", Some(false)), Some(0)),
    ];
    for (args, expected, status) in cases {
        let python = subjects::python3();
        let server = start(subjects::python_script(
            "stdlib",
            python,
            STDLIB_SERVER,
            args,
        ))
        .await;
        let probed = probe(&server.endpoint().to_string(), &["/slow"]);
        let verdict = &probed.verdicts[0];
        assert_eq!(said(verdict), expected, "{args:?}: {verdict:#}");
        assert_eq!(probed.status, status, "{args:?}: {}", probed.stderr);
        assert!(probed.took < WITHIN, "{args:?} took {:?}", probed.took);
        names_the_backlog(verdict, 5);
    }
}

#[tokio::test]
async fn uvicorn_as_it_ships_serialises_a_blocking_sleep_and_not_an_awaited_one() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = target::default_reference_dir();
    if !target::reference_python(&dir).is_file() {
        return skip("uvicorn probe", "no venv for the FastAPI reference app");
    }
    let uvicorn = (subjects::as_shipped(&dir).into_iter())
        .find(|subject| subject.target.label() == "uvicorn")
        .expect("uvicorn is among the servers as they ship");
    let server = start(uvicorn.target).await;
    let probed = probe(&server.endpoint().to_string(), &["/slow", "/slow-await"]);
    let verdicts: Vec<_> = probed.verdicts.iter().map(said).collect();
    assert_eq!(
        verdicts,
        [("serialises", Some(true)), ("concurrent", Some(false))],
        "{}",
        probed.stderr
    );
    assert_eq!(probed.status, Some(FAILED_ON), "/slow serialises");
    for verdict in &probed.verdicts {
        names_the_backlog(verdict, 2048);
    }
}
