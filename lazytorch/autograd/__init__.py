"""Autograd (in progress): the grad-mode switches exist so inference code written for torch
(``with torch.no_grad():``) runs unchanged; gradients themselves are not implemented yet."""

from lazytorch.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]
