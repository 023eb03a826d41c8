"""The C++ backend's matmul epilogues: the pointwise kernel after a product runs on each
block of the product, right after the block is multiplied (scheduler/epilogue.py,
lazytorch_blas.h "epilogues", codegen/cpp.py `_matmul`).

What must hold: the numbers are torch's, and bitwise those of the same ops run one at a
time (sync mode runs the product alone: the blocks are the GEMM's own); the fused step is
one extern call with no kernel of its own; a product nothing else reads is never stored,
so the memory plan gives it no bytes; an epilogue never writes over an operand its GEMM is
still reading.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.codegen.compiler import split_units
from lazytorch.scheduler import schedule


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    """The cpp backend with a private, empty disk cache."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        yield


def _rand(*shape: int, seed: int = 0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _lib_tensor(lib, a: np.ndarray):
    return torch.from_numpy(a.copy()) if lib is torch else lt.tensor(a)


def _host(t) -> np.ndarray:
    return t.numpy()


# name -> (fn(lib, *tensors), input shapes, dtype); each fn ends in a matmul whose first
# reader is a pointwise kernel over its elements
CASES = {
    # several row blocks on any thread count (300 rows, 9M multiply-adds)
    "linear_relu": (lambda L, x, w, b: (x @ w.T + b).relu(), [(300, 200), (150, 200), (150,)]),
    # more columns than rows: the GEMM cuts columns
    "wide_exp": (lambda L, a, b: (a @ b).mul(0.01).exp(), [(20, 200), (200, 3000)]),
    # a batch of products, the weight shared (zero batch stride)
    "batched_tanh": (lambda L, x, w, b: (x @ w + b).tanh(), [(6, 70, 90), (90, 80), (80,)]),
    # operands read transposed
    "transposed": (lambda L, a, b: (a.T @ b.T).sigmoid(), [(90, 120), (70, 90)]),
    # the product is kept: it is a result too
    "kept": (lambda L, a, b: ((p := a @ b).relu() * 2, p), [(130, 64), (64, 96)]),
    # the epilogue stores two results, with a range test (where) in it
    "two_outputs": (
        lambda L, a, b: ((p := a @ b).where(p > 0, p * 0.1), p.sigmoid()),
        [(96, 64), (64, 80)],
    ),
    # an empty contraction: the product is zeros, the epilogue still runs
    "k0": (lambda L, a, b: (a[:, :0] @ b[:0]) + 1.5, [(40, 8), (8, 30)]),
}


# Sync mode differs in its last bits here, with or without epilogues: it copies the
# transposed operands (a GEMM with other transposition flags).
SYNC_DIFFERS = {"transposed"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_epilogue_matches_torch_and_sync_mode(cpp, case, dtype):
    fn, shapes = CASES[case]
    arrays = [_rand(*s, seed=i, dtype=dtype) for i, s in enumerate(shapes)]
    want = fn(torch, *[_lib_tensor(torch, a) for a in arrays])
    got = fn(lt, *[_lib_tensor(lt, a) for a in arrays])
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    (mm,) = [s for s in lt.debug.schedule(*got).steps if getattr(s, "kind", "") == "matmul"]
    assert mm.epilogue is not None and mm.store_output == (case == "kept"), mm.describe()
    lazy = [_host(g) for g in got]
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(lazy, want):
        np.testing.assert_allclose(g, _host(w), rtol=tol, atol=tol)
    if case in SYNC_DIFFERS:
        return
    with lt.sync_mode():
        sync = fn(lt, *[_lib_tensor(lt, a) for a in arrays])
        sync = sync if isinstance(sync, tuple) else (sync,)
        for s, g in zip(sync, lazy):
            np.testing.assert_array_equal(_host(s), g)


def test_integer_products_take_epilogues(cpp):
    a = np.random.default_rng(0).integers(-9, 9, size=(40, 30))
    b = np.random.default_rng(1).integers(-9, 9, size=(30, 20))
    got = (lt.tensor(a) @ lt.tensor(b)) * 3 - 1
    assert lt.debug.schedule(got).steps[0].epilogue is not None
    np.testing.assert_array_equal(got.numpy(), (a @ b) * 3 - 1)


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_a_16_bit_linear_rounds_once_in_its_epilogue(cpp, half):
    # the float32 product of 16-bit operands plus the bias, rounded once (torch's addmm):
    # the product lives only in the GEMM's blocks
    x, w, b = _rand(64, 128), _rand(96, 128, seed=1), _rand(96, seed=2)

    def fn(lib, F):
        dt = getattr(lib, half)
        t = [lib.tensor(a).to(dt) if lib is lt else torch.from_numpy(a).to(dt) for a in (x, w, b)]
        return F.linear(*t).float()

    got = fn(lt, lt.nn.functional)
    (mm,) = [s for s in lt.debug.schedule(got).steps if getattr(s, "kind", "") == "matmul"]
    assert mm.epilogue is not None and not mm.store_output, mm.describe()
    np.testing.assert_array_equal(got.numpy(), fn(torch, torch.nn.functional).numpy())


def test_mlp_forward_is_one_extern_call_per_layer_and_stores_no_product(cpp):
    x, w1, b1 = _rand(256, 128), _rand(512, 128, seed=1), _rand(512, seed=2)
    w2, b2 = _rand(64, 512, seed=3), _rand(64, seed=4)
    t = [lt.tensor(a) for a in (x, w1, b1, w2, b2)]
    F = lt.nn.functional
    y = F.linear(F.relu(F.linear(t[0], t[1], t[2])), t[3], t[4])
    sched, src = lt.debug.schedule(y), lt.debug.source(y)
    assert len(sched.kernels) == 0 and len(sched.steps) == 2, str(sched)
    assert all(s.epilogue is not None and not s.store_output for s in sched.steps)
    # only the hidden layer's activations are a temporary (the products are never stored)
    assert sched.arena_bytes == 256 * 512 * 4, str(sched)
    tt = [torch.from_numpy(a) for a in (x, w1, b1, w2, b2)]
    tF = torch.nn.functional
    want = tF.linear(tF.relu(tF.linear(tt[0], tt[1], tt[2])), tt[3], tt[4])
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
    assert len(re.findall(r"^ +static .* void run\(", src, re.M)) == 2


def test_epilogue_output_never_takes_its_operands_memory(cpp):
    # t dies in the product's step, and the epilogue's result has t's shape and dtype: a plan
    # that let the result take t's bytes would overwrite rows of t that later blocks of the
    # GEMM still read (each block reads all of B, here t @ w reads t by rows and B = w)
    x, w = _rand(512, 512), _rand(512, 512, seed=1) * 0.05
    for lhs in (True, False):
        tx, tw = lt.tensor(x), lt.tensor(w)
        t = tx.exp() * 0.5
        y = (((t @ tw) if lhs else (tw @ t)).relu() + 1) @ tw  # (h, the result, is stored)
        sched = lt.debug.schedule(y)
        mm = next(s for s in sched.steps if getattr(s, "epilogue", None) is not None)
        out = sched.buffers[next(iter(mm.epilogue.writes))]
        operand = sched.buffers[mm.inputs[0 if lhs else 1].buffer]
        assert out.kind == operand.kind == "temp" and out.nbytes == operand.nbytes
        assert out.inplace_of is None
        assert out.offset + out.nbytes <= operand.offset or (
            operand.offset + operand.nbytes <= out.offset
        ), str(sched)
        tt = torch.from_numpy(x).exp() * 0.5
        tww = torch.from_numpy(w)
        want = (((tt @ tww) if lhs else (tww @ tt)).relu() + 1) @ tww
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)


def test_unfused_schedule_is_still_available():
    x, w = lt.tensor(_rand(8, 4)), lt.tensor(_rand(4, 6))
    prog = lt.debug.program((x @ w).relu())
    assert len(schedule(prog).steps) == 1
    unfused = schedule(prog, fuse_epilogues=False)
    assert len(unfused.steps) == 2 and unfused.steps[0].epilogue is None


def test_relu_backward_reads_the_result_so_the_product_is_not_kept(cpp):
    # relu(x @ w.T + b) trained: the backward tests the ReLU's result (which the next layer
    # reads anyway), not its input, so the product is used up by the forward's epilogue
    x, w, b = _rand(128, 64), _rand(96, 64, seed=1), _rand(96, seed=2)
    x[0, :] = 0.0  # rows whose pre-activation is exactly the bias
    w2 = _rand(10, 96, seed=3)
    b[:4] = 0.0  # ... and exactly zero in four columns: gradient 0 there, as in torch

    def step(lib, *arrays):
        t = [_lib_tensor(lib, a) for a in arrays]
        for p in t[1:]:
            p.requires_grad_(True)
        F = lib.nn.functional
        loss = F.linear(F.relu(F.linear(t[0], t[1], t[2])), t[3]).square().mean()
        loss.backward()
        return loss, [p.grad for p in t[1:]]

    loss, grads = step(lt, x, w, b, w2)
    sched = lt.debug.schedule(loss, *grads)
    first = next(s for s in sched.steps if getattr(s, "kind", "") == "matmul")
    assert first.epilogue is not None and not first.store_output, first.describe()
    want_loss, want = step(torch, x, w, b, w2)
    np.testing.assert_allclose(loss.item(), want_loss.item(), rtol=1e-5)
    for g, t in zip(grads, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("sync", [False, True])
def test_relu_gradient_at_zero_and_nan_is_torchs(cpp, sync):
    x = np.array([-2.0, -0.0, 0.0, 1e-30, 3.0, np.nan, -np.inf, np.inf], np.float32)

    def grad(lib):
        t = _lib_tensor(lib, x).requires_grad_(True)
        (t.relu() * _lib_tensor(lib, np.arange(8, dtype=np.float32) + 1)).sum().backward()
        return t.grad.numpy()

    with lt.sync_mode(sync):
        got = grad(lt)
    np.testing.assert_array_equal(got, grad(torch))


def test_a_program_split_into_units_keeps_each_epilogue_with_its_gemm(cpp, monkeypatch):
    # split_units deals whole step functions to translation units: an epilogue must be
    # part of its step's function, not a function a step in another unit calls
    monkeypatch.setenv("LAZYTORCH_COMPILE_CORES", "4")
    ws = [_rand(32, 32, seed=i) * 0.3 for i in range(40)]

    def net(lib, x, *ws):
        for w in ws:
            x = (x @ w).relu() + 0.01
        return x

    x = _rand(16, 32, seed=99)
    got = net(lt, lt.tensor(x), *[lt.tensor(w) for w in ws])
    src = lt.debug.source(got)
    units = split_units(src, 4)
    assert units is not None and len(units) >= 2
    assert all(u.count("struct Ep {") == u.count("Ep::run(") for u in units)
    want = net(torch, torch.from_numpy(x), *[torch.from_numpy(w) for w in ws])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def _described(sched) -> list[str]:
    return [k.describe() for k in sched.kernels]


def test_a_drawn_bias_is_drawn_once_not_at_every_output(cpp):
    # A bias drawn by randn and never stored (an untrained model's) is broadcast over the
    # rows of its product: inlined into the epilogue it would redo its Philox rounds at
    # each of the 300 x 256 outputs. It is stored once (a kernel of its own 256 values),
    # and the epilogue reads it; the values are the interpreter's, bit for bit.
    lt.manual_seed(3)
    x = lt.tensor(_rand(300, 64))
    w, b = lt.randn(256, 64), lt.randn(256) * 0.1
    lt.materialize(x, w)
    y = lt.nn.functional.gelu(lt.nn.functional.linear(x, w, b))
    sched = lt.debug.schedule(y)
    (drawn,) = [k for k in sched.kernels if "rand" in k.describe()]
    assert list(drawn.outer) == [256], _described(sched)
    (step,) = [s for s in sched.steps if getattr(s, "epilogue", None) is not None]
    assert "rand" not in step.epilogue.fused, _described(sched)
    got = y.numpy()
    with lt.backend("interpreter"):
        lt.manual_seed(3)
        x2 = lt.tensor(_rand(300, 64))
        w2, b2 = lt.randn(256, 64), lt.randn(256) * 0.1
        want = lt.nn.functional.gelu(lt.nn.functional.linear(x2, w2, b2)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_broadcast_mask_stays_inline(cpp):
    # A bool mask broadcast over heads (causal attention's) is index arithmetic: it stays
    # inlined, as a loop selecting on a stored mask vectorizes poorly (no [L, S] kernel).
    q = lt.randn(1, 4, 32, 16)
    lt.materialize(q)
    f = lt.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    sched = lt.debug.schedule(f)
    assert not [k for k in sched.kernels if list(k.outer) == [32, 32]], _described(sched)
