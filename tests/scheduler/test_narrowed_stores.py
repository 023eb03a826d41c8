"""Narrowed stores (scheduler.schedule._narrowed): under bfloat16 autocast a linear layer's
output, ``cast(x @ w.T + b)``, is stored in bfloat16 when the backward reads it again, so
the float32 product is used up by the GEMM's epilogue and never kept. The values must be
exactly those of the schedule that recomputes the output from the kept product, and the
plan must pass the alias checker."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.ir.program import Program, canonicalize, capture
from lazytorch.scheduler import schedule as make_schedule
from lazytorch.scheduler.plan_check import check_plan

_schedule_mod = __import__("lazytorch.scheduler.schedule", fromlist=["_narrowed"])

N, D, H = 48, 32, 64


def _arrays():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, D)).astype(np.float32)
    w1 = (rng.standard_normal((H, D)) / np.sqrt(D)).astype(np.float32)
    b1 = rng.standard_normal(H).astype(np.float32) * 0.1
    w2 = (rng.standard_normal((D, H)) / np.sqrt(H)).astype(np.float32)
    return x, w1, b1, w2


def _step(lib, act):
    """A bf16-autocast two-layer block's loss and gradients (the gradients read the first
    layer's output again, through the activation's backward)."""
    x, w1, b1, w2 = (lib.from_numpy(a.copy()) for a in _arrays())
    for p in (w1, b1, w2):
        p.requires_grad_()
    with lib.autocast("cpu", dtype=lib.bfloat16):
        h = lib.nn.functional.linear(x, w1, b1)
        y = getattr(lib.nn.functional, act)(h) @ w2.T
        loss = y.float().square().mean()
    loss.backward()
    return loss, w1.grad, b1.grad, w2.grad


def _program(*tensors):
    cap = capture([t._node for t in tensors if t._node.buffer is None])
    return canonicalize(Program.from_capture(cap))


@pytest.fixture
def cpp():
    with lt.backend("cpp"):
        yield


def _kept_products(s):
    return [
        s.buffers[e.output]
        for e in s.steps
        if getattr(e, "kind", None) == "matmul"
        and s.buffers[e.output].kind == "temp"
        and s.buffers[e.output].shape == (N, H)
        and s.buffers[e.output].dtype == lt.float32
    ]


def test_the_float32_product_is_not_kept_and_the_plan_is_smaller():
    prog = _program(*_step(lt, "gelu"))  # gelu's gradient reads gelu's input again
    narrow = make_schedule(prog)
    wide = _schedule_mod._Scheduler(prog, False, True).run()  # (without the rule)
    assert _schedule_mod._narrowed(prog, wide)  # the linear's bf16 output is a candidate
    check_plan(narrow)
    assert narrow.arena_bytes < wide.arena_bytes
    assert _kept_products(wide) and not _kept_products(narrow)


def test_relu_keeps_no_product_to_begin_with():
    # relu's gradient reads relu's (bf16) result, which the next GEMM needs stored anyway
    prog = _program(*_step(lt, "relu"))
    wide = _schedule_mod._Scheduler(prog, False, True).run()
    assert not _kept_products(wide) and not _schedule_mod._narrowed(prog, wide)


@pytest.mark.parametrize("act", ["gelu", "relu"])
def test_values_equal_the_schedule_that_recomputes(cpp, act, monkeypatch):
    got = [t.detach().numpy() for t in _step(lt, act)]
    lt.runtime.clear_cache()
    monkeypatch.setattr(_schedule_mod, "_narrowed", lambda prog, sched: frozenset())
    want = [t.detach().numpy() for t in _step(lt, act)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("act", ["gelu", "relu"])
def test_values_match_torch_autocast(cpp, act):
    got = [t.detach().numpy() for t in _step(lt, act)]
    want = [t.detach().numpy() for t in _step(torch, act)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-2, atol=2e-3)


def test_float32_programs_are_scheduled_once(monkeypatch):
    # no narrowing cast, no second schedule: compile time unchanged where autocast is off
    x, w1, b1, w2 = (lt.from_numpy(a.copy()) for a in _arrays())
    w1.requires_grad_()
    loss = (lt.nn.functional.gelu(lt.nn.functional.linear(x, w1, b1)) @ w2.T).square().mean()
    loss.backward()
    runs = []
    real = _schedule_mod._Scheduler.run
    monkeypatch.setattr(_schedule_mod._Scheduler, "run", lambda self: runs.append(1) or real(self))
    make_schedule(_program(loss, w1.grad))
    assert len(runs) == 1


def test_symbolic_samples_are_scheduled_once(monkeypatch):
    # the samples of a dynamic-shape program must share one structure: no arena-dependent
    # choice between two schedules there
    prog = _program(*_step(lt, "gelu"))
    runs = []
    real = _schedule_mod._Scheduler.run
    monkeypatch.setattr(_schedule_mod._Scheduler, "run", lambda self: runs.append(1) or real(self))
    make_schedule(prog, symbolic=True)
    assert len(runs) == 1
    make_schedule(prog)
    assert len(runs) == 3  # (the same program, not a sample: scheduled again, narrowed)
