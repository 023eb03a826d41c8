"""A small HTTP JSON inference server for the model in model.py (standard library only).

    python server.py --checkpoint build/checkpoint.lt --port 8000
    python server.py --checkpoint build/checkpoint.lt --port 0 \\
        --cache-archive build/cache.tar.gz --cache-dir /tmp/serve-cache --preload
    LAZYTORCH_RECORD=build/programs.jsonl python server.py --checkpoint ... --selftest

Endpoints:

* ``POST /predict`` with ``{"inputs": [[64 numbers], ...]}`` (1 to 64 rows) answers
  ``{"probabilities": [[10 numbers], ...], "classes": [...]}``; a bad request gets status
  400 and ``{"error": "..."}``.
* ``GET /metrics``: `lazytorch.metrics.prometheus()`, the Prometheus text format.
* ``GET /healthz``: ``{"status": "ok"}`` once the model is loaded.

Startup: ``--cache-dir`` names the compile cache (else LAZYTORCH_CACHE_DIR, else the user's
cache directory); ``--cache-archive`` imports a cache exported on a build machine
(``lazytorch cache export``) into it before any program runs, so the first request loads a
compiled program instead of compiling one; ``--preload`` also runs one batch per warm size
(`model.WARM_SIZES`: 1 row, then 2 rows), so both programs, size 1's and the one over a
dynamic batch size that serves 2 to 64 rows, are in memory before the first request.
When ready the server prints one line, ``serving on http://HOST:PORT`` (``--port 0`` picks
a free port), on stdout; all other output, one line per request included (unless
``--quiet``), goes to stderr.
``--selftest`` runs one batch per warm size and exits instead of serving (the recording
pass of docs/serving.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_T_START = time.perf_counter()  # before lazytorch is imported: startup time includes that

# lazytorch calls OpenBLAS single-threaded (it splits a GEMM over its own OpenMP threads),
# but OpenBLAS still starts a thread pool when it is loaded, and those idle threads spin for
# about 0.1 s. On a machine with few cores that spin competes with the requests served right
# after startup (measured on 2 cores: 3.7 ms instead of 1 ms per request after --preload).
# One thread means no pool. Set before numpy or lazytorch load their OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # model.py sits next to this file (also under `lazytorch run`)
    sys.path.insert(0, str(HERE))

# lazytorch reads LAZYTORCH_CACHE_DIR when its first program runs, not at import, so
# importing here still lets main() point it at --cache-dir.
import model  # noqa: E402

import lazytorch  # noqa: E402
from lazytorch.cli import main as lazytorch_cli  # noqa: E402

MAX_BODY_BYTES = 1 << 20  # 64 rows of 64 numbers fit many times over
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class BadRequest(Exception):
    """A client error: answered with status 400 and ``{"error": str(exc)}``."""


class Handler(BaseHTTPRequestHandler):
    """The endpoints. One instance per request; the server holds the shared state."""

    server: InferenceServer
    protocol_version = "HTTP/1.1"  # keep-alive: a client may send many requests per connection

    def do_GET(self) -> None:
        t0 = time.perf_counter()
        path = urlsplit(self.path).path  # a scraper may add a query string
        if path == "/metrics":
            with self.server.lock:  # the counters are updated by model calls
                text = lazytorch.metrics.prometheus()
            self._send(HTTPStatus.OK, text.encode(), PROMETHEUS_CONTENT_TYPE, t0)
        elif path == "/healthz":
            self._send_json(HTTPStatus.OK, {"status": "ok"}, t0)
        else:
            self._send_json(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: {self.path}"}, t0)

    def do_POST(self) -> None:
        t0 = time.perf_counter()
        if urlsplit(self.path).path != "/predict":
            self._send_json(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: {self.path}"}, t0)
            return
        try:
            rows = self._read_inputs()
        except BadRequest as e:
            self._send_json(HTTPStatus.BAD_REQUEST, {"error": str(e)}, t0)
            return
        # lazytorch records ops into process-wide state and is not thread-safe: one model
        # call at a time. Each call is a few hundred microseconds once its program is loaded.
        with self.server.lock:
            try:
                probs = model.predict(rows)
            except ValueError as e:  # shape or value problems predict found
                self._send_json(HTTPStatus.BAD_REQUEST, {"error": str(e)}, t0)
                return
            except Exception as e:  # a bug or a runtime failure: answer, and keep serving
                traceback.print_exc()
                error = f"internal error: {type(e).__name__}: {e}"
                self._send_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": error}, t0)
                return
        body = {
            "probabilities": probs.tolist(),
            "classes": probs.argmax(axis=1).tolist(),
        }
        self._send_json(HTTPStatus.OK, body, t0, rows=len(rows))

    def _read_inputs(self) -> list[list[float]]:
        """The request's ``inputs`` rows, checked for shape and type (BadRequest if not)."""
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise BadRequest("a Content-Length header is required") from None
        if not 0 <= length <= MAX_BODY_BYTES:
            raise BadRequest(f"Content-Length must be 0..{MAX_BODY_BYTES} bytes, got {length}")
        raw = self.rfile.read(length)
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise BadRequest(f"request body is not JSON: {e}") from None
        if not isinstance(doc, dict) or "inputs" not in doc:
            raise BadRequest('expected a JSON object {"inputs": [[64 numbers], ...]}')
        rows = doc["inputs"]
        if not isinstance(rows, list) or not rows:
            raise BadRequest('"inputs" must be a non-empty list of rows')
        if len(rows) > model.MAX_BATCH:
            raise BadRequest(
                f'"inputs" has {len(rows)} rows; at most {model.MAX_BATCH} per request'
            )
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != model.FEATURES:
                got = f"{len(row)} values" if isinstance(row, list) else type(row).__name__
                raise BadRequest(f"row {i} must be a list of {model.FEATURES} numbers, got {got}")
            # bool is an int subclass in Python; true/false are not pixel values
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row):
                raise BadRequest(f"row {i} holds a value that is not a number")
        return rows

    def _send_json(
        self, status: HTTPStatus, doc: dict[str, Any], t0: float, rows: int | None = None
    ) -> None:
        self._send(status, json.dumps(doc).encode(), "application/json", t0, rows)

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str,
        t0: float,
        rows: int | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status >= 400:
            # After an error the request body may be unread (no or a bad Content-Length):
            # the connection cannot be reused for another request.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)
        if not self.server.quiet:
            what = f" rows={rows}" if rows is not None else ""
            _log(
                f"{self.command} {self.path} {status.value}{what} "
                f"{(time.perf_counter() - t0) * 1e3:.2f} ms"
            )

    def log_message(self, format: str, *args: Any) -> None:
        """Silence http.server's own access log: `_send` logs one line per request."""


class InferenceServer(ThreadingHTTPServer):
    """A threading HTTP server with the lock that serializes model calls."""

    daemon_threads = True  # do not wait for open keep-alive connections at shutdown

    def __init__(self, address: tuple[str, int], quiet: bool) -> None:
        super().__init__(address, Handler)
        self.lock = threading.Lock()
        self.quiet = quiet


def import_cache(archive: Path, cache_dir: str | None) -> None:
    """Import a ``lazytorch cache export`` archive into the cache directory.

    Entries built for another lazytorch version, compiler or CPU are refused by the import
    (they would not load here); the server then still starts, and those programs compile on
    first use. A missing or unreadable archive stops the server (SystemExit).
    """
    argv = ["cache", "import", str(archive)]
    if cache_dir:
        argv += ["--cache-dir", cache_dir]
    t0 = time.perf_counter()
    # The import's report goes to stderr: stdout carries only the "serving on" line.
    with contextlib.redirect_stdout(sys.stderr):
        status = lazytorch_cli(argv)
    if status == 2:
        raise SystemExit(f"server: cannot import the cache archive {archive}")
    if status == 1:
        _log("server: warning: some cache entries were refused; they compile on first use")
    _log(f"server: imported {archive} in {(time.perf_counter() - t0) * 1e3:.0f} ms")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--checkpoint",
        type=Path,
        default=HERE / "build" / "checkpoint.lt",
        help="checkpoint written by train.py (default: build/checkpoint.lt next to this file)",
    )
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    ap.add_argument("--cache-dir", help="compile cache directory (default: LAZYTORCH_CACHE_DIR)")
    ap.add_argument(
        "--cache-archive", type=Path, help="import this cache archive at startup (cache export)"
    )
    ap.add_argument(
        "--preload", action="store_true", help="run one batch per warm size before serving"
    )
    ap.add_argument(
        "--selftest",
        action="store_true",
        help="run one batch per warm size and exit (no server)",
    )
    ap.add_argument("--quiet", action="store_true", help="no per-request log lines")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cache_dir:
        # Set before lazytorch opens its disk cache (at the first program), so that every
        # program of this process is looked up there.
        os.environ["LAZYTORCH_CACHE_DIR"] = os.path.abspath(args.cache_dir)
    if args.cache_archive is not None:
        import_cache(args.cache_archive, args.cache_dir)

    if not args.checkpoint.is_file():
        raise SystemExit(f"server: no checkpoint at {args.checkpoint}; run train.py first")
    model.load(args.checkpoint)

    if args.selftest or args.preload:
        t0 = time.perf_counter()
        outputs = model.warm()
        sizes = ", ".join(str(n) for n in outputs)
        _log(f"server: ran batch sizes {sizes} in {(time.perf_counter() - t0) * 1e3:.0f} ms")
    if args.selftest:
        c = lazytorch.metrics.counters()
        _log(
            f"server: selftest ok: {c['programs_built']} programs "
            f"({c['compiles']} compiled, {c['cache_hits_disk']} loaded from the disk cache)"
        )
        return 0

    httpd = InferenceServer((args.host, args.port), quiet=args.quiet)
    host, port = httpd.server_address[:2]
    _log(
        f"server: ready in {(time.perf_counter() - _T_START) * 1e3:.0f} ms "
        "(import lazytorch, cache import, checkpoint, preload)"
    )
    print(f"serving on http://{host}:{port}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
