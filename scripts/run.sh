#!/usr/bin/env bash
# The main job: build the five servers and the bench client (release), then run the full
# comparison, which rewrites results/ and the results block of README.md.
# Extra arguments go to bench-client (see `scripts/run.sh --help`); with them, only the full
# default comparison touches the README.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --workspace --bins
exec "${CARGO_TARGET_DIR:-target}/release/bench-client" --readme README.md "$@"
