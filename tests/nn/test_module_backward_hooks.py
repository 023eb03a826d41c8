"""Module backward hooks against torch: ``register_full_backward_hook``,
``register_full_backward_pre_hook`` and the deprecated ``register_backward_hook``.

Each case builds the same model in both libraries (torch's weights copied over), registers
the same hook, runs forward and backward on the same inputs, and compares what every hook
call saw (the shapes and values of ``grad_input`` and ``grad_output``, None where torch
gives None) and the resulting gradients of the inputs and parameters.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt


def _np(t: Any) -> Any:
    return None if t is None else np.asarray(t.detach().numpy(), np.float64)


class _TwoInputs:
    """forward(x, y) = (x * y, x + 1): two inputs, two outputs."""

    @staticmethod
    def build(lib: Any) -> Any:
        class M(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x: Any, y: Any) -> Any:
                h = self.lin(x)
                return h * y, h + 1

        return M()


def _run(
    build: Callable[[Any], Any],
    register: Callable[[Any, Any], None],
    inputs: list[np.ndarray],
    grad_inputs: list[bool],
    loss: Callable[[Any], Any] = lambda out: (
        (out[0] * out[0]).sum() + out[1].sum() if isinstance(out, tuple) else (out * out).sum()
    ),
) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, lib in (("torch", torch), ("lazytorch", lt)):
        lib.manual_seed(0)
        model = build(lib)
        if name == "torch":
            state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        else:
            model.load_state_dict({k: lt.from_numpy(v) for k, v in state.items()})
        calls: list[Any] = []
        register(model, calls)
        xs = [lib.tensor(a, requires_grad=g) for a, g in zip(inputs, grad_inputs, strict=True)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss(model(*xs)).backward()
        seen[name] = {
            "calls": calls,
            "input_grads": [_np(x.grad) for x in xs],
            "param_grads": [_np(p.grad) for p in model.parameters()],
        }
    return seen


def _recorder(kind: str, change: Callable[[Any], Any] | None = None) -> Any:
    """A hook that records what it sees (as NumPy) and returns change(grads) or None."""

    def record(calls: list[Any], grads: tuple[Any, ...]) -> None:
        calls.append([_np(g) for g in grads])

    if kind == "pre":

        def pre(module: Any, grad_output: Any, calls: list[Any]) -> Any:
            record(calls, grad_output)
            return change(grad_output) if change else None

        return pre

    def full(module: Any, grad_input: Any, grad_output: Any, calls: list[Any]) -> Any:
        record(calls, grad_input)
        record(calls, grad_output)
        return change(grad_input) if change else None

    return full


def _assert_same(seen: dict[str, Any]) -> None:
    t, lz = seen["torch"], seen["lazytorch"]
    for key in ("calls", "input_grads", "param_grads"):
        a, b = t[key], lz[key]
        assert len(a) == len(b), (key, len(a), len(b))
        flat_a = [x for item in a for x in (item if isinstance(item, list) else [item])]
        flat_b = [x for item in b for x in (item if isinstance(item, list) else [item])]
        assert len(flat_a) == len(flat_b), key
        for x, y in zip(flat_a, flat_b, strict=True):
            assert (x is None) == (y is None), key
            if x is not None:
                np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6, err_msg=key)


def _lin_relu(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))


X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


@pytest.mark.parametrize("target", ["model", "first", "relu"])
def test_full_backward_hook_sees_torchs_gradients(target: str) -> None:
    def register(model: Any, calls: list[Any]) -> None:
        hook = _recorder("full")
        m = {"model": model, "first": model[0], "relu": model[1]}[target]
        m.register_full_backward_hook(lambda mod, gi, go: hook(mod, gi, go, calls))

    _assert_same(_run(_lin_relu, register, [X], [True]))


def test_full_backward_hook_replaces_grad_input_and_pre_hook_grad_output() -> None:
    def register(model: Any, calls: list[Any]) -> None:
        hook = _recorder("full", lambda gi: (gi[0] * 3,))
        pre = _recorder("pre", lambda go: (go[0] - 0.5,))
        model[1].register_full_backward_hook(lambda mod, gi, go: hook(mod, gi, go, calls))
        model[2].register_full_backward_pre_hook(lambda mod, go: pre(mod, go, calls))

    _assert_same(_run(_lin_relu, register, [X], [True]))


@pytest.mark.parametrize("grads", [[True, True], [True, False], [False, False]])
def test_full_backward_hook_with_two_inputs_and_two_outputs(grads: list[bool]) -> None:
    def register(model: Any, calls: list[Any]) -> None:
        hook = _recorder("full")
        model.register_full_backward_hook(lambda mod, gi, go: hook(mod, gi, go, calls))

    y = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    x = X[:, :3].copy()
    _assert_same(_run(_TwoInputs.build, register, [x, y], grads))


def test_removed_backward_hook_is_not_called() -> None:
    for lib in (torch, lt):
        calls: list[int] = []
        lin = lib.nn.Linear(2, 2)
        h = lin.register_full_backward_hook(lambda m, gi, go, c=calls: c.append(1))
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
        h.remove()
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
        assert calls == [1]


def test_regular_and_full_hooks_do_not_mix() -> None:
    for lib in (torch, lt):
        relu = lib.nn.ReLU()
        relu.register_full_backward_hook(lambda m, gi, go: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            relu.register_backward_hook(lambda m, gi, go: None)


IMG = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)


@pytest.mark.parametrize(
    "layer",
    [
        lambda t: t.nn.Conv2d(3, 4, 3),
        lambda t: t.nn.Conv2d(3, 4, 3, padding=1, bias=False),
        lambda t: t.nn.ReLU(),
        lambda t: t.nn.MaxPool2d(2),
        lambda t: t.nn.Tanh(),
    ],
    ids=["conv", "conv_nobias", "relu", "maxpool", "tanh"],
)
@pytest.mark.parametrize("input_grad", [True, False])
def test_legacy_backward_hook_gives_the_last_ops_gradients(layer: Any, input_grad: bool) -> None:
    def build(lib: Any) -> Any:
        return lib.nn.Sequential(lib.nn.Conv2d(3, 3, 1), layer(lib))

    def register(model: Any, calls: list[Any]) -> None:
        hook = _recorder("full")
        model[1].register_backward_hook(lambda mod, gi, go: hook(mod, gi, go, calls))

    _assert_same(_run(build, register, [IMG], [input_grad]))


def test_legacy_backward_hook_can_replace_grad_input() -> None:
    # guided backpropagation: the ReLU's hook clamps its input gradient
    def register(model: Any, calls: list[Any]) -> None:
        hook = _recorder("full", lambda gi: (gi[0].clamp(min=0.0),))
        model[1].register_backward_hook(lambda mod, gi, go: hook(mod, gi, go, calls))

    _assert_same(_run(_lin_relu, register, [X], [True]))


def test_legacy_backward_hook_elsewhere_says_what_to_use() -> None:
    with pytest.raises(NotImplementedError, match="register_full_backward_hook"):
        lt.nn.Linear(2, 2).register_backward_hook(lambda m, gi, go: None)
    with pytest.raises(NotImplementedError, match="Sequential"):
        lt.nn.Sequential(lt.nn.ReLU()).register_backward_hook(lambda m, gi, go: None)
