"""Three servers that are not this project's, each a few lines of Python's standard library,
for `bench-client probe` to give a verdict on: the probe must tell them apart from outside,
as it would the reader's own server.

- `single`: `http.server.HTTPServer`, one thread doing everything: a slow request holds the
  health check (the probe's verdict: serialises);
- `pool`: the same server handing each connection to a pool of `--workers` threads, the
  health check queued behind the slow requests like any other (bounded, about K at a time);
- `threads`: `http.server.ThreadingHTTPServer`, a thread per connection (concurrent).

Routes: `GET /` answers at once (the health check); `GET|POST /work?ms=N` sleeps N ms
(`time.sleep`) and answers; `/fail` answers 500; `/hang` sleeps an hour. HTTP/1.0: every
answer closes its connection, so that the one thread of `single` is never held by a client
keeping a connection open.

Started as `python3 stub_server.py KIND [--workers K] --port 0`, it prints
`listening on http://127.0.0.1:PORT`, as the project's servers do, and exits at once on
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import signal
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

# Ten connections arriving at once must wait in the kernel's accept queue, not be dropped:
# socketserver's default backlog is 5.
BACKLOG = 128
MAX_SLEEP_MS = 10_000


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/":
            self.reply(200, {"ok": True})
        elif url.path == "/work":
            self.work(url.query)
        elif url.path == "/fail":
            self.reply(500, {"error": "this route always fails"})
        elif url.path == "/hang":
            time.sleep(3600)
        else:
            self.reply(404, {"error": f"no route {url.path}"})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/work":
            self.work(url.query)
        else:
            self.reply(404, {"error": f"no POST route {url.path}"})

    def work(self, query: str) -> None:
        values = urllib.parse.parse_qs(query).get("ms", ["100"])
        try:
            ms = int(values[0])
        except ValueError:
            self.reply(400, {"error": f"ms must be an integer, got {values[0]!r}"})
            return
        if not 0 <= ms <= MAX_SLEEP_MS:
            self.reply(400, {"error": f"ms must be 0 to {MAX_SLEEP_MS}"})
            return
        time.sleep(ms / 1000)
        self.reply(200, {"slept_ms": ms})

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Single(http.server.HTTPServer):
    request_queue_size = BACKLOG


class Threads(http.server.ThreadingHTTPServer):
    request_queue_size = BACKLOG


class Pool(http.server.HTTPServer):
    """Each accepted connection is handled on a pool of `workers` threads."""

    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], workers: int) -> None:
        super().__init__(address, Handler)
        self.pool = ThreadPoolExecutor(workers)

    def process_request(self, request, client_address) -> None:
        self.pool.submit(self.handle_on_pool, request, client_address)

    def handle_on_pool(self, request, client_address) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["single", "pool", "threads"])
    parser.add_argument("--workers", type=int, default=4, help="the pool's threads (pool)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    address = ("127.0.0.1", args.port)
    if args.kind == "single":
        server = Single(address, Handler)
    elif args.kind == "threads":
        server = Threads(address, Handler)
    else:
        server = Pool(address, args.workers)
    # A request may be sleeping on any thread: leave at once, as a killed process would.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: os._exit(0))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
