"""Free tensors: module parameters and buffers, closure and global tensors of a function."""

from __future__ import annotations

import dis
import types
from typing import Any

from lazytorch._compile.graph import _TENSOR, _Uncacheable
from lazytorch.ir.symbolic import SymBool, SymFloat, SymInt
from lazytorch.tensor import Tensor

# -- free tensors: module parameters, closure and global tensors ----------------------------
_MODULE, _OTHER = 1, 0
_kinds: dict[type, int] = {}


def _kind(tp: type) -> int:
    k = _kinds.get(tp)
    if k is None:
        k = _kinds[tp] = (
            _MODULE
            if callable(getattr(tp, "parameters", None))
            and callable(getattr(tp, "buffers", None))
            and not issubclass(tp, (type, types.ModuleType))
            else _OTHER
        )
    return k


def _is_module_like(obj: Any) -> bool:
    return _kind(type(obj)) == _MODULE and callable(obj)


# lazytorch._compile.CompiledFunction, set when that module is loaded (it imports this one)
compiled_type: type | None = None


def _as_module(v: Any) -> Any:
    """The module whose tensors a closure or global value holds: itself, or the module a
    compiled module wraps (its replays read the parameters too); else None."""
    tp = type(v)
    if tp is compiled_type:
        return v.module
    return v if _kind(tp) == _MODULE else None


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"})


def free_value(v: Any, tensors: list[Tensor], modules: list[Any], depth: int = 0) -> Any:
    """A closure cell's or a global's part of the signature: a tensor is appended to
    `tensors`, a module to `modules`; numbers count by value; an optimizer, a helper
    function's closure and plain state held one object deep are walked (module docstring
    of lazytorch._compile for what a signature holds)."""
    if isinstance(v, Tensor):
        tensors.append(v)
        return _TENSOR
    tp = type(v)
    if tp is compiled_type and v.module is None:  # a compiled helper: its function's
        v = v._fn
        tp = type(v)
    if tp is types.FunctionType:
        # A helper the function calls (a loss function, an inner step): what its closure
        # holds is read too (two levels deep; its globals are the caller's or fixed).
        cells = v.__closure__
        if not cells or depth >= 2:
            return None
        out = []
        for cell in cells:
            try:
                c = cell.cell_contents
            except ValueError:  # an empty cell
                out.append(None)
                continue
            out.append(free_value(c, tensors, modules, depth + 1))
        return (id(v.__code__), tuple(out))
    if tp is float:  # a number the function reads: guarded by value (a new one retraces)
        return (float, v.hex())
    if tp is int or tp is bool or tp is str:
        return (tp, v)
    m = _as_module(v)
    if m is not None:
        modules.append(m)
        return None
    if _is_optimizer(v):
        return _optimizer_key(v, tensors)
    return _plain_state(v)


def _code_names(code: types.CodeType) -> list[str]:
    """The global names `code` (and the functions defined in it) read or write.

    Read from the bytecode, not ``co_names``, which also lists attribute names: with
    ``opt.step()`` in the body, a module-level loop variable ``step`` would otherwise look
    like a global the function reads (and, being a number, a new signature every call).
    """
    names = [i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _code_names(c)
    return names


def _tree(obj: Any, tensors: list[Tensor], modules: list[Any]) -> Any:
    """An argument's part of the signature; its tensors are appended to `tensors`."""
    tp = type(obj)
    if tp is Tensor or isinstance(obj, Tensor):
        tensors.append(obj)
        return _TENSOR
    if tp is tuple or tp is list:
        return (tp, tuple([_tree(o, tensors, modules) for o in obj]))
    if tp is float:
        return (float, obj.hex())  # tells -0.0 from 0.0; NaN equals itself
    if tp is int or tp is bool or tp is str or obj is None:
        return (tp, obj)
    if tp is dict:
        return (dict, tuple(obj), tuple([_tree(v, tensors, modules) for v in obj.values()]))
    if isinstance(obj, tuple):  # namedtuple, Size
        return (tp, tuple([_tree(o, tensors, modules) for o in obj]))
    if isinstance(obj, (SymInt, SymFloat, SymBool)):
        raise _Uncacheable("a symbolic size argument (dynamic shapes are not cached yet)")
    if _kind(tp) == _MODULE:
        modules.append(obj)
        return (tp, id(obj))
    try:
        hash(obj)
    except TypeError:
        raise _Uncacheable(f"an argument of unhashable type {tp.__name__}") from None
    return (tp, obj)


def _module_tensors(m: Any, tensors: list[Tensor]) -> Any:
    """Append m's parameters, then its buffers; the module's part of the signature (its
    identity and each submodule's training flag, which forward may branch on)."""
    mods = getattr(m, "modules", None)
    if callable(mods) and hasattr(m, "_parameters") and hasattr(m, "_buffers"):
        # An nn.Module: one walk reads what parameters(), buffers() and the flags would
        # (three walks cost three times as much on every call).
        flags = []
        seen: set[int] = set()
        buffers: list[Tensor] = []
        for sm in mods():
            flags.append(sm.training)
            for v in sm._parameters.values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    tensors.append(v)
            for v in sm._buffers.values():
                if v is not None:
                    buffers.append(v)
        if buffers:
            seen.clear()
            for v in buffers:
                if id(v) not in seen:
                    seen.add(id(v))
                    tensors.append(v)
        return (id(m), tuple(flags))
    tensors.extend(m.parameters())
    tensors.extend(m.buffers())
    if callable(mods):
        return (id(m), tuple([getattr(s, "training", None) for s in mods()]))
    return (id(m), getattr(m, "training", None))


# -- optimizers: their state tensors are free tensors, their hyperparameters guarded ----------
_optimizer_types: dict[type, bool] = {}


def _is_optimizer(v: Any) -> bool:
    """Whether `v` looks like a torch optimizer (decided once per type: a missing attribute
    of a module object costs a suggestion search)."""
    tp = type(v)
    k = _optimizer_types.get(tp)
    if k is None:
        k = _optimizer_types[tp] = (
            not issubclass(tp, (type, types.ModuleType))
            and callable(getattr(tp, "step", None))
            and callable(getattr(tp, "zero_grad", None))
            and callable(getattr(tp, "state_dict", None))
        )
    return (
        k
        and isinstance(getattr(v, "param_groups", None), list)
        and isinstance(getattr(v, "state", None), dict)
    )


def _optimizer_key(opt: Any, tensors: list[Tensor]) -> Any:
    """Append an optimizer's parameters and state tensors; its part of the signature.

    Hyperparameters and non-tensor state enter by value (a new ``momentum`` is a new
    signature), except what a replay reads itself: the state the class advances
    (``_host_state``, e.g. Adam's ``step``) and the float hyperparameters its provider reads
    anew (``_host_hyper``, e.g. Adam's ``lr``), whose scalars reach the program through the
    provider (lazytorch._compile.step).
    """
    groups = []
    params: list[Tensor] = []
    provided = getattr(type(opt), "_host_hyper", ())
    for g in opt.param_groups:
        ps = g["params"]
        hyper = tuple(
            (k, _tree(v, tensors, []) if k not in provided or type(v) is not float else float)
            for k, v in g.items()
            if k != "params"
        )
        groups.append((hyper, len(ps)))
        params.extend(ps)
    tensors.extend(params)
    host = getattr(type(opt), "_host_state", ())
    state = opt.state
    per_param = []
    for p in params:
        st = state.get(p)
        if not st:
            per_param.append(None)
            continue
        items = []
        for k, v in st.items():
            if isinstance(v, Tensor):
                tensors.append(v)
                items.append((k, _TENSOR))
            elif k in host:
                items.append((k,))
            else:
                items.append((k, _tree(v, tensors, [])))
        per_param.append(tuple(items))
    return ("optimizer", id(opt), tuple(groups), tuple(per_param))


# -- plain Python state the function may branch on -----------------------------------------------
_PRIMITIVES = (int, float, bool, str, type(None))
_NOT_STATE = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)


def _plain_state(v: Any) -> Any:
    """The numbers and strings an object, dict or tuple in the function's closure or globals
    holds (one level deep), by value: a function that branches on ``cfg.flag`` or
    ``counter['step'] % 4`` must not replay the branch it took when traced. (Lists are
    left out: a list in the closure is most often a log the function appends to.) None
    when `v` holds none (or is too large to compare on every call)."""
    tp = type(v)
    if tp is dict:
        items = v.items()
    elif tp is tuple:
        items = enumerate(v)
    elif tp is list or isinstance(v, _NOT_STATE):
        return None
    else:
        d = getattr(v, "__dict__", None)
        if type(d) is not dict:
            return None
        items = d.items()
    out = []
    for k, x in items:
        if len(out) > 256:
            return None
        if type(x) in _PRIMITIVES:
            out.append((k, type(x), x))
    return (id(v), tuple(out)) if out else None
