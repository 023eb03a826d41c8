"""``torch.multiprocessing``: Python's `multiprocessing`, with tensors sent in shared memory.

Everything of `multiprocessing` is here under the same names (``Process``, ``Queue``,
``Pool``, ``set_start_method``, ``get_context``...). What this module adds, as torch's does:

* **Tensors travel in shared memory.** A tensor pickled to another process by
  multiprocessing (a ``Process`` argument, a ``Queue`` item, a ``Pool`` task) is moved into
  shared memory first (`Tensor.share_memory_`) and arrives as a tensor over the same segment:
  writes on either side are seen by the other (`lazytorch.ops.shared_memory` gives the rules,
  and how a lazy in-place update reaches the segment). ``module.share_memory()`` does it
  ahead of time for a model that several processes train (Hogwild).
* **Children of a script run under** ``lazytorch run --as-torch`` **import lazytorch as**
  ``torch`` **too**: a ``spawn`` child starts a fresh interpreter, so it is started with the
  import hook installed (``fork`` children inherit it). ``forkserver`` children are not:
  use ``spawn`` or ``fork`` with ``--as-torch``.
* ``spawn(fn, args, nprocs)`` runs ``fn(i, *args)`` in `nprocs` processes and raises in the
  parent when one fails (`ProcessRaisedException` with the child's traceback, or
  `ProcessExitedException`).
* ``set_sharing_strategy`` / ``get_sharing_strategy`` are accepted; lazytorch has one way of
  sharing (named POSIX shared memory), whichever is set.

A tensor that requires grad and is not a leaf cannot be sent (its graph cannot follow it),
as in torch.

>>> import lazytorch
>>> import lazytorch.multiprocessing as mp
>>> q = mp.get_context("spawn").SimpleQueue()
>>> t = lazytorch.arange(3.0)
>>> q.put(t); u = q.get()          # pickled as a segment name, not as values
>>> _ = u.add_(1)
>>> t.tolist()                     # one storage
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import multiprocessing as _mp
import sys
import traceback
from multiprocessing import reduction as _reduction
from multiprocessing import spawn as _spawn
from typing import Any

from lazytorch import _as_torch
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import shared_memory as _shared
from lazytorch.tensor import Tensor

_NAMES = (
    "Array Barrier BoundedSemaphore Condition Event JoinableQueue Lock Manager Pipe Pool "
    "Process Queue RLock RawArray RawValue Semaphore SimpleQueue Value active_children "
    "allow_connection_pickling cpu_count current_process freeze_support get_all_start_methods "
    "get_context get_logger get_start_method log_to_stderr parent_process set_executable "
    "set_forkserver_preload set_start_method AuthenticationError BufferTooShort ProcessError "
    "TimeoutError"
).split()
globals().update({name: getattr(_mp, name) for name in _NAMES})

__all__ = [  # the names above (bound from multiprocessing), and torch's additions
    *_NAMES,
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies torch names (both share through named POSIX memory here)."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The strategy last set (`set_sharing_strategy`); lazytorch shares one way whatever it is."""
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accept torch's strategy names; tensors are shared the same way under either."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(
            f"set_sharing_strategy: unknown strategy {new_strategy!r}; expected one of "
            f"{sorted(_STRATEGIES)}"
        )
    _strategy = new_strategy


# -- sending tensors --------------------------------------------------------------------------
def _reduce_tensor(t: Tensor) -> Any:
    if t.requires_grad and not t.is_leaf:  # type: ignore[attr-defined]
        raise RuntimeError(
            "multiprocessing: cowardly refusing to send a tensor that requires grad and is "
            "not a leaf (its graph cannot be sent); send t.detach() instead"
        )
    if t.device.type != "cpu" or t._view is not None:
        # a copy of the values, as a plain pickle (a view's storage is its base's segment,
        # which the receiver could not index into as this view)
        return t.__reduce_ex__(2)
    t.share_memory_()  # type: ignore[attr-defined]
    found = _shared.segment_of(t)
    if found is None:
        return t.__reduce_ex__(2)
    name, array = found
    _shared.sent(name)
    return (
        _rebuild_tensor,
        (name, array.shape, array.dtype, bool(t.requires_grad), type(t) is Parameter),
    )


def _rebuild_tensor(name: str, shape: Any, dtype: Any, requires_grad: bool, param: bool) -> Any:
    t = _shared.rebuild(name, tuple(shape), dtype, requires_grad and not param)
    if not param or isinstance(t, Parameter):
        return t
    p = Parameter(t, requires_grad)
    _shared.track(p, t._node.buffer, name)
    return p


_reduction.ForkingPickler.register(Tensor, _reduce_tensor)
_reduction.ForkingPickler.register(Parameter, _reduce_tensor)


# -- spawn children that import lazytorch as torch -------------------------------------------
_stdlib_command_line = _spawn.get_command_line


def _command_line(**kwds: Any) -> list[str]:
    """multiprocessing's spawn command line; under ``--as-torch``, one that installs the
    import hook before the child imports the parent's main module."""
    cmd = list(_stdlib_command_line(**kwds))
    if _as_torch.is_installed() and "-c" in cmd:
        i = cmd.index("-c") + 1
        cmd[i] = "import lazytorch; lazytorch.install_as_torch(); " + cmd[i]
    return cmd


_spawn.get_command_line = _command_line


# -- torch.multiprocessing.spawn ------------------------------------------------------------
class ProcessException(Exception):
    """A process started by `spawn` failed."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process started by `spawn` raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process started by `spawn` exited with a nonzero code (or a signal)."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name),
        )


def _wrap(fn: Any, i: int, args: tuple[Any, ...], error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes `spawn` started; `join` waits for them and raises the first failure."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every process (at most `timeout` seconds for each); True once all have
        exited. A failed process terminates the others and raises."""
        for i, p in enumerate(self.processes):
            p.join(timeout)
            if p.exitcode is None:
                return False
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                q = self.error_queues[i]
                if not q.empty():
                    raise ProcessRaisedException(
                        f"\n\n-- Process {i} terminated with the following error:\n{q.get()}",
                        i,
                        p.pid,
                    )
                sig = None
                if p.exitcode < 0:
                    import signal  # lazy: import time (stdlib, failures only)

                    sig = signal.Signals(-p.exitcode).name
                    raise ProcessExitedException(
                        f"process {i} terminated with signal {sig}", i, p.pid, p.exitcode, sig
                    )
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode
                )
        return True


def start_processes(
    fn: Any,
    args: tuple[Any, ...] = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Run ``fn(i, *args)`` for i in ``range(nprocs)``, each in its own process."""
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn: Any,
    args: tuple[Any, ...] = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """``torch.multiprocessing.spawn``: `start_processes` with the ``spawn`` method.

    >>> import lazytorch.multiprocessing as mp
    >>> mp.spawn(print, args=("hello",), nprocs=1)  # doctest: +SKIP
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
