"""Runs app.py under uvicorn with the command line of the project's Rust servers.

    reference/fastapi/.venv/bin/python reference/fastapi/serve.py --port 0 --loop uvloop

Binds the socket itself (so --port 0 works and the real port is known), prints exactly one
line on stdout once uvicorn accepts connections, `listening on http://HOST:PORT`, and logs to
stderr only. SIGINT or SIGTERM: uvicorn's graceful shutdown (at most 10 s for requests in
flight, as on the Rust servers), then exit 0. Usage errors exit 2.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import socket
import sqlite3
import sys

# A stop asked for before the server exists (imports take a while) is kept for it: see main().
_server = None
_stop_early = False


def _stop(signum, frame) -> None:
    global _stop_early
    _stop_early = True
    if _server is not None:
        _server.should_exit = True


signal.signal(signal.SIGINT, _stop)
signal.signal(signal.SIGTERM, _stop)

import uvicorn  # noqa: E402
from uvicorn.config import HTTP_PROTOCOLS  # noqa: E402
from uvicorn.importer import import_from_string  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import app as demo  # noqa: E402

# Everything but the readiness line goes to stderr, even a stray print().
READY_OUT, sys.stdout = sys.stdout, sys.stderr

LISTEN_BACKLOG = 65_535  # as the Rust servers: the kernel caps it at net.core.somaxconn
SHUTDOWN_GRACE_S = 10  # as the Rust servers: one maximal ?ms= sleep fits in it


def ranged(low: int, high: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is not {bound}")
        return value

    return parse


def host(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address") from None


def socket_address(text: str) -> str:
    """--upstream's HOST:PORT, as the Rust servers take it (a socket address): an IP address,
    an IPv6 one in brackets, and a port. Written back as they print it: `[::1]:9000`."""
    addr, colon, port = text.rpartition(":")
    if addr.startswith("[") and addr.endswith("]"):
        addr, version = addr[1:-1], 6
    else:
        version = 4
    try:
        ip = ipaddress.ip_address(addr)
        if not colon or ip.version != version or not port.isascii() or not port.isdigit():
            raise ValueError
        port_number = int(port)
        if port_number > 65535:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT (an IP address and a port: 127.0.0.1:9000, [::1]:9000)"
        ) from None
    return f"[{ip}]:{port_number}" if ip.version == 6 else f"{ip}:{port_number}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="serve.py",
        description="FastAPI on uvicorn: the demo routes, /stalls and /events.",
        epilog="Routes: GET /ping, /bad, /ok-blocking (alias /ok-def), /ok-await, /bad-cpu, "
        "/ok-cpu-blocking, /ok-cpu-yield, /ok-cpu-pool, /bad-http, /ok-http-blocking, "
        "/ok-http-await (with --upstream), /bad-db, /ok-db-blocking, /ok-db-await (with --db), "
        "/bad-file, /ok-file-blocking, /ok-file-await (with --file), /stalls, /events; the "
        "sleep, CPU, HTTP and database routes take ?ms=0..10000. Prints `listening on "
        "http://HOST:PORT` on stdout once it accepts connections; SIGINT or SIGTERM stop it "
        "gracefully.",
    )
    parser.add_argument("--host", type=host, default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: loopback only)")
    parser.add_argument("--port", type=ranged(0, 65535), default=8765,
                        help="port to bind; 0 picks any free port (default 8765)")
    parser.add_argument("--threads", type=int, default=1,
                        help="reactor threads: only 1 (one uvicorn worker, one event loop)")
    parser.add_argument("--sleep-ms", type=ranged(0, demo.MAX_SLEEP_MS), default=500,
                        help="sleep of a work route (CPU time of a CPU route) without ?ms=, "
                        "in ms (default 500)")
    parser.add_argument("--blocking-threads", type=ranged(1, 10_000), default=None, metavar="K",
                        help="size of the threadpool that runs `def` handlers "
                        "(anyio's default thread limiter; default: anyio's own, 40)")
    parser.add_argument("--stall-ms", type=ranged(0, 60_000), default=100, metavar="N",
                        help="/stalls counts loop steps longer than N ms, found by the loop's "
                        "debug mode; 0 turns it off (default 100)")
    parser.add_argument("--events", action="store_true",
                        help="record the server's order of events: each connection accepted, "
                        "each handler started and ended (microseconds since start, client port, "
                        "path); GET /events reads and drains it")
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="event loop (default asyncio)")
    parser.add_argument("--http", choices=("h11", "httptools"), default="h11",
                        help="HTTP parser (default h11)")
    parser.add_argument("--upstream", type=socket_address, default=None, metavar="HOST:PORT",
                        help="the slow upstream the HTTP routes call, as `GET /delay?ms=N` "
                        "(it answers after N ms)")
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite database the database routes query; created, with its "
                        "table, if absent")
    parser.add_argument("--file", default=None, metavar="PATH",
                        help="the file the file routes read, whole")
    parser.add_argument("--variant", action="append", default=[], choices=sorted(demo.VARIANTS),
                        metavar="NAME", help="run as a variant (repeatable): "
                        + "; ".join(f"{name}: {about}" for name, about in demo.VARIANTS.items()))
    args = parser.parse_args()
    if args.threads != 1:
        parser.error(
            f"--threads {args.threads}: only 1 is supported. One uvicorn worker runs one event "
            "loop on one thread; uvicorn --workers N would start N separate processes, each "
            "with its own loop, not N threads polling one server"
        )
    return args


class Server(uvicorn.Server):
    """uvicorn's server, announcing readiness once its startup (the app's lifespan included)
    is over and the socket is being served."""

    def __init__(self, config: uvicorn.Config, announce: str, ready_line: str) -> None:
        super().__init__(config)
        self.announce, self.ready_line = announce, ready_line

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            print(self.announce, file=sys.stderr, flush=True)
            try:
                print(self.ready_line, file=READY_OUT, flush=True)
            except BrokenPipeError:
                pass  # whoever waited for the line is gone: nothing to report to


def http_protocol(name: str, events: bool) -> str | type:
    """uvicorn's `http=`: the parser's name; with --events, a subclass of the protocol class that
    name stands for, recording `accepted` in `connection_made`. The loop calls that soon after
    its accept(), not at once: asyncio accepts in the listening socket's callback, makes the
    transport in a task of its own and schedules connection_made (two loop iterations later);
    uvloop accepts and makes the transport in libuv's callback and schedules connection_made
    (one iteration later)."""
    if not events:
        return name
    base = import_from_string(HTTP_PROTOCOLS[name])

    class RecordingAccepts(base):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            demo.EVENTS.add("accepted", self.client[1] if self.client else 0)

    RecordingAccepts.__name__ = RecordingAccepts.__qualname__ = f"{base.__name__}RecordingAccepts"
    return RecordingAccepts


def listen(addr: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    # proto=IPPROTO_TCP as getaddrinfo gives it to uvicorn's own bind: asyncio sets TCP_NODELAY
    # only on accepted sockets whose proto says TCP. With proto 0, Nagle's algorithm holds the
    # response body until the client ACKs the headers: about 40 ms per keep-alive request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # Restarting on the same port must not fail on the last run's sockets in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((addr, port))
    sock.listen(LISTEN_BACKLOG)
    sock.setblocking(False)
    return sock


def main() -> int:
    args = parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(name)s: %(levelname)s: %(message)s")
    passes_per_ms = 0.0
    if args.db is not None:
        try:
            passes_per_ms = demo.prepare_database(args.db)
        except sqlite3.Error as error:
            print(f"serve.py: --db {args.db}: {error}", file=sys.stderr)
            return 1
    demo.SETTINGS = demo.Settings(
        http=args.http,
        sleep_ms=args.sleep_ms,
        blocking_threads=args.blocking_threads,
        stall_ms=args.stall_ms,
        upstream=args.upstream,
        db=args.db,
        passes_per_ms=passes_per_ms,
        file=args.file,
        variants=tuple(args.variant),
    )
    demo.record_events(args.events)
    try:
        sock = listen(args.host, args.port)
    except OSError as error:
        print(f"serve.py: cannot bind {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    bound = sock.getsockname()
    shown = f"[{bound[0]}]:{bound[1]}" if sock.family == socket.AF_INET6 else f"{bound[0]}:{bound[1]}"
    scope = "loopback only; --host to change" if ipaddress.ip_address(bound[0]).is_loopback \
        else "reachable from other hosts"
    pool = args.blocking_threads if args.blocking_threads is not None else "40 (anyio's default)"
    stall = f"stalls over {args.stall_ms} ms counted" if args.stall_ms else "stall detector off"
    announce = (
        f"fastapi-{args.loop}: bound to {shown} ({scope}); uvicorn {uvicorn.__version__}, "
        f"{args.loop} + {args.http}, threadpool {pool}, 1 reactor thread; "
        f"default sleep {args.sleep_ms} ms; {stall}"
    )
    if args.upstream is not None:
        announce += f"; upstream {args.upstream}"
    if args.db is not None:
        announce += f"; database {args.db} ({passes_per_ms:.2f} query passes per ms)"
    if args.file is not None:
        announce += f"; file {args.file}"
    config = uvicorn.Config(
        demo.app,
        loop=args.loop,
        http=http_protocol(args.http, args.events),
        ws="none",
        lifespan="on",
        workers=1,
        log_config=None,  # uvicorn's loggers propagate to the root logger: stderr
        log_level="warning",
        access_log=False,
        backlog=LISTEN_BACKLOG,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    global _server
    _server = Server(config, announce, f"listening on http://{shown}")
    # uvicorn installs its own SIGINT/SIGTERM handlers while it serves, then restores ours
    # (_stop) and raises the signal it caught again: ours make that, and a signal that came
    # before uvicorn's handlers were in place, a request to stop. So the process exits 0.
    _server.should_exit = _stop_early
    _server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
