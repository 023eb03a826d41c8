"""Compare lazytorch against torch (the oracle) on the same inputs.

A test writes its op once, as ``fn(lib, *tensors)`` where ``lib`` is either module, because
lazytorch mirrors torch's API::

    check(lambda t, x, y: t.add(x, y), randn(2, 3), randn(3))

`check` builds torch and lazytorch tensors from the same NumPy arrays, runs the function in
lazy mode and in sync mode, verifies the recorded IR against the primitive rules, and
compares dtypes, shapes and values (NaN == NaN). Exceptions must match in type too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import lazytorch as lt

DTYPE_PAIRS = {
    "bool": (lt.bool, torch.bool),
    "uint8": (lt.uint8, torch.uint8),
    "int8": (lt.int8, torch.int8),
    "int16": (lt.int16, torch.int16),
    "int32": (lt.int32, torch.int32),
    "int64": (lt.int64, torch.int64),
    "float16": (lt.float16, torch.float16),
    "bfloat16": (lt.bfloat16, torch.bfloat16),
    "float32": (lt.float32, torch.float32),
    "float64": (lt.float64, torch.float64),
}
FLOATS = ("float16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
ALL = ("bool", *INTS, *FLOATS)

# Tolerances per dtype: float16 results are rounded once more than the float32 math.
# bfloat16 keeps 8 significant bits: one rounding is a relative 2**-8.
TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
}
BF16 = lt.bfloat16.np  # ml_dtypes' NumPy bfloat16

_rng = np.random.default_rng(0)


def arr(
    *shape: int,
    dtype: str = "float32",
    low: float = -2.0,
    high: float = 2.0,
    seed: int | None = None,
) -> np.ndarray:
    """Random values of `dtype` in [low, high) (integers and bools by their own rules)."""
    rng = np.random.default_rng(seed) if seed is not None else _rng
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INTS:
        lo = max(int(low), np.iinfo(dtype).min)
        hi = min(int(high), np.iinfo(dtype).max)
        if hi <= lo:
            hi = lo + 1
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if dtype == "bfloat16":
        return rng.uniform(low, high, size=shape).astype(np.float32).astype(BF16)
    return rng.uniform(low, high, size=shape).astype(dtype)


def randn(*shape: int, dtype: str = "float32") -> np.ndarray:
    return arr(*shape, dtype=dtype)


def positive(*shape: int, dtype: str = "float32") -> np.ndarray:
    return arr(*shape, dtype=dtype, low=0.1, high=3.0)


def to_torch(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        if x.dtype == BF16:  # torch reads no ml_dtypes array: widen exactly, then narrow
            return torch.from_numpy(x.astype(np.float32)).bfloat16()
        return torch.from_numpy(x.copy())
    return x


def to_lt(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return lt.from_numpy(x.copy())
    return x


def _flatten(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(_flatten(o))
        return items
    return [out]


def assert_same(
    got: Any, want: Any, atol: float | None = None, rtol: float | None = None, what: str = ""
) -> None:
    """lazytorch result `got` equals torch result `want` in type, dtype, shape and values."""
    gs, ws = _flatten(got), _flatten(want)
    assert len(gs) == len(ws), f"{what}: {len(gs)} outputs vs torch's {len(ws)}"
    for k, (g, w) in enumerate(zip(gs, ws)):
        label = f"{what} output {k}"
        if isinstance(w, torch.Tensor):
            assert isinstance(g, lt.Tensor), f"{label}: expected a Tensor, got {type(g).__name__}"
            wd = str(w.dtype).replace("torch.", "")
            assert g.dtype.name == wd, f"{label}: dtype {g.dtype.name} != torch {wd}"
            assert tuple(g.shape) == tuple(w.shape), (
                f"{label}: shape {tuple(g.shape)} != torch {tuple(w.shape)}"
            )
            gv = g.detach().numpy()  # (an output that requires grad: numpy() refuses it)
            wv = w.detach().float().numpy() if wd == "bfloat16" else w.detach().numpy()
            if w.dtype.is_floating_point:
                a, r = TOL[wd]
                a = atol if atol is not None else a
                r = rtol if rtol is not None else r
                np.testing.assert_allclose(
                    gv.astype(np.float64),
                    wv.astype(np.float64),
                    atol=a,
                    rtol=r,
                    equal_nan=True,
                    err_msg=label,
                )
            else:
                np.testing.assert_array_equal(gv, wv, err_msg=label)
        elif isinstance(w, (bool, int, float)):
            if isinstance(w, float):
                assert np.isclose(g, w, atol=atol or 1e-6, rtol=rtol or 1e-6, equal_nan=True), (
                    f"{label}: {g} != {w}"
                )
            else:
                assert g == w, f"{label}: {g} != {w}"
        elif isinstance(w, torch.Size):
            assert tuple(g) == tuple(w), f"{label}: {tuple(g)} != {tuple(w)}"
        else:
            assert g == w, f"{label}: {g!r} != {w!r}"


def run_lt(
    fn: Callable[..., Any], inputs: Sequence[Any], sync: bool, kwargs: dict[str, Any]
) -> Any:
    args = [to_lt(x) for x in inputs]
    with lt.sync_mode(sync):
        out = fn(lt, *args, **kwargs)
    pending = [o for o in _flatten(out) if isinstance(o, lt.Tensor) and not o.is_materialized]
    if pending:
        lt.debug.verify(*pending)
    return out


class TorchCPUCarrier:
    """Buffers as torch CPU tensors: what Triton's interpreter takes as pointers (the
    triton backend's carrier in tests/codegen's triton cases)."""

    def to_device(self, array: np.ndarray) -> torch.Tensor:
        if array.dtype == BF16:  # torch takes no ml_dtypes array: the bits, relabelled
            return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
        return torch.from_numpy(np.array(array, copy=True))

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> torch.Tensor:
        if dtype == BF16:
            return torch.empty(shape, dtype=torch.bfloat16)
        return torch.from_numpy(np.empty(shape, dtype=dtype))

    def to_host(self, buffer: torch.Tensor) -> np.ndarray:
        if buffer.dtype is torch.bfloat16:
            return buffer.view(torch.int16).numpy().view(BF16).copy()
        return buffer.numpy().copy()


# The backend every check() runs on: the one of the test's item in the backend matrix
# (tests/backend_matrix.py); empty outside the matrix, where check() refuses to run.
BACKENDS: list[str] = []
# comparisons made per backend since the test started (the matrix's guard reads it)
RUNS: Counter[str] = Counter()


def _backends() -> list[str]:
    if not BACKENDS:
        raise RuntimeError(
            "check() outside the backend matrix: tests/backend_matrix.py did not see this test "
            "reach check(); mark it @pytest.mark.backends('interpreter', 'cpp') or ask for the "
            "`backend` fixture"
        )
    return BACKENDS


def check(
    fn: Callable[..., Any],
    *inputs: Any,
    atol: float | None = None,
    rtol: float | None = None,
    modes: Sequence[str] = ("lazy", "sync"),
    **kwargs: Any,
) -> Any:
    """Run `fn(lib, *inputs)` on torch and on lazytorch (each backend, each mode); compare.

    If torch raises, lazytorch must raise the same exception type.
    """
    runs = [(b, m) for b in _backends() for m in modes]
    try:
        want = fn(torch, *[to_torch(x) for x in inputs], **kwargs)
    except Exception as e:  # torch refuses: so must we
        for backend, mode in runs:
            try:
                with lt.backend(backend):
                    got = run_lt(fn, inputs, mode == "sync", kwargs)
                    lt.materialize(*[o for o in _flatten(got) if isinstance(o, lt.Tensor)])
            except Exception as ours:
                assert isinstance(ours, type(e)) or _compatible(ours, e), (
                    f"[{backend}, {mode}] torch raised {type(e).__name__}({e}); lazytorch "
                    f"raised {type(ours).__name__}({ours})"
                )
            else:
                raise AssertionError(
                    f"[{backend}, {mode}] torch raised {type(e).__name__}({e}); lazytorch did not"
                )
            RUNS[backend] += 1
        return None
    for backend, mode in runs:
        with lt.backend(backend):
            got = run_lt(fn, inputs, mode == "sync", kwargs)
            assert_same(got, want, atol, rtol, what=f"[{backend}, {mode}]")
        RUNS[backend] += 1
    return want


def _compatible(ours: Exception, theirs: Exception) -> bool:
    # torch raises IndexError for some dim errors that subclass its own hierarchy; accept
    # our type when torch's is a subclass of it (e.g. torch's custom errors).
    return isinstance(theirs, type(ours))


def check_raises(
    fn: Callable[..., Any], *inputs: Any, match: str | None = None, **kwargs: Any
) -> Exception:
    """torch and lazytorch both raise, with the same type; returns lazytorch's exception."""
    import pytest

    with pytest.raises(Exception) as theirs:
        fn(torch, *[to_torch(x) for x in inputs], **kwargs)
    with pytest.raises(Exception, match=match) as ours:
        out = fn(lt, *[to_lt(x) for x in inputs], **kwargs)
        lt.materialize(*[o for o in _flatten(out) if isinstance(o, lt.Tensor)])
    assert isinstance(ours.value, type(theirs.value)), (
        f"torch raised {type(theirs.value).__name__}, lazytorch {type(ours.value).__name__}: {ours.value}"
    )
    return ours.value


def _grads(
    lib: Any, fn: Callable[..., Any], arrays: Sequence[Any], diff: Sequence[int], second: bool
) -> list[Any]:
    """Gradients of a fixed random projection of fn's float outputs with respect to the
    inputs at `diff` (then, with `second`, of <v, grads> again): torch or lazytorch."""
    mk = to_torch if lib is torch else (lambda a: lt.from_numpy(a.copy()))
    ts = [mk(a) if isinstance(a, np.ndarray) else a for a in arrays]
    for i in diff:
        ts[i].requires_grad_()
    outs = [o for o in _flatten(fn(lib, *ts)) if hasattr(o, "dtype") and o.dtype.is_floating_point]
    loss = 0
    for k, o in enumerate(outs):
        ct = np.random.default_rng(100 + k).uniform(0.5, 1.5, size=tuple(o.shape))
        loss = loss + (o.double() * mk(ct)).sum()
    xs = [ts[i] for i in diff]
    gs = list(lib.autograd.grad(loss, xs, allow_unused=True, create_graph=second))
    if second:
        inner = 0
        for k, (g, x) in enumerate(zip(gs, xs)):
            if g is not None:
                v = np.random.default_rng(200 + k).uniform(-1, 1, size=tuple(x.shape))
                inner = inner + (g.double() * mk(v)).sum()
        if not getattr(inner, "requires_grad", False):
            return [None] * len(xs)
        gs = list(lib.autograd.grad(inner, xs, allow_unused=True))
    return gs


def _host(t: torch.Tensor) -> np.ndarray:
    """A torch tensor's values in NumPy (bfloat16 widened exactly: NumPy has none)."""
    return t.float().numpy() if t.dtype is torch.bfloat16 else t.numpy(force=True)


def check_grad(
    fn: Callable[..., Any],
    *inputs: Any,
    diff: Sequence[int] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    second_order: bool = False,
    modes: Sequence[str] = ("lazy",),
) -> None:
    """The gradients of `fn(lib, *inputs)` match torch.autograd's (each backend and mode).

    Float array inputs are differentiated unless `diff` names the ones to differentiate. The
    outputs are projected on fixed random cotangents, so every output element counts.
    """
    if diff is None:
        diff = [
            i
            for i, a in enumerate(inputs)
            if isinstance(a, np.ndarray) and (a.dtype.kind == "f" or a.dtype == BF16)
        ]
    want = _grads(torch, fn, inputs, diff, second_order)
    for backend in _backends():
        for mode in modes:
            with lt.backend(backend), lt.sync_mode(mode == "sync"):
                got = _grads(lt, fn, inputs, diff, second_order)
            for i, g, w in zip(diff, got, want):
                label = f"[{backend}, {mode}] grad of input {i}"
                wv = np.zeros(np.shape(inputs[i])) if w is None else _host(w.detach())
                if g is None:
                    gv = np.zeros(np.shape(inputs[i]))
                else:
                    assert tuple(g.shape) == tuple(np.shape(inputs[i])), label
                    assert g.dtype.name == str(inputs[i].dtype), f"{label}: dtype {g.dtype}"
                    gv = g.detach().numpy()  # (second order: the grad requires grad)
                d = str(inputs[i].dtype)
                a, r = TOL[d]
                np.testing.assert_allclose(
                    gv.astype(np.float64),
                    wv.astype(np.float64),
                    atol=atol if atol is not None else a,
                    rtol=rtol if rtol is not None else r,
                    equal_nan=True,
                    err_msg=label,
                )
            RUNS[backend] += 1
