"""dtypes and type promotion against torch: the promotion table, result_type over the three
operand tiers, and the dtypes ops actually produce."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import DTYPE_PAIRS

NAMES = list(DTYPE_PAIRS)


@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("b", NAMES)
def test_promote_types_matches_torch(a, b):
    la, ta = DTYPE_PAIRS[a]
    lb, tb = DTYPE_PAIRS[b]
    want = str(torch.promote_types(ta, tb)).replace("torch.", "")
    assert lt.promote_types(la, lb).name == want


operand = st.one_of(
    st.tuples(st.just("dim"), st.sampled_from(NAMES)),
    st.tuples(st.just("zero"), st.sampled_from(NAMES)),
    st.tuples(st.just("scalar"), st.sampled_from(["bool", "int", "float"])),
)


def make(kind, name, lib):
    if kind == "scalar":
        return {"bool": True, "int": 3, "float": 2.5}[name]
    dtype = DTYPE_PAIRS[name][0 if lib is lt else 1]
    shape = (2,) if kind == "dim" else ()
    return lib.ones(shape, dtype=dtype)


@settings(max_examples=300, deadline=None)
@given(a=operand, b=operand)
def test_result_type_matches_torch(a, b):
    if a[0] == "scalar" and b[0] == "scalar":
        return  # torch.result_type needs a tensor
    want = torch.result_type(make(*a, torch), make(*b, torch))
    got = lt.result_type(make(*a, lt), make(*b, lt))
    assert got.name == str(want).replace("torch.", "")


@settings(max_examples=200, deadline=None)
@given(a=operand, b=operand)
def test_arithmetic_result_dtypes_match_torch(a, b):
    if a[0] == "scalar" and b[0] == "scalar":
        return
    ta, tb = make(*a, torch), make(*b, torch)
    la, lb = make(*a, lt), make(*b, lt)
    for op in (lambda x, y: x * y, lambda x, y: x / y, lambda x, y: x > y):
        try:
            want = op(ta, tb).dtype
        except RuntimeError:
            with pytest.raises(RuntimeError):
                op(la, lb)
            continue
        assert op(la, lb).dtype.name == str(want).replace("torch.", "")


@pytest.mark.parametrize("name", NAMES)
def test_dtype_metadata_matches_torch(name):
    ld, td = DTYPE_PAIRS[name]
    assert ld.itemsize == td.itemsize
    assert ld.is_floating_point == td.is_floating_point
    assert ld.is_signed == td.is_signed
    assert repr(ld) == f"lazytorch.{name}"
    assert ld.np == np.dtype(name)
    assert pickle.loads(pickle.dumps(ld)) is ld


def test_torch_short_names():
    assert lt.float is lt.float32 and lt.double is lt.float64 and lt.half is lt.float16
    assert lt.long is lt.int64 and lt.int is lt.int32 and lt.short is lt.int16


def test_default_dtype_governs_python_floats():
    assert lt.tensor(1.5).dtype is lt.float32
    with lt.default_dtype(lt.float64):
        assert lt.tensor(1.5).dtype is lt.float64
        assert (lt.tensor([1, 2]) * 0.5).dtype is lt.float64
        assert lt.ones(2).dtype is lt.float64
    assert lt.get_default_dtype() is lt.float32
    lt.set_default_dtype(lt.float16)
    try:
        assert lt.arange(2.0).dtype is lt.float16
    finally:
        lt.set_default_dtype(lt.float32)
    with pytest.raises(TypeError):
        lt.set_default_dtype(lt.int32)
