"""Python's standard-library HTTP servers as they ship, for `bench-client probe`: every
default kept, so that the probe is tried on what a reader runs, not on a server shaped for it
(reference/stubs/stub_server.py raises its backlog and closes every connection; this does
neither).

- `http`: `http.server.HTTPServer`, one thread that accepts and serves each connection in
  turn (the probe's verdict on `/slow`: serialises);
- `threading`: `http.server.ThreadingHTTPServer`, a thread per connection (concurrent).

Both keep socketserver's listen backlog of 5 (`request_queue_size`): ten connections at once
overflow it, and the kernel drops the SYNs it has no room for. The handler speaks HTTP/1.0,
`BaseHTTPRequestHandler`'s default, which closes each connection after its answer; with
`--http11` it sets `protocol_version = "HTTP/1.1"`, as handlers that send `Content-Length`
commonly do, and keeps each connection open for the client's next request.

Routes: `GET /slow` sleeps 200 ms (`time.sleep`) and answers; `GET /ping` answers at once.
Each request is logged on stderr, as the handler does by default.

Started as `python3 stdlib_server.py KIND [--http11] --port 0`, it prints
`listening on http://127.0.0.1:PORT` once it listens, and exits at once on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import http.server
import os
import signal
import time

SLOW_S = 0.2


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(SLOW_S)
            self.reply(200, b"slow\n")
        elif self.path == "/ping":
            self.reply(200, b"pong\n")
        else:
            self.reply(404, b"not found\n")

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class KeepAliveHandler(Handler):
    protocol_version = "HTTP/1.1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["http", "threading"])
    parser.add_argument("--http11", action="store_true", help="HTTP/1.1 keep-alive")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server_class = {
        "http": http.server.HTTPServer,
        "threading": http.server.ThreadingHTTPServer,
    }[args.kind]
    handler = KeepAliveHandler if args.http11 else Handler
    server = server_class(("127.0.0.1", args.port), handler)
    # A request may be sleeping on any thread: leave at once, as a killed process would.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: os._exit(0))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
