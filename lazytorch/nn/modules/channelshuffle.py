"""ChannelShuffle: `nn.functional.channel_shuffle` as a module."""

from __future__ import annotations

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Channels split into `groups` and interleaved (ShuffleNet).

    >>> import lazytorch
    >>> lazytorch.nn.ChannelShuffle(2)(lazytorch.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
