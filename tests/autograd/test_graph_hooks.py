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
