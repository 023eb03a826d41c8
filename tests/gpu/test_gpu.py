"""The cuda device on a real GPU: compiled Triton kernels and device memory against torch.

Runs only where ``lazytorch.cuda.is_available()``; on a machine without a GPU the module is
skipped with the reason lazytorch gives. ``LAZYTORCH_TEST_GPU=1`` turns that skip into a
failure, so a GPU run cannot pass by skipping (the device check in benchmarks/RESULTS-gpu.md
runs ``LAZYTORCH_TEST_GPU=1 pytest tests/gpu/test_gpu.py tests/codegen/test_triton_backend.py``).

Every case draws fresh random inputs (never zeros: an unwritten output must show), runs the
lazytorch expression on ``cuda`` and compares with torch on the CPU in float64 where that
is the better reference. tests/codegen/test_triton_backend.py checks the same kernels against the
reference interpreter; this file checks what a user of the cuda device sees: tensors that
live on the GPU across materializations, training, errors raised from kernels, memory.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import lazytorch as lt

ON_GPU = os.environ.get("LAZYTORCH_TEST_GPU") == "1"
if not lt.cuda.is_available():
    if ON_GPU:
        raise RuntimeError(f"LAZYTORCH_TEST_GPU=1 but no GPU: {lt.cuda.unavailable_reason()}")
    pytest.skip(f"no GPU: {lt.cuda.unavailable_reason()}", allow_module_level=True)

torch = pytest.importorskip("torch")
F = lt.nn.functional
TF = torch.nn.functional


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def on_gpu(*arrays):
    return [lt.tensor(a, device="cuda") for a in arrays]


def close(got, want, rtol=1e-5, atol=1e-5):
    got = got.cpu().numpy() if hasattr(got, "cpu") else np.asarray(got)
    want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (
        got.shape,
        got.dtype,
        want.shape,
        want.dtype,
    )
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        assert not np.isnan(got).any() or np.isnan(want).any(), "NaN where torch has none"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- tensors on the device -----------------------------------------------------------------------
DTYPES = [
    np.float32,
    np.float64,
    np.float16,
    np.int8,
    np.uint8,
    np.int16,
    np.int32,
    np.int64,
    np.bool_,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0, 2), (1000, 37)])
def test_round_trip(dtype, shape):
    a = (np.random.default_rng(1).standard_normal(shape) * 50).astype(dtype)
    x = lt.tensor(a, device="cuda")
    assert x.device == lt.device("cuda", 0)
    back = x.cpu().numpy()
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)


def test_values_stay_on_the_device_between_materializations():
    x = lt.tensor(rand(256, 256), device="cuda")
    y = (x * 2 + 1).relu()
    lt.materialize(y)
    lt.metrics.reset()
    z = (y - 1).sum()
    lt.materialize(z)
    c = lt.metrics.counters()
    # nothing of x or y moves: only the program's Python scalars (the 1) go up, 16 bytes
    assert c.get("cuda_h2d_bytes", 0) <= 16 and c.get("cuda_d2h_copies", 0) == 0, c
    close(
        z, torch.from_numpy(np.maximum(rand(256, 256) * 2 + 1, 0) - 1).sum(), rtol=1e-4, atol=1e-2
    )


# -- op numerics -------------------------------------------------------------------------------------
# (name, lazytorch fn, torch fn, shapes, rtol): each run on fresh random inputs
UNARY_BINARY = [
    ("add_broadcast", lambda a, b: a + b, lambda a, b: a + b, [(64, 1, 33), (7, 33)]),
    (
        "chain",
        lambda a, b: F.gelu(a * 1.5 + b) * a.sigmoid() + 1,
        lambda a, b: TF.gelu(a * 1.5 + b) * a.sigmoid() + 1,
        [(1 << 20,), (1 << 20,)],
    ),
    (
        "div_where",
        lambda a, b: lt.where(a > b, a / (b.abs() + 1), b.exp()),
        lambda a, b: torch.where(a > b, a / (b.abs() + 1), b.exp()),
        [(300, 301), (300, 301)],
    ),
    (
        "transcend",
        lambda a, b: a.tanh() + b.abs().log1p() + (a * 0.1).sin() * b.cos(),
        lambda a, b: a.tanh() + b.abs().log1p() + (a * 0.1).sin() * b.cos(),
        [(4097,), (4097,)],
    ),
    (
        "pow_atan2",
        lambda a, b: a.abs().pow(b * 0.5) + lt.atan2(a, b),
        lambda a, b: a.abs().pow(b * 0.5) + torch.atan2(a, b),
        [(513, 3), (513, 3)],
    ),
    (
        "transposed",
        lambda a, b: a.t() * b + a.t().exp(),
        lambda a, b: a.t() * b + a.t().exp(),
        [(129, 65), (65, 129)],
    ),
    (
        "clamp_min_max",
        lambda a, b: lt.maximum(a.clamp(-0.5, 0.7), b),
        lambda a, b: torch.maximum(a.clamp(-0.5, 0.7), b),
        [(1000,), (1000,)],
    ),
]


@pytest.mark.parametrize("case", UNARY_BINARY, ids=lambda c: c[0])
def test_elementwise(case):
    _, fn, ref, shapes = case
    arrays = [rand(*s, seed=i + 7) for i, s in enumerate(shapes)]
    close(fn(*on_gpu(*arrays)), ref(*[torch.from_numpy(a) for a in arrays]), rtol=1e-5, atol=1e-5)


REDUCTIONS = [
    ("sum_all", lambda a: a.sum(), (3000, 777), 1e-4),
    ("sum_rows", lambda a: a.sum(1), (333, 5000), 1e-4),
    ("sum_cols", lambda a: a.sum(0), (5000, 333), 1e-4),
    ("mean_keep", lambda a: a.mean(-1, keepdim=True), (64, 64, 65), 1e-5),
    ("max_rows", lambda a: a.max(1).values, (1000, 1000), 0),
    ("argmax_rows", lambda a: a.argmax(1), (1000, 4099), 0),
    ("amin_long", lambda a: a.amin(-1), (7, 100_003), 0),
    ("var", lambda a: a.var(1), (100, 1000), 1e-4),
    ("softmax_long", lambda a: a.softmax(-1), (64, 8192), 1e-5),
    ("softmax_short", lambda a: a.softmax(-1), (4099, 64), 1e-5),
    ("log_softmax", lambda a: a.log_softmax(1), (129, 1000), 1e-5),
    ("logsumexp", lambda a: a.logsumexp(0), (1000, 77), 1e-5),
    ("cumsum", lambda a: a.cumsum(1), (64, 1000), 1e-4),
    ("norm", lambda a: a.norm(dim=1), (300, 300), 1e-5),
]


@pytest.mark.parametrize("case", REDUCTIONS, ids=lambda c: c[0])
def test_reductions(case):
    _, fn, shape, rtol = case
    a = rand(*shape, seed=3)
    got = fn(*on_gpu(a))
    want = fn(torch.from_numpy(a))
    if rtol == 0:
        close(got, want)
    else:
        close(got, want, rtol=rtol, atol=rtol * 10)


def test_layer_norm_and_cross_entropy():
    x, w, b = rand(512, 768, seed=1), rand(768, seed=2), rand(768, seed=3)
    gx, gw, gb = on_gpu(x, w, b)
    tx, tw, tb = (torch.from_numpy(v) for v in (x, w, b))
    close(F.layer_norm(gx, (768,), gw, gb), TF.layer_norm(tx, (768,), tw, tb), rtol=1e-4, atol=1e-4)
    logits = rand(300, 1001, seed=4)
    target = np.random.default_rng(5).integers(0, 1001, 300)
    got = F.cross_entropy(lt.tensor(logits, device="cuda"), lt.tensor(target, device="cuda"))
    want = TF.cross_entropy(torch.from_numpy(logits), torch.from_numpy(target))
    close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "shape", [(1, 1, 1), (17, 33, 65), (128, 64, 256), (1000, 300, 257), (2048, 2048, 2048)]
)
def test_matmul_float32(shape):
    m, k, n = shape
    a, b = rand(m, k, seed=1), rand(k, n, seed=2)
    want = torch.from_numpy(a).double() @ torch.from_numpy(b).double()
    got = lt.tensor(a, device="cuda") @ lt.tensor(b, device="cuda")
    # float32 inputs: Triton's dot is exact float32 unless TF32 is asked for
    err = np.abs(got.cpu().numpy() - want.numpy()).max() / max(1.0, np.abs(want.numpy()).max())
    assert err < 1e-5, err


def test_matmul_tf32_float16_and_batched_with_epilogue():
    a, b, bias = rand(512, 384, seed=1), rand(384, 640, seed=2), rand(640, seed=3)
    want = np.maximum(a.astype(np.float64) @ b + bias, 0)
    lt.set_float32_matmul_precision("high")
    try:
        got = (
            lt.tensor(a, device="cuda") @ lt.tensor(b, device="cuda")
            + lt.tensor(bias, device="cuda")
        ).relu()
        rel = np.linalg.norm(got.cpu().numpy() - want) / np.linalg.norm(want)
        assert rel < 3e-3, rel  # TF32: about 3e-4
    finally:
        lt.set_float32_matmul_precision("highest")
    ga, gb, gbias = on_gpu(a.astype(np.float16), b.astype(np.float16), bias.astype(np.float16))
    got = (ga @ gb + gbias).relu()
    assert got.dtype == lt.float16
    rel = np.linalg.norm(got.cpu().numpy().astype(np.float64) - want) / np.linalg.norm(want)
    assert rel < 1e-2, rel
    x, y = rand(6, 65, 31, seed=4), rand(6, 31, 129, seed=5)
    close(
        lt.tensor(x, device="cuda") @ lt.tensor(y, device="cuda"),
        torch.from_numpy(x) @ torch.from_numpy(y),
        rtol=1e-4,
        atol=1e-4,
    )


def test_epilogue_fuses_into_one_kernel_on_the_device():
    x, w, b = on_gpu(rand(256, 128, seed=1), rand(64, 128, seed=2), rand(64, seed=3))
    lt.metrics.reset()
    y = F.relu(F.linear(x, w, b))
    lt.materialize(y)
    c = lt.metrics.counters()
    assert c["kernels_launched"] == 1, c  # the GEMM with relu(+ bias) as its epilogue
    want = TF.relu(
        TF.linear(
            *(
                torch.from_numpy(v)
                for v in (rand(256, 128, seed=1), rand(64, 128, seed=2), rand(64, seed=3))
            )
        )
    )
    close(y, want, rtol=1e-4, atol=1e-4)


INDEXING = [
    ("gather", lambda a, i: a.gather(1, i), (64, 100), (64, 7), 100),
    ("index_select", lambda a, i: a.index_select(0, i[:, 0]), (50, 33), (20, 1), 50),
    ("take_rows", lambda a, i: a[i[:, 0]], (50, 33), (70, 1), 50),
]


@pytest.mark.parametrize("case", INDEXING, ids=lambda c: c[0])
def test_indexing(case):
    _, fn, ashape, ishape, hi = case
    a = rand(*ashape, seed=1)
    i = np.random.default_rng(2).integers(0, hi, ishape)
    close(fn(*on_gpu(a, i)), fn(torch.from_numpy(a), torch.from_numpy(i)))


def test_scatter_add_sort_topk_and_integer_math():
    a = rand(1000, seed=1)
    idx = np.random.default_rng(2).integers(0, 17, 1000)
    got = lt.zeros(17, device="cuda").scatter_add(
        0, lt.tensor(idx, device="cuda"), lt.tensor(a, device="cuda")
    )
    close(
        got,
        torch.zeros(17).scatter_add(0, torch.from_numpy(idx), torch.from_numpy(a)),
        rtol=1e-5,
        atol=1e-5,
    )
    m = rand(33, 257, seed=3)
    close(lt.tensor(m, device="cuda").sort(1).values, torch.from_numpy(m).sort(1).values)
    close(lt.tensor(m, device="cuda").topk(5, 1).values, torch.from_numpy(m).topk(5, 1).values)
    i, j = np.random.default_rng(4).integers(-1000, 1000, (2, 5000))
    j[j == 0] = 7
    gi, gj = on_gpu(i, j)
    ti, tj = torch.from_numpy(i), torch.from_numpy(j)
    close(gi // gj, ti // tj)
    close(gi % gj, ti % tj)
    close((gi * 3 + gj) >> 2, (ti * 3 + tj) >> 2)


def test_integer_division_by_zero_raises_from_the_kernel():
    a = lt.tensor(np.arange(10), device="cuda")
    b = lt.tensor(np.array([1, 2, 0, 4, 5, 6, 7, 8, 9, 10]), device="cuda")
    with pytest.raises(RuntimeError, match=r"division by zero|ZeroDivision"):
        (a // b).cpu()


def test_random_draws_equal_the_cpu_bit_for_bit():
    lt.manual_seed(123)
    cpu = lt.rand(1000, 33).numpy()
    lt.manual_seed(123)
    gpu = lt.rand(1000, 33, device="cuda").cpu().numpy()
    np.testing.assert_array_equal(gpu, cpu)
    lt.manual_seed(7)
    cpu = lt.randn(4097).numpy()
    lt.manual_seed(7)
    gpu = lt.randn(4097, device="cuda").cpu().numpy()
    np.testing.assert_allclose(gpu, cpu, rtol=1e-6, atol=1e-6)


# -- training -------------------------------------------------------------------------------------
def make_mlp(device):
    lt.manual_seed(0)
    model = lt.nn.Sequential(lt.nn.Linear(32, 64), lt.nn.ReLU(), lt.nn.Linear(64, 10))
    return model.to(device)


def train(device, steps=5):
    model = make_mlp(device)
    opt = lt.optim.AdamW(model.parameters(), lr=1e-2)
    x = lt.tensor(rand(128, 32), device=device)
    target = lt.tensor(np.arange(128) % 10, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], model


def test_mlp_adamw_training_matches_the_cpu():
    want_losses, want_params, _ = train("cpu")
    got_losses, got_params, model = train("cuda")
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-4)
    for w, g in zip(want_params, got_params):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)
    for p in model.parameters():
        assert p.device == lt.device("cuda", 0) and p.grad.device == lt.device("cuda", 0)


def test_gpt_forward_backward_matches_the_cpu():
    from benchmarks.models import gpt

    grads, losses = {}, {}
    idx = np.random.default_rng(0).integers(0, 65, (4, 64))
    tgt = np.random.default_rng(1).integers(0, 65, (4, 64))
    for device in ("cpu", "cuda"):
        lt.manual_seed(0)
        model = gpt(lt).to(device)
        _, loss = model(lt.tensor(idx, device=device), lt.tensor(tgt, device=device))
        loss.backward()
        losses[device] = loss.item()
        grads[device] = [p.grad.cpu().numpy() for p in model.parameters()]
    assert abs(losses["cuda"] - losses["cpu"]) < 1e-4 * abs(losses["cpu"]), losses
    for w, g in zip(grads["cpu"], grads["cuda"]):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4)


def test_steady_training_reuses_device_memory():
    model = make_mlp("cuda")
    opt = lt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = lt.tensor(rand(128, 32), device="cuda")
    target = lt.tensor(np.arange(128) % 10, device="cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(3):
        step()
    held = lt.cuda.memory_allocated()
    for _ in range(3):
        step()
        assert lt.cuda.memory_allocated() == held


def test_memory_returns_when_tensors_die():
    # the first run's executable keeps its scalar slots (the 2) on the device: warm it first
    lt.materialize(lt.ones(1 << 20, device="cuda") * 2)
    gc.collect()
    base = lt.cuda.memory_allocated()
    x = lt.ones(1 << 20, device="cuda") * 2
    lt.materialize(x)
    assert lt.cuda.memory_allocated() >= base + 4 * (1 << 20)
    del x
    gc.collect()
    assert lt.cuda.memory_allocated() == base
    lt.cuda.empty_cache()
    lt.cuda.synchronize()


def test_what_triton_does_not_lower_still_runs():
    v = np.random.default_rng(0).integers(-(1 << 40), 1 << 40, (8, 300))
    got = lt.tensor(v, device="cuda").argsort(1)
    np.testing.assert_array_equal(np.take_along_axis(v, got.cpu().numpy(), 1), np.sort(v, 1))


def test_repeated_runs_launch_compiled_kernels_directly_with_fresh_values():
    """From a program's second run its kernels skip Triton's JIT dispatch
    (`triton_backend.Launch`); each run must still read its own inputs and write its own
    outputs (a stale argument would repeat the first run's values)."""
    lt.metrics.reset()
    for seed in range(6):
        a, b = rand(300, 70, seed=seed), rand(70, seed=seed + 50)
        x, y = on_gpu(a, b)
        got = (F.gelu(x * y + 1.0) - x.sum(1, keepdim=True)).softmax(-1)
        want = (
            (TF.gelu(torch.from_numpy(a) * torch.from_numpy(b) + 1.0))
            .sub(torch.from_numpy(a).sum(1, keepdim=True))
            .softmax(-1)
        )
        close(got, want, rtol=1e-4, atol=1e-5)
    c = lt.metrics.counters()
    assert c["compiles"] == 1 and c["triton_direct_launches"] >= 5 * c["kernels_launched"] // 6


def _gpt_steps(compiled):
    """Six AdamW steps of a GPT-small-shaped model on the device (compiled as a whole or
    not), the learning rate halving from the fourth: losses, parameters, the callable.

    Under deterministic algorithms: the embedding's backward is a scatter-add, which the
    Triton backend lowers to atomic adds whose float sums land in the order the lanes run,
    so two runs of the same uncompiled step differ in the last bits on a real GPU (seen on
    an H200: 4.8e-07 in the second loss). Deterministic mode serializes it."""
    from benchmarks.models import gpt

    with lt.deterministic_algorithms():
        return _gpt_run(gpt, compiled)


def _gpt_run(gpt, compiled):
    lt.manual_seed(0)
    model = gpt(lt).to("cuda")
    opt = lt.optim.AdamW(model.parameters(), lr=1e-3)
    x = lt.tensor(np.random.default_rng(0).integers(0, 65, (4, 64)), device="cuda")
    y = lt.tensor(np.random.default_rng(1).integers(0, 65, (4, 64)), device="cuda")

    def step():
        with lt.device("cuda"):
            loss = model(x, y)[1]
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    run = lt.compile(step) if compiled else step
    losses = []
    for i in range(6):
        opt.param_groups[0]["lr"] = 1e-3 * 0.5 ** max(0, i - 2)
        losses.append(run().detach().cpu().numpy())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], run


def test_a_compiled_training_step_replays_on_the_device_bit_for_bit():
    """Whole-step capture on the device: the compiled step replays its Triton programs
    from the fourth call, the learning rate changing after the recorded calls, with the
    same bits as the uncompiled step."""
    want_losses, want_params, _ = _gpt_steps(False)
    got_losses, got_params, run = _gpt_steps(True)
    assert run.stats["hits"] == 3, run.explain()
    np.testing.assert_array_equal(np.array(got_losses), np.array(want_losses))
    for g, w in zip(got_params, want_params):
        np.testing.assert_array_equal(g, w)
