"""``GradScaler`` against ``torch.amp.GradScaler("cpu")``: scales, skipped steps and
parameters over a short training run with an injected overflow, growth and backoff, the
state dict, the errors of misuse, and the one program the unscale and check run in."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt


def _train(lib, steps=10, overflow_at=(4,), growth_interval=3, scaler=None, loss_dtype=None):
    """A float32 MLP under float16 autocast with a GradScaler; an inf is written into one
    gradient at the steps in `overflow_at`. Returns per step (loss, scale, whether the
    step changed the weights, growth tracker) and the final weights."""
    rng = np.random.default_rng(0)
    w1 = lib.nn.Parameter(lib.from_numpy(rng.standard_normal((8, 16)).astype(np.float32) * 0.3))
    w2 = lib.nn.Parameter(lib.from_numpy(rng.standard_normal((16, 4)).astype(np.float32) * 0.3))
    opt = lib.optim.SGD([w1, w2], lr=0.1, momentum=0.9)
    if scaler is None:
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=growth_interval)
    out = []
    for i in range(steps):
        x = lib.from_numpy(rng.standard_normal((5, 8)).astype(np.float32))
        y = lib.from_numpy(rng.standard_normal((5, 4)).astype(np.float32))
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            loss = lib.nn.functional.mse_loss(lib.relu(x @ w1) @ w2, y)
        scaler.scale(loss).backward()
        if i in overflow_at:
            w2.grad[1, 2] = float("inf") if i % 2 == 0 else float("nan")
        before = w1.detach().numpy().copy()
        scaler.step(opt)
        scaler.update()
        moved = not np.array_equal(before, w1.detach().numpy())
        out.append((loss.item(), scaler.get_scale(), moved, scaler._get_growth_tracker()))
    return out, [w.detach().numpy().copy() for w in (w1, w2)], scaler


def test_training_with_overflows_matches_torch_step_by_step():
    ours, ours_w, _ = _train(lt, overflow_at=(4, 7))
    theirs, theirs_w, _ = _train(torch, overflow_at=(4, 7))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a[1:] == b[1:], f"step {i}: (scale, stepped, tracker) {a[1:]} != torch {b[1:]}"
        assert a[0] == pytest.approx(b[0], rel=1e-3), f"step {i}"
    # exactly the injected steps were skipped, and each halved the scale
    assert [i for i, s in enumerate(ours) if not s[2]] == [4, 7]
    for a, b in zip(ours_w, theirs_w):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def test_growth_after_growth_interval_clean_steps():
    ours, _, _ = _train(lt, steps=7, overflow_at=(), growth_interval=2)
    assert [s[1] for s in ours] == [1024.0, 2048.0, 2048.0, 4096.0, 4096.0, 8192.0, 8192.0]
    theirs, _, _ = _train(torch, steps=7, overflow_at=(), growth_interval=2)
    assert [s[1] for s in ours] == [s[1] for s in theirs]


def test_state_dict_round_trip_with_torchs_keys():
    _, _, ours = _train(lt, steps=5, overflow_at=(1,))
    _, _, theirs = _train(torch, steps=5, overflow_at=(1,))
    assert ours.state_dict() == theirs.state_dict()
    fresh = lt.amp.GradScaler("cpu")
    fresh.load_state_dict(ours.state_dict())
    assert fresh.state_dict() == ours.state_dict()
    # the loaded scaler continues as the saved one does: same scales from here on
    cont_a, _, _ = _train(lt, steps=4, overflow_at=(2,), scaler=fresh)
    cont_b, _, _ = _train(lt, steps=4, overflow_at=(2,), scaler=ours)
    assert [s[1:] for s in cont_a] == [s[1:] for s in cont_b]
    with pytest.raises(RuntimeError, match="state dict is empty"):
        lt.amp.GradScaler("cpu").load_state_dict({})


def test_scale_tensors_and_nested_sequences():
    for lib in (lt, torch):
        s = lib.amp.GradScaler("cpu", init_scale=4.0)
        a, b = lib.ones(2), lib.ones(3, dtype=lib.float16)
        out = s.scale([a, (b, [a])])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].tolist() == [4.0, 4.0] and out[1][0].dtype is lib.float16
        assert out[1][1][0].tolist() == [4.0, 4.0]
        assert s.scale(b).dtype is lib.float16
        with pytest.raises(ValueError, match="iterable of Tensors"):
            s.scale(3.0)


def test_misuse_raises_as_torch():
    for lib in (lt, torch):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.1)
        s = lib.amp.GradScaler("cpu")
        s.scale((w * w).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="after step"):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        s.update()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: None)
        with pytest.raises(AssertionError, match="No inf checks"):
            s.update()
        with pytest.raises(AssertionError, match="_scale is None"):
            lib.amp.GradScaler("cpu").step(opt)
        half = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
        opt16 = lib.optim.SGD([half], lr=0.1)
        s.scale((half * half).sum()).backward()
        with pytest.raises(ValueError, match="FP16 gradients"):
            s.unscale_(opt16)


def test_update_to_a_new_scale():
    for lib in (lt, torch):
        s = lib.amp.GradScaler("cpu")
        s.scale(lib.ones(1))
        s.update(8.0)
        assert s.get_scale() == 8.0
        s.update(lib.tensor(3.0))
        assert s.get_scale() == 3.0


def test_the_unscale_and_check_run_in_one_program_with_the_backward_pass():
    w = lt.nn.Parameter(lt.ones(4, 4))
    opt = lt.optim.SGD([w], lr=0.1)
    s = lt.amp.GradScaler("cpu", init_scale=256.0)  # no overflow of its own in float16
    x = lt.ones(3, 4)
    lt.materialize(x, w)
    cuts_before_step = []
    step = opt.step

    def counting_step(*args, **kwargs):
        cuts_before_step.append(lt.metrics.counters()["materializations"] - before)
        return step(*args, **kwargs)

    opt.step = counting_step
    for overflow in (False, True, False):
        opt.zero_grad()
        with lt.autocast("cpu", dtype=lt.float16):
            loss = (x @ w).float().pow(2).mean()
        s.scale(loss).backward()
        if overflow:
            w.grad.mul_(float("inf"))
        assert not w.grad.is_materialized  # the backward pass is pending
        before = lt.metrics.counters()["materializations"]
        s.step(opt)
        if overflow:  # skipped: the one cut that read the flag, the gradients in it
            assert lt.metrics.counters()["materializations"] - before == 1
        assert w.grad.is_materialized
        s.update()
    # a step taken: one cut (backward, unscale, check) before the optimizer's update
    assert cuts_before_step == [1, 1]


def test_disabled_and_legacy_spellings():
    s = lt.cpu.amp.GradScaler(init_scale=8.0)
    assert s.is_enabled() and s.get_scale() == 8.0
    assert lt.amp.GradScaler("cpu", enabled=False).scale(lt.ones(1)).item() == 1.0
