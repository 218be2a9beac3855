#!/usr/bin/env bash
# The main job: build the five servers and the bench client (release), set up the FastAPI
# reference app (reference/fastapi/setup.sh; without python3 its rows are left out and the
# Rust comparison goes on), then regenerate results/ from real runs:
#   results/                 the default comparison (the original experiment, both probes),
#                            and the results block of README.md
#   results/connect-before/  the same, with every burst connection accepted before the burst
#   results/threads/         the thread matrix: the same cases at 1, 2 and 4 reactor threads
#   results/cpu/             CPU-bound work: the four CPU routes at 1 and 2 reactor threads
#   results/sweep/           the concurrency sweep, N = 1 .. 10,000, with its plots
#   results/scale-500ms/     N = 1,000 and 10,000 with a 500 ms sleep, where the sleep, not
#                            the requests' own cost, should set the wall time
#   results/staircase/       the bounded pool: /ok-def on a 40-thread pool (the size of the
#                            threadpool behind FastAPI's plain `def`), N = 10 .. 200, 100 ms
#   results/rest/            at rest: a lone /ping at pauses of 0, 1, 5, 10 and 50 ms, and each
#                            server thread's wake-ups per request (with two variants: tokio
#                            with a reactor thread apart, smol with the executor on main)
#   results/detector-on/, results/detector-off/
#                            the stall detector's cost: /ok-await with it on and off, its pings
#                            at N = 10 and its wall time at N = 1,000 (n1000/)
#   results/offload-cost.md  criterion benches of one blocking-pool round trip per runtime
#                            (scripts/offload-cost.sh)
#   results/main-job.md      how long each of the above took
# With arguments, runs `bench-client ARGS...` instead (see `scripts/run.sh --help` and
# `scripts/run.sh sweep --help`), which leaves the README alone.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --workspace --bins
# Exit 3: no python3 (setup.sh said so in one line); the FastAPI rows are left out.
reference/fastapi/setup.sh || [ "$?" -eq 3 ]
bench="${CARGO_TARGET_DIR:-target}/release/bench-client"
if [ "$#" -gt 0 ]; then
    exec "$bench" "$@"
fi
# Each experiment's duration goes into results/main-job.md, so the time the job takes is
# read from a record, never remembered.
durations=()
timed() {
    local name=$1 started=$SECONDS
    shift
    "$@"
    durations+=("| $name | $((SECONDS - started)) |")
}
job_started=$SECONDS
timed "the comparison (results/)" "$bench" --readme README.md
timed "connect before (results/connect-before/)" "$bench" --connect before --out results/connect-before
timed "the thread matrix (results/threads/)" "$bench" --threads 1,2,4 --out results/threads
timed "CPU-bound work (results/cpu/)" "$bench" --routes /bad-cpu,/ok-cpu-blocking,/ok-cpu-yield,/ok-cpu-pool --threads 1,2 --out results/cpu
timed "the sweep (results/sweep/)" "$bench" sweep --out results/sweep
timed "500 ms at scale (results/scale-500ms/)" "$bench" sweep --routes /ok-blocking,/ok-await -n 1000,10000 --sleep-ms 500 --out results/scale-500ms
timed "the pool staircase (results/staircase/)" "$bench" sweep --servers all --blocking-threads 40 --sleep-ms 100 \
    --routes /ok-def,/ok-await -n 10,20,40,41,80,81,120,160,200 --out results/staircase
timed "at rest (results/rest/)" "$bench" rest --out results/rest
for stall_ms in 100 0; do
    [ "$stall_ms" -eq 0 ] && out=results/detector-off || out=results/detector-on
    timed "the detector at --stall-ms $stall_ms ($out/)" "$bench" --servers all --routes /ok-await --stall-ms "$stall_ms" --out "$out"
    timed "the detector at --stall-ms $stall_ms, N = 1,000 ($out/n1000/)" "$bench" sweep --routes /ok-await -n 1000 --sleep-ms 500 --stall-ms "$stall_ms" --out "$out/n1000"
done
timed "the offload's price (results/offload-cost.md)" scripts/offload-cost.sh
{
    echo "# The main job's run time"
    echo
    echo "Written by \`scripts/run.sh\` on $(date -u +%Y-%m-%dT%H:%MZ), commit \`$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)\`,"
    echo "on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') ($(nproc) cores), after the release build."
    echo
    echo "| experiment | seconds |"
    echo "|---|---:|"
    printf '%s\n' "${durations[@]}"
    echo "| **all** | **$((SECONDS - job_started))** |"
} > results/main-job.md
