"""Module backward hooks (``register_full_backward_hook`` / ``register_full_backward_pre_hook``)
as two identity `autograd.Function`s around a module call, torch's ``BackwardHook`` idea:

* the outputs pass through `_Outputs`, whose backward sees the gradients with respect to
  the outputs (``grad_output``), runs the pre-hooks (which may replace them) and keeps
  them for the hooks;
* the positional tensor inputs that require grad pass through `_Inputs`, whose backward
  sees the gradients with respect to them (``grad_input``) and runs the hooks
  ``hook(module, grad_input, grad_output)`` (a returned tuple replaces ``grad_input``).

When no input requires grad, the hooks run from `_Outputs` with ``grad_input`` all None,
as torch's do. Outputs are a tensor or a tuple/list of them (others pass untouched).
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch.autograd.function import Function
from lazytorch.tensor import Tensor

__all__ = ["call_with_backward_hooks"]


class _State:
    __slots__ = ("grad_output", "hooks", "module", "n_inputs", "pre_hooks", "wrapped_inputs")

    def __init__(self, module: Any, n_inputs: int) -> None:
        self.module = module
        self.hooks = list(module._backward_hooks.values())
        self.pre_hooks = list(module._backward_pre_hooks.values())
        self.n_inputs = n_inputs
        self.grad_output: tuple[Any, ...] = ()
        self.wrapped_inputs: list[int] = []


def _run_hooks(state: _State, grad_input: tuple[Any, ...]) -> tuple[Any, ...]:
    for hook in state.hooks:
        res = hook(state.module, grad_input, state.grad_output)
        if res is not None:
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(res)}, "
                    f"but expected {len(grad_input)}"
                )
            grad_input = res
    return grad_input


class _Outputs(Function):
    @staticmethod
    def forward(ctx: Any, state: _State, *outs: Tensor) -> Any:
        ctx.state = state
        return tuple(o.view_as(o) for o in outs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state = ctx.state
        for hook in state.pre_hooks:
            res = hook(state.module, grads)
            if res is not None:
                grads = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        state.grad_output = grads
        if not state.wrapped_inputs and state.hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients. See "
                "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                stacklevel=2,
            )
            _run_hooks(state, (None,) * state.n_inputs)
        return (None, *grads)


class _Inputs(Function):
    @staticmethod
    def forward(ctx: Any, state: _State, *ins: Tensor) -> Any:
        ctx.state = state
        return tuple(i.view_as(i) for i in ins)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state = ctx.state
        full: list[Any] = [None] * state.n_inputs
        for k, g in zip(state.wrapped_inputs, grads):
            full[k] = g
        new = _run_hooks(state, tuple(full))
        return (None, *(new[k] for k in state.wrapped_inputs))


def call_with_backward_hooks(
    module: Any, forward: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``forward(*args, **kwargs)`` with the module's backward hooks attached (see the
    module docstring)."""
    tensor_pos = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
    state = _State(module, len(tensor_pos))
    wrap = [j for j, k in enumerate(tensor_pos) if args[k].requires_grad]
    if wrap:
        state.wrapped_inputs = wrap
        new_in = _Inputs.apply(state, *(args[tensor_pos[j]] for j in wrap))
        new_in = new_in if isinstance(new_in, tuple) else (new_in,)
        args = list(args)  # type: ignore[assignment]
        for j, t in zip(wrap, new_in):
            args[tensor_pos[j]] = t  # type: ignore[index]
        args = tuple(args)
    result = forward(*args, **kwargs)
    if isinstance(result, Tensor):
        if not result.requires_grad:
            return result
        out = _Outputs.apply(state, result)
        return out[0] if isinstance(out, tuple) else out
    if isinstance(result, (tuple, list)):
        pos = [k for k, r in enumerate(result) if isinstance(r, Tensor) and r.requires_grad]
        if not pos:
            return result
        outs = _Outputs.apply(state, *(result[k] for k in pos))
        outs = outs if isinstance(outs, tuple) else (outs,)
        items = list(result)
        for k, t in zip(pos, outs):
            items[k] = t
        return type(result)(items) if isinstance(result, list) else tuple(items)
    return result
