"""The op table of the program fuzzer: one entry per op, as a line of Python source.

An entry says how to write the op (``expr``, a template over the operand names ``{a}``,
``{b}``, ``{c}`` and its parameters), which operands it takes, how to draw its parameters
for the operand shapes, and which inputs it must refuse (``guard``): points where the
gradient is not defined (``abs`` at 0, ties of ``amax``, the bounds of ``clamp``) and
values outside the op's domain (``log`` of a negative). The generator evaluates each op in
torch while it draws the program, so the guards see real values; an op whose guard fails,
or that torch refuses for these shapes, is simply not added.

Templates are source because the program is source: the same text runs on torch and on
lazytorch (``lib`` is either module) and is what a saved regression file replays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

# How far from a kink or a domain edge a value must be (in float64, after the op's inputs
# are computed); ties closer than this count as ties.
KINK_GAP = 1e-4
# Values above this are refused: products of chains of exp/pow overflow float32 quickly.
MAX_ABS = 1e4

Draw = Callable[[Any], Any]  # hypothesis' draw function


class Src(str):
    """A parameter that is already source text (a subscript, a tuple of slices)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Op:
    name: str
    expr: str
    arity: int = 1
    # how the second operand relates to the first: "broadcast" (any shape that broadcasts
    # with a's), "into" (broadcasts into a's shape: in-place and setitem), "cat" (a's shape
    # except along `dim`), "same" (a's shape), "matmul"
    pairing: str = "broadcast"
    params: Callable[[Draw, list[tuple[int, ...]]], dict[str, Any] | None] | None = None
    guard: Callable[..., bool] | None = None
    inplace: bool = False  # mutates its first operand: a must be a mutable non-leaf
    view: bool = False  # the result shares a's storage
    frozen: bool = False  # the result (a view) must never be written through (expand)
    saves_output: bool = False  # torch keeps the result for backward: never written after
    tags: tuple[str, ...] = field(default_factory=tuple)

    def render(self, out: str, names: list[str], params: dict[str, Any]) -> str:
        fields = dict(zip("abc", names), out=out)
        fields.update({k: repr(v) for k, v in params.items()})
        text = self.expr.format(**fields)
        return text.replace("{out}", out) if "{out}" in self.expr else f"{out} = {text}"


# -- guards -------------------------------------------------------------------------------------


def _away(x: torch.Tensor, *points: float) -> bool:
    return all(bool(((x - p).abs() > KINK_GAP).all()) for p in points)


def _above(x: torch.Tensor, low: float) -> bool:
    return bool((x > low).all())


def _small(x: torch.Tensor, bound: float) -> bool:
    return bool((x.abs() < bound).all())


def _no_ties(x: torch.Tensor, dim: int | None) -> bool:
    """The extreme of each reduced slice is unique (the gradient of amax is defined)."""
    if x.numel() == 0:
        return True
    flat = x.reshape(-1, 1) if dim is None else x.movedim(dim, -1)
    flat = flat.reshape(-1) if dim is None else flat
    s = flat.sort(dim=-1).values
    if s.shape[-1] < 2:
        return True
    top = (s[..., -1] - s[..., -2]).abs().min()
    bottom = (s[..., 1] - s[..., 0]).abs().min()
    return bool(top > KINK_GAP and bottom > KINK_GAP)


def _reduced_size(x: torch.Tensor, dim: Any) -> int:
    if dim is None:
        return x.numel()
    dims = dim if isinstance(dim, tuple) else (dim,)
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


# -- parameter drawing --------------------------------------------------------------------------
# Each takes hypothesis' draw and the operand shapes; None means "not for these shapes".


def _st():
    from hypothesis import strategies as st

    return st


def p_none(draw: Draw, shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    return {}


def p_scalar(draw: Draw, shapes):
    return {"s": draw(_st().sampled_from([0.5, -1.5, 2.0, 3.0, -0.25]))}


def p_clamp(draw: Draw, shapes):
    lo = draw(_st().sampled_from([-1.0, -0.5, 0.0]))
    return {"lo": lo, "hi": lo + draw(_st().sampled_from([0.75, 1.5]))}


def p_dim(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    return {"dim": draw(_st().integers(-n, n - 1))}


def p_dim_keep(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    st = _st()
    k = draw(st.integers(1, n))
    dims = draw(st.permutations(range(n)))[:k]
    dim: Any = dims[0] if k == 1 and draw(st.booleans()) else tuple(sorted(dims))
    return {"dim": dim, "keepdim": draw(st.booleans())}


def p_one_dim_keep(draw: Draw, shapes):
    p = p_dim(draw, shapes)
    if p is None:
        return None
    return {**p, "keepdim": draw(_st().booleans())}


def p_transpose(draw: Draw, shapes):
    n = len(shapes[0])
    if n < 2:
        return None
    st = _st()
    return {"d0": draw(st.integers(-n, n - 1)), "d1": draw(st.integers(-n, n - 1))}


def p_permute(draw: Draw, shapes):
    n = len(shapes[0])
    if n < 2:
        return None
    return {"perm": tuple(draw(_st().permutations(range(n))))}


def p_slice(draw: Draw, shapes):
    """Basic indexing: a slice with a step per dim, an integer, None or Ellipsis."""
    st = _st()
    parts = []
    for size in shapes[0]:
        kind = draw(st.sampled_from(["all", "slice", "slice", "int"]))
        if kind == "all":
            parts.append(":")
        elif kind == "int" and size > 0:
            parts.append(str(draw(st.integers(-size, size - 1))))
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            step = draw(st.sampled_from([None, 1, 2, 3]))
            text = f"{'' if start is None else start}:{'' if stop is None else stop}"
            parts.append(text + ("" if step is None else f":{step}"))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), "None")
    if not parts:
        parts = ["None"]
    return {"idx": Src(", ".join(parts))}


def p_narrow(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    st = _st()
    dim = draw(st.integers(0, n - 1))
    size = shapes[0][dim]
    start = draw(st.integers(0, size))
    return {"dim": dim, "start": start, "length": draw(st.integers(0, size - start))}


def p_reshape(draw: Draw, shapes):
    """Flatten, merge two neighbours, split a dim in two, or add a size-1 dim."""
    st = _st()
    shape = list(shapes[0])
    kind = draw(st.sampled_from(["flatten", "merge", "split", "unsqueeze"]))
    if kind == "flatten" or (len(shape) < 2 and kind == "merge"):
        return {"shape": (-1,)}
    if kind == "merge":
        i = draw(st.integers(0, len(shape) - 2))
        return {"shape": tuple([*shape[:i], -1, *shape[i + 2 :]])}
    if kind == "split":
        cands = [i for i, s in enumerate(shape) if s in (4, 6)]
        if not cands:
            return None
        i = draw(st.sampled_from(cands))
        return {"shape": tuple([*shape[:i], 2, shape[i] // 2, *shape[i + 1 :]])}
    i = draw(st.integers(0, len(shape)))
    return {"shape": tuple([*shape[:i], 1, *shape[i:]])}


def p_expand(draw: Draw, shapes):
    st = _st()
    new = [draw(st.sampled_from([2, 3])) if s == 1 else s for s in shapes[0]]
    if draw(st.booleans()):
        new.insert(0, draw(st.sampled_from([1, 2])))
    return {"shape": tuple(new)}


def p_flip(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    dims = draw(_st().permutations(range(n)))[: draw(_st().integers(1, n))]
    return {"dims": tuple(dims)}


def _nonempty_dim(draw: Draw, shapes) -> tuple[int, int] | None:
    """A dim of the operand that has elements, and its size."""
    n = len(shapes[0])
    if n == 0:
        return None
    dim = draw(_st().integers(0, n - 1))
    size = shapes[0][dim]
    return None if size == 0 else (dim, size)


def p_index(draw: Draw, shapes):
    """An integer index tensor along one dim (repeats allowed: backward accumulates)."""
    picked = _nonempty_dim(draw, shapes)
    if picked is None:
        return None
    st = _st()
    idx = draw(st.lists(st.integers(0, picked[1] - 1), min_size=1, max_size=5))
    return {"dim": picked[0], "idx": idx}


def p_gather(draw: Draw, shapes):
    """gather/scatter_add's index along one dim: a nested list of in-range integers whose
    shape is the operand's, each dim at most as long, the chosen dim free (repeats allowed:
    scatter_add accumulates them, backward of gather too)."""
    picked = _nonempty_dim(draw, shapes)
    if picked is None or any(d == 0 for d in shapes[0]):
        return None
    dim, size = picked
    st = _st()
    shape = [draw(st.integers(1, d)) if k != dim else draw(st.integers(1, 4))
             for k, d in enumerate(shapes[0])]  # fmt: skip
    count = 1
    for d in shape:
        count *= d
    flat = draw(st.lists(st.integers(0, size - 1), min_size=count, max_size=count))

    def nest(values: list[int], dims: list[int]) -> Any:
        if not dims:
            return values[0]
        step = len(values) // dims[0]
        return [nest(values[i * step : (i + 1) * step], dims[1:]) for i in range(dims[0])]

    return {"dim": dim, "idx": nest(flat, shape)}


def p_select(draw: Draw, shapes):
    picked = _nonempty_dim(draw, shapes)
    if picked is None:
        return None
    dim, size = picked
    return {"dim": dim, "i": draw(_st().integers(-size, size - 1))}


def p_cat(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    return {"dim": draw(_st().integers(-n, n - 1))}


def p_stack(draw: Draw, shapes):
    n = len(shapes[0])
    return {"dim": draw(_st().integers(-n - 1, n))}


def p_roll(draw: Draw, shapes):
    n = len(shapes[0])
    if n == 0:
        return None
    st = _st()
    return {"shift": draw(st.integers(-3, 3)), "dim": draw(st.integers(-n, n - 1))}


# -- the table ----------------------------------------------------------------------------------


def _unary(name: str, expr: str, guard=None, params=p_none, **kw) -> Op:
    return Op(name, expr, 1, params=params, guard=guard, **kw)


def _binary(name: str, expr: str, guard=None, **kw) -> Op:
    return Op(name, expr, 2, params=p_none, guard=guard, **kw)


UNARY = [
    _unary("neg", "-{a}"),
    _unary("exp", "{a}.exp()", lambda a, out, **_: _small(a, 8), saves_output=True),
    _unary("log", "{a}.log()", lambda a, out, **_: _above(a, 0.05)),
    _unary("sqrt", "lib.sqrt({a})", lambda a, out, **_: _above(a, 0.05), saves_output=True),
    _unary("rsqrt", "{a}.rsqrt()", lambda a, out, **_: _above(a, 0.05), saves_output=True),
    _unary(
        "reciprocal",
        "{a}.reciprocal()",
        lambda a, out, **_: _away(a, 0) and _min_abs(a),
        saves_output=True,
    ),
    _unary("sin", "lib.sin({a})"),
    _unary("cos", "{a}.cos()"),
    _unary("tanh", "{a}.tanh()", saves_output=True),
    _unary("sigmoid", "lib.sigmoid({a})", saves_output=True),
    _unary("abs", "{a}.abs()", lambda a, out, **_: _away(a, 0)),
    _unary("relu", "lib.relu({a})", lambda a, out, **_: _away(a, 0), saves_output=True),
    _unary("square", "{a}.square()"),
    _unary("cube", "{a} ** 3"),
    _unary("pow_frac", "{a} ** 1.5", lambda a, out, **_: _above(a, 0.05), saves_output=True),
    _unary("log1p", "{a}.log1p()", lambda a, out, **_: _above(a, -0.9)),
    _unary("expm1", "lib.expm1({a})", lambda a, out, **_: _small(a, 8), saves_output=True),
    _unary("erf", "lib.erf({a})"),
    _unary("atan", "{a}.atan()"),
    _unary("gelu", "lib.nn.functional.gelu({a})"),
    _unary("silu", "lib.nn.functional.silu({a})"),
    _unary("softplus", "lib.nn.functional.softplus({a})"),
    _unary(
        "clamp",
        "{a}.clamp({lo}, {hi})",
        lambda a, out, lo, hi: _away(a, lo, hi),
        params=p_clamp,
    ),
    _unary("mul_scalar", "{a} * {s}", params=p_scalar),
    _unary("add_scalar", "{a} + {s}", params=p_scalar),
    _unary("rsub_scalar", "{s} - {a}", params=p_scalar),
    _unary(
        "rdiv_scalar",
        "{s} / {a}",
        lambda a, out, s: _min_abs(a),
        params=p_scalar,
        saves_output=True,
    ),
]


def _min_abs(a: torch.Tensor) -> bool:
    return bool((a.abs() > 0.2).all())


BINARY = [
    _binary("add", "{a} + {b}"),
    _binary("sub", "lib.sub({a}, {b})"),
    _binary("mul", "{a} * {b}"),
    _binary("div", "{a} / {b}", lambda a, b, out, **_: _min_abs(b), saves_output=True),
    _binary("maximum", "lib.maximum({a}, {b})", lambda a, b, out, **_: _away(a - b, 0)),
    _binary("minimum", "{a}.minimum({b})", lambda a, b, out, **_: _away(a - b, 0)),
    _binary("logaddexp", "lib.logaddexp({a}, {b})"),
    _binary(
        "hypot", "lib.hypot({a}, {b})", lambda a, b, out, **_: _above(out, 0.05), saves_output=True
    ),
    _binary("lerp", "lib.lerp({a}, {b}, 0.25)"),
    Op("where", "lib.where({c} > 0, {a}, {b})", 3, params=p_none),
    Op("addcmul", "lib.addcmul({a}, {b}, {c}, value=0.5)", 3, params=p_none),
]


def _extreme(name: str, expr: str) -> Op:
    """A max/min reduction: refused where the extreme of a slice is tied."""
    return _unary(
        name,
        expr,
        lambda a, out, dim, keepdim: _no_ties(a, dim),
        params=p_one_dim_keep,
        saves_output=True,
    )


REDUCTIONS = [
    _unary("sum_all", "{a}.sum()"),
    _unary("mean_all", "lib.mean({a})", lambda a, out, **_: a.numel() > 0),
    _unary("sum", "{a}.sum(dim={dim}, keepdim={keepdim})", params=p_dim_keep),
    _unary(
        "mean",
        "{a}.mean({dim}, keepdim={keepdim})",
        lambda a, out, dim, keepdim: _reduced_size(a, dim) > 0,
        params=p_dim_keep,
    ),
    _extreme("amax", "{a}.amax(dim={dim}, keepdim={keepdim})"),
    _extreme("amin", "lib.amin({a}, {dim}, {keepdim})"),
    _extreme("max_dim", "{a}.max(dim={dim}, keepdim={keepdim}).values"),
    _unary("prod", "{a}.prod({dim}, keepdim={keepdim})", params=p_one_dim_keep, saves_output=True),
    _unary(
        "logsumexp",
        "lib.logsumexp({a}, dim={dim}, keepdim={keepdim})",
        params=p_dim_keep,
        saves_output=True,
    ),
    _unary(
        "var",
        "{a}.var(dim={dim}, keepdim={keepdim})",
        lambda a, out, dim, keepdim: _reduced_size(a, dim) >= 2,
        params=p_dim_keep,
    ),
    _unary(
        "std",
        "lib.std({a}, dim={dim}, keepdim={keepdim})",
        lambda a, out, dim, keepdim: _reduced_size(a, dim) >= 2 and _above(out, 0.05),
        params=p_dim_keep,
        saves_output=True,
    ),
    _unary(
        "norm",
        "{a}.norm(dim={dim}, keepdim={keepdim})",
        lambda a, out, dim, keepdim: _above(out, 0.05),
        params=p_dim_keep,
        saves_output=True,
    ),
    _unary("softmax", "lib.softmax({a}, dim={dim})", params=p_dim, saves_output=True),
    _unary("log_softmax", "{a}.log_softmax({dim})", params=p_dim, saves_output=True),
    _unary("cumsum", "{a}.cumsum({dim})", params=p_dim),
]

VIEWS = [
    _unary("slice", "{a}[{idx}]", params=p_slice, view=True),
    _unary("transpose", "{a}.transpose({d0}, {d1})", params=p_transpose, view=True),
    _unary("permute", "{a}.permute({perm})", params=p_permute, view=True),
    _unary("narrow", "{a}.narrow({dim}, {start}, {length})", params=p_narrow, view=True),
    _unary("select", "{a}.select({dim}, {i})", params=p_select, view=True),
    _unary("unsqueeze", "{a}.unsqueeze({dim})", params=p_stack, view=True),
    _unary("detach", "{a}.detach()", view=True),
    # reshape and expand may or may not alias (torch: "view or copy"): never written through
    _unary("reshape", "{a}.reshape({shape})", params=p_reshape, view=True, frozen=True),
    _unary("expand", "{a}.expand({shape})", params=p_expand, view=True, frozen=True),
    _unary("flip", "{a}.flip({dims})", params=p_flip),
    _unary("roll", "lib.roll({a}, {shift}, {dim})", params=p_roll),
    _unary("index", "{a}[(slice(None),) * {dim} + (lib.tensor({idx}),)]", params=p_index),
    _unary("index_select", "{a}.index_select({dim}, lib.tensor({idx}))", params=p_index),
    _unary("gather", "{a}.gather({dim}, lib.tensor({idx}))", params=p_gather),
    # a's own values scattered into zeros of a's shape at the drawn positions (the index
    # rows as long as the drawn index; accumulating repeats)
    _unary(
        "scatter_add",
        "lib.zeros_like({a}).scatter_add({dim}, lib.tensor({idx}), {a})",
        params=p_gather,
    ),
    _unary("contiguous", "({a} * 1).contiguous()"),
    # read a value mid-program: lazytorch cuts the graph there (torch: nothing happens)
    _unary("read", "{a}.sum().item(); {out} = {a}", view=True),
    Op("cat", "lib.cat([{a}, {b}], dim={dim})", 2, pairing="cat", params=p_cat),
    Op("stack", "lib.stack([{a}, {b}], dim={dim})", 2, pairing="same", params=p_stack),
    Op("matmul", "{a} @ {b}", 2, pairing="matmul", params=p_none),
    _unary("gram", "{a} @ {a}.transpose(-1, -2)", lambda a, out: a.dim() >= 2),
]

INPLACE = [
    Op("add_", "{a}.add_({b})", 2, pairing="into", params=p_none, inplace=True),
    Op("sub_", "{a}.sub_({b}, alpha=2.0)", 2, pairing="into", params=p_none, inplace=True),
    Op("mul_", "{a}.mul_({b})", 2, pairing="into", params=p_none, inplace=True),
    Op("mul_scalar_", "{a}.mul_({s})", 1, params=p_scalar, inplace=True),
    _unary("exp_", "{a}.exp_()", lambda a, out, **_: _small(a, 8), inplace=True, saves_output=True),
    _unary("tanh_", "{a}.tanh_()", inplace=True, saves_output=True),
    Op(
        "setitem",
        "{a}[{idx}] = {b}.sum(); {out} = {a}",
        2,
        pairing="any",
        params=p_slice,
        inplace=True,
    ),
]

TABLE: dict[str, Op] = {op.name: op for op in UNARY + BINARY + REDUCTIONS + VIEWS + INPLACE}
