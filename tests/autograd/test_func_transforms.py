"""torch.func's transforms (vmap, jacrev, jacfwd, hessian, jvp, functional_call,
stack_module_state, grad_and_value) against torch.func on the same inputs."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.func as TF

import lazytorch as lt
import lazytorch.func as LF

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape)


def _to(lib, x):
    if isinstance(x, np.ndarray):
        return lib.tensor(x)
    if isinstance(x, dict):
        return {k: _to(lib, v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_to(lib, v) for v in x)
    return x


def _same(ours, theirs, rtol=1e-9, atol=1e-12):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k], rtol, atol)
        return
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b, rtol, atol)
        return
    assert isinstance(ours, lt.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.is_floating_point == theirs.dtype.is_floating_point
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol, atol)


def both(fn, *args, **kw):
    """fn(lib, funcs, *args) with args built from the same arrays; results compared."""
    ours = fn(lt, LF, *_to(lt, args))
    theirs = fn(torch, TF, *_to(torch, args))
    _same(ours, theirs, **kw)


TRANSFORMS = ["vmap", "jacrev", "jacfwd", "hessian", "jvp", "functional_call"]


@pytest.mark.parametrize(
    "name", [*TRANSFORMS, "stack_module_state", "grad_and_value", "grad", "vjp"]
)
def test_signature_is_torchs(name):
    ours = inspect.signature(getattr(LF, name)).parameters
    theirs = inspect.signature(getattr(TF, name)).parameters
    assert list(ours) == list(theirs)
    for k in theirs:
        assert ours[k].kind == theirs[k].kind, k
        assert ours[k].default == theirs[k].default, k


def test_top_level_vmap():
    assert lt.vmap is LF.vmap


def predict(weight, bias, x):
    return (x @ weight.T + bias).tanh()


W, B, X = _arr(4, 3), _arr(4), _arr(3)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, 2, -1, (0, 2), (2,)])
def test_jacobians(jac, argnums):
    if jac == "jacfwd" and argnums == -1:
        # torch 2.13's jacfwd gives zeros for a negative argnums (jacrev does not): compare
        # with jacrev's answer
        ours = LF.jacfwd(predict, argnums=-1)(*_to(lt, (W, B, X)))
        _same(ours, TF.jacrev(predict, argnums=-1)(*_to(torch, (W, B, X))))
        return
    both(lambda t, f, w, b, x: getattr(f, jac)(predict, argnums=argnums)(w, b, x), W, B, X)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_structures(jac):
    # tuple output, dict input, 0-d output, an output independent of the input
    def f(p, c):
        return (p["a"] * p["b"].sum(), (p["a"] ** 2).sum(), c * 2)

    p = {"a": _arr(3), "b": _arr(2, 2)}
    both(lambda t, fn, p, c: getattr(fn, jac)(f)(p, c), p, _arr(2))
    both(lambda t, fn, p, c: getattr(fn, jac)(f, argnums=(0, 1))(p, c), p, _arr(2))
    # has_aux: the aux comes back detached
    both(lambda t, fn, x: getattr(fn, jac)(lambda x: (x.sin(), x.cos()), has_aux=True)(x), X)
    # size-0 input and output
    both(lambda t, fn, x: getattr(fn, jac)(lambda x: x * 2)(x), np.zeros((0,)))


def test_hessian():
    both(lambda t, f, w, b, x: f.hessian(predict, argnums=2)(w, b, x), W, B, X)
    both(lambda t, f, x: f.hessian(lambda x: (x**3).sum() * x[0])(x), X)
    both(lambda t, f, w, b, x: f.jacrev(f.jacrev(predict, argnums=2), argnums=2)(w, b, x), W, B, X)


def test_jacobian_inside_grad_keeps_graph():
    # the Jacobian of a function of w, differentiated again with respect to w
    def g(lib, f, w, x):
        w = w.clone().requires_grad_()
        jac = f.jacrev(lambda x: (x * w).sin())(x)
        (gw,) = lib.autograd.grad(jac.sum(), w)
        return gw

    both(g, _arr(3), X)

    def h(lib, f, w, x):  # the same through grad (a MAML-style inner gradient)
        w = w.clone().requires_grad_()
        g = f.grad(lambda x: (x * w).sin().sum())(x)
        (gw,) = lib.autograd.grad(g.sum(), w)
        return g.detach(), gw

    both(h, _arr(3), X)


def test_jacobian_errors():
    with pytest.raises(RuntimeError, match="argnums"):
        LF.jacrev(predict, argnums=3)(*_to(lt, (W, B, X)))
    with pytest.raises(RuntimeError, match="argnums"):
        LF.jacrev(predict, argnums=1.0)
    with pytest.raises(RuntimeError, match="randomness"):
        LF.jacfwd(lambda x: x + lt.rand(3))(lt.ones(3))
    with pytest.raises(RuntimeError, match="only tensors"):
        LF.jacrev(lambda x: 3.0)(lt.ones(3))


def conv_net(lib, x, w, b):
    F = lib.nn.functional
    y = F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2)
    return F.log_softmax(y.flatten(1), dim=1), y.mean()


def test_jvp():
    T1 = _arr(3)
    both(lambda t, f, x, v: f.jvp(lambda x: x.sin() * x.exp(), (x,), (v,)), X, T1)
    both(
        lambda t, f, w, b, x, tw, tb, tx: f.jvp(predict, (w, b, x), (tw, tb, tx)),
        W,
        B,
        X,
        _arr(4, 3),
        _arr(4),
        T1,
    )
    args = (_arr(2, 2, 4, 4), _arr(3, 2, 3, 3), _arr(3))
    tans = (_arr(2, 2, 4, 4), _arr(3, 2, 3, 3), _arr(3))
    both(lambda t, f, a, v: f.jvp(lambda *a: conv_net(t, *a), a, v), args, tans)
    # an output that does not depend on the primals gets a zero tangent; has_aux
    both(
        lambda t, f, x, v: f.jvp(lambda x: ((x * 2, t.ones(2)), x.sum()), (x,), (v,), has_aux=True),
        X,
        T1,
    )
    # dict primals
    both(lambda t, f, p, v: f.jvp(lambda p: p["a"] * p["b"], (p,), (v,)), *[{"a": X, "b": T1}] * 2)


def test_hvp_both_ways():
    def fwd_rev(t, f, x, v):
        return f.jvp(f.grad(lambda x: x.sin().sum()), (x,), (v,))[1]

    def rev_rev(t, f, x, v):
        _, fn = f.vjp(f.grad(lambda x: x.sin().sum()), x)
        return fn(v)

    both(fwd_rev, X, _arr(3))
    both(rev_rev, X, _arr(3))


def test_jvp_errors():
    x = lt.ones(3)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        LF.jvp(lambda x: x, x, (x,))
    with pytest.raises(RuntimeError, match="same shape"):
        LF.jvp(lambda x: x, (x,), (lt.ones(2),))


@pytest.mark.parametrize(
    "in_dims,args",
    [
        (0, (_arr(3, 4),)),
        (1, (_arr(4, 3),)),
        (-1, (_arr(4, 3),)),
        ((0, None), (_arr(3, 4), _arr(4))),
        ((None, 1), (_arr(4), _arr(4, 3))),
        (({"a": 0, "b": None}, 0), ({"a": _arr(3, 4), "b": _arr(4)}, _arr(3))),
        ((0, (None, 0)), (_arr(3, 4), (_arr(4), _arr(3)))),
    ],
)
def test_vmap_in_dims(in_dims, args):
    def f(*a):
        leaves = []
        for x in a:
            if isinstance(x, dict):
                leaves.extend(x.values())
            elif isinstance(x, tuple):
                leaves.extend(x)
            else:
                leaves.append(x)
        out = leaves[0]
        for y in leaves[1:]:
            out = out * y.sum() + y.mean()
        return out.sin()

    both(lambda t, fn, *a: fn.vmap(f, in_dims=in_dims)(*a), *args)


@pytest.mark.parametrize("out_dims", [0, 1, -1, (0, 1)])
def test_vmap_out_dims(out_dims):
    def f(x):
        return x.outer(x), x * 2

    if isinstance(out_dims, tuple):
        both(lambda t, fn, x: fn.vmap(f, out_dims=out_dims)(x), _arr(3, 4))
    else:
        both(lambda t, fn, x: fn.vmap(lambda x: f(x)[0], out_dims=out_dims)(x), _arr(3, 4))


def test_vmap_outputs_kwargs_nesting():
    # dict and tuple outputs, 0-d outputs, keyword arguments passed whole
    both(
        lambda t, f, x: f.vmap(lambda x, s=1.0: {"s": x.sum() * s, "m": (x.max(),)})(x, s=2.0),
        _arr(3, 4),
    )
    # nested vmap: an outer product of rows
    both(
        lambda t, f, a, b: f.vmap(f.vmap(lambda u, v: (u * v).sum(), (None, 0)), (0, None))(a, b),
        _arr(3, 4),
        _arr(5, 4),
    )
    # vmap of grad: per-sample gradients, and grad through vmap
    both(
        lambda t, f, w, x: f.vmap(f.grad(lambda w, x: (w * x).sin().sum()), (None, 0))(w, x),
        _arr(4),
        _arr(3, 4),
    )
    both(
        lambda t, f, w, x: f.grad(lambda w: f.vmap(lambda x: (w * x).sum().sin())(x).sum())(w),
        _arr(4),
        _arr(3, 4),
    )

    # vmap of vjp_fn over a basis: a Jacobian
    def jac(t, f, x):
        _, fn = f.vjp(lambda x: x.sin() * x.sum(), x)
        return f.vmap(fn)(t.eye(3, dtype=t.float64))

    both(jac, X)


def test_vmap_tracks_outer_autograd():
    def g(lib, f, w, x):
        w = w.clone().requires_grad_()
        y = f.vmap(lambda r: (r * w).sum().tanh())(x)
        (gw,) = lib.autograd.grad(y.sum(), w)
        return y.detach(), gw

    both(g, _arr(4), _arr(3, 4))


def test_vmap_errors():
    x = lt.ones(3, 4)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        LF.vmap(lambda a, b: a + b)(x, lt.ones(2, 4))
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        LF.vmap(lambda a: a, in_dims=(None,))(x)
    with pytest.raises(ValueError, match="non-Tensor"):
        LF.vmap(lambda a, n: a * n)(x, 3)
    with pytest.raises(ValueError, match="dimensionality 0"):
        LF.vmap(lambda a: a)(lt.tensor(1.0))
    with pytest.raises(ValueError, match="not compatible"):
        LF.vmap(lambda a, b: a, in_dims=(0,))(x, x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        LF.vmap(lambda a: 3)(x)
    with pytest.raises(NotImplementedError, match="size 0"):
        LF.vmap(lambda a: a)(lt.ones(0, 4))
    with pytest.raises(NotImplementedError, match="out_dims=None"):
        LF.vmap(lambda a: a * 2, out_dims=None)(x)
    with pytest.raises(RuntimeError, match="randomness"):
        LF.vmap(lambda a: a, randomness="bad")


def test_vmap_randomness():
    x = lt.zeros(3, 4)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        LF.vmap(lambda a: a + lt.rand(4))(x)
    lt.manual_seed(0)
    same = LF.vmap(lambda a: a + lt.rand(4), randomness="same")(x)
    after_same = lt.rand(2)
    lt.manual_seed(0)
    one = lt.rand(4)
    after_one = lt.rand(2)
    for i in range(3):
        np.testing.assert_array_equal(same[i].numpy(), one.numpy())
    np.testing.assert_array_equal(after_same.numpy(), after_one.numpy())  # drawn once
    diff = LF.vmap(lambda a: a + lt.rand(4), randomness="different")(x)
    assert not bool((diff[0] == diff[1]).all())
    # nested: the same draws across the outer dimension, different ones across the inner
    nested = LF.vmap(LF.vmap(lambda a: a + lt.rand(()), randomness="different"), randomness="same")(
        lt.zeros(3, 2)
    )
    np.testing.assert_array_equal(nested[0].numpy(), nested[2].numpy())
    assert nested[0, 0].item() != nested[0, 1].item()
    # an unmapped None output that is the same object every time is returned as is
    c = lt.ones(2)
    _same_obj = LF.vmap(lambda a: (a * 2, c), out_dims=(0, None))(x)
    assert _same_obj[1] is c


class Net(torch.nn.Module):
    pass


def _module(lib):
    nn = lib.nn
    lib.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 2))
    return m.double()


def _state(lib, m):
    return {
        k: lib.tensor(np.arange(v.numel(), dtype=np.float64).reshape(tuple(v.shape)) / 7 - 0.5)
        for k, v in m.named_parameters()
    }


def test_functional_call():
    def g(lib, f, x):
        m = _module(lib)
        before = {k: v.detach().clone() for k, v in m.state_dict().items()}
        p = _state(lib, m)
        b = {k: v.clone() for k, v in m.named_buffers()}
        out = f.functional_call(m, (p, b), (x,))
        # the module is restored; BatchNorm's running stats were updated in the given dict
        for k, v in m.state_dict().items():
            assert bool((v == before[k]).all()), k
        assert not bool((b["1.running_mean"] == before["1.running_mean"]).all())
        # a single dict, args as one tensor, kwargs
        out2 = f.functional_call(m, p, x)
        return out, out2, b["1.running_mean"], b["1.num_batches_tracked"].double()

    both(g, _arr(5, 3))


def test_functional_call_grad_per_sample():
    def g(lib, f, x, y):
        m = lib.nn.Linear(3, 2).double()
        p = {k: lib.tensor(np.full(tuple(v.shape), 0.3)) for k, v in m.named_parameters()}

        def loss(p, x, y):
            out = f.functional_call(m, p, (x.unsqueeze(0),))
            return lib.nn.functional.mse_loss(out, y.unsqueeze(0))

        return f.vmap(f.grad(loss), in_dims=(None, 0, 0))(p, x, y)

    both(g, _arr(5, 3), _arr(5, 2))


def test_functional_call_ties_and_strict():
    class Tied(lt.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lt.nn.Parameter(lt.ones(2))
            self.b = self.a

        def forward(self, x):
            return x * self.a + self.b

    m = Tied()
    z = lt.zeros(2)
    assert LF.functional_call(m, {"a": z}, (lt.ones(2),)).tolist() == [0.0, 0.0]
    assert LF.functional_call(m, {"a": z}, (lt.ones(2),), tie_weights=False).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="tied"):
        LF.functional_call(m, {"a": z, "b": lt.ones(2)}, (lt.ones(2),))
    assert m.a is m.b and m.a.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Unexpected key"):
        LF.functional_call(m, {"a": z, "c": z}, (lt.ones(2),), strict=True)
    with pytest.raises(RuntimeError, match="Missing key"):
        LF.functional_call(
            lt.nn.Linear(2, 2), {"weight": lt.ones(2, 2)}, (lt.ones(2),), strict=True
        )
    with pytest.raises(ValueError, match="multiple dictionaries"):
        LF.functional_call(m, ({"a": z}, {"a": z}), (lt.ones(2),))


def test_stack_module_state_and_ensemble():
    def g(lib, f, x):
        lib.manual_seed(0)
        models = [_module(lib) for _ in range(3)]
        for i, m in enumerate(models):  # the same weights in both libraries
            for k, v in _state(lib, m).items():
                with lib.no_grad():
                    dict(m.named_parameters())[k].copy_(v * (i + 1))
        models[1].eval()
        with pytest.raises(RuntimeError, match="same training/eval mode"):
            f.stack_module_state(models)
        models[1].train()
        params, buffers = f.stack_module_state(models)
        assert all(p.is_leaf and p.requires_grad for p in params.values())
        out = f.vmap(lambda p, b, x: f.functional_call(models[0], (p, b), (x,)), (0, 0, None))(
            params, buffers, x
        )
        return params["0.weight"], buffers["1.running_var"], out

    both(g, _arr(5, 3))


def test_top_level_outputs_are_detached():
    both(lambda t, f, x: f.grad_and_value(lambda x: x.sin().sum())(x), X)
    both(lambda t, f, x: f.vjp(lambda x: x.sin(), x)[0], X)
    both(lambda t, f, x, v: f.jvp(lambda x: x.sin(), (x,), (v,)), X, X)
