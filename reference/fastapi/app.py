"""The four demo routes on FastAPI: the original Python demonstration, beside the Rust stacks.

- Reactor: uvicorn with one worker runs one event loop (asyncio's, or uvloop's) on the main
  thread. That thread runs every `async def` handler, parses HTTP and drives the sockets and
  timers: it is the only reactor thread.
- Offload: a plain `def` handler is not run on the loop: Starlette hands it to anyio's
  threadpool (`anyio.to_thread.run_sync`, 40 "AnyIO worker thread"s by default) and awaits it.

Start it with serve.py, which sets SETTINGS before uvicorn loads the app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

MAX_SLEEP_MS = 10_000
ROUTES = ("/ping", "/bad", "/ok-blocking", "/ok-def", "/ok-await", "/stalls")


@dataclass
class Settings:
    """What serve.py's command line chose."""

    http: str = "h11"  # the HTTP parser uvicorn was told to use
    sleep_ms: int = 500  # a work route's sleep without ?ms=
    blocking_threads: int | None = None  # the threadpool's size; None keeps anyio's 40
    stall_ms: int = 100  # /stalls threshold; 0 turns the detector (and debug mode) off


SETTINGS = Settings()


# --- The four routes -------------------------------------------------------------------------

app = FastAPI(
    docs_url=None, redoc_url=None, openapi_url=None,  # only the demo's routes exist
    redirect_slashes=False,  # "/bad/" is an unknown path, as on the Rust servers
    lifespan=lambda app: lifespan(app),  # defined at the end: notes the loop thread
)


@app.get("/ping")
async def ping():
    # Runs on the loop thread and returns at once: it answers fast only if the loop is free.
    return {"ok": True, "server": server_name(), "runtime": runtime(), "reactor_threads": 1}


@app.get("/bad")
async def bad(request: Request):
    # Blocks the loop: the one thread that should serve every other request sleeps instead.
    ms = sleep_ms(request)
    work = work_here("/bad", "async def + time.sleep", ms)
    time.sleep(ms / 1000)
    return work


@app.get("/ok-def")
@app.get("/ok-blocking")
def ok_def(request: Request):
    # Frees the loop: FastAPI runs a plain `def` on a threadpool thread and awaits it there.
    ms = sleep_ms(request)
    work = work_here("/ok-blocking", "def + time.sleep", ms)
    time.sleep(ms / 1000)
    return work


@app.get("/ok-await")
async def ok_await(request: Request):
    # Frees the loop: the task yields to a timer, and the thread serves others meanwhile.
    ms = sleep_ms(request)
    work = work_here("/ok-await", "async def + await asyncio.sleep", ms)
    await asyncio.sleep(ms / 1000)
    return work


@app.get("/stalls")
async def stalls():
    # Runs on the loop thread: what the stall detector has seen since start.
    return STALLS.report()


# --- What every work route shares --------------------------------------------------------------

_loop_thread: int | None = None  # threading.get_ident() of the thread running the event loop


def work_here(route: str, how: str, ms: int) -> dict:
    """The body of a work route, written on the thread that is about to sleep (or wait).
    `route` is the route's canonical path, as on the Rust servers: /ok-def answers /ok-blocking."""
    return {
        "route": route,
        "how": how,
        "slept_ms": ms,
        "thread": threading.current_thread().name,
        # Found, not assumed: is this the thread that runs the event loop?
        "on_reactor": threading.get_ident() == _loop_thread,
    }


# Like Rust's u64::from_str, which the Rust servers use: ASCII digits, an optional leading "+".
_WHOLE_NUMBER = re.compile(r"\+?[0-9]+")


def sleep_ms(request: Request) -> int:
    """The request's valid ?ms=, else the default; a 400 otherwise. Other parameters are ignored.

    Parsed by hand rather than declared as `ms: int`, which FastAPI would answer with a 422."""
    values = request.query_params.getlist("ms")
    if not values:
        return SETTINGS.sleep_ms
    if len(values) > 1:
        raise HTTPException(400, "`ms` may be given only once")
    value = values[0]
    if _WHOLE_NUMBER.fullmatch(value) and int(value) <= MAX_SLEEP_MS:
        return int(value)
    raise HTTPException(
        400,
        f"`ms` must be a whole number of milliseconds from 0 to {MAX_SLEEP_MS}, "
        f"got {json.dumps(value)}",
    )


@app.exception_handler(HTTPException)
async def error_as_json(request: Request, exc: HTTPException) -> JSONResponse:
    """Every 4xx as `{"error": ...}`: our 400s, and the router's own 404 and 405."""
    path, method = request.url.path, request.method
    if exc.status_code == 404:
        error = f"no route at {json.dumps(path)}; try {', '.join(ROUTES)}"
    elif exc.status_code == 405:
        error = f"{path} answers GET only, not {method}"
    else:
        error = str(exc.detail)
    return JSONResponse({"error": error}, status_code=exc.status_code, headers=exc.headers)


# --- What /ping says about the running loop ----------------------------------------------------


def server_name() -> str:
    return "fastapi-uvloop" if _is_uvloop(asyncio.get_running_loop()) else "fastapi-asyncio"


def runtime() -> str:
    """The loop actually running, the parser uvicorn was given, and the threadpool's size now."""
    loop = asyncio.get_running_loop()
    if _is_uvloop(loop):
        import uvloop

        name, notes = f"uvloop {uvloop.__version__}", []
        get_version = getattr(uvloop.loop, "libuv_get_version", None)
        if get_version is not None:
            v = get_version()
            notes.append(f"libuv {v >> 16 & 0xFF}.{v >> 8 & 0xFF}.{v & 0xFF}")
    else:
        selector = getattr(loop, "_selector", None)
        name, notes = f"asyncio {type(loop).__name__}", []
        if selector is not None:
            notes.append(type(selector).__name__)
    if loop.get_debug():
        notes.append("debug mode")
    if notes:
        name += f" ({', '.join(notes)})"
    pool = anyio.to_thread.current_default_thread_limiter().total_tokens
    return f"{name} + {SETTINGS.http}, threadpool {pool}"


def _is_uvloop(loop: asyncio.AbstractEventLoop) -> bool:
    return type(loop).__module__.startswith("uvloop")


# --- The stall detector ------------------------------------------------------------------------


class StallLog(logging.Handler):
    """Counts the warnings a loop in debug mode logs, on the `asyncio` logger, for one callback
    or task step that held the loop longer than `slow_callback_duration`:
    "Executing <Task ... name='Task-7' coro=<...>> took 0.500 seconds". asyncio and uvloop both
    log them (uvloop also in the same words). The records still reach stderr through the root
    logger that serve.py configures.

    by_route: the message names the task, not the route. Each request runs in a task of its own
    (uvicorn creates one per request), so a small ASGI middleware (RouteOfTask, below) notes
    which path each request task serves, and a logged task name is booked to that path. A stall
    in anything else (a protocol callback, a timer) counts, but under no route."""

    _PATTERN = re.compile(r"Executing (.*) took ([0-9.]+) seconds", re.DOTALL)
    _TASK_NAME = re.compile(r"name='([^']*)'")

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.threshold_ms = 0
        self.loop_kind = "asyncio"
        self.slow_polls = 0
        self.longest_ms = 0.0
        self.by_route: dict[str, dict] = {}  # "GET /bad" -> slow_polls, longest_ms
        self._route_of_task: dict[str, str] = {}  # task name -> path, while the task lives

    def start(self, loop: asyncio.AbstractEventLoop, stall_ms: int) -> None:
        self.threshold_ms = stall_ms
        self.loop_kind = "uvloop" if _is_uvloop(loop) else "asyncio"
        if stall_ms > 0:
            loop.set_debug(True)
            loop.slow_callback_duration = stall_ms / 1000
            logging.getLogger("asyncio").addHandler(self)

    def stop(self) -> None:
        logging.getLogger("asyncio").removeHandler(self)

    def remember(self, task: asyncio.Task | None, path: str) -> None:
        if self.threshold_ms <= 0 or task is None:
            return
        name = task.get_name()
        # Labelled as the Rust servers label theirs: method and route, "GET /bad".
        self._route_of_task[name] = f"GET {path}" if path in ROUTES else "GET (unmatched)"
        # A done callback runs in a later loop iteration than the step that finished the task,
        # so after that step's warning has been logged and booked.
        task.add_done_callback(lambda _: self._route_of_task.pop(name, None))

    def emit(self, record: logging.LogRecord) -> None:
        found = self._PATTERN.fullmatch(record.getMessage())
        if found is None:
            return  # some other asyncio warning
        seconds = record.args[-1] if isinstance(record.args, tuple) and record.args else None
        if not isinstance(seconds, float):
            seconds = float(found.group(2))
        ms = seconds * 1000
        self.slow_polls += 1
        self.longest_ms = max(self.longest_ms, ms)
        task = self._TASK_NAME.search(found.group(1))
        route = self._route_of_task.get(task.group(1)) if task else None
        if route is not None:
            seen = self.by_route.setdefault(route, {"slow_polls": 0, "longest_ms": 0.0})
            seen["slow_polls"] += 1
            seen["longest_ms"] = round(max(seen["longest_ms"], ms), 1)

    def report(self) -> dict:
        on = self.threshold_ms > 0
        return {
            "threshold_ms": self.threshold_ms,
            "slow_polls": self.slow_polls,
            "longest_ms": round(self.longest_ms, 1),
            "by_route": dict(self.by_route),
            "detector": (
                f"{self.loop_kind} debug mode (slow_callback_duration)" if on else "off (--stall-ms 0)"
            ),
        }


STALLS = StallLog()


class RouteOfTask:
    """ASGI middleware: notes which path the current request task serves, for /stalls."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            STALLS.remember(asyncio.current_task(), scope["path"])
        await self.app(scope, receive, send)


app.add_middleware(RouteOfTask)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Runs on the loop thread before the first request: notes that thread, sizes the
    threadpool (anyio keeps one default limiter per loop) and starts the stall detector."""
    global _loop_thread
    _loop_thread = threading.get_ident()
    if SETTINGS.blocking_threads is not None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = SETTINGS.blocking_threads
    STALLS.start(asyncio.get_running_loop(), SETTINGS.stall_ms)
    try:
        yield
    finally:
        STALLS.stop()
