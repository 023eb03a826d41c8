"""Padding modules, RMSNorm/GroupNorm/InstanceNorm/LocalResponseNorm,
BatchNorm3d/SyncBatchNorm and the channel and alpha dropouts against torch.

The functional cases are one table (the call written once for both libraries, checked in
float32 on every backend and mode, differentiated in float64). The module cases build the
module on both sides, copy torch's weights in, and compare outputs, gradients and the state
after each step (InstanceNorm's running statistics). Dropout's masks come from lazytorch's
generator, so they are tested by their rules: whole channels drop, the survivors scale by
1/(1-p), eval and p=0 are the identity and p=1 zeroes, as torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises, randn


def f(name: str, *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """`lib.nn.functional.<name>(*inputs, *args, **kwargs)` for lib torch or lazytorch."""
    return lambda t, *xs: getattr(t.nn.functional, name)(*xs, *args, **kwargs)


def m(name: str, *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """`lib.nn.<name>(*args, **kwargs)(*inputs)`: a module without parameters."""
    return lambda t, *xs: getattr(t.nn, name)(*args, **kwargs)(*xs)


def instance_norm_stats(**kwargs: Any) -> Callable[..., Any]:
    """instance_norm with running statistics; returns them after the call too."""

    def run(t: Any, x: Any, mean: Any, var: Any, *rest: Any) -> Any:
        out = t.nn.functional.instance_norm(x, mean, var, *rest, **kwargs)
        return out, mean, var

    return run


CASES: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]] = {
    # padding modules (F.pad underneath), batched and unbatched, int and per-side amounts
    "zero_pad1d": (m("ZeroPad1d", (2, 1)), [(2, 3, 4)]),
    "zero_pad2d": (m("ZeroPad2d", 1), [(3, 4, 5)]),
    "zero_pad3d_crop": (m("ZeroPad3d", (1, -1, 0, 2, -1, 1)), [(1, 2, 3, 3, 4)]),
    "constant_pad1d": (m("ConstantPad1d", 2, 3.5), [(3, 4)]),
    "constant_pad2d": (m("ConstantPad2d", (1, 0, 2, 1), -1.0), [(2, 2, 3, 3)]),
    "constant_pad3d": (m("ConstantPad3d", 1, 0.5), [(2, 2, 2, 3)]),
    "reflection_pad1d": (m("ReflectionPad1d", (3, 1)), [(2, 3, 5)]),
    "reflection_pad2d": (m("ReflectionPad2d", (1, 2, 2, 0)), [(2, 3, 4, 4)]),
    "reflection_pad2d_unbatched": (m("ReflectionPad2d", 1), [(3, 3, 4)]),
    "reflection_pad3d": (m("ReflectionPad3d", (1, 1, 0, 2, 1, 0)), [(1, 2, 3, 3, 3)]),
    "replication_pad1d": (m("ReplicationPad1d", (0, 3)), [(3, 2)]),
    "replication_pad2d": (m("ReplicationPad2d", (2, 1, 1, 3)), [(2, 2, 3, 2)]),
    "replication_pad3d": (m("ReplicationPad3d", 2), [(2, 1, 2, 2, 3)]),
    "circular_pad1d": (m("CircularPad1d", (2, 3)), [(2, 3, 4)]),
    "circular_pad2d": (m("CircularPad2d", (1, 0, 2, 2)), [(3, 3, 4)]),
    "circular_pad3d": (m("CircularPad3d", 1), [(1, 2, 2, 3, 3)]),
    # rms norm (eps None: the computing dtype's machine epsilon)
    "rms_norm": (f("rms_norm", (4,)), [(3, 4)]),
    "rms_norm_weight": (
        lambda t, x, w: t.nn.functional.rms_norm(x, (2, 3), w, eps=1e-3),
        [(4, 2, 3), (2, 3)],
    ),
    # group norm
    "group_norm": (f("group_norm", 2), [(2, 4, 3)]),
    "group_norm_affine": (
        lambda t, x, w, b: t.nn.functional.group_norm(x, 3, w, b),
        [(3, 6, 2, 2), (6,), (6,)],
    ),
    "group_norm_2d_input": (f("group_norm", 2, eps=1e-3), [(3, 4)]),
    "group_norm_one_group": (f("group_norm", 1), [(2, 3, 2, 2, 2)]),
    # instance norm
    "instance_norm": (f("instance_norm"), [(2, 3, 5)]),
    "instance_norm_affine": (
        lambda t, x, w, b: t.nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-3),
        [(2, 3, 4, 4), (3,), (3,)],
    ),
    "instance_norm_3d": (f("instance_norm"), [(1, 2, 2, 3, 2)]),
    "instance_norm_running_stats": (instance_norm_stats(momentum=0.3), [(3, 2, 4), (2,), (2,)]),
    "instance_norm_eval": (
        instance_norm_stats(use_input_stats=False),
        [(2, 3, 3, 3), (3,), (3,), (3,), (3,)],
    ),
    # local response norm
    "local_response_norm_3d": (f("local_response_norm", 3), [(2, 5, 3)]),
    "local_response_norm_4d": (
        f("local_response_norm", 2, alpha=0.1, beta=0.5, k=2.0),
        [(2, 6, 3, 4)],
    ),
    "local_response_norm_5d": (f("local_response_norm", 5, alpha=0.3), [(1, 4, 2, 2, 2)]),
}
# running statistics are not differentiable (torch has no derivative for them)
NOT_DIFF = {"instance_norm_running_stats": [0], "instance_norm_eval": [0, 3, 4]}


def inputs(name: str, dtype: str) -> list[np.ndarray]:
    out = [randn(*s, dtype=dtype) for s in CASES[name][1]]
    if name in ("instance_norm_running_stats", "instance_norm_eval"):
        out[2] = np.abs(out[2]) + 0.5  # a running variance is positive
    return out


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_matches_torch(name: str) -> None:
    fn = CASES[name][0]
    check(fn, *inputs(name, "float32"))
    check_grad(fn, *inputs(name, "float64"), diff=NOT_DIFF.get(name))


# -- modules: torch's weights, outputs, gradients and state after each step -------------------
MODULES: dict[str, tuple[Callable[[Any], Any], tuple[int, ...], tuple[str, ...]]] = {
    "group_norm": (lambda t: t.nn.GroupNorm(2, 6), (3, 6, 4), ("train",)),
    "group_norm_noaffine": (lambda t: t.nn.GroupNorm(3, 3, affine=False), (2, 3, 2, 2), ("train",)),
    "group_norm_nobias": (
        lambda t: t.nn.GroupNorm(1, 4, eps=1e-3, bias=False),
        (2, 4, 3),
        ("train",),
    ),
    "instance_norm1d": (lambda t: t.nn.InstanceNorm1d(3), (2, 3, 5), ("train", "eval")),
    "instance_norm1d_unbatched": (
        lambda t: t.nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
        (3, 5),
        ("train", "eval"),
    ),
    "instance_norm2d_stats": (
        lambda t: t.nn.InstanceNorm2d(2, momentum=0.2, affine=True, track_running_stats=True),
        (3, 2, 3, 4),
        ("train", "eval"),
    ),
    "instance_norm2d_cumulative": (
        lambda t: t.nn.InstanceNorm2d(2, momentum=None, track_running_stats=True),
        (2, 2, 3, 3),
        ("train", "eval"),
    ),
    "instance_norm3d": (lambda t: t.nn.InstanceNorm3d(2, affine=True), (2, 2, 2, 3, 2), ("train",)),
    "local_response_norm": (lambda t: t.nn.LocalResponseNorm(3, k=2.0), (2, 4, 3, 3), ("train",)),
    "rms_norm": (lambda t: t.nn.RMSNorm((3, 2)), (4, 3, 2), ("train",)),
    "rms_norm_noaffine": (
        lambda t: t.nn.RMSNorm(5, eps=1e-2, elementwise_affine=False),
        (2, 5),
        ("train",),
    ),
    "batch_norm3d": (lambda t: t.nn.BatchNorm3d(3), (2, 3, 2, 3, 2), ("train", "eval")),
    "batch_norm3d_cumulative": (
        lambda t: t.nn.BatchNorm3d(2, momentum=None, affine=False),
        (3, 2, 2, 2, 2),
        ("train", "eval"),
    ),
    "sync_batch_norm": (lambda t: t.nn.SyncBatchNorm(3), (4, 3, 2), ("train", "eval")),
    "reflection_pad2d": (lambda t: t.nn.ReflectionPad2d((2, 1, 0, 1)), (1, 2, 3, 3), ("train",)),
}
MODULE_TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def assert_close(ours: Any, theirs: torch.Tensor, dtype: str, what: str) -> None:
    assert ours is not None, f"{what}: lazytorch has none, torch has one"
    a, b = np.asarray(ours.detach().numpy()), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (
        f"{what}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    )
    np.testing.assert_allclose(a, b, err_msg=what, **MODULE_TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch(name: str, dtype: str) -> None:
    ctor, shape, modes = MODULES[name]
    torch.manual_seed(0)
    theirs, ours = ctor(torch), ctor(lt)
    if dtype == "float64":
        theirs, ours = theirs.double(), ours.double()
    for p in theirs.parameters():  # not torch's trivial init, so the affine part counts
        with torch.no_grad():
            p.uniform_(0.5, 1.5)
    ours.load_state_dict({k: lt.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(len(name))
    with lt.backend("interpreter"):
        for mode in modes:
            theirs.train(mode == "train")
            ours.train(mode == "train")
            for step in range(2):
                a = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
                tx, lx = torch.from_numpy(a.copy()).requires_grad_(), lt.tensor(a).requires_grad_()
                t_out, l_out = theirs(tx), ours(lx)
                where = f"{name} {mode} step {step}"
                assert_close(l_out, t_out, dtype, f"{where}: output")
                r = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
                (t_out * torch.from_numpy(r)).sum().backward()
                (l_out * lt.tensor(r)).sum().backward()
                assert_close(lx.grad, tx.grad, dtype, f"{where}: input grad")
                for (pname, tp), (_, lp) in zip(
                    theirs.named_parameters(), ours.named_parameters(), strict=True
                ):
                    assert_close(lp.grad, tp.grad, dtype, f"{where}: grad of {pname}")
                theirs.zero_grad()
                ours.zero_grad()
                t_state, l_state = theirs.state_dict(), ours.state_dict()
                assert list(l_state) == list(t_state), where
                for k in t_state:
                    assert_close(l_state[k], t_state[k], dtype, f"{where}: state {k}")


NEW_MODULES = [
    "nn.ZeroPad1d(2)",
    "nn.ZeroPad2d((1, 2, 3, 4))",
    "nn.ZeroPad3d(1)",
    "nn.ConstantPad1d(2, 1.5)",
    "nn.ConstantPad2d((1, 0, 0, 1), 0.0)",
    "nn.ConstantPad3d(1, -2)",
    "nn.ReflectionPad1d((1, 2))",
    "nn.ReflectionPad2d(1)",
    "nn.ReflectionPad3d([1, 1, 1, 1, 2, 2])",
    "nn.ReplicationPad1d(3)",
    "nn.ReplicationPad2d((0, 1, 2, 3))",
    "nn.ReplicationPad3d(1)",
    "nn.CircularPad1d(1)",
    "nn.CircularPad2d((1, 1, 2, 0))",
    "nn.CircularPad3d(2)",
    "nn.GroupNorm(2, 4)",
    "nn.GroupNorm(3, 6, eps=1e-3, affine=False)",
    "nn.GroupNorm(1, 2, bias=False)",
    "nn.InstanceNorm1d(3)",
    "nn.InstanceNorm2d(3, affine=True)",
    "nn.InstanceNorm3d(3, momentum=None, track_running_stats=True)",
    "nn.LocalResponseNorm(2, alpha=1e-3)",
    "nn.RMSNorm(4)",
    "nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False)",
    "nn.BatchNorm3d(4, affine=False)",
    "nn.SyncBatchNorm(3, momentum=0.2)",
    "nn.Dropout1d(0.2)",
    "nn.Dropout2d()",
    "nn.Dropout3d(0.7, inplace=True)",
    "nn.AlphaDropout(0.1)",
    "nn.FeatureAlphaDropout()",
]


@pytest.mark.parametrize("expr", NEW_MODULES)
def test_repr_and_state_dict_keys_match_torch(expr: str) -> None:
    theirs, ours = eval(expr, {"nn": torch.nn}), eval(expr, {"nn": lt.nn})
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, tv), (_, lv) in zip(theirs.state_dict().items(), ours.state_dict().items()):
        assert tuple(lv.shape) == tuple(tv.shape), k
        assert lv.dtype.name == str(tv.dtype).replace("torch.", ""), k


def test_convert_sync_batchnorm_keeps_parameters_and_buffers() -> None:
    model = lt.nn.Sequential(
        lt.nn.Conv2d(1, 2, 1), lt.nn.BatchNorm2d(2), lt.nn.Sequential(lt.nn.BatchNorm1d(2))
    )
    bn = model[1]
    model.eval()
    out = lt.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert out is model
    assert type(model[1]) is lt.nn.SyncBatchNorm and type(model[2][0]) is lt.nn.SyncBatchNorm
    assert model[1].weight is bn.weight and model[1].running_mean is bn.running_mean
    assert not model[1].training
    single = lt.nn.SyncBatchNorm.convert_sync_batchnorm(lt.nn.BatchNorm1d(3))
    assert type(single) is lt.nn.SyncBatchNorm


# -- errors: torch's exception types ---------------------------------------------------------
ERRORS: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]] = {
    "reflect_pad_too_large": (m("ReflectionPad1d", 3), [(1, 2, 3)]),
    "reflect_pad3d_too_large": (m("ReflectionPad3d", (0, 0, 0, 0, 2, 0)), [(1, 1, 2, 3, 3)]),
    "circular_pad_wraps_twice": (m("CircularPad1d", 4), [(1, 2, 3)]),
    "circular_pad_rank": (m("CircularPad2d", 1), [(2, 3)]),
    "replication_pad_rank": (m("ReplicationPad3d", 1), [(2, 3)]),
    "group_norm_not_divisible": (f("group_norm", 2), [(2, 5, 3)]),
    "group_norm_weight_size": (
        lambda t, x, w: t.nn.functional.group_norm(x, 2, w),
        [(2, 4, 3), (3,)],
    ),
    "group_norm_1d": (f("group_norm", 1), [(4,)]),
    "group_norm_single_value": (f("group_norm", 2), [(1, 2)]),
    "group_norm_module_channels": (lambda t, x: t.nn.GroupNorm(2, 4)(x), [(2, 6, 3)]),
    "instance_norm_one_spatial": (f("instance_norm"), [(2, 3, 1)]),
    "instance_norm_no_stats": (f("instance_norm", use_input_stats=False), [(2, 3, 4)]),
    "instance_norm_weight_size": (
        lambda t, x, w: t.nn.functional.instance_norm(x, weight=w),
        [(2, 3, 4), (2,)],
    ),
    "instance_norm_module_rank": (lambda t, x: t.nn.InstanceNorm2d(3)(x), [(2, 3, 4, 4, 4)]),
    "instance_norm_module_channels": (
        lambda t, x: t.nn.InstanceNorm1d(4, affine=True)(x),
        [(2, 3, 4)],
    ),
    "rms_norm_shape": (f("rms_norm", (4,)), [(2, 3)]),
    "rms_norm_weight_shape": (lambda t, x, w: t.nn.functional.rms_norm(x, (3,), w), [(2, 3), (2,)]),
    "local_response_norm_2d": (f("local_response_norm", 2), [(3, 4)]),
    "batch_norm3d_rank": (lambda t, x: t.nn.BatchNorm3d(3)(x), [(2, 3, 4, 4)]),
    "sync_batch_norm_rank": (lambda t, x: t.nn.SyncBatchNorm(3)(x), [(3,)]),
    "dropout1d_rank": (f("dropout1d"), [(2, 3, 4, 5)]),
    "dropout_p_range": (f("dropout3d", 1.5), [(2, 3, 4, 5)]),
    "alpha_dropout_p_range": (f("alpha_dropout", -0.1), [(3,)]),
    "feature_alpha_dropout_1d": (f("feature_alpha_dropout", 0.5, True), [(3,)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    fn, shapes = ERRORS[name]
    check_raises(fn, *[randn(*s) for s in shapes])


def test_module_constructor_errors_match_torch() -> None:
    for ctor in (lambda t: t.nn.GroupNorm(4, 6), lambda t: t.nn.Dropout2d(1.1)):
        with pytest.raises(ValueError):
            ctor(torch)
        with pytest.raises(ValueError):
            ctor(lt)


def test_instance_norm_channel_mismatch_without_affine_warns() -> None:
    x = randn(2, 3, 4)
    with pytest.warns(UserWarning, match="does not match num_features"):
        ours = lt.nn.InstanceNorm1d(5)(lt.tensor(x))
    with pytest.warns(UserWarning):
        theirs = torch.nn.InstanceNorm1d(5)(torch.from_numpy(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


# -- dropout: the rules, on lazytorch's own random masks --------------------------------------
CHANNEL_DROPOUTS = [
    # (function, input shape, the dims one draw covers)
    ("dropout1d", (6, 10, 7), (2,)),
    ("dropout1d", (40, 7), (1,)),  # unbatched (C, L)
    ("dropout2d", (6, 10, 3, 3), (2, 3)),
    ("dropout3d", (6, 10, 2, 2, 2), (2, 3, 4)),
    ("dropout3d", (30, 2, 3, 2), (1, 2, 3)),  # unbatched (C, D, H, W)
]


@pytest.mark.parametrize("mode", ["lazy", "sync"])
@pytest.mark.parametrize(("fn", "shape", "within"), CHANNEL_DROPOUTS)
def test_channel_dropout_zeroes_whole_channels_and_scales(
    fn: str, shape: tuple[int, ...], within: tuple[int, ...], mode: str
) -> None:
    p = 0.4
    lt.manual_seed(1)
    x = lt.tensor(randn(*shape, dtype="float64") + 3.0).requires_grad_()  # no zero inputs
    with lt.sync_mode(mode == "sync"):
        y = getattr(lt.nn.functional, fn)(x, p)
    ratio = (y / x).detach().numpy()
    # one value per channel: 0 (dropped) or 1/(1-p) (kept)
    per_channel = ratio.reshape(*[s for d, s in enumerate(shape) if d not in within], -1)
    assert np.allclose(per_channel, per_channel[..., :1])
    values = per_channel[..., 0]
    assert np.all(np.isclose(values, 0) | np.isclose(values, 1 / (1 - p)))
    dropped = np.isclose(values, 0).mean()
    assert 0.15 < dropped < 0.65, dropped  # p = 0.4 over 40-60 draws
    y.sum().backward()  # the gradient is the same mask
    np.testing.assert_allclose(x.grad.numpy(), ratio, rtol=1e-12)


EDGE_DROPOUTS = [
    ("dropout1d", (2, 3, 4)),
    ("dropout2d", (2, 3, 2, 2)),
    ("dropout3d", (3, 2, 2, 2)),
    ("alpha_dropout", (3, 4)),
    ("feature_alpha_dropout", (2, 3, 4)),
]


@pytest.mark.parametrize(("fn", "shape"), EDGE_DROPOUTS)
@pytest.mark.parametrize(("p", "training"), [(0.0, True), (1.0, True), (0.5, False)])
def test_dropout_edge_cases_equal_torch(
    fn: str, shape: tuple[int, ...], p: float, training: bool
) -> None:
    check(f(fn, p, training), randn(*shape))
    check_grad(f(fn, p, training), randn(*shape, dtype="float64"))


@pytest.mark.parametrize(
    "cls", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
)
def test_dropout_modules_are_identity_in_eval_and_random_in_training(cls: str) -> None:
    shape = (
        (4, 8, 3, 3, 3) if cls == "Dropout3d" else (4, 8, 9) if cls == "Dropout1d" else (4, 8, 3, 3)
    )
    x = lt.tensor(randn(*shape))
    module = getattr(lt.nn, cls)(0.5)
    assert module.training
    lt.manual_seed(0)
    assert not np.array_equal(module(x).numpy(), x.numpy())
    module.eval()
    assert module(x) is x


def test_alpha_dropout_keeps_zero_mean_and_unit_variance() -> None:
    lt.manual_seed(3)
    x = lt.tensor(np.random.default_rng(0).standard_normal(40000))
    for p in (0.2, 0.5):
        y = lt.nn.functional.alpha_dropout(x, p, True).numpy()
        assert abs(y.mean()) < 0.03 and abs(y.var() - 1) < 0.05, (p, y.mean(), y.var())
        # a dropped unit becomes SELU's saturation, then the affine map: one shared value
        a = 1 / math.sqrt((1.7580993408473766**2 * p + 1) * (1 - p))
        dropped_value = -1.7580993408473766 * a * (1 - p)
        dropped = np.isclose(y, dropped_value).mean()
        assert abs(dropped - p) < 0.02, (p, dropped)


def test_feature_alpha_dropout_masks_whole_channels() -> None:
    lt.manual_seed(4)
    x = lt.zeros(16, 12, 5)  # kept zeros map to a*0 + alpha*a*p; dropped ones to another value
    y = lt.nn.functional.feature_alpha_dropout(x, 0.5, True).numpy()
    assert np.allclose(y, y[..., :1])
    assert len(np.unique(np.round(y, 6))) == 2


def test_inplace_channel_dropout_writes_the_input() -> None:
    lt.manual_seed(5)
    x = lt.ones(6, 4)  # unbatched dropout1d: channels are rows
    y = lt.nn.functional.dropout1d(x, 0.5, True, inplace=True)
    assert y is x and tuple(x.shape) == (6, 4)
    rows = x.numpy()
    assert np.all(np.isin(rows, [0.0, 2.0])) and np.allclose(rows, rows[:, :1])


@pytest.mark.parametrize(
    ("fn", "shape", "match"),
    [
        ("dropout2d", (2, 3, 4), "assuming that channel-wise 1D dropout"),
        ("dropout2d", (2, 3), "Received a 2-D input to dropout2d"),
        ("dropout3d", (2, 3, 4), "Received a 3-D input to dropout3d"),
    ],
)
def test_channel_dropout_rank_warnings_match_torch(
    fn: str, shape: tuple[int, ...], match: str
) -> None:
    x = randn(*shape)
    with pytest.warns(UserWarning, match=match):
        getattr(torch.nn.functional, fn)(torch.from_numpy(x), 0.5, False)
    with pytest.warns(UserWarning, match=match):
        out = getattr(lt.nn.functional, fn)(lt.tensor(x), 0.5, False)
    np.testing.assert_array_equal(out.numpy(), x)
