#!/usr/bin/env python3
"""Which of a server's threads spend CPU time while it serves a burst: by hand, not part of the
main job (docs/hidden-blockers.md quotes it).

    scripts/thread-cpu.py target/release/demo-axum-compio /ok-file-await /ok-file-blocking

Writes a 256 MiB file (synced, so the page cache holds it), then for each route in turn starts
the server with `--port 0 --file FILE`, sends one request alone (the file into the cache, a pool
thread started), reads every thread's user and system time from /proc/PID/task/*/stat, sends
10 concurrent requests, reads them again, stops the server and prints each thread whose time
grew, the main thread marked. The kernel counts in clock ticks (10 ms here). Removes the file.
"""
import os
import subprocess
import sys
import threading
import time
import urllib.request

N, MIB = 10, 256
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def cpu_by_thread(pid: int) -> dict:
    """(tid, name) -> (user, system) clock ticks, for each live thread of `pid`."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except FileNotFoundError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        times[(tid, name)] = (int(fields[11]), int(fields[12]))
    return times


def burst(binary: str, route: str, path: str) -> None:
    server = subprocess.Popen([binary, "--port", "0", "--file", path],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().split()[-1] + route
        urllib.request.urlopen(url).read()
        before = cpu_by_thread(server.pid)
        requests = [threading.Thread(target=lambda: urllib.request.urlopen(url).read())
                    for _ in range(N)]
        start = time.perf_counter()
        for request in requests:
            request.start()
        for request in requests:
            request.join()
        wall_ms = (time.perf_counter() - start) * 1000
        after = cpu_by_thread(server.pid)
    finally:
        server.terminate()
        server.wait()
    print(f"{route}: {N} concurrent in {wall_ms:.0f} ms; CPU time per thread (user / system, ms):")
    for (tid, name), (user, system) in sorted(after.items()):
        user0, system0 = before.get((tid, name), (0, 0))
        if (user, system) != (user0, system0):
            main = " (main thread)" if tid == str(server.pid) else ""
            print(f"  {name}{main}: {(user - user0) * TICK_MS:.0f} / {(system - system0) * TICK_MS:.0f}")


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} SERVER_BINARY ROUTE...")
    path = f"/tmp/thread-cpu-{os.getpid()}.bin"
    try:
        with open(path, "wb") as file:
            for _ in range(MIB):
                file.write(os.urandom(1 << 20))
            file.flush()
            os.fsync(file.fileno())
        for route in sys.argv[2:]:
            burst(sys.argv[1], route, path)
    finally:
        if os.path.exists(path):
            os.remove(path)


main()
