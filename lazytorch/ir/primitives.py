"""The primitive table: every op the IR can hold, each defined once.

A `Primitive` carries everything the rest of the system needs to know about an op:

* ``shape_rule(inputs, *attrs)`` and ``dtype_rule(inputs, *attrs)`` — symbolic shapes are
  fine; a rule raises the user-facing error for malformed input;
* ``ref(*arrays, **attrs)`` — the NumPy reference implementation, used by the reference
  executor (the correctness oracle and the ``interpreter`` backend);
* ``category`` — what the scheduler needs to group it (see `CATEGORIES`);
* ``vjp`` — a slot for the reverse-mode rule, filled by autograd;
* the facts every backend shares, declared beside the definition instead of in name-keyed
  tables of the scheduler and each code writer: ``cost`` (what inlining one more
  evaluation costs, in plain-op units: the scheduler stores a value whose inlined history
  grows too dear), ``transcendental`` (a libm-style call: the C++ writer keeps such values
  in a row buffer rather than recompute them in a later pass), ``compare`` (the infix
  symbol of a comparison, the same in C++ and Triton) and ``reduce_kind`` (the
  accumulator kind of a reduction: ``"sum"``, ``"max"``, ``"argmax"``...).

Backends keep their own lowering tables keyed by primitive (``codegen/cpp_ops.py``,
``codegen/triton_ops.py``); ``tests/codegen/test_lowering_tables.py`` checks that every primitive is
lowered by each or listed as falling back with a reason, so a primitive a backend cannot
lower is found by a test, and at run time is an error naming the op and the backend, never
a silent fallback.

>>> from lazytorch.ir.primitives import get
>>> get("reduce_sum").category, get("reduce_sum").attr_names, get("reduce_sum").reduce_kind
('reduce', ('axes',), 'sum')
>>> get("exp").cost, get("exp").transcendental, get("le").compare
(4, True, '<=')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazytorch.ir.device import CPU, Device
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node, _next_id, grad_mode, stamp, user_loc

_new_node = object.__new__

__all__ = [
    "CATEGORIES",
    "COMPARE_SYMBOLS",
    "PRIMITIVES",
    "REDUCE_KINDS",
    "Primitive",
    "define",
    "get",
]

CATEGORIES = (
    "leaf",  # buffer and scalar inputs of a program
    "source",  # nodes computed from attrs alone: const, iota, random
    "elementwise",  # same-shape (or 0-d) inputs, one output element per input position
    "reduce",  # reductions over axes, reduced axes kept with size 1
    "scan",  # prefix reductions along one axis (cumsum)
    "movement",  # reshape/permute/expand/slice/pad/flip/cat: index arithmetic, no math
    "index",  # gather/scatter: data-dependent indexing
    "matmul",  # batched matrix product (an extern call on most backends)
    "conv",  # conv2d: a direct convolution (an extern call)
    "sort",  # argsort
    "collective",  # all_reduce and friends: the runtime cuts at them (never in a program)
)
COMPARE_SYMBOLS = ("==", "!=", "<", "<=", ">", ">=")
REDUCE_KINDS = ("sum", "prod", "max", "min", "argmax", "argmin")


class Primitive:
    """One entry of the primitive table (see module docstring)."""

    __slots__ = (
        "attr_names",
        "category",
        "compare",
        "cost",
        "doc",
        "dtype_rule",
        "hash_attrs",
        "name",
        "nin",
        "reduce_kind",
        "ref",
        "shape_rule",
        "transcendental",
        "vjp",
    )

    def __init__(
        self,
        name: str,
        category: str,
        *,
        nin: int | None,
        attr_names: tuple[str, ...] = (),
        shape_rule: Callable[..., tuple[Any, ...]] | None = None,
        dtype_rule: Callable[..., DType] | None = None,
        ref: Callable[..., Any] | None = None,
        hash_attrs: Callable[[tuple[Any, ...]], Any] | None = None,
        doc: str = "",
        cost: int = 1,
        transcendental: bool = False,
        compare: str | None = None,
        reduce_kind: str | None = None,
    ) -> None:
        if category not in CATEGORIES:
            raise ValueError(f"unknown primitive category {category!r}")
        if type(cost) is not int or cost < 0:
            raise ValueError(f"{name}: cost must be an int >= 0, got {cost!r}")
        if compare is not None and (compare not in COMPARE_SYMBOLS or nin != 2):
            raise ValueError(
                f"{name}: compare must be one of {COMPARE_SYMBOLS} on a binary primitive, "
                f"got {compare!r} with nin={nin}"
            )
        if (reduce_kind is not None) != (category == "reduce") or (
            reduce_kind is not None and reduce_kind not in REDUCE_KINDS
        ):
            raise ValueError(
                f"{name}: a reduce primitive (and only one) names its reduce_kind, one of "
                f"{REDUCE_KINDS}; got {reduce_kind!r} for category {category!r}"
            )
        self.name = name
        self.category = category
        self.nin = nin
        self.attr_names = attr_names
        self.shape_rule = shape_rule
        self.dtype_rule = dtype_rule
        self.ref = ref
        self.hash_attrs = hash_attrs
        self.vjp: Callable[..., Any] | None = None
        self.doc = doc
        self.cost = cost
        self.transcendental = bool(transcendental)
        self.compare = compare
        self.reduce_kind = reduce_kind

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Any, ...]:
        return (get, (self.name,))

    def bind(self, inputs: tuple[Node, ...], attrs: tuple[Any, ...] = ()) -> Node:
        """Apply this primitive: run its rules and record a node.

        Rules assume valid, already-promoted operands; public ops check user input first
        so errors name the op the user called.
        """
        if self.nin is not None and len(inputs) != self.nin:
            raise TypeError(f"{self.name}: expected {self.nin} inputs, got {len(inputs)}")
        assert self.shape_rule is not None and self.dtype_rule is not None
        shape = self.shape_rule(inputs, *attrs)
        dtype = self.dtype_rule(inputs, *attrs)
        device = inputs[0].device if inputs else attrs_device(attrs)
        node = make_node(self, inputs, attrs, shape, dtype, device)
        stamp(node, user_loc(2))
        return node

    def check(self, node: Node) -> None:
        """Re-run the rules on a node; raise if its recorded shape or dtype disagree."""
        assert self.shape_rule is not None and self.dtype_rule is not None
        shape = tuple(self.shape_rule(node.inputs, *node.attrs))
        dtype = self.dtype_rule(node.inputs, *node.attrs)
        if shape != tuple(node.shape) or dtype is not node.dtype:
            raise AssertionError(
                f"{self.name}: node records {node.dtype.short}{list(node.shape)} but the rules "
                f"give {dtype.short}{list(shape)}"
            )


def attrs_device(attrs: tuple[Any, ...]) -> Device:
    for a in attrs:
        if isinstance(a, Device):
            return a
    return CPU


def make_node(
    op: Primitive,
    inputs: tuple[Node, ...],
    attrs: tuple[Any, ...],
    shape: tuple[Any, ...],
    dtype: DType,
    device: Device,
) -> Node:
    """Record a node whose shape and dtype are already known (the fast path)."""
    hattrs = attrs if op.hash_attrs is None else op.hash_attrs(attrs)
    # The node's own hash, not its inputs': a capture key pairs it with the wiring, which
    # says what it reads. (Folding the inputs' hashes in went stale when an input was
    # computed later: a value recorded before a cut and read after it then hashed with the
    # history behind its input, and a loop cutting every few steps never hit its program.)
    h = hash((op, hattrs, dtype, shape, device))
    k = len(inputs)
    if k == 1:
        ag = inputs[0].ag
    elif k == 2:
        ag = inputs[0].ag or inputs[1].ag
    else:
        ag = None
        for i in inputs:
            ag = ag or i.ag
    # Slots are filled directly (no __init__ frame): this is the per-node hot path.
    n = _new_node(Node)
    n.op = op
    n.inputs = inputs
    n.attrs = attrs
    n.shape = shape
    n.dtype = dtype
    n.device = device
    n.struct_hash = h
    n.id = _next_id()
    # Provenance is stamped by the public op that hands the result to the user (see
    # lazytorch.ir.node.stamp); bind() locates its node itself.
    n.loc = None
    n.buffer = None
    # Gradient flows into a floating result of a gradient-carrying input, in grad mode
    # (torch's requires_grad rule); the mode is read only on that path.
    n.ag = True if ag and dtype.is_floating_point and grad_mode.enabled else None
    return n


PRIMITIVES: dict[str, Primitive] = {}


def define(prim: Primitive) -> Primitive:
    """Register a primitive (each name once)."""
    if prim.name in PRIMITIVES:
        raise ValueError(f"primitive {prim.name!r} is defined twice")
    PRIMITIVES[prim.name] = prim
    return prim


def get(name: str) -> Primitive:
    """Look up a primitive by name, with an error listing close names."""
    try:
        return PRIMITIVES[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, PRIMITIVES, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no primitive named {name!r}{hint}") from None


def reference(prim: Primitive, in_dtypes: Sequence[DType], out_dtype: DType) -> Callable[..., Any]:
    """`prim`'s NumPy reference for operands of `in_dtypes` and a result of `out_dtype`.

    float16 and bfloat16 operands are widened to float32 and a 16-bit result is rounded once:
    float32 holds both exactly, computing in float32 and rounding once is what torch's
    kernels do ("opmath": a scatter-add into float16 accumulates in float32), and NumPy's
    bfloat16 (ml_dtypes') lacks many functions the references call (sorting, linear
    algebra). `cast` and `rand` make the 16-bit values themselves; `bitcast` reads them
    as stored.

    References compute as torch's kernels do, giving inf and NaN silently; they leave
    NumPy's error state to their caller, who runs them under ``np.errstate(all="ignore")``
    (the interpreter sets it once per program, not once per instruction).

    >>> from lazytorch.ir import dtypes as dt
    >>> from lazytorch.ir._lazynp import np
    >>> add = reference(get("add"), [dt.bfloat16, dt.bfloat16], dt.bfloat16)
    >>> x = np.asarray([1.0, 256.0], dtype=dt.bfloat16.np)
    >>> add(x, np.asarray([1 / 256, 1.0], dtype=dt.bfloat16.np)).tolist()
    [1.0, 256.0]
    """
    ref = prim.ref
    if ref is None:
        raise NotImplementedError(f"no reference implementation for {prim.name!r}")
    if prim.name == "bitcast":  # reads the bits as they are stored
        return ref
    widen = any(d.is_low_float for d in in_dtypes)
    if not widen and (not out_dtype.is_low_float or prim.name in ("cast", "rand")):
        return ref
    out_np = out_dtype.np

    def via_float32(*args: Any, **kwargs: Any) -> Any:
        import numpy as np

        f32 = np.float32
        wide = [
            a.astype(f32) if a.dtype.itemsize == 2 and a.dtype.kind in "fV" else a for a in args
        ]
        out = np.asarray(ref(*wide, **kwargs))
        return out if out.dtype == out_np or out.dtype.kind not in "fV" else out.astype(out_np)

    return via_float32
