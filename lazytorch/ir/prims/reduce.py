"""Reductions (axes kept with size 1), the cumsum scan, and argsort.

Keeping reduced axes means a reduction's result broadcasts straight back against its input
(softmax's ``x - max(x)``) without reshapes; ``keepdim=False`` is a reshape in the public op.
"""

from __future__ import annotations

from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.dtypes import DType, bool_, int64
from lazytorch.ir.primitives import Primitive, define


def _check_axes(name: str, x: Any, axes: tuple[int, ...]) -> None:
    if list(axes) != sorted(set(axes)) or any(not 0 <= a < len(x.shape) for a in axes):
        raise ValueError(f"{name}: axes must be sorted, unique and in range, got {axes}")


def _reduce_shape(name: str) -> Any:
    def rule(inputs: tuple[Any, ...], axes: tuple[int, ...]) -> tuple[Any, ...]:
        x = inputs[0]
        _check_axes(name, x, axes)
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape))

    return rule


def _arith_dtype(name: str) -> Any:
    def rule(inputs: tuple[Any, ...], *attrs: Any) -> DType:
        d = inputs[0].dtype
        if d is bool_:
            raise TypeError(f"{name}: bool input must be cast first (torch sums bools as int64)")
        return d

    return rule


def _acc(x: Any) -> Any:
    return np.float32 if x.dtype == np.float16 else x.dtype


def _nonempty(name: str, x: Any, axes: tuple[int, ...]) -> None:
    if any(x.shape[a] == 0 for a in axes):
        raise RuntimeError(f"{name}: cannot reduce over a zero-size dimension (no identity)")


def _sum_ref(x: Any, axes: tuple[int, ...]) -> Any:
    return np.sum(x, axis=axes, keepdims=True, dtype=_acc(x)).astype(x.dtype)


def _prod_ref(x: Any, axes: tuple[int, ...]) -> Any:
    return np.prod(x, axis=axes, keepdims=True, dtype=_acc(x)).astype(x.dtype)


def _max_ref(x: Any, axes: tuple[int, ...]) -> Any:
    _nonempty("reduce_max", x, axes)
    return np.max(x, axis=axes, keepdims=True)


def _min_ref(x: Any, axes: tuple[int, ...]) -> Any:
    _nonempty("reduce_min", x, axes)
    return np.min(x, axis=axes, keepdims=True)


for _name, _ref, _dtype_rule, _doc in [
    (
        "reduce_sum",
        _sum_ref,
        _arith_dtype("reduce_sum"),
        "sum over axes (float16 accumulates in float32)",
    ),
    ("reduce_prod", _prod_ref, _arith_dtype("reduce_prod"), "product over axes"),
    (
        "reduce_max",
        _max_ref,
        lambda inputs, axes: inputs[0].dtype,
        "max over axes, NaN-propagating",
    ),
    (
        "reduce_min",
        _min_ref,
        lambda inputs, axes: inputs[0].dtype,
        "min over axes, NaN-propagating",
    ),
]:
    define(
        Primitive(
            _name,
            "reduce",
            nin=1,
            attr_names=("axes",),
            shape_rule=_reduce_shape(_name),
            dtype_rule=_dtype_rule,
            ref=_ref,
            doc=_doc,
            reduce_kind=_name.removeprefix("reduce_"),
        )
    )


def _arg_shape(inputs: tuple[Any, ...], axis: int) -> tuple[Any, ...]:
    x = inputs[0]
    _check_axes("argmax/argmin", x, (axis,))
    return tuple(1 if i == axis else d for i, d in enumerate(x.shape))


def _argmax_ref(x: Any, axis: int) -> Any:
    _nonempty("argmax", x, (axis,))
    return np.argmax(x, axis=axis, keepdims=True).astype(np.int64)


def _argmin_ref(x: Any, axis: int) -> Any:
    _nonempty("argmin", x, (axis,))
    return np.argmin(x, axis=axis, keepdims=True).astype(np.int64)


for _name, _ref in [("argmax", _argmax_ref), ("argmin", _argmin_ref)]:
    define(
        Primitive(
            _name,
            "reduce",
            nin=1,
            attr_names=("axis",),
            shape_rule=_arg_shape,
            dtype_rule=lambda inputs, axis: int64,
            ref=_ref,
            doc=f"index of the first {_name[3:]} along axis (NaN counts as the max), int64",
            reduce_kind=_name,
        )
    )


def _cumsum_ref(x: Any, axis: int) -> Any:
    return np.cumsum(x, axis=axis, dtype=_acc(x)).astype(x.dtype)


def _scan_shape(inputs: tuple[Any, ...], axis: int) -> tuple[Any, ...]:
    _check_axes("cumsum", inputs[0], (axis,))
    return inputs[0].shape


define(
    Primitive(
        "cumsum",
        "scan",
        nin=1,
        attr_names=("axis",),
        shape_rule=_scan_shape,
        dtype_rule=_arith_dtype("cumsum"),
        ref=_cumsum_ref,
        doc="inclusive prefix sum along axis",
    )
)


# lazytorch._C.argsort_order when the native runtime is built (set by lazytorch.runtime,
# which owns the native module; the IR only calls it). It runs the algorithms of
# codegen/include/lazytorch_sort.h over rows, as the compiled backend does.
native_order_loader: Any = None

# The argsort primitive's `order` attr: which order equal keys come in. "stable": their
# original order. The others are torch's CPU algorithms, so that indices among ties match
# torch's: "sort" its unstable sort (libstdc++'s introsort), "topk" / "topk_unsorted" its
# topk (a partial sort, or nth_element then a sort; the first `k` indices are topk's
# result), "kth" its kthvalue (its own quickselect; index k - 1 is kthvalue's). `k` is 0
# for the first two.
ORDERS = ("stable", "sort", "topk", "topk_unsorted", "kth")
_NATIVE_ORDER = {"sort": 1, "topk": 2, "topk_unsorted": 2, "kth": 3}


def _argsort_native(x: Any, axis: int, descending: bool, order: str, k: int) -> Any | None:
    fn = native_order_loader() if native_order_loader is not None else None
    if fn is None:
        return None
    if x.dtype.kind in "biu":  # integers and bool as int64 (no uint64 dtype here)
        x = x.astype(np.int64)
    else:  # float16, bfloat16 (NumPy kind "V") and float32 compare exactly as float32
        x = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    rows = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    got = fn(rows, descending, _NATIVE_ORDER[order], k, order != "topk_unsorted")
    return np.moveaxis(got, -1, axis)


def _argsort_ref(x: Any, axis: int, descending: bool, order: str = "stable", k: int = 0) -> Any:
    if x.dtype == np.float16:
        x = x.astype(np.float32)
    # up to 16 elements torch's sort is an insertion sort, which is stable
    if order != "stable" and (order != "sort" or x.shape[axis] > 16):
        got = _argsort_native(x, axis, descending, order, k)
        if got is not None:
            return got.astype(np.int64)
        # without the native runtime: the stable order, one of the orders these algorithms
        # may give (torch's differs among equal keys; docs/backends.md)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64)
    # Stable descending: sort the reversed array ascending, then reverse back. Equal keys
    # keep their original order and NaN comes first, as in torch.
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - rev, axis).astype(np.int64)


def _argsort_shape(inputs: tuple[Any, ...], axis: int, descending: bool, order: str, k: int) -> Any:
    if order not in ORDERS:
        raise ValueError(f"argsort: order must be one of {ORDERS}, got {order!r}")
    n = inputs[0].shape[axis] if 0 <= axis < len(inputs[0].shape) else None
    if order == "kth" and descending:
        raise ValueError("argsort: the 'kth' order is ascending (torch's kthvalue)")
    if order in ("stable", "sort") and k != 0:
        raise ValueError(f"argsort: k is 0 for the {order!r} order, got {k}")
    if isinstance(n, int) and order not in ("stable", "sort") and not 0 <= k <= n:
        raise ValueError(f"argsort: k={k} out of range for an axis of {n}")
    return _scan_shape(inputs, axis)


define(
    Primitive(
        "argsort",
        "sort",
        nin=1,
        attr_names=("axis", "descending", "order", "k"),
        shape_rule=_argsort_shape,
        dtype_rule=lambda inputs, axis, descending, order, k: int64,
        ref=_argsort_ref,
        doc="sort order along axis (NaN sorts as the largest value); `order` says which "
        "among equal keys: stable, or torch's CPU sort, topk or kthvalue algorithm's",
    )
)
