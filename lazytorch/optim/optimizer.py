"""The optimizer base: parameter groups, per-parameter state, state dicts, and the step as
the training step's graph cut.

An update is recorded as in-place ops under ``no_grad`` — nothing computes while it is
recorded — and ``step()`` ends with ``lazytorch.materialize()``: the forward, the backward,
the new parameters and the new optimizer state run as one compiled program, the way
torch_xla's ``mark_step`` cuts a training step. Hyperparameters (``lr``, betas, the step
count) enter that program as Python numbers, which are program inputs, so changing them
between steps reuses the compiled program.
"""

from __future__ import annotations

import struct
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from lazytorch import _as_torch
from lazytorch import runtime as _runtime
from lazytorch._config import get_default_dtype
from lazytorch.autograd.engine import stop_gradient, zeroed_sparse_rows
from lazytorch.autograd.grad_mode import enable_grad, no_grad
from lazytorch.ir.dtypes import bfloat16, float16, float32
from lazytorch.ops._core import HostScalar, wrap
from lazytorch.ops.complex import ComplexTensor
from lazytorch.runtime import materialize
from lazytorch.tensor import Tensor

__all__ = ["Optimizer", "ParamsT", "required"]

# State entries lazytorch keeps on the host as Python numbers (torch keeps 0-d tensors):
# they feed host-side formulas and enter the program as inputs.
HOST_SCALAR_STATE = ("step", "mu_product", "eta", "mu")

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict = dict[str, Any]


class _RequiredParameter:
    """Marks a default that every parameter group must set (torch's ``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def typename(obj: Any) -> str:
    """torch.typename: ``FloatTensor``-style names for tensors, the qualified type otherwise."""
    if isinstance(obj, Tensor):
        return f"{_as_torch.NAME}.{obj.dtype.legacy_name}Tensor"
    module = type(obj).__module__
    qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def same_value(t: Tensor) -> Tensor:
    """A new tensor with t's current value and no autograd history, sharing its node.

    The functional ``t.detach().clone()``: nodes are immutable, so sharing one is a copy
    that costs nothing, and later in-place writes to either tensor rebind only that tensor.
    """
    return wrap(stop_gradient(t._node))


def check_number(name: str, value: Any) -> None:
    """lazytorch takes hyperparameters as Python numbers (program inputs), not tensors."""
    if isinstance(value, Tensor):
        raise TypeError(
            f"lazytorch.optim takes {name} as a Python number, not a Tensor: a number is "
            "already a program input, so changing it between steps does not recompile"
        )


def check_adam_family(
    lr: float, betas: tuple[float, float], eps: float, weight_decay: float
) -> None:
    """torch's range checks, in torch's order and words, for Adam and its relatives."""
    if not lr >= 0.0:  # (NaN fails too)
        raise ValueError(f"Invalid learning rate: {lr}")
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def refuse_differentiable(optimizer: Any, differentiable: bool) -> None:
    """lazytorch's optimizers do not record their update for differentiation."""
    if differentiable:
        raise NotImplementedError(
            f"lazytorch.optim.{type(optimizer).__name__} does not support differentiable=True"
        )


def as_scalar_dtype(value: float, dtype: Any = None) -> float:
    """`value` rounded to `dtype` (by default the default dtype), as torch's 0-d float
    state tensors hold it (``mu_product`` of NAdam, ``eta`` and ``mu`` of ASGD), so host
    formulas match torch."""
    dtype = get_default_dtype() if dtype is None else dtype
    if dtype is float32:
        return struct.unpack("f", struct.pack("f", value))[0]
    if dtype is float16:
        return struct.unpack("e", struct.pack("e", value))[0]
    if dtype is bfloat16:
        import numpy as np

        return float(np.asarray(value, dtype=bfloat16.np))
    return float(value)


class Optimizer:
    """Base class of optimizers: holds ``param_groups`` and per-parameter ``state``.

    `params` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups) whose keys override `defaults` for that group. A subclass implements
    ``_step_group(group)``, recording its update with in-place ops (the base runs it under
    ``no_grad`` for every group, then cuts the graph). A subclass that overrides ``step``
    itself, as torch optimizers do, should end it with ``lazytorch.materialize()``.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    >>> b = lazytorch.tensor([0.5], requires_grad=True)
    >>> opt = SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    >>> opt.state_dict()["param_groups"][1]["params"]
    [1]
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + typename(params)
            )
        # Tensors hash by identity, so the state is keyed by the parameter object.
        self.state: defaultdict[Any, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- groups ------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with ``"params"`` and per-group options).

        >>> import lazytorch
        >>> from lazytorch.optim import SGD
        >>> opt = SGD([lazytorch.zeros(2)], lr=0.1)
        >>> opt.add_param_group({"params": lazytorch.zeros(3), "lr": 1.0})
        >>> len(opt.param_groups), opt.param_groups[1]["momentum"]
        (2, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        # torch's optimizers update a complex parameter as view_as_real(param): ours update
        # its pair of real parts. An optimizer with a step of its own (a script's Adam, as
        # the Fourier neural operator's) gets the complex parameter itself, as in torch.
        as_real = type(self).step is Optimizer.step
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                param = param[1]
            tensors.append(param._ri if as_real and type(param) is ComplexTensor else param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names

        for param in tensors:
            if type(param) is ComplexTensor:
                continue  # (a complex parameter for a step of the script's own)
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and the step ----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (the default), or to zeros.

        Zeros are written in place (``p.grad.zero_()``), so a tensor that holds the old
        ``.grad`` sees them; they are lazy and cost nothing until the next step's program.

        >>> import lazytorch
        >>> from lazytorch.optim import SGD
        >>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> opt = SGD([w], lr=0.1)
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    # torch detaches the gradient first: a leaf stops requiring grad, a
                    # gradient with a history (create_graph=True) loses it (an in-place
                    # write in no_grad alone keeps a non-leaf's history, as in torch)
                    if g.grad_fn is not None:
                        g.detach_()
                    elif g.requires_grad:
                        g.requires_grad_(False)
                    with no_grad():
                        g.zero_()
                    zeroed_sparse_rows(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Record one update of every parameter that has a ``.grad``, then cut the graph.

        The update is recorded as in-place ops under ``no_grad`` and ends with
        ``lazytorch.materialize()``: the whole training step (forward, backward, update)
        computes here as one program. `closure`, if given, re-evaluates the model under
        grad mode and returns the loss, which ``step`` returns (computed by the same cut).

        >>> import lazytorch
        >>> from lazytorch.optim import SGD
        >>> w = lazytorch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.25)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure).item()
        5.0
        >>> w.is_materialized, w.detach()
        (True, tensor([ 0.5000, -1.0000]))
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        materialize()
        return loss

    def _step_group(self, group: dict[str, Any]) -> None:
        """Record the update of one parameter group (in-place ops; grad mode is off)."""
        raise NotImplementedError

    def _host_numbers(
        self,
        group: dict[str, Any],
        params: list[Tensor],
        numbers: Callable[[dict[str, Any], dict[str, Any]], tuple[float, ...]],
        count_steps: bool = True,
    ) -> list[tuple[float, ...]]:
        """Advance each parameter's ``state["step"]`` (unless not `count_steps`); then
        ``numbers(state, group)``, the host-side numbers of its update that depend on the
        step count or on ``lr``.

        Under a `lazytorch.compile` step capture the numbers come back as `HostScalar`s and
        the advance is registered as a provider, which a replay calls instead of this
        Python (lazytorch._compile.step): a subclass using this lists ``"step"`` in
        ``_host_state`` and ``"lr"`` in ``_host_hyper``, and passes every number it returns
        to an op as it is (a float derived from one is refused by the capture).
        """
        state = self.state

        def advance() -> list[tuple[float, ...]]:
            out = []
            for p in params:
                if count_steps:
                    st = state[p]
                    st["step"] += 1
                else:  # (no state made for a parameter that keeps none)
                    st = state.get(p, {})
                out.append(numbers(st, group))
            return out

        values = advance()
        hooks = _runtime._compile_trace
        k = hooks.host_provider(advance) if hooks is not None else None
        if k is None:
            return values
        # Only floats: an int lr is guarded by value instead (lazytorch._compile.free).
        return [
            tuple(HostScalar(v, (k, i, j)) if type(v) is float else v for j, v in enumerate(row))
            for i, row in enumerate(values)
        ]

    # -- state dicts ---------------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """The optimizer's state: ``{'state': {index: {...}}, 'param_groups': [...]}``.

        Parameters are named by their index in the order of the groups (torch's layout), and
        the parameters themselves are not saved. The state's tensors are snapshots: later
        steps do not change a state dict already taken (they share the computed values, so
        taking one copies nothing).

        >>> import lazytorch
        >>> from lazytorch.optim import SGD
        >>> w = lazytorch.tensor([1.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = lazytorch.tensor([2.0])
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([2.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["lr"]
        ([0], 0.1)
        """
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): _copy_state(v)
            for k, v in self.state.items()
        }
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state from ``state_dict()`` (of an optimizer over parameters of the same
        groups and sizes). State tensors are converted to their parameter's floating dtype.

        >>> import lazytorch
        >>> from lazytorch.optim import SGD
        >>> w = lazytorch.tensor([1.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.1)
        >>> opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.5, "params": [0]}]})
        >>> opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w
        (0.5, True)
        """
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})


def _copy_state(value: Any) -> Any:
    """A snapshot of a state entry: new tensors sharing the values, containers copied."""
    if isinstance(value, Tensor):
        return same_value(value)
    if isinstance(value, dict):
        return {k: _copy_state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy_state(v) for v in value)
    return value


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """torch's load-time cast: state tensors take a floating parameter's dtype; a ``step``
    (and the other host scalars, ``HOST_SCALAR_STATE``) becomes a Python number."""
    if isinstance(value, Tensor):
        if key in HOST_SCALAR_STATE:
            return float(value.item())
        if param.is_floating_point():
            value = value.to(param.dtype)
        return same_value(value)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value
