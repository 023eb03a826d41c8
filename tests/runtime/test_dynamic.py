"""Dynamic shapes: programs compiled once over symbolic sizes serve every size.

Each case records the same computation at many sizes from one line (one cut location), so
the second size makes the changed input dims symbolic. Every result is compared with the
reference interpreter on the same data, and the compile counts are checked: a change that
stops a case from generalizing fails here, as does one that generalizes wrongly.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import lazytorch as lt
from lazytorch import metrics

SIZES = [5, 9, 2, 33, 17, 3, 64, 1, 4, 40, 7, 128]


def _run(fn, arrays):
    out = fn(*[lt.from_numpy(a) for a in arrays])
    outs = out if isinstance(out, tuple) else (out,)
    lt.materialize(*outs)  # one cut location for every size
    return [o.numpy() for o in outs]


def sweep(fn, make, sizes=SIZES, rtol=1e-5, atol=1e-5):
    """Run fn on inputs make(n, rng) for each n on cpp; compare with the interpreter.

    Returns the metrics counters of the cpp runs alone."""
    rng = np.random.default_rng(0)
    inputs = [make(n, rng) for n in sizes]
    with lt.backend("interpreter"):
        wants = [_run(fn, arrays) for arrays in inputs]
    lt.runtime.clear_cache()
    metrics.reset()
    for n, arrays, want in zip(sizes, inputs, wants):
        got = _run(fn, arrays)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (n, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"size {n}")
    return metrics.counters()


def f32(*shape):
    return lambda n, rng: [
        rng.standard_normal([n if d is None else d for d in shape]).astype(np.float32)
    ]


CASES = {
    "pointwise": (lambda x: lt.tanh(x) * 2 + 1, f32(None, 7)),
    "sum_rows": (lambda x: x.sum(1), f32(None, 37)),
    "sum_over_dynamic": (lambda x: x.sum(0), f32(None, 37)),
    "mean_over_dynamic": (lambda x: x.mean(0), f32(None, 5)),
    "softmax_dynamic_row": (lambda x: lt.softmax(x, -1), f32(3, None)),
    "layer_norm": (
        lambda x: lt.nn.functional.layer_norm(x, (24,)),
        f32(None, 24),
    ),
    "var_over_dynamic": (lambda x: x.var(0), f32(None, 6)),
    "transpose_matmul": (lambda x: x.transpose(0, 1) @ x, f32(None, 8)),
    "outer_square": (lambda x: x[:, None] * x[None, :], f32(None)),
    # of a computed value: slices of an input buffer are read on the host at a miss
    # (lazytorch.runtime.host_fold), and the program then sees sizes n - 1
    "slices": (lambda x: x.exp()[1:] - x.exp()[:-1], f32(None, 3)),
    "cat": (lambda x: lt.cat([x, x * 2], 0), f32(None, 4)),
    "cumsum": (lambda x: lt.cumsum(x, 0), f32(None, 3)),
    "flatten": (lambda x: x.reshape(-1) * 3, f32(None, 5, 2)),
    "arange_mask": (
        lambda x: x * (lt.arange(x.shape[0]) < 3).float()[:, None],
        f32(None, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamic_matches_reference(name):
    fn, make = CASES[name]
    c = sweep(fn, make)
    assert c.get("dynamic_programs", 0) == 1, c
    # the first size, the symbolic program, and size 1
    assert c.get("programs_built", 0) <= 3, c


def test_mlp_batch_sizes_1_to_64_compile_at_most_3_programs():
    import torch  # the oracle (a test dependency)

    rng = np.random.default_rng(0)
    w1n = rng.standard_normal((784, 128)).astype(np.float32) / 28
    b1n = rng.standard_normal(128).astype(np.float32)
    w2n = rng.standard_normal((128, 10)).astype(np.float32) / 11
    w1, b1, w2 = lt.from_numpy(w1n), lt.from_numpy(b1n), lt.from_numpy(w2n)
    tw1, tb1, tw2 = (torch.from_numpy(a) for a in (w1n, b1n, w2n))
    sizes = list(range(1, 65))
    random.Random(0).shuffle(sizes)
    for n in sizes:
        xn = rng.standard_normal((n, 784)).astype(np.float32)
        y = lt.softmax(lt.relu(lt.from_numpy(xn) @ w1 + b1) @ w2, -1).numpy()
        ref = torch.softmax(torch.relu(torch.from_numpy(xn) @ tw1 + tb1) @ tw2, -1).numpy()
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-6, err_msg=f"batch {n}")
    c = metrics.counters()
    assert c["programs_built"] <= 3, c
    assert c["dynamic_hits"] >= 60, c


def test_causal_attention_seq_1_to_64_compiles_at_most_3_programs():
    import torch  # the oracle (a test dependency)

    rng = np.random.default_rng(1)
    d = 16
    ws = [rng.standard_normal((d, d)).astype(np.float32) / 4 for _ in range(3)]
    lw = [lt.from_numpy(w) for w in ws]
    tw = [torch.from_numpy(w) for w in ws]

    def attend(mod, x, w, s):
        q, k, v = (x @ wi for wi in w)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        mask = mod.tril(mod.ones(s, s))
        att = att.masked_fill(mask == 0, float("-inf"))
        return mod.softmax(att, -1) @ v

    sizes = list(range(1, 65))
    random.Random(1).shuffle(sizes)
    for s in sizes:
        xn = rng.standard_normal((2, s, d)).astype(np.float32)
        y = attend(lt, lt.from_numpy(xn), lw, s).numpy()
        ref = attend(torch, torch.from_numpy(xn), tw, s).numpy()
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5, err_msg=f"seq {s}")
    c = metrics.counters()
    assert c["programs_built"] <= 3, c


# -- marks ---------------------------------------------------------------------------------------
def test_mark_dynamic_compiles_the_symbolic_program_first():
    rng = np.random.default_rng(0)
    w = lt.from_numpy(rng.standard_normal((6, 3)).astype(np.float32))
    for n in (7, 2, 30, 5):
        xn = rng.standard_normal((n, 6)).astype(np.float32)
        x = lt.from_numpy(xn)
        lt.mark_dynamic(x, 0)
        y = lt.relu(x @ w).numpy()
        np.testing.assert_allclose(y, np.maximum(xn @ w.numpy(), 0), rtol=1e-5, atol=1e-6)
    c = metrics.counters()
    assert c["programs_built"] == 1 and c["dynamic_hits"] == 3, c


def test_mark_dynamic_bounds_are_guards_and_explained(caplog):
    import logging

    caplog.set_level(logging.INFO, logger="lazytorch.recompiles")
    for n in (4, 6, 9):
        x = lt.from_numpy(np.ones((n, 2), np.float32))
        lt.mark_dynamic(x, 0, min=3, max=8)
        assert (x + 1).sum().item() == 4.0 * n
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.endswith("guard s0 <= 8 failed (s0 = 9)") for m in msgs), msgs
    assert metrics.counters()["dynamic_hits"] == 1


def test_mark_static_keeps_a_dim_specialized():
    for n in (3, 4, 5):
        x = lt.from_numpy(np.ones((n, 2), np.float32))
        lt.mark_static(x, 0)
        lt.materialize(x * 3)
    c = metrics.counters()
    assert c["programs_built"] == 3 and c.get("dynamic_programs", 0) == 0, c


def test_mark_errors_name_the_problem():
    x = lt.from_numpy(np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="min must be at least 2"):
        lt.mark_dynamic(x, 0, min=1)
    with pytest.raises(ValueError, match="max 2 is below min 3"):
        lt.mark_dynamic(x, 0, min=3, max=2)
    with pytest.raises(IndexError, match="dim 2 out of range"):
        lt.mark_dynamic(x, 2)
    with pytest.raises(TypeError, match="takes a lazytorch Tensor"):
        lt.mark_static(np.ones(3), 0)


def test_dynamic_off_compiles_every_size(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "0")
    for n in (3, 4, 5):
        lt.materialize(lt.from_numpy(np.ones((n, 2), np.float32)) * 3)
    assert metrics.counters()["programs_built"] == 3


# -- recompile explanations ------------------------------------------------------------------------
def test_recompile_messages_name_what_became_dynamic_and_the_failed_guard(caplog):
    import logging

    caplog.set_level(logging.INFO, logger="lazytorch.recompiles")
    for n in (5, 8, 1, 13):
        x = lt.from_numpy(np.ones((n, 3), np.float32))
        lt.materialize(x.sum(1))
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 2, msgs
    assert msgs[0].endswith(
        "input 0 dim 0 (5 -> 8) is s0: compiling one program for every such size"
    ), msgs
    assert msgs[1].endswith("guard s0 >= 2 failed (s0 = 1; sizes 0 and 1 stay specialized)")
    c = metrics.counters()
    assert c["recompiles"] == 2 and c["dynamic_hits"] == 1


def test_data_dependent_size_flows_on_as_an_int_and_generalizes():
    """A boolean mask's selection has a size known only after a cut: the next program gets
    it as a concrete input size, which becomes symbolic when it changes."""
    rng = np.random.default_rng(3)
    for _ in range(6):
        xn = rng.standard_normal(40).astype(np.float32)
        x = lt.from_numpy(xn)
        sel = x[x > 0]  # a cut: the count is data-dependent
        assert isinstance(sel.shape[0], int)
        y = (sel * 2).sum()
        np.testing.assert_allclose(y.item(), 2 * xn[xn > 0].sum(), rtol=1e-5)
    # the program after the cut: one for the first count, one over the symbolic count
    assert metrics.counters()["dynamic_programs"] >= 1


# -- across processes -----------------------------------------------------------------------------
SCRIPT = """
import sys, numpy as np, lazytorch as lt
for n in map(int, sys.argv[1:]):
    x = lt.from_numpy(np.arange(n * 5, dtype=np.float32).reshape(n, 5))
    y = (x * 2).sum(1)
    lt.materialize(y)
    assert y.numpy().tolist() == (np.arange(n * 5).reshape(n, 5) * 2).sum(1).tolist()
c = lt.metrics.counters()
print(c.get("compiles", 0), c.get("dynamic_hits", 0))
"""


def _script(tmp_path, env, *sizes):
    import os
    import subprocess
    import sys

    path = tmp_path / "dyn.py"
    path.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(path), *map(str, sizes)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return out.stdout.split()


def test_a_new_process_finds_the_dynamic_program_on_disk(tmp_path):
    env = {"LAZYTORCH_CACHE_DIR": str(tmp_path / "c")}
    assert _script(tmp_path, env, 3, 4, 9) == ["2", "1"]  # 3 static, then one for all sizes
    assert _script(tmp_path, env, 17, 30, 2) == ["0", "2"]  # 17 loads it; nothing compiled


def test_recorded_dynamic_program_warms_a_fresh_cache(tmp_path):
    import json
    import os
    import subprocess
    import sys

    rec = tmp_path / "rec.jsonl"
    env = {"LAZYTORCH_CACHE_DIR": str(tmp_path / "a"), "LAZYTORCH_RECORD": str(rec)}
    _script(tmp_path, env, 3, 4)
    lines = [json.loads(s) for s in rec.read_text().splitlines()]
    dyn = [r for r in lines if "dynamic" in r]
    assert len(dyn) == 1 and "s0 = input 0 dim 0" in dyn[0]["guards"]
    assert dyn[0]["guards"][0] == "input 0: buffer float32[s0, 5] on cpu"
    fresh = {"LAZYTORCH_CACHE_DIR": str(tmp_path / "b")}
    r = subprocess.run(
        [sys.executable, "-m", "lazytorch", "warmup", "--manifest", str(rec)],
        env={**os.environ, **fresh},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert _script(tmp_path, fresh, 23, 41) == ["0", "1"]  # 23 loads it


def test_dump_shows_the_symbolic_program_and_its_guards(tmp_path, monkeypatch):
    import json

    from lazytorch.runtime import observe

    observe.set_dump_dir(tmp_path)
    try:
        for n in (3, 4, 7, 9):
            lt.materialize(lt.from_numpy(np.ones((n, 5), np.float32)).sum(1))
    finally:
        observe.set_dump_dir(None)
    rows = json.loads((tmp_path / "index.json").read_text())["programs"]
    assert [r["runs"] for r in rows] == [1, 3]  # every size's run is the dynamic program's
    guards = (tmp_path / "001" / "guards.txt").read_text()
    assert "s0 = input 0 dim 0" in guards and "symbolic sizes: s0" in guards
    assert "f32[s0, 5]" in (tmp_path / "001" / "ir.txt").read_text()
    assert "LT_S0" in (tmp_path / "001" / "program.cpp").read_text()


def test_a_changed_reduction_axis_is_no_size_and_does_not_block_sizes(tmp_path, monkeypatch):
    """Programs that differ in an axis share a pattern; fitting the axis as a size fails
    at the samples' shape rules, and the sizes of that pattern still generalize after."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))
    for axis, n in ((0, 4), (1, 4), (1, 6), (1, 9), (1, 12)):
        x = lt.from_numpy(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
        got = x.sum(axis).numpy()
        np.testing.assert_allclose(got, np.arange(n * 3).reshape(n, 3).sum(axis))
    c = metrics.counters()
    assert c["dynamic_programs"] == 1 and c["dynamic_hits"] == 2, c


@pytest.mark.parametrize("dynamic, built", [(True, 1), (False, 3), (None, 2)])
def test_compile_dynamic_flag_marks_the_arguments(dynamic, built, tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))  # no dynamic program on disk
    f = lt.compile(lambda x: (x * 2).sum(1), dynamic=dynamic)
    for n in (3, 5, 8):
        x = lt.from_numpy(np.ones((n, 4), np.float32))
        assert f(x).numpy().tolist() == [8.0] * n
    assert metrics.counters()["programs_built"] == built


def _train(sizes):
    from lazytorch import nn

    lt.manual_seed(0)
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
    opt = lt.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for n in sizes:
        x = lt.from_numpy(rng.standard_normal((n, 20)).astype(np.float32))
        y = lt.from_numpy(rng.integers(0, 5, n))
        loss = lt.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in model.parameters()]


def test_training_steps_over_a_dynamic_batch_match_per_size_programs(monkeypatch):
    """Backward sums over the batch and the loss divides by it: one program serves every
    batch size after the second, with the same numbers as one program per size."""
    sizes = [16, 9, 33, 12, 64, 5, 2, 40]
    losses, params = _train(sizes)
    c = metrics.counters()
    assert c["dynamic_programs"] == 1 and c["dynamic_hits"] == len(sizes) - 3, c
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "0")
    lt.runtime.clear_cache()
    ref_losses, ref_params = _train(sizes)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-5, atol=1e-6)


def test_kernels_reading_later_int_scalars_still_read_the_sizes():
    """A kernel whose first int scalar is not slot 0 normally gets its ia pointer moved;
    the sizes sit after the scalars in ia, so a symbolic program must not move it (this
    crashed before)."""
    for n in (3, 5, 8, 11):
        ref = np.arange(n * 4).reshape(n, 4)
        xi = lt.from_numpy(ref.copy())
        a = lt.cumsum(xi + 3, 0)
        b = (xi * 7 - 2).sum(1) + 9
        lt.materialize(a, b)
        np.testing.assert_array_equal(a.numpy(), np.cumsum(ref + 3, 0))
        np.testing.assert_array_equal(b.numpy(), (ref * 7 - 2).sum(1) + 9)
    assert metrics.counters()["dynamic_hits"] == 2


@pytest.mark.parametrize("first", [64, 10, 128])
def test_a_marked_batch_equal_to_a_weight_dim_stays_the_batch(first, tmp_path, monkeypatch):
    """From one program a marked size is matched by value in attributes only; node shapes
    come from the shape rules, so [64, 64] @ [64, 128] marked at 64 rows is [s0, 128]."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    w1 = lt.from_numpy(rng.standard_normal((64, 128)).astype(np.float32) / 8)
    w2 = lt.from_numpy(rng.standard_normal((128, 10)).astype(np.float32) / 11)
    for n in (first, 3, 37):
        xn = rng.standard_normal((n, 64)).astype(np.float32)
        x = lt.from_numpy(xn)
        lt.mark_dynamic(x, 0)
        y = lt.softmax(lt.relu(x @ w1) @ w2, -1).numpy()
        h = np.maximum(xn @ w1.numpy(), 0) @ w2.numpy()
        e = np.exp(h - h.max(-1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    c = metrics.counters()
    assert c["programs_built"] == 1 and c["dynamic_hits"] == 2, c


def test_an_exported_cache_with_a_dynamic_program_imports_cleanly(tmp_path):
    import os
    import subprocess
    import sys

    a = {"LAZYTORCH_CACHE_DIR": str(tmp_path / "a")}
    _script(tmp_path, a, 3, 4)
    archive = tmp_path / "cache.tar.gz"

    def cli(*args, env):
        return subprocess.run(
            [sys.executable, "-m", "lazytorch", *args],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert cli("cache", "export", str(archive), env=a).returncode == 0
    b = {"LAZYTORCH_CACHE_DIR": str(tmp_path / "b")}
    r = cli("cache", "import", str(archive), env=b)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _script(tmp_path, b, 19, 33) == ["0", "1"]  # never-seen sizes, from disk


def test_a_size_that_falls_as_its_symbol_grows_compiles_per_size(caplog):
    """5 - n rows at n = 2, 3, 4 fits as an affine size, negative at large sizes: not a
    program over symbols (before, the sample sizes reached the code generator and failed)."""
    import logging

    caplog.set_level(logging.INFO, logger="lazytorch.recompiles")
    for n in (2, 3, 4):
        x = lt.from_numpy(np.arange(n, dtype=np.float32))
        y = x.sum() + lt.ones(5 - n, 3)
        np.testing.assert_allclose(y.numpy(), np.full((5 - n, 3), n * (n - 1) / 2 + 1))
    assert metrics.counters()["dynamic_programs"] == 0
    assert any("negative at large sizes" in r.getMessage() for r in caplog.records)
