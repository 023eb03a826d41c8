"""torch's thread-count functions: ``set_num_threads`` and ``get_num_threads`` (the threads
of one op: here, OpenMP's threads in compiled programs and NumPy's BLAS threads in the
interpreter tier) and the inter-op pair, which lazytorch keeps only to report back (it runs
one program at a time).

``set_num_threads(n)`` limits the OpenMP and BLAS libraries already loaded (threadpoolctl)
and sets ``OMP_NUM_THREADS`` for the OpenMP runtime that compiled programs load later.

>>> import lazytorch
>>> before = lazytorch.get_num_threads()
>>> lazytorch.set_num_threads(1)
>>> lazytorch.get_num_threads()
1
>>> lazytorch.set_num_threads(before)
"""

from __future__ import annotations

import os

__all__ = [
    "get_num_interop_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "set_num_threads",
]

_intra: int | None = None
_inter: int | None = None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _check(n: object, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name}(): Number of threads must be positive, got {n}")
    return n


def set_num_threads(num: int) -> None:
    """Use `num` threads within an op (OpenMP in compiled programs, NumPy's BLAS)."""
    global _intra
    _intra = _check(num, "set_num_threads")
    os.environ["OMP_NUM_THREADS"] = str(_intra)
    # lazy: import time (threadpoolctl scans the loaded libraries)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=_intra)


def get_num_threads() -> int:
    """The threads used within an op: the last `set_num_threads`, else
    ``OMP_NUM_THREADS``, else the cores this process may run on."""
    if _intra is not None:
        return _intra
    env = os.environ.get("OMP_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else _cores()


def set_num_interop_threads(num: int) -> None:
    """Record the inter-op thread count (lazytorch runs one program at a time, so it is
    only reported back by `get_num_interop_threads`)."""
    global _inter
    _inter = _check(num, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    """The inter-op thread count: the last `set_num_interop_threads`, else the cores."""
    return _inter if _inter is not None else _cores()
