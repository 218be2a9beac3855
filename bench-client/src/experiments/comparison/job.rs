//! The comparison's runs in the main job: the original experiment, and the variations that
//! are the same experiment with other parameters.

use super::views::readme::README;
use crate::experiments::{JobRun, SHORT_SLEEP_MS, job_run};

/// The hidden blockers' sleep, longer than the variations': each server sizes its database
/// query at its start to take this long, and sized to 150 ms some came out under the 100 ms
/// stall limit (on async-std, ten queries of 85 ms that the detector did not see).
const HIDDEN_SLEEP_MS: &str = "200";

/// The stack whose runtime's own pool is one thread: glommio's, which the server sizes up.
const GLOMMIO: &str = "demo-hyper-glommio";

/// In the main job's order.
pub const RUNS: [JobRun; 13] = [
    job_run(
        "the comparison (results/, README.md's block)",
        &["--readme", README],
    ),
    job_run(
        "connect before (results/connect-before/)",
        &["--connect", "before", "--out", "results/connect-before"],
    ),
    job_run(
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
    job_run(
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
    job_run(
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
    job_run(
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
    job_run("the detector on (results/detector-on/)", &DETECTOR_ON),
    job_run("the detector off (results/detector-off/)", &DETECTOR_OFF),
    job_run(
        "tokio's block_in_place, on one worker and two (results/block-in-place/)",
        &[
            "--variant",
            "multi-thread",
            "--routes",
            "/bad,/ok-blocking,/ok-await,/ok-block-in-place",
            "--threads",
            "1,2",
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/block-in-place",
        ],
    ),
    job_run(
        "monoio's spawn_blocking, with the server's pool (results/monoio/pool/)",
        &MONOIO_POOL,
    ),
    job_run(
        "monoio's spawn_blocking, no pool (results/monoio/no-pool/)",
        &MONOIO_NO_POOL,
    ),
    job_run(
        "monoio's spawn_blocking, run where called (results/monoio/execute-local/)",
        &MONOIO_EXECUTE_LOCAL,
    ),
    job_run(
        "glommio's pool at its default size (results/glommio/one-pool-thread/)",
        &[
            "--servers",
            GLOMMIO,
            "--blocking-threads",
            "1",
            "--routes",
            MONOIO_ROUTES,
            "--sleep-ms",
            SHORT_SLEEP_MS,
            "--out",
            "results/glommio/one-pool-thread",
        ],
    ),
];

/// monoio's three ways to run `spawn_blocking`, side by side at one thread and two: the
/// server's pool (stock), and each variant its description tags `pool`.
const MONOIO_POOL: [&str; 10] = pool(&["--servers", POOL_STACKS], "results/monoio/pool");
const MONOIO_NO_POOL: [&str; 10] = pool(&["--variant", "no-pool"], "results/monoio/no-pool");
const MONOIO_EXECUTE_LOCAL: [&str; 10] = pool(
    &["--variant", "execute-local"],
    "results/monoio/execute-local",
);

/// The stacks whose descriptions have variants of their blocking pool.
const POOL_STACKS: &str = "runs-in:pool";

/// The routes of monoio's side by side, and of glommio's pool at one thread (glommio's
/// default): the comparison's.
const MONOIO_ROUTES: &str = "/bad,/ok-blocking,/ok-await";

/// The side by side's run on the servers `which` chooses (`--servers` or `--variant`).
const fn pool(which: &'static [&'static str; 2], out: &'static str) -> [&'static str; 10] {
    [
        which[0],
        which[1],
        "--routes",
        MONOIO_ROUTES,
        "--threads",
        "1,2",
        "--sleep-ms",
        SHORT_SLEEP_MS,
        "--out",
        out,
    ]
}
const DETECTOR_ON: [&str; 8] = detector("100", "results/detector-on");
const DETECTOR_OFF: [&str; 8] = detector("0", "results/detector-off");

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
