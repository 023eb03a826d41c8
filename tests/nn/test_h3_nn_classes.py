"""AdaptiveLogSoftmaxWithLoss, LazyInstanceNorm1d/2d/3d, CrossMapLRN2d,
FractionalMaxPool2d/3d (and F.fractional_max_pool2d/3d) and NLLLoss2d against torch, with
shared weights (and shared `_random_samples` for the fractional pools)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(4)


def _copy_params(src, dst):
    for (ka, a), (kb, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert ka == kb
        with lt.no_grad():
            b.copy_(lt.tensor(a.detach().numpy()))


def _grads(module):
    return [p.grad.numpy() for p in module.parameters()]


# -- AdaptiveLogSoftmaxWithLoss ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("cutoffs", "div_value", "head_bias"), [([4, 7], 4.0, False), ([2], 2.0, True)]
)
def test_adaptive_log_softmax_matches_torch(cutoffs, div_value, head_bias):
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs, div_value, head_bias)
    ml = lt.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs, div_value, head_bias)
    _copy_params(mt, ml)
    x = RNG.normal(size=(6, 8)).astype(np.float32)
    target = np.array([0, 3, 5, 9, 7, 1])
    ot = mt(torch.tensor(x), torch.tensor(target))
    ol = ml(lt.tensor(x), lt.tensor(target))
    np.testing.assert_allclose(ol.output.detach().numpy(), ot.output.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(float(ol.loss), float(ot.loss), rtol=1e-5)
    assert ol._fields == ot._fields
    ot.loss.backward()
    ol.loss.backward()
    for a, b in zip(_grads(ml), _grads(mt)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(
        ml.log_prob(lt.tensor(x)).detach().numpy(),
        mt.log_prob(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    big = RNG.normal(size=(40, 8)).astype(np.float32) * 3
    np.testing.assert_array_equal(
        ml.predict(lt.tensor(big)).numpy(), mt.predict(torch.tensor(big)).numpy()
    )
    # unbatched
    o1t = mt(torch.tensor(x[0]), torch.tensor(9))
    o1l = ml(lt.tensor(x[0]), lt.tensor(9))
    assert tuple(o1l.output.shape) == tuple(o1t.output.shape) == ()
    np.testing.assert_allclose(float(o1l.loss), float(o1t.loss), rtol=1e-5)


def test_adaptive_log_softmax_errors_match_torch():
    for bad in ([], [3, 2], [0, 4], [4, 10], [4, 4], [2.5]):
        with pytest.raises(ValueError) as et:
            torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, bad)
        with pytest.raises(ValueError) as el:
            lt.nn.AdaptiveLogSoftmaxWithLoss(8, 10, bad)
        assert str(el.value) == str(et.value)
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])
    ml = lt.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])
    cases = [
        (np.zeros((3, 8), np.float32), np.array([0, 1])),
        (np.zeros((3, 8, 1), np.float32), np.array([0, 1, 2])),
        (np.zeros((3, 8), np.float32), np.array(1)),
        (np.zeros((3, 8), np.float32), np.zeros((3, 1), np.int64)),
        (np.zeros((3, 8), np.float32), np.array([0, 10, 2])),
        (np.zeros((3, 8), np.float32), np.array([0, -1, 2])),
    ]
    for x, t in cases:
        with pytest.raises(RuntimeError) as et:
            mt(torch.tensor(x), torch.tensor(t))
        with pytest.raises(RuntimeError) as el:
            ml(lt.tensor(x), lt.tensor(t))
        assert str(el.value).replace("lazytorch.", "torch.") == str(et.value)


# -- LazyInstanceNorm ---------------------------------------------------------------------


@pytest.mark.parametrize(("nd", "shape"), [(1, (2, 3, 5)), (2, (2, 3, 4, 4)), (3, (2, 3, 2, 3, 3))])
def test_lazy_instance_norm_matches_torch(nd, shape):
    name = f"LazyInstanceNorm{nd}d"
    mt, ml = getattr(torch.nn, name)(), getattr(lt.nn, name)()
    assert ml.affine and ml.track_running_stats
    x = RNG.normal(size=shape).astype(np.float32) * 2 + 1
    yt, yl = mt(torch.tensor(x)), ml(lt.tensor(x))
    assert type(ml).__name__ == type(mt).__name__ == f"InstanceNorm{nd}d"
    assert repr(ml) == repr(mt)
    np.testing.assert_allclose(yl.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    sd_t, sd_l = mt.state_dict(), ml.state_dict()
    assert list(sd_l) == list(sd_t)
    for k in sd_t:
        np.testing.assert_allclose(sd_l[k].numpy(), sd_t[k].numpy(), rtol=1e-5, atol=1e-6)
    mt.eval()
    ml.eval()
    np.testing.assert_allclose(
        ml(lt.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(), rtol=1e-5
    )
    m2 = getattr(lt.nn, name)(affine=False, track_running_stats=False)
    m2(lt.tensor(x))
    assert m2.weight is None and m2.running_mean is None


# -- CrossMapLRN2d ------------------------------------------------------------------------


@pytest.mark.parametrize(("channels", "size"), [(7, 5), (3, 5), (1, 3), (6, 2), (8, 4)])
def test_cross_map_lrn2d_values_and_gradients_match_torch(channels, size):
    x = RNG.normal(size=(2, channels, 3, 4)) * 3
    go = RNG.normal(size=(2, channels, 3, 4))
    res = []
    for lib in (torch, lt):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.6, k=2)(xt)
        (y * lib.tensor(go)).sum().backward()
        res.append((y.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12, atol=1e-14)


def test_cross_map_lrn2d_repr_and_errors():
    assert repr(lt.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        lt.nn.CrossMapLRN2d(3)(lt.zeros(2, 3, 4))


# -- fractional max pooling ---------------------------------------------------------------

FRACTIONAL = [
    (2, (2, 3, 9, 8), 2, {"output_size": (4, 5)}),
    (2, (2, 3, 9, 8), (3, 2), {"output_size": (5, 6)}),
    (2, (2, 3, 9, 8), 2, {"output_size": 1}),
    (2, (2, 3, 9, 8), 1, {"output_size": (9, 8)}),
    (2, (3, 9, 8), 2, {"output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 9, 8, 7), 2, {"output_size": (4, 5, 3)}),
    (3, (2, 7, 6, 5), (2, 3, 2), {"output_ratio": (0.5, 0.5, 0.5)}),
]


@pytest.mark.parametrize("case", range(len(FRACTIONAL)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_matches_torch_given_samples(case, dtype):
    nd, shape, k, kw = FRACTIONAL[case]
    x = RNG.normal(size=shape).astype(dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    u = RNG.random(size=(n, shape[-nd - 1], nd)).astype(dtype)
    go = None
    res = []
    for lib in (torch, lt):
        fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        xt = lib.tensor(x, requires_grad=True)
        out, idx = fn(xt, k, return_indices=True, _random_samples=lib.tensor(u), **kw)
        if go is None:
            go = RNG.normal(size=tuple(out.shape)).astype(dtype)
        (out * lib.tensor(go)).sum().backward()
        res.append((out.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_array_equal(a, b)
    assert res[1][1].dtype == np.int64


def test_fractional_max_pool_modules_random_draws():
    x = lt.randn(2, 3, 10, 8)
    m = lt.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)
    lt.manual_seed(5)
    a, ia = m(x)
    lt.manual_seed(5)
    b, ib = m(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    assert tuple(a.shape) == (2, 3, 5, 4)
    # every output is the value at its index, and each index is inside its window's range
    flat = x.reshape(2, 3, -1).numpy()
    np.testing.assert_array_equal(
        np.take_along_axis(flat, ia.numpy().reshape(2, 3, -1), 2).reshape(a.shape), a.numpy()
    )
    outs = {tuple(m(x)[1].numpy().ravel()) for _ in range(4)}
    assert len(outs) > 1  # the draws differ between calls
    m3 = lt.nn.FractionalMaxPool3d(2, output_size=(3, 3, 3))
    assert tuple(m3(lt.randn(2, 4, 6, 6, 6)).shape) == (2, 4, 3, 3, 3)
    u = lt.rand(1, 1, 2)
    fixed = lt.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=u)
    assert "_random_samples" in dict(fixed.named_buffers())
    y = lt.randn(1, 1, 6, 6)
    np.testing.assert_array_equal(fixed(y).numpy(), fixed(y).numpy())


def test_fractional_max_pool_errors_match_torch():
    calls = [
        lambda t: t.nn.functional.fractional_max_pool2d(t.zeros(2, 3, 7, 6), 3, output_size=(6, 4)),
        lambda t: t.nn.functional.fractional_max_pool2d(t.zeros(2, 3, 7, 6), 3, output_size=(5, 5)),
        lambda t: t.nn.functional.fractional_max_pool2d(t.zeros(2, 3, 7, 6), 2),
        lambda t: t.nn.functional.fractional_max_pool2d(
            t.zeros(2, 3, 7, 6), 2, output_size=3, _random_samples=t.rand(2, 3, 3)
        ),
        lambda t: t.nn.functional.fractional_max_pool2d(t.zeros(7, 6), 2, output_size=3),
        lambda t: t.nn.functional.fractional_max_pool2d(t.zeros(2, 3, 7, 6), 2, output_ratio=0.5),
        lambda t: t.nn.functional.fractional_max_pool3d(
            t.zeros(2, 3, 7, 6, 5), 2, output_size=(6, 4, 3)
        ),
        lambda t: t.nn.functional.fractional_max_pool3d(
            t.zeros(2, 3, 7, 6, 5), 2, output_size=(5, 5, 3)
        ),
        lambda t: t.nn.FractionalMaxPool2d(2),
        lambda t: t.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
        lambda t: t.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    ]
    for call in calls:
        with pytest.raises(Exception) as et:
            call(torch)
        with pytest.raises(type(et.value)) as el:
            call(lt)
        if not isinstance(et.value, (IndexError, TypeError)):
            assert str(el.value) == str(et.value)


# -- NLLLoss2d ----------------------------------------------------------------------------


def test_nll_loss2d_is_nll_loss_with_torchs_warning():
    x = RNG.normal(size=(2, 3, 4, 4)).astype(np.float32)
    t = RNG.integers(0, 3, size=(2, 4, 4))
    w = np.array([0.2, 1.0, 3.0], np.float32)
    out = []
    for lib in (torch, lt):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m = lib.nn.NLLLoss2d(weight=lib.tensor(w), ignore_index=1)
        assert any(issubclass(r.category, FutureWarning) for r in rec)
        assert isinstance(m, lib.nn.NLLLoss)
        out.append(float(m(lib.tensor(x), lib.tensor(t))))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6)
