"""``GradScaler``: loss scaling for float16 training, torch's rules and state.

The contract (torch's ``torch.amp.GradScaler``):

* ``scale(outputs)`` multiplies a tensor, or the tensors of nested lists/tuples, by the
  scale (a float32 0-d tensor, ``init_scale`` at first);
* ``unscale_(optimizer)`` multiplies the optimizer's gradients by ``1/scale`` (the
  reciprocal taken in float64, rounded to float32, as torch) and records whether any is
  inf or NaN; once per optimizer per ``update()`` (a second call raises RuntimeError);
* ``step(optimizer)`` unscales if the user did not, then reads the inf/NaN flag — the one
  sync of the step, as torch's ``.item()`` — and runs ``optimizer.step()`` only when every
  gradient is finite. The unscale and the check are lazy ops: they land in ONE program with
  the backward pass that made the gradients (`lazytorch.materialize` of the flag and the
  gradients together), and the optimizer's update is recorded after;
* ``update(new_scale=None)`` applies ``_amp_update_scale_``: on an inf/NaN the scale is
  multiplied by ``backoff_factor`` and the growth tracker reset; after ``growth_interval``
  clean steps in a row it is multiplied by ``growth_factor`` (if still finite);
* ``state_dict``/``load_state_dict`` with torch's keys; disabled, every method passes
  through (``scale(x)`` is `x`, ``get_scale()`` is 1.0, ``state_dict()`` is ``{}``), and a
  cuda scaler on a machine without CUDA disables itself with torch's warning.

>>> import lazytorch
>>> scaler = lazytorch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=1)
>>> w = lazytorch.nn.Parameter(lazytorch.ones(2))
>>> opt = lazytorch.optim.SGD([w], lr=0.5)
>>> scaler.scale((w * w).sum()).backward()
>>> scaler.step(opt)        # grads unscaled (2.0 each), then the step
>>> scaler.update()         # one clean step: the scale grows
>>> w.tolist(), scaler.get_scale()
([0.0, 0.0], 8.0)
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

import numpy as np

from lazytorch._devices import find as find_device_module
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.runtime import materialize
from lazytorch.tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in the scaler's step (torch's names)."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """``torch.amp.GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)`` (see the module docstring)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            cuda = find_device_module("cuda")
            if cuda is None or not cuda.is_available():
                warnings.warn(
                    "lazytorch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                    "Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        # the scale as torch keeps it: a float32 value (a 0-d tensor made from it on use)
        self._scale_value: np.float32 | None = None
        self._scale_tensor: Tensor | None = None
        self._growth_tracker: int | None = None
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(
            _refresh_per_optimizer_state
        )

    # -- the scale --------------------------------------------------------------------------------
    def _lazy_init_scale_growth_tracker(self) -> None:
        self._scale_value = np.float32(self._init_scale)
        self._scale_tensor = None
        self._growth_tracker = self._init_growth_tracker

    def _scale(self) -> Tensor:
        if self._scale_value is None:
            self._lazy_init_scale_growth_tracker()
        if self._scale_tensor is None:
            self._scale_tensor = C.tensor(float(self._scale_value), dtype=dt.float32)
        return self._scale_tensor

    def _set_scale(self, value: Any) -> None:
        self._scale_value = np.float32(value)
        self._scale_tensor = None

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or nested lists/tuples of tensors) times the scale."""
        if not self._enabled:
            return outputs
        scale = self._scale()
        if isinstance(outputs, Tensor):
            return E.mul(outputs, scale)

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                return E.mul(val, scale)
            if isinstance(val, (list, tuple)):
                return type(val)(apply_scale(v) for v in val)
            if hasattr(val, "__iter__") and not isinstance(val, (str, bytes)):
                return map(apply_scale, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # -- unscale and step ------------------------------------------------------------------------
    def _grads(self, optimizer: Any) -> list[Tensor]:
        return [
            p.grad
            for group in optimizer.param_groups
            for p in group["params"]
            if getattr(p, "grad", None) is not None
        ]

    def unscale_(self, optimizer: Any) -> None:
        """Divide `optimizer`'s gradients by the scale, in place, recording the inf/NaN flag
        (lazily: nothing runs until `step` reads the flag)."""
        if not self._enabled:
            return
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale_value is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  " + _NO_SCALE)
        inv_scale = float(np.float32(1.0 / np.float64(self._scale_value)))
        flags = []
        for g in self._grads(optimizer):
            if g.dtype is dt.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
            flags.append(E.logical_not(R.all(E.isfinite(g))))
            g.mul_(inv_scale)  # as torch: every gradient is unscaled, finite or not
        found = R.any(S.stack(flags)) if flags else C.tensor(False)
        state["found_inf"] = found.to(dt.float32)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` unless a gradient is inf or NaN (then the
        step is skipped and None returned). Unscales first if `unscale_` was not called."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        if self._scale_value is None:
            raise AssertionError("Attempted step but _scale is None.  " + _NO_SCALE)
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        found = state["found_inf"]
        # one program: the backward pass, the unscale and the check (then one read)
        materialize(found, *self._grads(optimizer))
        retval = None
        if not found.item():
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Update the scale: `new_scale` if given, else torch's growth/backoff rule from the
        inf/NaN flags of this iteration's optimizers."""
        if not self._enabled:
            return
        if self._scale_value is None:
            raise AssertionError("Attempted update but _scale is None.  " + _NO_SCALE)
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.dtype is not dt.float32:
                    raise AssertionError(
                        "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                        "torch.FloatTensor with requires_grad=False."
                    )
                if new_scale.requires_grad:
                    raise AssertionError(
                        "new_scale should not require grad: pass a detached tensor or a float."
                    )
                new_scale = new_scale.item()
            self._set_scale(new_scale)
        else:
            found_infs = [
                s["found_inf"]
                for s in self._per_optimizer_states.values()
                if s["found_inf"] is not None
            ]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = any(f.item() for f in found_infs)
            self._update_scale(found_inf)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, found_inf: bool) -> None:
        """torch's ``_amp_update_scale_``, in float32."""
        assert self._scale_value is not None and self._growth_tracker is not None
        if found_inf:
            self._set_scale(self._scale_value * np.float32(self._backoff_factor))
            self._growth_tracker = 0
            return
        successful = self._growth_tracker + 1
        if successful == self._growth_interval:
            grown = self._scale_value * np.float32(self._growth_factor)
            if np.isfinite(grown):
                self._set_scale(grown)
            self._growth_tracker = 0
        else:
            self._growth_tracker = successful

    # -- accessors and state ---------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled; `init_scale` before the first `scale`)."""
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale_value is None else self._scale_value)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """torch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker (``{}`` when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale_value is not None:
            self._set_scale(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker


_NO_SCALE = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
