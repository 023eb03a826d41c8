"""One BLAS thread for NumPy while the interpreter tier runs beside a compile.

A tiered program's first runs are the NumPy interpreter's (`lazytorch.runtime.tiered`), and
while they run a program is usually compiling in the background on another core. NumPy's
OpenBLAS splits each GEMM over every core; with one of them busy, its threads wait for each
other: measured on a 2-core VM, a [176, 32] @ [32, 352] product took 255 us on two threads
beside a busy core against 90 us on one (64 us against 109 us idle), and a [512, 512]
square 6.9 ms against 2.8 ms. `single_threaded` sets NumPy's BLAS pools to one thread for
the duration of a run and restores them after.

The pools are found with threadpoolctl (scikit-learn's; it knows every BLAS build's symbol
names and prefixes, NumPy's bundled ``scipy_openblas64_`` included), once; without a BLAS
it can control, runs are left as they are.

>>> from lazytorch.runtime.blas_threads import single_threaded
>>> import numpy as np
>>> with single_threaded():
...     float((np.ones((4, 4)) @ np.ones((4, 4)))[0, 0])
4.0
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["single_threaded"]

_pools: list[Any] | None = None  # NumPy's BLAS libraries, found on first use


def _find() -> list[Any]:
    global _pools
    if _pools is None:
        try:
            # lazy: import time (only tiered runs need it)
            from threadpoolctl import ThreadpoolController

            _pools = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # no threadpoolctl, or a BLAS it cannot drive: leave runs alone
            _pools = []
    return _pools


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """NumPy's BLAS on one thread inside the block (see the module doc)."""
    pools = _find()
    before = [p.get_num_threads() for p in pools]
    changed = [(p, n) for p, n in zip(pools, before) if n != 1]
    for p, _ in changed:
        p.set_num_threads(1)
    try:
        yield
    finally:
        for p, n in changed:
            p.set_num_threads(n)
