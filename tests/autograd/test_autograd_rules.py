"""Every primitive's vjp rule, checked three ways in float64: against torch.autograd on the
equivalent torch op, against central finite differences of the NumPy reference, and (where
defined) second order against finite differences of the first-order gradient.

The table is checked for completeness: a primitive with neither a sample here nor a place
in `NOT_DIFFERENTIABLE` fails `test_every_primitive_is_covered`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.autograd import rules
from lazytorch.ir.primitives import PRIMITIVES

rng = np.random.default_rng(7)


def u(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape)


def away_from_int(*shape: int) -> np.ndarray:
    # piecewise-constant ops: stay clear of their jumps so differences see the flat parts
    return np.floor(u(*shape, lo=-3, hi=3)) + rng.uniform(0.2, 0.4, size=shape)


class Sample:
    """One primitive application: float64 inputs, attrs, the torch equivalent."""

    def __init__(
        self,
        prim: str,
        inputs: list[np.ndarray],
        attrs: tuple[Any, ...],
        torch_fn: Callable[..., Any],
        *,
        diff: tuple[int, ...] | None = None,
        second: bool = True,
        label: str = "",
    ) -> None:
        self.prim = prim
        self.inputs = inputs
        self.attrs = attrs
        self.torch_fn = torch_fn
        # inputs differentiated (float ones by default)
        self.diff = (
            diff
            if diff is not None
            else tuple(i for i, x in enumerate(inputs) if x.dtype == np.float64)
        )
        self.second = second
        self.id = f"{prim}{'-' + label if label else ''}"


def _samples() -> list[Sample]:
    s: list[Sample] = []
    t = torch
    unary = {
        "exp": (u(2, 3), t.exp),
        "expm1": (u(2, 3), t.expm1),
        "log": (u(2, 3, lo=0.3, hi=3), t.log),
        "log1p": (u(2, 3, lo=-0.5, hi=3), t.log1p),
        "sqrt": (u(2, 3, lo=0.3, hi=3), t.sqrt),
        "sin": (u(2, 3), t.sin),
        "cos": (u(2, 3), t.cos),
        "tanh": (u(2, 3), t.tanh),
        "atan": (u(2, 3), t.atan),
        "sigmoid": (u(2, 3), t.sigmoid),
        "erf": (u(2, 3), t.erf),
        "neg": (u(2, 3), t.neg),
        "abs": (np.array([-1.5, -0.3, 0.4, 2.0]), t.abs),
        "floor": (away_from_int(5), t.floor),
        "ceil": (away_from_int(5), t.ceil),
        "round": (away_from_int(5), t.round),
    }
    for name, (x, fn) in unary.items():
        s.append(Sample(name, [x], (), fn))
    b = u(2, 3)
    s += [
        Sample("add", [u(2, 3), u(2, 3)], (), t.add),
        Sample("add", [u(2, 3), u()], (), t.add, label="0d"),
        Sample("sub", [u(2, 3), u(2, 3)], (), t.sub),
        Sample("sub", [u(), u(4)], (), t.sub, label="0d"),
        Sample("mul", [u(2, 3), u(2, 3)], (), t.mul),
        Sample("mul", [u(3), u()], (), t.mul, label="0d"),
        Sample("div", [u(2, 3), u(2, 3, lo=0.5, hi=2)], (), t.div),
        Sample("div", [u(3), np.array(1.7)], (), t.div, label="0d"),
        Sample(
            "remainder", [u(4, lo=0.1, hi=0.9), np.array([1.3, 1.1, 1.7, 1.9])], (), t.remainder
        ),
        Sample("fmod", [u(4, lo=0.1, hi=0.9) * 3, np.array([1.3, -1.1, 1.7, -1.9])], (), t.fmod),
        Sample(
            "floordiv",
            [away_from_int(4), np.array([1.0, 1.0, 1.0, 1.0])],
            (),
            lambda a, b_: t.div(a, b_, rounding_mode="floor"),
            diff=(0,),
        ),
        Sample("pow", [u(2, 3, lo=0.5, hi=2), u(2, 3, lo=-1.5, hi=2)], (), t.pow),
        Sample("pow", [u(4, lo=0.5, hi=2), np.array(2.5)], (), t.pow, label="0d"),
        Sample("maximum", [b, b + np.where(rng.random((2, 3)) < 0.5, 0.5, -0.5)], (), t.maximum),
        Sample("minimum", [b, b + np.where(rng.random((2, 3)) < 0.5, 0.5, -0.5)], (), t.minimum),
        Sample("atan2", [u(2, 3), u(2, 3, lo=0.5, hi=2)], (), t.atan2),
        Sample(
            "where",
            [rng.random((2, 3)) < 0.5, u(2, 3), u(2, 3)],
            (),
            lambda c, a, b_: t.where(c, a, b_),
        ),
        Sample(
            "cast",
            [u(2, 3)],
            (lt.float32,),
            lambda x: x.to(t.float32),
            second=False,
        ),
        Sample("reshape", [u(2, 3)], ((3, 2),), lambda x: x.reshape(3, 2)),
        Sample("permute", [u(2, 3, 4)], ((2, 0, 1),), lambda x: x.permute(2, 0, 1)),
        Sample("expand", [u(3, 1)], ((2, 3, 4),), lambda x: x.expand(2, 3, 4)),
        Sample(
            "slice",
            [u(7, 5)],
            ((1, 0), (7, 5), (2, 3)),
            lambda x: x[1:7:2, 0:5:3],
        ),
        Sample("slice", [u(6, 4)], ((2, 1), (5, 3), (1, 1)), lambda x: x[2:5, 1:3], label="step1"),
        Sample(
            "pad",
            [u(2, 3), np.array(0.0)],
            ((1, 0), (2, 1)),
            lambda x, v: t.nn.functional.pad(x, (0, 1, 1, 2)),
            diff=(0,),
        ),
        Sample("flip", [u(2, 3)], ((1,),), lambda x: x.flip(1)),
        Sample("cat", [u(2, 3), u(2, 1), u(2, 2)], (1,), lambda *xs: t.cat(xs, 1)),
        Sample(
            "gather",
            [u(3, 4), rng.integers(0, 3, size=(2, 4))],
            (0,),
            lambda x, i: t.gather(x, 0, i),
        ),
        Sample(
            "scatter",
            [u(4, 3), np.array([[2, 0, 1], [0, 3, 2]]), u(2, 3)],
            (0, "none"),
            lambda x, i, v: x.scatter(0, i, v),
        ),
        Sample(
            "scatter",
            [u(4, 3), np.array([[2, 0, 1], [2, 3, 1]]), u(2, 3)],
            (0, "add"),
            lambda x, i, v: x.scatter_add(0, i, v),
            label="add",
        ),
        Sample("matmul", [u(2, 3, 4), u(2, 4, 5)], (), t.matmul),
        Sample("reduce_sum", [u(2, 3, 4)], ((0, 2),), lambda x: x.sum((0, 2), keepdim=True)),
        Sample("reduce_prod", [u(2, 3)], ((1,),), lambda x: x.prod(1, keepdim=True)),
        Sample(
            "reduce_prod",
            [np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.2, -0.7, 2.0]])],
            ((1,),),
            lambda x: x.prod(1, keepdim=True),
            label="zeros",
            second=False,
        ),
        Sample("reduce_max", [u(3, 4)], ((1,),), lambda x: x.amax(1, keepdim=True)),
        Sample("reduce_min", [u(3, 4)], ((0, 1),), lambda x: x.amin((0, 1), keepdim=True)),
        Sample("cumsum", [u(3, 4)], (1,), lambda x: x.cumsum(1)),
    ]
    return s


SAMPLES = _samples()


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
