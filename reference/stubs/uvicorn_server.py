"""uvicorn as it ships, serving a plain ASGI app (no framework), for `bench-client probe`:
every uvicorn default kept (one worker; its listen backlog of 2048; HTTP/1.1 keep-alive for
5 s; the event loop and HTTP parser it picks itself, uvloop and httptools where installed).
It runs on the FastAPI reference app's venv, which pins uvicorn (reference/fastapi/setup.sh
installs it from requirements.txt):

    reference/fastapi/.venv/bin/python reference/stubs/uvicorn_server.py --port 0

Routes: `GET /slow` calls `time.sleep(0.2)` inside the `async` handler, which blocks the one
event loop that serves every connection, the health check's included (the probe's verdict:
serialises, holding the health check); `GET /slow-await` awaits `asyncio.sleep(0.2)`
instead, which yields the loop (concurrent); `GET /ping` answers at once.

It prints `listening on http://127.0.0.1:PORT` once uvicorn listens, logs as uvicorn does,
and on SIGTERM or SIGINT shuts down as uvicorn does, then exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time

import uvicorn

SLOW_S = 0.2


async def app(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    path = scope["path"]
    if path == "/slow":
        time.sleep(SLOW_S)
        await reply(send, 200, b"slow\n")
    elif path == "/slow-await":
        await asyncio.sleep(SLOW_S)
        await reply(send, 200, b"slow\n")
    elif path == "/ping":
        await reply(send, 200, b"pong\n")
    else:
        await reply(send, 404, b"not found\n")


async def lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def reply(send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Server(uvicorn.Server):
    """uvicorn's server, which also says on stdout where it listens: with port 0 the kernel
    picks the port, and the probe's launcher reads it from that line."""

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started:
            port = self.servers[0].sockets[0].getsockname()[1]
            print(f"listening on http://127.0.0.1:{port}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    # uvicorn shuts down gracefully on SIGTERM or SIGINT, then raises the signal again against
    # the handler it found: this one, so that a clean stop exits 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    Server(uvicorn.Config(app, port=args.port)).run()


if __name__ == "__main__":
    main()
