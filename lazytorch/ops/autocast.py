"""Autocast at the public surface: the per-thread state and the wrapper of the listed ops.

The contract:

* **What is cast:** a call of a public name that `autocast_policy.PUBLIC` lists (the
  function, its Tensor method and operator, its ``nn.functional`` spelling), while
  autocast is enabled for the device type of the call's tensors, follows that op's policy
  for that device (`autocast_policy.POLICIES`). Every other op runs on the dtypes it is
  given, as in torch.
* **Where:** once, at the public surface, per user call. A listed op called by lazytorch's
  own code (a loss calling ``log_softmax``, ``gelu`` calling ``exp``, ``mean`` calling
  ``sum``) is not cast again: the wrapper casts only when its caller is not lazytorch's
  code, which is what torch's dispatcher achieves by running an op's kernel with autocast
  excluded. ``nn`` modules count as the user's side: torch's modules are Python that call
  the functional API, so ``nn.Linear`` is autocast through ``F.linear``, as in torch; so do
  the functions marked `surface` (``F.multi_head_attention_forward``, Python in torch too).
* **Which op:** a name in `autocast_policy.RESOLVERS` (``F.pad``, ``F.interpolate``)
  follows the aten op torch would pick from the call's arguments.
* **Which tensors:** floating tensors on the policy's device type, float64 excepted
  (torch's ``is_eligible``); integer and bool tensors, other devices' tensors and Python
  numbers are untouched. Tensors inside a list or tuple argument (``cat``) are cast too.
* **How:** a cast is an ordinary recorded ``to(dtype)`` node, differentiable (gradients
  reach float32 parameters in float32), fused by the scheduler into its neighbours.
* **Cost when off:** the wrapper makes one check of a global (how many threads have autocast
  enabled) and calls the op; unlisted ops have no wrapper at all. Generated in-place variants (``exp_``) are not
  wrapped, as torch lists only out-of-place ops.

Not done (torch does): the weight-cast cache (``cache_enabled``) — a parameter cast twice in
one program is recorded twice and merged by common-subexpression elimination instead.

>>> import lazytorch
>>> x = lazytorch.ones(2, 2)
>>> with lazytorch.autocast("cpu", dtype=lazytorch.float16):
...     (x @ x).dtype, (x + x).dtype
(lazytorch.float16, lazytorch.float32)
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import internal_dirs
from lazytorch.ops._core import cast, wrap
from lazytorch.ops.autocast_policy import POLICIES, PUBLIC, RESOLVERS
from lazytorch.tensor import Tensor

__all__ = ["DEVICE_TYPES", "autocast_op", "install", "install_registry", "state", "surface"]

# The device types autocast has a policy table for, and their default autocast dtypes.
DEVICE_TYPES = tuple(POLICIES)
DEFAULT_DTYPES = {"cpu": dt.bfloat16, "cuda": dt.float16}


class AutocastState(threading.local):
    """torch's thread-local autocast state: per device type enabled and dtype, the nesting
    depth of ``autocast`` blocks and the cast-cache flag."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = dict.fromkeys(DEVICE_TYPES, False)
        self.dtype: dict[str, dt.DType] = dict(DEFAULT_DTYPES)
        self.nesting = 0
        self.cache_enabled = True

    def set_enabled(self, device_type: str, enabled: bool) -> None:
        global enabled_anywhere
        was = self.enabled[device_type]
        self.enabled[device_type] = enabled = bool(enabled)
        with _count_lock:
            enabled_anywhere += enabled - was


# How many (thread, device type) pairs have autocast enabled: the one thing a wrapped op
# reads when autocast is off (a plain global, cheaper than the thread-local state).
enabled_anywhere = 0
_count_lock = threading.Lock()
state = AutocastState()

# Files of lazytorch whose calls count as the user's (see the module docstring).
_NN_MODULES = os.sep + os.path.join("lazytorch", "nn", "modules") + os.sep
_by_user: dict[str, bool] = {}
# Functions of lazytorch whose calls count as the user's (`surface`).
_surface: set[Any] = set()


def _called_by_user(code: Any) -> bool:
    if code in _surface:
        return True
    filename = code.co_filename
    r = _by_user.get(filename)
    if r is None:
        r = not filename.startswith(tuple(internal_dirs)) or _NN_MODULES in filename
        _by_user[filename] = r
    return r


def surface(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare `fn` (lazytorch's code) a function whose calls of listed ops count as the
    user's: its torch counterpart is Python calling torch's public ops, which autocast sees
    (``F.multi_head_attention_forward`` calls ``linear``, ``baddbmm``, ``softmax``)."""
    _surface.add(fn.__code__)
    return fn


_wrappers: dict[tuple[int, str], Callable[..., Any]] = {}


def autocast_op(fn: Callable[..., Any], op: str) -> Callable[..., Any]:
    """`fn` wrapped to follow the autocast policy of aten op `op` (the same wrapper for the
    same `fn` and `op`, so aliases stay one object)."""
    if getattr(fn, "autocast_op", None) == op:
        return fn
    key = (id(fn), op)
    found = _wrappers.get(key)
    if found is not None:
        return found

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not enabled_anywhere:
            return fn(*args, **kwargs)
        return _autocast_call(fn, op, args, kwargs)

    wrapper.autocast_op = op  # type: ignore[attr-defined]
    _wrappers[key] = wrapper
    return wrapper


def install(namespace: str, names: dict[str, Any]) -> None:
    """Wrap, in the dict `names`, every name `PUBLIC[namespace]` lists that it holds."""
    for name, op in PUBLIC[namespace].items():
        if name in names:
            names[name] = autocast_op(names[name], op)


def install_registry(registry: Any) -> None:
    """Wrap the listed ``torch``/``Tensor`` names of the public registry before they are
    bound (the facade and the Tensor methods then hold the wrappers; generated in-place
    variants keep the plain op)."""
    for e in registry.entries():
        op = PUBLIC[e.namespace].get(e.name)
        if op is not None and e.of is None:
            e.obj = autocast_op(e.obj, op)


# -- what an enabled call does --------------------------------------------------------------------
def _autocast_call(fn: Callable[..., Any], op: str, args: tuple, kwargs: dict) -> Any:
    if not _called_by_user(sys._getframe(2).f_code):
        return fn(*args, **kwargs)
    device = _device_type(args) or _device_type(tuple(kwargs.values()))
    if device is None or not state.enabled.get(device, False):  # (another thread's autocast)
        return fn(*args, **kwargs)
    if op in RESOLVERS:
        bound = _signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        op = RESOLVERS[op][0](bound.arguments)
        if op is None:
            return fn(*args, **kwargs)
    policy = POLICIES[device].get(op)
    if policy is None:
        return fn(*args, **kwargs)
    return _APPLY[policy](fn, op, device, args, kwargs)


def _device_type(values: tuple) -> str | None:
    for v in values:
        if isinstance(v, Tensor):
            return v._node.device.type
        if isinstance(v, (list, tuple)):
            found = _device_type(tuple(v))
            if found is not None:
                return found
    return None


def _eligible(t: Tensor, device: str) -> bool:
    """torch's ``is_eligible``: a floating tensor of the device type, not float64."""
    n = t._node
    return n.dtype.is_floating_point and n.dtype is not dt.float64 and n.device.type == device


def _cast(value: Any, to: dt.DType, device: str) -> Any:
    if isinstance(value, Tensor):
        if _eligible(value, device) and value._node.dtype is not to:
            return wrap(cast(value._node, to))
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, to, device) for v in value)
    return value


def _cast_call(fn: Callable[..., Any], to: dt.DType, device: str, args: tuple, kwargs: dict) -> Any:
    args = tuple(_cast(a, to, device) for a in args)
    kwargs = {k: _cast(v, to, device) for k, v in kwargs.items()}
    return fn(*args, **kwargs)


def _lower(fn: Callable[..., Any], op: str, device: str, args: tuple, kwargs: dict) -> Any:
    return _cast_call(fn, state.dtype[device], device, args, kwargs)


def _fp32(fn: Callable[..., Any], op: str, device: str, args: tuple, kwargs: dict) -> Any:
    return _cast_call(fn, dt.float32, device, args, kwargs)


def _set_opt_dtype(fn: Callable[..., Any], op: str, device: str, args: tuple, kwargs: dict) -> Any:
    """Run with ``dtype=float32`` when the first input is eligible and no dtype is given."""
    first = args[0] if args else next(iter(kwargs.values()), None)
    if not (isinstance(first, Tensor) and _eligible(first, device)):
        return fn(*args, **kwargs)
    sig = _signature(fn)
    if "dtype" not in sig.parameters:  # the same result: the op on the float32 input
        if args:
            args = (_cast(first, dt.float32, device), *args[1:])
        else:
            kwargs = {**kwargs, next(iter(kwargs)): _cast(first, dt.float32, device)}
        return fn(*args, **kwargs)
    bound = sig.bind(*args, **kwargs)
    if bound.arguments.get("dtype") is not None:
        return fn(*args, **kwargs)
    bound.arguments["dtype"] = dt.float32
    return fn(*bound.args, **bound.kwargs)


def _promote(fn: Callable[..., Any], op: str, device: str, args: tuple, kwargs: dict) -> Any:
    """Cast to the widest eligible dtype: float32 if any input is, else the autocast dtype
    (torch's ``prioritize``, in argument order: a float16 input under bfloat16 autocast is
    an error unless a float32 input came before it)."""
    low = state.dtype[device]
    to = low
    for t in _tensors((*args, *kwargs.values())):
        if not _eligible(t, device):
            continue
        d = t._node.dtype
        if to is dt.float32 or d is dt.float32:
            to = dt.float32
        elif d is not low:
            raise op_error(
                RuntimeError,
                op,
                f"Unexpected floating ScalarType {d.legacy_name} in autocast's promotion "
                f"(autocast dtype {low.legacy_name})",
            )
    return _cast_call(fn, to, device, args, kwargs)


def _banned(fn: Callable[..., Any], op: str, device: str, args: tuple, kwargs: dict) -> Any:
    raise op_error(
        RuntimeError,
        op,
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
        "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
        "layer.\nIn this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
        "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.",
    )


def _tensors(values: tuple) -> Any:
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(tuple(v))


@functools.cache
def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(fn)


_APPLY: dict[str, Callable[..., Any]] = {
    "lower": _lower,
    "fp32": _fp32,
    "fp32_set_opt_dtype": _set_opt_dtype,
    "fp32_append_dtype": _set_opt_dtype,  # norm: the dtype overload torch redirects to
    "promote": _promote,
    "banned": _banned,
}
