//! The contract checks that apply to the FastAPI reference app, on both of its loops: the
//! same functions the Rust servers pass, against `reference/fastapi/bin/fastapi-*`.
//!
//! They need the app's virtual environment, which `reference/fastapi/setup.sh` makes (the
//! README's test command, `scripts/test.sh`, runs it). Where it found no python3, it sets
//! `REFERENCE_APP=missing`, and these checks fail, or with `ALLOW_SKIPS=1` are counted as
//! skipped in its closing summary. Left out: `--threads` (uvicorn's workers are processes,
//! and the app refuses anything but one), malformed requests and running out of file
//! descriptors (the Python servers' own business, not the lesson), and the stall detector's
//! exact body and log lines (reactor-watch's; asyncio's debug mode writes its own).
//!
//! Two CPU checks do not hold for Python, and that is a lesson of their own, not a defect:
//! - `ok_cpu_blocking_leaves_the_reactor_free`: a `def` handler's thread computes holding the
//!   GIL, which the loop thread needs to answer anything, so a `/ping` during 4 × 50 ms of
//!   threadpool work took 160 to 260 ms: offloading CPU work to a thread frees nothing.
//! - `ok_cpu_yield_shares_the_reactor`: each turn of the loop runs one ~1 ms slice of every
//!   sliced request, and a `/ping` takes asyncio (with h11) about six turns, so it waited
//!   25 to 55 ms beside 4 of them, not under the check's 25 ms (uvloop: about 11 ms).
//!
//! For the same reason the hidden blockers' query and file read are checked with
//! `hidden_db_query_on_python` and `hidden_file_read_on_python`, which do not require the
//! offloaded routes to leave the loop without slow callbacks: beside four `aiosqlite` queries
//! asyncio's debug mode caught a 116 ms callback booked to `GET /ping`, beside four `def`
//! reads of 144 MiB a 67 ms one booked to `GET /ok-file-blocking` (a 40 ms threshold). The
//! blocking routes' checks are the same as on the Rust servers.

use std::path::PathBuf;

use burst_meter::target::{self, references};

/// What these checks miss where `scripts/test.sh` found no python3 with venv.
const NO_PYTHON: &str = "no python3 with venv for the FastAPI reference app";

/// Whether the reference app cannot be run here at all (no python3), as `scripts/test.sh`
/// found and said with `REFERENCE_APP=missing`: then the check fails, or is counted as
/// skipped with `ALLOW_SKIPS=1` ([`demo_testkit::skip`]).
fn skipped(check: &str) -> bool {
    let missing = std::env::var_os("REFERENCE_APP").is_some_and(|value| value == "missing");
    if missing {
        demo_testkit::skip(check, NO_PYTHON);
    }
    missing
}

/// The script that starts reference target `name`, after checking that its venv exists.
fn reference(name: &str) -> String {
    let dir = target::default_reference_dir();
    let python = target::reference_python(&dir);
    assert!(
        python.is_file(),
        "no {}: run reference/fastapi/setup.sh first (the README's test command does)",
        python.display()
    );
    let script: PathBuf = dir.join("bin").join(name);
    script.display().to_string()
}

macro_rules! reference_checks {
    ($($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                if skipped(stringify!($check)) {
                    return;
                }
                for &name in references() {
                    demo_testkit::$check(&reference(name));
                }
            }
        )*
    };
}

reference_checks!(
    ping_describes_the_server,
    bad_serialises_on_the_reactor,
    ok_blocking_is_concurrent_off_the_reactor,
    ok_await_is_concurrent_on_the_reactor,
    bad_cpu_serialises_on_the_reactor,
    ok_cpu_pool_runs_one_per_core_off_the_reactor,
    hidden_http_call_blocks_only_on_the_reactor,
    hidden_db_query_on_python,
    hidden_file_read_on_python,
    hidden_blockers_fail_in_json_and_the_server_goes_on,
    fastapi_client_paths_work_unchanged,
    bad_ms_is_a_400_in_json_and_the_server_goes_on,
    unknown_paths_are_404_and_other_methods_405,
    tokio_routes_are_404_elsewhere,
    blocking_threads_flag_sizes_the_offload_pool,
    sigterm_exits_0_promptly,
    sigint_exits_0_promptly,
    sigterm_lets_the_request_in_flight_finish,
    binds_loopback_by_default_and_says_so,
    blocking_polls_are_counted_as_stalls,
    slow_requests_with_short_polls_are_no_stalls,
    a_block_under_the_threshold_is_no_stall,
    stall_ms_0_turns_the_detector_off,
    events_record_accepts_and_handlers_in_order_and_drain,
    events_are_off_without_the_flag
);
