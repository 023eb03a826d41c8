"""functorch's ``make_functional``: a module as a function of its parameters (and buffers).

``func, params = make_functional(model)`` gives the parameters as a tuple and a callable
``func(params, *args)`` that runs `model` with those tensors in place of its own
(`lazytorch.func.functional_call`, which puts the model's own back afterwards).

>>> import lazytorch
>>> from lazytorch._functorch.make_functional import make_functional
>>> lin = lazytorch.nn.Linear(2, 1)
>>> func, params = make_functional(lin)
>>> zeros = tuple(lazytorch.zeros_like(p) for p in params)
>>> func(zeros, lazytorch.ones(3, 2)).tolist()
[[0.0], [0.0], [0.0]]
"""

from __future__ import annotations

from typing import Any

from lazytorch.func import functional_call, stack_module_state
from lazytorch.tensor import Tensor

__all__ = [
    "FunctionalModule",
    "FunctionalModuleWithBuffers",
    "combine_state_for_ensemble",
    "make_functional",
    "make_functional_with_buffers",
]


def _named(module: Any, what: str) -> tuple[tuple[str, ...], tuple[Tensor, ...]]:
    items = list(getattr(module, f"named_{what}")())
    return tuple(n for n, _ in items), tuple(t for _, t in items)


def _detached(ts: tuple[Tensor, ...], disable: bool) -> tuple[Tensor, ...]:
    return tuple(t.detach() for t in ts) if disable else ts


class FunctionalModule:
    """``func(params, *args, **kwargs)``: the module run with `params` (by position, in
    ``named_parameters()`` order) in place of its parameters."""

    def __init__(self, module: Any, names: tuple[str, ...]) -> None:
        self.stateless_model = module
        self.param_names = names

    def __call__(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        return functional_call(
            self.stateless_model, dict(zip(self.param_names, params)), args, kwargs
        )


class FunctionalModuleWithBuffers:
    """``func(params, buffers, *args, **kwargs)``: as `FunctionalModule`, buffers too."""

    def __init__(self, module: Any, names: tuple[str, ...], buffer_names: tuple[str, ...]) -> None:
        self.stateless_model = module
        self.param_names = names
        self.buffer_names = buffer_names

    def __call__(self, params: Any, buffers: Any, *args: Any, **kwargs: Any) -> Any:
        state = {**dict(zip(self.param_names, params)), **dict(zip(self.buffer_names, buffers))}
        return functional_call(self.stateless_model, state, args, kwargs)


def make_functional(model: Any, disable_autograd_tracking: bool = False) -> tuple[Any, Any]:
    """``(func, params)`` for a module without buffers (use `make_functional_with_buffers`
    for one with buffers, as functorch requires)."""
    names, params = _named(model, "parameters")
    if any(True for _ in model.buffers()):
        raise RuntimeError(
            "make_functional(model): `model` has buffers. Please use "
            "make_functional_with_buffers(model) instead."
        )
    return FunctionalModule(model, names), _detached(params, disable_autograd_tracking)


def make_functional_with_buffers(
    model: Any, disable_autograd_tracking: bool = False
) -> tuple[Any, Any, Any]:
    """``(func, params, buffers)``: `model` as a function of its parameters and buffers."""
    names, params = _named(model, "parameters")
    buffer_names, buffers = _named(model, "buffers")
    func = FunctionalModuleWithBuffers(model, names, buffer_names)
    return func, _detached(params, disable_autograd_tracking), buffers


def combine_state_for_ensemble(models: Any) -> tuple[Any, Any, Any]:
    """``(func, params, buffers)`` of same-class `models`, each parameter and buffer stacked
    along a new first dim (for ``vmap(func)(params, buffers, x)``)."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    params, buffers = stack_module_state(models)
    p_names, _ = _named(models[0], "parameters")
    b_names, _ = _named(models[0], "buffers")
    func = FunctionalModuleWithBuffers(models[0], p_names, b_names)
    return func, tuple(params[n] for n in p_names), tuple(buffers[n] for n in b_names)
