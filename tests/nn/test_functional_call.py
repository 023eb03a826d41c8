"""torch.func.functional_call / nn.utils.stateless.functional_call against torch: outputs and
gradients reach the supplied tensors, buffers, tied weights, several dicts, strict, and the
module's own tensors restored afterwards."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt


def _model(lib: Any) -> Any:
    lib.manual_seed(0)
    m = lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(), lib.nn.Linear(4, 2)
    )
    with lib.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(
                lib.tensor(
                    np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (k + 1),
                    dtype=lib.float32,
                )
            )
    return m.eval()


X = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)


def _run(lib: Any, call: Any) -> tuple[Any, Any, Any]:
    m = _model(lib)
    new = {n: (p.detach() * 0.5).requires_grad_() for n, p in m.named_parameters()}
    new["1.running_mean"] = lib.full((4,), 0.25)
    out = call(m, new, (lib.tensor(X),))
    out.pow(2).sum().backward()
    return out, new["0.weight"].grad, m[0].weight


@pytest.mark.parametrize("where", ["func", "stateless"])
def test_outputs_and_gradients_match_torch(where: str) -> None:
    def call(lib: Any) -> Any:
        return (
            lib.func.functional_call if where == "func" else lib.nn.utils.stateless.functional_call
        )

    out_t, g_t, w_t = _run(torch, call(torch))
    out_l, g_l, w_l = _run(lt, call(lt))
    np.testing.assert_allclose(out_l.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_l.numpy(), g_t.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(w_l.detach().numpy(), w_t.detach().numpy())  # restored
    assert w_l.grad is None


def test_tied_weights_several_dicts_and_strict() -> None:
    for lib in (torch, lt):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
        m[1].weight = m[0].weight  # one Parameter under 0.weight and 1.weight
        lin = m[1]
        w = lib.eye(2) * 2
        x = lib.ones(1, 2)
        got = lib.func.functional_call(m, {"0.weight": w}, (x,))
        assert got.tolist() == [[4.0, 4.0]]
        untied = lib.func.functional_call(m, {"0.weight": w}, (x,), tie_weights=False)
        assert untied.tolist() == (lin(x * 2)).tolist()
        with pytest.raises(ValueError):
            lib.func.functional_call(m, ({"0.weight": w}, {"0.weight": w}), (x,))
        with pytest.raises(RuntimeError):
            lib.func.functional_call(m, {"0.weight": w, "extra": w}, (x,), strict=True)
        assert lib.func.functional_call(m, {"0.weight": w}, x, {}).shape == (1, 2)
