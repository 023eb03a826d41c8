"""Faults end the whole job, clearly: an uncaught exception and a collective that hangs.

An MPI job whose rank dies of an uncaught exception hangs forever: the other ranks wait in
their next collective for a peer that is gone. Two guards make every fault end the job:

* `install_excepthook(rank, abort)`: an uncaught exception on a rank prints the rank and the
  traceback, then calls `abort`, and the launcher ends every other rank and exits non-zero.
  `abort_job` is that abort (``MPI_Abort`` once MPI runs, else a signal; see its doc).
* `Watchdog`: a daemon thread that aborts the job when one collective has been running past
  the group's timeout, naming the rank, the collective and its sequence number. The engine
  arms it around each blocking call (an attribute store: no lock, no thread per call); the
  blocking MPI call releases the GIL, so the watchdog runs while the main thread waits.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from lazytorch.distributed._env import launcher_env

__all__ = ["Watchdog", "abort_job", "install_excepthook"]

_installed_for: int | None = None
_DRAIN_SECONDS = 0.1


def install_excepthook(rank: int, abort: Callable[[int], None]) -> None:
    """Make an uncaught exception on this rank print itself and abort the whole job."""
    global _installed_for
    if _installed_for is not None:
        return
    _installed_for = rank
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, exc, tb)
        else:
            text = "".join(traceback.format_exception(kind, exc, tb))
            sys.stderr.write(
                f"lazytorch.distributed: rank {rank} raised {kind.__name__}: {exc}; "
                f"aborting the job\n{text}"
            )
        sys.stderr.flush()
        sys.stdout.flush()
        abort(1)

    sys.excepthook = hook


def abort_job(code: int = 1) -> None:
    """End this rank so that the launcher ends the whole job; never returns.

    With MPI initialized (mpi4py imported by the program, ``init_process_group``), this is
    ``MPI_Abort`` on the world communicator. Without it, the rank kills itself with SIGKILL:
    Hydra's ``mpiexec`` waits for the other ranks after a rank that never joined MPI exits
    with an error status, but tears the job down when a rank dies of a signal. mpi4py is
    never imported here: a first import would initialize MPI, which waits for every rank.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    # Let the launcher forward what this rank just printed: Hydra's proxy drops a killed
    # rank's unread output (an MPI_Abort lost the rank's message in ~1 run of 30 without this).
    time.sleep(_DRAIN_SECONDS)
    mpi = sys.modules.get("mpi4py.MPI")
    try:
        if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
            mpi.COMM_WORLD.Abort(code)
    finally:
        if _launched():
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(code)


def _launched() -> bool:
    """Whether a launcher started this process as one rank among others."""
    try:
        return launcher_env().world_size > 1
    except ValueError:
        return True


class Watchdog:
    """Abort the job when an armed collective outlives its deadline (see module doc)."""

    def __init__(self, rank: int, abort: Callable[[int], None]) -> None:
        self.rank = rank
        self.abort = abort
        self._armed: tuple[float, float, Any] | None = None  # (deadline, timeout, what)
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def arm(self, timeout: float, what: str | Callable[[], str]) -> None:
        """Start timing one blocking call described by `what` ("all_reduce #3 on ..."), or
        by what `what()` returns: formatted only if the call times out."""
        self._armed = (time.monotonic() + timeout, timeout, what)
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._watch, name="lazytorch-collective-watchdog", daemon=True
            )
            self._thread.start()

    def disarm(self) -> None:
        self._armed = None

    def _watch(self) -> None:
        while True:
            armed = self._armed
            if armed is None:
                self._wake.wait(0.25)
                continue
            deadline, timeout, what = armed
            if callable(what):
                what = what()
            left = deadline - time.monotonic()
            if left > 0:
                self._wake.wait(min(left, 0.25))
                continue
            if self._armed is not armed:  # it finished while we looked
                continue
            sys.stderr.write(
                f"lazytorch.distributed: rank {self.rank}: {what} did not complete within "
                f"{timeout:g} s (a peer hangs, died, or issued a different collective); "
                "aborting the job\n"
            )
            sys.stderr.flush()
            try:
                self.abort(1)
            finally:
                os._exit(1)
