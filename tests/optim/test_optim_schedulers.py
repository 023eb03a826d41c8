"""The lr schedulers beyond the simple decays, against torch.optim.lr_scheduler: the same lr
(and momentum) sequence step for step, the same state dicts, torch's errors."""

from __future__ import annotations

import inspect
import math
import re
import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.optim import lr_scheduler

STEPS = 30


def two_groups(lib) -> list[dict]:
    return [
        {"params": [lib.zeros(2, requires_grad=True)]},
        {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.03},
    ]


def optimizers(name: str = "SGD", **kwargs):
    """The same two-group optimizer in each library (lr 0.1 and 0.03); no gradients, so a
    step only advances the schedule."""
    kwargs = {"lr": 0.1, **({"momentum": 0.9} if name == "SGD" else {}), **kwargs}
    return (
        getattr(lt.optim, name)(two_groups(lt), **kwargs),
        getattr(torch.optim, name)(two_groups(torch), **kwargs),
    )


def momenta(opt) -> list[float]:
    key = "betas" if "betas" in opt.defaults else "momentum"
    return [g[key][0] if key == "betas" else g[key] for g in opt.param_groups]


def run_pair(sched, tsched, opt, topt, steps: int = STEPS, step_args=None):
    """Step both, collecting (lrs, momenta) after construction and every step."""
    seq = [(sched.get_last_lr(), momenta(opt))]
    tseq = [(tsched.get_last_lr(), momenta(topt))]
    for k in range(steps):
        opt.step()
        topt.step()
        args = () if step_args is None else (step_args(k),)
        sched.step(*args)
        tsched.step(*args)
        seq.append((sched.get_last_lr(), momenta(opt)))
        tseq.append((tsched.get_last_lr(), momenta(topt)))
        assert [g["lr"] for g in opt.param_groups] == seq[-1][0]
    return seq, tseq


CASES = {
    "MultiplicativeLR": ("SGD", dict(lr_lambda=lambda epoch: 0.95 if epoch % 3 else 1.0)),
    "ConstantLR": ("SGD", dict(factor=0.25, total_iters=7)),
    "ConstantLR-defaults": ("SGD", dict()),
    "PolynomialLR": ("SGD", dict(total_iters=20, power=2.0)),
    "PolynomialLR-linear": ("SGD", dict(total_iters=8)),
    "CosineAnnealingWarmRestarts": ("SGD", dict(T_0=4, eta_min=0.001)),
    "CosineAnnealingWarmRestarts-mult": ("SGD", dict(T_0=3, T_mult=2)),
    "CyclicLR": ("SGD", dict(base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=4)),
    "CyclicLR-triangular2": (
        "SGD",
        dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    ),
    "CyclicLR-exp_range-adam": (
        "Adam",
        dict(base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.9),
    ),
    "CyclicLR-scale_fn-no-momentum": (
        "SGD",
        dict(
            base_lr=0.01,
            max_lr=0.1,
            step_size_up=2,
            scale_fn=lambda x: 1 / (1 + x),
            scale_mode="iterations",
            cycle_momentum=False,
        ),
    ),
    "OneCycleLR": ("SGD", dict(max_lr=1.0, total_steps=STEPS)),
    "OneCycleLR-linear-adam": (
        "Adam",
        dict(max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=10, anneal_strategy="linear"),
    ),
    "OneCycleLR-three-phase": (
        "AdamW",
        dict(max_lr=0.3, total_steps=STEPS, three_phase=True, pct_start=0.4, div_factor=10.0),
    ),
    "OneCycleLR-no-momentum": ("RMSprop", dict(max_lr=0.3, total_steps=40, cycle_momentum=False)),
}


@pytest.mark.parametrize("case", CASES)
def test_lr_and_momentum_sequence_matches_torch(case):
    optim_name, kwargs = CASES[case]
    name = case.split("-")[0]
    opt, topt = optimizers(optim_name)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    assert sched.base_lrs == tsched.base_lrs
    assert opt.param_groups == [
        {k: v for k, v in g.items() if k != "params"} | {"params": og["params"]}
        for g, og in zip(topt.param_groups, opt.param_groups)
    ]
    seq, tseq = run_pair(sched, tsched, opt, topt)
    assert sched.last_epoch == tsched.last_epoch
    if name in ("CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "PolynomialLR"):
        np.testing.assert_allclose(
            np.array([s[0] + s[1] for s in seq], dtype=float),
            np.array([s[0] + s[1] for s in tseq], dtype=float),
            rtol=1e-14,
            atol=1e-17,
        )
    else:
        assert seq == tseq


def test_one_cycle_refuses_to_step_past_the_end():
    for lib, sched_module in ((lt, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        sched = sched_module.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        opt.step()
        with pytest.raises(ValueError, match="Tried to step 4 times"):
            sched.step()


def test_cosine_warm_restarts_with_fractional_epochs():
    opt, topt = optimizers()
    sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
    tsched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        topt, T_0=3, T_mult=2, eta_min=0.01
    )
    epochs = [0.5, 1.0, 2.75, 3.0, 4.5, 8.9, 9.0, 21.0, 2.0]
    seq, tseq = run_pair(sched, tsched, opt, topt, len(epochs), lambda k: epochs[k])
    assert seq == tseq


# -- ReduceLROnPlateau ------------------------------------------------------------------------------
METRICS = [5.0, 4.0, 4.0, 3.9999, 4.1, 3.0, 3.0, 3.0, 3.0, 2.9, 2.95, 3.1, 3.0, 2.0, 2.0]
METRICS = METRICS * 2 + [1.0] * 10

PLATEAU_CASES = {
    "defaults-fast": dict(patience=2),
    "abs": dict(patience=1, threshold=0.05, threshold_mode="abs", factor=0.5),
    "max": dict(mode="max", patience=1, factor=0.5),
    "max-abs": dict(mode="max", patience=0, threshold=0.5, threshold_mode="abs"),
    "cooldown-min_lr": dict(patience=0, cooldown=2, min_lr=[0.02, 0.001], factor=0.5),
    "eps": dict(patience=0, factor=0.9, eps=0.004),
}


@pytest.mark.parametrize("case", PLATEAU_CASES)
@pytest.mark.parametrize("as_tensor", [False, True], ids=["float", "0-d tensor"])
def test_reduce_on_plateau_matches_torch(case, as_tensor):
    kwargs = PLATEAU_CASES[case]
    opt, topt = optimizers()
    sched = lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    seq, tseq = [sched.get_last_lr()], [tsched.get_last_lr()]
    for m in METRICS:
        opt.step()
        topt.step()
        sched.step(lt.tensor(m) if as_tensor else m)
        tsched.step(torch.tensor(m) if as_tensor else m)
        seq.append(sched.get_last_lr())
        tseq.append(tsched.get_last_lr())
        assert (sched.best, sched.num_bad_epochs, sched.cooldown_counter) == (
            tsched.best,
            tsched.num_bad_epochs,
            tsched.cooldown_counter,
        )
    assert seq == tseq
    assert len(set(map(tuple, seq))) > 1  # the case does cut the lr
    assert sched.state_dict() == tsched.state_dict()


def test_reduce_on_plateau_errors_match_torch():
    for kwargs, exc in [
        (dict(factor=1.0), ValueError),
        (dict(mode="median"), ValueError),
        (dict(threshold_mode="ratio"), ValueError),
        (dict(min_lr=[0.1]), ValueError),
    ]:
        opt, topt = optimizers()
        with pytest.raises(exc) as ours:
            lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        with pytest.raises(exc) as theirs:
            torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_reduce_on_plateau_state_dict_round_trip():
    opt, _ = optimizers()
    sched = lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
    for m in [1.0, 0.5, 0.5]:
        sched.step(m)
    opt2, _ = optimizers()
    sched2 = lr_scheduler.ReduceLROnPlateau(opt2)
    sched2.load_state_dict(sched.state_dict())
    assert (sched2.mode, sched2.best, sched2.num_bad_epochs) == ("max", 1.0, 0)
    assert sched2._is_better(2.0, 1.0) and not sched2._is_better(0.5, 1.0)


# -- SequentialLR and ChainedScheduler --------------------------------------------------------------
def _sequential(lib, opt):
    mod = lr_scheduler if lib is lt else torch.optim.lr_scheduler
    return mod.SequentialLR(
        opt,
        [
            mod.LinearLR(opt, start_factor=0.1, total_iters=5),
            mod.ConstantLR(opt, factor=0.5, total_iters=4),
            mod.CosineAnnealingLR(opt, T_max=8, eta_min=0.001),
        ],
        milestones=[5, 12],
    )


def _chained(lib, opt):
    mod = lr_scheduler if lib is lt else torch.optim.lr_scheduler
    return mod.ChainedScheduler(
        [
            mod.ConstantLR(opt, factor=0.2, total_iters=6),
            mod.ExponentialLR(opt, gamma=0.9),
            mod.MultiStepLR(opt, milestones=[10, 20], gamma=0.5),
        ]
    )


def _nested(lib, opt):
    mod = lr_scheduler if lib is lt else torch.optim.lr_scheduler
    return mod.SequentialLR(
        opt,
        [_chained(lib, opt), mod.ExponentialLR(opt, gamma=0.8)],  # (torch cannot switch
        milestones=[8],  # to a ChainedScheduler: it has no get_lr)
    )


# Nested: SequentialLR's first step re-runs the chain's first step, which warns as torch's does.
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before")
@pytest.mark.parametrize("make", [_sequential, _chained, _nested], ids=["seq", "chain", "nested"])
def test_combined_schedulers_match_torch(make):
    opt, topt = optimizers()
    sched, tsched = make(lt, opt), make(torch, topt)
    seq, tseq = run_pair(sched, tsched, opt, topt)
    np.testing.assert_allclose(
        np.array([s[0] for s in seq]), np.array([s[0] for s in tseq]), rtol=1e-14, atol=1e-17
    )
    # The state dict nests the inner schedulers' state dicts, under torch's keys.
    sd, tsd = sched.state_dict(), tsched.state_dict()
    assert set(sd) == set(tsd)
    assert [set(s) for s in sd["_schedulers"]] == [set(s) for s in tsd["_schedulers"]]


def test_sequential_state_dict_round_trip_continues():
    opt, topt = optimizers()
    sched, tsched = _sequential(lt, opt), _sequential(torch, topt)
    run_pair(sched, tsched, opt, topt, steps=7)
    opt2, _ = optimizers()  # resume: build both, then load both (torch's order)
    sched2 = _sequential(lt, opt2)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    seq, tseq = run_pair(sched2, tsched, opt2, topt, steps=10)
    np.testing.assert_allclose(
        np.array([s[0] for s in seq[1:]]), np.array([s[0] for s in tseq[1:]]), rtol=1e-14
    )


def test_combinator_errors_match_torch():
    def errors(lib):
        mod = lr_scheduler if lib is lt else torch.optim.lr_scheduler
        opt, other = (lib.optim.SGD(two_groups(lib), lr=0.1) for _ in range(2))
        step = mod.StepLR(opt, step_size=2)
        out = []
        for fn in (
            lambda: mod.SequentialLR(opt, [], milestones=[]),
            lambda: mod.SequentialLR(opt, [step, mod.StepLR(opt, 2)], milestones=[]),
            lambda: mod.SequentialLR(opt, [step, mod.ReduceLROnPlateau(opt)], milestones=[2]),
            lambda: mod.SequentialLR(other, [step], milestones=[]),
            lambda: mod.ChainedScheduler([]),
            lambda: mod.ChainedScheduler([step, object()]),
        ):
            with pytest.raises((ValueError, TypeError)) as e:
                fn()
            out.append((e.type, str(e.value).split(" has ")[0]))
        return out

    assert errors(lt) == errors(torch)


# -- closed forms, state dicts, errors, signatures ---------------------------------------------------
@pytest.mark.parametrize("name", ["ConstantLR", "PolynomialLR"])
def test_step_with_epoch_uses_the_closed_form(name):
    _, kwargs = CASES[name]
    opt, topt = optimizers()
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    for epoch in (3, 9, 25):
        opt.step()
        topt.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tsched.step(epoch)
        np.testing.assert_allclose(sched.get_last_lr(), tsched.get_last_lr(), rtol=1e-14)


@pytest.mark.parametrize("case", [c for c in CASES if "-" not in c or "adam" in c])
def test_state_dict_keys_match_torch_and_round_trip(case):
    optim_name, kwargs = CASES[case]
    name = case.split("-")[0]
    opt, topt = optimizers(optim_name)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    run_pair(sched, tsched, opt, topt, steps=5)
    sd = sched.state_dict()
    assert set(sd) == set(tsched.state_dict())
    opt2, _ = optimizers(optim_name)  # resume: build both, then load both (torch's order)
    sched2 = getattr(lr_scheduler, name)(opt2, **kwargs)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sd)
    seq, tseq = run_pair(sched2, tsched, opt2, topt, steps=10)
    np.testing.assert_allclose(
        np.array([s[0] + s[1] for s in seq[1:]], dtype=float),
        np.array([s[0] + s[1] for s in tseq[1:]], dtype=float),
        rtol=1e-14,
    )


ERROR_CASES = [
    ("ConstantLR", dict(factor=1.5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, eta_min="0")),
    ("CyclicLR", dict(base_lr=0.1, max_lr=1.0, mode="sawtooth")),
    ("CyclicLR", dict(base_lr=[0.1], max_lr=1.0)),
    ("OneCycleLR", dict(max_lr=1.0)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=0)),
    ("OneCycleLR", dict(max_lr=1.0, epochs=0, steps_per_epoch=2)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=5, pct_start=1)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=5, anneal_strategy="exp")),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 1.0])),
    ("MultiplicativeLR", dict(lr_lambda=0.5)),
]


# ids without a function's address: the same in every process (pytest-xdist workers compare them)
@pytest.mark.parametrize(
    "name,kwargs",
    ERROR_CASES,
    ids=[re.sub(" at 0x[0-9a-f]+", "", f"{n}-{k}") for n, k in ERROR_CASES],
)
def test_argument_errors_match_torch(name, kwargs):
    opt, topt = optimizers()
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    with pytest.raises(theirs.type) as ours:
        getattr(lr_scheduler, name)(opt, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_cycle_momentum_needs_a_momentum():
    opt = lt.optim.Adagrad([lt.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)


def test_everything_torch_exports_is_exported():
    assert sorted(lr_scheduler.__all__) == sorted(torch.optim.lr_scheduler.__all__)


def test_legacy_lr_scheduler_base_class_matches_torch():
    """``lr_scheduler._LRScheduler``, torch's old name of the base class, as a subclass of
    rosinality/vq-vae-2-pytorch scheduler.py (its CosineLR, counting its own iterations)
    uses it: the same lr sequence as torch's."""

    def cosine_lr(lib):
        class CosineLR(lib.optim.lr_scheduler._LRScheduler):
            def __init__(self, optimizer, lr_min, lr_max, step_size):
                self.lr_min, self.lr_max, self.step_size = lr_min, lr_max, step_size
                self.iteration = 0
                super().__init__(optimizer, -1)

            def get_lr(self):
                lr = self.lr_min + 0.5 * (self.lr_max - self.lr_min) * (
                    1 + math.cos(self.iteration / self.step_size * math.pi)
                )
                self.iteration += 1
                return [lr for _ in self.optimizer.param_groups]

        return CosineLR

    opt, topt = optimizers()
    sched = cosine_lr(lt)(opt, 0.001, 0.1, 7)
    tsched = cosine_lr(torch)(topt, 0.001, 0.1, 7)
    assert isinstance(sched, lr_scheduler.LRScheduler)
    seq, tseq = run_pair(sched, tsched, opt, topt, steps=10)
    assert seq == tseq


@pytest.mark.parametrize("name", torch.optim.lr_scheduler.__all__)
def test_signature_matches_torch(name):
    ours = inspect.signature(getattr(lr_scheduler, name).__init__).parameters
    theirs = inspect.signature(getattr(torch.optim.lr_scheduler, name).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


# -- a schedule does not recompile --------------------------------------------------------------
@pytest.mark.parametrize("optim_name", ["SGD", "Adam"])
def test_one_cycle_schedule_reuses_the_program(optim_name):
    """OneCycleLR changes the lr and the momentum (Adam: betas[0]) every step; both are
    program inputs, so from the third step on no program is built."""
    rng = np.random.default_rng(0)
    x, y = lt.tensor(rng.standard_normal((8, 3))), lt.tensor(rng.standard_normal(8))
    w = lt.zeros(3, dtype=lt.float64, requires_grad=True)
    opt = getattr(lt.optim, optim_name)(
        [w], lr=0.1, **({"momentum": 0.9} if optim_name == "SGD" else {})
    )
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=8)
    lt.materialize(x, y)
    built = []
    for _ in range(7):
        opt.zero_grad()
        ((x @ w - y) ** 2).mean().backward()
        opt.step()
        sched.step()
        built.append(lt.metrics.counters()["programs_built"])
    assert built[2:] == [built[1]] * 5
