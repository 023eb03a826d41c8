"""Background compiles in a child process, so that they do not slow the program running now.

A tiered program (`lazytorch.runtime.tiered`) runs on the interpreter while it compiles in
the background. Compiling is mostly Python — scheduling, code generation — before the C++
compiler's own process starts, and a thread of the user's process running that Python
takes the interpreter lock from the main thread in turns: measured on the word-language
model of the real-script corpus, each step on the interpreter took 45 ms while a compile
ran beside it against 17 ms with none. So the background thread hands the program to a
child process instead, and only waits (without the lock) for its answer:

* The child is ``python -m lazytorch.runtime.compile_worker``, started at the first
  background compile and kept for the process's life (stopped at exit). It reads one
  request per line on stdin — the program as JSON (`lazytorch.ir.serialize`: the same
  canonical text, hence the same cache key), the compile options and the disk-cache
  directory — compiles it with the C++ backend into that cache, and answers one line.
* The thread then compiles the program itself, which is a disk-cache hit: it loads the
  shared object the child stored. The disk cache is the handoff; its entries are written
  atomically and locked per key, so the two processes never see half an entry.
* **Fallback:** when the child cannot be used — no disk cache or a read-only one, a program
  the JSON format cannot carry (symbolic sizes), the child failed to start, died, or
  reported an error — the thread compiles the program in-process, as before; a compile
  error is then raised (and reported) exactly as without the child.
* The child's compile counters (``compiles``, ``compile_seconds``, ``cache_misses``) are
  added to this process's `lazytorch.metrics`, so they count every compile made for it.

* The child splits a program into one translation unit fewer than there are cores
  (``LAZYTORCH_COMPILE_CORES``), so the script keeps a core while it compiles.

``LAZYTORCH_COMPILE_WORKER=0`` keeps background compiles in a thread of this process.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from lazytorch import metrics
from lazytorch._settings import env_value
from lazytorch.ir.serialize import program_from_json, program_to_json
from lazytorch.runtime.backends import get_backend

__all__ = ["compile_in_child", "enabled", "stop"]

log = logging.getLogger("lazytorch.compile")

# The counters of a compile made by the child that this process adds to its own.
FORWARDED = ("compiles", "compile_seconds", "cache_misses")

_proc: subprocess.Popen[str] | None = None
_broken = False  # the child failed once: every later compile stays in-process
_stopping = False  # the process is exiting: no compile starts anywhere
_registered: list[Any] = []  # stop() is registered with atexit once
_lock = threading.Lock()  # one request at a time (there is one background thread; tests)


def enabled() -> bool:
    """Whether background compiles go to the child (``LAZYTORCH_COMPILE_WORKER``, default
    on)."""
    return bool(env_value("LAZYTORCH_COMPILE_WORKER")) and not _broken


def _start() -> subprocess.Popen[str]:
    global _proc
    if _proc is None or _proc.poll() is not None:
        env = dict(os.environ)
        env["LAZYTORCH_TIERED"] = "0"  # the child compiles; it never runs programs
        if not env_value("LAZYTORCH_COMPILE_CORES"):
            # one core is left to the process running the script meanwhile
            env["LAZYTORCH_COMPILE_CORES"] = str(max(1, (os.cpu_count() or 1) - 1))
        _proc = subprocess.Popen(
            [sys.executable, "-m", "lazytorch.runtime.compile_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
            bufsize=1,
            start_new_session=True,  # its own process group: stop() ends its compilers too
        )
        if not _registered:
            _registered.append(atexit.register(stop))
    return _proc


def compile_in_child(program: Any, options: dict[str, Any], cache_root: str) -> bool:
    """Have the child compile `program` into the disk cache at `cache_root`; returns
    whether it did (False: compile in-process, see the module doc)."""
    global _broken
    try:
        data = program_to_json(program, locs=False)
    except TypeError:
        return False  # symbolic sizes, or an attribute the format has no encoding for
    request = json.dumps({"program": data, "options": options, "cache_dir": cache_root})
    with _lock:
        try:
            proc = _start()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(request + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError as e:
            log.info("compile worker unusable (%s); compiling in-process", e)
            _broken = True
            return False
    if not line:
        if _stopping:
            raise RuntimeError("the process is exiting")
        log.info("compile worker exited; compiling in-process from now on")
        _broken = True
        return False
    reply = json.loads(line)
    for name, value in reply.get("metrics", {}).items():
        metrics.increment(name, value)
    if not reply.get("ok"):
        log.info("compile worker: %s; compiling in-process", reply.get("error"))
        return False
    return True


def stop(exiting: bool = True) -> None:
    """Stop the child and the compilers it runs (at exit; tests pass exiting=False)."""
    global _proc, _stopping
    _stopping = exiting
    proc, _proc = _proc, None
    if proc is None or proc.poll() is not None:
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)  # it leads its group (start_new_session)
        else:  # pragma: no cover - POSIX only
            proc.kill()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):  # pragma: no cover - the kernel's business
        pass


def _serve() -> None:
    """The child: compile each request into the disk cache it names; answer one line each."""
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the channel
    backend = get_backend("cpp")
    for line in sys.stdin:
        request = json.loads(line)
        before = metrics.counters()
        try:
            os.environ["LAZYTORCH_CACHE_DIR"] = request["cache_dir"]
            backend.compile(program_from_json(request["program"]), request["options"])
            reply: dict[str, Any] = {"ok": True}
        except Exception as e:  # reported to the parent, which compiles it itself
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        after = metrics.counters()
        reply["metrics"] = {
            k: after.get(k, 0) - before.get(k, 0)
            for k in FORWARDED
            if after.get(k, 0) != before.get(k, 0)
        }
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()
