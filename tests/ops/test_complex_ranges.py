"""``linspace`` of a complex dtype or complex end points, against torch, bit for bit.

torch's kernel divides and multiplies a c10::complex by real numbers and adds complex
numbers, all part by part, so each part is rounded as a real linspace of the parts' dtype
(float32 for complex64, float64 for complex128): lazytorch computes it that way, and the
values must equal torch's exactly (as the real linspace tests in test_creation.py check),
including the sign of zero parts. Also torch's dtype inference (a complex end point makes
the default complex dtype and refuses a real ``dtype=``), one and zero steps, and its errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lazytorch as lt


def _bits(x):
    """The bytes of a complex result (NaN payloads and signs of zero included)."""
    a = x.detach().numpy()
    return a.dtype, a.view(np.uint8).tolist()


CASES = {
    "complex_ends": lambda t: t.linspace(1 + 2j, 3 - 1j, 5),
    "complex_ends_c128": lambda t: t.linspace(0.1 + 0.7j, -3.3 + 1e-3j, 11, dtype=t.complex128),
    "real_ends_complex_dtype": lambda t: t.linspace(0.1, 1.7, 7, dtype=t.complex64),
    "int_ends_complex_dtype": lambda t: t.linspace(-3, 10**9 + 1, 6, dtype=t.complex64),
    "int_ends_c128": lambda t: t.linspace(2**60 + 1, 3, 4, dtype=t.complex128),
    "only_imaginary_ends": lambda t: t.linspace(1j, 3j, 4),
    "only_real_complex_ends": lambda t: t.linspace(1 + 0j, 2 - 0j, 3),
    "mixed_real_and_complex": lambda t: t.linspace(2**40, 1j, 3),
    "negative_zero_parts": lambda t: t.linspace(complex(-0.0, 1), complex(-0.0, -0.0), 2),
    "steps_0": lambda t: t.linspace(1, 3j, 0),
    "steps_1": lambda t: t.linspace(0.1 + 1j, 3j, 1),
    "steps_1_c128": lambda t: t.linspace(0.1 - 0.3j, 3j, 1, dtype=t.complex128),
    "steps_1_end_past_complex64": lambda t: t.linspace(1, 1e39 + 0j, 1),
    "steps_2": lambda t: t.linspace(0.3j, 1 / 3, 2),
    "odd_steps": lambda t: t.linspace(-1 - 1j, 1 + 1j, 7),
    "many_steps": lambda t: t.linspace(0.1 + 3j, -7.3 - 1e-3j, 70001),
    "many_steps_c128": lambda t: t.linspace(0.1 + 3j, -7.3 - 1e-3j, 70001, dtype=t.cdouble),
    "inf_part": lambda t: t.linspace(complex(math.inf, 1), 2, 3),
    "nan_part": lambda t: t.linspace(complex(math.nan, 1), 2j, 4),
    "large_c128": lambda t: t.linspace(1e300j, 1, 2, dtype=t.complex128),
    "tensor_ends": lambda t: t.linspace(t.tensor(1 + 2j), t.tensor(3.0), 3),
    "complex128_scalar_end": lambda t: t.linspace(np.complex128(1 + 1j), 2, 3),
    "complex64_scalar_end_is_real": lambda t: t.linspace(np.complex64(1 + 1j), 2, 3),
    "default_float64": lambda t: _with_default(t, lambda: t.linspace(0.1j, 1, 5)),
}


def _with_default(lib, fn):
    old = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        return fn()
    finally:
        lib.set_default_dtype(old)


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_linspace_is_torchs_bit_for_bit(name):
    want = CASES[name](torch)
    for sync in (False, True):
        with lt.sync_mode(sync):
            got = CASES[name](lt)
        assert lt.is_complex(got) == torch.is_complex(want), (name, sync)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], got.dtype
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
        assert _bits(got) == _bits(want), (name, sync)


def test_complex_linspace_random_ends_bit_for_bit():
    """Random end points of many magnitudes, only real or only imaginary parts, ints."""
    rng = np.random.default_rng(19)
    for trial in range(120):
        kind = trial % 4

        def point(kind=kind):
            if kind == 0:
                return complex(*rng.normal(size=2) * 10.0 ** rng.integers(-5, 6))
            if kind == 1:
                return complex(rng.normal(), 0.0)
            if kind == 2:
                return complex(0.0, rng.uniform(-1e3, 1e3))
            return int(rng.integers(-(10**9), 10**9))

        start, end = point(), point()
        steps = int(rng.choice([2, 3, 7, 100, 1001]))
        for name in ("complex64", "complex128"):
            want = torch.linspace(start, end, steps, dtype=getattr(torch, name))
            got = lt.linspace(start, end, steps, dtype=getattr(lt, name))
            assert _bits(got) == _bits(want), (name, start, end, steps)


def test_complex_linspace_requires_grad():
    for lib in (torch, lt):
        for kw in ({}, {"dtype": lib.complex128}):
            t = lib.linspace(1j, 2, 3, requires_grad=True, **kw)
            assert t.requires_grad and t.is_leaf, (lib.__name__, kw)


ERRORS = {
    "complex_end_real_dtype": lambda t: t.linspace(1j, 2, 3, dtype=t.float32),
    "complex_end_int_dtype": lambda t: t.linspace(1, 2j, 3, dtype=t.int64),
    "complex_end_bool_dtype": lambda t: t.linspace(1j, 2, 3, dtype=t.bool),
    "complex_start_past_complex64": lambda t: t.linspace(1e39 + 0j, 2, 3),
    "complex_start_past_complex64_one_step": lambda t: t.linspace(1e39 + 0j, 2, 1),
    "complex_end_past_complex64": lambda t: t.linspace(1, 1e39 + 0j, 2),
    "real_start_past_complex64": lambda t: t.linspace(1e39, 2, 3, dtype=t.complex64),
    "negative_steps": lambda t: t.linspace(1j, 2, -1),
    "start_not_0d": lambda t: t.linspace(t.tensor([1j]), 2, 3),
    "end_not_0d": lambda t: t.linspace(1j, t.ones(1, 1), 3),
    "complex_end_real_out": lambda t: t.linspace(1j, 2, 3, out=t.zeros(3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_complex_linspace_errors_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)):
        ERRORS[name](lt)


def test_complex_linspace_messages():
    with pytest.raises(RuntimeError, match=r"inferred dtype c10::complex<float> can't be safely"):
        lt.linspace(1j, 2, 3, dtype=lt.float32)
    with pytest.raises(RuntimeError, match=r"c10::complex<float> without overflow"):
        lt.linspace(1e39 + 0j, 2, 3)
    with pytest.raises(RuntimeError, match="0-dimensional start and end tensors"):
        lt.linspace(lt.tensor([1j]), 2, 3)


def test_complex_linspace_out_is_refused_clearly():
    """out= of a complex tensor is not supported (complex results have no out= yet)."""
    with pytest.raises(NotImplementedError, match="linspace"):
        lt.linspace(1j, 2, 3, out=lt.zeros(3, dtype=lt.complex64))
