"""``torch.nn.parallel``: ``DataParallel`` on one process is the module itself.

lazytorch runs one program per process on one device, so ``DataParallel(model)`` calls
`model` directly (torch does the same when it sees one device) and keeps it as
``.module``, so state_dict keys carry torch's ``module.`` prefix. Training across processes
(``DistributedDataParallel``) is not available yet: constructing one raises, naming it.

>>> import lazytorch
>>> m = lazytorch.nn.parallel.DataParallel(lazytorch.nn.Linear(2, 1))
>>> list(m.state_dict())
['module.weight', 'module.bias']
"""

from __future__ import annotations

from typing import Any

from lazytorch.nn.modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Any = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: Any = None,
) -> Any:
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))


class DistributedDataParallel(Module):
    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "torch.nn.parallel.DistributedDataParallel: lazytorch has no multi-process "
            "training yet; run one process (the model itself, or nn.DataParallel)"
        )
