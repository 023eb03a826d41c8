"""torch.testing: `assert_close` (and the deprecated `assert_allclose`).

Tolerances default by dtype as torch's do (float32: rtol 1.3e-6, atol 1e-5; integers and
bool exact), and the failure message has torch's shape: how many elements differ, the
greatest absolute and relative differences and where.

>>> import lazytorch
>>> lazytorch.testing.assert_close(lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([1.0, 2.0 + 1e-7]))
>>> lazytorch.testing.assert_close(lazytorch.tensor([1.0]), lazytorch.tensor([1.1]))
Traceback (most recent call last):
  ...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 1 (100.0%)
Greatest absolute difference: 0.10000002384185791 at index (0,) (up to 1e-05 allowed)
Greatest relative difference: 0.09090910851955414 at index (0,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from lazytorch.ir import dtypes as dt
from lazytorch.ops.creation import as_tensor, from_numpy
from lazytorch.tensor import Tensor

__all__ = ["assert_allclose", "assert_close"]

# (rtol, atol) by dtype, as torch.testing's defaults
_DEFAULT_TOL = {
    dt.float16: (1e-3, 1e-5),
    dt.bfloat16: (1.6e-2, 1e-5),
    dt.float32: (1.3e-6, 1e-5),
    dt.float64: (1e-7, 1e-7),
}


def _tolerance(d: Any, rtol: float | None, atol: float | None) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    return _DEFAULT_TOL.get(d, (0.0, 0.0))


def _fail(msg: str | Callable[[str], str] | None, default: str) -> AssertionError:
    if msg is None:
        return AssertionError(default)
    return AssertionError(msg(default) if callable(msg) else msg)


def _compare_tensors(
    actual: Tensor,
    expected: Tensor,
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_device: bool,
    check_dtype: bool,
    msg: Any,
) -> None:
    if tuple(actual.shape) != tuple(expected.shape):
        raise _fail(
            msg,
            f"The values for attribute 'shape' do not match: "
            f"torch.Size({list(actual.shape)}) != torch.Size({list(expected.shape)}).",
        )
    if check_device and actual.device != expected.device:
        raise _fail(
            msg,
            f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.",
        )
    if check_dtype and actual.dtype is not expected.dtype:
        raise _fail(
            msg,
            f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.",
        )
    rtol, atol = _tolerance(actual.dtype, rtol, atol)
    a, e = _host(actual), _host(expected)
    _compare_arrays(a, e, rtol, atol, equal_nan, msg, a.ndim == 0)


def _host(t: Tensor) -> np.ndarray:
    x = t.detach().cpu()
    if x.dtype is dt.bfloat16:
        x = x.float()
    return np.asarray(x._values())


def _compare_arrays(
    a: np.ndarray,
    e: np.ndarray,
    rtol: float,
    atol: float,
    equal_nan: bool,
    msg: Any,
    scalar: bool,
) -> None:
    """Raise torch's message unless a and e (same shape) are close. Differences are taken in
    the arrays' own dtype (float32 values differ in float32), relative ones in float."""
    if a.dtype == np.bool_:
        a, e = a.astype(np.int64), e.astype(np.int64)
    exact = a.dtype.kind in "iub" and e.dtype.kind in "iub"
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    common = np.result_type(a, e)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a.astype(common) - e.astype(common))
        rel_type = np.float32 if exact else common  # torch divides integers in float32
        rel_diff = abs_diff.astype(rel_type) / np.abs(e.astype(common)).astype(rel_type)
    abs_diff = np.where(close, 0, abs_diff)
    rel_diff = np.where(close, 0, rel_diff)
    verb = "equal" if exact else "close"
    allowed = (lambda tol: "") if exact else (lambda tol: f" (up to {tol} allowed)")
    if scalar:
        text = (
            f"Scalars are not {verb}!\n\nExpected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {abs_diff.item()}{allowed(atol)}\n"
            f"Relative difference: {rel_diff.item()}{allowed(rtol)}"
        )
        raise _fail(msg, text)

    def worst(d: np.ndarray) -> tuple[int, ...]:
        d = np.where(np.isnan(d.astype(np.float64)), np.inf, d.astype(np.float64))
        return tuple(int(i) for i in np.unravel_index(int(np.argmax(d)), e.shape))

    ia, ir = worst(abs_diff), worst(rel_diff)
    total, bad = close.size, int((~close).sum())
    lines = [
        f"Tensor-likes are not {verb}!",
        "",
        f"Mismatched elements: {bad} / {total} ({100 * bad / total:.1f}%)",
        f"Greatest absolute difference: {abs_diff[ia].item()} at index {ia}{allowed(atol)}",
        f"Greatest relative difference: {rel_diff[ir].item()} at index {ir}{allowed(rtol)}",
    ]
    raise _fail(msg, "\n".join(lines))


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise AssertionError unless `actual` and `expected` are close: tensors (same shape,
    device and dtype unless told otherwise; |a - e| <= atol + rtol * |e| elementwise),
    Python numbers, or sequences and mappings of them, compared item by item."""
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            if isinstance(actual, (int, float, bool)) or isinstance(expected, (int, float, bool)):
                raise _fail(
                    msg,
                    f"The types do not match: {type(actual).__name__} != "
                    f"{type(expected).__name__}.",
                )

            actual, expected = as_tensor(actual), as_tensor(expected)
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _fail(
                msg,
                f"The keys of the mappings do not match:\nMissing keys: "
                f"{sorted(map(str, set(expected) - set(actual)))}\nExtra keys: "
                f"{sorted(map(str, set(actual) - set(expected)))}",
            )
        for k in expected:
            assert_close(
                actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                check_device=check_device, check_dtype=check_dtype, msg=msg,
            )  # fmt: skip
        return
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq):
        if len(actual) != len(expected):
            raise _fail(
                msg,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
            )
        for a, e in zip(actual, expected):
            assert_close(
                a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                check_device=check_device, check_dtype=check_dtype, msg=msg,
            )  # fmt: skip
        return
    if isinstance(actual, (bool, int, float, complex)) and isinstance(
        expected, (bool, int, float, complex)
    ):
        if check_dtype and type(actual) is not type(expected):
            raise _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        floaty = isinstance(actual, float) or isinstance(expected, float)
        r, a = _tolerance(dt.float64 if floaty else dt.int64, rtol, atol)  # Python floats: double
        _compare_arrays(np.array(actual), np.array(expected), r, a, equal_nan, msg, True)
        return
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        assert_close(
            from_numpy(actual), from_numpy(expected), rtol=rtol, atol=atol, equal_nan=equal_nan,
            check_device=check_device, check_dtype=check_dtype, msg=msg,
        )  # fmt: skip
        return
    if actual == expected:
        return
    raise _fail(
        msg,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
    )


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated in torch: `assert_close` without the dtype check, NaN equal to NaN."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    assert_close(
        actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
        check_device=True, check_dtype=False, msg=msg or None,
    )  # fmt: skip
