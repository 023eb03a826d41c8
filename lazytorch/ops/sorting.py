"""sort, argsort, topk, msort, kthvalue: one ``argsort`` primitive plus a gather.

Indices among equal keys come in torch's CPU order: ``stable=False`` (torch's default) sorts
a row as torch does, with libstdc++'s introsort (stable only up to 16 elements); topk runs
torch's selection (a partial sort when k * 64 <= n, else nth_element and a sort of the
first k - 1), kthvalue torch's own quickselect. The primitive's `order` attr names the
algorithm and every backend runs it (codegen/include/lazytorch_sort.h; the Triton backend
hands these rows to the C++ one). On a cuda tensor topk and kthvalue take the stable order:
torch's CUDA kernels order ties in yet other ways, and the stable order stays on the GPU.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops._core import P, const_node, normalize_dim, reshape_node, tensor_arg, wrap
from lazytorch.ops.reduction import _into_out, _into_outs
from lazytorch.ops.shape import slice_node
from lazytorch.tensor import Tensor

sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])


def _order(n: Node, axis: int, descending: bool, order: str = "stable", k: int = 0) -> Node:
    return make_node(P.argsort, (n,), (axis, descending, order, k), n.shape, dt.int64, n.device)


def _gather(n: Node, idx: Node, axis: int) -> Node:
    return make_node(P.gather, (n, idx), (axis,), idx.shape, n.dtype, n.device)


def _prep(input: Tensor, dim: int, op: str) -> tuple[Node, int, bool]:
    n = tensor_arg(input, op)._node
    if not n.shape:
        normalize_dim(dim, 0, op)
        return reshape_node(n, (1,)), 0, True
    return n, normalize_dim(dim, len(n.shape), op), False


@public(method=True)
def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False, out: Any = None
) -> Any:
    """(values, indices) sorted along `dim`; NaN sorts as the largest.

    With ``stable=False`` (the default) equal values come in torch's CPU order, which for
    rows of more than 16 elements is not their original order:

    >>> import lazytorch as lt
    >>> lt.sort(lt.tensor([2.0, 1.0, 2.0]), descending=True, stable=True).indices.tolist()
    [0, 2, 1]
    """
    n, axis, scalar = _prep(input, dim, "sort")
    idx = _order(n, axis, descending, "stable" if stable else "sort")
    vals = _gather(n, idx, axis)
    if scalar:
        return _into_outs(
            sort_result(wrap(reshape_node(vals, ())), wrap(reshape_node(idx, ()))), out, "sort"
        )
    return _into_outs(sort_result(wrap(vals), wrap(idx)), out, "sort")


@public(method=True)
def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False, out: Any = None
) -> Tensor:
    n, axis, scalar = _prep(input, dim, "argsort")
    idx = _order(n, axis, descending, "stable" if stable else "sort")
    return _into_out(wrap(reshape_node(idx, ()) if scalar else idx), out, "argsort")


@public(method=True)
def msort(input: Tensor, *, out: Any = None) -> Tensor:
    return _into_out(sort(input, 0).values, out, "msort")  # (values: any order of ties)


@public(method=True)
def topk(
    input: Tensor,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    out: Any = None,
) -> Any:
    """The k largest (or smallest) entries along `dim` and their indices, in order; equal
    entries come in torch's order (its CPU selection algorithm's):

    >>> import lazytorch as lt
    >>> lt.tensor([1.0, 2.0, 2.0, 2.0, 1.0, 3.0]).topk(3).indices.tolist()
    [5, 3, 1]
    """
    n, axis, scalar = _prep(input, dim, "topk")
    size = n.shape[axis]
    if not 0 <= k <= size:
        raise op_error(RuntimeError, "topk", f"selected index k out of range (k={k}, size {size})")
    if scalar:
        # torch treats a 0-d input as its own top element even for k=0.
        return _into_outs(
            topk_result(wrap(reshape_node(n, ())), wrap(const_node(0, dt.int64, n.device))),
            out,
            "topk",
        )
    if n.device is CPU:
        order, k_attr = ("topk" if sorted else "topk_unsorted"), k
    else:
        order, k_attr = "stable", 0
    idx = slice_node(_order(n, axis, largest, order, k_attr), axis, 0, k)
    return _into_outs(topk_result(wrap(_gather(n, idx, axis)), wrap(idx)), out, "topk")


@public(method=True)
def kthvalue(
    input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None
) -> Any:
    """The k-th smallest entry (1-based) along `dim` and its index (among equal entries
    the one torch's quickselect finds):

    >>> import lazytorch as lt
    >>> lt.tensor([1.0, 2.0, 2.0, 2.0, 1.0, 3.0]).kthvalue(2).indices.item()
    0
    """
    n, axis, scalar = _prep(input, dim, "kthvalue")
    size = n.shape[axis]
    if size == 0:
        raise op_error(
            IndexError,
            "kthvalue",
            f"kthvalue(): Expected reduction dim {axis} to have non-zero size.",
        )
    if not 1 <= k <= size:
        raise op_error(
            RuntimeError,
            "kthvalue",
            f"kthvalue(): selected number k out of range for dimension {axis}",
        )
    order, k_attr = ("kth", k) if n.device is CPU else ("stable", 0)
    idx = slice_node(_order(n, axis, False, order, k_attr), axis, k - 1, k)
    vals = _gather(n, idx, axis)
    if not keepdim or scalar:
        shape = tuple(d for i, d in enumerate(vals.shape) if i != axis)
        vals, idx = reshape_node(vals, shape), reshape_node(idx, shape)
    values = name_grad_fn(wrap(vals), "KthvalueBackward0", input)
    return _into_outs(kthvalue_result(values, wrap(idx)), out, "kthvalue")
