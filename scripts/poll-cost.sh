#!/usr/bin/env bash
# Regenerates results/poll-cost.md: reactor-watch's criterion bench of one wrapped poll
# (crates/reactor-watch/benches/per_poll.rs), then the report from criterion's own output
# files (crates/offload-cost/src/bin/poll-cost-report.rs). The logic lives in Rust; this only
# runs the two steps in order, as scripts/offload-cost.sh does for the offload's price.
set -euo pipefail
cd "$(dirname "$0")/.."

# criterion writes under $CARGO_TARGET_DIR/criterion, relative to the bench's package folder
# if the target dir is relative: make it absolute, and use the same one for both steps.
CARGO_TARGET_DIR="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
export CARGO_TARGET_DIR

cargo bench --locked -p reactor-watch --bench per_poll
cargo run --release --locked -q -p offload-cost --bin poll-cost-report -- \
    --criterion-dir "$CARGO_TARGET_DIR/criterion" \
    --out results/poll-cost.md
