"""lazytorch.nn: modules, parameters, initialization, utilities and the functional API,
laid out as torch.nn.

>>> import lazytorch
>>> from lazytorch import nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> loss = nn.MSELoss()(model(lazytorch.randn(16, 4)), lazytorch.zeros(16, 1))
>>> loss.backward()
>>> [tuple(p.grad.shape) for p in model.parameters()]
[(8, 4), (8,), (1, 8), (1,)]
"""

from lazytorch.nn import (
    functional,
    init,
    parallel,
    utils,
)
from lazytorch.nn.modules import *  # noqa: F403
from lazytorch.nn.modules import __all__ as _modules_all
from lazytorch.nn.parallel import DataParallel
from lazytorch.nn.parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ = [
    "Buffer",
    "DataParallel",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "init",
    "parallel",
    "utils",
    *_modules_all,
]


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
