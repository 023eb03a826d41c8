"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "PixelShuffle",
    "PixelUnshuffle",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]


class Upsample(Module):
    """F.interpolate as a module: resize to `size` or by `scale_factor`.

    >>> import lazytorch
    >>> up = lazytorch.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> up(lazytorch.ones(1, 1, 2, 3)).shape
    lazytorch.Size([1, 1, 4, 6])
    """

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-d upsampling (Upsample with mode='nearest').

    >>> import lazytorch
    >>> lazytorch.nn.UpsamplingNearest2d(scale_factor=2)(lazytorch.ones(1, 1, 2, 2)).shape
    lazytorch.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-d upsampling with align_corners=True.

    >>> import lazytorch
    >>> lazytorch.nn.UpsamplingBilinear2d(size=(3, 3))(lazytorch.ones(1, 1, 2, 2)).shape
    lazytorch.Size([1, 1, 3, 3])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r).

    >>> import lazytorch
    >>> shuffle = lazytorch.nn.PixelShuffle(2)
    >>> shuffle
    PixelShuffle(upscale_factor=2)
    >>> shuffle(lazytorch.ones(1, 8, 3, 3)).shape
    lazytorch.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W).

    >>> import lazytorch
    >>> lazytorch.nn.PixelUnshuffle(2)(lazytorch.ones(1, 2, 6, 6)).shape
    lazytorch.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
