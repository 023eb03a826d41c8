"""Sample applications of every primitive, one table shared by the tests of each layer.

An OpInfo-style table: each `Sample` is one application of one primitive — its inputs (NumPy
arrays, or `Scalar` program inputs), its attrs, its torch equivalent where one exists, and
what the autograd test differentiates. The tests that read it:

* tests/ir/test_ir.py — every primitive has a sample; on each sample the shape and dtype
  rules agree with the NumPy reference (``test_reference_agrees_with_the_rules``)
* tests/autograd/test_autograd_rules.py — on each `Sample.grad` sample the vjp rule agrees
  with torch.autograd and with finite differences, first and second order; every primitive
  has one or is listed in ``NOT_DIFFERENTIABLE``
* tests/codegen/test_primitives.py — each sample, recorded alone, computes on every backend
  what torch computes (the NumPy reference where there is no torch equivalent): the seconds-
  long slice of the suite to run after touching a code generator

Two kinds of rows: one per primitive in float32 / int64 / bool (`RULE_SAMPLES`, with a
``rule`` id), and the float64 samples the vjp rules are checked on (`GRAD_SAMPLES`), several
for some primitives (``add-0d``: a 0-d operand). A new primitive gets a row in each: the IR
test fails until it has a rule sample, the autograd test until it has a grad sample (or is
listed as not differentiable).

>>> from samples import SAMPLES, by_prim
>>> [s.id for s in by_prim("add")]
['add-rule', 'add', 'add-0d']
>>> by_prim("exp")[0].inputs[0].dtype
dtype('float32')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import lazytorch as lt
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import CPU

F32, I64, B = dt.float32, dt.int64, dt.bool_


class Scalar:
    """A 0-d program input (a Python number in a scalar slot, not a buffer)."""

    __slots__ = ("dtype", "value")

    def __init__(self, value: Any, dtype: dt.DType) -> None:
        self.value = value
        self.dtype = dtype


class Sample:
    """One primitive application: inputs, attrs, the torch equivalent (None: the NumPy
    reference is the oracle), and for a `grad` sample which inputs are differentiated and
    whether second order is checked."""

    __slots__ = ("attrs", "diff", "grad", "id", "inputs", "label", "prim", "second", "torch_fn")

    def __init__(
        self,
        prim: str,
        inputs: list[Any],
        attrs: tuple[Any, ...],
        torch_fn: Callable[..., Any] | None,
        *,
        diff: tuple[int, ...] | None = None,
        second: bool = True,
        label: str = "",
        grad: bool = True,
    ) -> None:
        self.prim = prim
        self.inputs = inputs
        self.attrs = attrs
        self.torch_fn = torch_fn
        # inputs differentiated (float ones by default)
        self.diff = (
            diff
            if diff is not None
            else tuple(
                i
                for i, x in enumerate(inputs)
                if isinstance(x, np.ndarray) and x.dtype == np.float64
            )
        )
        self.second = second
        self.grad = grad
        self.label = label
        self.id = f"{prim}{'-' + label if label else ''}"

    def __repr__(self) -> str:
        return f"Sample({self.id})"


# -- one rule sample per primitive: float32 in [0.5, 2), int64 in {0, 1}, bools ---------------


def leaf_values(shape: tuple[int, ...], dtype: dt.DType = F32, values: Any = None) -> np.ndarray:
    """Values for a sample input: float32 in [0.5, 2), int64 in {0, 1}, bools (`values`
    given: those, in `dtype`)."""
    rng = np.random.default_rng(0)
    if values is None:
        if dtype is B:
            values = rng.random(shape) < 0.5
        elif dtype is I64:
            values = rng.integers(0, 2, size=shape)
        else:
            values = rng.uniform(0.5, 2.0, size=shape)
    return np.asarray(values, dtype=dtype.np)


UNARY_FLOAT = "exp log sqrt sin cos tanh atan log1p expm1 sigmoid erf".split()
UNARY_ANY = "neg abs floor ceil round".split()
BINARY = "add sub mul div floordiv remainder fmod pow maximum minimum atan2".split()
COMPARE = "eq ne lt le gt ge".split()
BITWISE = "bitwise_and bitwise_or bitwise_xor".split()

# torch's function for the elementwise primitives whose sample means the same in torch
_SAME_IN_TORCH = {*UNARY_FLOAT, *UNARY_ANY, *COMPARE, *BITWISE, "bitwise_not"} | (
    set(BINARY) - {"floordiv"}
)


def _rule(prim: str, inputs: list[Any], attrs: tuple[Any, ...] = ()) -> Sample:
    fn = getattr(torch, prim) if prim in _SAME_IN_TORCH else None
    return Sample(prim, inputs, attrs, fn, label="rule", grad=False)


def _rule_samples() -> list[Sample]:
    s: list[Sample] = []
    for name in UNARY_FLOAT + UNARY_ANY:
        s.append(_rule(name, [leaf_values((2, 3))]))
    s.append(_rule("bitwise_not", [leaf_values((2, 3), I64)]))
    for name in BINARY + COMPARE:
        s.append(_rule(name, [leaf_values((2, 3)), leaf_values((2, 3))]))
    for name in BITWISE:
        s.append(_rule(name, [leaf_values((2, 3), I64), leaf_values((2, 3), I64)]))
    s.append(_rule("where", [leaf_values((2, 3), B), leaf_values((2, 3)), leaf_values(())]))
    s.append(_rule("cast", [leaf_values((2, 3))], (I64,)))
    s.append(_rule("bitcast", [leaf_values((2, 3))], (dt.int32,)))
    for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        s.append(_rule(name, [leaf_values((2, 3, 4))], ((0, 2),)))
    s.append(_rule("argmax", [leaf_values((2, 3))], (1,)))
    s.append(_rule("argmin", [leaf_values((2, 3))], (0,)))
    s.append(_rule("cumsum", [leaf_values((2, 3))], (1,)))
    s.append(_rule("argsort", [leaf_values((2, 3))], (1, True, "stable", 0)))
    s.append(_rule("argsort", [leaf_values((2, 40))], (1, False, "sort", 0)))
    s.append(_rule("argsort", [leaf_values((2, 40))], (1, True, "topk", 3)))
    s.append(_rule("argsort", [leaf_values((2, 40))], (1, False, "topk_unsorted", 30)))
    s.append(_rule("argsort", [leaf_values((2, 40))], (1, False, "kth", 7)))
    s.append(_rule("reshape", [leaf_values((2, 3))], ((3, 2),)))
    s.append(_rule("permute", [leaf_values((2, 3, 4))], ((2, 0, 1),)))
    s.append(_rule("expand", [leaf_values((3, 1))], ((2, 3, 4),)))
    s.append(_rule("slice", [leaf_values((5, 6))], ((1, 0), (5, 6), (2, 3))))
    s.append(_rule("pad", [leaf_values((2, 3)), leaf_values(())], ((1, 0), (2, 1))))
    s.append(_rule("flip", [leaf_values((2, 3))], ((0, 1),)))
    s.append(_rule("cat", [leaf_values((2, 3)), leaf_values((2, 1)), leaf_values((2, 2))], (1,)))
    s.append(
        _rule(
            "gather", [leaf_values((4, 3)), leaf_values((2, 3), I64, [[0, 3, 1], [2, 2, 0]])], (0,)
        )
    )
    s.append(
        _rule(
            "scatter",
            [
                leaf_values((4, 3)),
                leaf_values((2, 3), I64, [[0, 3, 1], [2, 2, 0]]),
                leaf_values((2, 3)),
            ],
            (0, "add"),
        )
    )
    s.append(_rule("matmul", [leaf_values((2, 3, 4)), leaf_values((2, 4, 5))]))
    s.append(
        _rule(
            "conv2d",
            [leaf_values((2, 3, 5, 6)), leaf_values((4, 3, 3, 2))],
            ((2, 1), (1, 1, 0, 1), (1, 2)),
        )
    )
    s.append(
        _rule(
            "conv2d_wgrad",
            [leaf_values((2, 3, 5, 6)), leaf_values((2, 4, 3, 5))],
            ((2, 1), (1, 1, 0, 1), (1, 2), (3, 2)),
        )
    )
    # collectives: the reference is a group of one rank (group 0, sequence number 1)
    s.append(_rule("all_reduce", [leaf_values((2, 3))], (0, 1, 1, "sum")))
    s.append(_rule("broadcast", [leaf_values((2, 3))], (0, 1, 1, 0)))
    s.append(_rule("all_gather", [leaf_values((2, 3))], (0, 1, 1)))
    s.append(_rule("gather_to_rank", [leaf_values((2, 3))], (0, 1, 1, 0)))
    s.append(_rule("reduce_scatter", [leaf_values((2, 3))], (0, 1, 1, "avg")))
    s.append(_rule("scatter_from_rank", [leaf_values((1, 2, 3))], (0, 1, 1, 0)))
    s.append(_rule("const", [], (1.5, F32, CPU)))
    s.append(_rule("iota", [], ((2, 3), 1, I64, CPU)))
    s.append(_rule("rand", [Scalar(3, I64), Scalar(8, I64)], ((2, 3), F32, "normal")))
    return s


# -- float64 samples for the vjp rules ---------------------------------------------------------

_rng = np.random.default_rng(7)


def u(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return _rng.uniform(lo, hi, size=shape)


def away_from_int(*shape: int) -> np.ndarray:
    # piecewise-constant ops: stay clear of their jumps so differences see the flat parts
    return np.floor(u(*shape, lo=-3, hi=3)) + _rng.uniform(0.2, 0.4, size=shape)


def _grad_samples() -> list[Sample]:
    s: list[Sample] = []
    t = torch
    rng = _rng
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
        Sample(
            "conv2d",
            [u(2, 3, 5, 6), u(4, 3, 3, 2)],
            ((2, 1), (1, 1, 1, 1), (1, 2)),
            lambda x, w: t.nn.functional.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2)),
        ),
        Sample(
            "conv2d_wgrad",
            [u(2, 3, 5, 6), u(2, 4, 3, 6)],
            ((2, 1), (1, 1, 1, 1), (1, 2), (3, 2)),
            lambda x, dy: t.nn.grad.conv2d_weight(
                x, (4, 3, 3, 2), dy, stride=(2, 1), padding=1, dilation=(1, 2)
            ),
        ),
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


RULE_SAMPLES: list[Sample] = _rule_samples()
GRAD_SAMPLES: list[Sample] = _grad_samples()
SAMPLES: list[Sample] = RULE_SAMPLES + GRAD_SAMPLES


def by_prim(prim: str) -> list[Sample]:
    """Every sample of primitive `prim`, in table order."""
    return [s for s in SAMPLES if s.prim == prim]
