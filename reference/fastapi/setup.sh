#!/usr/bin/env bash
# Sets up the FastAPI reference app's virtualenv at reference/fastapi/.venv, from the exact
# pins in requirements.txt. Idempotent: when the venv's stamp is newer than requirements.txt
# and its python runs, it does nothing. Run it from any directory. All output goes to stderr.
#
# Exit codes:
#   0  the venv is ready: run reference/fastapi/.venv/bin/python reference/fastapi/serve.py
#   3  python3, or its venv module (with ensurepip), is missing: callers skip the FastAPI rows
#   other  the setup itself failed (e.g. pip could not reach PyPI); the message says why
set -euo pipefail

here=${BASH_SOURCE[0]%/*}
[[ $here == "${BASH_SOURCE[0]}" ]] && here=.
cd "$here"
venv=.venv
stamp=$venv/.requirements-installed

if [[ -f $stamp && ! requirements.txt -nt $stamp ]] && "$venv/bin/python" -c '' 2>/dev/null; then
    exit 0
fi

if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "reference/fastapi: python3 with the venv module is needed for the FastAPI rows; skipping them" >&2
    exit 3
fi

echo "reference/fastapi: creating $PWD/$venv from requirements.txt ($(python3 --version 2>&1))" >&2
rm -rf "$venv"
python3 -m venv "$venv" >&2
if ! "$venv/bin/pip" install --disable-pip-version-check --quiet -r requirements.txt >&2; then
    echo "reference/fastapi: pip could not install requirements.txt into $PWD/$venv" >&2
    exit 1
fi
touch "$stamp"
echo "reference/fastapi: ready" >&2
