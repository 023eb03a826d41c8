"""LBFGS against torch.optim.LBFGS: the same trajectory on Rosenbrock's function, with and
without the strong-Wolfe line search, and the same state."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.runtime import observe
from lazytorch.runtime.observe import RecompileWarning

START = np.array([[-1.2, 1.0], [0.5, -0.7], [1.5, 2.0]])  # three 2-d Rosenbrock problems


def rosenbrock(w, s):
    """Rosenbrock's banana in each row of w, plus a 0-d parameter s on a quartic bowl."""
    x, y = w[:, 0], w[:, 1]
    return ((1 - x) ** 2 + 100 * (y - x * x) ** 2).sum() + (s - 0.5) ** 4 + s * s


def setup(lib, **kwargs):
    w = lib.tensor(START.copy(), requires_grad=True)
    s = lib.tensor(np.float64(1.5), requires_grad=True)
    opt = lib.optim.LBFGS([w, s], **kwargs)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(w, s)
        loss.backward()
        return loss

    return opt, [w, s], closure


def host(value):
    if isinstance(value, (torch.Tensor, lt.Tensor)):
        return np.asarray(value.detach().numpy())
    if isinstance(value, list):
        return [host(v) for v in value]
    return value


def assert_same_state(opt, topt, rtol):
    ours, theirs = opt.state[opt._params[0]], topt.state[topt._params[0]]
    assert list(ours) == list(theirs)
    for key, tv in theirs.items():
        a, b = host(ours[key]), host(tv)
        if key == "al":
            a, b = [x for x in a if x is not None], [x for x in b if x is not None]
        if key in ("func_evals", "n_iter"):
            assert a == b, key
        else:
            np.testing.assert_allclose(
                np.asarray(a, dtype=float),
                np.asarray(b, dtype=float),
                rtol=rtol,
                # y = g_new - g_old and the dot products of such differences cancel: their
                # error is relative to the gradients (~10), not to themselves.
                atol=10 * rtol,
                err_msg=key,
            )


CASES = {
    "fixed step": dict(lr=0.05, max_iter=5, history_size=3),
    "fixed step, defaults": dict(lr=1e-3),
    "strong wolfe": dict(line_search_fn="strong_wolfe", max_iter=6, history_size=4),
}


RUNS = [(case, False) for case in CASES] + [("fixed step", True), ("strong wolfe", True)]


@pytest.mark.parametrize("case,sync", RUNS, ids=[f"{c}-{'sync' if s else 'lazy'}" for c, s in RUNS])
def test_trajectory_matches_torch(case, sync):
    kwargs = CASES[case]
    # Rosenbrock's curvature (~1e3) turns last-bit differences of the reductions into
    # gradient differences a thousand times larger; the line search follows the gradients.
    tol = 1e-9 if "line_search_fn" in kwargs else 1e-11
    opt, params, closure = setup(lt, **kwargs)
    topt, tparams, tclosure = setup(torch, **kwargs)
    with lt.backend("interpreter"), lt.sync_mode(sync):
        for _ in range(4):
            loss = opt.step(closure)
            tloss = topt.step(tclosure)
            assert loss.item() == pytest.approx(tloss.item(), rel=tol)
            for p, tp in zip(params, tparams):
                np.testing.assert_allclose(host(p), host(tp), rtol=tol, atol=tol)
            assert_same_state(opt, topt, tol)


def test_strong_wolfe_solves_rosenbrock_like_torch():
    """Twenty iterations a step: the first step matches torch closely (Rosenbrock's
    valley amplifies the reductions' last-bit differences from there on), and both
    libraries reach the minimum."""
    kwargs = dict(line_search_fn="strong_wolfe", history_size=10)
    opt, params, closure = setup(lt, **kwargs)
    topt, tparams, tclosure = setup(torch, **kwargs)
    with lt.backend("interpreter"):
        opt.step(closure)
        topt.step(tclosure)
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(host(p), host(tp), rtol=1e-9)
        assert opt.state[params[0]]["func_evals"] == topt.state[tparams[0]]["func_evals"]
        for _ in range(4):
            opt.step(closure)
            topt.step(tclosure)
    # Both end at the minimum (w = 1; s where 4 (s - 1/2)^3 + 2 s = 0), up to the stopping
    # tolerances.
    s_min = 0.1145415
    for w, s in (params, tparams):
        np.testing.assert_allclose(host(w), np.ones((3, 2)), atol=1e-5)
        assert host(s) == pytest.approx(s_min, abs=1e-3)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_no_recompile_warnings(monkeypatch, line_search_fn):
    """Each cut inside step() has its own location and few programs, so a long run does
    not read as one location recompiling."""
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "8")
    # Locations are counted over the session, and earlier tests cleared the program cache.
    monkeypatch.setattr(observe, "_recompiles_at", {})
    monkeypatch.setattr(observe, "_by_loc", {})
    opt, _, closure = setup(lt, lr=1e-3, line_search_fn=line_search_fn, history_size=12)
    with lt.backend("interpreter"), warnings.catch_warnings():
        warnings.simplefilter("error", RecompileWarning)
        for _ in range(3):
            opt.step(closure)


def test_compiled_backend_and_programs_reused():
    """On the default backend; the two-loop recursion is cut per curvature pair, so once the
    history is full a step builds no new programs."""
    kwargs = dict(line_search_fn="strong_wolfe", max_iter=4, history_size=2)
    opt, params, closure = setup(lt, **kwargs)
    topt, tparams, tclosure = setup(torch, **kwargs)
    built = []
    for _ in range(4):
        opt.step(closure)
        topt.step(tclosure)
        built.append(lt.metrics.counters()["programs_built"])
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(host(p), host(tp), rtol=1e-9)
    assert built[3] == built[2]


def test_stops_at_once_when_already_optimal():
    w = lt.tensor([1.0, 1.0], dtype=lt.float64, requires_grad=True)
    opt = lt.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = ((w - 1.0) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert opt.state[w]["func_evals"] == 1 and opt.state[w]["n_iter"] == 0


def test_state_dict_round_trip_continues_like_torch():
    kwargs = dict(line_search_fn="strong_wolfe", max_iter=3, history_size=3)
    opt, params, closure = setup(lt, **kwargs)
    topt, tparams, tclosure = setup(torch, **kwargs)
    with lt.backend("interpreter"):
        opt.step(closure)
        topt.step(tclosure)
        sd = opt.state_dict()
        assert list(sd["state"]) == list(topt.state_dict()["state"]) == [0]
        assert sd["param_groups"] == topt.state_dict()["param_groups"]
        opt2, params2, closure2 = setup(lt, **kwargs)
        for p, q in zip(params2, params):
            with lt.no_grad():
                p.copy_(q.detach())
        opt2.load_state_dict(sd)
        opt2.step(closure2)
        topt.step(tclosure)
        for p, tp in zip(params2, tparams):
            np.testing.assert_allclose(host(p), host(tp), rtol=1e-9)


@pytest.mark.parametrize("lib", [lt, torch], ids=["lazytorch", "torch"])
def test_errors_are_torchs(lib):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = lib.optim.LBFGS([a], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((a - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
