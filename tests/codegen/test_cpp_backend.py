"""The cpp backend as a user sees it: fusion (kernel counts), cache, determinism, choice.

Numerics of every op on this backend are covered by the op matrix (tests/helpers.check runs
each case on every backend); this file pins down what the matrix cannot see: how many
kernels a program becomes, what the compile cache does across processes and under damage,
bitwise determinism, and how the backend is chosen or refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.runtime import backends

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    """The cpp backend with a private, empty disk cache."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        yield tmp_path / "cache"


def kernels(*tensors):
    s = lt.debug.schedule(*tensors)
    return len(s.kernels), [e.kind for e in s.steps if not hasattr(e, "npasses")]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- golden kernel counts: an un-fusing change fails here -------------------------------------


def test_elementwise_chain_is_one_kernel(cpp):
    x, a, b = (lt.from_numpy(rand(1000, seed=i)) for i in range(3))
    y = lt.nn.functional.gelu(x * a + b) * lt.sigmoid(x) + 1
    assert kernels(y) == (1, [])
    tx, ta, tb = (torch.from_numpy(rand(1000, seed=i)) for i in range(3))
    want = torch.nn.functional.gelu(tx * ta + tb) * torch.sigmoid(tx) + 1
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert lt.metrics.counters()["kernels_launched"] == 1


def test_softmax_is_one_kernel(cpp):
    x = lt.from_numpy(rand(64, 100))
    y = lt.softmax(x, dim=1)
    n, ext = kernels(y)
    assert n <= 2 and not ext
    k = lt.debug.schedule(y).kernels[0]
    assert {"reduce_max", "exp", "reduce_sum", "div"} <= set(k.fused)
    want = torch.softmax(torch.from_numpy(rand(64, 100)), 1).numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-7)


def test_softmax_computes_exp_once_per_element(cpp):
    # the sum's pass keeps exp(x - max) in a row buffer and the division's pass reads it
    x = lt.from_numpy(rand(64, 100))
    src = lt.debug.source(lt.softmax(x, dim=1))
    body = src[src.index("pass 2") :]
    assert "kept for later passes" in src
    assert "lt::exp(" in body[: body.index("pass 3")]
    assert "lt::exp(" not in body[body.index("pass 3") :]


@pytest.mark.parametrize(
    "shape,dims",
    [((7, 100), (1,)), ((5, 33), (1,)), ((3, 1), (1,)), ((4, 5, 6), (1, 2)),
     ((2, 3, 40000), (2,)), ((3, 4096), (1,))],
)  # fmt: skip
def test_row_buffers_and_prefetch_keep_values(cpp, shape, dims):
    # logsumexp-style kernels over one or two inner dims, rows under and over the row
    # buffer's size limit, rows with and without next-row prefetch: equal to torch, and
    # bitwise equal to the same ops run one at a time
    x = lt.from_numpy(rand(*shape, seed=3))
    t = torch.from_numpy(rand(*shape, seed=3))

    def f(m, v):
        e = m.exp(v - v.amax(dim=dims, keepdim=True))
        return e / e.sum(dim=dims, keepdim=True) + m.log(e.sum(dim=dims, keepdim=True))

    got = f(lt, x).numpy()
    np.testing.assert_allclose(got, f(torch, t).numpy(), rtol=2e-6, atol=2e-6)
    with lt.sync_mode():
        np.testing.assert_array_equal(f(lt, x).numpy(), got)


def test_long_rows_prefetch_the_next_row(cpp):
    wide = lt.debug.source(lt.softmax(lt.from_numpy(rand(8, 4096)), dim=1))
    narrow = lt.debug.source(lt.softmax(lt.from_numpy(rand(8, 1024)), dim=1))
    assert "__builtin_prefetch" in wide and "__builtin_prefetch" not in narrow


def test_layer_norm_at_most_two_kernels(cpp):
    x, w, b = (
        lt.from_numpy(rand(32, 256)),
        lt.from_numpy(rand(256, seed=1)),
        lt.from_numpy(rand(256, seed=2)),
    )
    y = lt.nn.functional.layer_norm(x, (256,), w, b)
    n, ext = kernels(y)
    assert n <= 2 and not ext
    want = torch.nn.functional.layer_norm(
        torch.from_numpy(rand(32, 256)), (256,), torch.from_numpy(rand(256, seed=1)),
        torch.from_numpy(rand(256, seed=2)),
    )  # fmt: skip
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_linear_relu_is_one_gemm_with_its_epilogue(cpp):
    x, w, b = (
        lt.from_numpy(rand(64, 32)),
        lt.from_numpy(rand(32, 48, seed=1)),
        lt.from_numpy(rand(48, seed=2)),
    )
    y = lt.relu(x @ w + b)
    assert kernels(y) == (0, ["matmul"])
    (mm,) = lt.debug.schedule(y).steps
    assert mm.epilogue.fused == ["add", "maximum"] and not mm.store_output
    want = torch.relu(
        torch.from_numpy(rand(64, 32)) @ torch.from_numpy(rand(32, 48, seed=1))
        + torch.from_numpy(rand(48, seed=2))
    )
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_16_bit_linear_with_bias_is_one_gemm_with_its_epilogue(cpp, dtype):
    # The product stays float32 (the bias is added before the one rounding, as torch's
    # addmm): the GEMM's epilogue adds the bias, casts and applies relu on each block.
    d = getattr(lt, dtype)
    x, w, b = (
        lt.from_numpy(rand(*s, seed=i)).to(d) for i, s in enumerate([(64, 32), (48, 32), (48,)])
    )
    lt.materialize(x, w, b)  # (the casts are a program of their own)
    y = lt.relu(lt.nn.functional.linear(x, w, b))
    assert kernels(y) == (0, ["matmul"])
    s = lt.debug.schedule(y)
    (mm,) = [e for e in s.steps if getattr(e, "kind", None) == "matmul"]
    assert s.buffers[mm.output].dtype is lt.float32  # the unrounded product
    assert mm.epilogue is not None and not mm.store_output  # ... never stored
    tx, tw, tb = (
        torch.from_numpy(rand(*s, seed=i)).to(getattr(torch, dtype))
        for i, s in enumerate([(64, 32), (48, 32), (48,)])
    )
    want = torch.relu(torch.nn.functional.linear(tx, tw, tb)).float().numpy()
    assert (y.float().numpy() == want).mean() > 0.997


def test_views_fold_into_index_arithmetic(cpp):
    x = lt.from_numpy(rand(8, 16))
    y = (x.t().reshape(16, 8)[2:, ::2].expand(3, 14, 4) * 2).sum(0)
    assert kernels(y) == (1, [])
    tx = torch.from_numpy(rand(8, 16))
    want = (tx.t().reshape(16, 8)[2:, ::2].expand(3, 14, 4) * 2).sum(0)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)


def test_sibling_reductions_share_a_kernel(cpp):
    x = lt.from_numpy(rand(16, 300))
    m, v = x.mean(1), x.var(1)
    n, _ = kernels(m, v)
    assert n == 1


@pytest.mark.parametrize("axis", [0, 1])
def test_long_cat_is_one_kernel_per_piece(cpp, axis):
    # Past CAT_SELECT_MAX inputs a cat is not a chain of selects in one kernel but one small
    # kernel per non-empty input, each storing into its slice of the output.
    shapes = [(3, i % 4) if axis == 1 else (i % 4, 3) for i in range(12)]
    arrays = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    y = lt.cat([lt.from_numpy(a) + 1 for a in arrays], dim=axis)
    n, ext = kernels(y)
    assert (n, ext) == (sum(1 for s in shapes if 0 not in s), [])
    want = torch.cat([torch.from_numpy(a) + 1 for a in arrays], dim=axis)
    np.testing.assert_array_equal(y.numpy(), want.numpy())


def test_identical_steps_compile_to_one_function(cpp):
    # A Python loop of small ops gives many steps that differ only in buffer offsets and
    # scalar slots; each distinct body is compiled once (2000 randperm(4) took minutes).
    lt.manual_seed(3)
    perms = lt.stack([lt.randperm(4) for _ in range(40)])
    src = lt.debug.source(perms)
    # 40 sorts, one body; the stack stores its pieces from 3 kernels (runs of CAT_RUN_MAX),
    # two of them alike
    assert src.count("same code as") >= 39 + 1
    assert src.count("__attribute__((noinline)) void") <= 5
    got = perms.numpy()
    lt.manual_seed(3)
    with lt.backend("interpreter"):
        want = lt.stack([lt.randperm(4) for _ in range(40)]).numpy()
    np.testing.assert_array_equal(got, want)


def test_slices_of_one_buffer_share_code_and_stay_correct(cpp):
    # Offsets move from the index into the pointer the entry passes: kernels over
    # successive slices (here the pieces of a cat of slices, of two shapes in turn, so each
    # is its own kernel) are one function per shape, called with shifted pointers.
    x = rand(18, 8)
    t = lt.from_numpy(x)
    rows = [(3 * i, 3 * i + 2) for i in range(6)] + [(3 * i + 2, 3 * i + 3) for i in range(6)]
    rows = [r for pair in zip(rows[:6], rows[6:]) for r in pair]
    y = lt.cat([lt.exp(t[a:b, 1:]) for a, b in rows], dim=0)
    src = lt.debug.source(y)
    assert src.count("same code as") == 10
    assert "b0 + 17" in src  # piece 1 starts at row 2, column 1 of the source
    ty = torch.from_numpy(x)
    want = torch.cat([torch.exp(ty[a:b, 1:]) for a, b in rows], dim=0)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_a_cat_of_pieces_of_one_shape_is_one_kernel(cpp, axis):
    # A convolution's taps: one pass over the pieces' shape storing each at its offset,
    # not one kernel (and one parallel region) per piece; runs of CAT_RUN_MAX at most.
    from lazytorch.scheduler.schedule import CAT_RUN_MAX

    x = rand(4, 6, 10)
    t = lt.from_numpy(x)
    ty = torch.from_numpy(x)
    sl = [slice(None)] * 3
    pieces, want = [], []
    for i in range(CAT_RUN_MAX + 3):  # two runs: CAT_RUN_MAX pieces, then 3
        sl[2] = slice(i % 3, i % 3 + 7)
        pieces.append(lt.tanh(t[tuple(sl)] * (i + 1)))
        want.append(torch.tanh(ty[tuple(sl)] * (i + 1)))
    if axis != 2:
        pieces = [p.transpose(axis, 2) for p in pieces]
        want = [w.transpose(axis, 2) for w in want]
    y = lt.cat(pieces, dim=axis)
    n, ext = kernels(y)
    assert (n, ext) == (2, [])
    np.testing.assert_allclose(y.numpy(), torch.cat(want, dim=axis).numpy(), rtol=1e-6)


def test_a_kernel_computes_at_most_max_group_anchors_values(cpp):
    from lazytorch.scheduler.schedule import MAX_GROUP_ANCHORS

    x = lt.from_numpy(rand(16))
    outs = [x * i for i in range(2 * MAX_GROUP_ANCHORS + 5)]
    s = lt.debug.schedule(*outs)
    assert len(s.kernels) == 3
    assert all(len(k.stores) <= MAX_GROUP_ANCHORS for k in s.kernels)
    lt.materialize(*outs)
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.numpy(), rand(16) * np.float32(i))


def test_schedule_prints_memory_plan(cpp):
    x = lt.from_numpy(rand(64, 64))
    y = (x @ x).relu() @ x
    text = str(lt.debug.schedule(y))
    assert "memory: planned peak" in text and "naive" in text


def test_generated_source_names_ops_and_lines(cpp):
    x = lt.from_numpy(rand(10))
    y = lt.exp(x) + 1  # the marker line
    src = lt.debug.source(y)
    assert "fused[exp, add]" in src
    assert f"test_cpp_backend.py:{sys._getframe().f_lineno - 3}" in src


def test_fusion_log_says_why(cpp, caplog):
    x = lt.from_numpy(rand(8, 8))
    y = x.sum(0) + x.sum(1)  # different reduction axes cannot share an iteration space
    with caplog.at_level("DEBUG", logger="lazytorch.fusion"):
        y.numpy()
    assert any("not fused" in r.getMessage() for r in caplog.records)


def test_lazytorch_log_env_routes_fusion_to_stderr(tmp_path):
    code = "import lazytorch as lt\nx = lt.ones(8, 8)\n(x.sum(0) + x.sum(1)).numpy()\n"
    env = {**os.environ, "LAZYTORCH_LOG": "fusion,compile", "LAZYTORCH_CACHE_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "[lazytorch.fusion] not fused" in r.stderr
    assert "[lazytorch.compile] compiled" in r.stderr


# -- errors -------------------------------------------------------------------------------------


def test_missing_lowering_names_op_and_backend(cpp, monkeypatch):
    from lazytorch.codegen import cpp_ops

    monkeypatch.delitem(cpp_ops.LOWERINGS, "erf")
    x = lt.from_numpy(rand(4))
    with pytest.raises(
        NotImplementedError, match="cpp backend: no lowering rule for primitive 'erf'"
    ):
        lt.erf(x).numpy()


def test_index_error_from_compiled_code_names_op_and_line(cpp):
    x = lt.from_numpy(rand(5))
    i = lt.tensor([0, 7])
    y = x[i]  # the recording line
    line = sys._getframe().f_lineno - 1
    with pytest.raises(IndexError, match="out of bounds") as e:
        y.numpy()
    assert f"test_cpp_backend.py:{line}" in str(e.value)


@pytest.mark.parametrize(
    "src",
    [
        lambda: lt.tensor(1.5),  # 0-d: the read does not depend on the index at all
        lambda: lt.from_numpy(rand(3)).reshape(3, 1).expand(3, 4),  # stride 0 along dim 1
    ],
    ids=["0d", "expanded"],
)
def test_gather_checks_indices_even_when_the_read_ignores_them(cpp, src):
    x = src()
    index = lt.tensor([[5]]) if x.ndim else lt.tensor([1])
    y = lt.gather(x, x.ndim - 1 if x.ndim else 0, index)
    with pytest.raises(IndexError, match="out of bounds"):
        y.numpy()


# -- cache ---------------------------------------------------------------------------------------


def test_memory_cache_hit(cpp):
    x = lt.from_numpy(rand(100))
    (x * 2 + 1).numpy()
    (x * 2 + 1).numpy()
    assert lt.metrics.counters()["compiles"] == 1
    assert lt.metrics.counters()["cache_hits_memory"] == 1


def test_disk_cache_hit_after_memory_cache_cleared(cpp):
    x = lt.from_numpy(rand(100))
    (x * 3 - 1).numpy()
    lt.runtime.clear_cache()
    (x * 3 - 1).numpy()
    assert lt.metrics.counters()["compiles"] == 1
    assert lt.metrics.counters()["cache_hits_disk"] == 1
    assert lt.metrics.counters()["cache_misses"] == 1


_CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import lazytorch as lt
    x = lt.from_numpy(np.arange(1000, dtype=np.float32))
    y = (lt.tanh(x / 1000) * 3 + x.sum()).numpy()
    print(json.dumps({"compiles": lt.metrics.counters()["compiles"],
                      "disk": lt.metrics.counters()["cache_hits_disk"],
                      "check": float(y[:10].sum())}))
    """
)


def _child(cache: Path, backend: str = "cpp") -> subprocess.Popen:
    env = {**os.environ, "LAZYTORCH_CACHE_DIR": str(cache), "LAZYTORCH_BACKEND": backend}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_disk_cache_hit_in_a_new_process(tmp_path):
    first = _result(_child(tmp_path))
    second = _result(_child(tmp_path))
    assert (first["compiles"], first["disk"]) == (1, 0)
    assert (second["compiles"], second["disk"]) == (0, 1)
    assert first["check"] == second["check"]


def test_concurrent_writers_compile_once(tmp_path):
    procs = [_child(tmp_path) for _ in range(3)]
    results = [_result(p) for p in procs]
    assert sum(r["compiles"] for r in results) == 1  # the per-key lock serializes them
    assert sum(r["disk"] for r in results) == 2
    assert len({r["check"] for r in results}) == 1
    from lazytorch.runtime.disk_cache import DiskCache

    assert len(DiskCache(tmp_path).entries()) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete_meta"])
def test_corrupt_entry_recompiles_with_warning(cpp, damage):
    x = lt.from_numpy(rand(50))
    want = (x * 5).numpy()
    from lazytorch.runtime.disk_cache import DiskCache

    (entry,) = DiskCache(cpp).entries()
    so = entry.file("program.so")
    lt.runtime.clear_cache()  # unload it first: this process has the file mapped
    data = bytearray(so.read_bytes())
    so.unlink()  # damage a new inode, as a later process would find it
    if damage == "truncate":
        so.write_bytes(bytes(data[:100]))
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
        so.write_bytes(bytes(data))
    else:
        so.write_bytes(bytes(data))
        (entry.path / "meta.json").unlink()
    lt.metrics.reset()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = (x * 5).numpy()
    np.testing.assert_array_equal(got, want)
    assert lt.metrics.counters()["compiles"] == 1
    if damage != "delete_meta":  # an entry without metadata is simply absent
        assert any("invalid" in str(m.message) and "recompiled" in str(m.message) for m in w)


def test_world_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "shared"
    bad.mkdir()
    bad.chmod(0o777)
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(bad))
    from lazytorch.runtime.disk_cache import CacheDirError

    with lt.backend("cpp"), pytest.raises(CacheDirError, match="writable"):
        (lt.from_numpy(rand(4)) + 1).numpy()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the directory away")
def test_cache_dir_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "theirs"
    bad.mkdir(mode=0o700)
    os.chown(bad, 12345, 12345)
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(bad))
    from lazytorch.runtime.disk_cache import CacheDirError

    with lt.backend("cpp"), pytest.raises(CacheDirError, match="owned by"):
        (lt.from_numpy(rand(4)) + 1).numpy()


def test_disk_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("LAZYTORCH_DISK_CACHE", "0")
    with lt.backend("cpp"):
        (lt.from_numpy(rand(4)) + 1).numpy()
    assert not (tmp_path / "c").exists()
    assert lt.metrics.counters()["compiles"] == 1


# -- determinism ---------------------------------------------------------------------------------

_DET = textwrap.dedent(
    """
    import hashlib, sys
    import numpy as np
    import lazytorch as lt
    lt.use_deterministic_algorithms(True)
    rng = np.random.default_rng(0)
    x = lt.from_numpy(rng.standard_normal(3_000_000).astype(np.float32))
    m = lt.from_numpy(rng.standard_normal((512, 2048)).astype(np.float32))
    idx = lt.from_numpy(rng.integers(0, 64, 200_000))
    src = lt.from_numpy(rng.standard_normal(200_000).astype(np.float32))
    w = lt.from_numpy(rng.standard_normal((2048, 256)).astype(np.float32))
    bt = lt.from_numpy(rng.standard_normal((4, 256, 300)).astype(np.float32))
    outs = [x.sum(), (x * x).mean(), m.sum(0), m.sum(1), lt.zeros(64).scatter_add(0, idx, src),
            m @ w, m[:32] @ w, (m @ w).reshape(4, 128, 256) @ bt]  # fmt: skip
    lt.materialize(*outs)
    print(hashlib.sha256(b"".join(o.numpy().tobytes() for o in outs)).hexdigest())
    """
)


def _det_run(cache: Path, threads: int) -> str:
    env = {**os.environ, "LAZYTORCH_CACHE_DIR": str(cache), "LAZYTORCH_BACKEND": "cpp",
           "OMP_NUM_THREADS": str(threads)}  # fmt: skip
    r = subprocess.run([sys.executable, "-c", _DET], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_deterministic_mode_is_bitwise_across_runs_and_thread_counts(tmp_path):
    digests = {_det_run(tmp_path, t) for t in (1, 2, 3, 2)}
    assert len(digests) == 1


def test_determinism_is_part_of_the_cache_key(cpp):
    x = lt.from_numpy(rand(1000))
    x.sum().numpy()
    with lt.deterministic_algorithms(True):
        x.sum().numpy()
    assert lt.metrics.counters()["compiles"] == 2
    src_fast = lt.debug.source(
        lt.zeros(8).scatter_add(0, lt.tensor([1] * 40_000), lt.ones(40_000)), deterministic=False
    )
    src_det = lt.debug.source(
        lt.zeros(8).scatter_add(0, lt.tensor([1] * 40_000), lt.ones(40_000)), deterministic=True
    )
    assert "atomic" in src_fast and "atomic" not in src_det


# -- choosing the backend ------------------------------------------------------------------------


def test_default_backend_is_cpp_when_a_compiler_exists():
    assert lt.get_backend() in ("auto", "cpp")
    assert backends.resolve("auto") == "cpp"


def test_backend_switch_and_env(tmp_path):
    with lt.backend("interpreter"):
        (lt.ones(3) + 1).numpy()
    assert lt.metrics.counters()["compiles"] == 0
    with pytest.raises(ValueError, match=r"unknown backend 'cpu'.*did you mean 'cpp'"):
        lt.set_backend("cpu")
    env = {**os.environ, "LAZYTORCH_BACKEND": "interprter"}
    r = subprocess.run(
        [sys.executable, "-c", "import lazytorch"], env=env, capture_output=True, text=True
    )
    assert r.returncode != 0 and "LAZYTORCH_BACKEND must be" in r.stderr


def test_no_compiler_warns_once_and_falls_back(tmp_path):
    code = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("always")
        import lazytorch as lt
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = (lt.ones(3) + 1).numpy()
            b = (lt.ones(4) * 2).numpy()
        print(len([m for m in w if "compiled execution is unavailable" in str(m.message)]))
        print(a.sum(), b.sum(), lt.metrics.counters()["compiles"])
        """
    )
    env = {
        **os.environ,
        "LAZYTORCH_CXX": str(tmp_path / "no-such-g++"),
        "LAZYTORCH_CACHE_DIR": str(tmp_path),
    }
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "1"
    assert lines[1] == "6.0 8.0 0"


def test_import_does_not_load_the_compiler():
    code = (
        "import sys, lazytorch\n"
        "print(sorted(m for m in sys.modules if m.startswith(('lazytorch.codegen', "
        "'lazytorch.scheduler', 'lazytorch.runtime.cpp_backend'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_compiled_outputs_are_numpy_arrays_without_copy(cpp):
    y = lt.from_numpy(rand(1000)) * 2
    a = y.numpy()
    assert a.flags.c_contiguous
    assert np.shares_memory(y.numpy(), a)  # the compiled output buffer itself, no copy


def test_sync_mode_matches_lazy_bitwise_on_cpp(cpp):
    x = lt.from_numpy(rand(64, 33))
    lazy = (lt.softmax(x * 1.5, 1) + lt.tanh(x)).numpy()
    with lt.sync_mode():
        sync = (lt.softmax(x * 1.5, 1) + lt.tanh(x)).numpy()
    np.testing.assert_array_equal(lazy, sync)


@pytest.mark.parametrize("n", [6, 7, 1003])
def test_double_float_double_round_trip_rounds_every_element(n):
    # g++ 12's SLP vectorizer skipped the float rounding in loop epilogues (the last few
    # elements came back unrounded); codegen turns SLP off for programs that narrow float64.
    x = np.random.default_rng(n).uniform(-2, 2, size=n)
    with lt.backend("cpp"):
        got = (lt.tensor(x).float().double() * 1.0).numpy()
    np.testing.assert_array_equal(got, x.astype(np.float32).astype(np.float64))


def test_big_programs_compile_as_parallel_units():
    from lazytorch.codegen import compiler

    x = np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32)

    def f(t):
        h = t.tensor(x)
        # 30 reductions over different widths: 30 distinct kernel functions
        return sum(h[:, : i + 2].exp().sum(1) * (i + 1) for i in range(30))

    src = lt.debug.source(f(lt))
    units = compiler.split_units(src, cores=2)
    assert units is not None and len(units) == 2
    assert compiler.split_units(src, cores=1) is None
    assert "lt_entry" in units[1] and "lt_entry" not in units[0]
    with lt.backend("cpp"):
        got = f(lt).numpy()
    np.testing.assert_allclose(got, f(torch).numpy(), rtol=1e-4, atol=1e-4)


def test_programs_compile_as_one_unit_per_core_dealt_by_cost(monkeypatch, tmp_path):
    """On more cores a big program compiles as more units (one per STEPS_PER_UNIT step
    functions, at most one per core): every function is defined in exactly one unit, the
    entry point in the last, the units' estimated costs differ by at most one function's,
    and the linked program computes what torch does."""
    import re

    from lazytorch.codegen import compiler

    x = np.random.default_rng(1).normal(size=(8, 64)).astype(np.float32)

    def f(t):
        h = t.tensor(x)
        return sum(h[:, : i + 2].exp().sum(1) * (i + 1) for i in range(50))

    src = lt.debug.source(f(lt))
    steps = src.count(compiler.STEP_PREFIX)
    assert steps >= 4 * compiler.STEPS_PER_UNIT
    units = compiler.split_units(src, cores=4)
    assert units is not None and len(units) == compiler.unit_count(steps, 4) == 4
    defined = re.compile(r"^[^/ ].* void (k\w+)\(.*\{$", re.M)
    assert sorted(n for u in units for n in defined.findall(u)) == sorted(defined.findall(src))
    assert ["lt_entry" in u for u in units] == [False, False, False, True]
    # Blank lines separate the functions; the entry point counts as an empty function.
    functions = [[f for f in u.split("\n\n") if defined.search(f)] for u in units]
    costs = [[compiler._compile_cost(f.split("\n")) for f in fs] for fs in functions]
    loads = [sum(c) for c in costs[:-1]] + [sum(costs[-1]) + compiler._compile_cost([])]
    assert max(loads) - min(loads) <= max(max(c) for c in costs)
    assert compiler.split_units(src, cores=1) is None

    seen = []
    run = compiler._run_compiler
    monkeypatch.setattr(compiler, "_run_compiler", lambda *a: seen.append(a[4]) or run(*a))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))  # compiled here, not loaded
    with lt.backend("cpp"):
        got = f(lt).numpy()
    assert [len(u) for u in seen] == [4]
    np.testing.assert_allclose(got, f(torch).numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
@pytest.mark.parametrize(
    ("shape", "dims"), [((300, 37), 0), ((3, 700, 21), 1), ((40, 9, 18), (0, 1))]
)
def test_column_reductions_vectorize_across_outputs(dtype, shape, dims):
    """Reducing over a strided axis (a bias gradient's row sum) runs lanes across adjacent
    outputs (`_blk` loops) and equals torch, tails and blocked sums included."""
    rng = np.random.default_rng(0)
    x = (rng.normal(size=shape) * 4).astype(dtype)
    with lt.backend("cpp"):
        t = lt.tensor(x)
        assert "_blk" in lt.debug.source(t.sum(dims))
        for op in ("sum", "amax", "amin"):
            got = getattr(t, op)(dims).numpy()
            want = getattr(torch.tensor(x), op)(dims).numpy()
            tol = 2e-2 if dtype == "float16" else 1e-5
            np.testing.assert_allclose(
                got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol
            )
    # a row reduction keeps the row layout
    assert "_blk" not in lt.debug.source(lt.tensor(x).sum(len(shape) - 1))


@pytest.mark.parametrize(
    ("shape", "dims", "bound"),
    [
        ((1 << 20,), None, 2e-6),  # one row, split across threads
        ((64, 16384), 1, 2e-6),  # long rows
        ((8192, 2, 64), (0, 2), 1e-5),  # short rows: blocks counted across rows
        ((1 << 16, 7), None, 2e-6),  # rows shorter than the lanes: the scalar tail
    ],
)
def test_float32_sums_add_in_blocks(cpp, shape, dims, bound):
    """A float32 sum adds each lane's terms in blocks (codegen.cpp.ROW_BLOCK), so its
    rounding error grows with the block count, not with n / LANES. Summing 2**20 copies of
    float32(0.1), one accumulator per lane was 1.6e-5 off for one row and 2.6e-4 for short
    rows (torch's cascade sum: 1.5e-7 and 6.5e-5)."""
    x = np.full(shape, 0.1, np.float32)
    exact = x.astype(np.float64).sum(axis=dims)
    got = lt.tensor(x).sum(dims) if dims is not None else lt.tensor(x).sum()
    err = np.max(np.abs(got.numpy() - exact) / np.abs(exact))
    assert err < bound, err


def test_float16_kernels_assemble_on_cpus_with_avx512_fp16(monkeypatch):
    """g++ 12 emits masked vmovsh for float16 code under -march=native on CPUs with
    AVX512-FP16, which binutils 2.40 cannot assemble; the toolchain turns it off there."""
    from lazytorch.codegen import compiler

    if "avx512_fp16" in compiler.cpu_features().split():
        assert "-mno-avx512fp16" in compiler.toolchain().flags
    monkeypatch.setenv("LAZYTORCH_BACKEND", "cpp")
    x = lt.tensor(np.array([-1, 0, 1], np.float16), requires_grad=True)
    lo = lt.tensor(np.array([0, 0, 0], np.float16), requires_grad=True)
    loss = (lt.clamp(x, min=lo).double() * lt.tensor([1.0, 2, 3])).sum()
    gx, glo = lt.autograd.grad(loss, [x, lo])
    assert gx.tolist() == [0.0, 2.0, 3.0] and glo.tolist() == [1.0, 0.0, 0.0]


_WIDTH_PROGRAM = """
import hashlib, sys
import numpy as np
import lazytorch as lt
rng = np.random.default_rng(7)
x = lt.tensor(rng.normal(size=(67, 301)).astype(np.float32))
w = lt.tensor(rng.normal(size=(301,)).astype(np.float32))
with lt.backend("cpp"):
    outs = [
        (x * w).exp().sum(1), x.erf().mean(0), x.softmax(1), x.sigmoid() * x.tanh(),
        (x.bfloat16() * w.bfloat16()).float().sum(0), x.var(1), x.log_softmax(0),
    ]
    lt.materialize(*outs)
h = hashlib.sha256()
for o in outs:
    h.update(o.numpy().tobytes())
print(h.hexdigest())
"""


def test_vector_width_changes_no_result(tmp_path):
    """Kernels compiled for 512-bit vectors (the default on AVX-512 CPUs) give the same bits
    as for 256-bit ones: explicit lanes fix every summation order, and nothing contracts."""
    import subprocess
    import sys

    from lazytorch.codegen import compiler

    wide = "avx512f" in compiler.cpu_features().split()
    assert ("-mprefer-vector-width=512" in compiler.toolchain().flags) == wide
    digests = []
    for flags in ("-mprefer-vector-width=256", "-mprefer-vector-width=512"):
        env = {**os.environ, "LAZYTORCH_CXXFLAGS": flags}
        env["LAZYTORCH_CACHE_DIR"] = str(tmp_path / flags[-3:])
        run = subprocess.run(
            [sys.executable, "-c", _WIDTH_PROGRAM], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        digests.append(run.stdout.strip())
    assert digests[0] == digests[1]


def test_a_stored_mask_is_read_as_bytes():
    # g++ vectorizes a select on a mask read as bytes and compared, but not one on a
    # mask read as bool (a `where` over a stored mask ran ~4x slower); the values are
    # the same either way, a NaN and an infinity selected included.
    rng = np.random.default_rng(2)
    m = rng.standard_normal((64, 48)) > 0
    x = rng.standard_normal((64, 48)).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    M, X = lt.tensor(m), lt.tensor(x)
    lt.materialize(M, X)
    y = lt.where(M, -float("inf"), X).exp().sum(1)
    src = lt.debug.source(y)
    assert "((const uint8_t*)b" in src and "const bool* __restrict" in src, src
    want = torch.where(torch.from_numpy(m), -float("inf"), torch.from_numpy(x)).exp().sum(1)
    with lt.backend("cpp"):
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5)
