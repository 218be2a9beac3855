//! The sweep's runs in the main job: the concurrency sweep, the pools at scale, the bounded
//! pools' staircase, and the stall detector's cost at N = 1,000.

use crate::experiments::{JobRun, SHORT_SLEEP_MS, job_run};

/// The sweep's runs in the main job.
pub(super) const JOB: [JobRun; 5] = [
    job_run("the sweep (results/sweep/)", &["--out", "results/sweep"]),
    job_run(
        "the pools at scale (results/scale/)",
        &[
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
    job_run(
        "the pool staircase (results/staircase/)",
        &[
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
    job_run(
        "the detector on, N = 1,000 (results/detector-on/n1000/)",
        &DETECTOR_ON_AT_SCALE,
    ),
    job_run(
        "the detector off, N = 1,000 (results/detector-off/n1000/)",
        &DETECTOR_OFF_AT_SCALE,
    ),
];

const DETECTOR_ON_AT_SCALE: [&str; 10] = detector_at_scale("100", "results/detector-on/n1000");
const DETECTOR_OFF_AT_SCALE: [&str; 10] = detector_at_scale("0", "results/detector-off/n1000");

/// The stall detector's cost at N = 1,000 × 500 ms.
const fn detector_at_scale(stall_ms: &'static str, out: &'static str) -> [&'static str; 10] {
    [
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
