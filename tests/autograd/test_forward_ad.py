"""Forward-mode AD (`lazytorch.autograd.forward_ad`) against torch's: tangents of ops and
models, several duals, custom Functions with jvp, gradcheck's forward mode, functorch's
functional modules, and the errors and edge cases of the dual-tensor API."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD

import lazytorch as lt
import lazytorch.autograd.forward_ad as fwAD
from helpers import randn

FUNCTIONS = {
    "sin_mul": lambda T, x, y: (x * 2).sin() * y,
    "matmul_softmax": lambda T, x, y: T.softmax(x @ y.T, dim=-1),
    "broadcast_sum": lambda T, x, y: (x[:, None, :] - y[None]).pow(2).sum(-1),
    "norm_div": lambda T, x, y: x / x.norm(dim=1, keepdim=True) + y.mean(),
    "layer_norm_gelu": lambda T, x, y: T.nn.functional.gelu(
        T.nn.functional.layer_norm(x, (4,)) * y
    ),
    "where_max": lambda T, x, y: T.where(x > y, x.exp(), y.tanh()).amax(0),
    "view_cat": lambda T, x, y: T.cat([x.t().reshape(-1), y[1:, ::2].flatten()]),
}


def _tangents(lib, fwd, fn, xs, ts, which):
    """fn's output tangent with the inputs at `which` made dual, in `lib`."""
    T = torch if lib == "torch" else lt
    mk = (lambda a: torch.from_numpy(a.copy())) if lib == "torch" else lt.tensor
    with fwd.dual_level():
        args = [
            fwd.make_dual(mk(x), mk(t)) if k in which else mk(x)
            for k, (x, t) in enumerate(zip(xs, ts))
        ]
        out = fn(T, *args)
        tangent = fwd.unpack_dual(out).tangent
    return np.asarray(tangent.detach().numpy())


@pytest.mark.parametrize("which", [(0,), (1,), (0, 1)], ids=["x", "y", "both"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tangents_match_torch(name, which) -> None:
    xs, ts = [randn(3, 4), randn(3, 4)], [randn(3, 4), randn(3, 4)]
    fn = FUNCTIONS[name]
    want = _tangents("torch", tfwAD, fn, xs, ts, which)
    got = _tangents("lt", fwAD, fn, xs, ts, which)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_module_parameters_as_duals_match_torch() -> None:
    # the tutorial's pattern: parameters replaced by duals through delattr/setattr
    def run(T, fwd):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(5, 4), T.nn.Tanh(), T.nn.Linear(4, 2))
        inp = T.ones(3, 5)
        params = {n: p for n, p in model.named_parameters()}
        tangents = {n: T.full_like(p, 0.1) * (k + 1) for k, (n, p) in enumerate(params.items())}
        with fwd.dual_level():
            for n, p in params.items():
                mod_name, _, attr = n.rpartition(".")
                mod = model.get_submodule(mod_name)
                delattr(mod, attr)
                setattr(mod, attr, fwd.make_dual(p, tangents[n]))
            return fwd.unpack_dual(model(inp)).tangent.detach().numpy()

    # the same weights in both: lazytorch's generator differs, so copy torch's in
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    want = run(torch, tfwAD)

    def run_lt():
        model = lt.nn.Sequential(lt.nn.Linear(5, 4), lt.nn.Tanh(), lt.nn.Linear(4, 2))
        model.load_state_dict(
            {k: lt.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
        )
        inp = lt.ones(3, 5)
        params = dict(model.named_parameters())
        with fwAD.dual_level():
            for k, (n, p) in enumerate(params.items()):
                mod_name, _, attr = n.rpartition(".")
                mod = model.get_submodule(mod_name)
                delattr(mod, attr)
                setattr(mod, attr, fwAD.make_dual(p, lt.full_like(p, 0.1) * (k + 1)))
            return fwAD.unpack_dual(model(inp)).tangent.numpy()

    np.testing.assert_allclose(run_lt(), want, rtol=1e-5, atol=1e-6)


def _exp_function(lib, wrong=False):
    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, g):
            return g * ctx.result * (2.0 if wrong else 1.0)

    return Fn


def test_custom_function_jvp_and_its_missing_backward() -> None:
    x, t = randn(4, dtype="float64"), randn(4, dtype="float64")
    outs = {}
    for lib, fwd in ((torch, tfwAD), (lt, fwAD)):
        Fn = _exp_function(lib)
        primal = lib.tensor(x, requires_grad=True)
        with fwd.dual_level():
            out = Fn.apply(fwd.make_dual(primal, lib.tensor(t)))
            outs[lib.__name__] = fwd.unpack_dual(out * 3).tangent.detach().numpy()
            with pytest.raises(NotImplementedError):  # reverse mode through a jvp-only Function
                out.sum().backward()
    np.testing.assert_allclose(outs["lazytorch"], outs["torch"], rtol=1e-12)


def test_gradcheck_forward_mode_checks_the_jvp() -> None:
    primal = lt.tensor(randn(3, 3, dtype="float64"), requires_grad=True)
    kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False)
    assert lt.autograd.gradcheck(_exp_function(lt).apply, (primal,), **kw)
    assert lt.autograd.gradcheck(lambda x: (x * x.sin()).sum(1), (primal,), **kw)
    with pytest.raises(lt.autograd.GradcheckError, match="forward mode"):
        lt.autograd.gradcheck(_exp_function(lt, wrong=True).apply, (primal,), **kw)


def test_dual_api_edges_match_torch() -> None:
    for lib, fwd in ((torch, tfwAD), (lt, fwAD)):
        x, t = lib.ones(3), lib.full((3,), 2.0)
        with pytest.raises(RuntimeError, match="no level exists"):
            fwd.make_dual(x, t)
        with fwd.dual_level():
            d = fwd.make_dual(x, t)
            assert fwd.unpack_dual(d).tangent is t
            m = lib.ones(2, 3)
            tt = lib.ones(3, 2).T  # another layout: copied
            assert fwd.unpack_dual(fwd.make_dual(m, tt)).tangent is not tt
            assert fwd.unpack_dual(x).tangent is None  # not a dual, computed from none
            assert fwd.unpack_dual(x * 2).tangent is None
            y = d * 3
            with pytest.raises(RuntimeError, match="different size"):
                fwd.make_dual(x, lib.ones(4))
            with pytest.raises(RuntimeError, match="Nested forward mode AD"):
                with fwd.dual_level():
                    pass
        assert fwd.unpack_dual(y).tangent is None  # the level exited
        assert fwd.unpack_dual(d).tangent is None


def test_functorch_functional_modules_and_jvp() -> None:
    from lazytorch._functorch import deprecated as ft

    model = lt.nn.BatchNorm1d(3)
    model.train(False)
    func, params, buffers = ft.make_functional_with_buffers(model)
    assert [b.shape for b in buffers] == [b.shape for b in model.buffers()]
    x = lt.tensor(randn(4, 3))
    tangents = tuple(lt.ones_like(p) for p in params)
    out, jvp_out = ft.jvp(lambda ps: func(ps, buffers, x), (params,), (tangents,))
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    # d/d(weight, bias) of weight * xhat + bias, along ones: xhat + 1
    xhat = (x - model.running_mean) / (model.running_var + model.eps).sqrt()
    np.testing.assert_allclose(jvp_out.numpy(), (xhat + 1).numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="has buffers"):
        ft.make_functional(model)
    partial = functools.partial(lambda x, y: x**2 + y**2, y=lt.ones(2))
    assert ft.jvp(partial, (lt.ones(2),), (lt.ones(2),))[1].tolist() == [2.0, 2.0]
