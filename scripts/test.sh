#!/usr/bin/env bash
# The tests: sets up the FastAPI reference app's venv (reference/fastapi/setup.sh) and installs
# Prometheus for reactor-watch's metrics test (scripts/install-prometheus.sh), then runs every
# test of the workspace, the docs check among them (crates/doc-links), and reactor-watch's
# checks of its `metrics` feature, which no crate of the workspace turns on.
#
# A test that cannot run is never a pass. Without python3 (with venv), or without Prometheus
# where it cannot be installed (no root), this fails at once;
# where the kernel refuses io_uring, the io_uring servers' tests fail. To run the rest anyway
# on such a machine, set ALLOW_SKIPS=1: the tests that could not run then say so and are
# counted, by what was missing, in the closing summary. Under CI (CI=true) nothing may be
# skipped: ALLOW_SKIPS is refused.
set -euo pipefail
cd "$(dirname "$0")/.."

allow_skips=${ALLOW_SKIPS:-0}
if [[ ${CI:-} == true && $allow_skips == 1 ]]; then
    echo "tests: CI runs every test: ALLOW_SKIPS=1 is not allowed here" >&2
    exit 1
fi

status=0
reference/fastapi/setup.sh || status=$?
case $status in
    0) ;;
    3)
        if [[ $allow_skips != 1 ]]; then
            echo "tests: the FastAPI reference app's tests need python3 with venv; install it," \
                "or set ALLOW_SKIPS=1 to run the other tests (these then count as skipped)" >&2
            exit 1
        fi
        export REFERENCE_APP=missing
        ;;
    *) exit "$status" ;;
esac
status=0
scripts/install-prometheus.sh || status=$?
case $status in
    0) ;;
    3)
        # Without ALLOW_SKIPS the test would fail; with it, it counts itself as skipped.
        if [[ $allow_skips != 1 ]]; then
            echo "tests: reactor-watch's Prometheus test needs \`prometheus\`; install it" \
                "(scripts/install-prometheus.sh, as root), or set ALLOW_SKIPS=1 to run the" \
                "other tests (that one then counts as skipped)" >&2
            exit 1
        fi
        ;;
    *) exit "$status" ;;
esac
export ALLOW_SKIPS=$allow_skips

# Each test that could not run writes one line here, "what was missing<TAB>test".
SKIPPED_TESTS_LOG=$(mktemp "${TMPDIR:-/tmp}/skipped-tests.XXXXXX")
export SKIPPED_TESTS_LOG
trap 'rm -f "$SKIPPED_TESTS_LOG"' EXIT

# The detectors experiment's tokio poll hooks and tokio-console need the stacks whose
# descriptions say so built with tokio's unstable API, in a target folder of their own,
# console-probe beside them (as scripts/run.sh builds them for the main job).
# shellcheck disable=SC2046 # one word per package flag
RUSTFLAGS="${RUSTFLAGS:-} --cfg tokio_unstable" cargo build --locked \
    $(scripts/unstable-stacks.sh) -p console-probe \
    --target-dir "${CARGO_TARGET_DIR:-target}/tokio-unstable"
status=0
cargo test --workspace --locked "$@" || status=$?
# tests/prometheus.rs, in the run above, builds its example with the feature itself.
cargo test --locked -p reactor-watch --features metrics --lib --test metrics "$@" || status=$?

skipped=$(wc -l <"$SKIPPED_TESTS_LOG")
if ((skipped > 0)); then
    echo "tests: SKIPPED $skipped tests, which did not run (ALLOW_SKIPS=1):" >&2
    cut -f1 "$SKIPPED_TESTS_LOG" | sort | uniq -c | sed 's/^ */  /' >&2
fi
if ((status != 0)); then
    echo "tests: FAILED (cargo test exited $status); $skipped skipped" >&2
    exit "$status"
fi
echo "tests: every test that ran passed; $skipped skipped" >&2
