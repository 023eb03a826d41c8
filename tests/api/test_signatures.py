"""Every public lazytorch function's and method's parameters equal torch's.

A script written for torch calls with torch's keyword names, relies on torch's defaults and
passes arguments in torch's order; one parametrized case per public API (``torch.sum``,
``Tensor.sum``, ``F.relu``, ``nn.Linear.__init__``, ...) compares its signature with torch's
counterpart of the same name. The deliberate differences are listed, each with its reason,
in tests/api/signature_differences.py: a difference not listed there fails, and so does a listed
one that no longer differs.

Where torch's signature comes from:

* a Python-level torch function or class (``torch.nn.functional.*``, ``torch.functional``,
  ``torch._tensor``, modules, optimizers, schedulers): `inspect.signature` (of the function
  a ``boolean_dispatch`` such as ``F.max_pool2d`` wraps);
* a builtin (``torch.sum``, ``Tensor.sum``, ``F.gelu``): its overloads in torch's generated
  type stubs (``torch/_C/_VariableFunctions.pyi``, class ``TensorBase`` in
  ``torch/_C/__init__.pyi``, ``torch/_C/_nn.pyi``), written from the same signatures
  torch's argument parser matches a call against;
* otherwise the lambda `torch.overrides.get_testing_overrides` gives. Those lambdas do not
  mark keyword-only parameters, so kinds are not compared for them; a lambda of only
  ``*args, **kwargs`` says nothing, and the API counts as unknown.

The rules, for the parameters after ``self`` of a method (``input`` included for a
function, since ``torch.add(input=x, other=y)`` is legal):

* no parameter torch lacks, and none of torch's missing (any overload's names count);
* positional order: every overload's positional parameters at the same places (where the
  overloads disagree among themselves, as ``max(input, dim)`` and ``max(input, other)``, at
  least one of them); a ``*size`` parameter stands for torch's ``size`` sequence overload;
* kinds: a parameter keyword-only in every overload is keyword-only, one positional in every
  overload is positional;
* defaults, compared by value (a dtype, layout, memory format, function or module by its
  name): equal to torch's default; a parameter torch requires in every overload is
  required; one that only some overloads take may default to anything (it merges the
  overloads).

A function's deprecated overloads in the stubs (``add(self, alpha, other)``) name their
tensor ``self`` and are left out. An API whose torch signature is unknown is skipped, and
`test_most_of_the_api_is_compared` keeps those few. The tests at the end call the parameters
this file made lazytorch take (torch's keyword names, ``out=`` with torch's dtype rules per
op) against torch with `helpers.check`.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from signature_differences import DIFFERENCES, EXTRA_IN_METHODS

import lazytorch as lt

POS, VAR, KW, VARKW = "positional", "*args", "keyword-only", "**kwargs"
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: POS,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: POS,
    inspect.Parameter.VAR_POSITIONAL: VAR,
    inspect.Parameter.KEYWORD_ONLY: KW,
    inspect.Parameter.VAR_KEYWORD: VARKW,
}
REQUIRED = "<required>"
ANY = "<any>"  # a stub's `...` default: some value the stub does not spell


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Any = REQUIRED


Overload = tuple[Param, ...]


@dataclass(frozen=True)
class TorchSignature:
    overloads: tuple[Overload, ...]
    source: str  # "inspect", "stub" or "overrides"


# -- defaults, compared by value ------------------------------------------------------------------
def _normalize(value: Any) -> Any:
    """A default as a comparable value: numbers by value (bool apart), sequences as tuples,
    dtypes, layouts and memory formats by their name without the module prefix."""
    if value is inspect.Parameter.empty:
        return REQUIRED
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (tuple, list)):
        return tuple(_normalize(v) for v in value)
    if inspect.ismodule(value) or (callable(value) and hasattr(value, "__name__")):
        # nn.Transformer's activation=F.relu, torch.save's pickle_module=pickle
        return ("name", value.__name__)
    text = str(value)
    for prefix in ("torch.", "lazytorch."):
        text = text.removeprefix(prefix)
    return ("name", text)


def _stub_default(node: ast.expr | None) -> Any:
    if node is None:
        return REQUIRED
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return ANY
    try:
        return _normalize(ast.literal_eval(node))
    except ValueError:
        return ("name", ast.unparse(node).removeprefix("torch."))


def _show(default: Any) -> str:
    if isinstance(default, tuple) and len(default) == 2 and default[0] in ("bool", "name"):
        return str(default[1])
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return repr(default)


# -- signatures ----------------------------------------------------------------------------------
def _from_inspect(fn: Any, drop_first: bool) -> Overload:
    params = [
        Param(p.name, _KINDS[p.kind], _normalize(p.default))
        for p in inspect.signature(fn).parameters.values()
    ]
    return tuple(params[1:] if drop_first else params)


def _from_ast(fn: ast.FunctionDef, drop_first: bool) -> Overload:
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [Param(p.arg, POS, _stub_default(d)) for p, d in zip(positional, defaults)]
    if a.vararg:
        params.append(Param(a.vararg.arg, VAR))
    params += [Param(p.arg, KW, _stub_default(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append(Param(a.kwarg.arg, VARKW))
    return tuple(params[1:] if drop_first else params)


@functools.cache
def _stub(filename: str, cls: str | None = None) -> dict[str, list[ast.FunctionDef]]:
    """name -> overloads, from one of torch's generated stubs (a class's body if `cls`)."""
    path = os.path.join(os.path.dirname(torch.__file__), "_C", filename)
    body = ast.parse(open(path).read()).body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    table: dict[str, list[ast.FunctionDef]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            table.setdefault(node.name, []).append(node)
    return table


@functools.cache
def _overrides() -> dict[Any, Callable[..., Any]]:
    return torch.overrides.get_testing_overrides()


def _says_nothing(overload: Overload) -> bool:
    return bool(overload) and all(p.kind in (VAR, VARKW) for p in overload)


def torch_signature(obj: Any, namespace: str, is_method: bool) -> TorchSignature | None:
    """torch's overloads of `obj`, or None where nothing says what they are."""
    from torch._jit_internal import boolean_dispatched

    if obj in boolean_dispatched:  # F.max_pool2d & co: a (*args, **kwargs) dispatcher
        obj = boolean_dispatched[obj]["if_false"]
    if isinstance(obj, (types.FunctionType, type)) or inspect.ismethod(obj):
        overload = _from_inspect(obj, drop_first=is_method)
        if not _says_nothing(overload):
            return TorchSignature((overload,), "inspect")
    name = getattr(obj, "__name__", "")
    if namespace == "Tensor":
        stub = _stub("__init__.pyi", "TensorBase")
    elif getattr(obj, "__module__", None) == "torch._C._nn":
        stub = _stub("_nn.pyi")
    elif namespace in ("torch", "F"):
        stub = _stub("_VariableFunctions.pyi")
    else:
        stub = {}
    if name in stub:
        overloads = tuple(_from_ast(f, drop_first=is_method) for f in stub[name])
        current = tuple(o for o in overloads if "self" not in _names(o))
        # a function's deprecated overloads (add(self, alpha, other)) name their tensor self
        return TorchSignature(current or overloads, "stub")
    lam = _overrides().get(obj)
    if lam is not None:
        overload = _from_inspect(lam, drop_first=is_method)
        if not _says_nothing(overload):
            return TorchSignature((overload,), "overrides")
    return None


# -- the comparison ------------------------------------------------------------------------------
def _positional(overload: Overload) -> tuple[list[str], str | None]:
    names = [p.name for p in overload if p.kind == POS]
    var = next((p.name for p in overload if p.kind == VAR), None)
    return names, var


def _fits_positionally(ours: Overload, theirs: Overload, source: str) -> bool:
    """Whether our positional parameters take torch's overload's at the same places."""
    our_pos, our_var = _positional(ours)
    their_pos, their_var = _positional(theirs)
    if source == "overrides":  # no keyword-only marks: only the order of the ones we share
        return [n for n in their_pos if n in our_pos] == our_pos
    for k, name in enumerate(their_pos):
        if k < len(our_pos):
            if our_pos[k] != name:
                return False
        elif k == len(our_pos) and our_var == name:  # *size takes the size sequence
            continue
        elif name in _names(ours):  # one we lack altogether is reported as missing
            return False
    if their_var is not None:
        return len(our_pos) == len(their_pos) and our_var is not None
    return True


def _overloads_disagree(overloads: tuple[Overload, ...]) -> bool:
    places: dict[int, str] = {}
    for overload in overloads:
        for k, name in enumerate(_positional(overload)[0]):
            if places.setdefault(k, name) != name:
                return True
    return False


def differences(ours: Overload, theirs: TorchSignature, extra_ok: set[str]) -> list[str]:
    """What a torch-written call would find different, one line each (empty: equal).
    `extra_ok` names parameters we may take that torch does not (a method's ``out``)."""
    found: list[str] = []
    overloads = theirs.overloads
    fits = [_fits_positionally(ours, o, theirs.source) for o in overloads]
    disagree = _overloads_disagree(overloads)
    if not (any(fits) if disagree else all(fits)):
        ours_text = ", ".join(_positional(ours)[0])
        bad = [o for o, ok in zip(overloads, fits) if not ok]
        theirs_text = " | ".join(", ".join(_positional(o)[0]) for o in bad)
        found.append(f"positional order ({ours_text}) does not take torch's ({theirs_text})")
    # where the overloads disagree, we owe only the names of those we take positionally
    owed = [o for o, ok in zip(overloads, fits) if ok or not disagree]
    torch_names = {p.name for o in overloads for p in o if p.kind != VARKW}
    owed_names = {p.name for o in owed for p in o if p.kind != VARKW}
    our_names = {p.name for p in ours if p.kind != VARKW}
    torch_has_varkw = any(p.kind == VARKW for o in overloads for p in o)
    for p in ours:
        if p.kind == VARKW and not torch_has_varkw:
            found.append(f"takes **{p.name}, torch does not")
        elif p.kind != VARKW and p.name not in torch_names and p.name not in extra_ok:
            found.append(f"extra parameter {p.name!r}")
    found += [f"missing parameter {n!r}" for n in sorted(owed_names - our_names)]

    by_name = {p.name: p for p in ours}
    for name in sorted(torch_names & our_names):
        mine = by_name[name]
        present = [next(p for p in o if p.name == name) for o in overloads if name in _names(o)]
        # kinds as the overloads we take have them (scatter's value is positional only in
        # the overload whose place 3 we give to src)
        kinds = {p.kind for o in owed for p in o if p.name == name}
        if theirs.source != "overrides" and mine.kind in (POS, KW) and kinds <= {POS, KW}:
            if kinds == {KW} and mine.kind != KW:
                found.append(f"{name!r} should be keyword-only")
            elif kinds == {POS} and mine.kind != POS:
                found.append(f"{name!r} should be positional")
        if mine.kind not in (POS, KW):
            continue
        torch_defaults = {p.default for p in present if p.default != REQUIRED}
        places = {_place(o, name) for o in overloads if name in _names(o)}
        merged = len(present) < len(overloads) or len(places) > 1
        if not torch_defaults:
            if mine.default != REQUIRED and not merged:
                found.append(f"{name!r} has default {_show(mine.default)}, torch requires it")
        elif ANY not in torch_defaults and mine.default not in torch_defaults:
            if not (mine.default in (None, REQUIRED) and merged):
                want = " or ".join(sorted(_show(d) for d in torch_defaults))
                have = "none" if mine.default == REQUIRED else _show(mine.default)
                found.append(f"{name!r} default {have}, torch's {want}")
    return found


def _place(overload: Overload, name: str) -> int | str:
    """Where `name` sits in `overload`: its positional index, or the kind it has."""
    pos = _positional(overload)[0]
    if name in pos:
        return pos.index(name)
    return next(p.kind for p in overload if p.name == name)


def _names(overload: Overload) -> set[str]:
    return {p.name for p in overload}


# -- the public API, walked ---------------------------------------------------------------------
@dataclass(frozen=True)
class Api:
    id: str  # "torch.sum", "Tensor.sum", "F.relu", "nn.Linear.__init__", ...
    ours: Any
    theirs: Any
    namespace: str
    is_method: bool


def _functions(ns: str, module: Any, torch_module: Any, names: list[str]) -> Iterator[Api]:
    for name in names:
        ours = getattr(module, name)
        theirs = getattr(torch_module, name, None)
        if callable(ours) and not isinstance(ours, type) and theirs is not None:
            yield Api(f"{ns}.{name}", ours, theirs, ns, is_method=False)


def _tensor_methods() -> Iterator[Api]:
    for name in sorted(dir(lt.Tensor)):
        if name.startswith("_"):
            continue
        ours = inspect.getattr_static(lt.Tensor, name)
        theirs = getattr(torch.Tensor, name, None)
        if isinstance(ours, (property, staticmethod, classmethod)) or not callable(ours):
            continue
        if theirs is not None and callable(theirs):
            yield Api(f"Tensor.{name}", ours, theirs, "Tensor", is_method=True)


def _classes(ns: str, module: Any, torch_module: Any, names: list[str]) -> Iterator[Api]:
    for name in names:
        ours = getattr(module, name)
        theirs = getattr(torch_module, name, None)
        if not (isinstance(ours, type) and isinstance(theirs, type)):
            continue
        for method in ("__init__", "forward"):
            if method in vars(ours) and hasattr(theirs, method):
                yield Api(
                    f"{ns}.{name}.{method}",
                    getattr(ours, method),
                    getattr(theirs, method),
                    ns,
                    is_method=True,
                )


def public_apis() -> list[Api]:
    import torch.nn.functional as TF

    import lazytorch.nn.functional as F
    from lazytorch import distributions, fft, linalg, nn, optim
    from lazytorch.nn import init
    from lazytorch.optim import lr_scheduler

    apis = [
        *_functions("torch", lt, torch, list(lt.__all__)),
        *_tensor_methods(),
        *_functions("F", F, TF, list(F.__all__)),
        *_functions("linalg", linalg, torch.linalg, list(linalg.__all__)),
        *_functions("fft", fft, torch.fft, list(fft.__all__)),
        *_functions("init", init, torch.nn.init, list(init.__all__)),
        *_classes("nn", nn, torch.nn, list(nn.__all__)),
        *_classes("optim", optim, torch.optim, list(optim.__all__)),
        *_classes("distributions", distributions, torch.distributions, list(distributions.__all__)),
        *_classes(
            "lr_scheduler", lr_scheduler, torch.optim.lr_scheduler, list(lr_scheduler.__all__)
        ),
    ]
    return sorted({a.id: a for a in apis}.values(), key=lambda a: a.id)


def compare(api: Api) -> list[str] | None:
    """The differences of one API from torch's; None where torch's signature is unknown."""
    theirs = torch_signature(api.theirs, api.namespace, api.is_method)
    if theirs is None:
        return None
    extra_ok = set(EXTRA_IN_METHODS) if api.namespace == "Tensor" else set()
    return differences(_from_inspect(api.ours, drop_first=api.is_method), theirs, extra_ok)


APIS = public_apis()


@pytest.mark.parametrize("api", APIS, ids=[a.id for a in APIS])
def test_signature_matches_torch(api: Api) -> None:
    found = compare(api)
    if found is None:
        pytest.skip(f"torch gives no signature of {api.id} but *args, **kwargs")
    listed = DIFFERENCES.get(api.id, {})
    new = [d for d in found if d not in listed]
    gone = [d for d in listed if d not in found]
    assert not new, (
        f"{api.id} differs from torch (fix it, or list it with its reason in "
        "tests/api/signature_differences.py):\n  " + "\n  ".join(new)
    )
    assert not gone, (
        f"{api.id} no longer differs from torch here: remove from "
        "tests/api/signature_differences.py:\n  " + "\n  ".join(gone)
    )


def test_difference_table_names_only_compared_apis() -> None:
    stale = sorted(set(DIFFERENCES) - {a.id for a in APIS})
    assert not stale, (
        f"tests/api/signature_differences.py lists APIs that are not compared: {stale}"
    )


def test_comparison_finds_what_it_should() -> None:
    """The rules themselves, on signatures written out (a broken rule would pass everything)."""

    def sig(text: str) -> Overload:
        namespace: dict[str, Any] = {}
        exec(f"def f({text}): pass", {"torch": torch}, namespace)
        return _from_inspect(namespace["f"], drop_first=False)

    def diff(ours: str, *theirs: str) -> list[str]:
        return differences(sig(ours), TorchSignature(tuple(map(sig, theirs)), "stub"), set())

    assert diff("input, dim=None, keepdim=False", "input", "input, dim, keepdim=False") == []
    assert diff("x, dims", "input, dims") == [
        "positional order (x, dims) does not take torch's (input, dims)",
        "extra parameter 'x'",
        "missing parameter 'input'",
    ]
    assert diff("input, dim=None, keepdim=True", "input, dim=None, keepdim=False") == [
        "'keepdim' default True, torch's False"
    ]
    assert diff("input, dim", "input, *, dim") == ["'dim' should be keyword-only"]
    assert diff("input, dims=None", "input, dims") == ["'dims' has default None, torch requires it"]
    assert diff("*size, dtype=None", "size, *, dtype=None", "*size, dtype=None") == []
    assert diff("input, dim=None", "input", "input, dim", "input, other") == []  # max's
    assert diff("input, **kw", "input") == ["takes **kw, torch does not"]
    assert diff("input, dtype=torch.float32", "input, dtype=torch.float32") == []
    assert diff("input, *, out=None", "input") == ["extra parameter 'out'"]


def test_most_of_the_api_is_compared() -> None:
    """A torch upgrade that hid the signatures (the stubs moved) would compare nothing."""
    unknown = [a.id for a in APIS if compare(a) is None]
    assert len(APIS) > 600 and len(unknown) < 0.05 * len(APIS), unknown


# Calls written with torch's keyword names, each one a parameter this file made lazytorch take.
KEYWORD_CALLS = {
    "nan_to_num(nan=None)": lambda t, x: t.nan_to_num(x / 0.0, nan=None),
    "roll(dims=())": lambda t, x: t.roll(x, 1, dims=()),
    "true_divide": lambda t, x: t.true_divide(x, 2.0),
    "swapaxes(axis0, axis1)": lambda t, x: t.swapaxes(x, axis0=0, axis1=1),
    "Tensor.swapaxes(axis0, axis1)": lambda t, x: x.swapaxes(axis0=1, axis1=0),
    "Tensor.split(split_size)": lambda t, x: x.split(split_size=1, dim=1),
    "split_with_sizes(input)": lambda t, x: t.split_with_sizes(input=x, split_sizes=[1, 1]),
    "linalg.vector_norm(input)": lambda t, x: t.linalg.vector_norm(input=x, ord=3),
    "linalg.matrix_norm(input)": lambda t, x: t.linalg.matrix_norm(input=x),
    "linalg.norm(input)": lambda t, x: t.linalg.norm(input=x, dim=1),
    "dot(tensor)": lambda t, x: t.dot(x[0], tensor=x[1]),
    "Tensor.copy_(other)": lambda t, x: x.clone().copy_(other=x * 2),
    "sort(stable=)": lambda t, x: t.sort(x, dim=1, descending=True, stable=True),
    "view(*size)": lambda t, x: x.view(4),
    "expand(*size)": lambda t, x: x[:1].expand(3, 2),
    "zeros(pin_memory)": lambda t, x: t.zeros(2, 3, pin_memory=False) + x.sum(),
    "full_like(pin_memory)": lambda t, x: t.full_like(x, 2.0, pin_memory=False),
    "new_ones(pin_memory)": lambda t, x: x.new_ones(2, pin_memory=False),
    "randperm(requires_grad) on int64": lambda t, x: t.randperm(3, requires_grad=True),
}


@pytest.mark.parametrize("call", KEYWORD_CALLS.values(), ids=list(KEYWORD_CALLS))
def test_torch_keyword_calls_work(call: Callable[..., Any]) -> None:
    from helpers import check, randn

    check(call, randn(2, 2, dtype="float64"))


# out= added to elementwise ops that lacked it: torch's rules (the result cast to out's dtype
# where it can be, out resized from empty) through the ops' shared `_finish`.
OUT_CALLS = {
    "hypot": lambda t, x, o: t.hypot(x, x.flip(0), out=o),
    "fmax": lambda t, x, o: t.fmax(x, x.flip(0), out=o),
    "fmin": lambda t, x, o: t.fmin(x, x.flip(0), out=o),
    "frac": lambda t, x, o: t.frac(x * 3, out=o),
    "lerp": lambda t, x, o: t.lerp(x, x.flip(0), 0.25, out=o),
    "logaddexp": lambda t, x, o: t.logaddexp(x, x.flip(0), out=o),
    "xlogy": lambda t, x, o: t.xlogy(x, x.abs(), out=o),
    "square": lambda t, x, o: t.square(x, out=o),
    "clamp_min": lambda t, x, o: t.clamp_min(x, 0.1, out=o),
    "clamp_max": lambda t, x, o: t.clamp_max(x, 0.1, out=o),
    "addcmul": lambda t, x, o: t.addcmul(x, x, x.flip(0), value=0.5, out=o),
    "addcdiv": lambda t, x, o: t.addcdiv(x, x, x.flip(0) + 5, value=0.5, out=o),
    "isneginf": lambda t, x, o: t.isneginf(x / 0.0, out=o),
    "isposinf": lambda t, x, o: t.isposinf(x / 0.0, out=o),
    "nan_to_num": lambda t, x, o: t.nan_to_num(x / 0.0, posinf=1.0, out=o),
}


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_keyword(name: str, out_dtype: str) -> None:
    """Into a float64 out of the same shape, a float32 one, an int64 one (torch refuses a
    float result there; a bool one converts), and an empty one that is resized."""
    from helpers import check, randn

    call = OUT_CALLS[name]
    check(
        lambda t, x: call(t, x, t.zeros(2, 3, dtype=getattr(t, out_dtype))),
        randn(2, 3, dtype="float64"),
    )
    if out_dtype == "float64":
        check(lambda t, x: call(t, x, t.empty(0, dtype=t.float64)), randn(2, 3, dtype="float64"))


# out= on the reductions: sum, prod and cumsum compute in out's dtype; mean, std, var and
# logsumexp cast into any floating out; the rest want out's dtype to be the result's.
REDUCTION_OUT_CALLS = {
    "sum": lambda t, x, o: t.sum(x, 1, out=o),
    "prod": lambda t, x, o: t.prod(x, 1, out=o),
    "cumsum": lambda t, x, o: t.cumsum(x, 1, out=o),
    "mean": lambda t, x, o: t.mean(x, 1, keepdim=True, out=o),
    "std": lambda t, x, o: t.std(x, 1, out=o),
    "var": lambda t, x, o: t.var(x, 0, out=o),
    "logsumexp": lambda t, x, o: t.logsumexp(x, 1, out=o),
    "amax": lambda t, x, o: t.amax(x, 1, out=o),
    "amin": lambda t, x, o: t.amin(x, out=o),
    "argmax": lambda t, x, o: t.argmax(x, 1, out=o),
    "argmin": lambda t, x, o: t.argmin(x, out=o),
    "all": lambda t, x, o: t.all(x, 1, out=o),
    "any": lambda t, x, o: t.any(x, out=o),
    "nansum": lambda t, x, o: t.nansum(x, 1, out=o),
    "nanmean": lambda t, x, o: t.nanmean(x, 0, out=o),
    "norm": lambda t, x, o: t.norm(x, 3, 1, False, o),
}


@pytest.mark.parametrize(
    "x_dtype, out_dtype",
    [("float64", d) for d in ("float64", "float32", "int64", "bool")]
    + [("int64", d) for d in ("float32", "int64")],
)
@pytest.mark.parametrize("name", list(REDUCTION_OUT_CALLS))
def test_reduction_out_keyword(name: str, x_dtype: str, out_dtype: str) -> None:
    """Into an out of each dtype (torch refuses some: so must we), resized from empty."""
    from helpers import arr, check

    call = REDUCTION_OUT_CALLS[name]
    x = arr(3, 4, dtype=x_dtype, low=-3, high=4)
    check(lambda t, x: call(t, x, t.empty(0, dtype=getattr(t, out_dtype))), x)


# out= on the products, norms, triangles and stacks: outer, ger, hstack and vstack cast as
# the elementwise ops and cat do; the others want out's dtype to be the result's.
LINALG_OUT_CALLS = {
    "addmm": lambda t, x, o: t.addmm(x, x, x.T, beta=0.5, out=o),
    "baddbmm": lambda t, x, o: t.baddbmm(x[None], x[None], x[None], alpha=2, out=o),
    "dot": lambda t, x, o: t.dot(x[0], x[1], out=o),
    "mv": lambda t, x, o: t.mv(x, x[0], out=o),
    "outer": lambda t, x, o: t.outer(x[0], x[1], out=o),
    "ger": lambda t, x, o: t.ger(x[0], x[1], out=o),
    "tensordot": lambda t, x, o: t.tensordot(x, x, 1, out=o),
    "linalg.vector_norm": lambda t, x, o: t.linalg.vector_norm(x, 3, 1, out=o),
    "linalg.matrix_norm": lambda t, x, o: t.linalg.matrix_norm(x, out=o),
    "linalg.matrix_norm(2)": lambda t, x, o: t.linalg.matrix_norm(x, 1, out=o),
    "linalg.norm": lambda t, x, o: t.linalg.norm(x, out=o),
    "tril": lambda t, x, o: t.tril(x, -1, out=o),
    "triu": lambda t, x, o: t.triu(x, out=o),
    "hstack": lambda t, x, o: t.hstack([x, x], out=o),
    "vstack": lambda t, x, o: t.vstack([x[0], x], out=o),
}


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", list(LINALG_OUT_CALLS))
def test_linalg_out_keyword(name: str, out_dtype: str) -> None:
    from helpers import check, randn

    call = LINALG_OUT_CALLS[name]
    check(
        lambda t, x: call(t, x, t.empty(0, dtype=getattr(t, out_dtype))),
        randn(3, 3, dtype="float64"),
    )


# out=(values, indices) on sort, topk, kthvalue, max, min and aminmax; out= on argsort, msort,
# and on max/min's other forms (whole tensor, elementwise).
PAIR_OUT_CALLS = {
    "sort": lambda t, x, o: t.sort(x, 1, True, out=o),
    "topk": lambda t, x, o: t.topk(x, 2, out=o),
    "kthvalue": lambda t, x, o: t.kthvalue(x, 2, 0, True, out=o),
    "max(dim)": lambda t, x, o: t.max(x, 1, out=o),
    "min(dim)": lambda t, x, o: t.min(x, 0, keepdim=True, out=o),
    "aminmax": lambda t, x, o: t.aminmax(x, dim=1, out=o),
}
SINGLE_OUT_CALLS = {
    "argsort": lambda t, x, o: t.argsort(x, dim=1, stable=True, out=o),  # torch: stable only
    "msort": lambda t, x, o: t.msort(x, out=o),
    "max": lambda t, x, o: t.max(x, out=o),
    "min(other)": lambda t, x, o: t.min(x, x.flip(0), out=o),
}


@pytest.mark.parametrize(
    "first, second", [("float64", "int64"), ("float32", "int64"), ("float64", "int32")]
)
@pytest.mark.parametrize("name", list(PAIR_OUT_CALLS))
def test_pair_out_keyword(name: str, first: str, second: str) -> None:
    from helpers import check, randn

    call = PAIR_OUT_CALLS[name]
    if name == "aminmax":  # (min, max): both have the input's dtype
        second = first if second == "int64" else "float32"
    check(
        lambda t, x: call(
            t, x, (t.empty(0, dtype=getattr(t, first)), t.empty(0, dtype=getattr(t, second)))
        ),
        randn(3, 4, dtype="float64"),
    )


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", list(SINGLE_OUT_CALLS))
def test_sorting_out_keyword(name: str, out_dtype: str) -> None:
    from helpers import check, randn

    call = SINGLE_OUT_CALLS[name]
    check(
        lambda t, x: call(t, x, t.empty(0, dtype=getattr(t, out_dtype))),
        randn(3, 4, dtype="float64"),
    )


# out= on the indexing ops: out's dtype must be the result's.
INDEX_OUT_CALLS = {
    "gather": lambda t, x, o: t.gather(x, 1, t.tensor([[0, 0], [1, 0], [2, 1]]), out=o),
    "index_select": lambda t, x, o: t.index_select(x, 0, t.tensor([2, 0]), out=o),
    "masked_select": lambda t, x, o: t.masked_select(x, x > 0, out=o),
    "take": lambda t, x, o: t.take(x, t.tensor([[0, 5], [11, 3]]), out=o),
    "take_along_dim": lambda t, x, o: t.take_along_dim(x, t.tensor([[1], [0], [3]]), 1, out=o),
    "scatter": lambda t, x, o: t.scatter(x, 0, t.tensor([[2, 0, 1, 0]]), x[:1] * 9, out=o),
    "scatter_add": lambda t, x, o: t.scatter_add(x, 1, t.tensor([[0, 0]] * 3), x[:, :2], out=o),
    "nonzero": lambda t, x, o: t.nonzero(x > 0, out=o),
}


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", list(INDEX_OUT_CALLS))
def test_indexing_out_keyword(name: str, out_dtype: str) -> None:
    from helpers import check, randn

    call = INDEX_OUT_CALLS[name]
    check(
        lambda t, x: call(t, x, t.empty(0, dtype=getattr(t, out_dtype))),
        randn(3, 4, dtype="float64"),
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss"])
def test_weighted_l1_and_mse_loss(loss: str, reduction: str) -> None:
    """torch's weight= (new in 2.x): values and gradients, and its ValueError on a shape."""
    from helpers import check, check_grad, positive, randn

    def fn(t: Any, x: Any, y: Any, w: Any) -> Any:
        return getattr(t.nn.functional, loss)(x, y, reduction=reduction, weight=w)

    x, y, w = (
        randn(3, 4, dtype="float64"),
        randn(3, 4, dtype="float64"),
        positive(3, 4, dtype="float64"),
    )
    check(fn, x, y, w)
    check_grad(fn, x, y, w)
    check(fn, x, y, positive(4, dtype="float64"))  # weight of another shape


# torch's argument parser takes NumPy's names for dim and keepdim on every native op
# (``x.sum(1, keepdims=True)`` in karpathy's nn-zero-to-hero; ``torch.cat(xs, axis=0)``).
NUMPY_NAME_CALLS = {
    "sum": lambda t, x: x.sum(1, keepdims=True),
    "torch.mean": lambda t, x: t.mean(x, axis=0, keepdims=True),
    "amax": lambda t, x: x.amax(axis=1),
    "max": lambda t, x: x.max(axis=1, keepdims=True).values,
    "std": lambda t, x: t.std(x, axis=1, keepdims=True),
    "logsumexp": lambda t, x: x.logsumexp(axis=-1, keepdims=True),
    "softmax": lambda t, x: x.softmax(axis=1),
    "cat": lambda t, x: t.cat([x, x], axis=0),
    "cumsum_": lambda t, x: x.clone().cumsum_(axis=0),
    "both names": lambda t, x: x.sum(1, keepdim=True, keepdims=True),
    # torch.linalg's and torch.special's native functions too
    "linalg.vector_norm": lambda t, x: t.linalg.vector_norm(x, axis=1, keepdims=True),
    "linalg.norm": lambda t, x: t.linalg.norm(x, axis=1),
    "linalg.matrix_norm": lambda t, x: t.linalg.matrix_norm(x.reshape(1, 3, 4), axis=(1, 2)),
    "special.logsumexp": lambda t, x: t.special.logsumexp(x, axis=1, keepdims=True),
    "special.softmax": lambda t, x: t.special.softmax(x, axis=1),
}


@pytest.mark.parametrize("name", list(NUMPY_NAME_CALLS))
def test_numpy_parameter_names(name: str) -> None:
    from helpers import check, randn

    check(NUMPY_NAME_CALLS[name], randn(3, 4, dtype="float64"))
