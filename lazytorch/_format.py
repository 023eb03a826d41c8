"""Printing tensors the way torch does: ``tensor([1.5000, 2.0000])``.

The rules follow torch's formatter: a float tensor whose finite values are all integers
prints as ``1.``; otherwise four decimals, or scientific notation when the magnitudes span
more than three decades (or exceed 1e8, or go below 1e-4). Large tensors are summarized
with ``...`` past 1000 elements, keeping 3 edge items. A dtype other than the default
float, int64 or bool is shown after the values.
"""

from __future__ import annotations

from typing import Any

from lazytorch import _as_torch
from lazytorch.ir import dtypes as dt

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


def _float_formatter(values: Any) -> tuple[Any, int]:
    """(format function, width) by torch's rules, decided on the nonzero finite values."""
    import numpy as np

    flat = values.reshape(-1).astype(np.float64)
    nz = flat[np.isfinite(flat) & (flat != 0)]
    if nz.size == 0:
        return _int_mode, 1
    mag = np.abs(nz)
    lo, hi = mag.min(), mag.max()
    int_mode = bool(np.all(np.ceil(nz) == nz))
    sci = hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4
    if sci:
        fmt = _sci
        width = max(len(_sci(v)) for v in nz.tolist())
    elif int_mode:
        fmt = _int_mode
        width = max(len(f"{v:.0f}") + 1 for v in nz.tolist())
    else:
        fmt = _fixed
        width = max(len(_fixed(v)) for v in nz.tolist())
    return fmt, width


def _sci(v: float) -> str:
    return f"{v:.{PRECISION}e}"


def _fixed(v: float) -> str:
    return f"{v:.{PRECISION}f}"


def _int_mode(v: float) -> str:
    return f"{v:.0f}" + ("" if v != v or v in (float("inf"), float("-inf")) else ".")


def format_tensor(
    arr: Any,
    dtype: dt.DType,
    default_float: dt.DType,
    extra: tuple[str, ...] = (),
    device: str | None = None,
) -> str:
    """torch's repr of a tensor's values; `device` (e.g. ``"cuda:0"``) is shown first among
    the keyword parts, as torch shows a tensor that is not on the cpu.

    >>> import numpy as np
    >>> from lazytorch.ir import dtypes
    >>> format_tensor(np.array([1, 2], np.int32), dtypes.int32, dtypes.float32, device="cuda:0")
    "tensor([1, 2], device='cuda:0', dtype=lazytorch.int32)"
    """
    import numpy as np

    suffix = [f"device='{device}'"] if device is not None else []
    # torch shows the size of an empty tensor that is not (0,), and of any tensor when no
    # edge items print
    if (arr.size == 0 and arr.shape != (0,)) or (arr.size and not EDGEITEMS):
        suffix.append(
            f"size=({', '.join(str(d) for d in arr.shape)}{',' if arr.ndim == 1 else ''})"
        )
    # an empty tensor has no values to tell int64 or bool from the default float
    shown = (default_float,) if arr.size == 0 else (default_float, dt.int64, dt.bool_)
    if dtype not in shown:
        suffix.append(f"dtype={_as_torch.NAME}.{dtype.name}")
    if dtype is dt.bfloat16:
        arr = arr.astype(np.float32)  # exact; NumPy formats ml_dtypes' bfloat16 as an object
    if arr.size == 0:
        body = "[]"
    else:
        summarize = arr.size > THRESHOLD
        sample = _summarized(arr) if summarize else arr
        # torch right-aligns every element to one width.
        if dtype.is_floating_point:
            fmt, width = _float_formatter(sample)
        else:
            fmt = (lambda v: "True" if v else "False") if dtype is dt.bool_ else str
            width = max((len(fmt(v)) for v in sample.reshape(-1).tolist()), default=1)
        body = _layout(arr, len("tensor("), summarize, lambda v: fmt(v).rjust(width), width)
    suffix += extra
    return _add_suffixes(f"tensor({body}", suffix, len("tensor("))


def format_meta(
    shape: tuple[int, ...], dtype: dt.DType, default_float: dt.DType, extra: tuple[str, ...] = ()
) -> str:
    """torch's repr of a ``meta`` tensor, which has no values: the size in their place.

    >>> from lazytorch.ir import dtypes
    >>> format_meta((2, 3), dtypes.int64, dtypes.float32)
    "tensor(..., device='meta', size=(2, 3), dtype=lazytorch.int64)"
    """
    size = f"size=({', '.join(str(d) for d in shape)}{',' if len(shape) == 1 else ''})"
    suffix = ["device='meta'", size]
    if dtype is not default_float:
        suffix.append(f"dtype=lazytorch.{dtype.name}")
    return _add_suffixes("tensor(...", [*suffix, *extra], len("tensor("))


def _summarized(arr: Any) -> Any:
    """The values torch's formatter sizes its width on when it summarizes (its
    ``get_summarized_data``): the edge items of every dimension."""
    import numpy as np

    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        if arr.shape[0] > 2 * EDGEITEMS:
            return np.concatenate([arr[:EDGEITEMS], arr[-EDGEITEMS:]])
        return arr
    if not EDGEITEMS:
        return arr.reshape(-1)[:0]
    rows = range(arr.shape[0])
    if arr.shape[0] > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), *range(arr.shape[0] - EDGEITEMS, arr.shape[0])]
    return np.stack([_summarized(arr[i]) for i in rows])


def _layout(arr: Any, indent: int, summarize: bool, fmt: Any, width: int) -> str:
    """torch's ``_tensor_str_with_formatter``: rows wrapped at ``(linewidth - indent) //
    (width + 2)`` elements, nested dimensions indented one more column each."""
    if arr.ndim == 0:
        return fmt(arr.item())
    n = arr.shape[0]
    if arr.ndim == 1:
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        if summarize and not EDGEITEMS:
            data = ["..."]
        elif summarize and n > 2 * EDGEITEMS:
            data = [fmt(v) for v in arr[:EDGEITEMS].tolist()] + [" ..."]
            data += [fmt(v) for v in arr[n - EDGEITEMS :].tolist()]
        else:
            data = [fmt(v) for v in arr.tolist()]
        lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and n > 2 * EDGEITEMS:
        slices = [_layout(arr[i], indent + 1, summarize, fmt, width) for i in range(EDGEITEMS)]
        slices.append("...")
        slices += [
            _layout(arr[i], indent + 1, summarize, fmt, width) for i in range(n - EDGEITEMS, n)
        ]
    else:
        slices = [_layout(arr[i], indent + 1, summarize, fmt, width) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """torch's ``_add_suffixes``: each keyword part after the values, on a new line when
    it would pass the line width."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"


_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, 2**62, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, with torch's options (``sci_mode`` is accepted and ignored).

    >>> import lazytorch
    >>> lazytorch.set_printoptions(precision=2)
    >>> lazytorch.tensor([1.2345])
    tensor([1.23])
    >>> lazytorch.set_printoptions(profile="default")
    """
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH
    if profile is not None:
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]  # type: ignore[assignment]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold  # type: ignore[assignment]
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
