"""Weight normalization, the hook form (torch.nn.utils.weight_norm): a parameter w becomes
g * v / ||v||, with g (the norms over every dim but `dim`) and v (the direction) as the
parameters, and w recomputed before each forward.

>>> import lazytorch
>>> m = lazytorch.nn.utils.weight_norm(lazytorch.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'weight_g', 'weight_v']
>>> tuple(m.weight_g.shape)
(2, 1)
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import linalg as L
from lazytorch.tensor import Tensor

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The `pow`-norm of `v` over every dim but `dim` (kept as size-1 dims); dim -1: the
    norm of the whole tensor."""
    if dim == -1:
        return L.vector_norm(v, pow)
    keep = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != keep)
    return L.vector_norm(v, pow, others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    return v * (g / norm_except_dim(v, 2, dim))  # type: ignore[no-any-return,operator]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(
            name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach())
        )
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparameterize ``module.<name>`` as g * v / ||v|| (norms over every dim but `dim`;
    `dim` None: one norm for the whole tensor). Returns `module`."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: ``module.<name>`` a plain parameter again, with its current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
