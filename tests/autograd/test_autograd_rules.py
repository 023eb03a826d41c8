"""Every primitive's vjp rule, checked three ways in float64: against torch.autograd on the
equivalent torch op, against central finite differences of the NumPy reference, and (where
defined) second order against finite differences of the first-order gradient.

The samples are the ``grad`` rows of the shared table, tests/samples.py. The table is checked
for completeness: a primitive with neither a sample there nor a place in
`NOT_DIFFERENTIABLE` fails `test_every_primitive_is_covered`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.autograd import rules
from lazytorch.ir.primitives import PRIMITIVES
from samples import GRAD_SAMPLES, Sample

# the float64 samples of tests/samples.py: one or more per differentiable primitive
SAMPLES = GRAD_SAMPLES


def test_every_primitive_is_covered():
    sampled = {s.prim for s in SAMPLES}
    for name in PRIMITIVES:
        assert name in sampled or name in rules.NOT_DIFFERENTIABLE, (
            f"primitive {name!r} has no vjp sample and is not listed as non-differentiable"
        )
        if name in rules.NOT_DIFFERENTIABLE:
            assert name not in rules.RULES
        else:
            assert name in rules.RULES, f"primitive {name!r} has no vjp rule"


def _lt_inputs(s: Sample) -> list[lt.Tensor]:
    ts = []
    for i, x in enumerate(s.inputs):
        t = lt.from_numpy(np.array(x))
        if i in s.diff:
            t.requires_grad_()
        ts.append(t)
    return ts


def _apply(s: Sample, ts: list[lt.Tensor]) -> lt.Tensor:
    from lazytorch.ops._core import wrap

    return wrap(PRIMITIVES[s.prim].bind(tuple(t._node for t in ts), s.attrs))


def _cotangent(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(3).uniform(0.5, 1.5, size=shape)


def _ref_loss(s: Sample, arrays: list[np.ndarray], ct: np.ndarray) -> float:
    out = PRIMITIVES[s.prim].ref(*arrays, **dict(zip(PRIMITIVES[s.prim].attr_names, s.attrs)))
    return float(np.sum(np.asarray(out, dtype=np.float64) * ct))


def _numeric_grad(
    f: Callable[[list[np.ndarray]], float], arrays: list[np.ndarray], i: int, eps: float = 1e-6
) -> np.ndarray:
    x = arrays[i]
    g = np.zeros_like(x, dtype=np.float64)
    for k in np.ndindex(x.shape):
        hi = [a.copy() for a in arrays]
        lo = [a.copy() for a in arrays]
        hi[i][k] += eps
        lo[i][k] -= eps
        g[k] = (f(hi) - f(lo)) / (2 * eps)
    return g


@pytest.mark.parametrize("s", SAMPLES, ids=lambda s: s.id)
def test_vjp_matches_torch_and_finite_differences(s: Sample):
    ts = _lt_inputs(s)
    out = _apply(s, ts)
    ct = _cotangent(tuple(out.shape))
    loss = (out.double() * lt.from_numpy(ct)).sum()
    grads = lt.autograd.grad(loss, [ts[i] for i in s.diff])

    tts = [torch.from_numpy(np.array(x)) for x in s.inputs]
    for i in s.diff:
        tts[i].requires_grad_()
    tout = s.torch_fn(*tts)
    tloss = (tout.double() * torch.from_numpy(ct)).sum()
    tgrads = torch.autograd.grad(tloss, [tts[i] for i in s.diff])

    arrays = [np.array(x) for x in s.inputs]
    for i, g, tg in zip(s.diff, grads, tgrads):
        got = g.numpy()
        np.testing.assert_allclose(
            got, tg.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"{s.id}: torch, input {i}"
        )
        # cast rounds to float32: a wide step keeps the rounding out of the difference
        eps = 1e-2 if s.prim == "cast" else 1e-6
        num = _numeric_grad(lambda a: _ref_loss(s, a, ct), arrays, i, eps)
        tol = 1e-4 if s.prim == "cast" else 1e-6
        np.testing.assert_allclose(
            got, num, rtol=tol, atol=tol, err_msg=f"{s.id}: finite differences, input {i}"
        )


@pytest.mark.parametrize("s", [s for s in SAMPLES if s.second], ids=lambda s: s.id)
def test_second_order_matches_torch_and_finite_differences(s: Sample):
    """d/dx of <v, grad f(x)>: the vjp of the vjp, against torch and finite differences."""
    ct = None
    v = None

    def first_order(arrays: list[np.ndarray], create: bool) -> tuple[list[lt.Tensor], lt.Tensor]:
        nonlocal ct, v
        ts = []
        for i, x in enumerate(arrays):
            t = lt.from_numpy(np.array(x))
            if i in s.diff:
                t.requires_grad_()
            ts.append(t)
        out = _apply(s, ts)
        if ct is None:
            ct = _cotangent(tuple(out.shape))
        loss = (out * lt.from_numpy(ct)).sum()
        gs = lt.autograd.grad(loss, [ts[i] for i in s.diff], create_graph=create)
        if v is None:
            v = [np.random.default_rng(11).uniform(-1, 1, size=g.shape) for g in gs]
        inner = sum((g * lt.from_numpy(w)).sum() for g, w in zip(gs, v))
        return ts, inner

    arrays = [np.array(x) for x in s.inputs]
    ts, inner = first_order(arrays, create=True)
    if not inner.requires_grad:
        # the first derivative is constant in x: the second is zero (checked by torch below)
        second = [np.zeros_like(arrays[i]) for i in s.diff]
    else:
        gg = lt.autograd.grad(inner, [ts[i] for i in s.diff], allow_unused=True)
        second = [np.zeros_like(arrays[i]) if g is None else g.numpy() for i, g in zip(s.diff, gg)]

    tts = [torch.from_numpy(np.array(x)) for x in s.inputs]
    for i in s.diff:
        tts[i].requires_grad_()
    tloss = (s.torch_fn(*tts) * torch.from_numpy(ct)).sum()
    tg = torch.autograd.grad(tloss, [tts[i] for i in s.diff], create_graph=True)
    tinner = sum((g * torch.from_numpy(w)).sum() for g, w in zip(tg, v))
    if tinner.requires_grad:
        tgg = torch.autograd.grad(tinner, [tts[i] for i in s.diff], allow_unused=True)
    else:
        tgg = [None] * len(s.diff)

    def inner_value(a: list[np.ndarray]) -> float:
        _, val = first_order(a, create=False)
        return float(val.item())

    for k, (i, got) in enumerate(zip(s.diff, second)):
        want = np.zeros_like(got) if tgg[k] is None else tgg[k].numpy(force=True)
        np.testing.assert_allclose(
            got, want, rtol=1e-9, atol=1e-10, err_msg=f"{s.id}: torch, input {i}"
        )
        num = _numeric_grad(inner_value, arrays, i)
        np.testing.assert_allclose(
            got, num, rtol=1e-5, atol=1e-5, err_msg=f"{s.id}: finite differences, input {i}"
        )
