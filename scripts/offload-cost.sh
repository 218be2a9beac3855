#!/usr/bin/env bash
# Regenerates results/offload-cost.md: criterion benches of one blocking-pool round trip on
# each runtime (crates/offload-cost/benches/offload.rs), then the report from criterion's own
# output files (crates/offload-cost/src/bin/offload-report.rs). The logic lives in Rust; this
# only runs the two steps in order. Takes a few minutes on 2 cores, most of it the first build.
set -euo pipefail
cd "$(dirname "$0")/.."

# criterion runs a bench with the package's folder as working directory and writes to
# $CARGO_TARGET_DIR/criterion, so a relative target dir would land under crates/offload-cost/.
# Make it absolute, and use the same one for both steps.
CARGO_TARGET_DIR="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
export CARGO_TARGET_DIR

cargo bench --locked -p offload-cost --bench offload
# --release reuses the dependencies the bench just built (the bench profile builds into release).
cargo run --release --locked -q -p offload-cost --bin offload-report -- \
    --criterion-dir "$CARGO_TARGET_DIR/criterion" \
    --out results/offload-cost.md
