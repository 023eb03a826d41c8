"""Saving and loading a module's state: torch's ``state_dict`` / ``load_state_dict``.

The keys are dotted paths (``"0.weight"``), in torch's order: a module's own parameters,
then its persistent buffers, then each child's in registration order. Saved values are
detached aliases of the live tensors. Loading copies into the existing tensors under
``no_grad`` (Parameters stay the same objects and stay leaves) and reports problems with
torch's messages; the per-module step is `Module._load_from_state_dict`, which subclasses
override to read old formats.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.nn.parameter import Parameter
from lazytorch.ops._core import ComplexBase
from lazytorch.tensor import Tensor

if TYPE_CHECKING:
    from lazytorch.nn.modules.module import Module

__all__ = ["load_local_state", "load_state_dict", "save_local_state", "state_dict"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not use."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def save_local_state(
    module: Module, destination: dict[str, Any], prefix: str, keep_vars: bool
) -> None:
    """The module's own parameters, then its persistent buffers (None entries skipped)."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()  # type: ignore[attr-defined]
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()  # type: ignore[attr-defined]


def state_dict(module: Module, destination: Any, prefix: str, keep_vars: bool) -> Any:
    """Fill `destination` (a new OrderedDict when None) with the module tree's state."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(
                destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
            )
    for hook in module._state_dict_hooks.values():
        hook(module, destination, prefix, local_metadata)
    return destination


def load_local_state(
    module: Module,
    state_dict: dict[str, Any],
    prefix: str,
    local_metadata: dict[str, Any],
    strict: bool,
    missing_keys: list[str],
    unexpected_keys: list[str],
    error_msgs: list[str],
) -> None:
    """Copy the module's own entries of `state_dict` into its tensors, in place."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(
            module,
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )
    persistent = {
        k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set
    }
    local_state = {
        k: v
        for k, v in itertools.chain(module._parameters.items(), persistent.items())
        if v is not None
    }
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, (Tensor, ComplexBase)):  # complex: a Fourier layer's
            error_msgs.append(
                f'While copying the parameter named "{key}", expected lazytorch.Tensor or '
                f"Tensor-like object from checkpoint but received {type(input_param)}"
            )
            continue
        # torch reads a 1-element 1-d tensor into a 0-d parameter (old checkpoints)
        if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
            input_param = input_param[0]  # type: ignore[index]
        if tuple(input_param.shape) != tuple(param.shape):
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                f"from checkpoint, the shape in current model is {param.shape}."
            )
            continue
        if local_metadata.get("assign_to_params_buffers", False):
            # torch's assign=True: the module takes the checkpoint's tensor itself (its
            # dtype and device), a Parameter keeping the old one's requires_grad
            if isinstance(param, Parameter):
                if not isinstance(input_param, Parameter):
                    input_param = Parameter(input_param, requires_grad=param.requires_grad)
                else:
                    input_param.requires_grad_(param.requires_grad)
            setattr(module, name, input_param)
            continue
        if param.is_meta and not input_param.is_meta:
            warnings.warn(
                f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                "parameter in the current model, which is a no-op. (Did you mean to pass "
                "`assign=True` to assign items in the state dictionary to their "
                "corresponding key in the module instead of copying them in place?)",
                stacklevel=4,
            )
        try:
            with no_grad():
                param.copy_(input_param)  # type: ignore[attr-defined]
        except Exception as ex:
            error_msgs.append(
                f'While copying the parameter named "{key}", whose dimensions in the model '
                f"are {param.size()} and whose dimensions in the checkpoint are "
                f"{input_param.size()}, an exception occurred : {ex.args}."
            )
    if strict:
        for key in state_dict:
            if key.startswith(prefix):
                input_name = key[len(prefix) :].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(
    module: Module, state_dict: Mapping[str, Any], strict: bool, assign: bool = False
) -> _IncompatibleKeys:
    """Load the module tree from `state_dict`; raise torch's error on a strict mismatch
    or any copy problem; return the missing and unexpected keys. With `assign`, the
    module's parameters and buffers become the checkpoint's tensors instead of copies."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)

    def load(m: Module, local_state_dict: dict[str, Any], prefix: str = "") -> None:
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        # strict=True here: the keys are always collected; `strict` decides what raises
        m._load_from_state_dict(
            local_state_dict,
            prefix,
            local_metadata,
            True,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )
        for name, child in m._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state_dict = {
                    k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
                }
                load(child, child_state_dict, child_prefix)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in m._load_state_dict_post_hooks.values():
            hook(m, incompatible)

    load(module, OrderedDict(state_dict))
    if strict:
        if unexpected_keys:
            keys = ", ".join(f'"{k}"' for k in unexpected_keys)
            error_msgs.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
        if missing_keys:
            keys = ", ".join(f'"{k}"' for k in missing_keys)
            error_msgs.insert(0, f"Missing key(s) in state_dict: {keys}. ")
    if error_msgs:
        raise RuntimeError(
            "Error(s) in loading state_dict for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(error_msgs)
            )
        )
    return _IncompatibleKeys(missing_keys, unexpected_keys)
