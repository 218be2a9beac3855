#!/usr/bin/env bash
# The tests: sets up the FastAPI reference app's venv (reference/fastapi/setup.sh), then runs
# every test of the workspace. Without python3 the reference app's checks say they were
# skipped, and everything else runs.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
reference/fastapi/setup.sh || status=$?
case $status in
    0) ;;
    3) export REFERENCE_APP=missing ;;
    *) exit "$status" ;;
esac
# The detectors experiment's tokio poll hooks and tokio-console need a server built with tokio's
# unstable API, in a target folder of its own, console-probe beside it (as scripts/run.sh builds
# them for the main job).
RUSTFLAGS="${RUSTFLAGS:-} --cfg tokio_unstable" cargo build --locked \
    -p demo-hyper-tokio -p console-probe --target-dir "${CARGO_TARGET_DIR:-target}/tokio-unstable"
cargo test --workspace --locked "$@"
