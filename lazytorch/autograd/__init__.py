"""Autograd: reverse mode as a transformation of the lazy graph.

``loss.backward()`` and ``lazytorch.autograd.grad`` record the gradient computation as
ordinary lazy nodes (one vjp rule per primitive, `lazytorch.autograd.rules`), so forward,
backward and the optimizer update are scheduled and compiled as one program when the step
is materialized. The grad-mode switches (``no_grad``, ``enable_grad``, ...) are read when an
op is recorded, as in torch.

>>> import lazytorch
>>> x = lazytorch.tensor([0.5, 2.0], requires_grad=True)
>>> (gx,) = lazytorch.autograd.grad((x * x).sum(), x)
>>> gx
tensor([1., 4.])
"""

from lazytorch.autograd import forward_ad, function, graph
from lazytorch.autograd import saved as saved  # registers the runtime's before-cut hook
from lazytorch.autograd import tensor_methods as tensor_methods  # declares Tensor.backward & co
from lazytorch.autograd.checks import (
    GradcheckError,
    detect_anomaly,
    gradcheck,
    gradgradcheck,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from lazytorch.autograd.engine import backward, grad
from lazytorch.autograd.function import Function
from lazytorch.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from lazytorch.autograd.variable import Variable

__all__ = [
    "Function",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "profiler",
    "set_detect_anomaly",
    "set_grad_enabled",
]


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr

_missing = _module_getattr(__name__)
# torch.autograd.functional and torch.autograd.profiler are tools built on the whole
# library (ops, the runtime): loaded at first use, like torch's own lazy submodules.
_LAZY_SUBMODULES = ("functional", "profiler")


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _missing(name)
