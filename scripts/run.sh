#!/usr/bin/env bash
# The main job: build the servers, the bench client and the criterion benches (release), set up
# the FastAPI reference app (reference/fastapi/setup.sh; without python3 its rows are left out
# and the Rust comparison goes on), then regenerate results/ from real runs with
# `bench-client all`: every experiment in turn under one progress view (see `bench-client
# all --help`), each one's duration and its command to run it alone in results/main-job.md.
# With arguments, runs `bench-client ARGS...` instead, after the same build: one experiment
# alone (e.g. `scripts/run.sh sweep --help`), which leaves the README alone; or
# `scripts/run.sh all --stale`: only the experiments whose measuring code changed since their
# results were written. Every run ends with `bench-client audit --brief`: which runs are
# stale, and which sentences of the pages this machine's results do not bear out (a false
# one, or a figure that does not match its results, makes the exit status 1).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --workspace --bins
# The detectors experiment's tokio poll hooks and tokio-console need tokio's unstable API: the
# stacks whose descriptions say so, built with it into a target folder of their own, so that
# the build above is not redone for them, and beside them console-probe, which their
# tokio-console variant starts.
# shellcheck disable=SC2046 # one word per package flag
RUSTFLAGS="${RUSTFLAGS:-} --cfg tokio_unstable" cargo build --release --locked \
    $(scripts/unstable-stacks.sh) -p console-probe \
    --target-dir "${CARGO_TARGET_DIR:-target}/tokio-unstable"
# Exit 3: no python3 (setup.sh said so in one line); the FastAPI rows are left out.
reference/fastapi/setup.sh || [ "$?" -eq 3 ]
bench="${CARGO_TARGET_DIR:-target}/release/bench-client"
# Runs `bench-client ARGS...`, then the audit of results/; the run's failure, else the audit's.
run_and_audit() {
    local status=0
    "$bench" "$@" || status=$?
    echo
    "$bench" audit --brief || { [ "$status" -ne 0 ] || status=$?; }
    exit "$status"
}
if [ "$#" -gt 0 ]; then
    case "$1" in
        audit | redraw | help | -h | --help | -V | --version) exec "$bench" "$@" ;;
    esac
    for arg in "$@"; do
        case "$arg" in -h | --help) exec "$bench" "$@" ;; esac
    done
    run_and_audit "$@"
fi
# The criterion benches and their report binaries are built now, so that the job's record
# times the benches, not a build: each exactly as its script builds it, since cargo unifies the
# features of the packages it builds together, and a build of both at once would be another
# build. criterion writes under an absolute target dir (see scripts/offload-cost.sh).
CARGO_TARGET_DIR="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
export CARGO_TARGET_DIR
cargo bench --locked -p offload-cost --bench offload --no-run
cargo bench --locked -p reactor-watch --bench per_poll --no-run
cargo bench --locked -p reactor-watch --features metrics --bench per_poll --no-run
cargo build --release --locked -p offload-cost --bins
# The static checks' script runs blocking-check with `cargo run -p blocking-check`, whose
# features differ from the workspace build's: built now as the script builds it. It runs clippy
# over every demo server, which checks them and their dependencies in the dev profile: checked
# now, the experiment's clippy replays its warnings, and the record times the checks, not a
# build.
cargo build --release --locked -p blocking-check
"${CARGO_TARGET_DIR}/release/blocking-check" check-ahead
run_and_audit all
