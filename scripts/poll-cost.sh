#!/usr/bin/env bash
# Regenerates results/poll-cost.md: reactor-watch's criterion bench of one wrapped poll
# (crates/reactor-watch/benches/per_poll.rs), then the report from criterion's own output
# files (crates/offload-cost/src/bin/poll-cost-report.rs). The logic lives in Rust; this only
# runs the steps in order, as scripts/offload-cost.sh does for the offload's price.
#
# The bench runs twice: as it is, and built with reactor-watch's `metrics` feature for the
# enabled watch's functions alone (`wrapped_metrics`), so that one run gives off, on, on with
# metrics and tokio-metrics' TaskMonitor side by side.
#
# `scripts/poll-cost.sh --quick OUT` checks that the steps fit together: a tenth of a second
# per benchmark, criterion's files in a temporary folder, the report at OUT. Its figures are
# not worth keeping.
set -euo pipefail
cd "$(dirname "$0")/.."

# criterion writes under $CARGO_TARGET_DIR/criterion, relative to the bench's package folder
# if the target dir is relative: make it absolute, and use the same one for every step.
CARGO_TARGET_DIR="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
export CARGO_TARGET_DIR
out=results/poll-cost.md
criterion_dir=$CARGO_TARGET_DIR/criterion
settings=()
if [[ ${1:-} == --quick ]]; then
    out=${2:?"usage: scripts/poll-cost.sh [--quick OUT]"}
    criterion_dir=$(mktemp -d "${TMPDIR:-/tmp}/poll-cost.XXXXXX")
    trap 'rm -rf "$criterion_dir"' EXIT
    settings=(--warm-up-time 0.05 --measurement-time 0.1 --sample-size 10 --nresamples 1000)
fi
export CRITERION_HOME=$criterion_dir

cargo bench --locked -p reactor-watch --bench per_poll -- "${settings[@]}"
cargo bench --locked -p reactor-watch --features metrics --bench per_poll -- \
    "${settings[@]}" wrapped_metrics
cargo run --release --locked -q -p offload-cost --bin poll-cost-report -- \
    --criterion-dir "$criterion_dir" \
    --out "$out"
