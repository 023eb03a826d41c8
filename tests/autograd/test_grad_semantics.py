"""torch's gradients at kinks, ties and special points, on the interpreter and the cpp backend.

Random inputs almost never land on relu's 0, on a clamp bound, on two equal maxima or on a
zero vector, so the op matrix never sees the choice torch makes there. Each case here puts
its inputs exactly on such a point and compares the forward value (lazy and sync) and the
gradient with torch's.

`test_every_op_is_classified` keeps the table complete: every public math op is either
covered by a case here or listed as smooth (no kink, tie or special point in its gradient)
or as not differentiable, so an op added without a case fails.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import helpers
import lazytorch as lt
from helpers import check, check_grad

NAN, INF = math.nan, math.inf


def v(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def m(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


def F(lib: Any) -> Any:
    return lib.nn.functional


class Case:
    """One op evaluated on inputs placed on its kink, tie or special point."""

    def __init__(
        self,
        op: str,
        label: str,
        fn: Callable[..., Any],
        *inputs: Any,
        diff: tuple[int, ...] | None = None,
    ) -> None:
        self.op, self.fn, self.inputs, self.diff = op, fn, inputs, diff
        self.id = f"{op}-{label}"


def _attention_with_a_masked_key(t: Any, q: Any, w_in: Any, w_out: Any) -> Any:
    """Self-attention (one head) where key 1 is padding: its score is -inf."""
    mask = t.tensor([[False, True, False]])
    out, _ = F(t).multi_head_attention_forward(
        q, q, q, 2, 1, w_in, None, None, None, False, 0.0, w_out, None,
        key_padding_mask=mask, need_weights=False,
    )  # fmt: skip
    return out


C = Case
KINK = v(-1.0, 0.0, -0.0, 1.0, NAN)  # both sides of 0, 0 itself (both signs) and NaN
ROUNDING = v(-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, NAN)
TIES = m([[1, 3, 3, 0], [2, 2, 2, 2], [0, -1, 0, -1]])
NAN_ROWS = m([[1, NAN, 3, NAN], [NAN, 2, 5, 5], [4, 1, 4, 0]])
POOL = np.array([[[[1, 1, 1, 0], [1, 1, 0, 2], [2, 2, 2, 2], [0, 2, 0, 2]]]], dtype=np.float64)
POOL_NAN = np.array([[[[1, NAN, 1], [NAN, 1, 0], [2, 2, 2]]]], dtype=np.float64)

CASES = [
    # -- kinks of activations and clamps ------------------------------------------------------
    C("relu", "kink", lambda t, x: t.relu(x), KINK),
    C("relu", "float32", lambda t, x: t.relu(x), KINK.astype(np.float32)),
    C("F.relu", "kink", lambda t, x: F(t).relu(x), KINK),
    C("F.relu6", "bounds", lambda t, x: F(t).relu6(x), v(-1, 0, 3, 6, 7, NAN)),
    C("F.relu6", "float16", lambda t, x: F(t).relu6(x), v(-1, 0, 3, 6, 7, NAN).astype(np.float16)),
    C("F.hardtanh", "bounds", lambda t, x: F(t).hardtanh(x), v(-2, -1, 0, 1, 2, NAN)),
    C("F.hardtanh", "custom", lambda t, x: F(t).hardtanh(x, -0.5, 0.5), v(-0.5, 0, 0.5, 0.7)),
    C("F.hardtanh", "equal", lambda t, x: F(t).hardtanh(x, 0.5, 0.5), v(0, 0.5, 1)),
    C("clamp", "bounds", lambda t, x: t.clamp(x, -1, 1), v(-2, -1, 0, 1, 2, NAN)),
    C("clamp", "min-only", lambda t, x: t.clamp(x, min=0), KINK),
    C("clamp", "max-only", lambda t, x: t.clamp(x, max=0.0), KINK),
    C("clamp", "min-eq-max", lambda t, x: t.clamp(x, 0.5, 0.5), v(0, 0.5, 1, NAN)),
    C("clamp", "min-gt-max", lambda t, x: t.clamp(x, 1, -1), v(-2, -1, 0, 1, 2, NAN)),
    C("clamp", "nan-bound", lambda t, x: t.clamp(x, min=NAN), v(-1, 0, 1)),
    C(
        "clamp",
        "tensor-bounds",
        lambda t, x, lo, hi: t.clamp(x, lo, hi),
        v(-2, -1, 0, 1, 2, NAN),
        v(-1, -1, -1, -1, -1, -1),
        v(1, 1, 1, 1, 1, 1),
    ),
    C(
        "clamp",
        "tensor-min-eq-max",
        lambda t, x, lo, hi: t.clamp(x, lo, hi),
        v(0, 0.5, 1, NAN),
        v(0.5, 0.5, 0.5, 0.5),
        v(0.5, 0.5, 0.5, 0.5),
    ),
    C(
        "clamp",
        "tensor-min-gt-max",
        lambda t, x, lo, hi: t.clamp(x, lo, hi),
        v(-2, -1, 0, 1, 2, NAN),
        v(1, 1, 1, 1, 1, 1),
        v(-1, -1, -1, -1, -1, -1),
    ),
    C(
        "clamp",
        "tensor-nan-bounds",
        lambda t, x, lo, hi: t.clamp(x, lo, hi),
        v(0, 2, -2, 0),
        v(NAN, NAN, -1, -1),
        v(1, 1, NAN, NAN),
    ),
    C(
        "clamp",
        "tensor-broadcast",
        lambda t, x, lo, hi: t.clamp(x, lo, hi),
        m([[-1, 0, 1], [2, -2, 0.5]]),
        v(-1),
        v(1, 0, 0.5),
    ),
    C("clamp", "tensor-min-only", lambda t, x, lo: t.clamp(x, min=lo), KINK, v(0, 0, 0, 0, 0)),
    C("clamp", "tensor-max-only", lambda t, x, hi: t.clamp(x, max=hi), KINK, v(0, 0, 0, 0, 0)),
    C("clip", "bounds", lambda t, x: t.clip(x, -1, 1), v(-2, -1, 0, 1, 2)),
    C("clamp_min", "bound", lambda t, x: t.clamp_min(x, 0.0), KINK),
    C("clamp_min", "tensor", lambda t, x, lo: t.clamp_min(x, lo), v(-1, 0, 1), v(0, 0, 0)),
    C("clamp_max", "bound", lambda t, x: t.clamp_max(x, 0.0), KINK),
    C("clamp_max", "tensor", lambda t, x, hi: t.clamp_max(x, hi), v(-1, 0, 1), v(0, 0, 0)),
    C("F.leaky_relu", "kink", lambda t, x: F(t).leaky_relu(x, 0.1), KINK),
    C("F.leaky_relu", "negative-slope", lambda t, x: F(t).leaky_relu(x, -2.0), KINK),
    C("F.elu", "kink", lambda t, x: F(t).elu(x), v(-INF, -1, 0, 1, NAN)),
    C("F.elu", "alpha", lambda t, x: F(t).elu(x, 2.0), KINK),
    C("F.elu", "negative-alpha", lambda t, x: F(t).elu(x, -1.0), KINK),
    C("F.selu", "kink", lambda t, x: F(t).selu(x), KINK),
    C("F.celu", "kink", lambda t, x: F(t).celu(x, 0.5), KINK),
    # float32: torch's hardsigmoid backward multiplies by 1/6 rounded to float (1.0f / 6.0f)
    # even for float64, 3e-8 away from lazytorch's exact division
    C(
        "F.hardsigmoid",
        "bounds",
        lambda t, x: F(t).hardsigmoid(x),
        v(-4, -3, 0, 3, 4, NAN).astype(np.float32),
    ),
    C("F.hardswish", "bounds", lambda t, x: F(t).hardswish(x), v(-4, -3, 0, 3, 4, NAN)),
    C("F.softplus", "threshold", lambda t, x: F(t).softplus(x), v(-INF, 0, 19, 20, 21, INF)),
    C("F.softplus", "beta", lambda t, x: F(t).softplus(x, 2.0, 20.0), v(9, 10, 11)),
    C("F.logsigmoid", "kink", lambda t, x: F(t).logsigmoid(x), v(-INF, -1, 0, 1, INF, NAN)),
    C("F.softsign", "zero", lambda t, x: F(t).softsign(x), KINK),
    C("abs", "zero", lambda t, x: t.abs(x), KINK),
    # -- piecewise-constant results: they require grad, with a zero gradient ------------------
    C("sign", "zero", lambda t, x: t.sign(x), KINK),
    C("sgn", "zero", lambda t, x: t.sgn(x), KINK),
    C("floor", "integers", lambda t, x: t.floor(x), ROUNDING),
    C("ceil", "integers", lambda t, x: t.ceil(x), ROUNDING),
    C("round", "halves", lambda t, x: t.round(x), ROUNDING),
    C("round", "decimals", lambda t, x: t.round(x, decimals=1), v(-0.05, 0.05, 0.15, 1.25)),
    C("trunc", "integers", lambda t, x: t.trunc(x), ROUNDING),
    C("frac", "integers", lambda t, x: t.frac(x), ROUNDING),
    C(
        "floor_divide",
        "exact",
        lambda t, x, y: t.floor_divide(x, y),
        v(-2, 0, 2),
        v(1, 1, 2),
        diff=(),
    ),
    C("div", "trunc", lambda t, x, y: t.div(x, y, rounding_mode="trunc"), v(-2, 0, 3), v(2, 1, 2)),
    C("remainder", "multiples", lambda t, x, y: t.remainder(x, y), v(-2, 0, 2, 3), v(1, 1, 2, 2)),
    C("fmod", "multiples", lambda t, x, y: t.fmod(x, y), v(-2, 0, 2, 3), v(1, 1, 2, 2)),
    # -- pow at 0 and at integer exponents ----------------------------------------------------
    C("pow", "exponent-0", lambda t, x: x**0, v(-1, 0, 1)),
    C("pow", "exponent-0.0", lambda t, x: t.pow(x, 0.0), v(-1, 0, 1)),
    C("pow", "exponent-1", lambda t, x: x**1, v(-1, 0, 1)),
    C("pow", "exponent-2", lambda t, x: x**2, v(-1, 0, 1)),
    C("pow", "exponent-3", lambda t, x: x**3, v(-2, -1, 0, 1)),
    C("pow", "exponent-3.0", lambda t, x: x**3.0, v(-2, -1, 0, 1)),
    C("pow", "exponent-0.5", lambda t, x: x**0.5, v(0, 1)),
    C("pow", "exponent--0.5", lambda t, x: x**-0.5, v(0, 1)),
    C("pow", "exponent-1.5", lambda t, x: x**1.5, v(0, 1)),
    C("pow", "exponent--1", lambda t, x: x**-1, v(-1, 0, 1)),
    C("pow", "exponent--2.0", lambda t, x: x**-2.0, v(-1, 0, 1)),
    C(
        "pow",
        "tensors",
        lambda t, x, y: t.pow(x, y),
        v(0, 0, 0, 0, -2, -2, 2, 0),
        v(0, 0.5, 2, -1, 2, 3, 0, 1),
    ),
    C("pow", "scalar-base-0", lambda t, y: t.pow(0.0, y), v(-1, 0, 0.5, 2)),
    C("pow", "scalar-base-2", lambda t, y: 2.0**y, v(-1, 0, 2)),
    C("square", "zero", lambda t, x: t.square(x), v(-1, 0, 1)),
    C("sqrt", "zero", lambda t, x: t.sqrt(x), v(0, 1, INF)),
    C("rsqrt", "zero", lambda t, x: t.rsqrt(x), v(0, 1, INF)),
    C("reciprocal", "zero", lambda t, x: t.reciprocal(x), v(0, 1, INF)),
    C("exp2", "infinities", lambda t, x: t.exp2(x), v(-INF, 0, INF)),
    C("log2", "zero", lambda t, x: t.log2(x), v(0, 1, INF)),
    C("log10", "zero", lambda t, x: t.log10(x), v(0, 1, INF)),
    # -- decomposed transcendental functions at 0, at their endpoints and at infinities -------
    C("asinh", "zero", lambda t, x: t.asinh(x), v(-INF, -1, 0, -0.0, 1e-30, 1, 1e300, INF)),
    C("sinh", "zero", lambda t, x: t.sinh(x), v(-INF, -800, -1, 0, 1e-30, 0.5, 1, 800, INF, NAN)),
    C("cosh", "zero", lambda t, x: t.cosh(x), v(-1, 0, 1)),
    C("atanh", "endpoints", lambda t, x: t.atanh(x), v(-1, 0, 0.5, 1)),
    C("acosh", "endpoint", lambda t, x: t.acosh(x), v(1, 2, INF)),
    C("asin", "endpoints", lambda t, x: t.asin(x), v(-1, 0, 0.5, 1)),
    C("acos", "endpoints", lambda t, x: t.acos(x), v(-1, 0, 0.5, 1)),
    C("erfc", "branches", lambda t, x: t.erfc(x), v(-INF, -1, 0, 0.46875, 4, 27, 30, INF)),
    C("tan", "zero", lambda t, x: t.tan(x), v(-1, 0, 1)),
    C("atan2", "origin", lambda t, y, x: t.atan2(y, x), v(0, 0, 1, 0), v(0, 1, 0, -1)),
    C(
        "xlogy",
        "x-zero",
        lambda t, x, y: t.xlogy(x, y),
        v(0, 0, 0, 0, 1, 2),
        v(0, 0.5, 1, -1, 0, 1),
        diff=(0,),  # y's gradient at (0, 0): see test_xlogy_where_it_differs_from_torch
    ),
    C("xlogy", "x-zero-both", lambda t, x, y: t.xlogy(x, y), v(0, 0, 0, 1), v(1, 2, -1, 0)),
    C("hypot", "origin", lambda t, x, y: t.hypot(x, y), v(0, 0, 3), v(0, 1, 4)),
    C("logaddexp", "equal", lambda t, x, y: t.logaddexp(x, y), v(0, 1, -INF), v(0, 1, -INF)),
    C("lerp", "weight-half", lambda t, x, y: t.lerp(x, y, 0.5), v(0, 1, 2), v(1, 1, 3)),
    C(
        "lerp",
        "tensor-weight",
        lambda t, x, y, w: t.lerp(x, y, w),
        v(0, 1, 2, 0),
        v(1, 1, 3, 0),
        v(0.5, -0.5, 0, 1),
    ),
    C("div", "zero", lambda t, x, y: x / y, v(0, 1, -1), v(0, 0, 0)),
    C("addcdiv", "zero", lambda t, x, a, b: t.addcdiv(x, a, b), v(0, 1), v(0, 1), v(0, 1)),
    # -- ties and NaN in pairwise max/min -----------------------------------------------------
    C("maximum", "ties", lambda t, x, y: t.maximum(x, y), v(0, 1, 2, -1), v(0, 0, 2, -1)),
    C("maximum", "nan", lambda t, x, y: t.maximum(x, y), v(NAN, 1, NAN), v(0, NAN, NAN)),
    C("minimum", "ties", lambda t, x, y: t.minimum(x, y), v(0, 1, 2, -1), v(0, 0, 2, -1)),
    C("minimum", "nan", lambda t, x, y: t.minimum(x, y), v(NAN, 1, NAN), v(0, NAN, NAN)),
    C("max", "pairwise-ties", lambda t, x, y: t.max(x, y), v(0, 1, 2), v(0, 0, 2)),
    C("min", "pairwise-ties", lambda t, x, y: t.min(x, y), v(0, 1, 2), v(0, 0, 2)),
    C("fmax", "ties", lambda t, x, y: t.fmax(x, y), v(0, 1, 2, -1), v(0, 0, 2, 3)),
    C("fmax", "nan", lambda t, x, y: t.fmax(x, y), v(NAN, 1, NAN), v(0, NAN, NAN)),
    C("fmin", "ties", lambda t, x, y: t.fmin(x, y), v(0, 1, 2, -1), v(0, 0, 2, 3)),
    C("fmin", "nan", lambda t, x, y: t.fmin(x, y), v(NAN, 1, NAN), v(0, NAN, NAN)),
    C("where", "ties", lambda t, x, y: t.where(x > y, x, y), v(0, 1, 2), v(0, 0, 2)),
    C("where", "nan-branch", lambda t, x: t.where(x > 0, t.sqrt(x), x), v(-1, 0, 4)),
    # -- ties in reductions: max/min(dim) pick one index; the others share --------------------
    C("max", "dim-ties", lambda t, x: t.max(x, 1).values, TIES),
    C("max", "dim0-keepdim-ties", lambda t, x: t.max(x, 0, keepdim=True)[0], TIES),
    C("max", "dim-nan", lambda t, x: t.max(x, 1).values, NAN_ROWS),
    C("max", "all-ties", lambda t, x: t.max(x), TIES),
    C("max", "all-nan", lambda t, x: t.max(x), NAN_ROWS),
    C("min", "dim-ties", lambda t, x: t.min(x, -1).values, TIES),
    C("min", "dim-nan", lambda t, x: t.min(x, 1).values, NAN_ROWS),
    C("min", "all-ties", lambda t, x: t.min(x), TIES),
    C("min", "all-nan", lambda t, x: t.min(x), NAN_ROWS),
    C("amax", "ties", lambda t, x: t.amax(x, 1), TIES),
    C("amax", "all-ties", lambda t, x: t.amax(x), TIES),
    C("amin", "ties", lambda t, x: t.amin(x, (0, 1), keepdim=True), TIES),
    C("aminmax", "ties", lambda t, x: t.aminmax(x, dim=1), TIES),
    C("aminmax", "all-ties", lambda t, x: t.aminmax(x), TIES),
    C("prod", "zeros", lambda t, x: t.prod(x, 1), m([[0, 2, 3], [0, 0, 1], [1, 2, 3]])),
    C("prod", "all-one-zero", lambda t, x: t.prod(x), m([[0, 2], [3, 4]])),
    C("sort", "ties", lambda t, x: t.sort(x, 1).values, TIES),
    C("sort", "descending-ties", lambda t, x: t.sort(x, 1, descending=True).values, TIES),
    C("sort", "stable-ties", lambda t, x: t.sort(x, dim=0, stable=True).values, TIES),
    C("msort", "ties", lambda t, x: t.msort(x), TIES),
    C(
        "logsumexp",
        "-inf-rows",
        lambda t, x: t.logsumexp(x, 1),
        m([[-INF, -INF], [0, -INF], [1, 1]]),
    ),
    C("logsumexp", "inf", lambda t, x: t.logsumexp(x, 1), m([[INF, 0], [0, 1]])),
    C("cumsum", "zeros", lambda t, x: t.cumsum(x, 0), v(0, 0, 1)),
    # -- norms and statistics at zero ---------------------------------------------------------
    C("norm", "zero", lambda t, x: t.norm(x), v(0, 0, 0)),
    C("norm", "zero-row", lambda t, x: t.norm(x, dim=1), m([[0, 0], [3, 4]])),
    C("norm", "zero-row-keepdim", lambda t, x: t.norm(x, dim=1, keepdim=True), m([[0, 0], [3, 4]])),
    C("norm", "p1", lambda t, x: t.norm(x, p=1), v(0, 0, 1, -2)),
    C("norm", "pinf-ties", lambda t, x: t.norm(x, p=INF), v(0, -2, 2, 1)),
    C("norm", "pinf-zero", lambda t, x: t.norm(x, p=INF), v(0, 0, 0)),
    C("norm", "p-inf-ties", lambda t, x: t.norm(x, p=-INF), v(1, -1, 2, 1)),
    C("norm", "p0", lambda t, x: t.norm(x, p=0), v(0, -1, 2)),
    C("norm", "p3-zero", lambda t, x: t.norm(x, p=3), v(0, 0, 0)),
    C("norm", "p3-some-zero", lambda t, x: t.norm(x, p=3), v(0, 1, -2)),
    C("norm", "p0.5-some-zero", lambda t, x: t.norm(x, p=0.5), v(0, 1, -2)),
    C("norm", "p0.5-zero", lambda t, x: t.norm(x, p=0.5), v(0, 0)),
    C("norm", "p-1", lambda t, x: t.norm(x, p=-1), v(1, 2, -2)),
    C("linalg.vector_norm", "zero", lambda t, x: t.linalg.vector_norm(x), v(0, 0, 0)),
    C(
        "linalg.vector_norm",
        "zero-row",
        lambda t, x: t.linalg.vector_norm(x, 2, 1),
        m([[0, 0], [3, 4]]),
    ),
    C(
        "linalg.vector_norm",
        "p0-dim",
        lambda t, x: t.linalg.vector_norm(x, 0, 1),
        m([[0, 0], [3, 0]]),
    ),
    C("linalg.matrix_norm", "fro-zero", lambda t, x: t.linalg.matrix_norm(x), np.zeros((2, 2))),
    C(
        "linalg.matrix_norm",
        "1-ties",
        lambda t, x: t.linalg.matrix_norm(x, 1),
        m([[1, -1], [0, 0]]),
    ),
    C(
        "linalg.matrix_norm",
        "inf-ties",
        lambda t, x: t.linalg.matrix_norm(x, INF),
        m([[1, 0], [0, -1]]),
    ),
    C(
        "linalg.matrix_norm",
        "-inf-ties",
        lambda t, x: t.linalg.matrix_norm(x, -INF),
        m([[1, 0], [0, -1]]),
    ),
    C("linalg.norm", "zero", lambda t, x: t.linalg.norm(x), v(0, 0)),
    C("std", "constant-rows", lambda t, x: t.std(x, 1), m([[1, 1, 1], [1, 2, 3]])),
    C("std", "constant", lambda t, x: t.std(x), v(2, 2, 2)),
    C("std", "one-sample", lambda t, x: t.std(x, 1, correction=0), m([[1], [2]])),
    C("std_mean", "constant-rows", lambda t, x: t.std_mean(x, 1), m([[1, 1, 1], [1, 2, 3]])),
    C("var", "constant-rows", lambda t, x: t.var(x, 1), m([[1, 1, 1], [1, 2, 3]])),
    C("var_mean", "constant-rows", lambda t, x: t.var_mean(x, 1), m([[1, 1, 1], [1, 2, 3]])),
    C("nansum", "nan", lambda t, x: t.nansum(x), v(NAN, 1, 0)),
    C("nanmean", "nan", lambda t, x: t.nanmean(x), v(NAN, 1, 0)),
    C("nan_to_num", "specials", lambda t, x: t.nan_to_num(x), v(NAN, INF, -INF, 1)),
    # -- softmax family with infinities and ties ----------------------------------------------
    C("F.softmax", "-inf", lambda t, x: t.softmax(x, 1), m([[0, -INF, 1], [-INF, 0, -INF]])),
    C("F.softmax", "all--inf", lambda t, x: t.softmax(x, 1), m([[-INF, -INF], [0, 0]])),
    C("F.softmax", "ties", lambda t, x: F(t).softmax(x, 1), m([[1, 1, 1], [0, 2, 2]])),
    C(
        "F.log_softmax",
        "-inf",
        lambda t, x: t.log_softmax(x, 1),
        m([[0, -INF, 1], [-INF, 0, -INF]]),
    ),
    C("F.log_softmax", "ties", lambda t, x: F(t).log_softmax(x, 1), m([[1, 1, 1], [0, 2, 2]])),
    C("F.softmin", "inf", lambda t, x: F(t).softmin(x, 1), m([[0, INF, 1], [2, 2, 2]])),
    # -- losses at their kinks ----------------------------------------------------------------
    C("F.l1_loss", "zero", lambda t, x, y: F(t).l1_loss(x, y), v(0, 1, 2), v(0, 0, 2)),
    C(
        "F.smooth_l1_loss",
        "threshold",
        lambda t, x, y: F(t).smooth_l1_loss(x, y),
        v(0, 1, 2, -1, 3),
        v(0, 0, 2, 0, 2),
    ),
    C(
        "F.smooth_l1_loss",
        "beta-0",
        lambda t, x, y: F(t).smooth_l1_loss(x, y, beta=0.0),
        v(0, 1, 2),
        v(0, 0, 2),
    ),
    C(
        "F.smooth_l1_loss",
        "beta-half",
        lambda t, x, y: F(t).smooth_l1_loss(x, y, beta=0.5),
        v(0, 0.5, -0.5, 2),
        v(0, 0, 0, 2),
    ),
    C(
        "F.binary_cross_entropy_with_logits",
        "zero",
        lambda t, x, y: F(t).binary_cross_entropy_with_logits(x, y),
        v(0, 0, -1, 1),
        v(0, 1, 0.5, 0.25),
    ),
    C(
        "F.binary_cross_entropy_with_logits",
        "pos-weight",
        lambda t, x, y, w: F(t).binary_cross_entropy_with_logits(x, y, pos_weight=w),
        v(0, 0, -1),
        v(0, 1, 0.5),
        v(2, 3, 0.5),
        diff=(0, 1),  # torch: pos_weight is not differentiable
    ),
    C(
        "F.binary_cross_entropy",
        "edges",
        lambda t, x, y: F(t).binary_cross_entropy(x, y),
        v(0, 1, 0, 1, 1e-13, 1 - 1e-13, 1e-200, 1e-12, 0.5),
        v(0, 1, 1, 0, 0.3, 0.3, 0.5, 0.5, 0.5),
        diff=(0,),  # the target's gradient at the edges: see test_bce_target_gradient_...
    ),
    C(
        "F.binary_cross_entropy",
        "edges-float32",
        lambda t, x, y: F(t).binary_cross_entropy(x, y),
        v(0, 1, 0, 1, 1e-13, 1e-6, 0.5).astype(np.float32),
        v(0, 1, 1, 0, 0.3, 0.5, 0.5).astype(np.float32),
        diff=(0,),
    ),
    C(
        "F.binary_cross_entropy",
        "float16",
        lambda t, x: F(t).binary_cross_entropy(x, t.full_like(x, 0.25)),
        v(0.5, 0.3, 1e-3).astype(np.float16),
    ),
    C(
        "F.binary_cross_entropy",
        "half",
        lambda t, x, y: F(t).binary_cross_entropy(x, y),
        v(0.5, 0.5, 0.25),
        v(0.5, 0, 1),
    ),
    C(
        "F.cross_entropy",
        "-inf-and-ties",
        lambda t, x: F(t).cross_entropy(x, t.tensor([0, 1])),
        m([[0, -INF, 1], [1, 1, 1]]),
    ),
    C(
        "F.cross_entropy",
        "probabilities-ties",
        lambda t, x, p: F(t).cross_entropy(x, p),
        m([[1, 1, 1], [0, 2, 2]]),
        m([[0.5, 0.5, 0], [0, 0, 1]]),
    ),
    C(
        "F.linear_cross_entropy",
        "tied-logits",  # equal weight rows, and a zero input row: every logit ties
        lambda t, x, w: F(t).linear_cross_entropy(x, w, t.tensor([0, 2])),
        m([[1, 2], [0, 0]]),
        m([[1, 1], [1, 1], [0, 3]]),
    ),
    # -- normalization at zero vectors and constant rows --------------------------------------
    C("F.normalize", "zero-row", lambda t, x: F(t).normalize(x, dim=1), m([[0, 0], [3, 4]])),
    C(
        "F.normalize",
        "p1-zero-row",
        lambda t, x: F(t).normalize(x, p=1, dim=1),
        m([[0, 0], [3, -4]]),
    ),
    C("F.normalize", "at-eps", lambda t, x: F(t).normalize(x, dim=1, eps=5.0), m([[0, 5], [3, 4]])),
    C(
        "F.cosine_similarity",
        "zero-vectors",
        lambda t, x, y: F(t).cosine_similarity(x, y),
        m([[0, 0], [3, 4], [1, 1]]),
        m([[1, 2], [0, 0], [2, 2]]),
    ),
    C(
        "F.layer_norm",
        "constant-row",
        lambda t, x: F(t).layer_norm(x, (3,)),
        m([[1, 1, 1], [1, 2, 3]]),
    ),
    C(
        "F.batch_norm",
        "constant-channel",
        lambda t, x: F(t).batch_norm(x, None, None, training=True),
        m([[1, 1], [1, 2], [1, 3]]),
    ),
    # -- pooling ties -------------------------------------------------------------------------
    C("F.max_pool2d", "ties", lambda t, x: F(t).max_pool2d(x, 2, 1), POOL),
    C("F.max_pool2d", "ties-stride", lambda t, x: F(t).max_pool2d(x, 2, 2), POOL),
    C("F.max_pool2d", "ties-padding", lambda t, x: F(t).max_pool2d(x, 3, 2, padding=1), POOL),
    C("F.max_pool2d", "ties-dilation", lambda t, x: F(t).max_pool2d(x, 2, 1, dilation=2), POOL),
    C(
        "F.max_pool2d",
        "indices",
        lambda t, x: F(t).max_pool2d(x, 2, 1, return_indices=True)[0],
        POOL,
    ),
    C("F.max_pool2d", "nan", lambda t, x: F(t).max_pool2d(x, 2, 1), POOL_NAN),
    C("F.max_pool2d", "unbatched-ties", lambda t, x: F(t).max_pool2d(x, 2, 1), POOL[0]),
    C("F.avg_pool2d", "padding", lambda t, x: F(t).avg_pool2d(x, 2, 2, padding=1), POOL),
    C("F.max_pool1d", "ties", lambda t, x: F(t).max_pool1d(x, 2, 1), POOL[0]),
    C("F.max_pool1d", "ties-padding", lambda t, x: F(t).max_pool1d(x, 3, 2, 1), POOL[0]),
    C("F.max_pool1d", "nan", lambda t, x: F(t).max_pool1d(x, 2, 1), POOL_NAN[0]),
    C("F.avg_pool1d", "padding", lambda t, x: F(t).avg_pool1d(x, 2, 2, padding=1), POOL[0]),
    C("F.adaptive_max_pool1d", "ties", lambda t, x: F(t).adaptive_max_pool1d(x, 3), POOL[0]),
    C("F.adaptive_max_pool2d", "ties", lambda t, x: F(t).adaptive_max_pool2d(x, 3), POOL),
    C("F.adaptive_max_pool2d", "nan", lambda t, x: F(t).adaptive_max_pool2d(x, 2), POOL_NAN),
    C(
        "F.grid_sample",
        "pixel-centres",  # the bilinear weights' kink: coordinates exactly on pixels
        lambda t, x, g: F(t).grid_sample(x, g, align_corners=True),
        np.arange(9.0).reshape(1, 1, 3, 3) ** 2,
        np.array([[[[-1, -1], [0, 0], [1, 0.5]], [[0.5, 1], [1, 1], [-1, 1]]]]),
    ),
    C(
        "F.grid_sample",
        "border-clip",
        lambda t, x, g: F(t).grid_sample(x, g, padding_mode="border", align_corners=False),
        np.arange(9.0).reshape(1, 1, 3, 3) ** 2,
        np.array([[[[-1.5, 0.2], [0.3, 2.0]], [[1.0, 1.0], [0.1, -0.4]]]]),
    ),
    C(
        "F.lp_pool1d",
        "zero-window",
        lambda t, x: F(t).lp_pool1d(x, 2, 2),
        v(0, 0, 1, 2, -1, 1)[None],
    ),
    C("F.lp_pool2d", "zero-window", lambda t, x: F(t).lp_pool2d(x, 3, 2), POOL * (POOL - 1)),
    C("F.lp_pool3d", "zero-window", lambda t, x: F(t).lp_pool3d(x, 1, (1, 2, 2)), POOL - 1),
    C("F.max_pool3d", "ties", lambda t, x: F(t).max_pool3d(x, (1, 2, 2), 1), POOL),
    C("F.max_pool3d", "nan", lambda t, x: F(t).max_pool3d(x, (1, 2, 2), 1), POOL_NAN),
    C("F.avg_pool3d", "padding", lambda t, x: F(t).avg_pool3d(x, (1, 2, 2), 2, (0, 1, 1)), POOL),
    C("F.adaptive_max_pool3d", "ties", lambda t, x: F(t).adaptive_max_pool3d(x, (1, 3, 3)), POOL),
    C(
        "F.scaled_dot_product_attention",
        "causal",
        lambda t, q: F(t).scaled_dot_product_attention(q, q, q, is_causal=True),
        np.array([[[1, 0], [0, 1], [1, 1]]], dtype=np.float64),
    ),
    C(
        "F.multi_head_attention_forward",
        "masked-key",
        _attention_with_a_masked_key,
        np.array([[[1, 0]], [[0, 1]], [[1, 1]]], dtype=np.float64),
        np.array([[1, 0], [0, 1], [1, 1], [0, 1], [1, 0], [1, -1]], dtype=np.float64),
        m([[1, 2], [0, 1]]),
    ),
    C("F.dropout", "p0", lambda t, x: F(t).dropout(x, 0.0), KINK),
    C("F.dropout", "p1", lambda t, x: F(t).dropout(x, 1.0), v(-1, 0, 1)),
    # channel and alpha dropout at their deterministic points (p=0 passes, p=1 zeroes)
    *[
        C(f"F.{name}", f"p{p:g}", lambda t, x, name=name, p=p: getattr(F(t), name)(x, p, True), x)
        for name, x in (
            ("dropout1d", POOL[0]),
            ("dropout2d", POOL),
            ("dropout3d", POOL),
            ("alpha_dropout", KINK),
            ("feature_alpha_dropout", POOL),
        )
        for p in (0.0, 1.0)
    ],
    # group and instance norm where a group or channel is constant (zero variance)
    C(
        "F.group_norm",
        "constant-group",
        lambda t, x: F(t).group_norm(x, 2),
        np.array([[[1, 1], [1, 1], [1, 2], [3, 4]]], dtype=np.float64),
    ),
    C(
        "F.instance_norm",
        "constant-channel",
        lambda t, x: F(t).instance_norm(x),
        np.array([[[1, 1, 1], [1, 2, 3]], [[0, 0, 0], [2, 2, 5]]], dtype=np.float64),
    ),
    C("F.rms_norm", "zero-row", lambda t, x: F(t).rms_norm(x, (2,)), m([[0, 0], [3, 4]])),
    C(
        "F.local_response_norm",
        "zeros",
        lambda t, x: F(t).local_response_norm(x, 2),
        np.array([[[0, 0], [0, 1], [-1, 0]]], dtype=np.float64),
    ),
    # -- the rest of nn.functional (shrinkage, thresholds, margins, in-place forms, pools) --------
    C("F.threshold", "at-threshold", lambda t, x: F(t).threshold(x, 0.0, -2.0), KINK),
    C("F.threshold_", "at-threshold", lambda t, x: F(t).threshold_(x * 1, 1.0, 5.0), KINK),
    C("F.hardshrink", "bounds", lambda t, x: F(t).hardshrink(x, 1.0), KINK),
    C("F.softshrink", "bounds", lambda t, x: F(t).softshrink(x, 1.0), KINK),
    C("F.prelu", "kink", lambda t, x, w: F(t).prelu(x, w), KINK, v(0.25)),
    C("F.rrelu", "kink-eval", lambda t, x: F(t).rrelu(x), KINK),
    C("F.rrelu_", "kink-eval", lambda t, x: F(t).rrelu_(x * 1), KINK),
    C("F.relu_", "kink", lambda t, x: F(t).relu_(x * 1), KINK),
    C("F.elu_", "kink", lambda t, x: F(t).elu_(x * 1), KINK),
    C("F.selu_", "kink", lambda t, x: F(t).selu_(x * 1), KINK),
    C("F.celu_", "kink", lambda t, x: F(t).celu_(x * 1), KINK),
    C("F.leaky_relu_", "kink", lambda t, x: F(t).leaky_relu_(x * 1, 0.2), KINK),
    C("F.hardtanh_", "bounds", lambda t, x: F(t).hardtanh_(x * 1), v(-2, -1, 0, 1, 2, NAN)),
    C(
        "F.huber_loss",
        "delta",
        lambda t, x, y: F(t).huber_loss(x, y, reduction="none", delta=1.0),
        v(-2, -1, 0, 1, 3),
        v(0, 0, 0, 0, 0),
    ),
    C(
        "F.margin_ranking_loss",
        "hinge",
        lambda t, a, b: F(t).margin_ranking_loss(
            a, b, t.tensor([1.0, -1.0, 1.0]), reduction="none"
        ),
        v(1, 2, 0),
        v(1, 2, 1),
        diff=(0, 1),
    ),
    C(
        "F.hinge_embedding_loss",
        "margin",
        lambda t, x: F(t).hinge_embedding_loss(x, t.tensor([-1.0, -1.0, 1.0]), reduction="none"),
        v(1, 0.5, 0),
    ),
    C(
        "F.soft_margin_loss",
        "zero",
        lambda t, x: F(t).soft_margin_loss(x, t.tensor([1.0, -1.0]), reduction="none"),
        v(0, 0),
    ),
    C(
        "F.cosine_embedding_loss",
        "margin",
        lambda t, a, b: F(t).cosine_embedding_loss(a, b, t.tensor([1.0, -1.0]), reduction="none"),
        m([[1, 0], [1, 1]]),
        m([[0, 1], [1, 1]]),
    ),
    C(
        "F.triplet_margin_loss",
        "hinge",
        lambda t, a, p, n: F(t).triplet_margin_loss(a, p, n, margin=1.0, reduction="none"),
        m([[0, 0], [0, 0]]),
        m([[1, 0], [0, 1]]),
        m([[2, 0], [0, 3]]),
    ),
    C(
        "F.triplet_margin_with_distance_loss",
        "hinge",
        lambda t, a, p, n: F(t).triplet_margin_with_distance_loss(a, p, n, reduction="none"),
        m([[0, 0], [0, 0]]),
        m([[1, 0], [0, 1]]),
        m([[2, 0], [0, 3]]),
    ),
    C(
        "F.pairwise_distance",
        "equal-rows",
        lambda t, a, b: F(t).pairwise_distance(a, b),
        m([[1, 2], [0, 0]]),
        m([[1, 2], [1, 0]]),
    ),
    C("F.pdist", "distinct", lambda t, x: F(t).pdist(x), m([[0, 0], [3, 4], [1, 1]])),
    C(
        "F.multi_margin_loss",
        "ties",
        lambda t, x: F(t).multi_margin_loss(x, t.tensor([0, 2])),
        m([[1, 0, 0], [0, 1, 1]]),
    ),
    C(
        "F.multilabel_margin_loss",
        "ties",
        lambda t, x: F(t).multilabel_margin_loss(x, t.tensor([[0, -1, 1], [2, 1, -1]])),
        m([[1, 0, 0], [0, 1, 1]]),
    ),
    C(
        "F.max_pool2d_with_indices",
        "ties",
        lambda t, x: F(t).max_pool2d_with_indices(x, 2, 1)[0],
        POOL,
    ),
    C(
        "F.max_pool1d_with_indices",
        "ties",
        lambda t, x: F(t).max_pool1d_with_indices(x[0], 2, 1)[0],
        POOL,
    ),
    C(
        "F.max_pool3d_with_indices",
        "ties",
        lambda t, x: F(t).max_pool3d_with_indices(x, (1, 2, 2), 1)[0],
        POOL,
    ),
    C(
        "F.adaptive_max_pool2d_with_indices",
        "ties",
        lambda t, x: F(t).adaptive_max_pool2d_with_indices(x, 2)[0],
        POOL,
    ),
    C(
        "F.adaptive_max_pool1d_with_indices",
        "ties",
        lambda t, x: F(t).adaptive_max_pool1d_with_indices(x[0], 2)[0],
        POOL,
    ),
    C(
        "F.adaptive_max_pool3d_with_indices",
        "ties",
        lambda t, x: F(t).adaptive_max_pool3d_with_indices(x, 2)[0],
        POOL,
    ),
    C(
        "F.max_unpool2d",
        "ties",
        lambda t, x: F(t).max_unpool2d(*F(t).max_pool2d(x, 2, return_indices=True), 2),
        POOL,
    ),
    C(
        "F.max_unpool1d",
        "ties",
        lambda t, x: F(t).max_unpool1d(*F(t).max_pool1d(x[0], 2, return_indices=True), 2),
        POOL,
    ),
    C(
        "F.max_unpool3d",
        "ties",
        lambda t, x: F(t).max_unpool3d(
            *F(t).max_pool3d(x, (1, 2, 2), return_indices=True), (1, 2, 2)
        ),
        POOL,
    ),
    C(
        "F.embedding_bag",
        "max-ties",
        lambda t, w: F(t).embedding_bag(t.tensor([0, 1, 2, 3]), w, t.tensor([0, 2]), mode="max"),
        m([[1, 2], [1, 0], [3, 3], [3, 3]]),
    ),
    C(
        "F.kl_div",
        "zero-target",
        lambda t, x: F(t).kl_div(x, t.tensor([0.0, 0.5, 0.5]), reduction="sum"),
        v(-1, -0.5, 0),
    ),
    C(
        "F.gaussian_nll_loss",
        "var-clamp",
        lambda t, x, var: F(t).gaussian_nll_loss(x, t.zeros(3), var, eps=0.5, reduction="none"),
        v(1, 2, 3),
        v(0.25, 0.5, 1.0),
    ),
]

# Ops whose gradient here follows torch's *rule* but not torch's exact numbers, and why.
DIFFERS_FROM_TORCH = {
    "topk": "ties: both send the gradient to the indices returned, but torch's CPU topk "
    "returns tied elements in quickselect order, lazytorch in index order (see "
    "test_ties_follow_the_returned_index)",
    "kthvalue": "ties: as topk",
}


# Every case on the interpreter and on the cpp backend (not the op matrix's sample).
pytestmark = pytest.mark.backends("interpreter", "cpp")


def _quiet(fn: Callable[[], Any]) -> Any:
    import warnings

    with warnings.catch_warnings():  # NumPy's log(0), 0 * inf: the point of these cases
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient_matches_torch(case: Case) -> None:
    _quiet(lambda: check(case.fn, *case.inputs))
    if case.diff == ():
        return  # torch has no derivative here (floor_divide): the forward is the case
    _quiet(lambda: check_grad(case.fn, *case.inputs, diff=case.diff))


SECOND_ORDER = (
    "cosh-zero",
    "logaddexp-equal",
    "F.smooth_l1_loss-threshold",
    "F.smooth_l1_loss-beta-half",
    "prod-zeros",
    "prod-all-one-zero",
    "relu-kink",
    "clamp-bounds",
    "maximum-ties",
    "max-dim-ties",
    "amax-ties",
    "F.max_pool2d-ties",
    "abs-zero",
    "sign-zero",
)


@pytest.mark.parametrize("case_id", SECOND_ORDER)
def test_second_order_matches_torch(case_id: str) -> None:
    """Where a decomposition's kink would lose curvature (abs inside cosh, logaddexp and
    smooth_l1; prod with two zeros), the second derivative is torch's too."""
    (case,) = [c for c in CASES if c.id == case_id]
    _quiet(lambda: check_grad(case.fn, *case.inputs, diff=case.diff, second_order=True))


@pytest.mark.parametrize(
    "name, fn",
    [
        ("sign", lambda t, x: t.sign(x)),
        ("sgn", lambda t, x: t.sgn(x)),
        ("pow0", lambda t, x: x**0),
        ("floor", lambda t, x: t.floor(x)),
        ("round", lambda t, x: t.round(x)),
        ("trunc", lambda t, x: t.trunc(x)),
        ("norm-p0", lambda t, x: t.norm(x, p=0)),
    ],
)
def test_piecewise_constant_results_require_grad(name: str, fn: Callable[..., Any]) -> None:
    """torch: the result requires grad, and backward() runs and gives zeros."""
    x = lt.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = fn(lt, x)
    want = fn(torch, torch.tensor([-1.0, 0.0, 2.0], requires_grad=True))
    assert y.requires_grad == want.requires_grad
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["gt", "eq", "isnan", "argmax", "count_nonzero"])
def test_integer_and_bool_results_do_not_require_grad(name: str) -> None:
    x = lt.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    fn = getattr(lt, name)
    y = fn(x, 0.0) if name in ("gt", "eq") else fn(x)
    assert not y.requires_grad


def test_no_gradient_graph_without_requires_grad() -> None:
    """The gradient-exact forms are recorded only where a gradient flows: relu, clamp and
    sign of a plain tensor stay the single maximum / minimum / comparison they were."""
    x = lt.tensor([-1.0, 0.0, 2.0])
    assert lt.relu(x)._node.op.name == "maximum"
    assert lt.clamp(x, -1, 1)._node.op.name == "minimum"
    assert lt.sign(x)._node.op.name == "sub"


@pytest.mark.parametrize("op", ["topk", "topk-smallest", "kthvalue"])
def test_ties_follow_the_returned_index(op: str) -> None:
    """As in torch, the gradient goes to the tied elements whose indices are returned.

    Which tied elements those are is not torch's choice (see DIFFERS_FROM_TORCH), so the
    gradient is checked against our own indices: the cotangent scattered to them.
    """
    for backend in helpers.BACKENDS:
        with lt.backend(backend):
            x = lt.tensor(TIES, requires_grad=True)
            if op == "kthvalue":
                values, idx = lt.kthvalue(x, 2, 1, keepdim=True)
            else:
                values, idx = lt.topk(x, 2, 1, largest=op == "topk")
            ct = np.arange(1.0, 1.0 + values.numel()).reshape(tuple(values.shape))
            (g,) = lt.autograd.grad((values * lt.tensor(ct)).sum(), [x])
            picked = idx.numpy()
            np.testing.assert_array_equal(
                values.detach().numpy(), np.take_along_axis(TIES, picked, 1)
            )
            want = np.zeros_like(TIES)
            np.put_along_axis(want, picked, ct, axis=1)
            np.testing.assert_array_equal(g.numpy(), want, err_msg=backend)


def test_xlogy_where_it_differs_from_torch() -> None:
    """Left differing from torch: at x = 0 the value is 0, and torch's gradients are
    y's: x / y = 0 / 0 = NaN at y = 0 (lazytorch: 0), and x's: log(y) = inf at y = inf
    (lazytorch: 0; a value of 0 with an infinite slope is not a where-selection of
    x * log(y), which is NaN there)."""
    x = lt.tensor([0.0, 0.0], dtype=lt.float64, requires_grad=True)
    y = lt.tensor([0.0, INF], dtype=lt.float64, requires_grad=True)
    out = lt.xlogy(x, y)
    assert out.tolist() == [0.0, 0.0]
    gx, gy = lt.autograd.grad(out.sum(), [x, y])
    assert gx.tolist() == [0.0, 0.0] and gy.tolist() == [0.0, 0.0]
    tx = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    ty = torch.tensor([0.0, INF], dtype=torch.float64, requires_grad=True)
    tgx, tgy = torch.autograd.grad(torch.xlogy(tx, ty).sum(), [tx, ty])
    assert tgx.tolist() == [0.0, INF] and math.isnan(tgy[0]) and tgy[1] == 0


def test_bce_target_gradient_at_the_edges_differs_from_torch() -> None:
    """Left differing from torch: the target's gradient is log(1 - x) - log(x), and torch
    takes it from unclamped logs (inf at x = 0) while its loss clamps them at -100;
    lazytorch differentiates the clamped loss (100). Within the clamp they agree."""
    x = lt.tensor([0.0, 1e-13], dtype=lt.float64)
    t = lt.tensor([0.5, 0.5], dtype=lt.float64, requires_grad=True)
    loss = lt.nn.functional.binary_cross_entropy(x, t, reduction="sum")
    (g,) = lt.autograd.grad(loss, [t])
    tt = torch.tensor([0.5, 0.5], dtype=torch.float64, requires_grad=True)
    tloss = torch.nn.functional.binary_cross_entropy(torch.tensor(x.numpy()), tt, reduction="sum")
    (tg,) = torch.autograd.grad(tloss, [tt])
    assert g.tolist()[0] == 100.0 and tg.tolist()[0] == INF
    assert math.isclose(g.tolist()[1], tg.tolist()[1], rel_tol=1e-12)


def test_amax_of_a_slice_with_nan_shares_between_the_nans() -> None:
    """Left differing from torch on purpose: torch's amax/amin backward divides by the count
    of elements equal to the result, which is 0 for a NaN result, so its gradient is NaN for
    the whole slice. lazytorch shares it between the NaNs, as torch's max()/min() do."""
    x = lt.tensor(NAN_ROWS, requires_grad=True)
    (g,) = lt.autograd.grad(lt.amax(x, 1).sum(), [x])
    want = np.array([[0, 0.5, 0, 0.5], [1, 0, 0, 0], [0.5, 0, 0.5, 0]])
    np.testing.assert_array_equal(g.numpy(), want)
    tx = torch.tensor(NAN_ROWS, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.amax(tx, 1).sum(), [tx])
    assert torch.isnan(tg[:2]).all() and tg[2].tolist() == want[2].tolist()


# -- the table: every public math op is covered, smooth, or not differentiable ----------------

MATH_MODULES = (
    "lazytorch.ops.elementwise",
    "lazytorch.ops.transcendental",
    "lazytorch.ops.reduction",
    "lazytorch.ops.linalg",
    "lazytorch.ops.fft",
    "lazytorch.ops.stft",
    "lazytorch.ops.sorting",
    "lazytorch.ops.activation",
    "lazytorch.nn.functional.activation",
    "lazytorch.nn.functional.loss",
    "lazytorch.nn.functional.normalization",
    "lazytorch.nn.functional.conv",
    "lazytorch.nn.functional.col2im",
    "lazytorch.nn.functional.grid",
    "lazytorch.nn.functional.pooling",
    "lazytorch.nn.functional.sampling",
    "lazytorch.nn.functional.attention",
    "lazytorch.nn.functional.layers",
)

# No kink, tie or special point in the gradient (smooth, or linear in every input).
SMOOTH = set(
    """
    add sub subtract rsub mul multiply neg negative positive true_divide divide addcmul exp
    expm1 log log1p sin cos tanh sigmoid erf atan arctan sum mean matmul mm bmm mv dot outer
    ger addmm baddbmm tensordot einsum F.linear F.conv2d F.gelu F.silu F.mish F.tanh
    F.sigmoid F.mse_loss F.nll_loss F.embedding F.conv1d F.conv3d F.conv_transpose1d
    F.conv_transpose2d F.conv_transpose3d F.fold F.unfold F.pixel_shuffle F.pixel_unshuffle
    F.adaptive_avg_pool1d F.adaptive_avg_pool2d F.adaptive_avg_pool3d F.interpolate F.upsample
    F.upsample_nearest F.upsample_bilinear F.affine_grid F.tanhshrink F.glu F.bilinear
    F.channel_shuffle F.poisson_nll_loss F.multilabel_soft_margin_loss F.gumbel_softmax
    fft.fft fft.ifft fft.rfft fft.irfft fft.hfft fft.ihfft fft.fft2 fft.ifft2 fft.rfft2
    fft.irfft2 fft.hfft2 fft.ihfft2 fft.fftn fft.ifftn fft.rfftn fft.irfftn fft.hfftn
    fft.ihfftn fft.fftshift fft.ifftshift stft istft
    """.split()
)

# Integer or bool results, or factories of no tensor input: nothing to differentiate.
NOT_DIFFERENTIABLE = set(
    """
    eq ne lt le gt ge not_equal less less_equal greater greater_equal bitwise_and bitwise_or
    bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift logical_and logical_or logical_xor logical_not isnan isinf isposinf
    isneginf isfinite isreal argmax argmin argsort all any count_nonzero F.one_hot
    fft.fftfreq fft.rfftfreq
    """.split()
)


def _public_ops() -> dict[int, tuple[Any, list[str]]]:
    """id(function) -> (function, its public names), for functions the math modules define
    and lazytorch, lazytorch.nn.functional or lazytorch.linalg export."""
    namespaces = {"": lt, "F.": lt.nn.functional, "linalg.": lt.linalg, "fft.": lt.fft}
    defined = set()
    for mod_name in MATH_MODULES:
        mod = importlib.import_module(mod_name)
        for obj in vars(mod).values():
            if inspect.isfunction(obj) and obj.__module__ == mod_name:
                defined.add(id(obj))
    ops: dict[int, tuple[Any, list[str]]] = {}
    for prefix, ns in namespaces.items():
        for name in dir(ns):
            obj = getattr(ns, name)
            # behind autocast's wrapper and the one taking NumPy's names (methods.NUMPY_NAMES)
            while inspect.isfunction(obj) and {"autocast_op", "numpy_names"} & set(vars(obj)):
                obj = obj.__wrapped__
            if not name.startswith("_") and id(obj) in defined:
                ops.setdefault(id(obj), (obj, []))[1].append(prefix + name)
    return ops


def test_every_op_is_classified() -> None:
    covered = {c.op for c in CASES} | set(DIFFERS_FROM_TORCH)
    listed = covered | SMOOTH | NOT_DIFFERENTIABLE
    missing = []
    for _obj, names in _public_ops().values():
        if not listed & set(names):
            missing.append(names[0])
    assert not missing, (
        f"ops with no case in tests/autograd/test_grad_semantics.py: {sorted(missing)}. Add a Case with "
        "inputs on the op's kinks, ties or special points, or list it in SMOOTH or "
        "NOT_DIFFERENTIABLE"
    )
    assert not (covered & SMOOTH) and not (covered & NOT_DIFFERENTIABLE)
    # every name in the tables is a real public op (a typo would hide a missing case)
    every_name = {n for _obj, names in _public_ops().values() for n in names}
    assert listed <= every_name, sorted(listed - every_name)
