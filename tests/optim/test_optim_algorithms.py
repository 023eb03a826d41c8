"""The optimizers beyond SGD and Adam against torch.optim, step by step.

Each case trains the same three parameters (a matrix, a vector and a 0-d scalar) from the
same values on the same small loss in both libraries, and compares the parameters and the
whole optimizer state after every step. One parameter has no gradient on one step, so the
skip-and-initialize-later path is covered too.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import torch

import lazytorch as lt

STEPS = 6
TOL = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=1e-5, atol=1e-6)}
SHAPES = [(3, 4), (4,), ()]

CASES = [
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.8, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.2, weight_decay=0.1, initial_accumulator_value=0.3)),
    ("Adagrad", dict(lr=0.1, eps=1e-3, maximize=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.6), weight_decay=0.1)),  # rectified from step 2
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.5), weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.08), maximize=True)),
]
NAMES = sorted({name for name, _ in CASES})


def _id(case: tuple[str, dict]) -> str:
    name, kwargs = case
    return name + "".join(f",{k}={v}" for k, v in kwargs.items())


def make_params(lib, dtype: str, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]


def loss_of(params: list):
    """A small non-quadratic loss coupling the three parameters (same code for both libs)."""
    w, v, s = params
    return ((w @ v).tanh() * s).sum() + 0.5 * (w * w).sum() + 0.1 * (v**4).sum() + s * s


def train_step(opt, params: list, k: int) -> None:
    opt.zero_grad()
    loss_of(params).backward()
    if k == 1:
        params[1].grad = None  # the vector sits this step out (its state starts later)
    opt.step()


def to_numpy(x) -> np.ndarray:
    return np.asarray(x.detach().numpy())


def assert_same(opt, topt, dtype: str, what: str) -> None:
    """Parameters and state: same keys, same tensors, the host scalars equal torch's 0-d."""
    tol = TOL[dtype]
    for i, (p, tp) in enumerate(zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"])):
        np.testing.assert_allclose(to_numpy(p), to_numpy(tp), err_msg=f"{what} param {i}", **tol)
        ours, theirs = opt.state.get(p, {}), topt.state.get(tp, {})
        assert sorted(ours) == sorted(theirs), f"{what}: state keys of param {i}"
        for key, tv in theirs.items():
            if tv.ndim == 0 and not isinstance(ours[key], lt.Tensor):
                assert isinstance(ours[key], float), key
                assert ours[key] == pytest.approx(tv.item(), rel=1e-15), f"{what} {key}"
            else:
                assert str(ours[key].dtype) == str(tv.dtype).replace("torch.", "lazytorch.")
                np.testing.assert_allclose(
                    to_numpy(ours[key]), to_numpy(tv), err_msg=f"{what} {key} {i}", **tol
                )


def run_pair(name: str, kwargs: dict, dtype: str = "float64", steps: int = STEPS):
    params, tparams = make_params(lt, dtype), make_params(torch, dtype)
    opt = getattr(lt.optim, name)(params, **kwargs)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    for k in range(steps):
        train_step(opt, params, k)
        train_step(topt, tparams, k)
        assert_same(opt, topt, dtype, f"step {k}")
    return opt, topt, params, tparams


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_torch_float64(case):
    with lt.backend("interpreter"):
        run_pair(*case)


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_float32_compiled(name):
    """The first configuration of each optimizer on the default (compiled) backend."""
    kwargs = next(k for n, k in CASES if n == name)
    run_pair(name, kwargs, "float32")


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_in_sync_mode(name):
    kwargs = [k for n, k in CASES if n == name][-1]
    with lt.backend("interpreter"), lt.sync_mode():
        run_pair(name, kwargs, steps=3)


@pytest.mark.parametrize("name", NAMES)
def test_closure_is_called_under_grad_mode_and_its_loss_returned(name):
    kwargs = next(k for n, k in CASES if n == name)
    params, tparams = make_params(lt, "float64"), make_params(torch, "float64")
    opt = getattr(lt.optim, name)(params, **kwargs)
    topt = getattr(torch.optim, name)(tparams, **kwargs)

    def closure_for(o, ps):
        def closure():
            o.zero_grad()
            loss = loss_of(ps)
            loss.backward()
            return loss

        return closure

    with lt.backend("interpreter"):
        for _ in range(3):
            with lt.no_grad():
                loss = opt.step(closure_for(opt, params))
            tloss = topt.step(closure_for(topt, tparams))
            assert loss.is_materialized
            assert loss.item() == pytest.approx(tloss.item(), rel=1e-12)
        assert_same(opt, topt, "float64", "closure")


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_with_their_own_lr(name):
    kwargs = next(k for n, k in CASES if n == name)
    params, tparams = make_params(lt, "float64"), make_params(torch, "float64")

    def groups(ps):
        return [{"params": ps[:1]}, {"params": ps[1:], "lr": kwargs.get("lr", 1.0) / 3}]

    opt = getattr(lt.optim, name)(groups(params), **kwargs)
    topt = getattr(torch.optim, name)(groups(tparams), **kwargs)
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]
    with lt.backend("interpreter"):
        for k in range(3):
            train_step(opt, params, k)
            train_step(topt, tparams, k)
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(to_numpy(p), to_numpy(tp), **TOL["float64"])


# -- state dicts ------------------------------------------------------------------------------------
def _from_torch(value):
    """A torch state dict's values as lazytorch tensors (same layout)."""
    if isinstance(value, torch.Tensor):
        return lt.tensor(value.detach().numpy())
    if isinstance(value, dict):
        return {k: _from_torch(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_torch(v) for v in value]
    return value


LAST_CASES = [[c for c in CASES if c[0] == name][-1] for name in NAMES]


@pytest.mark.parametrize("case", LAST_CASES, ids=_id)
def test_state_dict_has_torchs_layout_and_round_trips(case):
    name, kwargs = case
    with lt.backend("interpreter"):
        opt, topt, params, tparams = run_pair(name, kwargs, steps=3)
        # torch's loaded state shares its tensors with the dict: keep a pristine copy.
        sd, tsd = opt.state_dict(), copy.deepcopy(topt.state_dict())
        assert sd["param_groups"] == tsd["param_groups"]
        assert sorted(sd["state"]) == sorted(tsd["state"])
        for i in tsd["state"]:
            assert list(sd["state"][i]) == list(tsd["state"][i])  # names, in torch's order

        # Our own dict and torch's (converted to lazytorch tensors) both resume the run.
        for source in (sd, _from_torch(tsd)):
            fresh = [lt.tensor(to_numpy(p), requires_grad=True) for p in params]
            opt2 = getattr(lt.optim, name)(fresh, lr=123.0)
            opt2.load_state_dict(source)
            assert opt2.param_groups[0]["lr"] == kwargs.get("lr", opt2.defaults["lr"])
            for key in ("step", "mu_product", "eta", "mu"):
                if key in opt2.state[fresh[0]]:
                    assert isinstance(opt2.state[fresh[0]][key], float)
            twin = [torch.tensor(to_numpy(p), requires_grad=True) for p in tparams]
            topt2 = getattr(torch.optim, name)(twin, lr=123.0)
            topt2.load_state_dict(copy.deepcopy(tsd))
            for k in range(3, 6):
                train_step(opt2, fresh, k)
                train_step(topt2, twin, k)
                assert_same(opt2, topt2, "float64", f"resumed step {k}")


# -- the step is one program, and a schedule does not recompile -------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_a_changing_lr_reuses_the_program(name):
    """Steps 3 and later reuse one program though lr changes every step (Adagrad's
    lr_decay, NAdam's momentum schedule, ASGD's eta: all host numbers, program inputs)."""
    kwargs = dict(next(k for n, k in CASES if n == name))
    if name == "RAdam":
        kwargs["betas"] = (0.9, 0.6)  # rectified from step 2 on: one branch after that
    params = make_params(lt, "float64")
    opt = getattr(lt.optim, name)(params, **kwargs)
    built, cuts = [], []
    for k in range(6):
        for group in opt.param_groups:
            group["lr"] = 0.05 / (k + 1)
        opt.zero_grad()
        loss = loss_of(params)
        loss.backward()
        before = lt.metrics.counters()
        with lt.strict_mode():  # nothing in step() reads a value on the host
            opt.step()
        after = lt.metrics.counters()
        cuts.append(after["materializations"] - before["materializations"])
        built.append(after["programs_built"])
        assert loss.is_materialized
    assert cuts == [1] * 6
    assert built[3:] == [built[2]] * 3


# -- construction -----------------------------------------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e), re.sub(r"\blazytorch\.", "torch.", str(e))
    return None


BAD_ARGS = [
    ("RMSprop", dict(lr=-1.0)),
    ("RMSprop", dict(eps=-1.0)),
    ("RMSprop", dict(momentum=-1.0)),
    ("RMSprop", dict(weight_decay=-1.0)),
    ("RMSprop", dict(alpha=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(eps=-1.0)),
    ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(fused=True, foreach=True)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, 1.0))),
    ("NAdam", dict(momentum_decay=-1.0)),
    ("NAdam", dict(weight_decay=-1.0)),
    ("RAdam", dict(betas=(0.9, -0.1))),
    ("ASGD", dict(weight_decay=-1.0)),
    ("Rprop", dict(etas=(1.5, 2.0))),
    ("Rprop", dict(etas=(0.5, 0.9))),
    ("LBFGS", dict(lr=-1.0)),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS, ids=[_id(c) for c in BAD_ARGS])
def test_argument_errors_match_torch(name, kwargs):
    ours = _error(lambda: getattr(lt.optim, name)([lt.zeros(2, requires_grad=True)], **kwargs))
    theirs = _error(
        lambda: getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    )
    assert theirs is not None
    assert ours == theirs


@pytest.mark.parametrize("name", [*NAMES, "LBFGS"])
def test_defaults_and_repr_match_torch(name):
    ours = getattr(lt.optim, name)([lt.zeros(2, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert list(ours.defaults) == list(theirs.defaults)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", NAMES)
def test_compatibility_flags_are_accepted_and_differentiable_is_refused(name):
    import inspect

    accepted = inspect.signature(getattr(torch.optim, name).__init__).parameters
    flags = {f: True for f in ("foreach", "capturable") if f in accepted}
    p = lt.zeros(2, requires_grad=True)
    opt = getattr(lt.optim, name)([p], **flags)
    assert all(opt.defaults[f] is True for f in flags)
    with pytest.raises(NotImplementedError, match=f"{name} does not support differentiable"):
        getattr(lt.optim, name)([p], differentiable=True)


@pytest.mark.parametrize("name", [*NAMES, "LBFGS"])
def test_signature_matches_torch(name):
    import inspect

    ours = inspect.signature(getattr(lt.optim, name).__init__).parameters
    theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


def test_adagrad_state_exists_from_construction_like_torch():
    params, tparams = make_params(lt, "float64"), make_params(torch, "float64")
    opt = lt.optim.Adagrad(params, initial_accumulator_value=0.5)
    topt = torch.optim.Adagrad(tparams, initial_accumulator_value=0.5)
    assert_same(opt, topt, "float64", "construction")


def test_rprop_keeps_nan_signs_like_torch():
    p, tp = lt.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    opt, topt = lt.optim.Rprop([p]), torch.optim.Rprop([tp])
    for g in ([1.0, 1.0], [float("nan"), -1.0]):
        p.grad, tp.grad = lt.tensor(g), torch.tensor(g)
        opt.step()
        topt.step()
    np.testing.assert_array_equal(to_numpy(p), to_numpy(tp))
    np.testing.assert_array_equal(
        to_numpy(opt.state[p]["step_size"]), to_numpy(topt.state[tp]["step_size"])
    )
