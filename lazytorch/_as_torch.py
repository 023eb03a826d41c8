"""``import torch`` resolved to lazytorch, when the user asks for it.

`install_as_torch()` puts an import hook first on ``sys.meta_path`` that answers every
``torch`` and ``torch.<sub>`` import with lazytorch's module of the same path:
``import torch.nn.functional as F`` gives ``lazytorch.nn.functional``. ``lazytorch run
--as-torch script.py`` installs it before the script starts, so a PyTorch script runs
unchanged.

The contract:

* **Same module objects.** ``torch.nn`` *is* ``lazytorch.nn``: ``isinstance(x,
  torch.Tensor)``, pickling and ``lazytorch.metrics`` see one library, never two copies.
* **A module we lack imports, and fails at its use.** ``import torch.fx`` (or any
  ``torch.<sub>`` lazytorch has no module for) succeeds and gives a placeholder whose every
  attribute raises `MissingTorchAPI` naming the torch API and the nearest lazytorch names —
  a script that only imports a module (for a type annotation, a guarded feature) still runs.
  A module that exists but lacks an attribute raises the same error at the attribute.
* **Refused when real torch is already imported** — two libraries under one name would mix
  tensors of both; the error says so. `uninstall_as_torch()` removes the hook and the
  ``torch`` entries it made.

For example (in a fresh process: real torch must not be imported yet)::

    import lazytorch
    lazytorch.install_as_torch()
    import torch.nn.functional as F      # F is lazytorch.nn.functional
    import torch.fx                      # importing a missing module works...
    torch.fx.symbolic_trace              # ...using it raises MissingTorchAPI:
    # torch.fx.symbolic_trace is not available in lazytorch (there is no
    # lazytorch.fx module)
"""

from __future__ import annotations

import difflib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

from lazytorch._version import __version__, as_torch_version

__all__ = ["MissingTorchAPI", "install_as_torch", "is_installed", "uninstall_as_torch"]


class MissingTorchAPI(AttributeError):
    """A torch API lazytorch does not provide, raised where the script uses it.

    An ``AttributeError``, so ``hasattr(torch, name)`` and ``getattr(torch, name, None)``
    probes behave as they do for an old torch without the feature.
    """


def missing_message(torch_name: str, lazy_module: Any | None, attr: str) -> str:
    """The message for ``torch_name`` missing: the torch API, and the nearest names.

    >>> import lazytorch
    >>> print(missing_message("torch.flipp", lazytorch, "flipp"))
    torch.flipp is not available in lazytorch; nearest: lazytorch.flip, lazytorch.flipud, lazytorch.fliplr
    """
    msg = f"{torch_name} is not available in lazytorch"
    if lazy_module is None:
        parent = torch_name.rsplit(".", 1)[0]
        return f"{msg} (there is no lazy{parent} module)"
    near = difflib.get_close_matches(attr, public_names(lazy_module), n=3, cutoff=0.6)
    where = lazy_module.__name__
    if near:
        return f"{msg}; nearest: " + ", ".join(f"{where}.{n}" for n in near)
    return msg


def public_names(module: Any) -> list[str]:
    """The names of `module` that are its public API, to suggest: those in its ``__all__``
    and, of the rest, lazytorch's own functions, classes and objects and plain constants —
    not the helpers it imports (``annotations`` from ``__future__``, ``typing.Any``, other
    modules) nor submodules its ``__all__`` leaves out (``nn.functional.loss``).

    >>> import lazytorch.nn.functional as F
    >>> "annotations" in public_names(F), "loss" in public_names(F), "l1_loss" in public_names(F)
    (False, False, True)
    """
    listed = set(getattr(module, "__all__", ()))
    names = []
    for n in dir(module):
        if n.startswith("_"):
            continue
        if n in listed:
            names.append(n)
            continue
        obj = getattr(module, n, None)
        if isinstance(obj, types.ModuleType):
            continue
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            owner = getattr(obj, "__module__", None) or ""
        else:
            owner = type(obj).__module__
        if owner == "builtins" or owner.startswith("lazytorch"):
            names.append(n)
    return names


class _Placeholder(types.ModuleType):
    """A torch submodule lazytorch lacks: importable, every attribute a clear error.

    ``from torch.fx import symbolic_trace`` imports too: the attribute is missing, so
    Python imports ``torch.fx.symbolic_trace`` as a submodule and gets a placeholder.
    Calling it or deriving a class from it is the same clear error, naming that API.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise MissingTorchAPI(missing_message(f"{self.__name__}.{name}", None, name))

    def _missing(self) -> MissingTorchAPI:
        leaf = self.__name__.rsplit(".", 1)[-1]
        return MissingTorchAPI(missing_message(self.__name__, None, leaf))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._missing()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        raise self._missing()


def module_getattr(module_name: str) -> Any:
    """A module-level ``__getattr__`` for `module_name` raising `attribute_error`."""

    def __getattr__(name: str) -> Any:
        raise attribute_error(sys.modules[module_name], name)

    return __getattr__


def attribute_error(module: Any, name: str) -> AttributeError:
    """The error for ``module.name`` missing: named as torch names it while
    `install_as_torch` is on, as lazytorch's otherwise, with the nearest names.

    >>> import lazytorch
    >>> print(attribute_error(lazytorch, "flipp"))
    module 'lazytorch' has no attribute 'flipp'; nearest: lazytorch.flip, lazytorch.flipud, lazytorch.fliplr
    """
    own = module.__name__
    if name.startswith("__"):  # protocol probes (__wrapped__, __path__...): plain and cheap
        return AttributeError(f"module {own!r} has no attribute {name!r}")
    if is_installed():
        return MissingTorchAPI(
            missing_message("torch" + own[len("lazytorch") :] + "." + name, module, name)
        )
    msg = f"module {own!r} has no attribute {name!r}"
    near = difflib.get_close_matches(name, public_names(module), 3, 0.6)
    if near:
        msg += "; nearest: " + ", ".join(f"{own}.{n}" for n in near)
    return AttributeError(msg)


def _lazy_name(torch_name: str) -> str:
    return "lazytorch" + torch_name[len("torch") :]


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``torch[.sub]`` imports with ``lazytorch[.sub]`` (see the module docstring)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        target = _lazy_name(spec.name)
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name is None or not (target == e.name or target.startswith(e.name + ".")):
                raise  # a dependency of an existing lazytorch module is missing: say so
            module = _Placeholder(spec.name)
            module.__path__ = []  # a package, so `import torch.x.y` also imports
        # The import system sets __spec__ on the module it gets back; keep lazytorch's own
        # so that lazytorch.nn keeps answering to its real name (restored in exec_module).
        self._own_spec[id(module)] = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if not isinstance(module, _Placeholder):
            module.__spec__ = self._own_spec.pop(id(module), module.__spec__)

    def __init__(self) -> None:
        self._own_spec: dict[int, Any] = {}


_finder: _TorchFinder | None = None

# The name reprs give the library: "torch" while `install_as_torch` is on (a script run
# --as-torch prints torch.Size([2]) and torch.float32 as under torch), else "lazytorch".
# Read by the reprs only, never on an op's path.
NAME = "lazytorch"


def is_installed() -> bool:
    """Whether ``import torch`` currently resolves to lazytorch."""
    return _finder is not None


def install_as_torch() -> None:
    """Make ``import torch`` (and every ``torch.<sub>``) import lazytorch.

    Idempotent. Raises ``RuntimeError`` when the real torch is already imported in this
    process (two libraries under one name would mix their tensors).

    In a fresh process (``lazytorch run --as-torch script.py`` does this for you)::

        import lazytorch
        lazytorch.install_as_torch()
        import torch
        torch.ones(2).sum()              # tensor(2.), a lazytorch tensor
    """
    global _finder, NAME
    if _finder is not None:
        return
    real = sys.modules.get("torch")
    if real is not None and not _is_ours(real):
        raise RuntimeError(
            "install_as_torch(): the real torch is already imported in this process "
            f"({getattr(real, '__file__', real)!r}); call install_as_torch() before anything "
            "imports torch, or run the script with `lazytorch run --as-torch script.py`"
        )
    _finder = _TorchFinder()
    sys.meta_path.insert(0, _finder)
    NAME = "torch"
    _set_version(as_torch_version())


def uninstall_as_torch() -> None:
    """Undo `install_as_torch`: remove the hook and the ``torch`` modules it supplied."""
    global _finder, NAME
    if _finder is None:
        return
    sys.meta_path[:] = [f for f in sys.meta_path if f is not _finder]
    _finder = None
    NAME = "lazytorch"
    _set_version(__version__)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        module = sys.modules[name]
        if not _is_ours(module):
            continue
        del sys.modules[name]
        parent, _, leaf = name.rpartition(".")
        owner = sys.modules.get(_lazy_name(parent)) if parent else None
        if isinstance(module, _Placeholder) and getattr(owner, leaf, None) is module:
            delattr(owner, leaf)  # the import system bound the placeholder on lazytorch's parent


def _set_version(version: str) -> None:
    """``__version__`` of the package and of its ``version`` module: as torch's while
    ``torch`` is lazytorch (`lazytorch._version.as_torch_version`), else lazytorch's own."""
    for name in ("lazytorch", "lazytorch.version"):
        module = sys.modules.get(name)
        if module is not None:
            module.__version__ = version


def _is_ours(module: Any) -> bool:
    return isinstance(module, _Placeholder) or getattr(module, "__name__", "").startswith(
        "lazytorch"
    )
