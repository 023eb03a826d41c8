"""The public API registry: one line declares a ``torch.*`` function, its ``Tensor`` methods
and their in-place variants, beside the function itself (Thunder's ``@torchsymbol`` idea).

>>> from lazytorch._public import Registry
>>> reg = Registry()
>>> @reg.public(torch=("abs", "absolute"), method=True, inplace=True)
... def abs(input):
...     return input
>>> sorted(reg.functions())
['abs', 'absolute']
>>> [(e.name, e.kind) for e in reg.entries("Tensor")]
[('abs', 'method'), ('absolute', 'method'), ('abs_', 'inplace'), ('absolute_', 'inplace')]
>>> reg.get("Tensor", "absolut_")
Traceback (most recent call last):
KeyError: "no public Tensor attribute 'absolut_'; did you mean absolute_, absolute, abs_?"

How a declaration reads (`public` is `REGISTRY.public`):

* ``@public()`` — ``torch.cat`` only (the name is the function's);
* ``@public(method=True, inplace=True)`` — ``torch.exp``, ``Tensor.exp`` and a generated
  ``Tensor.exp_``;
* ``@public(torch=("abs", "absolute"), method=True)`` — aliases: each name is the same
  object, and ``method=True`` gives every torch name a method too;
* ``@public(torch=("outer", "ger"), method="outer")`` — method names that differ from the
  torch names (a string or a tuple of them);
* ``@public(torch=False, method=True)`` — a method only (``Tensor.contiguous``); a method
  whose name ends in ``_`` is a hand-written in-place method (``index_add_``);
* a property is declared like a method (its name is its getter's);
* an object that is not a function is declared by calling the decorator on it:
  ``default_generator = public(torch="default_generator")(Generator())``.

The contract, each rule enforced when the declaring module is imported:

* a name is declared once per namespace (``torch`` / ``Tensor``): a second declaration
  raises ValueError naming both declarations;
* ``inplace=True`` needs method names: each method name ``n`` gets ``n_``, generated when
  the methods are bound (`lazytorch.ops.methods` runs the op and assigns the result back);
* the facade and the Tensor methods are built from the registry once, when `lazytorch.ops`
  is imported, and then the registry is sealed: a later declaration raises RuntimeError
  instead of going unbound, and nothing declared is ever left out;
* asking for a name that is not declared raises KeyError with the close names.

This module imports nothing of lazytorch's, so every layer can declare into it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["NAMESPACES", "REGISTRY", "Entry", "Registry", "public", "suggest"]

T = TypeVar("T")

NAMESPACES = ("torch", "Tensor")
KINDS = ("function", "method", "inplace")


class Entry:
    """One public name: its namespace, the object it is bound to, and its kind.

    ``kind`` is ``"function"`` (``torch.X``), ``"method"`` (``Tensor.X``, a property
    included) or ``"inplace"`` (``Tensor.X_``). ``of`` is set on a generated in-place
    variant: the method it is made from (``obj`` is then that method's op).
    """

    __slots__ = ("by", "kind", "name", "namespace", "obj", "of")

    def __init__(
        self, name: str, namespace: str, obj: Any, kind: str, by: str | None, of: str | None
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.obj = obj
        self.kind = kind
        self.by = by  # None: the object itself (named when asked: import stays cheap)
        self.of = of

    @property
    def declared_by(self) -> str:
        """Where the declaration is: the object's module and qualified name, or a table."""
        return self.by if self.by is not None else _where(self.obj)

    def __repr__(self) -> str:
        where = "lazytorch" if self.namespace == "torch" else "Tensor"
        made = f" (generated from {self.of})" if self.of else ""
        return f"<{self.kind} {where}.{self.name}{made}: {self.declared_by}>"


def suggest(name: str, names: Iterable[str]) -> str:
    """The "; did you mean ...?" hint for a name that is not among `names` ('' if none is
    close)."""
    import difflib

    close = difflib.get_close_matches(name, list(names), n=3)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _name_of(obj: Any) -> str | None:
    name = getattr(obj, "__name__", None)
    if name is None and isinstance(obj, property) and obj.fget is not None:
        name = obj.fget.__name__
    return name if isinstance(name, str) else None


def _where(obj: Any) -> str:
    target = obj.fget if isinstance(obj, property) and obj.fget is not None else obj
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}.{qualname}"


def _method_kind(name: str) -> str:
    """A method whose name ends in one ``_`` (not a dunder) is in-place, as in torch."""
    return "inplace" if name[-1] == "_" and name[-2:] != "__" else "method"


def _names(value: bool | str | tuple[str, ...], what: str) -> bool | tuple[str, ...]:
    """A `public` argument checked once: True, False, or a tuple of names."""
    if value is True or value is False:
        return value
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise TypeError(f"public: {what} must be True, False, a name or names, got {value!r}")
    return names


class Registry:
    """The declared public names (see the module docstring)."""

    __slots__ = ("_entries", "_sealed_by")

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Entry] = {}
        self._sealed_by: str | None = None

    def public(
        self,
        torch: bool | str | tuple[str, ...] = True,
        *,
        method: bool | str | tuple[str, ...] = False,
        inplace: bool = False,
    ) -> Callable[[T], T]:
        """Declare the decorated object's public names and return it unchanged.

        `torch`: the ``torch.*`` names (True: the object's ``__name__``; False: none).
        `method`: the ``Tensor`` method names (True: the torch names, or the object's name
        when it has none). `inplace`: also declare ``<method>_`` for every method name.
        """

        torch_arg = _names(torch, "torch")
        method_arg = _names(method, "method")

        def declare(obj: T) -> T:
            own = _name_of(obj)
            if own is None and (torch_arg is True or (method_arg is True and not torch_arg)):
                raise TypeError(f"public: {obj!r} has no __name__: name it (torch='...')")
            torch_names = (own,) if torch_arg is True else torch_arg or ()
            if method_arg is True:
                method_names = torch_names or (own,)
            else:
                method_names = method_arg or ()
            if not torch_names and not method_names:
                raise TypeError(f"public: {_where(obj)} declares no torch name and no method")
            if inplace and not method_names:
                raise TypeError(
                    f"public: {_where(obj)} asks for in-place variants of no method "
                    "(inplace=True needs method=...)"
                )
            add = self._add
            for n in torch_names:
                add(Entry(n, "torch", obj, "function", None, None))
            for n in method_names:
                add(Entry(n, "Tensor", obj, _method_kind(n), None, None))
            if inplace:
                for n in method_names:
                    add(Entry(n + "_", "Tensor", obj, "inplace", None, n))
            return obj

        return declare

    def declare(self, namespace: str, name: str, obj: Any, by: str) -> None:
        """Declare one name of `obj` (what `public` does per name; a table of methods
        declares its entries with this, `by` naming the table)."""
        if namespace not in NAMESPACES:
            raise KeyError(f"no namespace {namespace!r}{suggest(namespace, NAMESPACES)}")
        kind = "function" if namespace == "torch" else _method_kind(name)
        self._add(Entry(name, namespace, obj, kind, by, None))

    def _add(self, entry: Entry) -> None:
        if self._sealed_by is not None:
            raise RuntimeError(
                f"public: {entry.declared_by} declares {entry.namespace}.{entry.name} after the "
                f"public API was built from the registry ({self._sealed_by}): it would never be "
                "bound. Declare it in a module lazytorch.ops imports."
            )
        first = self._entries.setdefault((entry.namespace, entry.name), entry)
        if first is not entry:
            raise ValueError(
                f"public: {entry.namespace}.{entry.name} is declared twice: by "
                f"{first.declared_by} and by {entry.declared_by}"
            )

    @property
    def sealed(self) -> bool:
        """Whether the public API was built from this registry (no more declarations)."""
        return self._sealed_by is not None

    def seal(self, by: str) -> None:
        """Refuse declarations from now on (the API was built from the registry by `by`)."""
        self._sealed_by = by

    def entries(self, namespace: str | None = None) -> list[Entry]:
        """The entries in declaration order (of one namespace, when given)."""
        if namespace is not None and namespace not in NAMESPACES:
            raise KeyError(f"no namespace {namespace!r}{suggest(namespace, NAMESPACES)}")
        return [e for e in self._entries.values() if namespace in (None, e.namespace)]

    def functions(self) -> dict[str, Any]:
        """``torch.*`` name -> object."""
        return {e.name: e.obj for e in self.entries("torch")}

    def get(self, namespace: str, name: str) -> Entry:
        """The entry of one name, with an error listing close names."""
        entry = self._entries.get((namespace, name))
        if entry is None:
            where = "torch function" if namespace == "torch" else f"{namespace} attribute"
            names = [e.name for e in self.entries(namespace)]
            raise KeyError(f"no public {where} {name!r}{suggest(name, names)}")
        return entry


REGISTRY = Registry()
"""The registry lazytorch's own ops declare into."""

public = REGISTRY.public
