"""Module backward hooks: ``register_full_backward_hook``, ``register_full_backward_pre_hook``
and the deprecated ``register_backward_hook``, built as torch builds them.

A module with backward hooks runs its tensor inputs, before ``forward``, and its tensor
outputs, after it, through an identity `autograd.Function` (torch's
``BackwardHookFunction``). In backward, the one on the outputs receives the gradients with
respect to the module's outputs (``grad_output``; the pre-hooks may replace them), and the
one on the inputs receives the gradients with respect to the module's inputs
(``grad_input``), which it hands to the hooks with the saved ``grad_output``; a hook's
return value replaces ``grad_input``. When no input requires grad, the hooks run at the
outputs with ``grad_input`` all None.

The deprecated ``register_backward_hook`` gives the gradients of the *last autograd op* of
the module's forward, which depends on how torch decomposes each module. lazytorch
reproduces it where that op is known: `LEGACY_SINGLE_OP` layers (one op on the input:
``grad_input`` is the gradient with respect to the input) and convolutions with zero
padding (``grad_input`` is ``(input, weight, bias)``'s gradients); registering one on any
other module raises NotImplementedError.
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch.autograd.function import Function
from lazytorch.autograd.grad_mode import is_grad_enabled
from lazytorch.tensor import Tensor

__all__ = ["LEGACY_SINGLE_OP", "BackwardHook", "legacy_hook_supported"]

# layers whose forward is one torch autograd op on the input (module, class name)
LEGACY_SINGLE_OP = {
    ("lazytorch.nn.modules.activation", name)
    for name in (
        "ReLU",
        "ReLU6",
        "LeakyReLU",
        "ELU",
        "SELU",
        "CELU",
        "GELU",
        "SiLU",
        "Mish",
        "Sigmoid",
        "Tanh",
        "Softplus",
        "Softsign",
        "Hardtanh",
        "Hardsigmoid",
        "Hardswish",
        "Softmax",
        "LogSoftmax",
    )
} | {
    ("lazytorch.nn.modules.pooling", name)
    for name in ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d")
}
_CONVS = ("Conv1d", "Conv2d", "Conv3d")


def _legacy_kind(module: Any) -> str | None:
    cls = type(module)
    if (cls.__module__, cls.__name__) in LEGACY_SINGLE_OP:
        return "single"
    if (
        cls.__module__ == "lazytorch.nn.modules.conv"
        and cls.__name__ in _CONVS
        and module.padding_mode == "zeros"
    ):
        return "conv"
    return None


def legacy_hook_supported(module: Any) -> None:
    """Raise NotImplementedError unless `register_backward_hook` can give torch's
    gradients on `module` (see the module docstring)."""
    if _legacy_kind(module) is None:
        raise NotImplementedError(
            f"Module.register_backward_hook on {type(module).__name__}: torch passes the "
            "gradients of the last autograd op inside the module's forward, which lazytorch "
            "reproduces only for zero-padded Conv1d/2d/3d and single-op layers without "
            "parameters (activations, max/avg pooling). Use register_full_backward_hook "
            "(gradients with respect to the module's inputs), as torch recommends"
        )


class _BackwardHookFunction(Function):
    """Identity on its tensor arguments; its backward calls `on_backward(grads)`, whose
    result is the gradient passed on. With `materialize`, a tensor that gets no gradient
    gets zeros (torch's grad_input), else None (torch's grad_output, read before its
    node's backward)."""

    @staticmethod
    def forward(ctx: Any, on_backward: Any, materialize: bool, *args: Tensor) -> Any:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        ctx.set_materialize_grads(materialize)
        ctx.on_backward = on_backward
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, None, *ctx.on_backward(grads))


class BackwardHook:
    """torch's ``torch.utils.hooks.BackwardHook``: the state of one call of a module with
    backward hooks (`user_hooks` take ``(module, grad_input, grad_output)``,
    `user_pre_hooks` ``(module, grad_output)``)."""

    def __init__(self, module: Any, user_hooks: list[Any], user_pre_hooks: list[Any]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for idx, val in zip(indices, values, strict=False):
            res[idx] = val
        return tuple(res)

    def _apply_on_tensors(
        self, fn: Any, args: tuple[Any, ...], materialize: bool
    ) -> tuple[Any, list[int] | None]:
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = _BackwardHookFunction.apply(fn, materialize, *tensors)
        out = list(args)
        for i, t in zip(idx, new, strict=True):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """`args` with its tensors routed through the hook that sees ``grad_input``."""

        def on_grad_input(grads: tuple[Any, ...]) -> tuple[Any, ...]:
            if self.grad_outputs is None:  # gradient reached the inputs without the outputs
                return grads
            assert self.input_tensors_index is not None
            res = self._pack_with_none(self.input_tensors_index, grads, self.n_inputs)
            for hook in self.user_hooks:
                out = hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        res, self.input_tensors_index = self._apply_on_tensors(on_grad_input, args, True)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        """`result` with its tensors routed through the hook that sees ``grad_output``."""

        def on_grad_output(grads: tuple[Any, ...]) -> tuple[Any, ...]:
            assert self.output_tensors_index is not None
            self.grad_outputs = self._pack_with_none(
                self.output_tensors_index, grads, self.n_outputs
            )
            for pre_hook in self.user_pre_hooks:
                new = pre_hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(self.grad_outputs):
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(new)}, but expected {len(self.grad_outputs)}"
                    )
                self.grad_outputs = tuple(new)
            local = self.grad_outputs
            if self.input_tensors_index is None:  # no input requires grad: call them here
                if self.user_hooks:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with "
                        "respect to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5,
                    )
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for hook in self.user_hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(el is None for el in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient "
                            "should always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return tuple(local[i] for i in self.output_tensors_index)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, self.output_tensors_index = self._apply_on_tensors(on_grad_output, args, False)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]
