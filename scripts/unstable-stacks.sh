#!/usr/bin/env bash
# Prints `-p NAME` for each stack whose stack.toml says `tokio_unstable = true` (some of its
# variants need a build with RUSTFLAGS="--cfg tokio_unstable"), for cargo's command line.
set -euo pipefail
cd "$(dirname "$0")/.."
for description in crates/*/stack.toml; do
    if grep -qx 'tokio_unstable = true' "$description"; then
        printf -- '-p %s ' "$(basename "$(dirname "$description")")"
    fi
done
