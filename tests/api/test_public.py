"""The public-op registry (`lazytorch._public`): what one ``@public`` line owns, and that no
declared name can be lost or declared twice.

The facts are checked against torch where torch has an opinion (every declared name is a
torch name; an in-place method has its out-of-place method where torch does), and against
a fresh `Registry` for the rules that must fail loudly at import.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest
import torch

import lazytorch as lt
from lazytorch._public import REGISTRY, Registry
from lazytorch.ops import methods

# Tensor methods lazytorch binds that torch.Tensor lacks, each with its reason.
NOT_TORCH_METHODS = {
    "isin": "bound before the registry existed (torch has only torch.isin); kept so the "
    "refactor changes no behaviour",
}


def test_the_facade_is_the_registry():
    functions = REGISTRY.functions()
    assert len(functions) > 250
    for name, obj in functions.items():
        assert getattr(lt, name) is obj, name
    assert set(functions) <= set(lt.__all__)


def test_every_declared_method_is_bound():
    for e in REGISTRY.entries("Tensor"):
        bound = lt.Tensor.__dict__[e.name]
        if e.of is not None:  # generated in-place variant of the op
            assert bound.__wrapped__ is e.obj and bound.__name__ == e.name
        else:
            assert bound is e.obj, e.name


def test_declared_names_are_torch_names():
    assert [e.name for e in REGISTRY.entries("torch") if not hasattr(torch, e.name)] == []
    extra = {e.name for e in REGISTRY.entries("Tensor") if not hasattr(torch.Tensor, e.name)}
    assert extra == set(NOT_TORCH_METHODS)


def test_aliases_are_one_object():
    # One @public line declares the aliases: the same function under each name.
    assert lt.absolute is lt.abs and lt.Tensor.absolute is lt.Tensor.abs
    assert lt.concat is lt.cat and lt.concatenate is lt.cat
    assert lt.ger is lt.outer and hasattr(lt.Tensor, "ger")  # Tensor.ger: lazytorch.ops.extras
    # acos is autocast-listed: lt.acos is its autocast wrapper, and the in-place variant is
    # made from the plain op (torch's autocast lists out-of-place ops only)
    assert lt.arccos is lt.acos and lt.Tensor.arccos_.__wrapped__ is lt.acos.__wrapped__
    # empty_like is its own factory object (its requires_grad= wrapper), as torch's is
    assert lt.empty_like is not lt.zeros_like
    assert lt.empty_like.__wrapped__ is lt.zeros_like.__wrapped__


def test_method_only_and_function_only_names():
    assert lt.Tensor.contiguous is lt.ops.shape.contiguous and not hasattr(lt, "contiguous")
    assert hasattr(lt, "cat") and not hasattr(lt.Tensor, "cat")
    # a method name different from the function's (behind the wrapper that takes NumPy's
    # axis= for dim=, as every op with a dim parameter is bound: methods.NUMPY_NAMES)
    method = lt.Tensor.repeat_interleave
    assert inspect.unwrap(method) is lt.ops.composite._repeat_interleave_method
    assert lt.Tensor.type is methods._type
    assert REGISTRY.get("Tensor", "type").kind == "method"


def test_generated_inplace_runs_the_op_and_assigns():
    x = lt.tensor([1.0, -2.0])
    assert x.add_(1) is x
    assert x.tolist() == [2.0, -1.0]
    assert lt.Tensor.add_.__wrapped__ is lt.add
    assert lt.Tensor.__iadd__ is lt.Tensor.add_
    assert REGISTRY.get("Tensor", "add_").of == "add"


def test_every_inplace_method_has_its_out_of_place_method():
    for e in REGISTRY.entries("Tensor"):
        if e.kind != "inplace":
            continue
        if e.of is not None:
            assert hasattr(lt.Tensor, e.of) and hasattr(torch.Tensor, e.name), e.name
        elif hasattr(torch.Tensor, e.name[:-1]):  # hand-written: fill_diagonal_ has none
            assert hasattr(lt.Tensor, e.name[:-1]), e.name


def test_the_autograd_api_is_declared_by_autograd():
    for name in ("backward", "requires_grad", "requires_grad_", "grad", "grad_fn", "is_leaf"):
        assert REGISTRY.get("Tensor", name).declared_by.startswith(
            "lazytorch.autograd.tensor_methods."
        )


# -- the registry's rules, on a fresh registry ----------------------------------------------------
def _op(input):
    return input


def test_a_name_is_declared_once():
    reg = Registry()
    reg.public(method=True)(_op)

    def other(input):
        return input

    with pytest.raises(ValueError, match=r"torch\._op is declared twice: by .*_op and by .*other"):
        reg.public(torch="_op")(other)
    with pytest.raises(ValueError, match=r"Tensor\._op is declared twice"):
        reg.public(torch=False, method="_op")(other)


def test_a_declaration_must_name_something():
    reg = Registry()
    with pytest.raises(TypeError, match="inplace=True needs method"):
        reg.public(inplace=True)(_op)
    with pytest.raises(TypeError, match="declares no torch name and no method"):
        reg.public(torch=False)(_op)
    with pytest.raises(TypeError, match="has no __name__"):
        reg.public()(object())
    with pytest.raises(TypeError, match="must be True, False, a name or names"):
        reg.public(torch="not a name")(_op)


def test_an_unknown_name_gets_close_names():
    reg = Registry()
    reg.public(torch=("absolute", "abs"), method=True, inplace=True)(_op)
    with pytest.raises(KeyError, match="no public torch function 'absolut'; did you mean absolute"):
        reg.get("torch", "absolut")
    with pytest.raises(KeyError, match="did you mean Tensor"):
        reg.entries("tensor")


def test_a_declaration_after_binding_is_refused():
    with pytest.raises(RuntimeError, match="would never be bound"):
        REGISTRY.public(torch="late_op")(_op)
    assert "late_op" not in REGISTRY.functions()


class _Tensor:
    def own(self):
        return "state"


def test_binding_resolves_every_name_or_fails():
    # An in-place operator naming a method nobody declared: an error, not a lost operator.
    reg = Registry()
    reg.public(torch="add", method="add", inplace=True)(_op)
    with pytest.raises(KeyError, match="'ad_'; did you mean add_"):
        methods.bind(_Tensor, reg, tables={}, inplace_operators={"__iadd__": "ad_"})

    # A declared method the class body defines itself.
    reg = Registry()
    reg.public(torch=False, method="own")(_op)
    with pytest.raises(ValueError, match=r"_Tensor\.own is declared by .* defines it itself"):
        methods.bind(_Tensor, reg, tables={}, inplace_operators={})

    # A table entry that is also declared with @public.
    reg = Registry()
    reg.public(torch=False, method="neg")(_op)
    with pytest.raises(ValueError, match=r"Tensor\.neg is declared twice: by .*_op and by .*SIGNS"):
        methods.bind(_Tensor, reg, tables={"SIGNS": {"neg": _op}}, inplace_operators={})

    # A good one binds everything and seals the registry.
    reg = Registry()
    reg.public(torch="add", method="add", inplace=True)(_op)

    class Fresh:
        pass

    methods.bind(
        Fresh, reg, tables={"OPS": {"__add__": _op}}, inplace_operators={"__iadd__": "add_"}
    )
    assert Fresh.add is _op and Fresh.__add__ is _op and Fresh.__iadd__ is Fresh.add_
    assert reg.sealed
    with pytest.raises(RuntimeError, match="is sealed"):
        methods.bind(Fresh, reg, tables={}, inplace_operators={})


def test_api_coverage_doc_is_generated(capsys):
    # docs/api-coverage.md is docs/gen_api_coverage.py's output (regenerate it: see there).
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "gen_api_coverage", root / "docs/gen_api_coverage.py"
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.main()
    assert capsys.readouterr().out == (root / "docs/api-coverage.md").read_text()


def test_submodules_provide_every_torch_function_of_theirs():
    """lazytorch.fft has each of torch.fft's functions, under its name (the registry holds
    torch.* and Tensor names only; a submodule's completeness is checked here)."""
    theirs = {
        n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))
    }
    theirs -= {"Tensor"}  # torch.fft re-exports the class
    assert sorted(theirs - set(lt.fft.__all__)) == []
    assert set(lt.fft.__all__) <= theirs
    for name in lt.fft.__all__:
        assert callable(getattr(lt.fft, name)), name
