"""Module.register_full_backward_hook / register_full_backward_pre_hook against torch:
grad_input and grad_output seen by the hooks, replaced gradients, inputs that need no
gradient, tuple outputs, removal, and a Grad-CAM style use."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

import lazytorch as lt

X = np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -0.1]], dtype=np.float32)


def _model(lib: Any) -> Any:
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (k + 1))
    return m


def _as_np(gs: Any) -> list[Any]:
    return [None if g is None else g.detach().numpy().copy() for g in gs]


def _scenario(lib: Any, x_requires_grad: bool) -> dict[str, Any]:
    m = _model(lib)
    seen: dict[str, Any] = {}
    m[2].register_full_backward_hook(
        lambda mod, gi, go: seen.__setitem__("l2", (_as_np(gi), _as_np(go)))
    )
    m[0].register_full_backward_hook(
        lambda mod, gi, go: seen.__setitem__("l0", (_as_np(gi), _as_np(go)))
    )
    h = m[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
    pre = m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 0.5,))
    x = lib.tensor(X, requires_grad=x_requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m(x).pow(2).sum().backward()
    seen["w0"] = m[0].weight.grad.numpy().copy()
    seen["x"] = None if x.grad is None else x.grad.numpy().copy()
    h.remove()
    pre.remove()
    m.zero_grad()
    m(x).sum().backward()
    seen["w0_after_remove"] = m[0].weight.grad.numpy().copy()
    return seen


def _same(a: Any, b: Any) -> None:
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_full_backward_hooks_match_torch() -> None:
    for requires in (False, True):
        want, got = _scenario(torch, requires), _scenario(lt, requires)
        assert sorted(want) == sorted(got)
        for k in want:
            _same(got[k], want[k])


def test_hook_without_input_gradient_warns_as_torch() -> None:
    lin = lt.nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lin(lt.ones(1, 2)).sum().backward()
    assert any("no inputs require gradients" in str(e.message) for e in w)


def test_grad_cam_style_activation_and_gradient_capture() -> None:
    def run(lib: Any) -> tuple[Any, Any]:
        conv = lib.nn.Conv2d(1, 2, 3)
        with lib.no_grad():
            conv.weight.copy_(lib.linspace(-1, 1, 18).reshape(2, 1, 3, 3))
            conv.bias.zero_()
        acts: dict[str, Any] = {}
        conv.register_forward_hook(lambda m, i, o: acts.__setitem__("a", o.detach()))
        conv.register_full_backward_hook(lambda m, gi, go: acts.__setitem__("g", go[0].detach()))
        img = lib.linspace(0, 1, 25).reshape(1, 1, 5, 5).requires_grad_()
        conv(img).relu().mean().backward()
        weights = acts["g"].mean((2, 3), keepdim=True)
        return (weights * acts["a"]).sum(1).relu().numpy(), img.grad.numpy()

    for g, w in zip(run(lt), run(torch)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
