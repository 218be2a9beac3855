#!/usr/bin/env bash
# Regenerates results/static/: clippy's disallowed_methods and the context-aware check of
# crates/blocking-check, each run over every demo server and their contract, and which
# /bad* route each catches, misses or flags falsely. The logic lives in Rust
# (crates/blocking-check); this only runs it from the repository's root. Run by the main job,
# which hands it its code stamp in BENCH_CODE_STAMP.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked -q -p blocking-check -- measure --out results/static
