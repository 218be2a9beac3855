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
cargo test --workspace --locked "$@"
