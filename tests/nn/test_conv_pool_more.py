"""Convolution (1-d, 3-d, transposed, fold/unfold), 1-d, 3-d and adaptive pooling,
interpolate, grid_sample/affine_grid and pixel shuffle against torch: values (lazy and sync,
each backend), gradients, the errors torch raises, and the modules' parameters, state_dict
keys, repr and outputs.

The functional cases are one table: a name, the call written once for both libraries, and
the input shapes; each case is checked in float32 and differentiated in float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, randn

# torch's own notes on two cases here (an asymmetric 'same' pad; a unit-size affine grid)
pytestmark = [
    pytest.mark.filterwarnings("ignore:Using padding='same'"),
    pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid"),
]


def f(name: str, **kwargs: Any) -> Callable[..., Any]:
    """`lib.nn.functional.<name>(*inputs, **kwargs)` for lib torch or lazytorch."""
    return lambda t, *xs: getattr(t.nn.functional, name)(*xs, **kwargs)


CASES: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]] = {
    # convolution
    "conv1d": (f("conv1d"), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv1d_stride_pad_dilation": (
        f("conv1d", stride=2, padding=2, dilation=2),
        [(2, 4, 9), (3, 4, 3)],
    ),
    "conv1d_groups_same_even": (f("conv1d", padding="same", groups=2), [(1, 4, 6), (6, 2, 4)]),
    "conv1d_unbatched_valid": (f("conv1d", padding="valid"), [(3, 5), (2, 3, 2), (2,)]),
    "conv3d": (
        f("conv3d", stride=(1, 2, 1), padding=(1, 0, 1), groups=2),
        [(1, 4, 3, 5, 4), (4, 2, 2, 3, 2), (4,)],
    ),
    "conv_transpose1d": (
        f("conv_transpose1d", stride=3, padding=1, output_padding=2),
        [(2, 3, 4), (3, 2, 3), (2,)],
    ),
    "conv_transpose1d_groups_dilation": (
        f("conv_transpose1d", groups=2, dilation=2, output_padding=1, stride=1),
        [(1, 4, 5), (4, 3, 2)],
    ),
    "conv_transpose2d": (
        f("conv_transpose2d", stride=(2, 3), padding=(1, 0), output_padding=(1, 2)),
        [(2, 3, 3, 4), (3, 2, 3, 2), (2,)],
    ),
    "conv_transpose2d_groups_dilation": (
        f("conv_transpose2d", stride=2, padding=1, groups=2, dilation=(2, 1)),
        [(1, 4, 3, 3), (4, 1, 2, 3)],
    ),
    "conv_transpose2d_unbatched": (f("conv_transpose2d", stride=2), [(2, 3, 2), (2, 3, 2, 2)]),
    "conv_transpose3d": (
        f("conv_transpose3d", stride=(2, 1, 2), padding=(0, 1, 0)),
        [(1, 2, 2, 3, 2), (2, 2, 2, 3, 1), (2,)],
    ),
    "unfold": (
        f("unfold", kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        [(2, 3, 5, 6)],
    ),
    "fold": (
        f(
            "fold",
            output_size=(5, 6),
            kernel_size=(2, 3),
            dilation=(1, 2),
            padding=1,
            stride=(2, 1),
        ),
        [(2, 18, 12)],
    ),
    "fold_unbatched": (f("fold", output_size=4, kernel_size=2, stride=2), [(8, 4)]),
    # 1-d pooling
    "max_pool1d": (
        f("max_pool1d", kernel_size=3, stride=2, padding=1, ceil_mode=True),
        [(2, 3, 8)],
    ),
    "max_pool1d_dilation_indices": (
        f("max_pool1d", kernel_size=2, dilation=2, return_indices=True),
        [(3, 7)],
    ),
    "avg_pool1d": (
        f(
            "avg_pool1d",
            kernel_size=3,
            stride=2,
            padding=1,
            ceil_mode=True,
            count_include_pad=False,
        ),
        [(2, 3, 8)],
    ),
    "avg_pool1d_include_pad": (f("avg_pool1d", kernel_size=4, stride=3, padding=2), [(1, 2, 9)]),
    # windows that tile the input (stride = kernel, or one window along a dim), no padding:
    # a reshape and one sum; a global pooling, floor-trimmed edges, a stride-1 single window
    # (GoogLeNet's AvgPool2d(8, stride=1) on 8x8), ceil_mode on exact sizes, a divisor
    "avg_pool2d_tiled_global": (f("avg_pool2d", kernel_size=5), [(2, 3, 5, 5)]),
    "avg_pool2d_tiled_floor": (f("avg_pool2d", kernel_size=(2, 3)), [(2, 3, 5, 7)]),
    "avg_pool2d_tiled_one_window": (
        f("avg_pool2d", kernel_size=(4, 2), stride=(1, 2)),
        [(2, 3, 4, 6)],
    ),
    "avg_pool2d_tiled_ceil_exact_divisor": (
        f("avg_pool2d", kernel_size=2, ceil_mode=True, divisor_override=3),
        [(1, 2, 4, 6)],
    ),
    "avg_pool1d_tiled_unbatched": (f("avg_pool1d", kernel_size=3), [(3, 7)]),
    "avg_pool3d_tiled_unbatched": (f("avg_pool3d", kernel_size=2), [(3, 4, 4, 5)]),
    # 3-d pooling
    "max_pool3d": (
        f("max_pool3d", kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True),
        [(1, 2, 3, 5, 4)],
    ),
    "max_pool3d_dilation_indices": (
        f("max_pool3d", kernel_size=2, dilation=(1, 3, 2), padding=(0, 1, 1), return_indices=True),
        [(2, 3, 7, 5)],
    ),
    "avg_pool3d": (
        f(
            "avg_pool3d",
            kernel_size=(1, 3, 2),
            stride=2,
            padding=(0, 1, 1),
            count_include_pad=False,
        ),
        [(1, 2, 3, 5, 4)],
    ),
    "avg_pool3d_ceil_divisor": (
        f("avg_pool3d", kernel_size=2, ceil_mode=True, divisor_override=3),
        [(2, 3, 5, 3)],
    ),
    # power-average pooling (positive inputs: x^p of a negative x is NaN for fractional p)
    "lp_pool1d": (
        f("lp_pool1d", norm_type=3, kernel_size=3, stride=2, ceil_mode=True),
        [(2, 3, 8)],
    ),
    "lp_pool2d": (f("lp_pool2d", norm_type=2, kernel_size=(2, 3)), [(1, 2, 5, 6)]),
    "lp_pool3d": (f("lp_pool3d", norm_type=1.5, kernel_size=2, stride=1), [(1, 2, 3, 3, 3)]),
    # adaptive pooling: uneven windows (7 -> 3, 5 -> 3), growing (3 -> 5), None
    "adaptive_avg_pool1d": (f("adaptive_avg_pool1d", output_size=3), [(2, 3, 7)]),
    "adaptive_avg_pool1d_grow": (f("adaptive_avg_pool1d", output_size=5), [(2, 3)]),
    "adaptive_avg_pool2d": (f("adaptive_avg_pool2d", output_size=(3, None)), [(2, 3, 7, 5)]),
    "adaptive_avg_pool2d_uneven": (f("adaptive_avg_pool2d", output_size=(4, 3)), [(1, 2, 7, 5)]),
    "adaptive_avg_pool2d_global": (f("adaptive_avg_pool2d", output_size=1), [(2, 3, 4, 4)]),
    "adaptive_max_pool1d": (
        f("adaptive_max_pool1d", output_size=3, return_indices=True),
        [(2, 3, 7)],
    ),
    "adaptive_max_pool2d": (
        f("adaptive_max_pool2d", output_size=(3, 4), return_indices=True),
        [(2, 7, 5)],
    ),
    "adaptive_max_pool3d": (
        f("adaptive_max_pool3d", output_size=(2, None, 3), return_indices=True),
        [(1, 2, 3, 2, 5)],
    ),
    "adaptive_avg_pool3d": (f("adaptive_avg_pool3d", output_size=(2, 1, 3)), [(2, 3, 2, 5)]),
    "adaptive_max_pool2d_none": (f("adaptive_max_pool2d", output_size=(None, 2)), [(1, 2, 3, 5)]),
    # interpolate
    "nearest_scale": (f("interpolate", scale_factor=(1.7, 0.6)), [(1, 2, 5, 6)]),
    "nearest_size_1d": (f("interpolate", size=7), [(2, 3, 4)]),
    "nearest_exact": (f("interpolate", size=(7, 3), mode="nearest-exact"), [(1, 2, 5, 6)]),
    "linear": (f("interpolate", scale_factor=2.5, mode="linear"), [(2, 3, 4)]),
    "linear_align_corners_down": (
        f("interpolate", size=3, mode="linear", align_corners=True),
        [(2, 3, 7)],
    ),
    "bilinear": (f("interpolate", size=(7, 3), mode="bilinear"), [(1, 2, 5, 6)]),
    "bilinear_align_corners": (
        f("interpolate", scale_factor=1.5, mode="bilinear", align_corners=True),
        [(1, 2, 3, 4)],
    ),
    "bilinear_recompute": (
        f("interpolate", scale_factor=1.3, mode="bilinear", recompute_scale_factor=True),
        [(1, 2, 5, 6)],
    ),
    "bicubic": (f("interpolate", size=(7, 4), mode="bicubic"), [(1, 2, 4, 5)]),
    "bicubic_align_corners": (
        f("interpolate", scale_factor=2, mode="bicubic", align_corners=True),
        [(1, 1, 3, 4)],
    ),
    "bilinear_antialias": (
        f("interpolate", size=(3, 4), mode="bilinear", antialias=True),
        [(1, 2, 8, 5)],
    ),
    "bicubic_antialias": (
        f(
            "interpolate",
            scale_factor=(0.4, 1.5),
            mode="bicubic",
            antialias=True,
            align_corners=True,
        ),
        [(1, 2, 7, 3)],
    ),
    "trilinear": (f("interpolate", size=(3, 2, 5), mode="trilinear"), [(1, 2, 2, 3, 4)]),
    "area": (f("interpolate", size=(3, 4), mode="area"), [(1, 2, 7, 5)]),
    # spatial transformer: grid points in [-2, 2), some outside the image
    "grid_sample": (f("grid_sample", align_corners=False), [(2, 3, 4, 5), (2, 3, 2, 2)]),
    "grid_sample_border_aligned": (
        f("grid_sample", padding_mode="border", align_corners=True),
        [(1, 2, 3, 4), (1, 5, 2, 2)],
    ),
    "grid_sample_reflection": (
        f("grid_sample", padding_mode="reflection", align_corners=False),
        [(1, 2, 4, 3), (1, 3, 3, 2)],
    ),
    "grid_sample_nearest_reflection_aligned": (
        f("grid_sample", mode="nearest", padding_mode="reflection", align_corners=True),
        [(1, 2, 4, 3), (1, 3, 3, 2)],
    ),
    "grid_sample_bicubic": (
        f("grid_sample", mode="bicubic", align_corners=False),
        [(2, 3, 4, 5), (2, 3, 2, 2)],
    ),
    "grid_sample_bicubic_border_aligned": (
        f("grid_sample", mode="bicubic", padding_mode="border", align_corners=True),
        [(1, 2, 3, 4), (1, 5, 2, 2)],
    ),
    "grid_sample_bicubic_reflection": (
        f("grid_sample", mode="bicubic", padding_mode="reflection", align_corners=False),
        [(1, 2, 4, 3), (1, 3, 3, 2)],
    ),
    "affine_grid": (f("affine_grid", size=(2, 3, 4, 5), align_corners=False), [(2, 2, 3)]),
    "affine_grid_aligned": (f("affine_grid", size=(1, 1, 3, 1), align_corners=True), [(1, 2, 3)]),
    # pixel shuffle
    "pixel_shuffle": (f("pixel_shuffle", upscale_factor=2), [(2, 8, 3, 2)]),
    "pixel_shuffle_3d": (f("pixel_shuffle", upscale_factor=3), [(9, 2, 1)]),
    "pixel_unshuffle": (f("pixel_unshuffle", downscale_factor=2), [(2, 3, 4, 6)]),
}


@pytest.mark.parametrize("name", CASES)
def test_values_float32(name: str) -> None:
    fn, shapes = CASES[name]
    want = check(fn, *[randn(*s) for s in shapes], atol=1e-5, rtol=1e-5)
    assert want is not None, f"{name}: torch refused the case"  # a value case must run


# Cases whose gradient another case's already exercises (the same code path with other
# sizes), left out of the gradient run to keep the file fast.
SAME_GRADIENT_PATH = {
    "conv1d_unbatched_valid",
    "conv_transpose2d_unbatched",
    "fold_unbatched",
    "avg_pool1d_include_pad",
    "avg_pool1d_tiled_unbatched",
    "adaptive_avg_pool1d_grow",
    "adaptive_avg_pool2d_global",
    "adaptive_max_pool2d_none",
    "nearest_size_1d",
    "linear_align_corners_down",
    "bilinear_recompute",
    "bicubic_align_corners",
    "pixel_shuffle_3d",
}


@pytest.mark.parametrize("name", [n for n in CASES if n not in SAME_GRADIENT_PATH])
def test_grads_float64(name: str) -> None:
    fn, shapes = CASES[name]
    check_grad(fn, *[randn(*s, dtype="float64") for s in shapes])


def test_float64_values_and_sync_grads() -> None:
    x, w = randn(2, 3, 3, 4, dtype="float64"), randn(3, 2, 3, 2, dtype="float64")
    check(f("conv_transpose2d", stride=2, padding=1, output_padding=1), x, w)
    check(f("interpolate", size=(5, 7), mode="bicubic"), x)
    check_grad(f("adaptive_max_pool2d", output_size=(2, 3)), x, modes=("sync",))
    check_grad(
        f("conv1d", stride=2),
        randn(2, 3, 7, dtype="float64"),
        randn(2, 3, 3, dtype="float64"),
        modes=("sync",),
    )


def test_adaptive_max_ties_and_nan_follow_torch() -> None:
    # ties: the first max in row-major order; NaN: the last NaN wins
    x = np.array([[[1, 3, 3, 0, 2], [3, 1, 0, 3, 2], [0, 0, 0, 0, 0]]], dtype="float32")
    check(f("adaptive_max_pool2d", output_size=(2, 2), return_indices=True), x)
    check_grad(f("adaptive_max_pool2d", output_size=(2, 2)), x.astype("float64"))
    y = np.array([[1, np.nan, 2, np.nan, 5, 0, 1]], dtype="float32")
    check(f("adaptive_max_pool1d", output_size=3, return_indices=True), y)


def test_empty_batches_and_sizes() -> None:
    empty = np.zeros((0, 3, 2, 2), dtype="float32")
    check(f("conv_transpose2d", stride=2), empty, randn(3, 2, 3, 3))
    check(f("interpolate", size=(3, 4), mode="bilinear"), empty)
    check(f("adaptive_max_pool2d", output_size=(2, 3)), empty)
    check(f("adaptive_avg_pool1d", output_size=0), randn(2, 3, 5))
    check(f("adaptive_max_pool1d", output_size=0), randn(2, 3, 5))


def test_size_one_and_float16() -> None:
    check(f("interpolate", size=4, mode="linear", align_corners=True), randn(1, 2, 1))
    check(f("interpolate", size=1, mode="linear", align_corners=True), randn(1, 2, 5))
    check(f("interpolate", size=(4, 3), mode="bicubic"), randn(1, 2, 1, 1))
    x16 = randn(1, 2, 3, 3, dtype="float16")
    check(f("interpolate", scale_factor=2, mode="bilinear"), x16, atol=2e-3, rtol=2e-3)
    check(f("conv_transpose2d"), x16, randn(2, 2, 2, 2, dtype="float16"), atol=2e-3, rtol=2e-3)


def test_nearest_keeps_integer_dtypes() -> None:
    x = np.arange(24, dtype="uint8").reshape(1, 2, 3, 4)
    check(f("interpolate", scale_factor=2), x)
    check(f("interpolate", size=(2, 5), mode="nearest-exact"), x)


ERRORS: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]] = {
    "conv1d_channels": (f("conv1d"), [(2, 3, 7), (4, 2, 3)]),
    "conv1d_rank": (f("conv1d"), [(2, 3, 7, 2), (4, 3, 3)]),
    "conv1d_same_strided": (f("conv1d", padding="same", stride=2), [(2, 3, 7), (4, 3, 3)]),
    "conv1d_kernel_too_big": (f("conv1d"), [(2, 3, 2), (4, 3, 3)]),
    "conv3d_groups": (f("conv3d", groups=2), [(1, 3, 3, 3, 3), (4, 1, 2, 2, 2)]),
    "conv_transpose2d_channels": (f("conv_transpose2d"), [(1, 3, 3, 3), (4, 2, 2, 2)]),
    "conv_transpose2d_output_padding": (
        f("conv_transpose2d", stride=2, output_padding=2),
        [(1, 4, 3, 3), (4, 2, 2, 2)],
    ),
    "conv_transpose1d_rank": (f("conv_transpose1d"), [(4, 3, 3, 3), (4, 2, 2)]),
    "max_pool1d_rank": (f("max_pool1d", kernel_size=2), [(2, 3, 4, 4)]),
    "max_pool1d_pad_too_big": (f("max_pool1d", kernel_size=2, padding=2), [(2, 3, 8)]),
    "max_pool1d_pad_dilated": (f("max_pool1d", kernel_size=2, padding=2, dilation=3), [(1, 2, 9)]),
    "max_pool3d_pad_too_big": (f("max_pool3d", kernel_size=2, padding=2), [(1, 2, 4, 4, 4)]),
    "max_pool3d_pad_dilated": (
        f("max_pool3d", kernel_size=2, padding=(0, 2, 0), dilation=3),
        [(1, 2, 4, 8, 4)],
    ),
    "max_pool3d_rank": (f("max_pool3d", kernel_size=2), [(4, 4)]),
    "avg_pool3d_too_small": (f("avg_pool3d", kernel_size=(2, 5, 2)), [(1, 2, 3, 4, 4)]),
    "avg_pool3d_divisor_zero": (f("avg_pool3d", kernel_size=2, divisor_override=0), [(2, 4, 4, 4)]),
    "avg_pool1d_too_small": (f("avg_pool1d", kernel_size=5), [(2, 3, 4)]),
    "adaptive_avg_pool2d_rank": (f("adaptive_avg_pool2d", output_size=2), [(4, 4)]),
    "adaptive_max_pool1d_rank": (f("adaptive_max_pool1d", output_size=2), [(1, 2, 4, 4)]),
    "interpolate_size_and_scale": (f("interpolate", size=4, scale_factor=2), [(1, 2, 3)]),
    "interpolate_neither": (f("interpolate"), [(1, 2, 3)]),
    "interpolate_size_length": (f("interpolate", size=(4, 4)), [(1, 2, 3)]),
    "interpolate_align_nearest": (f("interpolate", size=4, align_corners=True), [(1, 2, 3)]),
    "interpolate_bilinear_3d": (f("interpolate", size=4, mode="bilinear"), [(1, 2, 3)]),
    "interpolate_bad_mode": (f("interpolate", size=4, mode="cubic"), [(1, 2, 3)]),
    "interpolate_antialias_nearest": (f("interpolate", size=2, antialias=True), [(1, 2, 3, 3)]),
    "interpolate_2d_input": (f("interpolate", size=4), [(2, 3)]),
    "pixel_shuffle_channels": (f("pixel_shuffle", upscale_factor=2), [(1, 6, 2, 2)]),
    "pixel_shuffle_rank": (f("pixel_shuffle", upscale_factor=2), [(4, 2)]),
    "pixel_unshuffle_size": (f("pixel_unshuffle", downscale_factor=2), [(1, 1, 3, 4)]),
    "grid_sample_mode": (
        f("grid_sample", mode="area", align_corners=False),
        [(1, 2, 3, 3), (1, 2, 2, 2)],
    ),
    "grid_sample_padding": (
        f("grid_sample", padding_mode="circular", align_corners=False),
        [(1, 2, 3, 3), (1, 2, 2, 2)],
    ),
    "grid_sample_batch": (f("grid_sample", align_corners=False), [(2, 2, 3, 3), (1, 2, 2, 2)]),
    "grid_sample_rank": (f("grid_sample", align_corners=False), [(2, 3, 3), (2, 2, 2, 2)]),
    "affine_grid_theta": (f("affine_grid", size=(1, 1, 3, 3), align_corners=False), [(1, 3, 3)]),
    "affine_grid_size": (f("affine_grid", size=(1, 3, 3), align_corners=False), [(1, 2, 3)]),
    "fold_blocks": (f("fold", output_size=(4, 4), kernel_size=2), [(1, 8, 5)]),
    "fold_channels": (f("fold", output_size=(3, 3), kernel_size=2), [(1, 6, 4)]),
    "unfold_rank": (f("unfold", kernel_size=2), [(4, 4)]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name: str) -> None:
    fn, shapes = ERRORS[name]
    with pytest.raises(Exception):  # noqa: B017 - the case must be one torch refuses
        fn(torch, *[torch.zeros(s) for s in shapes])
    check(fn, *[randn(*s) for s in shapes], modes=("lazy",))


def test_pool3d_dtypes() -> None:
    x = np.arange(60).reshape(1, 3, 4, 5) % 7
    check(f("max_pool3d", kernel_size=2, padding=1), x.astype("uint8"))
    check(f("avg_pool3d", kernel_size=2, padding=1), x.astype("int64"))
    check(f("avg_pool3d", kernel_size=2), x.astype("int32"), modes=("lazy",))  # torch refuses
    # the tiled path (no padding, stride = kernel): integer sums divided toward zero
    check(f("avg_pool3d", kernel_size=2), x.astype("int64") - 3)
    check(f("avg_pool2d", kernel_size=2, divisor_override=3), x.astype("int64") - 3)


def test_tiled_avg_pool_empty_and_float16() -> None:
    check(f("avg_pool2d", kernel_size=2), np.zeros((0, 3, 4, 4), dtype="float32"))
    check(f("avg_pool2d", kernel_size=2), np.zeros((2, 0, 4, 4), dtype="float32"))
    x16 = randn(2, 3, 4, 4, dtype="float16")
    check(f("avg_pool2d", kernel_size=4), x16, atol=2e-3, rtol=2e-3)


def test_grid_default_align_corners_warns_as_torch() -> None:
    theta = np.array([[[1.0, 0.2, 0.1], [-0.3, 0.9, 0.0]]], dtype="float32")
    for lib in (torch, lt):
        with pytest.warns(UserWarning, match="align_corners=False"):
            grid = lib.nn.functional.affine_grid(lib.tensor(theta), (1, 2, 3, 3))
        with pytest.warns(UserWarning, match="align_corners=False"):
            lib.nn.functional.grid_sample(lib.zeros(1, 2, 3, 3), grid)


def test_unit_size_aligned_affine_grid_warns_as_torch() -> None:
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype="float32")
    for lib in (torch, lt):
        with pytest.warns(UserWarning, match="unit-size grids"):
            lib.nn.functional.affine_grid(lib.tensor(theta), (1, 1, 1, 3), align_corners=True)


def test_integer_input_errors() -> None:
    x = np.arange(24, dtype="int64").reshape(1, 2, 3, 4)
    check(f("interpolate", scale_factor=2, mode="bilinear"), x, modes=("lazy",))
    check(f("adaptive_avg_pool2d", output_size=2), x, modes=("lazy",))
    check(f("interpolate", size=(2, 5)), x, modes=("lazy",))


# -- modules --------------------------------------------------------------------------------------
MODULES: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "conv1d": (lambda t: t.nn.Conv1d(4, 6, 3, stride=2, padding=1), (2, 4, 9)),
    "conv1d_same_circular": (
        lambda t: t.nn.Conv1d(4, 2, 4, padding="same", padding_mode="circular", bias=False),
        (2, 4, 7),
    ),
    "conv1d_reflect_groups": (
        lambda t: t.nn.Conv1d(4, 4, 3, padding=2, padding_mode="reflect", groups=2, dilation=2),
        (1, 4, 8),
    ),
    "conv3d_replicate": (
        lambda t: t.nn.Conv3d(2, 3, (2, 3, 1), padding=1, padding_mode="replicate"),
        (1, 2, 3, 4, 3),
    ),
    "conv_transpose1d": (lambda t: t.nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1), (2, 4, 5)),
    "conv_transpose2d": (
        lambda t: t.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, output_padding=1, groups=2),
        (1, 4, 3, 3),
    ),
    "conv_transpose3d": (
        lambda t: t.nn.ConvTranspose3d(2, 3, 2, stride=2, bias=False),
        (1, 2, 2, 2, 2),
    ),
    "max_pool1d": (lambda t: t.nn.MaxPool1d(3, 2, 1, ceil_mode=True), (2, 3, 8)),
    "avg_pool1d": (lambda t: t.nn.AvgPool1d(3, padding=1, count_include_pad=False), (2, 3, 8)),
    "adaptive_avg_pool1d": (lambda t: t.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    "adaptive_avg_pool2d": (lambda t: t.nn.AdaptiveAvgPool2d((None, 3)), (2, 3, 4, 7)),
    "adaptive_avg_pool3d": (lambda t: t.nn.AdaptiveAvgPool3d((1, 2, 3)), (1, 2, 3, 4, 5)),
    "adaptive_max_pool1d": (lambda t: t.nn.AdaptiveMaxPool1d(3, return_indices=True), (2, 3, 7)),
    "adaptive_max_pool2d": (lambda t: t.nn.AdaptiveMaxPool2d(2), (2, 3, 5, 5)),
    "adaptive_max_pool3d": (lambda t: t.nn.AdaptiveMaxPool3d((1, 3, 2)), (1, 2, 2, 4, 3)),
    "max_pool3d": (lambda t: t.nn.MaxPool3d(2, 1, 1, return_indices=True), (1, 2, 3, 3, 4)),
    "avg_pool3d": (lambda t: t.nn.AvgPool3d((1, 2, 2), ceil_mode=True), (1, 2, 3, 3, 5)),
    "upsample": (lambda t: t.nn.Upsample(scale_factor=2), (1, 2, 3, 4)),
    "upsample_linear": (
        lambda t: t.nn.Upsample(size=5, mode="linear", align_corners=True),
        (1, 2, 3),
    ),
    "upsample_bicubic": (
        lambda t: t.nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"),
        (1, 2, 3, 4),
    ),
    "upsampling_nearest2d": (lambda t: t.nn.UpsamplingNearest2d(size=(5, 3)), (1, 2, 3, 4)),
    "upsampling_bilinear2d": (lambda t: t.nn.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 4)),
    "lp_pool2d": (lambda t: t.nn.LPPool2d(2, 3, stride=1, ceil_mode=True), (1, 2, 4, 5)),
    "lp_pool1d": (lambda t: t.nn.LPPool1d(1.5, 2), (1, 2, 5)),
    "pixel_shuffle": (lambda t: t.nn.PixelShuffle(2), (1, 8, 2, 3)),
    "pixel_unshuffle": (lambda t: t.nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    "unfold": (lambda t: t.nn.Unfold((2, 3), padding=1, stride=(1, 2)), (1, 2, 4, 5)),
    "fold": (lambda t: t.nn.Fold((3, 4), 2, dilation=(1, 2)), (2, 8, 4)),
}


@pytest.mark.parametrize("name", MODULES)
def test_module_matches_torch(name: str) -> None:
    ctor, shape = MODULES[name]
    torch.manual_seed(0)
    theirs, ours = ctor(torch).double(), ctor(lt).double()
    assert repr(ours) == repr(theirs)
    t_state, l_state = theirs.state_dict(), ours.state_dict()
    assert list(l_state) == list(t_state)
    for key, value in t_state.items():
        assert tuple(l_state[key].shape) == tuple(value.shape), key
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: lt.tensor(v.numpy().copy()) for k, v in t_state.items()})
    x = randn(*shape, dtype="float64")
    tx, lx = torch.tensor(x, requires_grad=True), lt.tensor(x, requires_grad=True)
    with lt.backend("interpreter"):
        t_out, l_out = theirs(tx), ours(lx)
        t_first = t_out[0] if isinstance(t_out, tuple) else t_out
        l_first = l_out[0] if isinstance(l_out, tuple) else l_out
        np.testing.assert_allclose(
            l_first.detach().numpy(), t_first.detach().numpy(), rtol=1e-10, atol=1e-10
        )
        if isinstance(t_out, tuple):
            np.testing.assert_array_equal(l_out[1].numpy(), t_out[1].numpy())
        cot = np.random.default_rng(5).uniform(0.5, 1.5, t_first.shape)
        (t_first * torch.tensor(cot)).sum().backward()
        (l_first * lt.tensor(cot)).sum().backward()
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
        for (n, tp), (_, lp) in zip(theirs.named_parameters(), ours.named_parameters()):
            np.testing.assert_allclose(
                lp.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-10, err_msg=n
            )


def test_conv_transpose_output_size() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.ConvTranspose2d(3, 2, 3, stride=3, padding=1).double()
    ours = lt.nn.ConvTranspose2d(3, 2, 3, stride=3, padding=1).double()
    ours.load_state_dict({k: lt.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    x = randn(1, 3, 2, 3, dtype="float64")
    for size in [(4, 7), (6, 9), [1, 2, 5, 8]]:
        want = theirs(torch.tensor(x), output_size=size)
        got = ours(lt.tensor(x), output_size=size)
        np.testing.assert_allclose(
            got.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10
        )
    for size in [(3, 7), (4,), (7, 7)]:
        with pytest.raises(ValueError):
            theirs(torch.tensor(x), output_size=size)
        with pytest.raises(ValueError):
            ours(lt.tensor(x), output_size=size)


@pytest.mark.parametrize(
    "ctor",
    [
        lambda t: t.nn.Conv1d(4, 6, 3, groups=4),
        lambda t: t.nn.Conv1d(4, 6, 3, padding="full"),
        lambda t: t.nn.Conv3d(4, 6, 3, padding="same", stride=2),
        lambda t: t.nn.Conv1d(4, 6, 3, padding_mode="mirror"),
        lambda t: t.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
        lambda t: t.nn.ConvTranspose1d(4, 6, 3, groups=3),
    ],
)
def test_module_constructor_errors(ctor: Callable[[Any], Any]) -> None:
    with pytest.raises(ValueError):
        ctor(torch)
    with pytest.raises(ValueError):
        ctor(lt)


@pytest.mark.parametrize("hw", [(28, 28), (7, 12), (33, 16)])
def test_identity_affine_grid_sample_grad_theta_as_torch(hw: tuple[int, int]) -> None:
    # A spatial transformer starts from the identity map, whose (align_corners=False)
    # sampling points fall on pixel centres: grid_sample's gradient in the grid is one-sided
    # there, so which side depends on the last bit of the grid. The grid must be torch's bit
    # for bit (linspace's fused multiply-add, then * (steps - 1) / steps as two roundings).
    h, w = hw
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, h, w)).astype("float32")
    g = rng.standard_normal((2, 3, h, w)).astype("float32")
    theta = np.tile(np.array([[1, 0, 0], [0, 1, 0]], dtype="float32"), (2, 1, 1))
    got = []
    for lib in (torch, lt):
        xt = lib.tensor(x, requires_grad=True)
        tt = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(tt, xt.size(), align_corners=False)
        out = lib.nn.functional.grid_sample(xt, grid, align_corners=False)
        (out * lib.tensor(g)).sum().backward()
        got.append((grid.detach().numpy(), out.detach().numpy(), xt.grad.numpy(), tt.grad.numpy()))
    (tg, to, tx, tth), (lg, lo, lx, lth) = got
    assert np.array_equal(tg, lg)
    np.testing.assert_allclose(lo, to, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lx, tx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lth, tth, rtol=1e-4, atol=1e-3)


# -- max pooling whose windows tile the input: built by reshapes, not one slice per offset ----
TILED_MAX = [
    (1, dict(kernel_size=7)),  # global: max_pool1d(x, x.size(2))
    (1, dict(kernel_size=3)),  # stride = kernel, the tail cut
    (2, dict(kernel_size=(7, 9))),
    (2, dict(kernel_size=(2, 3))),
    (2, dict(kernel_size=(7, 1), stride=(1, 1))),  # one window along H, stride 1 along W
    (3, dict(kernel_size=2)),
]


@pytest.mark.parametrize("n,kw", TILED_MAX, ids=lambda v: str(v))
def test_tiled_max_pool_values_indices_and_gradients(n: int, kw: dict[str, Any]) -> None:
    shape = {1: (2, 3, 7), 2: (2, 3, 7, 9), 3: (1, 2, 4, 4, 4)}[n]
    x = randn(*shape)
    x.flat[0] = np.nan  # the last NaN wins, as in torch
    x.flat[5] = x.flat[6]  # a tie: the first wins
    op = f"max_pool{n}d"
    check(f(op, return_indices=True, **kw), x)
    check_grad(lambda t, a: getattr(t.nn.functional, op)(a, **kw).nan_to_num(), x)
    check(f(op, **kw), (np.arange(np.prod(shape)).reshape(shape) % 11).astype("int32"))


def test_global_max_pool_graph_does_not_grow_with_the_length() -> None:
    # cnn-text-classification pools each filter map over its whole length: the recorded
    # graph was 67 nodes at L=10, 346 at L=80, and new at every batch length
    from lazytorch.ir.program import capture

    sizes = set()
    for length in (10, 20, 40, 80):
        x = lt.randn(2, 3, length, requires_grad=True)
        y = lt.nn.functional.max_pool1d(x, x.size(2))
        y.sum().backward()
        sizes.add(len(capture([y._node, x.grad._node]).order))
    assert len(sizes) == 1, sizes
