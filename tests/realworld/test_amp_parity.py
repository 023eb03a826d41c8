"""Mixed-precision training parity with torch (issue 22, item 5): the small GPT under
``autocast("cpu")`` step after step next to torch's autocast run from identical weights,
and float16 autocast with a ``GradScaler`` and an injected overflow skipping the same step
torch skips."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from benchmarks.models import copy_weights, gpt

CFG = dict(vocab=32, context=16, width=32, heads=4, layers=2)
# loss tolerance per autocast dtype (here the runs agree to ~2e-5 in float16, ~3e-4 in bfloat16)
RTOL = {"float16": 1e-3, "bfloat16": 2e-3}


def _run(lib, model, batches, low, scaler=None, overflow_at=()):
    """AdamW steps under autocast; per step (loss, scale, whether the head moved)."""
    opt = lib.optim.AdamW(model.parameters(), lr=3e-3)
    out = []
    for i, (xb, yb) in enumerate(batches):
        x, y = lib.tensor(xb), lib.tensor(yb)
        with lib.autocast("cpu", dtype=getattr(lib, low)):
            loss = model(x, y)[1]
        before = model.head.weight.detach().numpy().copy()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            if i in overflow_at:
                model.head.bias.grad[0] = float("inf")
            scaler.step(opt)
            scaler.update()
        opt.zero_grad()
        moved = not np.array_equal(before, model.head.weight.detach().numpy())
        out.append((loss.item(), scaler.get_scale() if scaler else None, moved))
    return out


def _models_and_batches(steps):
    torch.manual_seed(0)
    tm, lm = gpt(torch, **CFG), gpt(lt, **CFG)
    copy_weights(tm, lm, lt)
    data = np.random.default_rng(1).integers(0, 32, size=(steps, 4, 17))
    return tm, lm, [(d[:, :-1], d[:, 1:]) for d in data]


@pytest.mark.slow
@pytest.mark.parametrize("low", ["float16", "bfloat16"])
def test_small_gpt_under_autocast_tracks_torch_for_20_steps(low):
    tm, lm, batches = _models_and_batches(20)
    want = _run(torch, tm, batches, low)
    got = _run(lt, lm, batches, low)
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=RTOL[low])
    assert want[-1][0] < want[0][0]  # it trained


@pytest.mark.slow
def test_float16_with_a_grad_scaler_skips_the_step_torch_skips():
    tm, lm, batches = _models_and_batches(8)
    want = _run(
        torch, tm, batches, "float16", torch.amp.GradScaler("cpu", 2.0**12, growth_interval=3), (5,)
    )
    got = _run(
        lt, lm, batches, "float16", lt.amp.GradScaler("cpu", 2.0**12, growth_interval=3), (5,)
    )
    assert [g[1:] for g in got] == [w[1:] for w in want]
    assert [i for i, g in enumerate(got) if not g[2]] == [5]
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=RTOL["float16"])
