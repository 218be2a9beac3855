#!/usr/bin/env bash
# The flake audit: runs every test target that measures time, K times in a row (30 unless
# --runs says otherwise), each run as the README's test command runs it (cargo test, its own
# parallelism), and prints a table: each test, its runs, its failures and the failure messages
# seen. A timing test is trusted once it passes 30 runs here; one that fails at all is mended
# by a bound read from what the server recorded, never by a wider bound or a retried assertion.
#
# Not part of the test command: at K = 30 it takes hours. It builds first (scripts/test.sh
# --no-run, which also sets up the FastAPI reference app's venv).
#
#   scripts/flake-audit.sh [--runs K] [--minutes M] [--busy-core] [--only REGEX] [--logs DIR]
#
#   --runs K      runs of each target (default 30)
#   --minutes M   starts no run after M minutes: the table counts the runs done
#   --busy-core   keeps a busy loop pinned on core 0 for the whole audit (taskset): the tests
#                 then share one core with it, as on a machine that is doing something else
#   --only REGEX  audits only the targets ("package test") that match REGEX
#   --logs DIR    keeps every run's output in DIR (kept afterwards) and goes on from the runs
#                 already there: an audit cut short resumes where it stopped, on the same tree
#
# Exit status: 0 if no run failed, 1 if one did, 2 for a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

# The test targets that time something, as "package test" (test "lib": the unit tests; "doc":
# the examples in the docs, which `cargo test --doc` compiles and runs): every test file of
# every stack (a crate folder with a stack.toml), then the rest.
TARGETS=()
for description in crates/*/stack.toml; do
    stack=$(basename "$(dirname "$description")")
    for test in "crates/$stack"/tests/*.rs; do
        [[ -e $test ]] && TARGETS+=("$stack $(basename "$test" .rs)")
    done
done
TARGETS+=(
    "demo-testkit fastapi"
    "demo-testkit lib"
    "bench-client lib"
    "burst-meter lib"
    "bench-client open_loop"
    "bench-client connect_before"
    "bench-client race"
    "bench-client health"
    "bench-client at_rest"
    "bench-client uring"
    "bench-client tokio_answers"
    "bench-client probe"
    "bench-client probe_shipped"
    "bench-client detectors"
    "bench-client faults"
    "bench-client end_to_end"
    "demo-contract lib"
    "reactor-watch lib"
    "reactor-watch stalls"
    "reactor-watch labels"
    "reactor-watch cpu"
    "reactor-watch health"
    "reactor-watch json"
    "reactor-watch off"
    "reactor-watch examples"
    "reactor-watch outside"
    "reactor-watch prometheus"
    "reactor-watch doc"
)

usage() {
    sed -n '/^#   scripts/,/already there/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

runs=30 minutes=0 busy=0 only=. keep=
while (($# > 0)); do
    case $1 in
        --runs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; runs=$2; shift 2 ;;
        --minutes) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; minutes=$2; shift 2 ;;
        --busy-core) busy=1; shift ;;
        --only) [[ -n ${2:-} ]] || usage; only=$2; shift 2 ;;
        --logs) [[ -n ${2:-} ]] || usage; keep=$2; shift 2 ;;
        *) usage ;;
    esac
done

if [[ -n $keep ]]; then
    mkdir -p "$keep"
    logs=$(cd "$keep" && pwd)
else
    logs=$(mktemp -d "${TMPDIR:-/tmp}/flake-audit.XXXXXX")
fi
busy_pid=
cleanup() {
    [[ -n $busy_pid ]] && kill "$busy_pid" 2>/dev/null
    [[ -n $keep ]] || rm -rf "$logs"
}
trap cleanup EXIT

scripts/test.sh --no-run >"$logs/build.log" 2>&1 || {
    cat "$logs/build.log" >&2
    echo "flake-audit: the build failed" >&2
    exit 1
}
# Each target's test binary as the workspace build made it ("package test path manifest
# folder"): run as it is, with no cargo in between, so no run rebuilds with other features.
cargo test --workspace --locked --no-run --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    target = message["target"]
    if not message["profile"]["test"]:
        continue
    name = "lib" if "lib" in target["kind"] else target["name"]
    # "path+file:///…/FOLDER#VERSION", or "…#NAME@VERSION" where the folder is named otherwise
    folder_name, _, version = message["package_id"].partition("#")
    package = version.split("@")[0] if "@" in version else folder_name.rsplit("/", 1)[-1]
    folder = os.path.dirname(message["manifest_path"])
    print(package, name, message["executable"], folder)
' >"$logs/binaries"

if ((busy)); then
    taskset -c 0 bash -c 'while :; do :; done' &
    busy_pid=$!
fi

# Each run's output in a file of its own, its exit status beside it. Runs go over every
# target in turn, so a deadline leaves every target with the same number of runs.
# A run already in the logs (--logs) is not run again.
done_runs() {
    local last=0 file
    for file in "$logs/$1.$2".*.status; do
        [[ -e $file ]] || continue
        file=${file%.status}
        ((${file##*.} > last)) && last=${file##*.}
    done
    echo "$last"
}

for ((run = 1; run <= runs; run++)); do
    if ((minutes > 0 && SECONDS >= minutes * 60)); then
        echo "flake-audit: $minutes minutes are up after $((run - 1)) runs" >&2
        break
    fi
    for target in "${TARGETS[@]}"; do
        [[ $target =~ $only ]] || continue
        read -r package test <<<"$target"
        (($(done_runs "$package" "$test") >= run)) && continue
        log="$logs/$package.$test.$run.log"
        started=$SECONDS status=0
        if [[ $test == doc ]]; then
            cargo test --locked --doc -p "$package" >"$log" 2>&1 || status=$?
        else
            read -r _ _ binary folder < <(grep "^$package $test " "$logs/binaries") || {
                echo "flake-audit: no test binary for $target" >&2
                exit 1
            }
            (cd "$folder" && CARGO_MANIFEST_DIR=$folder "$binary") >"$log" 2>&1 || status=$?
        fi
        echo "$status" >"${log%.log}.status"
        echo "flake-audit: run $run, $package $test: exit $status, $((SECONDS - started)) s" >&2
    done
done

# Every run's output (log) or exit status (status) of the targets audited.
run_files() {
    local target package test
    for target in "${TARGETS[@]}"; do
        [[ $target =~ $only ]] || continue
        read -r package test <<<"$target"
        ls "$logs/$package.$test".*."$1" 2>/dev/null || true
    done
}

# Per test: the runs it ran in, its failures, and each distinct first line of its messages.
# A run that failed with no test failing (a crash, a build error) counts against its target.
awk '
    FNR == 1 {
        n = split(FILENAME, parts, "/"); split(parts[n], base, ".")
        target = base[1] " " base[2]; current = ""; want = 0
        if (FILENAME ~ /\.status$/) { status = 1 } else { status = 0; failing[FILENAME] = 0 }
    }
    status {
        logfile = substr(FILENAME, 1, length(FILENAME) - 7) ".log"
        key = target " (outside its tests)"; seen[key]++
        if ($1 != 0 && !failing[logfile]) failed[key]++
        next
    }
    # A test name may hold spaces (a doc test: "src/lib.rs - (line 96)").
    /^test .* \.\.\. (ok|FAILED)$/ {
        name = $0; sub(/^test /, "", name); sub(/ \.\.\. (ok|FAILED)$/, "", name)
        key = target " " name; seen[key]++
        if ($NF == "FAILED") { failed[key]++; failing[FILENAME] = 1 }
    }
    /^---- .* stdout ----$/ {
        name = $0; sub(/^---- /, "", name); sub(/ stdout ----$/, "", name)
        current = target " " name; want = 0; next
    }
    current != "" && /panicked at/ { want = 1; next }
    current != "" && want {
        if (index(messages[current], $0) == 0) messages[current] = messages[current] "<br>" $0
        want = 0
    }
    END {
        for (key in seen) {
            if (key ~ /outside its tests/ && !failed[key]) continue
            total += failed[key]
            printf "| %s | %d | %d | %s |\n", key, seen[key], failed[key], substr(messages[key], 5)
        }
        for (key in seen) if (key !~ /outside its tests/) tests++
        printf "%d %d\n", tests, total > "/dev/stderr"
    }
' $(run_files log) $(run_files status) >"$logs/rows" 2>"$logs/totals"
read -r tests failures <"$logs/totals"
echo "| test | runs | failures | failure messages |"
echo "|---|---:|---:|---|"
sort -t'|' -k4,4nr -k2,2 "$logs/rows"
echo
echo "flake-audit: $tests tests, $failures failures"
((failures == 0))
