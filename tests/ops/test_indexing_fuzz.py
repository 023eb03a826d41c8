"""A differential fuzz of index expressions against torch: ``x[idx]``, ``x[idx] = value``
and ``x.index_put_(indices, values)``, with every kind of index torch takes (ints in and out
of range, slices with any step, None, up to two Ellipses, Python and NumPy bools, NumPy
integers and arrays, 0-d and n-d integer and mask tensors, lists), alone or mixed, on
tensors with size-0 dims too. Results must agree in values, shape and dtype, and errors in
type (not message).

Generated on the interpreter backend only: indexing is decided when the op is recorded, the
same for every backend, and the backends' gather/scatter are compared in test_indexing.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazytorch as lt

pytestmark = [
    pytest.mark.filterwarnings("ignore:Using a non-tuple sequence for multidimensional indexing"),
    pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated"),
]

# An index item is a plain Python object (int, slice, None, Ellipsis, bool, NumPy scalar or
# array, list) used as is by both libraries, or a _T: a tensor index made for each library.


class _T:
    """A tensor index: the same NumPy values as a torch and as a lazytorch tensor."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def make(self, lib: Any) -> Any:
        if lib is torch:
            return torch.from_numpy(self.array.copy())
        return lt.from_numpy(self.array.copy())

    def __repr__(self) -> str:
        return f"T({self.array.tolist()!r}, {self.array.dtype})"


def _build(lib: Any, item: Any) -> Any:
    if isinstance(item, _T):
        return item.make(lib)
    if isinstance(item, np.ndarray):
        return item.copy()
    if isinstance(item, tuple):
        return tuple(_build(lib, i) for i in item)
    if isinstance(item, list):
        return [_build(lib, i) for i in item]
    return item


_SIZES = st.integers(0, 3)
_INTS = st.integers(-4, 3)  # out of range for every size here, sometimes


def _int_array(draw: Any, ndim: int) -> np.ndarray:
    shape = tuple(draw(st.lists(_SIZES, min_size=ndim, max_size=ndim)))
    n = int(np.prod(shape))
    return np.array(draw(st.lists(_INTS, min_size=n, max_size=n)), dtype=np.int64).reshape(shape)


def _mask(draw: Any, x_shape: tuple[int, ...], ndim: int) -> np.ndarray:
    """A mask of `ndim` dims, its shape one of x's windows (mostly) or random."""
    windows = [x_shape[i : i + ndim] for i in range(len(x_shape) - ndim + 1)]
    if windows and draw(st.integers(0, 3)):
        shape = draw(st.sampled_from(windows))
    else:
        shape = tuple(draw(st.lists(_SIZES, min_size=ndim, max_size=ndim)))
    n = int(np.prod(shape))
    return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool).reshape(
        shape
    )


@st.composite
def _item(draw: Any, x_shape: tuple[int, ...]) -> Any:
    kind = draw(
        st.sampled_from(
            ["int"] * 4
            + ["slice"] * 4
            + ["none", "pybool", "np_int", "np_bool"]
            + ["t_int0", "t_int", "t_int", "t_bool0", "t_mask", "t_mask", "t_u8", "t_i32"]
            + ["list", "list", "list2", "float_list", "ndarray", "ndarray0", "np_mask", "np_u8"]
        )
    )
    if kind == "int":
        return draw(_INTS)
    if kind == "slice":
        step = draw(st.one_of(st.none(), st.integers(-1, 3)))
        start = draw(st.one_of(st.none(), st.integers(-5, 5)))
        stop = draw(st.one_of(st.none(), st.integers(-5, 5)))
        return slice(start, stop, step)
    if kind == "none":
        return None
    if kind == "pybool":
        return draw(st.booleans())
    if kind == "np_int":
        return np.int64(draw(_INTS))
    if kind == "np_bool":
        return np.bool_(draw(st.booleans()))
    if kind == "t_int0":
        return _T(np.array(draw(_INTS), dtype=np.int64))
    if kind == "t_int":
        return _T(_int_array(draw, draw(st.integers(1, 2))))
    if kind == "t_i32":
        return _T(_int_array(draw, 1).astype(np.int32))
    if kind == "t_bool0":
        return _T(np.array(draw(st.booleans())))
    if kind == "t_mask":
        return _T(_mask(draw, x_shape, draw(st.integers(1, 2))))
    if kind == "t_u8":
        return _T(_mask(draw, x_shape, 1).astype(np.uint8))
    if kind == "list":
        return draw(st.lists(_INTS, min_size=0, max_size=3))
    if kind == "list2":  # a nested list: one 2-d index tensor
        return _int_array(draw, 2).tolist()
    if kind == "float_list":  # torch truncates it to int64
        return [v + 0.5 for v in draw(st.lists(st.integers(0, 2), min_size=1, max_size=3))]
    if kind == "ndarray":
        return _int_array(draw, 1)
    if kind == "np_u8":  # a uint8 array is a mask, as a uint8 tensor is
        return _mask(draw, x_shape, 1).astype(np.uint8)
    if kind == "ndarray0":
        return np.array(draw(_INTS))
    assert kind == "np_mask"
    # (1-d only: torch counts an array as naming one dim whatever its ndim, then reads past
    # its sizes where a 2-d mask array is followed by an index on the last dim)
    return _mask(draw, x_shape, 1)


def _counted(it: Any) -> int:
    """torch's count_specified_dimensions for one item."""
    if it is None or it is Ellipsis or it is True or it is False:
        return 0
    if isinstance(it, _T) and it.array.dtype in (np.bool_, np.uint8):
        return it.array.ndim
    return 1


def _ub(items: list[Any], ndim: int) -> bool:
    """Whether torch's result is undefined: after two Ellipses that each skip dims, an index
    that names a dim (torch reads past its sizes array there; lazytorch raises)."""
    free = ndim - sum(_counted(i) for i in items)
    if free <= 0:
        return False
    seen = 0
    for it in items:
        if it is Ellipsis:
            seen += 1
        elif seen >= 2:
            return True
    return False


@st.composite
def _case(draw: Any) -> tuple[tuple[int, ...], Any]:
    shape = tuple(draw(st.lists(_SIZES, min_size=0, max_size=4)))
    items = draw(st.lists(_item(shape), min_size=0, max_size=5))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    if _ub(items, len(shape)):
        items = [i for i in items if i is not Ellipsis]
    form = draw(st.sampled_from(["tuple", "tuple", "single", "list"]))
    if form == "single" and len(items) == 1:
        return shape, items[0]
    if form == "list" and items:
        return shape, list(items)  # torch's rule for a list: sometimes one index, sometimes a tuple
    return shape, tuple(items)


def _base(lib: Any, shape: tuple[int, ...], dtype: str) -> Any:
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)
    return torch.from_numpy(a.copy()) if lib is torch else lt.from_numpy(a.copy())


def _run(lib: Any, fn: Any) -> tuple[str, Any]:
    """('ok', numpy result) or ('error', exception type); lazytorch's result is materialized
    (its errors can come at the cut)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
            return "ok", (np.array(out.numpy(), copy=True), str(out.dtype).split(".")[-1])
    except Exception as e:  # the type is what is compared
        return "error", e


def _compare(fn: Any, what: str) -> None:
    want = _run(torch, fn)
    with lt.backend("interpreter"):
        got = _run(lt, fn)
    if want[0] == "error":
        assert got[0] == "error", f"{what}: torch raised {want[1]!r}, lazytorch gave {got[1]}"
        assert isinstance(got[1], type(want[1])), (
            f"{what}: torch raised {type(want[1]).__name__}({want[1]}), lazytorch "
            f"{type(got[1]).__name__}({got[1]})"
        )
        return
    assert got[0] == "ok", f"{what}: torch gave {want[1]}, lazytorch raised {got[1]!r}"
    (g, gd), (w, wd) = got[1], want[1]
    assert gd == wd, f"{what}: dtype {gd} != torch {wd}"
    assert g.shape == w.shape, f"{what}: shape {g.shape} != torch {w.shape}"
    np.testing.assert_array_equal(g, w, err_msg=what)


_SETTINGS = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,  # the same cases on every run: a failure is reproducible
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_SETTINGS
@given(case=_case())
def test_read_matches_torch(case):
    shape, idx = case
    _compare(lambda lib: _base(lib, shape, "float32")[_build(lib, idx)], f"x{shape}[{idx!r}]")


def _duplicates(shape: tuple[int, ...], idx: Any) -> bool | None:
    """Whether x[idx] names an element twice (None where torch refuses the index)."""
    ids = torch.arange(int(np.prod(shape))).reshape(shape)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel = ids[_build(torch, idx)]
    except Exception:  # torch refuses: so must lazytorch, compared below
        return None
    return sel.numel() != sel.unique().numel()


@_SETTINGS
@given(
    case=_case(),
    dtype=st.sampled_from(["float32", "int64", "bool"]),
    value=st.one_of(
        st.sampled_from([-7, 2.5, True, np.float64(1.5), np.int64(3), np.float32(0.5)]),
        st.tuples(st.sampled_from(["result", "lead1", "last", "one", "wrong"]), st.booleans()),
    ),
)
def test_write_matches_torch(case, dtype, value):
    """x[idx] = v, v a number or a tensor: the result's shape (with a leading 1), its last
    dim (broadcast), one element, or a shape that does not broadcast; of x's dtype or not."""
    shape, idx = case
    if isinstance(value, tuple):
        form, same_dtype = value
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rshape = tuple(_base(torch, shape, dtype)[_build(torch, idx)].shape)
        except Exception:  # the write must fail too: any value does
            rshape = ()
        vshape = {
            "result": rshape,
            "lead1": (1, *rshape),
            "last": rshape[-1:],
            "one": (1,),
            "wrong": (*rshape[:-1], rshape[-1] + 2) if rshape else (2,),
        }[form]
        if _duplicates(shape, idx) and form != "one":
            vshape = (1,)  # which of two writes to one element wins is unspecified
        n = int(np.prod(vshape))
        vdtype = dtype if same_dtype else ("int64" if dtype != "int64" else "float32")
        varr = (100 + np.arange(n, dtype=np.float64)).reshape(vshape).astype(vdtype)
        v: Any = _T(varr)
    else:
        v = value

    def write(lib: Any) -> Any:
        x = _base(lib, shape, dtype)
        x[_build(lib, idx)] = _build(lib, v)
        return x

    _compare(write, f"x{shape}:{dtype}[{idx!r}] = {v!r}")


@st.composite
def _put_case(draw: Any) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(draw(st.lists(_SIZES, min_size=1, max_size=3)))
    indices = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["int", "int0", "mask", "u8"]))
        if kind == "int":
            indices.append(_T(_int_array(draw, draw(st.integers(1, 2)))))
        elif kind == "int0":
            indices.append(_T(np.array(draw(_INTS), dtype=np.int64)))
        elif kind == "mask":
            indices.append(_T(_mask(draw, shape, draw(st.integers(1, 2)))))
        else:
            indices.append(_T(_mask(draw, shape, 1).astype(np.uint8)))
    return shape, tuple(indices)


@_SETTINGS
@given(
    case=_put_case(),
    accumulate=st.booleans(),
    form=st.sampled_from(["result", "one", "scalar0", "other_dtype"]),
)
def test_index_put_matches_torch(case, accumulate, form):
    shape, indices = case
    try:
        rshape = tuple(_base(torch, shape, "float32")[_build(torch, indices)].shape)
        dup = _duplicates(shape, indices)
    except Exception:  # index_put_ must fail too
        rshape, dup = (), False
    if dup and not accumulate:
        form = "one"  # which of two writes to one element wins is unspecified
    vshape = {"result": rshape, "one": (1,), "scalar0": (), "other_dtype": rshape}[form]
    vdtype = "int64" if form == "other_dtype" else "float32"
    v = _T((100 + np.arange(int(np.prod(vshape)))).reshape(vshape).astype(vdtype))

    def put(lib: Any) -> Any:
        x = _base(lib, shape, "float32")
        out = x.index_put_(_build(lib, indices), v.make(lib), accumulate=accumulate)
        assert out is x
        return x

    _compare(put, f"x{shape}.index_put_({indices!r}, {v!r}, accumulate={accumulate})")
