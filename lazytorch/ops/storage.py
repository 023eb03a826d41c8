"""torch's storage-level Tensor API over lazytorch's functional views.

lazytorch has no strided memory: a tensor is a node, and a view is a chain of view steps
from a *root* tensor (`lazytorch.ops.views`). What torch reads from a tensor's memory layout
is answered here from that chain, the root taken as a contiguous buffer, as torch lays out
every fresh result by default:

* ``stride()``, ``storage_offset()``, ``dim_order()``: the view's torch geometry (a fresh
  op result is contiguous, offset 0, as torch's documented default; torch's own layout
  rules for some kernels' outputs, such as a channels-last convolution, are not modelled);
* ``data_ptr()``: a made-up address per root (stable while the root lives, distinct
  between live roots), plus the view's offset in bytes, so that equal pointers mean the
  same storage and offset, as in torch. A tensor of no elements has 0, as in torch.
  ``untyped_storage()`` / ``storage()`` are small objects naming that buffer;
* ``as_strided``: a gather from the root's elements by the positions the sizes, strides and
  offset address (differentiable); ``as_strided_scatter`` the matching scatter;
* ``resize_``, ``put_``, ``index_reduce``, ``masked_scatter_``, and the CPU element
  callbacks ``apply_``, ``map_``, ``map2_`` (computed now, in Python, written back).
* ``Tensor.new``: torch's legacy constructor. ``x.new(2, 3)`` is *uninitialized* in torch;
  here it holds zeros.

>>> import lazytorch
>>> x = lazytorch.zeros(3, 4)
>>> x.t().stride(), x[1:, ::2].storage_offset(), x[1].data_ptr() == x.data_ptr() + 16
((1, 4), 4, True)
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ops import creation as C
from lazytorch.ops import indexing as I
from lazytorch.ops import numeric as N
from lazytorch.ops import shape as S
from lazytorch.ops import views as V
from lazytorch.ops._core import cast, normalize_dim, tensor_arg, wrap
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Size, Tensor, _host_value

__all__ = ["TypedStorage", "UntypedStorage"]


# -- geometry ----------------------------------------------------------------------------------
def _root(t: Tensor) -> Tensor:
    return t if t._view is None else t._view[0]


def _offset_delta(step: V.ViewStep, shape: tuple[int, ...], strides: V.Strides) -> int:
    """How far `step` moves the first element, in elements of the storage."""
    if isinstance(step, V.Slice):
        return sum(int(lo) * st for lo, st in zip(step.starts, strides))
    if isinstance(step, V.Select):
        return int(step.index) * strides[step.axis]
    if isinstance(step, S._Diagonal):
        a, b, k = step.a, step.b, step.offset
        n = min(shape[a], shape[b] - k) if k >= 0 else min(shape[a] + k, shape[b])
        if n <= 0:
            return 0
        return k * strides[b] if k >= 0 else -k * strides[a]
    if isinstance(step, (V.Reshape, V.Permute, V.Expand, V.Alias, S._Unfold)):
        return 0
    raise NotImplementedError(f"storage geometry: unknown view step {type(step).__name__}")


def geometry(t: Tensor, op: str) -> tuple[tuple[int, ...], V.Strides, int]:
    """(shape, strides, storage offset) of `t` as torch would have them, its root taken as
    a contiguous buffer. Symbolic sizes have none: NotImplementedError."""
    root = _root(t)
    shape = tuple(root._node.shape)
    if not V._concrete(shape) or not V._concrete(tuple(t._node.shape)):
        raise op_error(NotImplementedError, op, f"{op}: not supported on dynamic (symbolic) sizes")
    strides = V.contiguous_strides(shape)
    offset = 0
    if t._view is not None:
        for step in t._view[1]:
            layout = step.layout()
            if layout is None:
                raise op_error(NotImplementedError, op, f"{op}: the view's strides are unknown")
            offset += _offset_delta(step, shape, strides)
            shape, strides = layout
    return shape, strides, offset


@public(torch=False, method=True)
def stride(self: Tensor, dim: int | None = None) -> Any:
    """The strides torch would give this tensor (in elements), or one dimension's.

    A view's strides are those of the same view of a contiguous tensor (``x.t()`` of a
    (3, 4) tensor has (1, 4), an expanded dim 0); a fresh result is contiguous.

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3).stride(), lazytorch.zeros(2, 3).expand(4, 2, 3).stride(0)
    ((3, 1), 0)
    """
    _, strides, _ = geometry(self, "stride")
    if dim is None:
        return tuple(strides)
    return strides[normalize_dim(dim, max(len(strides), 1), "stride")] if strides else 1


@public(torch=False, method=True)
def storage_offset(self: Tensor) -> int:
    """The index of this tensor's first element in its storage (0 except for views).

    >>> import lazytorch
    >>> lazytorch.zeros(3, 4)[1:, 2].storage_offset()
    6
    """
    return geometry(self, "storage_offset")[2]


def _channels_last(shape: tuple[int, ...], strides: V.Strides) -> bool:
    """torch's is_contiguous(memory_format=channels_last) for a 4-d geometry."""
    if len(shape) != 4 or 0 in shape:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


@public(torch=False, method=True)
def dim_order(self: Tensor, *, ambiguity_check: bool | list[Any] = False) -> tuple[int, ...]:
    """The order of the dims from outermost to innermost in memory (torch's rule).

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3, 5).transpose(1, 2).dim_order()
    (0, 2, 1)
    """
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides, _ = geometry(self, "dim_order")
    ndim = len(shape)
    if ambiguity_check is not False:
        multiple = any(a == b for a, b in itertools.pairwise(strides)) or 1 in shape
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        legal = sum(
            1
            for f in formats
            if (
                _channels_last(shape, strides)
                if "channels_last" in str(f)
                else V._is_contiguous(shape, strides)
            )
        )
        if multiple and legal != 1:
            raise RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact one of the "
                "given memory formats."
            )
    if ndim <= 1:
        return tuple(range(ndim))
    contiguous = V._is_contiguous(shape, strides)
    channels_last = _channels_last(shape, strides)
    if contiguous and not channels_last:
        return tuple(range(ndim))
    if channels_last and not contiguous:
        return (0, *range(2, ndim), 1)

    def ge(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        return 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check is not False and any(
        should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1)
    ):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


# -- storage identity ---------------------------------------------------------------------------
# id(root) -> (weakref to the root, its made-up base address)
_BASES: dict[int, tuple[Any, int]] = {}
_NEXT = [0x7F3A_4000_0000]
_ALIGN = 64


def _forget(key: int, ref: Any) -> None:
    entry = _BASES.get(key)
    if entry is not None and entry[0] is ref:
        del _BASES[key]


def _base_address(root: Tensor) -> int:
    """The root's made-up buffer address: allocated on first use, stable while it lives."""
    key = id(root)
    entry = _BASES.get(key)
    if entry is not None and entry[0]() is root:
        return entry[1]
    size = _storage_elements(root) * root.dtype.itemsize
    address = _NEXT[0]
    _NEXT[0] += (size + 2 * _ALIGN - 1) // _ALIGN * _ALIGN
    ref = weakref.ref(root, lambda r, k=key: _forget(k, r))
    _BASES[key] = (ref, address)
    return address


def hand_over_address(old: Tensor, new: Tensor) -> None:
    """`new` (a hidden root that takes over `old`'s value and views: ``x.unsqueeze_(0)`` or
    ``x.data = y`` on a tensor with live views) keeps `old`'s address, if it had one."""
    entry = _BASES.get(id(old))
    if entry is None or entry[0]() is not old:
        return
    key = id(new)
    ref = weakref.ref(new, lambda r, k=key: _forget(k, r))
    _BASES[key] = (ref, entry[1])
    del _BASES[id(old)]


def _storage_elements(root: Tensor) -> int:
    n = 1
    for d in root._node.shape:
        n *= int(d)
    return n


@public(torch=False, method=True)
def data_ptr(self: Tensor) -> int:
    """The address of the first element: equal between tensors exactly when they share a
    storage and an offset, as in torch (a view shares its base's address plus its offset in
    bytes; ``clone()`` and op results get their own). lazytorch's addresses are made up:
    compare them, never dereference them. 0 for a tensor of no elements, as torch.

    >>> import lazytorch
    >>> x = lazytorch.zeros(4)
    >>> x.view(2, 2).data_ptr() == x.data_ptr() != x.clone().data_ptr()
    True
    """
    if self.is_sparse:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
    shape, _, offset = geometry(self, "data_ptr")
    if 0 in shape:
        return 0
    return _base_address(_root(self)) + offset * self.dtype.itemsize


class UntypedStorage:
    """The buffer a tensor views, as ``Tensor.untyped_storage()`` returns it: its size in
    bytes, its (made-up, `data_ptr`) address and its device. It holds no values of its own."""

    def __init__(self, root: Tensor) -> None:
        self._root = root

    def nbytes(self) -> int:
        return _storage_elements(self._root) * self._root.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return 0 if self.nbytes() == 0 else _base_address(self._root)

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> Any:
        return self._root.device

    def __repr__(self) -> str:
        return f"<untyped storage of {self.nbytes()} bytes on {self.device}>"


class TypedStorage(UntypedStorage):
    """``Tensor.storage()``: the buffer counted in elements of the tensor's dtype."""

    @property
    def dtype(self) -> dt.DType:
        return self._root.dtype

    def size(self) -> int:
        return _storage_elements(self._root)

    def element_size(self) -> int:
        return int(self._root.dtype.itemsize)

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._root)

    def tolist(self) -> list[Any]:
        return self._root.reshape(-1).tolist()  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<storage of {self.size()} {self.dtype.name} elements on {self.device}>"


@public(torch=False, method=True)
def untyped_storage(self: Tensor) -> UntypedStorage:
    """The buffer this tensor views (its root's): ``nbytes()``, ``data_ptr()``, ``device``.

    >>> import lazytorch
    >>> x = lazytorch.zeros(2, 3)
    >>> x.untyped_storage().nbytes(), x[1].untyped_storage().data_ptr() == x.data_ptr()
    (24, True)
    """
    return UntypedStorage(_root(self))


@public(torch=False, method=True)
def storage(self: Tensor) -> TypedStorage:
    """The buffer this tensor views, counted in elements (``size()``, ``len``)."""
    return TypedStorage(_root(self))


# -- as_strided ----------------------------------------------------------------------------------
def _positions(size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Any:
    pos = np.full(size, offset, dtype=np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return pos


def _strided_args(
    op: str, size: Any, stride: Any, storage_offset: Any, default_offset: int, itemsize: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    size = tuple(int(d) for d in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise op_error(RuntimeError, op, "mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise op_error(
            RuntimeError,
            op,
            "as_strided: Negative strides are not supported at the moment, got strides: "
            f"[{', '.join(map(str, stride))}]",
        )
    if any(d < 0 for d in size):
        raise op_error(
            RuntimeError,
            op,
            f"Trying to create tensor with negative dimension {min(size)}: [{', '.join(map(str, size))}]",
        )
    offset = default_offset if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise op_error(RuntimeError, op, f"Tensor: invalid storage offset {offset}")
    return size, stride, offset


def _bounds(
    op: str, size: tuple[int, ...], stride: tuple[int, ...], offset: int, n: int, itemsize: int
) -> None:
    need = 0 if 0 in size else offset + 1 + sum((d - 1) * s for d, s in zip(size, stride))
    if need > n:
        raise op_error(
            RuntimeError,
            op,
            f"setStorage: sizes [{', '.join(map(str, size))}], strides "
            f"[{', '.join(map(str, stride))}], storage offset {offset}, and itemsize {itemsize} "
            f"requiring a storage size of {need * itemsize} are out of bounds for storage of "
            f"size {n * itemsize}",
        )


@public(method=True)
def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """The elements of `input`'s storage at ``storage_offset + sum(i_k * stride_k)``, in a
    tensor of `size` (the offset defaults to `input`'s own).

    Read-only here: the result is a gather (a new tensor, differentiable), not a view, so
    an in-place write to it does not reach `input`.

    >>> import lazytorch
    >>> lazytorch.arange(6.0).as_strided((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    x = tensor_arg(input, "as_strided")
    shape, strides, off = geometry(x, "as_strided")
    itemsize = int(x.dtype.itemsize)
    root = _root(x)
    n = _storage_elements(root)
    size, stride, offset = _strided_args("as_strided", size, stride, storage_offset, off, itemsize)
    _bounds("as_strided", size, stride, offset, n, itemsize)
    pos = _positions(size, stride, offset)
    source = root
    if x is not root and not V._overlaps(shape, strides):
        # Where every position read is one of x's own elements, read x (its gradient goes to
        # x, as torch's); otherwise the root's storage.
        mine = _positions(shape, strides, off).reshape(-1)
        where = np.full(n, -1, dtype=np.int64)
        where[mine] = np.arange(mine.size, dtype=np.int64)
        local = where[pos]
        if (local >= 0).all():
            source, pos = x, local
    index = C.tensor(np.array(pos, dtype=np.int64, order="C"), dtype=dt.int64, device=x.device)
    return I.take(source, index)


@public(method=True)
def as_strided_scatter(
    input: Tensor, src: Tensor, size: Any, stride: Any, storage_offset: Any = None
) -> Tensor:
    """A copy of `input` with ``as_strided(size, stride, storage_offset)`` of it replaced by
    `src` (torch's rule: the positions index a contiguous copy of `input`).

    >>> import lazytorch
    >>> lazytorch.zeros(4).as_strided_scatter(lazytorch.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    x = tensor_arg(input, "as_strided_scatter")
    if not isinstance(src, Tensor):
        raise op_error(
            TypeError,
            "as_strided_scatter",
            f"as_strided_scatter(): argument 'src' (position 2) must be Tensor, not {type(src).__name__}",
        )
    if not x.is_contiguous():
        raise op_error(
            NotImplementedError,
            "as_strided_scatter",
            "as_strided_scatter: a non-contiguous input is not supported by lazytorch "
            "(call .contiguous() first)",
        )
    itemsize = int(x.dtype.itemsize)
    n = x.numel()
    size, stride, offset = _strided_args(
        "as_strided_scatter", size, stride, storage_offset, 0, itemsize
    )
    _bounds("as_strided_scatter", size, stride, offset, n, itemsize)
    if tuple(src.shape) != size:
        raise op_error(
            RuntimeError,
            "as_strided_scatter",
            "expected src to have a size equal to the slice of self. src size = "
            f"[{', '.join(map(str, src.shape))}], slice size = [{', '.join(map(str, size))}]",
        )
    pos = _positions(size, stride, offset).reshape(-1)
    index = C.tensor(np.array(pos, dtype=np.int64, order="C"), dtype=dt.int64, device=x.device)
    flat = S.reshape(x, (n,))
    values = S.reshape(wrap(cast(src._node, x.dtype)), (pos.size,))
    return S.reshape(I.index_put(flat, (index,), values), tuple(x.shape))


@public(torch=False, method=True)
def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """Not supported: lazytorch cannot make a tensor an arbitrary strided view in place."""
    raise op_error(
        NotImplementedError,
        "as_strided_",
        "as_strided_ is not supported by lazytorch: use x = x.as_strided(...) (a copy)",
    )


# -- resize ---------------------------------------------------------------------------------------
def _sizes(args: tuple[Any, ...], op: str) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if isinstance(a, (bool, float)) or not hasattr(a, "__index__"):
            raise op_error(TypeError, op, f"{op}(): argument 'size' must be tuple of ints")
        out.append(int(a))
    if any(d < 0 for d in out):
        raise op_error(
            RuntimeError,
            op,
            f"Trying to create tensor with negative dimension {min(out)}: [{', '.join(map(str, out))}]",
        )
    return tuple(out)


@public(torch=False, method=True)
def resize_(self: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Give this tensor the shape `sizes`, keeping its first elements in row-major order
    (torch's rule); elements beyond the old ones are new and hold zeros here (torch leaves
    them uninitialized). Refused on a tensor that requires grad, as torch.

    >>> import lazytorch
    >>> lazytorch.arange(6).resize_(2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    new = _sizes(size, "resize_")
    if self.requires_grad:
        raise op_error(RuntimeError, "resize_", "cannot resize variables that require grad")
    if new == tuple(self._node.shape):
        return self
    live = self._views is not None and any(r() is not None for r in self._views)
    if self._view is not None or live:
        raise op_error(
            NotImplementedError,
            "resize_",
            "resize_ to another shape is not supported by lazytorch on a view or on a tensor "
            "with live views (they would stop sharing its storage)",
        )
    n_old = self.numel()
    n_new = 1
    for d in new:
        n_new *= d
    flat = S.reshape(wrap(self._node), (n_old,))
    if n_new <= n_old:
        flat = flat[:n_new]
    else:
        pad = C.zeros(n_new - n_old, dtype=self.dtype, device=self.device)
        flat = S.cat([flat, pad])
    self._node = S.reshape(flat, new)._node
    return self


@public(torch=False, method=True)
def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_(the_template.shape)``."""
    return resize_(self, tuple(the_template.shape))


@public(torch=False, method=True)
def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated in torch: this tensor reshaped to `sizes`, which must keep its number of
    elements (torch's message otherwise). Warns, as torch."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    n = 1
    for d in sizes:
        n *= int(d)
    if n != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. "
        )
    return S.reshape(self, tuple(int(d) for d in sizes))


@public(torch=False, method=True)
def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated in torch: ``resize(*tensor.shape)``."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return resize(self, *tensor.shape)


# -- put, index_reduce, masked_scatter_ ----------------------------------------------------------
def _put_checks(x: Tensor, index: Any, source: Any) -> None:
    if not isinstance(index, Tensor) or index.dtype is not dt.int64:
        got = index.dtype.legacy_name if isinstance(index, Tensor) else type(index).__name__
        raise op_error(
            RuntimeError, "put_", f"put_(): Expected a long tensor for index, but got {got}"
        )
    if not isinstance(source, Tensor):
        raise op_error(
            TypeError,
            "put_",
            f"put_(): argument 'source' must be Tensor, not {type(source).__name__}",
        )
    if source.dtype is not x.dtype:
        raise op_error(
            RuntimeError,
            "put_",
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{x.dtype.legacy_name} and source.dtype = {source.dtype.legacy_name}",
        )
    if source.numel() != index.numel():
        raise op_error(
            IndexError,
            "put_",
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}",
        )


def _put_value(x: Tensor, index: Tensor, source: Tensor, accumulate: bool) -> Tensor:
    n = x.numel()
    m = index.numel()
    lin = S.reshape(index, (m,))
    if m:
        lo, hi = int(lin.min()), int(lin.max())
        bad = hi if hi >= n else (lo if lo < -n else None)
        if bad is not None:
            raise op_error(
                IndexError,
                "put_",
                f"out of range: tried to access index {bad} on a tensor of {n} elements.",
            )
    lin = lin.remainder(n) if n else lin
    flat = S.reshape(x, (n,))
    return S.reshape(I.index_put(flat, (lin,), S.reshape(source, (m,)), accumulate), tuple(x.shape))


@public(torch=False, method=True)
def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Write `source` at the positions `index` picks in this tensor taken as 1-d (negative
    positions count from the end; with `accumulate`, add, duplicates summed).

    >>> import lazytorch
    >>> x = lazytorch.zeros(2, 2)
    >>> x.put_(lazytorch.tensor([0, -1]), lazytorch.tensor([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    _put_checks(self, index, source)
    return V.assign(self, _put_value(self, index, source, accumulate)._node)


@public(method=True)
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place `put_`: a copy of `input` with `source` written at the flat `index`."""
    x = tensor_arg(input, "put")
    _put_checks(x, index, source)
    return _put_value(x, index, source, accumulate)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@public(method=True, inplace=True)
def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out: Any = None,
) -> Tensor:
    """`input` with each slice ``source.select(dim, i)`` combined into the slice
    ``index[i]`` of `input` along `dim` by `reduce` (``prod``, ``mean``, ``amax``,
    ``amin``); ``include_self=False`` leaves `input`'s own values out where written.

    >>> import lazytorch
    >>> x = lazytorch.ones(3)
    >>> x.index_reduce(0, lazytorch.tensor([0, 0]), lazytorch.tensor([2.0, 3.0]), "prod")
    tensor([6., 1., 1.])
    """
    x = tensor_arg(input, "index_reduce")
    if reduce not in _INDEX_REDUCTIONS:
        raise op_error(
            RuntimeError,
            "index_reduce",
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}.",
        )
    if not isinstance(index, Tensor) or index.dtype not in (dt.int64, dt.int32):
        raise op_error(
            RuntimeError, "index_reduce", "index_reduce_(): Expected dtype int32/int64 for index"
        )
    if index.ndim > 1:
        raise op_error(
            IndexError, "index_reduce", "index_reduce_(): Index is supposed to be a vector"
        )
    if not isinstance(source, Tensor):
        raise op_error(TypeError, "index_reduce", "index_reduce(): source must be a Tensor")
    if source.dtype is not x.dtype:
        raise op_error(
            RuntimeError,
            "index_reduce",
            "index_reduce_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {x.dtype.legacy_name} and source.dtype = {source.dtype.legacy_name}",
        )
    nd = max(x.ndim, 1)
    d = normalize_dim(dim, nd, "index_reduce")
    xs = x if x.ndim else S.reshape(x, (1,))
    src = source if source.ndim else S.reshape(source, (1,))
    m = index.numel()
    if (
        src.ndim != xs.ndim
        or src.shape[d] != m
        or any(src.shape[k] != xs.shape[k] for k in range(xs.ndim) if k != d)
    ):
        raise op_error(
            IndexError if src.shape[d] != m else RuntimeError,
            "index_reduce",
            "index_reduce_(): Index should have dimension 1 or 0 (got "
            f"{index.ndim}) and its length must equal the source's size {src.shape[d]} "
            f"along dim {d} (got {m})",
        )
    shape = [1] * xs.ndim
    shape[d] = m
    idx = S.reshape(index.long(), tuple(shape)).expand(*src.shape)
    result = N.scatter_reduce(xs, d, idx, src, reduce, include_self=include_self)
    if x.ndim == 0:
        result = S.reshape(result, ())
    return C.into_out(result, out, "index_reduce")


@public(torch=False, method=True)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place `masked_scatter`: the positions where `mask` (broadcast to this tensor) is
    True take the leading entries of `source`, in order."""
    result = N.masked_scatter(self, mask, source)
    if tuple(result.shape) != tuple(self.shape):
        raise op_error(
            RuntimeError,
            "masked_scatter_",
            f"masked_scatter_: mask of shape {list(mask.shape)} is not broadcastable to "
            f"self of shape {list(self.shape)}",
        )
    return V.assign(self, cast(result._node, self.dtype))


# -- CPU element callbacks -----------------------------------------------------------------------
def _values_now(t: Tensor, op: str) -> Any:
    implicit_point(t, f"{op}() (a Python callback per element)")
    return np.array(_host_value(t._node), copy=True).reshape(tuple(t.shape))


def _python_kind(d: dt.DType) -> type:
    if d is dt.bool_:
        return bool
    return float if d.is_floating_point else int


def _callback(op: str, self: Tensor, others: tuple[Tensor, ...], fn: Any) -> Tensor:
    if self.device.type != "cpu":
        raise op_error(TypeError, op, f"{op} is only implemented on CPU tensors")
    for o in others:
        if not isinstance(o, Tensor):
            raise op_error(TypeError, op, f"{op}(): expected a Tensor, got {type(o).__name__}")
        if o.dtype is not self.dtype:
            raise op_error(
                TypeError,
                op,
                f"{op}: expected torch.{self.dtype.legacy_name}Tensor for 'other' (got "
                f"torch.{o.dtype.legacy_name}Tensor)",
            )
    kind = _python_kind(self.dtype)
    shape = tuple(self.shape)
    mine = _values_now(self, op).reshape(-1).tolist()
    args = [np.broadcast_to(_values_now(o, op), shape).reshape(-1).tolist() for o in others]
    out = []
    for k, v in enumerate(mine):
        r = fn(kind(v), *(kind(a[k]) for a in args))
        if kind is not bool and not isinstance(r, (int, float, bool, np.number)):
            raise op_error(TypeError, op, f"must be real number, not {type(r).__name__}")
        out.append(r)
    value = np.array(out, dtype=np.float64 if kind is float else None)
    value = value.astype(self.dtype.np).reshape(shape)
    return V.assign(self, C.tensor(value, dtype=self.dtype, device=self.device)._node)


@public(torch=False, method=True)
def apply_(self: Tensor, callable: Any) -> Tensor:
    """Replace each element ``v`` by ``callable(v)`` (a Python number), in place: CPU only,
    computed now (slow; as torch's).

    >>> import lazytorch
    >>> lazytorch.tensor([1, 2]).apply_(lambda v: v * 10)
    tensor([10, 20])
    """
    return _callback("apply_", self, (), callable)


@public(torch=False, method=True)
def map_(self: Tensor, other: Tensor, callable: Any) -> Tensor:
    """Replace each element ``a`` by ``callable(a, b)``, ``b`` the matching element of
    `other` (broadcast to this tensor's shape), in place: CPU only."""
    return _callback("map_", self, (other,), callable)


@public(torch=False, method=True)
def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:
    """``map_`` with two tensors: ``callable(a, b, c)``, in place: CPU only."""
    return _callback("map2_", self, (x, y), callable)


# -- the legacy constructor -----------------------------------------------------------------------
@public(torch=False, method=True)
def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """torch's legacy constructor, in this tensor's dtype and device:

    * ``x.new()``: an empty 1-d tensor; ``x.new(2, 3)`` / ``x.new(size)`` (a ``Size``): a
      tensor of that shape, *uninitialized* in torch, zeros here;
    * ``x.new(data)`` (a list, a NumPy array): a copy of `data` in this dtype;
    * ``x.new(other)`` (a tensor of the same dtype): `other` itself, aliased (its storage).

    >>> import lazytorch
    >>> lazytorch.zeros(2, dtype=lazytorch.float64).new(2, 3).zero_().dtype
    lazytorch.float64
    """
    device = self.device if device is None else device
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype or other.device != self.device:
            raise TypeError(
                f"expected {self.dtype.legacy_name} tensor on {self.device} (got "
                f"{other.dtype.legacy_name} tensor on {other.device})"
            )
        return V.make_view(other, V.Alias())
    if not args:
        return C.zeros(0, dtype=self.dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        a = args[0]
        if isinstance(a, Size):
            return C.zeros(*a, dtype=self.dtype, device=device)
        if isinstance(a, (float, bool, complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
        return C.tensor(a, dtype=self.dtype, device=device)  # type: ignore[no-any-return]
    return C.zeros(*_sizes(args, "new"), dtype=self.dtype, device=device)


# -- the sparse API on strided tensors ------------------------------------------------------------
# lazytorch.ops.sparse.SparseCOOTensor defines these for sparse tensors; a strided tensor
# answers as torch's does.
def _strided_layout_error(op: str, what: str = "sparse coordinate tensor") -> RuntimeError:
    return RuntimeError(f"{op} expected {what} layout but got Strided")


@public(torch=False, method=True)
def sparse_dim(self: Tensor) -> int:
    """The number of sparse dimensions: 0 for a strided tensor."""
    return 0


@public(torch=False, method=True)
def dense_dim(self: Tensor) -> int:
    """The number of dense dimensions: all of a strided tensor's."""
    return self.ndim


@public(torch=False, method=True)
def is_coalesced(self: Tensor) -> bool:
    """Sparse tensors only: a strided tensor raises torch's RuntimeError."""
    raise _strided_layout_error("is_coalesced")


@public(torch=False, method=True)
def coalesce(self: Tensor) -> Tensor:
    """Sparse tensors only: a strided tensor raises torch's RuntimeError."""
    raise _strided_layout_error("coalesce")


@public(torch=False, method=True)
def indices(self: Tensor) -> Tensor:
    """Sparse tensors only: a strided tensor raises torch's RuntimeError."""
    raise _strided_layout_error("indices")


@public(torch=False, method=True)
def values(self: Tensor) -> Tensor:
    """Sparse tensors only: a strided tensor raises torch's RuntimeError."""
    raise _strided_layout_error("values", "sparse tensor")


@public(torch=False, method=True)
def to_sparse_coo(self: Tensor) -> Tensor:
    """This tensor as a sparse COO tensor (``to_sparse()``; a sparse one is returned as is).

    >>> import lazytorch
    >>> lazytorch.tensor([0.0, 2.0]).to_sparse_coo().values()
    tensor([2.])
    """
    return self.to_sparse()  # type: ignore[no-any-return]
