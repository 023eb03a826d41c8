"""Tiered execution: a program seen for the first time runs at once, on the interpreter.

Compiling a program costs 0.1-5 s; running it on the NumPy reference interpreter costs
about what torch's eager mode does. An eager-style script builds many programs that run
once or a few times (a loop whose model picks a random depth, printing, data preparation,
each length of a growing sequence), so on the default backend (``auto``) a cut whose
program is not compiled yet does not wait for the compiler:

* **Tier 0.** A program found neither in memory nor in the disk cache runs on the
  interpreter, now.
* **A size variant** of the program last cut at the same line starts one background
  compile over symbolic sizes (one program for every size, as without tiering) and runs
  on the interpreter, as does every other size until that program is ready (it is
  adopted at the first cut after, whatever its size); a variant that does not generalize
  is a first sighting like any other.
* **Compile on the second sighting, in the background.** The second time the same program
  (same structure, sizes and dtypes) is cut, it is handed to one background thread, which
  has a child process compile it (`lazytorch.runtime.compile_worker`; the cut does not
  wait). Programs seen once are never compiled. Meanwhile the interpreter runs NumPy's
  GEMMs on one thread (`lazytorch.runtime.blas_threads`).
* **Switch when ready.** The first cut after the compile finished runs the compiled
  program, and every later one does: the swap is one dictionary write on the main thread;
  the background thread touches no shared state but its job.
* **A failed background compile** leaves the program on the interpreter (which computed
  every result so far), with one warning naming the error.
* **What is not tiered:** an explicit backend (``lazytorch.backend("cpp")`` compiles at
  once, as does ``LAZYTORCH_BACKEND=cpp``), deterministic algorithms (the interpreter and
  the compiled program may round a reduction differently, so a result would depend on when
  the compiler finished), programs on another device, and runs being observed (a dump, a
  warm-up record, ``lazytorch warmup``), which want the compiled program.
  ``LAZYTORCH_TIERED=0`` turns tiering off.
* **At exit** no one waits for a background compile: its compiler processes are stopped
  and the program is not stored (the next run compiles it again).

Both tiers compute what the reference interpreter computes; the metrics ``tier0_runs``,
``background_compiles`` and ``tier_switches`` count what happened.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import warnings
from collections.abc import Callable
from typing import Any

from lazytorch import metrics
from lazytorch.ir.program import Program

__all__ = ["COMPILE_AT_SIGHTING", "Tiered", "drain", "pending_compiles"]

log = logging.getLogger("lazytorch.compile")

# The sighting of a program on which its background compile starts.
COMPILE_AT_SIGHTING = 2


class _Job:
    __slots__ = ("compile", "done", "error", "result")

    def __init__(self, compile: Callable[[], Any]) -> None:
        self.compile = compile
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class Tiered:
    """What the program cache holds for a program not compiled yet: its interpreter
    executable, how often it was cut, and its background compile once started."""

    __slots__ = ("compile", "fast", "job", "on_ready", "program", "sightings")

    def __init__(
        self,
        fast: Any,
        compile: Callable[[], Any],
        on_ready: Callable[[Any], None],
    ) -> None:
        self.fast = fast
        self.program: Program = fast.program
        self.compile = compile  # the background job; returns the compiled executable
        self.on_ready = on_ready  # installs it (main thread), once
        self.sightings = 0
        self.job: _Job | None = None

    def pick(self) -> Any:
        """The executable to run this cut: compiled once ready, else the interpreter's."""
        self.sightings += 1
        job = self.job
        if job is None:
            if self.sightings >= COMPILE_AT_SIGHTING:
                self.job = _submit(self.compile)
                metrics.increment("background_compiles")
        elif job.done.is_set():
            if job.error is None:
                self.on_ready(job.result)
                metrics.increment("tier_switches")
                return job.result
            _warn_failed(job.error)
            self.job = _GAVE_UP  # stays on the interpreter; never done, so warned once
        metrics.increment("tier0_runs")
        return self.fast


def _never() -> Any:  # pragma: no cover - never submitted
    raise AssertionError("unreachable")


_GAVE_UP = _Job(_never)


def _warn_failed(error: BaseException) -> None:
    warnings.warn(
        f"lazytorch: a program could not be compiled in the background ({error}); it keeps "
        "running on the NumPy interpreter",
        RuntimeWarning,
        stacklevel=5,
    )


# -- the background thread ---------------------------------------------------------------------
_jobs: queue.Queue[_Job | None] = queue.Queue()
_worker: threading.Thread | None = None
_stopping = False
_pending = 0
_lock = threading.Lock()


def _submit(compile: Callable[[], Any]) -> _Job:
    global _worker, _pending
    job = _Job(compile)
    with _lock:
        _pending += 1
        if _worker is None:
            _worker = threading.Thread(target=_work, name="lazytorch-compile", daemon=True)
            _worker.start()
            atexit.register(_stop)
    _jobs.put(job)
    return job


def _work() -> None:
    global _pending
    while True:
        job = _jobs.get()
        if job is None:
            return
        try:
            if _stopping:
                raise RuntimeError("the process is exiting")
            job.result = job.compile()
        except BaseException as e:  # reported on the main thread, at the next cut
            job.error = e
            log.info("background compile failed: %s", e)
        finally:
            with _lock:
                _pending -= 1
            job.done.set()


def pending_compiles() -> int:
    """Background compiles queued or running."""
    return _pending


def drain(timeout: float | None = None) -> bool:
    """Wait until every background compile finished (True) or `timeout` passed (False).

    For tests and benchmarks that want the compiled tier; a program switches at its next
    cut.
    """
    import time

    end = None if timeout is None else time.monotonic() + timeout
    while _pending:
        if end is not None and time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def _stop() -> None:
    """At exit: start no more compiles and stop the compiler processes of the running one."""
    global _stopping
    _stopping = True
    try:
        # lazy: import time (compiling only)
        from lazytorch.codegen.compiler import stop_running_compilers
    except ImportError:  # pragma: no cover - the package layout always has it
        return
    stop_running_compilers()
