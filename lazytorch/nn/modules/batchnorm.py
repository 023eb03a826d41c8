"""BatchNorm1d, BatchNorm2d, BatchNorm3d, and SyncBatchNorm (BatchNorm on one process).

In training mode the batch statistics normalize the input and update the running
statistics in place (``running = (1 - momentum) * running + momentum * batch``, the
variance unbiased), as torch does. The updates are lazy like everything else: they are
recorded with the forward and computed at the next materialization that needs them.

`_NormBase` holds what every norm with running statistics shares (the parameters, the
buffers, their reset and the checkpoint-version handling); InstanceNorm builds on it too.
"""

from __future__ import annotations

from typing import Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Per-channel affine parameters and (with `track_running_stats`) running statistics."""

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(C.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(C.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", C.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", C.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", C.tensor(0, dtype=dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to 0, running variance to 1, batch count to 0."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight to ones, bias to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats:
            # num_batches_tracked arrived in version 2: older checkpoints lack it
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else C.tensor(0, dtype=dt.int64)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    """Normalize with the batch's statistics in training (updating the running ones), with
    the running statistics in eval."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor: Any = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # cumulative average: 1/count, a lazy value (torch reads the count here)
                factor = 1.0 / self.num_batches_tracked.double()
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        update = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if update else None,
            self.running_var if update else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input, per channel C.

    >>> import lazytorch
    >>> bn = lazytorch.nn.BatchNorm1d(3)
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> _ = bn(lazytorch.arange(6.0).reshape(2, 3))
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.1500, 0.2500, 0.3500]), tensor(1))
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input, per channel C.

    >>> import lazytorch
    >>> bn = lazytorch.nn.BatchNorm2d(4, momentum=None)
    >>> bn(lazytorch.randn(8, 4, 5, 5)).shape
    lazytorch.Size([8, 4, 5, 5])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input, per channel C.

    >>> import lazytorch
    >>> bn = lazytorch.nn.BatchNorm3d(2)
    >>> bn(lazytorch.randn(3, 2, 2, 2, 2)).shape
    lazytorch.Size([3, 2, 2, 2, 2])
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over any (N, C, ...) input whose statistics torch synchronizes across
    processes. On one process torch's SyncBatchNorm is plain BatchNorm, and so is this.
    Synchronizing statistics across ranks (a differentiable all_reduce) is not built yet:
    training one in a process group of more than one rank raises rather than compute
    per-rank statistics silently (`process_group` is otherwise unused).

    >>> import lazytorch
    >>> model = lazytorch.nn.Sequential(lazytorch.nn.Conv2d(1, 2, 1), lazytorch.nn.BatchNorm2d(2))
    >>> lazytorch.nn.SyncBatchNorm.convert_sync_batchnorm(model)[1]
    SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any | None = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if self.training:
            import sys

            dist = sys.modules.get("lazytorch.distributed")  # never imported from here
            if dist is not None and dist.is_initialized():
                world = dist.get_world_size(self.process_group)
                if world > 1:
                    raise NotImplementedError(
                        f"SyncBatchNorm: synchronizing batch statistics across {world} ranks "
                        "is not supported yet; use BatchNorm (statistics per rank, as "
                        "DistributedDataParallel does without SyncBatchNorm) or train on one "
                        "process"
                    )

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm*d in it replaced by a SyncBatchNorm holding the
        same parameters and buffers (the module itself if it is one), as torch."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
