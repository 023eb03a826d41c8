"""Anomaly-mode switches and gradient checks (torch.autograd's `detect_anomaly`,
`set_detect_anomaly`, `gradcheck`, `gradgradcheck`).

Anomaly mode is a switch scripts turn on while debugging. lazytorch keeps its state (and
`is_anomaly_enabled` reports it) but checks nothing more when it is on: every op already
records the user's line it came from, and errors name it; backward outputs are not scanned
for NaN (that would materialize every step).

>>> import lazytorch
>>> x = lazytorch.tensor([0.5, 1.5], dtype=lazytorch.float64, requires_grad=True)
>>> lazytorch.autograd.gradcheck(lambda t: (t * t.sin()).sum(), (x,))
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from lazytorch.autograd import forward_ad
from lazytorch.autograd.engine import grad
from lazytorch.tensor import Tensor

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "GradcheckError",
    "detect_anomaly",
    "gradcheck",
    "gradgradcheck",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
]

_ANOMALY = {"enabled": False, "check_nan": True}


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on."""
    return _ANOMALY["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    return _ANOMALY["check_nan"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off for good (``torch.set_anomaly_enabled``)."""
    _ANOMALY["enabled"], _ANOMALY["check_nan"] = bool(enabled), bool(check_nan)


class set_detect_anomaly:
    """Turn anomaly mode on or off now (as a call) or for a block (as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = dict(_ANOMALY)
        _ANOMALY["enabled"], _ANOMALY["check_nan"] = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _ANOMALY.update(self.prev)


class detect_anomaly:
    """Anomaly mode on inside a block or a decorated function."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = dict(_ANOMALY)

    def __enter__(self) -> None:
        self.prev = dict(_ANOMALY)
        _ANOMALY["enabled"], _ANOMALY["check_nan"] = True, self.check_nan

    def __exit__(self, *exc: object) -> None:
        _ANOMALY.update(self.prev)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients differ (`gradcheck`)."""


def _tensors(xs: Any) -> tuple[Any, ...]:
    return xs if isinstance(xs, (tuple, list)) else (xs,)


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    return [o for o in _tensors(out) if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _iter_elements(t: Tensor) -> Iterator[tuple[int, ...]]:
    import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

    yield from np.ndindex(*tuple(t.shape))


def _numerical(fn: Callable[..., Any], inputs: list[Any], i: int, o: int, eps: float) -> np.ndarray:
    """d out[o] / d inputs[i] by central differences: (n_out, n_in)."""
    import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

    x = inputs[i]
    base = x._values().astype(np.float64)
    cols = []
    for idx in _iter_elements(x):
        diffs = []
        for sign in (1.0, -1.0):
            moved = base.copy()
            moved[idx] += sign * eps
            args = list(inputs)
            # requiring grad as the input did: a function that differentiates (gradgradcheck's
            # first derivatives) needs it
            args[i] = x.new_tensor(moved).to(x.dtype).requires_grad_(x.requires_grad)
            out = _outputs(fn, args)[o]
            diffs.append(out._values().astype(np.float64).ravel())
        cols.append((diffs[0] - diffs[1]) / (2 * eps))
    n_out = _outputs(fn, inputs)[o].numel()
    return np.stack(cols, 1) if cols else np.zeros((n_out, 0))


def _analytical(fn: Callable[..., Any], inputs: list[Any], i: int, o: int) -> np.ndarray:
    """d out[o] / d inputs[i] by autograd, one vector-Jacobian product per output element."""
    import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

    out = _outputs(fn, inputs)[o]
    rows = []
    for k in range(out.numel()):
        onehot = np.zeros(out.numel())
        onehot[k] = 1.0
        v = out.new_tensor(onehot.reshape(tuple(out.shape))).to(out.dtype)
        (g,) = grad(out, inputs[i], v, retain_graph=True, allow_unused=True)
        rows.append(
            np.zeros(inputs[i].numel()) if g is None else g._values().astype(np.float64).ravel()
        )
    return np.stack(rows, 0) if rows else np.zeros((0, inputs[i].numel()))


def _analytical_forward(fn: Callable[..., Any], inputs: list[Any], i: int, o: int) -> np.ndarray:
    """d out[o] / d inputs[i] by forward-mode AD, one Jacobian-vector product per input
    element (`forward_ad`)."""
    import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

    x = inputs[i]
    n_out = _outputs(fn, inputs)[o].numel()
    cols = []
    for k in range(x.numel()):
        onehot = np.zeros(x.numel())
        onehot[k] = 1.0
        with forward_ad.dual_level():
            args = list(inputs)
            args[i] = forward_ad.make_dual(
                x, x.new_tensor(onehot.reshape(tuple(x.shape))).to(x.dtype)
            )
            t = forward_ad.unpack_dual(_outputs(fn, args)[o]).tangent
            cols.append(np.zeros(n_out) if t is None else t._values().astype(np.float64).ravel())
    return np.stack(cols, 1) if cols else np.zeros((n_out, 0))


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Compare `func`'s gradients with respect to the inputs that require them against
    central finite differences (use float64 inputs, as with torch): reverse mode's Jacobian
    (`check_backward_ad`) and forward mode's (`check_forward_ad`, by `forward_ad`). True
    when every Jacobian entry is within atol + rtol * |numerical|; otherwise GradcheckError
    (or False)."""
    import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

    args = list(_tensors(inputs))
    diff = [k for k, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have requires_grad=True."
        )
    modes = [(m, f) for m, f, on in _MODES if on(check_backward_ad, check_forward_ad)]
    for o in range(len(_outputs(func, args))):
        for i in diff:
            num = _numerical(func, args, i, o, eps)
            for mode, analytical in modes:
                ana = analytical(func, args, i, o)
                if not np.allclose(ana, num, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"Jacobian mismatch for output {o} with respect to input {i} "
                        f"({mode} mode),\nnumerical:{num}\nanalytical:{ana}\n"
                    )
    return True


# gradcheck's analytical Jacobians: (name, how, whether the flags ask for it)
_MODES: list[tuple[str, Callable[..., Any], Callable[[bool, bool], bool]]] = [
    ("backward", _analytical, lambda backward, forward: backward),
    ("forward", _analytical_forward, lambda backward, forward: forward),
]


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """`gradcheck` of the gradients themselves: second derivatives against finite
    differences of the first (random fixed cotangents when `grad_outputs` is None)."""
    args = list(_tensors(inputs))
    diff = [k for k, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    outs = _outputs(func, args)
    if grad_outputs is None:
        import numpy as np  # lazy: import time (import lazytorch loads no NumPy)

        rng = np.random.default_rng(0)
        gos = [
            o.new_tensor(rng.standard_normal(tuple(o.shape))).to(o.dtype).requires_grad_()
            for o in outs
        ]
    else:
        gos = list(_tensors(grad_outputs))
    n = len(args)

    def first_grads(*xs: Any) -> tuple[Any, ...]:
        os_ = _outputs(func, list(xs[:n]))
        gs = grad(os_, [xs[k] for k in diff], list(xs[n:]), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads, (*args, *gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
