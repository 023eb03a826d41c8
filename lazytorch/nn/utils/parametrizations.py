"""``torch.nn.utils.parametrizations``: `weight_norm` and `spectral_norm` as parametrizations
(`lazytorch.nn.utils.parametrize`), with torch's layout (``parametrizations.weight.original0``
/ ``original1`` for weight norm's g and v; ``parametrizations.weight.original`` and the
``_u`` / ``_v`` buffers of spectral norm).

`orthogonal` is not available yet: its maps need ``matrix_exp``, ``linalg.solve`` or
``linalg.householder_product`` and a QR decomposition, which lazytorch lacks; it raises
`NotImplementedError` saying so.

>>> import lazytorch
>>> from lazytorch.nn.utils.parametrizations import weight_norm
>>> m = weight_norm(lazytorch.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from typing import Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.nn import functional as F
from lazytorch.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from lazytorch.nn.modules.module import Module
from lazytorch.nn.utils import parametrize
from lazytorch.nn.utils.weight_norm import _weight_norm, norm_except_dim
from lazytorch.tensor import Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Not available: raises `NotImplementedError` (see the module docstring)."""
    raise NotImplementedError(
        "torch.nn.utils.parametrizations.orthogonal is not available in lazytorch: its "
        "maps (matrix_exp, cayley, householder) need torch.matrix_exp, torch.linalg.solve "
        "or torch.linalg.householder_product, and its initialization a QR decomposition, "
        "which lazytorch does not have yet"
    )


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """``module.<name> = g * v / ||v||`` (norms over every dim but `dim`; None: the whole
    tensor), with ``g`` in ``parametrizations.<name>.original0`` and ``v`` in ``original1``.
    A state dict of the old hook form (``<name>_g``, ``<name>_v``) loads into it."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        mod: Module,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: Any,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps)
                self._v = F.normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma  # type: ignore[no-any-return]

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """``module.<name> = W / sigma(W)``, sigma estimated by the power method (its vectors in
    the parametrization's ``_u`` / ``_v`` buffers, updated at each read in training mode).
    `dim` defaults to 1 for transposed convolutions, 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
