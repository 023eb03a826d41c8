"""The vjp rule of every differentiable primitive, filled into the op table's ``vjp`` slot.

A rule is ``fn(ct, out, inputs, attrs, needs) -> cotangents``: `ct` is the gradient
arriving at the node `out` (already of out's shape and dtype), `needs[i]` says whether
input i wants a gradient, and the result has one node (or None) per input, of that input's
shape. Rules record primitives directly — they run under the engine's grad mode, so with
``create_graph=True`` the gradient nodes carry gradient themselves and higher derivatives
need nothing more.

``saves`` lists the forward values a rule reads (input positions, ``-1`` for the output):
when a forward value is materialized before backward, the runtime computes these along with
it so that backward does not recompute the forward (torch's saved tensors).

Conventions the rules rely on (see `lazytorch.ir.prims`): elementwise inputs have the
output's shape or are 0-d; reductions keep reduced axes with size 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node, differentiate_as
from lazytorch.ir.primitives import PRIMITIVES, Primitive, make_node
from lazytorch.ops._core import const_node, scalar_node

__all__ = ["VJP", "install"]

Rule = Callable[[Node, Node, tuple[Node, ...], tuple[Any, ...], tuple[bool, ...]], Any]


class VJP:
    """A primitive's reverse-mode rule and the forward values it reads."""

    __slots__ = ("fn", "saves")

    def __init__(self, fn: Rule, saves: tuple[int, ...]) -> None:
        self.fn = fn
        self.saves = saves

    def __repr__(self) -> str:
        return f"<vjp {self.fn.__name__} saves={self.saves}>"


# -- node helpers (shapes follow the primitives' conventions) --------------------------------


def _p(name: str) -> Primitive:
    return PRIMITIVES[name]


_POW, _SCALAR, _CONST = _p("pow"), _p("scalar"), _p("const")


def emit(name: str, inputs: tuple[Node, ...], attrs: tuple[Any, ...] = ()) -> Node:
    prim = _p(name)
    assert prim.shape_rule is not None and prim.dtype_rule is not None
    shape = tuple(prim.shape_rule(inputs, *attrs))
    dtype = prim.dtype_rule(inputs, *attrs)
    return make_node(prim, inputs, attrs, shape, dtype, inputs[0].device)


def const(value: Any, like: Node) -> Node:

    return const_node(value, like.dtype, like.device)


def _ew(name: str, *xs: Node) -> Node:
    shape: tuple[Any, ...] = ()
    for x in xs:
        if x.shape:
            shape = x.shape
            break
    dtype = dt.bool_ if name in ("eq", "ne", "lt", "le", "gt", "ge") else xs[-1].dtype
    if name == "where":
        dtype = xs[1].dtype
    return make_node(_p(name), xs, (), shape, dtype, xs[0].device)


def add(a: Node, b: Node) -> Node:
    return _ew("add", a, b)


def sub(a: Node, b: Node) -> Node:
    return _ew("sub", a, b)


def mul(a: Node, b: Node) -> Node:
    return _ew("mul", a, b)


def div(a: Node, b: Node) -> Node:
    return _ew("div", a, b)


def neg(a: Node) -> Node:
    return _ew("neg", a)


def where(c: Node, a: Node, b: Node) -> Node:
    return _ew("where", c, a, b)


def cast(a: Node, dtype: dt.DType) -> Node:
    if a.dtype is dtype:
        return a
    return make_node(_p("cast"), (a,), (dtype,), a.shape, dtype, a.device)


def zeros(like: Node) -> Node:
    return expand(const(0, like), like.shape)


def expand(a: Node, shape: tuple[Any, ...]) -> Node:
    if a.shape == tuple(shape):
        return a
    return make_node(_p("expand"), (a,), (tuple(shape),), tuple(shape), a.dtype, a.device)


def reshape(a: Node, shape: tuple[Any, ...]) -> Node:
    if a.shape == tuple(shape):
        return a
    return make_node(_p("reshape"), (a,), (tuple(shape),), tuple(shape), a.dtype, a.device)


def reduce_sum(a: Node, axes: tuple[int, ...]) -> Node:
    if not axes:
        return a
    return emit("reduce_sum", (a,), (tuple(axes),))


def sum_to(g: Node, shape: tuple[Any, ...]) -> Node:
    """Reduce a gradient of an elementwise output to an input's shape (same, or 0-d)."""
    if g.shape == tuple(shape):
        return g
    assert shape == (), (g.shape, shape)
    return reshape(reduce_sum(g, tuple(range(len(g.shape)))), ())


def permute(a: Node, perm: tuple[int, ...]) -> Node:
    return emit("permute", (a,), (tuple(perm),))


def _swap_last(r: int) -> tuple[int, ...]:
    return (*range(r - 2), r - 1, r - 2)


def transpose_last(a: Node) -> Node:
    r = len(a.shape)
    swap = _swap_last(r)
    if a.op.name == "permute" and a.attrs[0] == swap:
        return a.inputs[0]  # transposing a transpose: the original
    return permute(a, swap)


def sign(x: Node) -> Node:
    pos = cast(_ew("gt", x, const(0, x)), x.dtype)
    negv = cast(_ew("lt", x, const(0, x)), x.dtype)
    return sub(pos, negv)


def trunc(x: Node) -> Node:
    return where(_ew("lt", x, const(0, x)), _ew("ceil", x), _ew("floor", x))


# -- the rules ------------------------------------------------------------------------------

RULES: dict[str, VJP] = {}


def rule(name: str, saves: tuple[int, ...] = ()) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        RULES[name] = VJP(fn, saves)
        return fn

    return deco


def _unary(name: str, saves: tuple[int, ...], local: Callable[[Node, Node], Node]) -> None:
    """A unary rule ``ct * local(x, out)``."""

    def fn(ct: Node, out: Node, inputs: tuple[Node, ...], attrs: Any, needs: Any) -> Any:
        return (mul(ct, local(inputs[0], out)),)

    fn.__name__ = f"{name}_vjp"
    RULES[name] = VJP(fn, saves)


_X, _OUT = (0,), (-1,)
_unary("exp", _OUT, lambda x, out: out)
_unary("expm1", _OUT, lambda x, out: add(out, const(1, out)))
_unary("log", _X, lambda x, out: div(const(1, x), x))
_unary("log1p", _X, lambda x, out: div(const(1, x), add(x, const(1, x))))
_unary("sqrt", _OUT, lambda x, out: div(const(0.5, out), out))
_unary("sin", _X, lambda x, out: _ew("cos", x))
_unary("cos", _X, lambda x, out: neg(_ew("sin", x)))
_unary("tanh", _OUT, lambda x, out: sub(const(1, out), mul(out, out)))
_unary("atan", _X, lambda x, out: div(const(1, x), add(const(1, x), mul(x, x))))
_unary("sigmoid", _OUT, lambda x, out: mul(out, sub(const(1, out), out)))
_unary(
    "erf",
    _X,
    lambda x, out: mul(const(2.0 / math.sqrt(math.pi), x), _ew("exp", neg(mul(x, x)))),
)
_unary("abs", _X, lambda x, out: sign(x))


@rule("neg")
def _neg(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    return (neg(ct),)


def _zero_rule(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    # Piecewise-constant functions: zero gradient almost everywhere (torch gives zeros).
    return tuple(zeros(i) if need else None for i, need in zip(inputs, needs))


for _name in ("floor", "ceil", "round", "floordiv"):
    RULES[_name] = VJP(_zero_rule, ())


@rule("add")
def _add(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    return (sum_to(ct, a.shape) if needs[0] else None, sum_to(ct, b.shape) if needs[1] else None)


@rule("sub")
def _sub(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    return (
        sum_to(ct, a.shape) if needs[0] else None,
        sum_to(neg(ct), b.shape) if needs[1] else None,
    )


@rule("mul", (0, 1))
def _mul(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    return (
        sum_to(mul(ct, b), a.shape) if needs[0] else None,
        sum_to(mul(ct, a), b.shape) if needs[1] else None,
    )


@rule("div", (0, 1))
def _div(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    ga = sum_to(div(ct, b), a.shape) if needs[0] else None
    # -ct * a / b**2, in torch's order of operations
    gb = sum_to(div(mul(neg(ct), a), mul(b, b)), b.shape) if needs[1] else None
    return ga, gb


@rule("remainder", (0, 1))
def _remainder(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    ga = sum_to(ct, a.shape) if needs[0] else None
    gb = sum_to(mul(neg(ct), _ew("floordiv", a, b)), b.shape) if needs[1] else None
    return ga, gb


@rule("fmod", (0, 1))
def _fmod(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    ga = sum_to(ct, a.shape) if needs[0] else None
    gb = sum_to(mul(neg(ct), trunc(div(a, b))), b.shape) if needs[1] else None
    return ga, gb


def _number(n: Node) -> Any:
    """The value of a Python number recorded as an input or a literal; None for a tensor."""
    if n.op is _SCALAR:
        return n.buffer
    if n.op is _CONST:
        return n.attrs[0]
    return None


_TORCH_POW_FLOATS = (dt.float32, dt.float64, dt.bfloat16)


def _torch_pow(a: Node, k: float) -> Node:
    """``a ** k`` for a number `k` as torch's CPU kernel computes it: its special cases
    (for float32, float64 and bfloat16: 3, -1, -2 and 0.5 are ``a * a * a``, ``1 / a``,
    ``1 / (a * a)`` and sqrt, each step rounded, and -0.5 is ``1 / sqrt(a)`` for float32 and
    float64; 2 is ``a * a`` in every dtype), else pow. Differentiated as pow, so a second
    derivative follows torch's too."""
    d = a.dtype
    if k == 0:
        return const(1, a)
    if k == 1:
        return a
    special = d in _TORCH_POW_FLOATS
    if k == 2:
        v = mul(a, a)
    elif special and k == 3:
        v = mul(mul(a, a), a)
    elif special and k == -1:
        v = div(const(1, a), a)
    elif special and k == -2:
        v = div(const(1, a), mul(a, a))
    elif special and k == 0.5:
        v = _ew("sqrt", a)
    elif k == -0.5 and d in (dt.float32, dt.float64):
        # (torch's bfloat16 kernel rounds its 1/sqrt its own way: pow gives no closer)
        v = div(const(1, a), _ew("sqrt", a))
    else:
        return _ew("pow", a, scalar_node(k, d, a.device))
    return differentiate_as(v, _POW, (a, scalar_node(k, d, a.device)))


@rule("pow", (0, 1, -1))
def _pow(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    ga = gb = None
    c = _number(b) if needs[0] else None
    if c is not None:
        # torch's pow_backward for a number exponent, in its order of operations (each
        # product rounded as there): zeros for 0, else grad * (c * a ** (c - 1))
        if c == 0:
            ga = zeros(a)
        else:
            # (b, a program input, rather than a literal c: no program per exponent value)
            cb = b if b.dtype is a.dtype else const(c, a)
            ga = sum_to(mul(ct, mul(cb, _torch_pow(a, c - 1))), a.shape)
    elif needs[0]:
        # torch: zero where the exponent is 0 (even at a = 0, where b * a**(b-1) is NaN)
        d = mul(b, _ew("pow", a, sub(b, const(1, b))))
        ga = sum_to(where(_ew("eq", b, const(0, b)), const(0, ct), mul(ct, d)), a.shape)
    if needs[1]:
        # torch: zero where a = 0 and b >= 0 (log(0) would make it NaN)
        z = _ew("bitwise_and", _ew("eq", a, const(0, a)), _ew("ge", b, const(0, b)))
        gb = sum_to(where(z, const(0, ct), mul(ct, mul(out, _ew("log", a)))), b.shape)
    return ga, gb


def _minmax(name: str, loses_or_ties: str) -> None:
    def fn(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
        # torch: the gradient goes to the winner; on a tie, half to each; where either
        # operand is NaN (the result is NaN), all of it to both: neither "loses".
        a, b = inputs
        half = mul(ct, const(0.5, ct))
        z = const(0, ct)
        tie = _ew("eq", a, b)
        res = []
        for x, y, need in ((a, b, needs[0]), (b, a, needs[1])):
            if not need:
                res.append(None)
                continue
            # x keeps it unless x < y (maximum) -- NaN compares false -- or on a tie
            keeps = _ew("bitwise_not", _ew(loses_or_ties, x, y))
            res.append(sum_to(where(keeps, ct, where(tie, half, z)), x.shape))
        return tuple(res)

    fn.__name__ = f"{name}_vjp"
    RULES[name] = VJP(fn, (0, 1))


_minmax("maximum", "le")
_minmax("minimum", "ge")


@rule("atan2", (0, 1))
def _atan2(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    # torch: zero at the origin, where a**2 + b**2 = 0 would make both 0/0
    a, b = inputs
    denom = add(mul(a, a), mul(b, b))
    origin = _ew("eq", denom, const(0, denom))
    safe = where(origin, const(1, denom), denom)
    z = const(0, ct)
    ga = sum_to(where(origin, z, div(mul(ct, b), safe)), a.shape) if needs[0] else None
    gb = sum_to(where(origin, z, div(mul(neg(ct), a), safe)), b.shape) if needs[1] else None
    return ga, gb


def _is_zero(n: Node) -> bool:
    return n.op.name == "const" and n.attrs[0] == 0


def _relu_test(out: Node, c: Node, a: Node, b: Node) -> Node:
    """The test `c` of ``out = where(c, a, b)``, or the same test made on `out` for a ReLU
    (``where(x <= 0, 0, x)``, as `relu` records it): ``out <= 0`` exactly where ``x <= 0``
    (NaN: both false). The result is what the forward keeps (the next layer's operand), so
    the backward then reads it instead of recomputing ``x``, which need not be kept: a
    linear layer's product feeding a ReLU is used up by its epilogue and never stored.
    torch's ReLU backward (threshold_backward) reads the result too."""
    if (
        c.op.name == "le"
        and c.inputs[0] is b
        and _is_zero(c.inputs[1])
        and _is_zero(a)
        and out.dtype is b.dtype
        and out.shape == b.shape
    ):
        return _ew("le", out, c.inputs[1])
    return c


@rule("where", (0,))
def _where(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    c, a, b = inputs
    c = _relu_test(out, c, a, b)
    z = const(0, ct)
    ga = sum_to(where(c, ct, z), a.shape) if needs[1] else None
    gb = sum_to(where(c, z, ct), b.shape) if needs[2] else None
    return None, ga, gb


@rule("cast")
def _cast(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (x,) = inputs
    return (cast(ct, x.dtype) if x.dtype.is_floating_point else None,)


# -- movement --------------------------------------------------------------------------------


@rule("reshape")
def _reshape(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    return (reshape(ct, inputs[0].shape),)


@rule("permute")
def _permute(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (perm,) = attrs
    if (
        ct.op.name == "matmul"
        and ct.ag is None
        and len(perm) >= 2
        and tuple(perm) == _swap_last(len(perm))
    ):
        # The gradient of a transposed weight (linear's x @ w.T) arrives as a product
        # a @ b; (a @ b).T = b.T @ a.T computes it in the weight's own layout, so no
        # transposing copy is needed to store it.
        a, b = ct.inputs
        return (emit("matmul", (transpose_last(b), transpose_last(a)), ct.attrs),)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return (permute(ct, tuple(inv)),)


@rule("expand")
def _expand(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (x,) = inputs
    lead = len(ct.shape) - len(x.shape)
    axes = [*range(lead)]
    axes += [lead + i for i, d in enumerate(x.shape) if d == 1 and ct.shape[lead + i] != 1]
    return (reshape(reduce_sum(ct, tuple(axes)), x.shape),)


def _pad(x: Node, lo: tuple[Any, ...], hi: tuple[Any, ...]) -> Node:
    if not any(lo) and not any(hi):
        return x
    return emit("pad", (x, const(0, x)), (tuple(lo), tuple(hi)))


def _slice(x: Node, starts: Any, stops: Any, steps: Any = None) -> Node:
    steps = steps or (1,) * len(starts)
    return emit("slice", (x,), (tuple(starts), tuple(stops), tuple(steps)))


@rule("slice")
def _slice_vjp(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (x,) = inputs
    starts, _stops, steps = attrs
    if any(d == 0 for d in ct.shape):
        return (zeros(x),)
    g = ct
    r = len(x.shape)
    for ax in range(r):
        lo, st, d = starts[ax], steps[ax], x.shape[ax]
        if st != 1:
            # Spread the m values st apart: [.., m, ..] -> [.., m, st, ..] (zeros after each)
            # -> [.., m*st, ..], then trim or extend to the d - lo positions after `lo`.
            m = g.shape[ax]
            split = (*g.shape[: ax + 1], 1, *g.shape[ax + 1 :])
            g = reshape(g, split)
            lo_p = [0] * (r + 1)
            hi_p = [0] * (r + 1)
            hi_p[ax + 1] = st - 1
            g = _pad(g, tuple(lo_p), tuple(hi_p))
            g = reshape(g, (*g.shape[:ax], m * st, *g.shape[ax + 2 :]))
            span = d - lo
            if m * st > span:
                stop = list(g.shape)
                stop[ax] = span
                g = _slice(g, (0,) * r, tuple(stop))
        lo_p = [0] * r
        hi_p = [0] * r
        lo_p[ax] = lo
        hi_p[ax] = d - lo - g.shape[ax]
        g = _pad(g, tuple(lo_p), tuple(hi_p))
    return (g,)


@rule("pad")
def _pad_vjp(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    x, _value = inputs
    lo, _hi = attrs
    inner = _slice(ct, lo, tuple(a + d for a, d in zip(lo, x.shape)))
    gv = None
    if needs[1]:
        all_axes = tuple(range(len(ct.shape)))
        gv = reshape(sub(reduce_sum(ct, all_axes), reduce_sum(inner, all_axes)), ())
    return (inner if needs[0] else None), gv


@rule("flip")
def _flip(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    return (emit("flip", (ct,), attrs),)


@rule("cat")
def _cat(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (axis,) = attrs
    res = []
    off: Any = 0
    r = len(ct.shape)
    for x, need in zip(inputs, needs):
        n = x.shape[axis]
        if need:
            starts = [0] * r
            stops = list(ct.shape)
            starts[axis] = off
            stops[axis] = off + n
            res.append(_slice(ct, tuple(starts), tuple(stops)))
        else:
            res.append(None)
        off = off + n
    return tuple(res)


# -- indexing, matmul, reductions -------------------------------------------------------------


@rule("gather", (1,))
def _gather(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    x, idx = inputs
    (axis,) = attrs
    return emit("scatter", (zeros(x), idx, ct), (axis, "add")), None


@rule("scatter", (1,))
def _scatter(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    _x, idx, src = inputs
    axis, reduce = attrs
    if reduce == "multiply":
        raise RuntimeError(
            "scatter with reduce='multiply' is not differentiable in lazytorch; compute it "
            "under lazytorch.no_grad() or detach() its inputs"
        )
    gx = None
    if needs[0]:
        gx = ct if reduce == "add" else emit("scatter", (ct, idx, zeros(src)), (axis, "none"))
    gsrc = emit("gather", (ct, idx), (axis,)) if needs[2] else None
    return gx, None, gsrc


@rule("matmul", (0, 1))
def _matmul(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    a, b = inputs
    if attrs:
        # A product of 16-bit operands kept in float32: its gradient arrives in float32,
        # and the operands' gradients are products in their own dtype, as torch's addmm
        # backward computes them (the cast is exact when the float32 gradient is a widened
        # 16-bit one, as behind the rounding cast of linear/addmm).
        narrow = ct.op.name == "cast" and ct.inputs[0].dtype is a.dtype
        ct = ct.inputs[0] if narrow else cast(ct, a.dtype)
    ga = emit("matmul", (ct, transpose_last(b))) if needs[0] else None
    gb = emit("matmul", (transpose_last(a), ct)) if needs[1] else None
    return ga, gb


@rule("conv2d", (0, 1))
def _conv2d(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    x, w = inputs
    gx = _conv2d_input_grad(ct, x, w, *attrs) if needs[0] else None
    gw = _conv2d_weight_grad(ct, x, w, *attrs) if needs[1] else None
    return gx, gw


def _conv2d_input_grad(
    ct: Node, x: Node, w: Node, stride: Any, padding: Any, dilation: Any
) -> Node:
    """The input's gradient as a stride-1 convolution (the direct kernel again): the
    output gradient spread `stride` apart (zeros between), padded so each input position
    sees every output it fed, against the weight flipped and with O and C swapped."""
    g = ct
    for ax, s in ((2, stride[0]), (3, stride[1])):
        if s > 1:  # [.., m, ..] -> [.., m, s, ..] (zeros after each) -> [.., s*(m-1)+1, ..]
            m = g.shape[ax]
            g = reshape(g, (*g.shape[: ax + 1], 1, *g.shape[ax + 1 :]))
            hi = [0] * 5
            hi[ax + 1] = s - 1
            g = _pad(g, (0,) * 5, tuple(hi))
            g = reshape(g, (*g.shape[:ax], m * s, *g.shape[ax + 2 :]))
            stop = list(g.shape)
            stop[ax] = s * (m - 1) + 1
            g = _slice(g, (0,) * 4, tuple(stop))
    pads: list[int] = []
    starts, stops = [0, 0, 0, 0], list(g.shape)
    for ax, (k, d, lo) in enumerate(zip(w.shape[2:], dilation, padding[::2]), start=2):
        a = d * (k - 1) - lo  # rows before the first output a tap reaches
        b = x.shape[ax] - g.shape[ax] + lo  # and after the last, so the result has x's size
        # a negative pad drops the gradient rows no input position receives
        starts[ax], stops[ax] = max(0, -a), g.shape[ax] - max(0, -b)
        pads += [max(0, a), max(0, b)]
    if starts != [0, 0, 0, 0] or stops != list(g.shape):
        g = _slice(g, tuple(starts), tuple(stops))
    wt = permute(emit("flip", (w,), ((2, 3),)), (1, 0, 2, 3))
    return emit("conv2d", (g, wt), ((1, 1), tuple(pads), tuple(dilation)))


def _conv2d_weight_grad(
    ct: Node, x: Node, w: Node, stride: Any, padding: Any, dilation: Any
) -> Node:
    """The weight's gradient: the conv2d_wgrad primitive (a direct kernel in C++)."""
    attrs = (tuple(stride), tuple(padding), tuple(dilation), tuple(w.shape[2:]))
    return emit("conv2d_wgrad", (x, ct), attrs)


@rule("conv2d_wgrad", (0, 1))
def _conv2d_wgrad(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    # dW is bilinear in (x, dy): each input's gradient is the convolution that pairs the
    # other with ct, as conv2d's own rule pairs them with its weight
    x, dy = inputs
    stride, padding, dilation, _kernel = attrs
    gx = _conv2d_input_grad(dy, x, ct, stride, padding, dilation) if needs[0] else None
    gdy = emit("conv2d", (x, ct), (stride, padding, dilation)) if needs[1] else None
    return gx, gdy


@rule("reduce_sum")
def _reduce_sum(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    return (expand(ct, inputs[0].shape),)


@rule("reduce_prod", (0, -1))
def _reduce_prod(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    # out / x, except at zeros (torch's exact rule): with one zero in the slice its gradient
    # is the product of the others; with two, the other zero times that product (0, but
    # its derivative is not: the second derivative); with more, 0.
    (x,) = inputs
    (axes,) = attrs
    is0 = _ew("eq", x, const(0, x))
    one = const(1, x)
    z = const(0, x)
    others = expand(emit("reduce_prod", (where(is0, one, x),), (axes,)), x.shape)
    count = expand(reduce_sum(cast(is0, x.dtype), axes), x.shape)
    zeros_sum = expand(reduce_sum(where(is0, x, z), axes), x.shape)  # 0, with a derivative
    other_zero = sub(zeros_sum, x)
    at_zero = where(
        _ew("eq", count, one),
        others,
        where(_ew("eq", count, const(2, x)), mul(others, other_zero), z),
    )
    # out / x sees 1 at the zeros: 0 / 0 there would make the second derivative NaN
    local = where(is0, at_zero, div(expand(out, x.shape), where(is0, one, x)))
    return (mul(expand(ct, x.shape), local),)


def _reduce_extreme(name: str) -> None:
    def fn(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
        # Shared evenly between tied extremes (torch's amax/amin rule); a NaN result is
        # shared between the NaNs that made it (torch's max()/min() of a whole tensor).
        (x,) = inputs
        (axes,) = attrs
        o = expand(out, x.shape)
        both_nan = _ew("bitwise_and", _ew("ne", x, x), _ew("ne", o, o))
        hit = _ew("bitwise_or", _ew("eq", x, o), both_nan)
        count = reduce_sum(cast(hit, x.dtype), axes)
        share = expand(div(ct, count), x.shape)
        return (where(hit, share, const(0, x)),)

    fn.__name__ = f"{name}_vjp"
    RULES[name] = VJP(fn, (0, -1))


_reduce_extreme("reduce_max")
_reduce_extreme("reduce_min")


@rule("cumsum")
def _cumsum(ct: Node, out: Node, inputs: Any, attrs: Any, needs: Any) -> Any:
    (axis,) = attrs
    rev = emit("flip", (ct,), ((axis,),))
    return (emit("flip", (emit("cumsum", (rev,), (axis,)),), ((axis,),)),)


# Never carry gradient (integer or bool results, or no differentiable input): comparisons,
# bitwise ops, argmax/argmin/argsort, iota/const/rand, leaves; bitcast (torch's
# ``x.view(dtype)`` carries no gradient).
NOT_DIFFERENTIABLE = frozenset(
    "eq ne lt le gt ge bitwise_and bitwise_or bitwise_xor bitwise_not argmax argmin argsort "
    "bitcast "
    "iota const rand buffer scalar "
    # collectives are recorded under no_grad, as torch.distributed's in-place collectives
    # are: DDP averages gradients after backward, outside autograd
    "all_reduce broadcast all_gather gather_to_rank reduce_scatter scatter_from_rank".split()
)

_installed = False


def install() -> None:
    """Fill the op table's vjp slots (idempotent; done on the first backward)."""
    global _installed
    if _installed:
        return
    for name, vjp in RULES.items():
        PRIMITIVES[name].vjp = vjp
    _installed = True
