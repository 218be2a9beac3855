//! The main job's list: every experiment whose results are committed, in order, each as the
//! command line that runs it alone. An experiment's parameters for the job are here, and
//! nowhere else: the flags below, over its defaults in `src/experiments/<its name>`.

use std::time::Duration;

use super::{Experiment, README, Run};
use crate::stamps;

/// The main job, in order.
pub const MAIN_JOB: [Experiment; 25] = [
    command(
        "the comparison (results/, README.md's block)",
        &["--readme", README],
    ),
    command(
        "connect before (results/connect-before/)",
        &["--connect", "before", "--out", "results/connect-before"],
    ),
    command(
        "the health check's race (results/race/)",
        &["race", "--servers", "all", "--out", "results/race"],
    ),
    command(
        "the race at 500 ms (results/race-500ms/)",
        &[
            "race",
            "--servers",
            "all",
            "--sleep-ms",
            "500",
            "--trials",
            "2",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--no-flips",
            "--out",
            "results/race-500ms",
        ],
    ),
    command(
        "catching it, side by side (results/detectors/)",
        &[
            "detectors",
            "--servers",
            "all",
            "--out",
            "results/detectors",
        ],
    ),
    command(
        "the thread matrix (results/threads/)",
        &[
            "--threads",
            "1,2,4",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/threads",
        ],
    ),
    command(
        "the race per core, 2 threads (results/per-core/threads-2/)",
        &[
            "race",
            "--threads",
            "2",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-2",
        ],
    ),
    command(
        "the race per core, 4 threads (results/per-core/threads-4/)",
        &[
            "race",
            "--threads",
            "4",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-4",
        ],
    ),
    command(
        "CPU-bound work (results/cpu/)",
        &[
            "--routes",
            "/bad-cpu,/ok-cpu-blocking,/ok-cpu-yield,/ok-cpu-pool",
            "--threads",
            "1,2",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/cpu",
        ],
    ),
    command(
        "the hidden blockers (results/hidden/)",
        &[
            "--routes",
            "/bad-http,/ok-http-blocking,/ok-http-await,/bad-db,/ok-db-blocking,/ok-db-await,\
             /bad-file,/ok-file-blocking,/ok-file-await",
            "--sleep-ms",
            HIDDEN_SLEEP_MS,
            "--out",
            "results/hidden",
        ],
    ),
    command(
        "the hidden blockers, the file not cached (results/hidden-cold/)",
        &[
            "--routes",
            "/bad-file,/ok-file-blocking,/ok-file-await",
            "--file-cache",
            "cold",
            "--out",
            "results/hidden-cold",
        ],
    ),
    command(
        "the sweep (results/sweep/)",
        &["sweep", "--out", "results/sweep"],
    ),
    command(
        "the pools at scale (results/scale/)",
        &[
            "sweep",
            "--routes",
            "/ok-blocking,/ok-await",
            "-n",
            "1000,10000",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/scale",
        ],
    ),
    command(
        "the pool staircase (results/staircase/)",
        &[
            "sweep",
            "--servers",
            "all",
            "--blocking-threads",
            "40",
            "--sleep-ms",
            "100",
            "--routes",
            "/ok-def,/ok-await",
            "-n",
            "10,20,40,41,80,81,120,160,200",
            "--out",
            "results/staircase",
        ],
    ),
    command(
        "at rest (results/rest/)",
        &["rest", "--out", "results/rest"],
    ),
    command(
        "where io_uring differs (results/uring/)",
        &["uring", "--out", "results/uring"],
    ),
    command(
        "the health check under a block (results/health/)",
        &["health", "--out", "results/health"],
    ),
    command(
        "the health check without its period (results/health/no-period/)",
        &[
            "health",
            "--routes",
            "/bad",
            "--trials",
            "1",
            "--health-period-ms",
            "0",
            "--out",
            "results/health/no-period",
        ],
    ),
    command("the detector on (results/detector-on/)", &DETECTOR_ON),
    command("the detector off (results/detector-off/)", &DETECTOR_OFF),
    command(
        "the detector on, N = 1,000 (results/detector-on/n1000/)",
        &DETECTOR_ON_AT_SCALE,
    ),
    command(
        "the detector off, N = 1,000 (results/detector-off/n1000/)",
        &DETECTOR_OFF_AT_SCALE,
    ),
    Experiment {
        name: "the offload's price (results/offload-cost.md)",
        run: Run::Script {
            path: "scripts/offload-cost.sh",
            writes: "results/offload-cost.md",
            stamp: stamps::OFFLOAD_COST,
            // crates/offload-cost: 16 benchmarks × (0.5 s warm-up + 1 s measurement), and
            // criterion's analysis; the bench is built with the binaries, before the job.
            estimate: Duration::from_secs(50),
        },
    },
    Experiment {
        name: "the stall detector's price per poll (results/poll-cost.md)",
        run: Run::Script {
            path: "scripts/poll-cost.sh",
            writes: "results/poll-cost.md",
            stamp: stamps::POLL_COST,
            // crates/reactor-watch: 10 benchmarks × (0.5 s warm-up + 1 s measurement), and
            // criterion's analysis; built with the binaries, before the job.
            estimate: Duration::from_secs(25),
        },
    },
    Experiment {
        name: "catching it before it ships (results/static/)",
        run: Run::Script {
            path: "scripts/static-checks.sh",
            writes: "results/static",
            stamp: stamps::STATIC,
            // crates/blocking-check: clippy over the servers and their contract with the
            // experiment's configuration (their dependencies checked before the job), then
            // the context-aware check's parse.
            estimate: Duration::from_secs(60),
        },
    },
];

/// The sleep of the comparison's variations (threads, CPU work): over the servers' 100 ms
/// stall limit, and ten of them serialised still hold a reactor thread for 1.5 s, past a
/// liveness probe's 1 s timeout, in under a third of the comparison's time. The pools at
/// scale take it too: ⌈N / pool⌉ sleeps of it still dwarf what sending ten thousand requests
/// costs (the sweep's 10 ms points).
const SHORT_SLEEP_MS: &str = "150";

/// The hidden blockers' sleep, longer: each server sizes its database query at its start to
/// take this long, and sized to 150 ms some came out under the 100 ms stall limit (on
/// async-std, ten queries of 85 ms that the detector did not see).
const HIDDEN_SLEEP_MS: &str = "200";

const DETECTOR_ON: [&str; 8] = detector("100", "results/detector-on");
const DETECTOR_OFF: [&str; 8] = detector("0", "results/detector-off");
const DETECTOR_ON_AT_SCALE: [&str; 11] = detector_at_scale("100", "results/detector-on/n1000");
const DETECTOR_OFF_AT_SCALE: [&str; 11] = detector_at_scale("0", "results/detector-off/n1000");

/// An experiment that is a command line of the bench client's own.
const fn command(name: &'static str, args: &'static [&'static str]) -> Experiment {
    Experiment {
        name,
        run: Run::Command(args),
    }
}

/// The stall detector's cost: `/ok-await` on every server at `--stall-ms MS`.
const fn detector(stall_ms: &'static str, out: &'static str) -> [&'static str; 8] {
    [
        "--servers",
        "all",
        "--routes",
        "/ok-await",
        "--stall-ms",
        stall_ms,
        "--out",
        out,
    ]
}

/// The stall detector's cost at N = 1,000 × 500 ms.
const fn detector_at_scale(stall_ms: &'static str, out: &'static str) -> [&'static str; 11] {
    [
        "sweep",
        "--routes",
        "/ok-await",
        "-n",
        "1000",
        "--sleep-ms",
        "500",
        "--stall-ms",
        stall_ms,
        "--out",
        out,
    ]
}
