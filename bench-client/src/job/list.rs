//! The main job's list: every experiment whose results are committed, in order, each as the
//! command line that runs it alone. An experiment's parameters for the job are here, and
//! nowhere else: the flags below, over its defaults in `src/experiments/<its name>`.

use std::time::Duration;

use super::{Experiment, README, Run};
use crate::stamps;

/// The main job, in order.
pub const MAIN_JOB: [Experiment; 25] = [
    Experiment {
        name: "the comparison (results/, README.md's block)",
        run: Run::Command(&["--readme", README]),
    },
    Experiment {
        name: "connect before (results/connect-before/)",
        run: Run::Command(&["--connect", "before", "--out", "results/connect-before"]),
    },
    Experiment {
        name: "the health check's race (results/race/)",
        run: Run::Command(&["race", "--servers", "all", "--out", "results/race"]),
    },
    Experiment {
        name: "the race at 500 ms (results/race-500ms/)",
        run: Run::Command(&[
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
        ]),
    },
    Experiment {
        name: "catching it, side by side (results/detectors/)",
        run: Run::Command(&[
            "detectors",
            "--servers",
            "all",
            "--out",
            "results/detectors",
        ]),
    },
    Experiment {
        name: "the thread matrix (results/threads/)",
        run: Run::Command(&[
            "--threads",
            "1,2,4",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/threads",
        ]),
    },
    Experiment {
        name: "the race per core, 2 threads (results/per-core/threads-2/)",
        run: Run::Command(&[
            "race",
            "--threads",
            "2",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-2",
        ]),
    },
    Experiment {
        name: "the race per core, 4 threads (results/per-core/threads-4/)",
        run: Run::Command(&[
            "race",
            "--threads",
            "4",
            "--connect",
            "during",
            "--arrival-trials",
            "0",
            "--out",
            "results/per-core/threads-4",
        ]),
    },
    Experiment {
        name: "CPU-bound work (results/cpu/)",
        run: Run::Command(&[
            "--routes",
            "/bad-cpu,/ok-cpu-blocking,/ok-cpu-yield,/ok-cpu-pool",
            "--threads",
            "1,2",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/cpu",
        ]),
    },
    Experiment {
        name: "the hidden blockers (results/hidden/)",
        run: Run::Command(&[
            "--routes",
            "/bad-http,/ok-http-blocking,/ok-http-await,/bad-db,/ok-db-blocking,/ok-db-await,\
             /bad-file,/ok-file-blocking,/ok-file-await",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/hidden",
        ]),
    },
    Experiment {
        name: "the hidden blockers, the file not cached (results/hidden-cold/)",
        run: Run::Command(&[
            "--routes",
            "/bad-file,/ok-file-blocking,/ok-file-await",
            "--file-cache",
            "cold",
            "--out",
            "results/hidden-cold",
        ]),
    },
    Experiment {
        name: "the sweep (results/sweep/)",
        run: Run::Command(&["sweep", "--out", "results/sweep"]),
    },
    Experiment {
        name: "500 ms at scale (results/scale-500ms/)",
        run: Run::Command(&[
            "sweep",
            "--routes",
            "/ok-blocking,/ok-await",
            "-n",
            "1000,10000",
            "--sleep-ms",
            "500",
            "--out",
            "results/scale-500ms",
        ]),
    },
    Experiment {
        name: "the pool staircase (results/staircase/)",
        run: Run::Command(&[
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
        ]),
    },
    Experiment {
        name: "at rest (results/rest/)",
        run: Run::Command(&["rest", "--out", "results/rest"]),
    },
    Experiment {
        name: "where io_uring differs (results/uring/)",
        run: Run::Command(&["uring", "--out", "results/uring"]),
    },
    Experiment {
        name: "the health check under a block (results/health/)",
        run: Run::Command(&["health", "--out", "results/health"]),
    },
    Experiment {
        name: "the health check without its period (results/health/no-period/)",
        run: Run::Command(&[
            "health",
            "--routes",
            "/bad",
            "--trials",
            "1",
            "--health-period-ms",
            "0",
            "--out",
            "results/health/no-period",
        ]),
    },
    Experiment {
        name: "the detector on (results/detector-on/)",
        run: Run::Command(&DETECTOR_ON),
    },
    Experiment {
        name: "the detector off (results/detector-off/)",
        run: Run::Command(&DETECTOR_OFF),
    },
    Experiment {
        name: "the detector on, N = 1,000 (results/detector-on/n1000/)",
        run: Run::Command(&DETECTOR_ON_AT_SCALE),
    },
    Experiment {
        name: "the detector off, N = 1,000 (results/detector-off/n1000/)",
        run: Run::Command(&DETECTOR_OFF_AT_SCALE),
    },
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

/// The sleep of the comparison's variations (threads, CPU work, hidden blockers): ten of them
/// serialised still hold a reactor thread for 2 s, past a liveness probe's 1 s timeout, in two
/// fifths of the comparison's time.
const SHORT_SLEEP_MS: &str = "200";

const DETECTOR_ON: [&str; 8] = detector("100", "results/detector-on");
const DETECTOR_OFF: [&str; 8] = detector("0", "results/detector-off");
const DETECTOR_ON_AT_SCALE: [&str; 11] = detector_at_scale("100", "results/detector-on/n1000");
const DETECTOR_OFF_AT_SCALE: [&str; 11] = detector_at_scale("0", "results/detector-off/n1000");

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
