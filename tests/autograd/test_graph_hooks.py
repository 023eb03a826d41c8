"""Tensor.register_post_accumulate_grad_hook (and the "optimizer step in backward" pattern)
and torch.autograd.graph against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(2)
X = RNG.normal(size=(4, 8, 3)).astype(np.float32)


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))


def _share(src, dst):
    for (_, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        with lt.no_grad():
            b.copy_(lt.tensor(a.detach().numpy()))


def _optimizer_in_backward(lib, model):
    """The tutorial pattern: one optimizer per parameter, stepped from its hook."""
    opts = {p: lib.optim.Adam([p], lr=0.05, foreach=False) for p in model.parameters()}

    def hook(p):
        opts[p].step()
        opts[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(hook)
    losses = []
    for xb in X:
        loss = (model(lib.tensor(xb)) ** 2).sum()
        loss.backward()
        losses.append(float(loss))
        assert all(p.grad is None for p in model.parameters())
    return losses, [p.detach().numpy() for p in model.parameters()]


def test_optimizer_step_in_backward_matches_torch():
    mt, ml = _mlp(torch), _mlp(lt)
    _share(mt, ml)
    lt_losses, lt_params = _optimizer_in_backward(lt, ml)
    t_losses, t_params = _optimizer_in_backward(torch, mt)
    np.testing.assert_allclose(lt_losses, t_losses, rtol=1e-5)
    for a, b in zip(lt_params, t_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _calls(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.numpy().copy())))
    x.register_hook(lambda g: g * 3)
    (x * x).sum().backward()
    (x * x).sum().backward(inputs=[x])  # accumulates: the hook sees the sum
    lib.autograd.grad((x * x).sum(), x)  # accumulates nothing: no call
    h.remove()
    (x * x).sum().backward()
    return seen, x.grad.numpy()


def test_hook_calls_match_torch():
    (a, ga), (b, gb) = _calls(lt), _calls(torch)
    assert len(a) == len(b) == 2
    for (sa, va), (sb, vb) in zip(a, b):
        assert sa and sb
        np.testing.assert_allclose(va, vb)
    np.testing.assert_allclose(ga, gb)


def test_hook_errors_match_torch():
    for lib in (torch, lt):
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        with pytest.raises(RuntimeError, match="should return None"):
            x.sum().backward()
        y = lib.ones(2, requires_grad=True)
        y.register_post_accumulate_grad_hook(lambda t: 5)
        with pytest.raises(TypeError, match="hook returned 'int'"):
            y.sum().backward()


def test_leaf_hooks_run_for_autograd_grad_and_backward_inputs():
    """A leaf's register_hook applies to autograd.grad and backward(inputs=) as in torch."""
    out = []
    for lib in (torch, lt):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        (x * x).sum().backward(inputs=[x])
        out.append((g.numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1])


def _multi(lib, mode):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    d = a * b
    seen = []

    def fn(arg):
        if mode == "all":
            seen.append([None if g is None else g.numpy().tolist() for g in arg])
        else:
            seen.append(arg.numpy().tolist())

    h = lib.autograd.graph.register_multi_grad_hook((a, b, c, d), fn, mode=mode)
    c.sum().backward(retain_graph=True)
    (c * 2).sum().backward(inputs=(a,), retain_graph=True)
    h.remove()
    c.sum().backward()
    return seen


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_matches_torch(mode):
    assert _multi(lt, mode) == _multi(torch, mode)


def test_graph_module_surface():
    g = lt.autograd.graph
    x = lt.ones(2, requires_grad=True)
    y = x * 2
    assert isinstance(y.grad_fn, g.Node)
    assert isinstance(y.grad_fn.next_functions[0][0], g.Node)
    assert not isinstance(3, g.Node)
    with pytest.raises(NotImplementedError, match="grad_fn"):
        y.grad_fn.register_hook(lambda *a: None)
    with g.save_on_cpu(pin_memory=True):
        z = (x * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(NotImplementedError, match="pack"):
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    for lib in (torch, lt):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with lib.autograd.graph.save_on_cpu():
                    pass
        with pytest.raises(ValueError, match="Expects mode"):
            lib.autograd.graph.register_multi_grad_hook([x], print, mode="some")


def test_grad_fn_saved_tensors_refused_clearly():
    # torch exposes grad_fn._saved_self, _raw_saved_self, ... ; lazytorch keeps no saved
    # tensors, so reading one names the attribute and says why, and other unknown names
    # stay AttributeErrors (hasattr keeps working for them).
    a = lt.ones(2, requires_grad=True)
    y = a * a
    for name in ("_saved_self", "_raw_saved_other", "_saved_result"):
        with pytest.raises(NotImplementedError, match=f"grad_fn.{name}: lazytorch"):
            getattr(y.grad_fn, name)
    assert not hasattr(y.grad_fn, "no_such_attribute")
    assert y.grad_fn.name() == "MulBackward0"


# torch names a reduction's grad_fn after the op and its overload (sum() SumBackward0,
# sum(dim) SumBackward1, max() MaxBackward1, ...); lazytorch records several primitives
# and must name the last one as torch names the op.
GRAD_FN_NAMES = {
    "sum()": lambda t, x: x.sum(),
    "sum(dim)": lambda t, x: x.sum(1),
    "sum(dim, keepdim)": lambda t, x: x.sum(1, keepdim=True),
    "sum(dims)": lambda t, x: x.sum((0, 1)),
    "sum([])": lambda t, x: x.sum([]),
    "sum(dtype)": lambda t, x: x.sum(dtype=t.float64),
    "torch.sum(dim)": lambda t, x: t.sum(x, -1),
    "sum(None)": lambda t, x: x.sum(None),  # an explicit dim=None is the dim overload
    "sum(dim=None, keepdim)": lambda t, x: x.sum(dim=None, keepdim=True),
    "torch.sum()": lambda t, x: t.sum(x),
    "torch.sum(x, None)": lambda t, x: t.sum(x, None),
    "mean(None)": lambda t, x: x.mean(None),
    "mean(dim=None, dtype)": lambda t, x: x.mean(dim=None, dtype=t.float64),
    "nansum()": lambda t, x: x.nansum(),
    "nansum(dim, keepdim)": lambda t, x: x.nansum(1, keepdim=True),
    "mean()": lambda t, x: x.mean(),
    "mean(dim)": lambda t, x: x.mean(1),
    "mean(dim, keepdim)": lambda t, x: x.mean(1, True),
    "mean(dim, dtype)": lambda t, x: x.mean(0, dtype=t.float64),
    "mean() float16": lambda t, x: x.half().mean(),
    "prod()": lambda t, x: x.prod(),
    "prod(dim)": lambda t, x: x.prod(1),
    "prod(dim, keepdim)": lambda t, x: x.prod(1, keepdim=True),
    "max()": lambda t, x: x.max(),
    "max(dim)": lambda t, x: x.max(1)[0],
    "max(dim, keepdim)": lambda t, x: x.max(1, keepdim=True).values,
    "min()": lambda t, x: x.min(),
    "min(dim)": lambda t, x: t.min(x, 0)[0],
    "amax(dim)": lambda t, x: x.amax(1),
    "amax()": lambda t, x: x.amax(),
    "amin(dim, keepdim)": lambda t, x: x.amin(1, True),
    "aminmax().min": lambda t, x: t.aminmax(x).min,
    "aminmax(dim).max": lambda t, x: t.aminmax(x, dim=1).max,
    "std()": lambda t, x: x.std(),
    "std(dim, keepdim)": lambda t, x: x.std(1, keepdim=True),
    "var()": lambda t, x: x.var(),
    "var(dim, correction)": lambda t, x: x.var(0, correction=0),
    "std_mean std": lambda t, x: t.std_mean(x)[0],
    "std_mean mean": lambda t, x: t.std_mean(x, 1)[1],
    "var_mean var": lambda t, x: t.var_mean(x, 1)[0],
    "var_mean mean": lambda t, x: t.var_mean(x)[1],
    "norm()": lambda t, x: x.norm(),
    "norm(1)": lambda t, x: x.norm(1),
    "norm(inf)": lambda t, x: x.norm(float("inf")),
    "norm(p, dim, keepdim)": lambda t, x: x.norm(3, 1, True),
    "torch.norm(dim)": lambda t, x: t.norm(x, dim=1),
    "linalg.vector_norm": lambda t, x: t.linalg.vector_norm(x, 2, 1),
    "linalg.norm": lambda t, x: t.linalg.norm(x),
    "linalg.matrix_norm fro": lambda t, x: t.linalg.matrix_norm(x),
    "logsumexp(dim)": lambda t, x: x.logsumexp(1),
    "logsumexp(dims, keepdim)": lambda t, x: t.logsumexp(x, (0, 1), keepdim=True),
    "special.logsumexp": lambda t, x: t.special.logsumexp(x, 1),
    "softmax": lambda t, x: x.softmax(1),
    "F.softmax dtype": lambda t, x: t.nn.functional.softmax(x, 1, dtype=t.float64),
    "log_softmax": lambda t, x: x.log_softmax(-1),
    "median()": lambda t, x: x.median(),
    "median(dim)": lambda t, x: x.median(1).values,
    "nanmedian()": lambda t, x: x.nanmedian(),
    "nanmedian(dim)": lambda t, x: x.nanmedian(0)[0],
    "kthvalue": lambda t, x: x.kthvalue(2, 1)[0],
    "cumprod": lambda t, x: x.cumprod(1),
    "logcumsumexp": lambda t, x: x.logcumsumexp(1),
    "pow 2": lambda t, x: x**2,
    "pow -1": lambda t, x: t.pow(x, -1),
    "pow 2.5": lambda t, x: x.abs() ** 2.5,
    "square": lambda t, x: x.square(),
}


@pytest.mark.parametrize("sync", [False, True], ids=["lazy", "sync"])
@pytest.mark.parametrize("case", list(GRAD_FN_NAMES))
def test_grad_fn_names_of_reductions_are_torchs(case, sync):
    fn = GRAD_FN_NAMES[case]
    want = fn(torch, torch.tensor(X[0], requires_grad=True)).grad_fn.name()
    with lt.sync_mode(sync):
        got = fn(lt, lt.tensor(X[0], requires_grad=True))
        assert got.grad_fn.name() == want
        got.sum().backward()  # still differentiable after naming (and after a sync cut)
        assert got.grad_fn.name() == want  # a released history keeps its name, as torch's


_T, _C = np.random.default_rng(1).random((4, 3)).astype(np.float32), np.array([0, 1, 2, 0])
LOSS_GRAD_FN_NAMES = {
    "mse_loss": lambda F, x, t, c: F.mse_loss(x, t),
    "mse_loss none": lambda F, x, t, c: F.mse_loss(x, t, reduction="none"),
    "cross_entropy": lambda F, x, t, c: F.cross_entropy(x, c),
    "cross_entropy sum": lambda F, x, t, c: F.cross_entropy(x, c, reduction="sum"),
    "cross_entropy 1-d": lambda F, x, t, c: F.cross_entropy(x[0], c[0]),
    "nll_loss weight": lambda F, x, t, c: F.nll_loss(x, c, weight=t[0]),
    "binary_cross_entropy": lambda F, x, t, c: F.binary_cross_entropy(x.sigmoid(), t),
    "bce_with_logits": lambda F, x, t, c: F.binary_cross_entropy_with_logits(x, t),
    "smooth_l1_loss": lambda F, x, t, c: F.smooth_l1_loss(x, t),
    "huber_loss": lambda F, x, t, c: F.huber_loss(x, t),
    "l1_loss": lambda F, x, t, c: F.l1_loss(x, t),
}


@pytest.mark.parametrize("case", list(LOSS_GRAD_FN_NAMES))
def test_grad_fn_names_of_losses_are_torchs(case):
    fn = LOSS_GRAD_FN_NAMES[case]
    x = torch.tensor(X[0][:4, :3], requires_grad=True)
    want = fn(torch.nn.functional, x, torch.tensor(_T), torch.tensor(_C)).grad_fn.name()
    got = fn(
        lt.nn.functional, lt.tensor(X[0][:4, :3], requires_grad=True), lt.tensor(_T), lt.tensor(_C)
    )
    assert got.grad_fn.name() == want
    got.sum().backward()
    assert got.grad_fn.name() == want


# Layers, activations, products and views that lazytorch records as several primitives
# (or as one of another name): each named after torch's node. fn(torch, x (4, 6), w (5, 6)).
LAYER_GRAD_FN_NAMES = {
    "relu": lambda t, x, w: t.relu(x),
    "F.relu inplace": lambda t, x, w: t.nn.functional.relu(x * 1, inplace=True),
    "nn.ReLU": lambda t, x, w: t.nn.ReLU()(x),
    "gelu": lambda t, x, w: t.nn.functional.gelu(x),
    "gelu tanh": lambda t, x, w: t.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda t, x, w: t.nn.functional.silu(x),
    "leaky_relu": lambda t, x, w: t.nn.functional.leaky_relu(x),
    "leaky_relu inplace": lambda t, x, w: t.nn.functional.leaky_relu(x * 1, inplace=True),
    "layer_norm": lambda t, x, w: t.nn.functional.layer_norm(x, (6,)),
    "layer_norm affine": lambda t, x, w: t.nn.functional.layer_norm(x, (6,), w[0], w[1]),
    "batch_norm train": lambda t, x, w: t.nn.functional.batch_norm(
        x, t.zeros(6), t.ones(6), training=True
    ),
    "batch_norm eval": lambda t, x, w: t.nn.functional.batch_norm(x, t.zeros(6), t.ones(6)),
    "group_norm": lambda t, x, w: t.nn.functional.group_norm(x.view(2, 4, 3), 2),
    "conv1d": lambda t, x, w: t.nn.functional.conv1d(x.view(1, 4, 6), w[:3, :4].view(3, 4, 1)),
    "conv2d bias": lambda t, x, w: t.nn.functional.conv2d(
        x.view(1, 1, 4, 6), w[:2, :4].reshape(2, 1, 2, 2), w[0, :2]
    ),
    "conv2d unbatched": lambda t, x, w: t.nn.functional.conv2d(
        x.view(1, 4, 6), w[:2, :4].reshape(2, 1, 2, 2)
    ),
    "embedding": lambda t, x, w: t.nn.functional.embedding(t.tensor([[0, 3], [1, 1]]), x),
    "linear": lambda t, x, w: t.nn.functional.linear(x, w),
    "linear bias": lambda t, x, w: t.nn.functional.linear(x, w, w[0, :5]),
    "linear 3-d": lambda t, x, w: t.nn.functional.linear(x.view(2, 2, 6), w),
    "linear 3-d bias": lambda t, x, w: t.nn.functional.linear(x.view(2, 2, 6), w, w[0, :5]),
    "linear strided bias": lambda t, x, w: t.nn.functional.linear(
        x.view(2, 2, 6).transpose(0, 1), w, w[0, :5]
    ),
    "mm": lambda t, x, w: x @ w.t(),
    "mv": lambda t, x, w: x @ w[0],
    "dot": lambda t, x, w: x[0] @ w[0],
    "batched @ matrix": lambda t, x, w: x.view(2, 2, 6) @ w.t(),
    "bmm": lambda t, x, w: x.view(2, 2, 6) @ w[:4].reshape(2, 6, 2),
    "view": lambda t, x, w: x.view(24),
    "reshape": lambda t, x, w: x.reshape(6, 4),
    "reshape strided": lambda t, x, w: x.t().reshape(24),
    # a view of the same shape is still a view (of a leaf: no longer a leaf)
    "view same shape": lambda t, x, w: x.view(4, 6),
    "reshape same shape": lambda t, x, w: x.reshape(4, 6),
    "view_as itself": lambda t, x, w: x.view_as(x),
    "reshape of a result": lambda t, x, w: (x * 2).reshape(4, 6),
    "flatten": lambda t, x, w: x.view(2, 2, 6).flatten(1),
    "flatten strided": lambda t, x, w: x.t().flatten(),
    "t": lambda t, x, w: x.t(),
    "transpose": lambda t, x, w: x.transpose(0, 1),
    "mT": lambda t, x, w: x.mT,
    "permute": lambda t, x, w: x.permute(1, 0),
    "unsqueeze": lambda t, x, w: x.unsqueeze(1),
    "squeeze": lambda t, x, w: x.view(4, 1, 6).squeeze(),
    "squeeze dim": lambda t, x, w: x.view(4, 1, 6).squeeze(1),
    "squeeze dims": lambda t, x, w: x.view(4, 1, 6).squeeze((1,)),
}


@pytest.mark.parametrize("case", list(LAYER_GRAD_FN_NAMES))
def test_grad_fn_names_of_layers_and_views_are_torchs(case):
    fn = LAYER_GRAD_FN_NAMES[case]
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((5, 6))
    w = w.astype(np.float32)
    want = fn(torch, torch.tensor(x, requires_grad=True), torch.tensor(w)).grad_fn.name()
    got = fn(lt, lt.tensor(x, requires_grad=True), lt.tensor(w))
    assert got.grad_fn.name() == want
    assert not got.is_leaf
    got.sum().backward()
    assert got.grad_fn.name() == want


def test_grad_fn_keeps_its_name_after_backward():
    # scripts print the loss after loss.backward(): torch's "grad_fn=<MseLossBackward0>"
    class Double(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = lt.ones(3, requires_grad=True)
    loss = lt.nn.functional.mse_loss(x * 3, lt.zeros(3))
    y = Double.apply(x)
    (loss + y.sum()).backward()
    assert repr(loss).endswith("grad_fn=<MseLossBackward0>)"), repr(loss)
    assert y.grad_fn.name() == "DoubleBackward"
