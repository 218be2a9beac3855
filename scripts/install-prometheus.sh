#!/usr/bin/env bash
# Installs Prometheus, Debian's `prometheus` package, for reactor-watch's metrics test
# (crates/reactor-watch/tests/prometheus.rs), which runs an instance of its own on a free port:
# a daemon the package may start on :9090 is not used. Does nothing when `prometheus` is
# already on PATH. All output goes to stderr.
#
# Exit codes:
#   0  prometheus is on PATH
#   3  it is missing and cannot be installed here (no apt-get, or not root and no sudo without
#      a password): callers skip that test
#   other  apt-get failed; its message says why
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-prometheus: no apt-get here; install Prometheus and put \`prometheus\` on PATH" >&2
    exit 3
fi
as_root=()
if ((EUID != 0)); then
    if ! sudo -n true 2>/dev/null; then
        echo "install-prometheus: installing the prometheus package needs root; run" \
            "\`sudo $0\`" >&2
        exit 3
    fi
    as_root=(sudo -n)
fi

apt_install() {
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends prometheus >&2
}

echo "install-prometheus: installing Debian's prometheus package" >&2
# The package lists may be missing or older than the archive: update them once, then retry.
if ! apt_install; then
    "${as_root[@]}" apt-get update -q >&2
    apt_install
fi
command -v prometheus >/dev/null 2>&1 || {
    echo "install-prometheus: the package installed, but \`prometheus\` is not on PATH" >&2
    exit 1
}
echo "install-prometheus: $(prometheus --version 2>&1 | head -n 1)" >&2
