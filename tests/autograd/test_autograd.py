"""Autograd as users meet it: gradients of public ops against torch.autograd, and the
Tensor / autograd / func API (leaves, grad mode, hooks, retain_graph, higher order, saved
values, one program per training step)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check_grad, positive


def r(*shape, dtype="float64", lo=-2.0, hi=2.0):
    return arr(*shape, dtype=dtype, low=lo, high=hi)


def distinct(*shape, dtype="float64"):
    # values far apart, so max/min/sort/pooling have no ties
    n = int(np.prod(shape)) if shape else 1
    v = np.random.default_rng(5).permutation(n).astype(dtype) * 0.37 - n * 0.1
    return v.reshape(shape)


F = "float64"
IDX = np.array([2, 0, 1, 2])

CASES = {
    # elementwise, broadcasting, scalars, 0-d
    "add_bcast": (lambda t, x, y: x + y, [r(2, 3), r(3)]),
    "mul_outer_bcast": (lambda t, x, y: x * y, [r(2, 1), r(1, 3)]),
    "sub_0d": (lambda t, x, y: x - y, [r(), r(2, 3)]),
    "div": (lambda t, x, y: x / y, [r(2, 3), positive(2, 3, dtype=F)]),
    "scalar_ops": (lambda t, x: 2 / (x * 3 - 1.5) + x**2, [positive(4, dtype=F)]),
    "rpow": (lambda t, x: 2**x, [r(4)]),
    "pow_tensor": (lambda t, x, y: x**y, [positive(3, dtype=F), r(3)]),
    "sqrt_rsqrt": (lambda t, x: x.sqrt() + x.rsqrt() + x.reciprocal(), [positive(5, dtype=F)]),
    "exp_log": (
        lambda t, x: x.exp() + x.abs().log() + x.log1p().nan_to_num(),
        [positive(5, dtype=F)],
    ),
    "log2_log10_exp2": (lambda t, x: t.log2(x) + t.log10(x) + t.exp2(x), [positive(4, dtype=F)]),
    "trig": (lambda t, x: x.sin() * x.cos() + x.tan() + t.atan(x), [r(6, lo=-1, hi=1)]),
    "hyperbolic": (lambda t, x: t.sinh(x) + t.cosh(x) + t.tanh(x), [r(5)]),
    "inverse_trig": (lambda t, x: t.asin(x) + t.acos(x) + t.atanh(x), [r(5, lo=-0.9, hi=0.9)]),
    "asinh_acosh": (lambda t, x: t.asinh(x) + t.acosh(x + 2), [positive(4, dtype=F)]),
    "atan2_hypot": (lambda t, x, y: t.atan2(x, y) + t.hypot(x, y), [r(4), positive(4, dtype=F)]),
    "erf_erfc": (lambda t, x: t.erf(x) + t.erfc(x), [r(5)]),
    "sigmoid_logsigmoid": (
        lambda t, x: t.sigmoid(x) + t.nn.functional.logsigmoid(x),
        [r(5)],
    ),
    "relu": (lambda t, x: t.relu(x), [distinct(7)]),
    "gelu": (lambda t, x: t.nn.functional.gelu(x), [r(6)]),
    "gelu_tanh": (lambda t, x: t.nn.functional.gelu(x, approximate="tanh"), [r(6)]),
    "silu_softplus_elu": (
        lambda t, x: (
            t.nn.functional.silu(x)
            + t.nn.functional.softplus(x)
            + t.nn.functional.elu(x)
            + t.nn.functional.leaky_relu(x, 0.1)
        ),
        [distinct(6) / 3],
    ),
    "clamp": (lambda t, x: x.clamp(-1.0, 0.5) + x.clamp(min=0.1), [distinct(8) / 4]),
    "hardtanh": (lambda t, x: t.nn.functional.hardtanh(x), [distinct(8) / 4]),
    "max_min_elementwise": (
        lambda t, x, y: t.maximum(x, y) * t.minimum(x, y),
        [distinct(6), distinct(6)[::-1].copy() + 0.05],
    ),
    "where_masked_fill": (
        lambda t, x, y: t.where(x > 0, x, y).masked_fill(y > 1, 0.5),
        [r(2, 3), r(2, 3)],
    ),
    "lerp_addcmul_addcdiv": (
        lambda t, x, y, z: (
            t.lerp(x, y, 0.3) + t.addcmul(x, y, z, value=0.5) + t.addcdiv(x, y, z, value=2)
        ),
        [r(3), r(3), positive(3, dtype=F)],
    ),
    "logaddexp_square": (lambda t, x, y: t.logaddexp(x, y) + t.square(x), [r(4), r(4)]),
    "abs_sign_floor": (
        lambda t, x: x.abs() * 2 + t.sign(x) + x.floor() + x.round(),
        [distinct(6) / 3 + 0.1],
    ),
    "fmod_remainder": (
        lambda t, x, y: t.fmod(x, y) + t.remainder(x, y),
        [r(4, lo=0.1, hi=0.9) * 3, np.array([1.3, 1.1, 1.7, 1.9])],
    ),
    "zero_d": (lambda t, x: (x * x).exp(), [np.array(0.7)]),
    "cast_f32": (lambda t, x: (x.float() * 2).double(), [r(4)]),
    # reductions
    "sum_all_dim_keepdim": (
        lambda t, x: x.sum() + x.sum(1).sum() + x.sum((0, 2), keepdim=True).sum(),
        [r(2, 3, 4)],
    ),
    "mean_var_std": (
        lambda t, x: x.mean(1) + x.var(1) + x.std(1, unbiased=False),
        [r(3, 5)],
    ),
    "prod": (lambda t, x: x.prod(1), [r(3, 4)]),
    "amax_amin_max_dim": (
        lambda t, x: x.amax(1) + x.amin(0).sum() + x.max(1).values + x.min(1)[0],
        [distinct(3, 4)],
    ),
    "max_all": (lambda t, x: x.max() + x.min(), [distinct(3, 4)]),
    "logsumexp_norm": (
        lambda t, x: t.logsumexp(x, 1) + x.norm(dim=1) + x.norm(p=1, dim=1),
        [r(3, 4)],
    ),
    "cumsum": (lambda t, x: x.cumsum(0) * x.cumsum(1), [r(3, 4)]),
    "softmax_log_softmax": (
        lambda t, x: x.softmax(1) * 2 + x.log_softmax(0),
        [r(3, 5)],
    ),
    "empty_sum": (lambda t, x: x.sum(0), [np.zeros((0, 3))]),
    "size1_dims": (lambda t, x: (x * x).sum(0) + x.mean(2), [r(1, 3, 1)]),
    # shape and views
    "reshape_view_flatten": (
        lambda t, x: x.reshape(6, 2) @ x.view(2, 6) + x.flatten().sum(),
        [r(3, 4)],
    ),
    "transpose_permute_T": (
        lambda t, x: x.transpose(0, 2).permute(1, 0, 2).sum(2) + x.mT.sum(0).T,
        [r(2, 3, 4)],
    ),
    "squeeze_unsqueeze_expand": (
        lambda t, x: x.unsqueeze(0).expand(3, 2, 4).squeeze() * x.squeeze(),
        [r(2, 4)],
    ),
    "broadcast_to_tile_repeat": (
        lambda t, x: t.broadcast_to(x, (2, 3)) + t.tile(x, (2, 1))[:2] + x.repeat(2, 1)[1:3],
        [r(1, 3)],
    ),
    "cat_stack_split_chunk": (
        lambda t, x, y: (
            t.cat([x, y], 0).split(1, 0)[1]
            + t.stack([x, y]).sum(0)
            + t.cat([x, y], 1).chunk(2, 1)[1]
        ),
        [r(2, 3), r(2, 3)],
    ),
    "unbind_narrow_select": (
        lambda t, x: x.unbind(1)[2] + x.narrow(1, 1, 2).sum(1) + x.select(1, 0),
        [r(3, 4)],
    ),
    "basic_indexing_steps": (
        lambda t, x: x[::2, 1:] * 2 + x[1:, 1:][::2].flip(1)[:, :3],
        [r(4, 4)],
    ),
    "flip_roll": (lambda t, x: x.flip(0) * t.roll(x, 1, 1), [r(3, 4)]),
    "tril_triu": (lambda t, x: x.tril() + x.triu(1) * 2, [r(4, 4)]),
    "movedim_swapaxes": (
        lambda t, x: t.movedim(x, 0, 2).sum(2) + x.swapaxes(0, 1).sum(1),
        [r(2, 3, 4)],
    ),
    "non_contiguous_matmul": (lambda t, x, y: x.T @ y[::2], [r(4, 3), r(8, 5)]),
    "setitem": (
        lambda t, x, y: _setitem(x, y),
        [r(3, 4), r(4)],
    ),
    # indexing
    "gather_index_select_take": (
        lambda t, x: (
            t.gather(x, 1, t.tensor([[0, 2], [1, 1], [3, 0]]))
            + t.index_select(x, 1, t.tensor([1, 3])) * 2
            + t.take_along_dim(x, t.tensor([[1], [0], [2]]), 1)
        ),
        [r(3, 4)],
    ),
    "advanced_indexing": (
        lambda t, x: (
            x[t.tensor([2, 0, 2])] + x[:, t.tensor([1, 1, 0, 3])][:, :4].sum(1, keepdim=True)
        ),
        [r(3, 4)],
    ),
    "scatter_add": (
        lambda t, x, y: x.scatter_add(0, t.tensor([[1, 0, 1], [1, 2, 0]]), y),
        [r(3, 3), r(2, 3)],
    ),
    "embedding": (
        lambda t, w: t.nn.functional.embedding(t.tensor([[1, 3], [3, 0]]), w),
        [r(5, 3)],
    ),
    # linear algebra
    "matmul_variants": (
        lambda t, a, b, v: (a @ b).sum(0) + (v @ b).sum() + (a[0] @ v).sum() + t.mv(b.T, v).sum(),
        [r(2, 3, 4), r(4, 5), r(4)],
    ),
    "matmul_batch_bcast": (lambda t, a, b: a @ b, [r(2, 1, 3, 4), r(3, 4, 2)]),
    "mm_bmm_addmm": (
        lambda t, a, b, c: t.mm(a, b) + t.bmm(a[None], b[None])[0] + t.addmm(c, a, b, beta=0.5),
        [r(3, 4), r(4, 2), r(3, 2)],
    ),
    "einsum_outer_dot": (
        lambda t, a, b: (
            t.einsum("ij,jk->ik", a, b).sum() + t.outer(a[0], b[0]).sum() + t.dot(a[0], a[1])
        ),
        [r(2, 3), r(3, 3)],
    ),
    "linear": (lambda t, x, w, b: t.nn.functional.linear(x, w, b), [r(4, 3), r(5, 3), r(5)]),
    # nn.functional
    "layer_norm": (
        lambda t, x, w, b: t.nn.functional.layer_norm(x, (4,), w, b),
        [r(3, 4), r(4), r(4)],
    ),
    "batch_norm_train": (
        lambda t, x, w, b: t.nn.functional.batch_norm(x, None, None, w, b, training=True),
        [r(6, 3), r(3), r(3)],
    ),
    "conv2d": (
        lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, stride=2, padding=1),
        [r(2, 3, 7, 7), r(4, 3, 3, 3), r(4)],
    ),
    "conv2d_groups_dilation": (
        lambda t, x, w: t.nn.functional.conv2d(x, w, groups=2, dilation=2),
        [r(1, 4, 7, 6), r(4, 2, 2, 3)],
    ),
    "max_pool2d": (
        lambda t, x: t.nn.functional.max_pool2d(x, 2, stride=2, padding=1),
        [distinct(2, 2, 5, 5)],
    ),
    "avg_pool2d": (lambda t, x: t.nn.functional.avg_pool2d(x, 3, stride=2), [r(2, 2, 7, 7)]),
    "cross_entropy": (
        lambda t, x: t.nn.functional.cross_entropy(x, t.tensor([1, 0, 4, 2])),
        [r(4, 5)],
    ),
    "cross_entropy_options": (
        lambda t, x, w: t.nn.functional.cross_entropy(
            x, t.tensor([1, 0, 4, 2]), weight=w, ignore_index=0, label_smoothing=0.1
        ),
        [r(4, 5), positive(5, dtype=F)],
        [0],  # torch: the class weights take no gradient
    ),
    "cross_entropy_3d": (
        lambda t, x: t.nn.functional.cross_entropy(x, t.tensor([[1, 2], [0, 1]]), reduction="sum"),
        [r(2, 3, 2)],
    ),
    "nll_mse_bce": (
        lambda t, x, y: (
            t.nn.functional.nll_loss(x.log_softmax(1), t.tensor([0, 2, 1]))
            + t.nn.functional.mse_loss(x, y)
            + t.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid())
            + t.nn.functional.l1_loss(x, y)
            + t.nn.functional.smooth_l1_loss(x, y)
        ),
        [r(3, 4), r(3, 4)],
    ),
    "sdpa_causal": (
        lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
        [r(2, 5, 4), r(2, 5, 4), r(2, 5, 4)],
    ),
    "normalize_cosine": (
        lambda t, x, y: (
            t.nn.functional.normalize(x, dim=1) + t.nn.functional.cosine_similarity(x, y)[:, None]
        ),
        [r(3, 4), r(3, 4)],
    ),
    "pad_modes": (
        lambda t, x: (
            t.nn.functional.pad(x, (1, 2, 0, 1)).sum()
            + t.nn.functional.pad(x, (1, 1), mode="reflect").sum()
        ),
        [r(2, 3, 4)],
    ),
}


def _setitem(x, y):
    z = x * 1
    z[1] = y * 2
    z[:, 0] = 0.0
    return z


def _case(name):
    fn, inputs, *rest = CASES[name]
    return fn, inputs, (rest[0] if rest else None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_torch(name):
    fn, inputs, diff = _case(name)
    check_grad(fn, *inputs, diff=diff)


SECOND = [
    "add_bcast", "div", "scalar_ops", "pow_tensor", "exp_log", "trig", "hyperbolic",
    "erf_erfc", "gelu", "softmax_log_softmax", "mean_var_std", "logsumexp_norm",
    "matmul_variants", "layer_norm", "cross_entropy", "conv2d", "sdpa_causal", "prod",
    "basic_indexing_steps", "gather_index_select_take",
]  # fmt: skip


@pytest.mark.parametrize("name", SECOND)
def test_second_order_matches_torch(name):
    fn, inputs, diff = _case(name)
    check_grad(fn, *inputs, diff=diff, second_order=True, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize(
    "name",
    [
        "add_bcast",
        "softmax_log_softmax",
        "layer_norm",
        "conv2d",
        "matmul_variants",
        "cross_entropy",
    ],
)
def test_float32_gradients(name):
    fn, inputs = CASES[name]
    check_grad(
        fn,
        *[a.astype(np.float32) if a.dtype == np.float64 else a for a in inputs],
        atol=1e-4,
        rtol=1e-4,
    )


@pytest.mark.parametrize("name", ["layer_norm", "cross_entropy", "basic_indexing_steps"])
def test_sync_mode_gradients(name):
    fn, inputs, diff = _case(name)
    check_grad(fn, *inputs, diff=diff, modes=("sync",))


# -- the Tensor API ----------------------------------------------------------------------------


def test_grad_fn_next_functions_reach_the_leaves_like_torch():
    # the blitz neural-networks tutorial prints loss.grad_fn.next_functions[0][0]...; the
    # nodes between may be finer than torch's, the leaves reached and the ends are the same
    def walk(lib):
        lin = lib.nn.Linear(3, 2)
        frozen = lib.ones(2, 3, requires_grad=True)
        x = lib.ones(4, 3)
        loss = lib.relu(lin(x)).sum() + (frozen.detach() * 2).sum()
        named = {id(lin.weight): "weight", id(lin.bias): "bias", id(frozen): "frozen"}
        leaves, seen, stack = set(), set(), [loss.grad_fn]
        while stack:
            f = stack.pop()
            if f is None or f in seen:
                continue
            seen.add(f)
            if hasattr(f, "variable"):
                assert f.next_functions == ()
                leaves.add(named[id(f.variable)])
            stack.extend(g for g, _ in f.next_functions)
        w = lib.ones(2, requires_grad=True)
        ends = [
            (type(g).__name__ if g is not None else None, k)
            for g, k in (w * lib.ones(2)).grad_fn.next_functions
        ]
        return leaves, ends

    assert walk(lt) == walk(torch) == ({"weight", "bias"}, [("AccumulateGrad", 0), (None, 0)])


def test_grad_fn_next_functions_chain_of_scalar_ops_like_torch():
    # the introyt autograd tutorial walks d.grad_fn.next_functions[0][0]... down to the
    # leaf: ``2 * b`` and ``c + 1`` list the tensor's history first, as torch's do
    def chain(lib):
        a = lib.linspace(0.0, 6.0, steps=5, requires_grad=True)
        d = 2 * lib.sin(a) + 1
        out, f = [], d.grad_fn
        while f is not None:
            out.append([g is None for g, _ in f.next_functions])
            f = f.next_functions[0][0] if f.next_functions else None
        return out

    assert chain(lt) == chain(torch) == [[False, True], [False, True], [False], []]


def test_leaf_and_requires_grad_flags():
    w = lt.ones(2, requires_grad=True)
    x = lt.ones(2)
    y = w * x
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    assert x.is_leaf and not x.requires_grad
    assert not (y > 0).requires_grad  # bool results never carry gradient
    assert not y.argmax().requires_grad
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating point"):
        lt.ones(2, dtype=lt.int64).requires_grad_()
    w.requires_grad_(False)
    assert not w.requires_grad and not (w * 2).requires_grad


def test_grad_mode_switches():
    w = lt.ones(2, requires_grad=True)
    with lt.no_grad():
        assert not (w * 2).requires_grad
        with lt.enable_grad():
            assert (w * 2).requires_grad
    with lt.inference_mode():
        assert not (w * 2).requires_grad
    with lt.set_grad_enabled(False):
        assert not (w * 2).requires_grad
    assert (w * 2).requires_grad

    @lt.no_grad()
    def f(a):
        return a * 3

    assert not f(w).requires_grad


def test_detach_stops_gradient_and_shares_writes():
    w = lt.tensor([1.0, 2.0], requires_grad=True)
    d = w.detach()
    assert not d.requires_grad and d.is_leaf
    (w * d).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])
    y = w * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        (y.detach() * 2).sum().backward()


def test_backward_accumulates_and_grad_can_be_reset():
    w = lt.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 12.0])
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="different size"):
        w.grad = lt.ones(3)


def test_backward_twice_needs_retain_graph():
    w = lt.tensor([1.0, 2.0], requires_grad=True)
    loss = (w.exp() * w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    tw = torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    tl = (tw.exp() * tw).sum()
    tl.backward(retain_graph=True)
    tl.backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


# A second backward through a node is refused only where that node's backward read forward
# values torch had saved (and released): through a cast, a view, an add or a sum it runs.
# (torch's mean saves nothing; lazytorch's mean is a sum and a division, which does.)
SECOND_BACKWARD = {
    "float()": lambda lib, a: a.float(),
    "to(float32)": lambda lib, a: a.to(lib.float32),
    "a + 1": lambda lib, a: a + 1,
    "view(-1)": lambda lib, a: a.view(-1),
    "t()": lambda lib, a: a.t(),
    "a[1:]": lambda lib, a: a[1:],
    "expand": lambda lib, a: a.expand(3, 4),
    "cat": lambda lib, a: lib.cat([a, a]),
    "sum": lambda lib, a: a.sum(0, keepdim=True),
    "neg": lambda lib, a: -a,
    "clone": lambda lib, a: a.clone(),
    "a * 2": lambda lib, a: a * 2,
    "a * a": lambda lib, a: a * a,
    "exp": lambda lib, a: a.exp(),
    "a * 2 then float()": lambda lib, a: (a * 2).float(),
}


@pytest.mark.parametrize("case", list(SECOND_BACKWARD))
def test_a_second_backward_runs_where_torchs_does(case):
    seen = []
    for lib in (torch, lt):
        x = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64, requires_grad=True)
        b = SECOND_BACKWARD[case](lib, x)
        grads = []
        for _ in range(2):
            try:
                (b * b).sum().backward()
                grads.append(x.grad.numpy().copy())
            except RuntimeError as e:
                assert "second time" in str(e)
                grads.append(None)
        seen.append(grads)
    for t, ours in zip(*seen):
        assert (t is None) == (ours is None), seen
        if t is not None:
            np.testing.assert_allclose(ours, t, rtol=1e-12)


def test_grad_wrt_a_non_leaf_leaves_the_graph_below_it_to_a_later_backward():
    # MAML's inner loop: autograd.grad of a loss with respect to fast weights computed from
    # the model's weights, then the outer loss's backward through those same fast weights.
    # torch releases only the nodes a backward ran; the graph below `a` never ran.
    seen = []
    for lib in (torch, lt):
        w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        a = w * 2
        (g,) = lib.autograd.grad((a * a).sum(), [a])
        fast = a - 0.1 * g
        (fast.exp() * 3).sum().backward()
        seen.append((g.detach().numpy().copy(), w.grad.numpy().copy()))
    for t, ours in zip(*seen):
        np.testing.assert_allclose(ours, t, rtol=1e-6)


def test_a_second_backward_through_a_computed_save_nothing_node_reaches_the_leaf():
    # a cast and a view kept their history; their values computed in between (a print)
    # must not cut the path to the leaf
    seen = []
    for lib in (torch, lt):
        x = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64, requires_grad=True)
        c = x.float().view(-1) + 1
        rows = []
        for _ in range(3):
            (c * c).sum().backward()
            rows.append((x.grad.numpy().copy(), c.detach().numpy().copy()))
        seen.append(rows)
    for (tg, tc), (g, c) in zip(*seen):
        np.testing.assert_allclose(g, tg, rtol=1e-6)
        np.testing.assert_allclose(c, tc, rtol=1e-6)


def test_a_loss_above_freed_nodes_releases_its_history():
    # A sum over a product keeps nothing after backward: its history would hold the graph
    # below it, down to the parameters' old values, while the script holds the loss (a
    # list of losses). Only save-nothing nodes standing on leaves keep theirs.
    from lazytorch.autograd.engine import FREED

    w = lt.ones(3, requires_grad=True)
    x = w.float()  # (on a leaf: kept)
    loss = ((x * 2.0) ** 2).sum()
    loss.backward()
    assert loss._node.ag is FREED
    assert x._node.ag is not FREED


def test_non_scalar_backward_needs_gradient():
    w = lt.ones(3, requires_grad=True)
    y = w * 2
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(lt.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0, 6.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        lt.ones(2).sum().backward()


def test_inplace_on_leaf_is_refused_in_grad_mode_and_keeps_leaf_under_no_grad():
    w = lt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w[0] = 3.0
    with lt.no_grad():
        w.mul_(3)
        w[1] = 5.0
    assert w.is_leaf and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), [3.0, 5.0])
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 10.0])


def test_inplace_on_non_leaf_is_differentiable():
    w = lt.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    y.mul_(w)
    y.add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 8.0])


def test_hooks_and_retain_grad():
    w = lt.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = w.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = w * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 6.0])
    assert len(seen) == 1
    h.remove()
    (w * 1).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lt.ones(2).register_hook(lambda g: g)


def test_autograd_grad_options():
    x = lt.tensor([1.0, 2.0], requires_grad=True)
    z = lt.tensor([1.0], requires_grad=True)
    y = (x**2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        lt.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = lt.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and x.grad is None
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    (g0,) = lt.autograd.grad(y, z, materialize_grads=True)
    np.testing.assert_array_equal(g0.numpy(), [0.0])
    # gradient with respect to a non-leaf
    x2 = lt.tensor([1.0, 2.0], requires_grad=True)
    h = x2 * 3
    (gh,) = lt.autograd.grad((h * h).sum(), h)
    np.testing.assert_array_equal(gh.numpy(), [6.0, 12.0])


def test_higher_order_through_create_graph():
    x = lt.tensor(0.5, dtype=lt.float64, requires_grad=True)
    y = x.sin() * x.exp()
    (g1,) = lt.autograd.grad(y, x, create_graph=True)
    (g2,) = lt.autograd.grad(g1, x, create_graph=True)
    (g3,) = lt.autograd.grad(g2, x)
    tx = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    ty = tx.sin() * tx.exp()
    (t1,) = torch.autograd.grad(ty, tx, create_graph=True)
    (t2,) = torch.autograd.grad(t1, tx, create_graph=True)
    (t3,) = torch.autograd.grad(t2, tx)
    for a, b in [(g1, t1), (g2, t2), (g3, t3)]:
        assert a.item() == pytest.approx(b.item(), rel=1e-12)


def test_backward_create_graph_makes_grad_differentiable():
    x = lt.tensor([1.0, 2.0], dtype=lt.float64, requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    (gg,) = lt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_func_transforms():
    from lazytorch.func import grad, value_and_grad, vjp

    def f(w, x):
        return ((w * x).sin()).sum()

    w = lt.tensor([0.3, -1.2], dtype=lt.float64)
    x = lt.tensor([1.5, 0.7], dtype=lt.float64)
    gw, gx = grad(f, argnums=(0, 1))(w, x)
    tw = torch.tensor([0.3, -1.2], dtype=torch.float64)
    tx = torch.tensor([1.5, 0.7], dtype=torch.float64)
    twg, txg = torch.func.grad(lambda a, b: (a * b).sin().sum(), argnums=(0, 1))(tw, tx)
    np.testing.assert_allclose(gw.numpy(), twg.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), txg.numpy(), rtol=1e-12)
    # nested: the Hessian-vector structure of grad(grad)
    hh = grad(lambda a: grad(lambda b: (b**4).sum())(a).sum())(w)
    np.testing.assert_allclose(hh.numpy(), 12 * w.numpy() ** 2, rtol=1e-12)
    # has_aux and pytrees
    (val, aux), g = value_and_grad(lambda p: ((p["a"] * 2).sum(), "aux"), has_aux=True)({"a": w})
    assert aux == "aux" and val.item() == pytest.approx(-1.8)
    np.testing.assert_array_equal(g["a"].numpy(), [2.0, 2.0])
    _out, fn = vjp(lambda a, b: a * b, w, x)
    ga, gb = fn(lt.ones(2, dtype=lt.float64))
    np.testing.assert_array_equal(ga.numpy(), x.numpy())
    np.testing.assert_array_equal(gb.numpy(), w.numpy())
    assert w.grad is None and not w.requires_grad  # transforms leave their inputs alone
    with pytest.raises(RuntimeError, match="scalar"):
        grad(lambda a: a * 2)(w)


def test_item_before_backward_reuses_forward_values():
    """loss.item() before backward(): the values backward reads are computed with the
    forward, so the backward program does not contain the forward's exp."""
    w = lt.tensor([0.1, 0.2, 0.3], requires_grad=True)
    x = lt.tensor([1.0, 2.0, 3.0])
    h = (w * x).exp()
    loss = (h * h).sum()
    value = loss.item()
    assert h.is_materialized  # saved for backward along with the loss
    loss.backward()
    prog = lt.debug.program(w.grad)
    assert " = exp " not in str(prog), prog
    tw = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    tl = ((tw * torch.tensor([1.0, 2.0, 3.0])).exp() ** 2).sum()
    tl.backward()
    assert value == pytest.approx(tl.item(), rel=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def test_forward_backward_and_update_are_one_program():
    w = lt.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    x = lt.tensor(np.ones((5, 3)))
    lt.materialize(w, x)
    lt.metrics.reset()
    loss = (x @ w).tanh().sum()
    loss.backward()
    with lt.no_grad():
        w.sub_(w.grad * 0.1)
    w.grad = None
    lt.materialize()
    c = lt.metrics.counters()
    assert c["materializations"] == 1 and c["programs_built"] == 1
    assert loss.is_materialized and w.is_materialized and w.is_leaf


def test_a_training_loop_reuses_one_program():
    w = lt.tensor(np.full((4, 2), 0.1), requires_grad=True)
    data = lt.tensor(np.random.default_rng(0).normal(size=(8, 4)))
    lt.materialize(w, data)
    lt.metrics.reset()
    losses = []
    for _ in range(4):
        loss = ((data @ w) ** 2).mean()
        loss.backward()
        with lt.no_grad():
            w.sub_(0.1 * w.grad)
        w.grad = None
        lt.materialize()
        losses.append(loss.item())
    c = lt.metrics.counters()
    assert c["programs_built"] == 1, c
    assert losses == sorted(losses, reverse=True)


def test_backward_error_names_the_op_line():
    x = lt.tensor([1.0, 2.0], requires_grad=True)
    y = x.sort().values  # argsort + gather: differentiable through gather
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    z = lt.ones(4, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"not differentiable.*test_autograd.py"):
        from lazytorch.ops._core import wrap

        s = wrap(
            lt.ir.primitives.get("scatter").bind(
                (z._node, lt.tensor([[0, 1, 2]])._node, lt.ones(1, 3)._node), (0, "multiply")
            )
        )
        s.sum().backward()


def test_schedule_reports_what_backward_keeps_from_forward():
    w = lt.tensor(
        np.random.default_rng(0).normal(size=(16, 8)).astype(np.float32), requires_grad=True
    )
    x = lt.tensor(np.random.default_rng(1).normal(size=(32, 16)).astype(np.float32))
    lt.materialize(w, x)
    h = x @ w  # a GEMM result whose first reader is a reduction: saved (an anchor)
    # pointwise: recomputed in backward, never saved (with h's first reader pointwise, the
    # GEMM's epilogue would compute the backward's factor too, and save nothing)
    g = ((h - h.mean(1, keepdim=True)).tanh() * 2).exp()
    g.sum().backward()
    text = str(lt.debug.schedule(g, w.grad))
    line = [ln for ln in text.splitlines() if ln.startswith("autograd:")]
    assert len(line) == 1, text
    assert "saved for backward: 1 buffers" in line[0] and "f32[32, 8]" in line[0], line[0]
    # without autograd there is no such line
    assert "autograd:" not in str(lt.debug.schedule((x * 2).sum()))


def test_linear_backward_has_no_copy_kernels():
    """The weight gradient comes out in the weight's layout (no transposing copy), and
    GEMMs read reshaped kernel results through strides (no reshaping copy)."""
    rng = np.random.default_rng(0)
    w = lt.tensor(rng.normal(size=(16, 32)).astype(np.float32), requires_grad=True)
    x = lt.tensor(rng.normal(size=(4, 8, 32)).astype(np.float32), requires_grad=True)
    lt.materialize(w, x)
    h = lt.nn.functional.layer_norm(x, (32,))
    y = lt.nn.functional.linear(h, w)
    (y.tanh() ** 2).sum().backward()
    sched = lt.debug.schedule(w.grad, x.grad)
    copies = [k.describe() for k in sched.kernels if not k.fused]
    assert copies == [], copies
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = torch.nn.functional.linear(torch.nn.functional.layer_norm(tx, (32,)), tw)
    (ty.tanh() ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("max_norm", [None, 1.0])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_functional_embedding_gradient_like_torch(max_norm, padding_idx):
    """F.embedding renormalizes outside autograd and gives the padding row no gradient."""
    w0 = np.random.default_rng(0).normal(size=(5, 3)) * 2
    idx = np.array([[0, 2, 4], [2, 1, 4]])
    ct = np.random.default_rng(1).normal(size=(2, 3, 3))
    outs = []
    for lib in (torch, lt):
        w = lib.tensor(w0.copy(), requires_grad=True)
        y = lib.nn.functional.embedding(
            lib.tensor(idx), w, padding_idx=padding_idx, max_norm=max_norm
        )
        (y * lib.tensor(ct)).sum().backward()
        outs.append([np.asarray(a.detach().numpy()) for a in (y, w.grad, w)])
    for got, want, what in zip(outs[1], outs[0], ("values", "weight grad", "weight after")):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=what)


def test_copy_under_no_grad_carries_no_history():
    # torch: a.copy_(p) under no_grad leaves `a` not requiring grad; with grad on it does
    for grad_on in (False, True):
        tp, lp = torch.ones(3, requires_grad=True), lt.ones(3, requires_grad=True)
        ta, la = torch.zeros(3), lt.zeros(3)
        with torch.set_grad_enabled(grad_on), lt.set_grad_enabled(grad_on):
            ta.copy_(tp * 3)
            la.copy_(lp * 3)
        assert la.requires_grad == ta.requires_grad == grad_on
    la.sum().backward()
    assert lp.grad.tolist() == [3.0, 3.0, 3.0]


def test_grad_signature_matches_torch():
    def names(f):
        return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]

    assert names(lt.autograd.grad) == names(torch.autograd.grad)


@pytest.mark.parametrize("lib", ["torch", "lt"])
def test_grad_only_inputs_is_ignored_and_false_warns(lib):
    m = torch if lib == "torch" else lt
    x = m.tensor([1.0, 2.0], requires_grad=True)
    (g,) = m.autograd.grad((x * x).sum(), x, only_inputs=True)
    np.testing.assert_array_equal(g.numpy() if lib == "lt" else g.detach().numpy(), [2.0, 4.0])
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        (g,) = m.autograd.grad((x * x).sum(), x, only_inputs=False)
    assert x.grad is None


def test_grad_is_grads_batched_is_refused():
    x = lt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="is_grads_batched=True"):
        lt.autograd.grad(x * 2, x, lt.eye(2), is_grads_batched=True)


def _gradient_penalty_step(m, w1, b1, w2, b2, real, fake, alpha):
    """WGAN-GP's critic loss (eriklindernoren/PyTorch-GAN wgan_gp.py): a double backward."""
    params = [m.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    F = m.nn.functional

    def critic(x):
        h = F.leaky_relu(F.linear(x.view(x.shape[0], -1), params[0], params[1]), 0.2)
        return F.linear(h, params[2], params[3])

    real, fake, alpha = m.tensor(real), m.tensor(fake), m.tensor(alpha)
    interpolates = (alpha * real + ((1 - alpha) * fake)).requires_grad_(True)
    d = critic(interpolates)
    ones = m.ones(real.shape[0], 1, dtype=m.float64)
    (g,) = m.autograd.grad(
        outputs=d,
        inputs=interpolates,
        grad_outputs=ones,
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )
    g = g.view(g.size(0), -1)
    gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = -m.mean(critic(real)) + m.mean(critic(fake)) + 10 * gp
    loss.backward()
    return [loss.detach().numpy()] + [p.grad.numpy() for p in params]


def test_wgan_gp_gradient_penalty_double_backward_matches_torch():
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((16, 12)) * 0.3, rng.standard_normal(16) * 0.1
    w2, b2 = rng.standard_normal((1, 16)) * 0.3, rng.standard_normal(1) * 0.1
    real, fake = rng.standard_normal((5, 1, 3, 4)), rng.standard_normal((5, 1, 3, 4))
    alpha = rng.random((5, 1, 1, 1))
    args = (w1, b1, w2, b2, real, fake, alpha)
    for got, want in zip(
        _gradient_penalty_step(lt, *args), _gradient_penalty_step(torch, *args), strict=True
    ):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
