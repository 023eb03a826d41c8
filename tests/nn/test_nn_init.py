"""lazytorch.nn.init against torch.nn.init.

The random streams differ (lazytorch has its own generator), so the distributions are
compared: exact bounds from torch's formulas, and mean/std of large samples against both
the formula and torch's own sample. Deterministic fills are compared exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.nn import init


@pytest.fixture(autouse=True)
def _interpreter():
    with lt.backend("interpreter"):
        yield


SHAPES = [(400, 300), (64, 32, 3, 3), (1000, 50, 2)]


def sample(fn: Callable[[Any, Any], Any], shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """fn applied to an empty tensor of `shape` on both sides: (ours, torch's) values."""
    torch.manual_seed(0)
    ours = lt.empty(shape)
    out = fn(init, ours)
    assert out is ours  # in place, returns its argument
    theirs = torch.empty(shape)
    fn(torch.nn.init, theirs)
    return ours.numpy(), theirs.numpy()


# (name, fn, (low, high) bound or None, mean, std) per shape: torch's formulas.
def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    rf = math.prod(shape[2:])
    return shape[1] * rf, shape[0] * rf


def _cases(shape: tuple[int, ...]) -> dict[str, tuple[Callable[..., Any], Any, float, float]]:
    fan_in, fan_out = _fans(shape)
    xu = math.sqrt(6.0 / (fan_in + fan_out))
    ku = math.sqrt(2.0 / (1 + 5)) * math.sqrt(3.0 / fan_in)  # a = sqrt(5): Linear's default
    kr = math.sqrt(2.0) * math.sqrt(3.0 / fan_out)
    return {
        "uniform": (lambda m, t: m.uniform_(t, -0.3, 0.7), (-0.3, 0.7), 0.2, 1 / math.sqrt(12)),
        "normal": (lambda m, t: m.normal_(t, 1.5, 0.25), None, 1.5, 0.25),
        "xavier_uniform": (lambda m, t: m.xavier_uniform_(t), (-xu, xu), 0.0, xu / math.sqrt(3)),
        "xavier_uniform_gain": (
            lambda m, t: m.xavier_uniform_(t, gain=m.calculate_gain("tanh")),
            (-xu * 5 / 3, xu * 5 / 3),
            0.0,
            xu * 5 / 3 / math.sqrt(3),
        ),
        "xavier_normal": (
            lambda m, t: m.xavier_normal_(t, gain=2.0),
            None,
            0.0,
            2.0 * math.sqrt(2.0 / (fan_in + fan_out)),
        ),
        "kaiming_uniform_linear": (
            lambda m, t: m.kaiming_uniform_(t, a=math.sqrt(5)),
            (-ku, ku),
            0.0,
            ku / math.sqrt(3),
        ),
        "kaiming_uniform_relu_fan_out": (
            lambda m, t: m.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
            (-kr, kr),
            0.0,
            kr / math.sqrt(3),
        ),
        "kaiming_normal": (
            lambda m, t: m.kaiming_normal_(t, nonlinearity="relu"),
            None,
            0.0,
            math.sqrt(2.0 / fan_in),
        ),
        "kaiming_normal_leaky_fan_out": (
            lambda m, t: m.kaiming_normal_(t, a=0.2, mode="fan_out"),
            None,
            0.0,
            math.sqrt(2.0 / (1 + 0.04)) / math.sqrt(fan_out),
        ),
        "trunc_normal": (
            lambda m, t: m.trunc_normal_(t, mean=0.1, std=0.5, a=-0.4, b=0.9),
            (-0.4, 0.9),
            None,
            None,
        ),
        "trunc_normal_default": (lambda m, t: m.trunc_normal_(t), (-2.0, 2.0), 0.0, None),
    }


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(_cases((2, 2))))
def test_distribution_matches_torch(name: str, shape: tuple[int, ...]) -> None:
    fn, bounds, mean, std = _cases(shape)[name]
    ours, theirs = sample(fn, shape)
    n = ours.size
    if bounds is not None:
        lo, hi = bounds
        assert ours.min() >= lo and ours.max() <= hi
        assert theirs.min() >= lo and theirs.max() <= hi  # the formula is torch's
        # the whole interval is used (for uniform draws: to within a few 1/n)
        width = hi - lo
        assert ours.min() < lo + 0.01 * width and ours.max() > hi - 0.01 * width
    # Moments: against the formula where there is one, and against torch's sample.
    sd = theirs.std()
    se_mean = 5 * sd / math.sqrt(n)
    assert abs(ours.mean() - theirs.mean()) < 2 * se_mean
    assert abs(ours.std() / sd - 1) < 0.02
    if mean is not None:
        assert abs(ours.mean() - mean) < se_mean
    if std is not None:
        assert abs(ours.std() / std - 1) < 0.01


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, t: m.constant_(t, 0.25),
        lambda m, t: m.ones_(t),
        lambda m, t: m.zeros_(t),
        lambda m, t: m.eye_(t),
    ],
    ids=["constant", "ones", "zeros", "eye"],
)
def test_deterministic_fills_match_torch(fn: Callable[[Any, Any], Any]) -> None:
    ours, theirs = sample(fn, (3, 5))
    np.testing.assert_array_equal(ours, theirs)


def test_fills_keep_dtype() -> None:
    for dtype in (lt.float16, lt.float64):
        t = lt.empty(50, 40, dtype=dtype)
        init.kaiming_uniform_(t)
        init.trunc_normal_(t, std=0.02)
        assert t.dtype is dtype
        assert np.abs(t.numpy()).max() <= 2.0


def test_in_place_under_no_grad_keeps_leaf() -> None:
    p = lt.nn.Parameter(lt.empty(20, 10))
    for fn in (
        lambda: init.xavier_normal_(p),
        lambda: init.uniform_(p),
        lambda: init.eye_(p),
        lambda: init.trunc_normal_(p),
        lambda: init.constant_(p, 2.0),
    ):
        assert fn() is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert lt.is_grad_enabled()
    (p * 3).sum().backward()
    assert p.grad.tolist() == [[3.0] * 10] * 20


def test_generator_makes_draws_reproducible() -> None:
    a = init.kaiming_normal_(lt.empty(30, 20), generator=lt.Generator().manual_seed(5))
    b = init.kaiming_normal_(lt.empty(30, 20), generator=lt.Generator().manual_seed(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_calculate_gain_matches_torch() -> None:
    names = [
        "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "sigmoid", "tanh", "relu", "selu", "leaky_relu",
    ]  # fmt: skip
    for name in names:
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    for param in (0, 0.2, 1, 3.5):
        assert init.calculate_gain("leaky_relu", param) == torch.nn.init.calculate_gain(
            "leaky_relu", param
        )
    for bad in (("leaky_relu", True), ("leaky_relu", "x"), ("swish", None)):
        with pytest.raises(ValueError) as theirs:
            torch.nn.init.calculate_gain(*bad)
        with pytest.raises(ValueError) as ours:
            init.calculate_gain(*bad)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 3), (8, 4, 3, 5), (2, 3, 1, 1, 7)], ids=str)
def test_fans_match_torch(shape: tuple[int, ...]) -> None:
    assert init._calculate_fan_in_and_fan_out(
        lt.empty(shape)
    ) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_errors_match_torch() -> None:
    for fn in (
        lambda m, t: m._calculate_fan_in_and_fan_out(t.empty(5)),
        lambda m, t: m.kaiming_uniform_(t.empty(3, 3), mode="fan_avg"),
        lambda m, t: m.eye_(t.empty(2, 2, 2)),
    ):
        with pytest.raises(ValueError) as theirs:
            fn(torch.nn.init, torch)
        with pytest.raises(ValueError) as ours:
            fn(init, lt)
        assert str(ours.value) == str(theirs.value)


def test_zero_element_kaiming_is_a_noop_with_warning() -> None:
    t = lt.empty(0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(t) is t


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3), (1, 1)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    w = lt.nn.init.orthogonal_(lt.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1) / 2
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        lt.nn.init.orthogonal_(lt.empty(3))


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((2, 3, 1, 3, 3), 1)])
def test_dirac_equals_torch(shape, groups):
    want = torch.nn.init.dirac_(torch.empty(*shape), groups=groups)
    got = lt.nn.init.dirac_(lt.empty(*shape), groups=groups)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_sparse_zeroes_a_fraction_of_each_column():
    w = lt.nn.init.sparse_(lt.empty(20, 4), sparsity=0.25, std=0.5).numpy()
    assert ((w == 0).sum(axis=0) == 5).all()
    assert 0.2 < w[w != 0].std() < 0.9
