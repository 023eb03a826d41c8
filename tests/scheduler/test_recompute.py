"""How much a kernel may recompute (scheduler/schedule.py `bound_recompute`).

What must hold: a pointwise value read by several instructions is stored once its inline
cost reaches INLINE_SHARED_COST, so the kernels reading it (a reduction's passes among
them) load it instead of redoing its history; and storing it changes no number.
"""

from __future__ import annotations

import numpy as np

import lazytorch as lt


def _net(lib, x, w):
    """A stem, a ResNet basic block with an identity shortcut, then a strided convolution
    (the CNN benchmark's first half, functional): the block's output gradient is ReLU's
    over the strided convolution's columns gathered back."""
    F = lib.nn.functional

    def conv_bn(h, w, stride=1):
        h = F.conv2d(h, w, padding=1, stride=stride)
        c = w.shape[0]
        return F.batch_norm(h, None, None, lib.ones(c), lib.zeros(c), training=True)

    x = F.relu(conv_bn(x, w[0]))
    x = F.relu(x + conv_bn(F.relu(conv_bn(x, w[1])), w[2]))
    return F.relu(conv_bn(x, w[3], stride=2))


def _inputs(lib):
    rng = np.random.default_rng(0)
    shapes = [(4, 2, 8, 8), (3, 2, 3, 3), (3, 3, 3, 3), (3, 3, 3, 3), (5, 3, 3, 3), (4, 5, 4, 4)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return [lib.tensor(a, requires_grad=0 < i < 5) for i, a in enumerate(arrays)]


def test_a_relu_gradient_read_by_batch_norms_backward_is_stored_once(tmp_path, monkeypatch):
    # ReLU's gradient over the sum of two paths (the block's main path and its strided
    # shortcut, each gathered back from its convolution's columns) is read by BatchNorm's
    # backward: two column sums and the pointwise input gradient. Inlined, each reduction
    # pass re-gathered both paths' columns; stored once, no reduction reads a gather.
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        x, *w, up = _inputs(lt)
        lt.materialize(x, *w, up)
        grads = lt.autograd.grad((_net(lt, x, w) * up).sum(), w)
        described = [k.describe() for k in lt.debug.schedule(*grads).kernels]
        regathering = [d for d in described if "reduce_sum" in d and "pad" in d]
        assert not regathering, "\n".join(described)
        got = [g.numpy() for g in grads]
    with lt.backend("interpreter"):
        x, *w, up = _inputs(lt)
        want = [g.numpy() for g in lt.autograd.grad((_net(lt, x, w) * up).sum(), w)]
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)
