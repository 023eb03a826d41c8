"""The interpreter tier sets NumPy's BLAS pools to one thread only around programs that
call BLAS (`lazytorch.runtime.blas_threads`)."""

from __future__ import annotations

import contextlib

import numpy as np

import lazytorch as lt
from lazytorch.ir.program import Program, canonicalize, capture
from lazytorch.runtime import blas_threads, interpreter
from lazytorch.runtime.blas_threads import single_threaded


def _interpreted(y: lt.Tensor) -> tuple[interpreter.InterpretedProgram, list]:
    cap = capture([y._node])
    program = canonicalize(Program.from_capture(cap))
    return interpreter.InterpretedProgram(program, single_threaded_blas=True), [
        p.buffer for p in cap.params
    ]


def test_only_a_program_with_a_product_sets_the_pools(monkeypatch):
    entered = []

    @contextlib.contextmanager
    def spy():
        entered.append(True)
        with single_threaded():
            yield

    monkeypatch.setattr(interpreter, "single_threaded", spy)
    x = lt.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4))
    lt.materialize(x)
    product, ins = _interpreted(x @ x + 1)
    (out,) = product.run(ins)
    np.testing.assert_allclose(out, x.numpy() @ x.numpy() + 1)
    assert entered == [True]
    pointwise, ins = _interpreted(x * 2 - 1)
    (out,) = pointwise.run(ins)
    np.testing.assert_allclose(out, x.numpy() * 2 - 1)
    assert entered == [True]  # (two threadpoolctl calls cost more than this program)


def test_single_threaded_restores_the_pools():
    pools = blas_threads._find()
    assert pools, "threadpoolctl found no BLAS pool of NumPy's"
    before = [p.get_num_threads() for p in pools]
    with single_threaded():
        assert all(p.get_num_threads() == 1 for p in pools)
    assert [p.get_num_threads() for p in pools] == before
