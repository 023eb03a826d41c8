"""``torch.nn.utils.prune``: masks on module tensors, applied before every forward.

Pruning tensor ``name`` of a module moves the parameter to ``name + "_orig"``, registers the
mask as the buffer ``name + "_mask"``, sets the attribute ``name`` to ``mask * orig`` and
registers the pruning method as a forward pre-hook that recomputes it. Pruning the same
tensor again combines the masks in a `PruningContainer` (the new method acts on what is left
unpruned); `remove` makes the pruning permanent. The masks are torch's: the same tensors
pruned (`L1Unstructured` zeroes the ``k`` smallest ``|t|`` found by ``topk``, the random
methods draw ``rand_like``/``rand`` in torch's order).

>>> import lazytorch
>>> from lazytorch.nn.utils import prune
>>> m = lazytorch.nn.Linear(4, 1)
>>> with lazytorch.no_grad():
...     _ = m.weight.copy_(lazytorch.tensor([[0.1, -2.0, 0.3, 4.0]]))
>>> _ = prune.l1_unstructured(m, "weight", amount=2)
>>> m.weight
tensor([[ 0., -2.,  0.,  4.]], grad_fn=<MulBackward0>)
>>> sorted(n for n, _ in m.named_buffers())
['weight_mask']
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from lazytorch.nn.utils.convert_parameters import parameters_to_vector
from lazytorch.ops.creation import ones_like, zeros_like
from lazytorch.ops.linalg import norm as _norm
from lazytorch.ops.random import rand, rand_like
from lazytorch.ops.sorting import kthvalue, topk
from lazytorch.tensor import Tensor

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


class BasePruningMethod(ABC):
    """A pruning technique: subclasses define `compute_mask` and ``PRUNING_TYPE``
    (``"unstructured"``, ``"structured"`` with a ``dim``, or ``"global"``)."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Any, inputs: Any) -> None:
        """The forward pre-hook: recompute the pruned tensor from ``_orig`` and ``_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for `t`, given the mask it already has (`default_mask`)."""

    def apply_mask(self, module: Any) -> Tensor:
        """``mask * orig`` for the module's pruned tensor."""
        if getattr(self, "_tensor_name", None) is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls, module: Any, name: str, *args: Any, importance_scores: Any = None, **kwargs: Any
    ) -> BasePruningMethod:
        """Prune `module`'s tensor `name` with ``cls(*args, **kwargs)``, combining it with an
        earlier pruning of the same tensor; returns the method (or container) registered."""
        old = None
        old_keys = []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old = hook
                old_keys.append(k)
        if len(old_keys) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
        for k in old_keys:
            del module._forward_pre_hooks[k]
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Any = None, importance_scores: Any = None) -> Tensor:
        """`t` with this method's mask applied (no module involved)."""
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(t.shape):
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: the parameter `name` holds the pruned values."""
        if getattr(self, "_tensor_name", None) is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied, in order, to one tensor: the last one acts on what the
    earlier ones left unpruned."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: Any) -> None:
        """Append `method` (it must prune the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found "
                f"'{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the part of `t` still unpruned."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                    "`dim` defined."
                )
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            parts: list[Any] = [slice(None)] * n_dims
            parts[dim] = keep
            slc = tuple(parts)
        elif kind == "global":
            slc = tuple([slice(None)] * len(t.shape))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: Any) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            prob = rand_like(t)
            mask.view(-1)[topk(prob.view(-1), k=k).indices] = 0
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: Any) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            mask.view(-1)[topk(t.abs().view(-1), k=k, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Any, name: str, amount: Any, importance_scores: Any = None
    ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        prob = rand(size)
        threshold = kthvalue(prob, k=k).values
        mask = zeros_like(t)
        parts: list[Any] = [slice(None)] * len(t.shape)
        parts[self.dim] = prob > threshold
        mask[tuple(parts)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any, dim: int = -1) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim` of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        norm = _compute_norm(t, self.n, self.dim)
        keep = topk(norm, k=size - k, largest=True)
        if k == 0:
            return default_mask
        mask = zeros_like(t)
        parts: list[Any] = [slice(None)] * len(t.shape)
        parts[self.dim] = keep.indices
        mask[tuple(parts)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Any, name: str, amount: Any, n: Any, dim: int, importance_scores: Any = None
    ) -> BasePruningMethod:
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with the existing one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match self.mask shape "
                f"{self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Any, name: str) -> Any:
    """Register pruning of `name` with a mask of ones; returns `module`."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: Any) -> Any:
    """Prune `amount` of `name`'s entries at random; returns `module`."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: Any, importance_scores: Any = None) -> Any:
    """Prune `amount` of `name`'s entries of smallest |value| (or importance); returns `module`."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: Any, dim: int) -> Any:
    """Prune `amount` of `name`'s channels along `dim` at random; returns `module`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Any, name: str, amount: Any, n: Any, dim: int, importance_scores: Any = None
) -> Any:
    """Prune `amount` of `name`'s channels along `dim` of smallest L`n` norm; returns `module`."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Any, pruning_method: Any, importance_scores: Any = None, **kwargs: Any
) -> None:
    """Prune the ``(module, name)`` tensors of `parameters` together, as one vector, with an
    unstructured `pruning_method` class (e.g. `L1Unstructured` with ``amount=0.2``)."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector(
        [importance_scores.get((m, n), getattr(m, n)) for (m, n) in parameters]
    )
    default_mask = parameters_to_vector(
        [getattr(m, n + "_mask", ones_like(getattr(m, n))) for (m, n) in parameters]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer : pointer + num].view_as(param))
        pointer += num


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune `name` with `mask`; returns `module`."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of `name` permanent (drop ``_orig``, ``_mask`` and the hook)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Any) -> bool:
    """Whether `module` or a submodule has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {len(t.shape)} dims"
        )


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return _norm(t, p=n, dim=dims)
