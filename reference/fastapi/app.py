"""The demo routes on FastAPI: the original Python demonstration, beside the Rust stacks.

- Reactor: uvicorn with one worker runs one event loop (asyncio's, or uvloop's) on the main
  thread. That thread runs every `async def` handler, parses HTTP and drives the sockets and
  timers: it is the only reactor thread.
- Offload: a plain `def` handler is not run on the loop: Starlette hands it to anyio's
  threadpool (`anyio.to_thread.run_sync`, 40 "AnyIO worker thread"s by default) and awaits it.
- CPU: `/bad-cpu` on the loop, `/ok-cpu-blocking` on the threadpool (where the GIL lets one
  thread compute at a time, the loop's included), `/ok-cpu-yield` on the loop with
  `await asyncio.sleep(0)` every ~1 ms, `/ok-cpu-pool` in a process pool of one worker per core.
- The hidden blockers: an HTTP call to a slow upstream (httpx), an SQLite query (sqlite3,
  aiosqlite) and a whole-file read, each on the loop (`/bad-*`), on the threadpool
  (`/ok-*-blocking`) and awaited (`/ok-*-await`).

Start it with serve.py, which sets SETTINGS before uvicorn loads the app.
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import json
import logging
import math
import multiprocessing
import os
import re
import signal
import sqlite3
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager, closing, contextmanager, nullcontext
from dataclasses import dataclass

import aiosqlite
import anyio.to_thread
import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

MAX_SLEEP_MS = 10_000
ROUTES = (
    "/ping", "/bad", "/ok-blocking", "/ok-def", "/ok-await",
    "/bad-cpu", "/ok-cpu-blocking", "/ok-cpu-yield", "/ok-cpu-pool",
    "/bad-http", "/ok-http-blocking", "/ok-http-await", "/bad-db", "/ok-db-blocking",
    "/ok-db-await", "/bad-file", "/ok-file-blocking", "/ok-file-await", "/stalls", "/events",
)
# tokio's own answers: the Rust tokio servers serve them, this app answers 404 saying so.
TOKIO_ROUTES = ("/ok-block-in-place", "/join-block-in-place", "/join-spawn-blocking",
                "/bad-after-spawn")


@dataclass
class Settings:
    """What serve.py's command line chose."""

    http: str = "h11"  # the HTTP parser uvicorn was told to use
    sleep_ms: int = 500  # a work route's sleep without ?ms=
    blocking_threads: int | None = None  # the threadpool's size; None keeps anyio's 40
    # sleep_ms is also the CPU time of a CPU route without ?ms=
    stall_ms: int = 100  # /stalls threshold; 0 turns the detector (and debug mode) off
    upstream: str | None = None  # --upstream HOST:PORT, the HTTP routes' slow upstream
    db: str | None = None  # --db PATH, the database routes' SQLite file, set up and calibrated
    passes_per_ms: float = 0.0  # its query's passes per ms, from prepare_database()
    file: str | None = None  # --file PATH, the file the file routes read whole
    variants: tuple[str, ...] = ()  # --variant NAME: the variants it runs as (VARIANTS)


SETTINGS = Settings()


# --- The sleep routes ------------------------------------------------------------------------

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


# --- The CPU routes --------------------------------------------------------------------------


@app.get("/bad-cpu")
async def bad_cpu(request: Request):
    # Blocks the loop: the one thread that should serve every other request computes instead.
    ms = sleep_ms(request)
    return burn_here("/bad-cpu", "async def + burn", ms)


@app.get("/ok-cpu-blocking")
def ok_cpu_blocking(request: Request):
    # Frees the loop in name only: the threadpool thread computes holding the GIL, which the
    # loop thread needs too, so the loop gets a turn only every switch interval (5 ms).
    ms = sleep_ms(request)
    return burn_here("/ok-cpu-blocking", "def + burn", ms)


@app.get("/ok-cpu-yield")
async def ok_cpu_yield(request: Request):
    # Shares the loop: after each ~1 ms slice `await asyncio.sleep(0)` lets it serve others.
    ms = sleep_ms(request)
    work = work_here("/ok-cpu-yield", "async def + burn in slices + await asyncio.sleep(0)", ms)
    return with_cost(work, *await burn_in_slices(ms))


@app.get("/ok-cpu-pool")
async def ok_cpu_pool(request: Request):
    # Frees the loop and the GIL: the work runs in a worker process, one per core, awaited.
    ms = sleep_ms(request)
    return await asyncio.get_running_loop().run_in_executor(_cpu_pool, burn_in_worker, ms)


@app.get("/stalls")
async def stalls():
    # Runs on the loop thread: what the stall detector has seen since start.
    return STALLS.report()


@app.get("/events")
async def events():
    # Runs on the loop thread: the order of events since the last call, which it forgets.
    return EVENTS.drain()


# --- The hidden blockers ---------------------------------------------------------------------
#
# Blocking calls that do not look like a sleep: an HTTP request to a slow upstream, an SQLite
# query, a whole-file read. Each in the three shapes of the sleep routes. Besides the work body
# they answer `call_ms` (the call's wall time), `cpu_ms` (the CPU time of the thread that ran
# it; null when awaited) and `detail`.


@app.get("/bad-http")
async def bad_http(request: Request):
    # Blocks the loop: the loop thread waits on the upstream's socket, serving no one meanwhile.
    ms = sleep_ms(request)
    url = upstream_url(ms)
    work = work_here("/bad-http", "async def + httpx.Client.get", ms)
    with upstream_errors(), timed() as call:
        response = _http.get(url)
    return call.answer(work, upstream_answered(response, ms))


@app.get("/ok-http-blocking")
def ok_http_blocking(request: Request):
    # Frees the loop: the same blocking call waits on a threadpool thread instead.
    ms = sleep_ms(request)
    url = upstream_url(ms)
    work = work_here("/ok-http-blocking", "def + httpx.Client.get", ms)
    with upstream_errors(), timed() as call:
        response = _http.get(url)
    return call.answer(work, upstream_answered(response, ms))


@app.get("/ok-http-await")
async def ok_http_await(request: Request):
    # Frees the loop: the task yields while the socket has nothing to read; the thread serves
    # others meanwhile.
    ms = sleep_ms(request)
    url = upstream_url(ms)
    work = work_here("/ok-http-await", "async def + await httpx.AsyncClient.get", ms)
    with upstream_errors(), timed(on_this_thread=False) as call:
        response = await _ahttp.get(url)
    return call.answer(work, upstream_answered(response, ms))


@app.get("/bad-db")
async def bad_db(request: Request):
    # Blocks the loop: SQLite scans the table on the loop thread, which serves no one meanwhile.
    ms = sleep_ms(request)
    passes = query_passes(ms)
    work = work_here("/bad-db", "async def + sqlite3", ms)
    with database_errors(), timed() as call:
        with closing(sqlite3.connect(_db_uri, uri=True, timeout=BUSY_TIMEOUT_S)) as db:
            [(rows,)] = db.execute(QUERY, (passes,)).fetchall()
    return call.answer(work, f"counted {rows} rows in {passes} passes")


@app.get("/ok-db-blocking")
def ok_db_blocking(request: Request):
    # Frees the loop: the same query runs on a threadpool thread (sqlite3 lets go of the GIL
    # while SQLite works).
    ms = sleep_ms(request)
    passes = query_passes(ms)
    work = work_here("/ok-db-blocking", "def + sqlite3", ms)
    with database_errors(), timed() as call:
        with closing(sqlite3.connect(_db_uri, uri=True, timeout=BUSY_TIMEOUT_S)) as db:
            [(rows,)] = db.execute(QUERY, (passes,)).fetchall()
    return call.answer(work, f"counted {rows} rows in {passes} passes")


@app.get("/ok-db-await")
async def ok_db_await(request: Request):
    # Frees the loop: aiosqlite runs the query on its connection's own thread and the task
    # awaits the result; the loop thread serves others meanwhile.
    ms = sleep_ms(request)
    passes = query_passes(ms)
    work = work_here("/ok-db-await", "async def + await aiosqlite", ms)
    with database_errors(), timed(on_this_thread=False) as call:
        async with _db_pool.connection() as db:
            [(rows,)] = await db.execute_fetchall(QUERY, (passes,))
    return call.answer(work, f"counted {rows} rows in {passes} passes")


@app.get("/bad-file")
async def bad_file():
    # Blocks the loop: the loop thread copies the whole file into memory, serving no one meanwhile.
    path = file_path()
    work = work_here("/bad-file", "async def + open().read()", 0)
    with file_errors(path), timed() as call:
        with open(path, "rb") as file:
            data = file.read()
    return call.answer(work, f"read {len(data)} bytes")


@app.get("/ok-file-blocking")
def ok_file_blocking():
    # Frees the loop: the same read runs on a threadpool thread.
    path = file_path()
    work = work_here("/ok-file-blocking", "def + open().read()", 0)
    with file_errors(path), timed() as call:
        with open(path, "rb") as file:
            data = file.read()
    return call.answer(work, f"read {len(data)} bytes")


@app.get("/ok-file-await")
async def ok_file_await():
    # Frees the loop: the same read runs on the loop's default executor (asyncio has no file
    # API of its own: this is what aiofiles does too) and the task awaits it.
    path = file_path()
    work = work_here("/ok-file-await", "async def + await asyncio.to_thread(open().read())", 0)
    with file_errors(path), timed(on_this_thread=False) as call:
        data = await asyncio.to_thread(read_whole, path)
    return call.answer(work, f"read {len(data)} bytes")


# --- What every work route shares --------------------------------------------------------------

_loop_thread: int | None = None  # threading.get_ident() of the thread running the event loop
_loop_pid: int | None = None  # and its process: a forked worker's one thread has the same ident


def work_here(route: str, how: str, ms: int) -> dict:
    """The body of a work route, written on the thread that is about to sleep (or wait, or
    compute). `route` is the route's canonical path, as on the Rust servers: /ok-def answers
    /ok-blocking."""
    return {
        "route": route,
        "how": how,
        "slept_ms": ms,
        "thread": threading.current_thread().name,
        "thread_id": threading.get_native_id(),
        # Found, not assumed: is this the thread that runs the event loop?
        "on_reactor": threading.get_ident() == _loop_thread and os.getpid() == _loop_pid,
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


# --- CPU work, measured on the thread's own CPU clock ------------------------------------------
#
# The same computation as the Rust servers' (demo_contract::cpu): a 64 KiB buffer hashed again
# and again, each digest feeding the next pass, until the thread doing it has spent the CPU time
# asked for on its own clock (time.thread_time, CLOCK_THREAD_CPUTIME_ID), so that a unit of work
# is the same however many threads share the cores. Fed to blake2b in 1 KiB chunks: hashlib
# releases the GIL only for 2 KiB or more at once, so the work holds the GIL as pure-Python
# computation would.

_BUFFER = memoryview(bytes(range(256)) * 256)  # 64 KiB
_CHUNK = 1024
_SLICE_S = 0.001  # CPU time of one slice of burn_in_slices: the longest the loop is held


def _hash_for(cpu_s: float, digest: bytes) -> tuple[float, bytes]:
    """Hashes on this thread until it has spent `cpu_s` of CPU time since the call, checking the
    clock after each pass over the buffer; returns the CPU time spent and the last digest."""
    start = time.thread_time()
    used = 0.0
    while used < cpu_s:
        hasher = hashlib.blake2b(digest)
        for at in range(0, len(_BUFFER), _CHUNK):
            hasher.update(_BUFFER[at:at + _CHUNK])
        digest = hasher.digest()
        used = time.thread_time() - start
    return used, digest


def burn(ms: int) -> tuple[float, float]:
    """Computes on this thread, at once, for `ms` of its CPU time: (cpu_ms, wall_ms)."""
    start = time.perf_counter()
    used, _ = _hash_for(ms / 1000, b"")
    return used * 1000, (time.perf_counter() - start) * 1000


async def burn_in_slices(ms: int) -> tuple[float, float]:
    """The same in slices of about 1 ms of CPU time, yielding to the loop between them:
    (cpu_ms summed over the slices, wall_ms)."""
    start = time.perf_counter()
    used, digest = 0.0, b""
    while used < ms / 1000:
        spent, digest = _hash_for(min(_SLICE_S, ms / 1000 - used), digest)
        used += spent
        if used < ms / 1000:
            await asyncio.sleep(0)
    return used * 1000, (time.perf_counter() - start) * 1000


def with_cost(work: dict, cpu_ms: float, wall_ms: float) -> dict:
    """A work body and what the work cost, as the Rust servers' CPU routes answer."""
    return {**work, "cpu_ms": round(cpu_ms, 2), "work_wall_ms": round(wall_ms, 2)}


def burn_here(route: str, how: str, ms: int) -> dict:
    """The body of a CPU route, after computing here, at once, for `ms` of CPU time."""
    work = work_here(route, how, ms)
    return with_cost(work, *burn(ms))


def burn_in_worker(ms: int) -> dict:
    """/ok-cpu-pool's work, run in a pool worker process: named by its process."""
    work = work_here("/ok-cpu-pool", f"async def + await run_in_executor(process pool of "
                     f"{_cpu_workers()}) + burn", ms)
    work["thread"] = f"process {os.getpid()} {threading.current_thread().name}"
    return with_cost(work, *burn(ms))


def _cpu_workers() -> int:
    """One worker process per core this process may run on, as the Rust servers' rayon pool."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_cpu_pool: ProcessPoolExecutor | None = None  # made in lifespan(), shut down when it ends


def _cpu_worker_started() -> None:
    """Runs first in each worker. A worker is a fork of the server: its signals are the
    server's business. Ctrl-C reaches the whole process group, but the server shuts the pool
    down; SIGTERM ends the worker; and on Linux the worker gets SIGTERM when the server dies,
    even by SIGKILL, instead of living on with a copy of the listening socket."""
    signal.set_wakeup_fd(-1)  # the loop's wake-up pipe belongs to the server
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _start_cpu_pool() -> ProcessPoolExecutor:
    # fork, not Python's per-version default: the workers start at once from the loaded app,
    # before the server has started any thread of its own.
    return ProcessPoolExecutor(
        max_workers=_cpu_workers(),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_cpu_worker_started,
    )


@app.exception_handler(HTTPException)
async def error_as_json(request: Request, exc: HTTPException) -> JSONResponse:
    """Every error as `{"error": ...}`: our 400s and the hidden blockers' 5xx, and the router's
    own 404 and 405."""
    path, method = request.url.path, request.method
    if exc.status_code == 404 and path in TOKIO_ROUTES:
        error = (f"{path} is one of tokio's own routes: only the Rust stacks whose "
                 "stack.toml names a handler for it serve it")
    elif exc.status_code == 404:
        error = f"no route at {json.dumps(path)}; try {', '.join(ROUTES)}"
    elif exc.status_code == 405:
        error = f"{path} answers GET only, not {method}"
    else:
        error = str(exc.detail)
    return JSONResponse({"error": error}, status_code=exc.status_code, headers=exc.headers)


# --- What the hidden blockers share ------------------------------------------------------------

UPSTREAM_TIMEOUT_S = 15.0  # the whole request to the upstream: connect, send, answer
BUSY_TIMEOUT_S = 0.5  # SQLite's busy timeout: a locked database fails after it
CALIBRATION_MS = 20.0  # the calibration's query runs until one takes this long
CALIBRATION_REPEATS = 3  # then this many more at that size, the quickest counting
DB_POOL_SIZE = 16  # /ok-db-await's connections, each with a thread of its own (as the Rust
# servers' sqlx pool: more than a burst's requests)

# The query the database routes run: ?1 passes, each a full scan of the table (no index on
# `value`), counting the rows above the pass's number. Real SQLite work whose cost grows with
# ?1, which query_passes() sizes to take about the ?ms= asked for.
QUERY = (
    "WITH RECURSIVE pass(n) AS (SELECT 1 WHERE ?1 >= 1 UNION ALL SELECT n + 1 FROM pass "
    "WHERE n < ?1) SELECT count(*) FROM pass, items WHERE items.value > pass.n"
)
# Creates the table if absent and fills it if empty (10,000 rows), in one transaction, so that
# servers started on the same file at once fill it once. The Rust servers' SQL.
SET_UP = """BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO items (id, value)
  SELECT n, (n * 7919) % 10007 FROM
    (WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10000)
     SELECT n FROM seq)
  WHERE NOT EXISTS (SELECT 1 FROM items);
COMMIT;"""

_http: httpx.Client | None = None  # with --upstream, made in lifespan(), closed when it ends
_ahttp: httpx.AsyncClient | None = None  # likewise
_db_uri: str | None = None  # with --db, the database's read-only URI (prepare_database)
_db_pool: ConnectionPool | None = None  # with --db, opened in lifespan(), closed when it ends


class Timed:
    """Times the call in its `with` block, for the body's `call_ms` and `cpu_ms`: the wall time,
    and, when the call runs on this thread from start to end (on_this_thread), the CPU time
    this thread spent meanwhile (time.thread_time). An awaited call is spread over the loop's
    polls, among other tasks' steps, or runs on another thread: its `cpu_ms` is null."""

    def __init__(self, on_this_thread: bool) -> None:
        self.on_this_thread = on_this_thread
        self.call_ms: float | None = None
        self.cpu_ms: float | None = None

    def __enter__(self) -> Timed:
        self._cpu = time.thread_time() if self.on_this_thread else None
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.call_ms = (time.perf_counter() - self._wall) * 1000
        if self._cpu is not None:
            self.cpu_ms = (time.thread_time() - self._cpu) * 1000

    def answer(self, work: dict, detail: str) -> dict:
        """The body of a hidden blocker's route: the work body, the call's cost, the detail."""
        cpu_ms = round(self.cpu_ms, 2) if self.cpu_ms is not None else None
        return {**work, "call_ms": round(self.call_ms, 2), "cpu_ms": cpu_ms, "detail": detail}


def timed(on_this_thread: bool = True) -> Timed:
    return Timed(on_this_thread)


def upstream_url(ms: int) -> str:
    """The upstream's URL that answers after `ms`; a 503 without --upstream."""
    if SETTINGS.upstream is None:
        raise HTTPException(503, "no upstream: start the server with --upstream HOST:PORT")
    return f"http://{SETTINGS.upstream}/delay?ms={ms}"


@contextmanager
def upstream_errors():
    """A call to the upstream that failed (refused, reset, timed out, ...) as a 502."""
    try:
        yield
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise HTTPException(502, f"upstream {SETTINGS.upstream}: {_reason(error)}") from None


def _reason(error: BaseException) -> str:
    """The error's message, and its root cause's when that is an OSError that says more: the
    async client's failed connect is anyio's "All connection attempts failed", its timeouts
    say nothing (the blocking client's say "timed out")."""
    reason = str(error) or ("timed out" if isinstance(error, httpx.TimeoutException)
                            else type(error).__name__)
    root, cause = error, error
    while cause is not None:  # what it was raised from, or while handling (even `from None`)
        root, cause = cause, cause.__cause__ or cause.__context__
    if isinstance(root, OSError) and str(root) not in reason:
        reason += f" ({root})"
    return reason


def upstream_answered(response: httpx.Response, ms: int) -> str:
    """The detail of an upstream's 200; any other status is a 502."""
    if response.status_code != 200:
        raise HTTPException(502, f"upstream {SETTINGS.upstream}: answered {response.status_code}")
    return f"upstream answered 200 after {ms} ms"


def http_clients() -> tuple[httpx.Client, httpx.AsyncClient]:
    """The HTTP routes' two clients, one of each kind, shared by all requests (httpx's Client is
    thread-safe). No cap on connections, as hyper's pool has none: a burst is not queued
    behind httpx's default 100. No proxy from the environment: the upstream is reached directly."""
    options = dict(
        timeout=UPSTREAM_TIMEOUT_S,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
        trust_env=False,
    )
    return httpx.Client(**options), httpx.AsyncClient(**options)


def database_uri(path: str) -> str:
    """The URI that opens `path` read-only, as the routes' queries do."""
    return f"file:{urllib.parse.quote(path)}?mode=ro"


def prepare_database(path: str) -> float:
    """--db's set-up, called by serve.py before the server starts: opens the database (creating
    the file if absent), runs SET_UP (a transaction left open by a failure is rolled back when
    the connection closes), then calibrates the query as the blocking routes run it (a
    read-only connection opened, the query run): 1, 2, 4, ... passes until one run takes 20 ms
    or more, then three more at that size, the quickest counting. Returns passes per ms;
    raises sqlite3.Error."""
    global _db_uri
    with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as db:
        db.executescript(SET_UP)
    _db_uri = database_uri(path)
    def run(passes: int) -> float:
        start = time.perf_counter()
        with closing(sqlite3.connect(_db_uri, uri=True, timeout=BUSY_TIMEOUT_S)) as db:
            db.execute(QUERY, (passes,)).fetchall()
        return (time.perf_counter() - start) * 1000

    passes = 1
    while (ms := run(passes)) < CALIBRATION_MS:
        passes *= 2
    # The quickest of four runs at that size: one run on a shared machine may be slowed.
    return passes / min([ms] + [run(passes) for _ in range(CALIBRATION_REPEATS)])


def query_passes(ms: int) -> int:
    """The query's passes that take about `ms`; a 503 without --db."""
    if SETTINGS.db is None:
        raise HTTPException(503, "no database: start the server with --db PATH")
    return math.floor(ms * SETTINGS.passes_per_ms + 0.5)  # half away from zero, as Rust's round


@contextmanager
def database_errors():
    """A query that failed as a 503 when the database is locked (SQLite's busy timeout ran out:
    "database is locked"), else as a 500."""
    try:
        yield
    except sqlite3.Error as error:
        busy = getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY
        raise HTTPException(503 if busy else 500, f"database: {error}") from None


class ConnectionPool:
    """/ok-db-await's small pool of read-only aiosqlite connections. An aiosqlite connection is
    a thread of its own that runs its queries, one at a time; a request borrows one."""

    def __init__(self) -> None:
        self._all: list[aiosqlite.Connection] = []
        self._idle: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()

    @classmethod
    async def open(cls, uri: str, size: int) -> ConnectionPool:
        pool = cls()
        try:
            for _ in range(size):
                db = await aiosqlite.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
                pool._all.append(db)
                pool._idle.put_nowait(db)
        except BaseException:
            await pool.close()
            raise
        return pool

    @asynccontextmanager
    async def connection(self):
        db = await self._idle.get()
        try:
            yield db
        finally:
            self._idle.put_nowait(db)

    async def close(self) -> None:
        for db in self._all:
            await db.close()


def file_path() -> str:
    """The file the file routes read; a 503 without --file."""
    if SETTINGS.file is None:
        raise HTTPException(503, "no file: start the server with --file PATH")
    return SETTINGS.file


@contextmanager
def file_errors(path: str):
    """A read that failed (missing, unreadable, a directory, ...) as a 500."""
    try:
        yield
    except OSError as error:
        raise HTTPException(500, f"reading {path}: {error.strerror or error}") from None


def read_whole(path: str) -> bytes:
    """/ok-file-await's read, the same as the other file routes', in a function to hand over."""
    with open(path, "rb") as file:
        return file.read()


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


# The variants serve.py's --variant takes, with what each changes. pyleak's watchdog is the
# detectors experiment's.
VARIANTS = {
    "pyleak": "pyleak's no_event_loop_blocking around the server's whole life (threshold "
    "100 ms), logging each block of the loop with its stack",
}


def _pyleak_watchdog():
    """With --variant pyleak, pyleak's `no_event_loop_blocking` around the server's whole
    life, as its README uses it around a block of code: a thread schedules a callback on the
    loop and, when the loop has not run it within the threshold (100 ms here, as every
    detector's in the comparison), captures the loop thread's stack and logs "Event loop
    blocked for 0.100s" while the loop is still held (pyleak 0.2.0, `eventloop.py`,
    `_monitor_loop`); a block with the same stack as the last one is added to it, not logged
    again. At exit it logs every block with its stack. Without the variant, nothing."""
    if "pyleak" not in SETTINGS.variants:
        return nullcontext()
    from pyleak import no_event_loop_blocking

    # Its own logger adds a handler of its own; this one reaches stderr once, through the root
    # logger serve.py configures.
    return no_event_loop_blocking(action="log", logger=logging.getLogger("pyleak"), threshold=0.1)


class RouteOfTask:
    """ASGI middleware: notes which path the current request task serves, for /stalls."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            STALLS.remember(asyncio.current_task(), scope["path"])
        await self.app(scope, receive, send)


app.add_middleware(RouteOfTask)


# --- The order of events (--events, GET /events) -----------------------------------------------


class EventLog:
    """The server's own order of events, as the Rust servers record it: each connection accepted
    (`connection_made` of uvicorn's protocol, which serve.py subclasses: see its http_protocol),
    and each request's handler started and ended (RecordEvents, below), in microseconds of
    time.monotonic_ns() since the server's start. Everything that records runs on the loop
    thread, so the list needs no lock."""

    def __init__(self) -> None:
        self.recording = False
        self._start_ns = time.monotonic_ns()
        self._events: list[dict] = []

    def start(self, recording: bool) -> None:
        self.recording = recording
        self._start_ns = time.monotonic_ns()
        self._events = []

    def add(self, what: str, peer: int, route: str | None = None) -> None:
        if not self.recording:
            return
        event = {"at_us": (time.monotonic_ns() - self._start_ns) // 1000, "what": what, "peer": peer}
        if route is not None:
            event["route"] = route
        self._events.append(event)

    def drain(self) -> dict:
        """The body of GET /events: the events since the last call, which are forgotten."""
        events, self._events = self._events, []
        return {"recording": self.recording, "events": events}


EVENTS = EventLog()


class RecordEvents:
    """Pure ASGI middleware (not BaseHTTPMiddleware, which runs the app in a task of its own
    and so changes the scheduling it would record): `started` when the request reaches it,
    `ended` when the app returned, its response sent (written to the transport). Every path
    but /events; the peer is the client's port, `scope["client"][1]`."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] == "/events":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        peer, route = (client[1] if client else 0), scope["path"]
        EVENTS.add("started", peer, route)
        try:
            await self.app(scope, receive, send)
        finally:
            EVENTS.add("ended", peer, route)


def record_events(recording: bool) -> None:
    """Called by serve.py before the app starts: starts the clock, and with --events adds the
    middleware as the outermost of ours (without it, nothing is added)."""
    EVENTS.start(recording)
    if recording:
        app.add_middleware(RecordEvents)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Runs on the loop thread before the first request: notes that thread, sizes the
    threadpool (anyio keeps one default limiter per loop), starts the CPU routes' process pool,
    the hidden blockers' HTTP clients (with --upstream) and database connections (with --db),
    and the stall detector. At exit, shuts the pool down and closes the clients and connections."""
    global _loop_thread, _loop_pid, _cpu_pool, _http, _ahttp, _db_pool
    _loop_thread, _loop_pid = threading.get_ident(), os.getpid()
    if SETTINGS.blocking_threads is not None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = SETTINGS.blocking_threads
    loop = asyncio.get_running_loop()
    _cpu_pool = _start_cpu_pool()
    # One trivial job per worker: every process is up before the first burst, which then does
    # not pay for starting them.
    await asyncio.gather(*(loop.run_in_executor(_cpu_pool, int) for _ in range(_cpu_workers())))
    if SETTINGS.upstream is not None:
        _http, _ahttp = http_clients()
    if SETTINGS.db is not None:
        _db_pool = await ConnectionPool.open(_db_uri, DB_POOL_SIZE)
    STALLS.start(loop, SETTINGS.stall_ms)
    try:
        async with _pyleak_watchdog():
            yield
    finally:
        STALLS.stop()
        _cpu_pool.shutdown(wait=True, cancel_futures=True)
        if _http is not None:
            _http.close()
            await _ahttp.aclose()
        if _db_pool is not None:
            await _db_pool.close()
