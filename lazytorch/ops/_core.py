"""What every public op shares: tensor wrapping, scalar inputs, promotion, broadcasting.

Public ops check and promote their arguments eagerly (so errors point at the user's line),
then record primitives through the helpers here. `wrap` is the per-op hot path: it makes
the Tensor, registers it for ``materialize()``, and applies the auto-cut and sync-mode
policies.
"""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from lazytorch import _config
from lazytorch import runtime as _rt
from lazytorch._devices import place
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import CPU as _CPU
from lazytorch.ir.device import Device
from lazytorch.ir.node import Node, format_loc, stamp, user_loc
from lazytorch.ir.primitives import PRIMITIVES, Primitive, make_node
from lazytorch.ir.symbolic import SymInt
from lazytorch.tensor import Tensor

# The primitive table by attribute: P.add, P.reduce_sum, ...
P = SimpleNamespace(**PRIMITIVES)

_SCALAR = P.scalar
_BUFFER = P.buffer
_new_tensor = object.__new__
_DEFAULTS = _config.DEFAULTS
_live = _rt._live
_weakref = weakref.ref

Number = (int, float, bool)


# -- tensors ------------------------------------------------------------------------------
def wrap(node: Node) -> Tensor:
    """A new (non-view) Tensor for `node` — the hot path of every op."""
    if node.loc is None:
        # stamp(node, user_loc(2)), with the common case (inputs already located) inline
        loc = node.loc = user_loc(2)
        for i in node.inputs:
            if i.loc is None:
                stamp(i, loc)
    t = _new_tensor(Tensor)
    t._node = node
    t._view = None
    t._views = None
    _live.append(_weakref(t))  # runtime.register, inlined
    if len(_live) > _rt._prune_at:
        _rt.prune()
    if node.id - _rt.last_cut_id > _DEFAULTS.max_pending_nodes:
        _rt.auto_cut(node.id)
    if _config.sync_possible and _config.sync_enabled():
        _rt.materialize_nodes([node], cause="sync mode")
    return t


def leaf_node(array: Any, device: Device) -> Node:
    """A buffer leaf for a NumPy array (already of a supported dtype) or a device buffer.

    On a device that keeps values in its own memory (``cuda``), the value is put there now
    (`lazytorch._devices.place`), as torch copies eagerly.
    """
    dtype = dt.from_numpy_dtype(array.dtype)
    shape = tuple(array.shape)
    h = hash((_BUFFER, dtype, shape, device))
    if device is not _CPU:
        array = place(array, device)
    return Node(_BUFFER, (), (), shape, dtype, device, h, user_loc(), array)


def scalar_node(value: Any, dtype: dt.DType, device: Device) -> Node:
    """A Python number as a 0-d program input; its value is not part of any hash.

    No provenance: an input cannot fail, and skipping the stack walk halves the cost of
    ``x * 2``.
    """
    if type(value) is int and not INT64_MIN <= value < UINT64_END:  # check_python_int, inline
        raise python_int_overflow(value)
    h = hash((_SCALAR, dtype, (), device))
    n = Node(_SCALAR, (), (), (), dtype, device, h, None, dtype.to_python(value))
    if host_scalars is not None and value.__class__ is HostScalar:  # (None but in a capture)
        host_scalars[id(n)] = (n, value.tag)
    return n


class HostScalar(float):
    """A Python number an optimizer computes on the host from state that a replay advances
    (Adam's bias corrections from its step count), tagged with where a replay gets it anew.

    It is a float everywhere; only `scalar_node` looks at the tag, and only while a
    `lazytorch.compile` step capture listens (`host_scalars` is its registry then). A tag
    lost on the way (an op deriving a new float from it) leaves an untagged input, which the
    capture treats as a constant and so checks between two calls (see
    `lazytorch._compile.step`).
    """

    __slots__ = ("tag",)

    def __new__(cls, value: float, tag: Any) -> HostScalar:
        self = super().__new__(cls, value)
        self.tag = tag
        if host_tags is not None:
            host_tags.add(tag)
        return self


# While a step capture records (lazytorch._compile.step), else None: id(scalar node) ->
# (node, tag) for each HostScalar turned into a program input, and every tag issued (one
# issued but never an input was lost on the way: the capture is refused).
host_scalars: dict[int, tuple[Node, Any]] | None = None
host_tags: set[Any] | None = None


# -- Python ints as torch Scalars ---------------------------------------------------------
# torch takes a Python int as an int64 Scalar or, from 2**63 on, as a uint64 one; only then is
# it converted to the tensor's dtype (wrapping, or checked where torch checks). An int
# outside both is an OverflowError whatever the dtype, float tensors included.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_END = 1 << 64


def python_int_overflow(value: int) -> OverflowError:
    """torch's error for a Python int that is no int64 or uint64 Scalar."""
    why = "int too big to convert" if value > 0 else "can't convert negative int to unsigned"
    return OverflowError(
        f"{why}: a Python int operand must lie in [-2**63, 2**64), got {value} "
        f"(at {format_loc(user_loc())})"
    )


def check_python_int(value: Any) -> None:
    """OverflowError unless `value` (if a Python int) can be a torch Scalar."""
    if type(value) is int and not INT64_MIN <= value < UINT64_END:
        raise python_int_overflow(value)


# Literal nodes are immutable and never program inputs, so one node per (value, dtype,
# device) can be shared by every graph. The key tells -0.0 from 0.0 (equal under ==);
# NaN is never cached (NaN != NaN would make every lookup miss and the cache grow).
_const_cache: dict[tuple[Any, ...], Node] = {}


def const_node(value: Any, dtype: dt.DType, device: Device) -> Node:
    """A literal baked into the program (for decompositions' own constants like 0 or -inf)."""
    v = dtype.to_python(value)
    if v != v:
        return make_node(P.const, (), (v, dtype, device), (), dtype, device)
    key = (v, math.copysign(1.0, v), dtype, device)
    n = _const_cache.get(key)
    if n is None or n.buffer is not None:
        # (a cached literal that a cut realized — ``ones(())`` is the literal itself — has
        # become a buffer leaf: a program input, no longer a constant; make a fresh one)
        if len(_const_cache) > 4096:
            _const_cache.clear()
        n = _const_cache[key] = make_node(P.const, (), (v, dtype, device), (), dtype, device)
    return n


def is_scalar(x: Any) -> bool:
    return isinstance(x, (*Number, SymInt))


def dtype_of(x: Any) -> dt.DType:
    if isinstance(x, Tensor):
        return x._node.dtype
    return dt.scalar_dtype(x, _config.get_default_dtype())


def result_type(*args: Any) -> dt.DType:
    """torch.result_type over tensors and Python scalars."""
    if len(args) == 2:
        a, b = args
        # The common cases: tensor (op) tensor of one dtype, tensor (op) Python scalar.
        if type(a) is Tensor:
            da = a._node.dtype
            if type(b) is Tensor:
                if b._node.dtype is da:
                    return da
            elif type(b) is float:
                if da.category == 2:
                    return da
            elif type(b) is int and da.category == 1:
                return da
    dims: list[dt.DType] = []
    zeros: list[dt.DType] = []
    scalars: list[dt.DType] = []
    for a in args:
        if isinstance(a, Tensor):
            n = a._node
            (dims if n.shape else zeros).append(n.dtype)
        elif isinstance(a, (*Number, SymInt)):
            scalars.append(dt.scalar_dtype(a, _config.get_default_dtype()))
        else:
            raise TypeError(f"result_type(): unsupported operand of type {type(a).__name__}")
    d = dt.result_type_of(dims, zeros, scalars)
    if d.category == 1 and not any(t.category for t in (*dims, *zeros)):
        _no_uint64_result(args)
    return d


def _no_uint64_result(args: tuple[Any, ...]) -> None:
    """torch takes an int from 2**63 on as a uint64 Scalar and cannot promote it when it
    decides the integer dtype (a bool tensor + 2**63): no wrapping into int64 then."""
    for a in args:
        if type(a) is int and a > INT64_MAX:
            check_python_int(a)  # no Scalar at all: torch's OverflowError comes first
            raise RuntimeError(
                "Promotion for uint16, uint32, uint64 types is not supported: the int "
                f"{a} is a uint64 and no integer tensor operand sets the result dtype "
                f"(at {format_loc(user_loc())})"
            )


def to_node(x: Any, dtype: dt.DType, device: Device) -> Node:
    """A Tensor's node cast to `dtype`, or a scalar as a scalar input of that dtype."""
    if isinstance(x, Tensor):
        n = x._node
        return n if n.dtype is dtype else cast(n, dtype)
    return scalar_node(x, dtype, device)


def cast(n: Node, dtype: dt.DType) -> Node:
    if n.dtype is dtype:
        return n
    return make_node(P.cast, (n,), (dtype,), n.shape, dtype, n.device)


def device_of(*args: Any, op: str) -> Device:
    """The common device of the tensor operands (0-d tensors may come from the CPU)."""
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            d = a._node.device
            if dev is None or dev is d:
                dev = d
            elif not a._node.shape:
                continue  # a 0-d tensor may come from another device, as in torch
            else:
                raise op_error(
                    RuntimeError,
                    op,
                    f"expected all tensors to be on the same device, found {dev} and {d}",
                )
    return dev if dev is not None else _config.get_default_device()


# -- shapes -------------------------------------------------------------------------------
def broadcast_shapes(a: Sequence[Any], b: Sequence[Any], op: str) -> tuple[Any, ...]:
    if a == b:
        return tuple(a)
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise op_error(
                RuntimeError,
                op,
                f"the size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}",
            )
    return tuple(out)


def expand_node(n: Node, shape: tuple[Any, ...]) -> Node:
    if n.shape == shape:
        return n
    return make_node(P.expand, (n,), (shape,), shape, n.dtype, n.device)


def reshape_node(n: Node, shape: tuple[Any, ...]) -> Node:
    if n.shape == shape:
        return n
    return make_node(P.reshape, (n,), (tuple(shape),), tuple(shape), n.dtype, n.device)


def broadcast_nodes(nodes: Sequence[Node], op: str) -> tuple[tuple[Any, ...], list[Node]]:
    """Broadcast to a common shape; 0-d nodes stay 0-d (elementwise primitives take them)."""
    shape: tuple[Any, ...] = ()
    for n in nodes:
        if n.shape and n.shape != shape:
            if shape:
                shape = broadcast_shapes(shape, n.shape, op)
                # (2**62, 1) with (4,): the result holds more elements than either operand
                check_numel(shape, op)
            else:
                shape = n.shape
    return shape, [n if not n.shape or n.shape == shape else expand_node(n, shape) for n in nodes]


# -- building blocks of ops ---------------------------------------------------------------------
class ComplexBase:
    """The base of `lazytorch.ops.complex.ComplexTensor`, known here so that the ops below
    it can tell a complex operand from a wrong one without importing it: ``cat``,
    ``stack`` and ``einsum`` hand a list holding one to ``type(t)._cat`` / ``._stack`` /
    ``._einsum``, and a real op
    given one raises NotImplementedError naming the op instead of a TypeError."""

    __slots__ = ()

    @staticmethod
    def _cat(tensors: Any, dim: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def _stack(tensors: Any, dim: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def _einsum(equation: str, operands: Any) -> Any:
        raise NotImplementedError


def tensor_arg(x: Any, op: str, name: str = "input") -> Tensor:
    """`x` if it is a Tensor; else torch's TypeError naming the op and the argument."""
    if not isinstance(x, Tensor):
        if isinstance(x, ComplexBase):
            raise complex_unsupported(op)
        raise op_error(TypeError, op, f"argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def complex_unsupported(op: str) -> Exception:
    """The error of a real op given a complex tensor."""
    return op_error(
        NotImplementedError,
        op,
        f"{op} of a complex tensor is not supported: lazytorch's complex tensors (pairs of "
        "real parts) support arithmetic, abs, angle, exp, conj, real/imag, reshaping, "
        "indexing, sum/mean, cat/stack and view_as_real, which gives the real pairs to "
        "compute on",
    )


def unary_node(prim: Primitive, n: Node, dtype: dt.DType | None = None) -> Node:
    """An elementwise unary node of `n`'s shape (and dtype, unless `dtype` is given)."""
    return make_node(prim, (n,), (), n.shape, dtype or n.dtype, n.device)


def binary_node(prim: Primitive, a: Node, b: Node, dtype: dt.DType | None = None) -> Node:
    """An elementwise binary node; broadcasts if needed (0-d operands stay 0-d)."""
    if a.shape == b.shape or not a.shape or not b.shape:
        shape = a.shape or b.shape
    else:
        shape, (a, b) = broadcast_nodes([a, b], prim.name)
    return make_node(prim, (a, b), (), shape, dtype or a.dtype, a.device)


def where_node(c: Node, a: Node, b: Node) -> Node:
    """``where(c, a, b)`` broadcast to one shape, in `a`'s dtype."""
    shape, (c, a, b) = broadcast_nodes([c, a, b], "where")
    return make_node(P.where, (c, a, b), (), shape, a.dtype, a.device)


def const_like(value: Any, like: Node) -> Node:
    """A 0-d constant in `like`'s dtype, on its device."""
    return const_node(value, like.dtype, like.device)


def int_like(x: Any) -> Any:
    """`x`, with a 0-d integer tensor as its Python int: torch takes one wherever an int goes
    (``linspace(0, 1, torch.tensor(5))``, ``x.split(n)`` for a tensor n), through
    ``__index__`` (a read of its value). Anything else is returned as it is.

    >>> import lazytorch
    >>> int_like(lazytorch.tensor(5)), int_like(3), int_like((1, 2))
    (5, 3, (1, 2))
    """
    if isinstance(x, Tensor) and x.ndim == 0 and not x.dtype.is_floating_point:
        return operator.index(x)
    return x


def normalize_dim(dim: Any, ndim: int, op: str) -> int:
    """A dim in [-ndim, ndim) as a non-negative axis (0-d tensors accept 0 and -1)."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise op_error(TypeError, op, f"dim must be an int, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise op_error(
            IndexError,
            op,
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})",
        )
    return d % n


def normalize_dims(dims: Any, ndim: int, op: str) -> tuple[int, ...]:
    """Sorted unique axes for a `dim` argument (None means all axes)."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, (list, tuple)):
        axes = [normalize_dim(d, ndim, op) for d in dims]
        if len(set(axes)) != len(axes):
            raise op_error(
                RuntimeError, op, f"dim {list(dims)} appears multiple times in the list of dims"
            )
        return tuple(sorted(axes)) if ndim else ()
    axis = normalize_dim(dims, ndim, op)  # checked for 0-d tensors too: [-1, 0]
    return (axis,) if ndim else ()


def numel(shape: Sequence[Any]) -> Any:
    n: Any = 1
    for d in shape:
        n = n * d
    return n


def shape_arg(size: Any, op: str, arg: str = "size") -> tuple[Any, ...]:
    """A size given as ints, a tuple/list/Size of ints, or a 1-d tensor-like.

    Each size must be an int64 (torch's argument parser: TypeError) and not negative.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, SymInt):
            out.append(s)
            continue
        try:
            v = operator.index(s)
        except TypeError:
            raise op_error(
                TypeError,
                op,
                f"size must be a sequence of ints, got an element of type {type(s).__name__}",
            ) from None
        check_int64_arg(v, op, arg, pos)
        if v < 0:
            raise op_error(
                RuntimeError,
                op,
                f"Trying to create tensor with negative dimension {v}: {list(size)}",
            )
        out.append(v)
    return tuple(out)


def check_int64_arg(v: int, op: str, arg: str, pos: int) -> None:
    """torch's parser refuses an int-list element beyond int64 with a TypeError."""
    if not INT64_MIN <= v <= INT64_MAX:
        raise op_error(
            TypeError,
            op,
            f"argument '{arg}' failed to unpack the object at pos {pos} with error "
            f'"Overflow when unpacking long long" ({v} is not an int64)',
        )


def unpack_int64(v: Any, op: str) -> None:
    """torch's parser for a lone int argument (``linspace(steps=)``, ``eye(n)``,
    ``randperm(n)``, ``randint(high)``): ValueError beyond int64."""
    if isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX:
        raise op_error(ValueError, op, f"Overflow when unpacking long long ({v} is not an int64)")


def _concrete(shape: Sequence[Any]) -> list[int] | None:
    """The sizes as ints, or None if any is symbolic (a symbolic size only ever stands for
    sizes that tensors already had)."""
    if any(isinstance(s, SymInt) for s in shape):
        return None
    return [int(s) for s in shape]


def check_numel(shape: Sequence[Any], op: str) -> None:
    """torch's numel check for shapes that need no storage (expand, view targets): the
    running product of the sizes must stay an int64."""
    sizes = _concrete(shape)
    if sizes is None:
        return
    n = 1
    for s in sizes:
        n *= s
        if n > INT64_MAX:
            raise op_error(
                RuntimeError,
                op,
                f"numel: integer multiplication overflow (sizes {sizes})",
            )


def check_new_tensor(shape: Sequence[Any], dtype: dt.DType, op: str) -> None:
    """torch's checks for a new contiguous tensor of `shape` and `dtype`.

    Storage: the running product of the sizes must fit a uint64 and the byte count an int64
    (``ones(2**62, 4)`` needs 2**66 bytes); strides: each contiguous stride, with sizes 0
    counted as 1, must fit an int64 even when the tensor is empty (``zeros(0, 2**62, 4)``).
    Without the check, sizes wrap in the 64-bit index arithmetic of the kernels.
    """
    sizes = _concrete(shape)
    if sizes is None:
        return
    n = 1
    overflow = False
    for s in sizes:
        n *= s
        overflow = overflow or n >= UINT64_END
    if overflow or n * dtype.itemsize > INT64_MAX:
        raise op_error(RuntimeError, op, f"Storage size calculation overflowed with sizes={sizes}")
    stride = 1
    for s in reversed(sizes[1:]):
        stride *= max(s, 1)
        if stride > INT64_MAX:
            raise op_error(RuntimeError, op, f"Stride calculation overflowed (sizes {sizes})")
