"""The native runtime's fast paths: the C++ graph walk, the output pool, threaded GEMM.

Each of these exists for speed (see benchmarks/RESULTS.md); the tests pin down that they
give exactly what the slower path they replace would: the same parameters, node order and
key distinctions as the Python capture, correct values in reused output memory, GEMM
results equal to NumPy's whichever way the product is cut across threads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch import _native
from lazytorch.ir.program import capture

_C = _native.load(warn=False)
pytestmark = pytest.mark.skipif(_C is None, reason="lazytorch._C is not built")


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        yield tmp_path / "cache"


# -- capture_key: the same walk as lazytorch.ir.program.capture ---------------------------------

OPS = ["add", "mul", "sub", "relu", "exp", "scalar", "sum", "materialized"]


@st.composite
def graphs(draw):
    """A random DAG over two or three leaves, with shared subexpressions and Python scalars;
    returns a recipe (list of (op, input indices)) and the root indices."""
    n_leaves = draw(st.integers(2, 3))
    recipe = []
    for i in range(draw(st.integers(1, 14))):
        avail = n_leaves + i
        op = draw(st.sampled_from(OPS))
        a = draw(st.integers(0, avail - 1))
        b = draw(st.integers(0, avail - 1))
        recipe.append((op, a, b))
    total = n_leaves + len(recipe)
    roots = draw(st.lists(st.integers(n_leaves, total - 1), min_size=1, max_size=3))
    return n_leaves, recipe, roots


def build(n_leaves, recipe, roots, seed=0):
    rng = np.random.default_rng(seed)
    vals = [lt.from_numpy(rng.standard_normal(4).astype(np.float32)) for _ in range(n_leaves)]
    for op, a, b in recipe:
        x, y = vals[a], vals[b]
        if op == "add":
            v = x + y
        elif op == "mul":
            v = x * y
        elif op == "sub":
            v = x - y
        elif op == "relu":
            v = lt.relu(x)
        elif op == "exp":
            v = lt.exp(x)
        elif op == "scalar":
            v = x * float(rng.standard_normal())
        elif op == "sum":
            v = x.sum() + y
        else:  # a value computed by an earlier cut: a parameter of the next program
            v = x + 1
            lt.materialize(v)
        vals.append(v)
    return [vals[r]._node for r in roots if vals[r]._node.buffer is None]


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_native_walk_matches_python_capture(g):
    roots = build(*g)
    if not roots:
        return
    py = capture(roots)
    key, params, order = _C.capture_key(roots)
    assert params == py.params
    assert order == py.order
    # a second graph of the same structure (other data, other scalars) has the same key
    roots2 = build(*g, seed=1)
    assert _C.capture_key(roots2)[0] == key


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs())
def test_native_key_distinguishes_what_the_python_key_does(g1, g2):
    r1, r2 = build(*g1), build(*g2)
    if not r1 or not r2:
        return
    same_py = capture(r1).key == capture(r2).key
    same_native = _C.capture_key(r1)[0] == _C.capture_key(r2)[0]
    assert same_py == same_native


def test_native_key_tells_wiring_apart():
    x, y = lt.tensor([1.0, 2.0]), lt.tensor([3.0, 4.0])
    k1 = _C.capture_key([((x + y) * x)._node])[0]
    k2 = _C.capture_key([((x + y) * y)._node])[0]
    k3 = _C.capture_key([((y + x) * y)._node])[0]
    assert k1 != k2
    assert k1 == k3  # same wiring by position, as in the Python capture


def test_native_walk_refuses_what_is_not_a_node():
    with pytest.raises(TypeError, match="Node"):
        _C.capture_key([object()])


def test_cache_hit_uses_the_native_key(cpp):
    x = lt.from_numpy(np.arange(6, dtype=np.float32))
    for _ in range(3):
        (lt.softmax(x * 2, 0) + 1).numpy()
    c = lt.metrics.counters()
    assert c["compiles"] == 1 and c["cache_hits_memory"] == 2


# -- the output pool -----------------------------------------------------------------------------


def test_freed_outputs_are_reused_and_values_stay_right(cpp):
    n = 1 << 18  # 1 MiB of float32: pooled
    x = lt.from_numpy(np.arange(n, dtype=np.float32))
    (x * 2).numpy()  # compile; the output dies at once
    before = _C.pool_stats()["reused"]
    for k in range(3, 6):
        got = (x * float(k)).numpy()
        np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32) * k)
        del got
    assert _C.pool_stats()["reused"] >= before + 3


def test_live_outputs_are_never_handed_out_twice(cpp):
    n = 1 << 18
    x = lt.from_numpy(np.ones(n, dtype=np.float32))
    ys = [(x * float(k)).numpy() for k in range(4)]
    for k, y in enumerate(ys):
        assert float(y[0]) == k and float(y[-1]) == k
    ptrs = {y.__array_interface__["data"][0] for y in ys}
    assert len(ptrs) == 4


def test_large_outputs_are_huge_page_aligned(cpp):
    # blocks of >= 4 MiB are 2 MiB aligned and advised for transparent huge pages
    x = lt.from_numpy(np.ones(3 << 20, dtype=np.float32))  # 12 MiB
    y = (x * 2).numpy()
    assert y.__array_interface__["data"][0] % (1 << 21) == 0
    assert float(y[0]) == 2.0 and float(y[-1]) == 2.0


def test_small_outputs_are_not_pooled(cpp):
    x = lt.from_numpy(np.ones(16, dtype=np.float32))
    (x * 2).numpy()
    cached = _C.pool_stats()["cached_bytes"]
    (x * 3).numpy()
    assert _C.pool_stats()["cached_bytes"] == cached


def test_empty_pool_returns_memory_and_limit_is_respected(cpp):
    x = lt.from_numpy(np.ones(1 << 18, dtype=np.float32))
    (x + 1).numpy()
    assert _C.pool_stats()["cached_bytes"] > 0
    assert _C.empty_pool() > 0
    assert _C.pool_stats()["cached_bytes"] == 0
    limit = _C.pool_stats()["limit_bytes"]
    try:
        _C.set_pool_limit(0)
        (x + 2).numpy()
        assert _C.pool_stats()["cached_bytes"] == 0
    finally:
        _C.set_pool_limit(limit)


def test_pool_limit_from_the_environment(tmp_path):
    code = "from lazytorch import _C; print(_C.pool_stats()['limit_bytes'])"
    env = {**os.environ, "LAZYTORCH_POOL_MB": "3"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == 3 << 20


# -- arenas: programs' temporaries ---------------------------------------------------------------


def _with_temporaries(x, w, k: float):
    """A program whose (x @ w) lives in its arena between two kernels."""
    return ((x @ w) * k).softmax(-1).sum(0)


def _expected(x, w, k: float) -> np.ndarray:
    z = (x.astype(np.float64) @ w.astype(np.float64)) * k
    e = np.exp(z - z.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).sum(0)


def test_programs_run_one_after_another_share_one_arena(cpp):
    """Two programs of different arena sizes, run in turn by one thread: one idle arena
    afterwards, the size of the larger; empty_pool frees it."""
    rng = np.random.default_rng(0)
    small = [rng.normal(size=s).astype(np.float32) for s in ((64, 32), (32, 64))]
    large = [rng.normal(size=s).astype(np.float32) for s in ((256, 64), (64, 512))]
    _C.empty_pool()
    for _ in range(2):
        for (x, w), k in ((small, 1.0), (large, 2.0)):
            got = _with_temporaries(lt.tensor(x), lt.tensor(w), k).numpy()
            np.testing.assert_allclose(got, _expected(x, w, k), rtol=1e-4)
    stats = _C.arena_stats()
    assert stats["idle_arenas"] == 1, stats
    assert stats["idle_bytes"] >= 256 * 512 * 4  # the larger program's (x @ w)
    assert _C.empty_pool() >= stats["idle_bytes"]
    assert _C.arena_stats() == {"idle_arenas": 0, "idle_bytes": 0}


def test_programs_running_at_once_on_two_threads_get_two_arenas(cpp):
    """Programs run with the GIL released; two threads running programs at the same time
    must not share temporaries (a shared arena would mix their (x @ w) and give wrong
    sums). Each thread runs a different program many times; every result is checked."""
    import threading

    rng = np.random.default_rng(1)
    cases = [
        [rng.normal(size=s).astype(np.float32) for s in ((512, 64), (64, 512))],
        [rng.normal(size=s).astype(np.float32) for s in ((384, 96), (96, 384))],
    ]
    want = [_expected(x, w, 1.5) for x, w in cases]
    for x, w in cases:  # compiled before the race
        _with_temporaries(lt.tensor(x), lt.tensor(w), 1.5).numpy()
    errors: list[str] = []
    start = threading.Barrier(2)

    def worker(i: int) -> None:
        x, w = (lt.tensor(a) for a in cases[i])
        start.wait()
        for n in range(60):
            got = _with_temporaries(x, w, 1.5).numpy()
            if not np.allclose(got, want[i], rtol=1e-4):
                errors.append(f"thread {i}, run {n}: wrong result")
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _C.arena_stats()["idle_arenas"] <= 2


# -- GEMM cut across OpenMP threads ------------------------------------------------------------


@pytest.fixture
def two_threads():
    """At least two OpenMP threads for the programs this test runs, whatever this process
    was started with (``OMP_NUM_THREADS=1``, or a single core): these
    tests are about products cut across threads. Sets the calling thread's count in the
    OpenMP runtime the programs link (g++'s libgomp), as ``omp_set_num_threads`` does."""
    try:
        gomp = ctypes.CDLL("libgomp.so.1")
    except OSError:  # another compiler's runtime: the process's own thread count decides
        yield
        return
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(max(2, before))
    assert gomp.omp_get_max_threads() >= 2
    yield
    gomp.omp_set_num_threads(before)


@pytest.mark.parametrize(
    "m,k,n",
    [(300, 200, 40), (40, 200, 300), (256, 128, 256), (7, 5, 3), (1, 4096, 1000), (1000, 64, 1)],
)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_blocks_match_numpy(cpp, two_threads, m, k, n, ta, tb):
    rng = np.random.default_rng(m * 7 + n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    la, lb = lt.from_numpy(a), lt.from_numpy(b)
    got = ((la.T if ta else la) @ (lb.T if tb else lb)).numpy()
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(k))


def test_batched_gemm_runs_one_product_per_thread(cpp, two_threads):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 128, 96)).astype(np.float32)
    b = rng.standard_normal((6, 96, 200)).astype(np.float32)
    got = (lt.from_numpy(a) @ lt.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    src = lt.debug.source(lt.from_numpy(a) @ lt.from_numpy(b))
    assert "omp parallel for" in src and "lt::gemm(" in src


def test_only_programs_with_16_bit_products_compile_their_gemm(cpp):
    # lazytorch_gemm_bf16.h's intrinsics cost ~0.7 s of g++ per program: float32 and float64
    # products leave it out, bfloat16 and float16 ones take it (and compute, checked here)
    x = lt.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert "LT_GEMM16" not in lt.debug.source(x @ x.T)
    assert "LT_GEMM16" not in lt.debug.source(x.double() @ x.double().T)
    for d in (lt.bfloat16, lt.float16):
        y = x.to(d)
        assert "#define LT_GEMM16 1" in lt.debug.source(y @ y.T)
        np.testing.assert_array_equal((y @ y.T).float().numpy(), (x @ x.T).numpy())


def test_only_programs_with_a_gemm_link_blas(cpp):
    x = lt.from_numpy(np.ones((64, 64), dtype=np.float32))
    assert "lazytorch_blas.h" not in lt.debug.source(x * 2)
    assert "lazytorch_blas.h" in lt.debug.source(x @ x)
    if shutil.which("ldd") is None:
        return
    (x * 2).numpy()
    (x @ x).numpy()
    needed = {}
    for so in cpp.rglob("program.so"):
        src = (so.parent / "program.cpp").read_text()
        out = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
        needed["gemm" if "lt::gemm" in src else "pointwise"] = "openblas" in out
    assert needed == {"gemm": True, "pointwise": False}


_BLAS_THREADS = textwrap.dedent(
    """
    import ctypes, glob, os
    import numpy as np
    import lazytorch as lt
    x = lt.from_numpy(np.ones((256, 256), dtype=np.float32))
    (x @ x).numpy()
    import scipy_openblas32 as b
    lib = ctypes.CDLL(glob.glob(os.path.join(b.get_lib_dir(), "libscipy_openblas*"))[0])
    print(lib.scipy_openblas_get_num_threads())
    """
)


def _subprocess_env(tmp_path, **threads: str) -> dict[str, str]:
    """This environment for a cpp child process, with thread counts set only by `threads`:
    one inherited (a pytest-xdist worker's share of the cores, say) must not decide what the
    test checks."""
    env = {k: v for k, v in os.environ.items() if k not in _THREAD_VARIABLES}
    return {**env, "LAZYTORCH_CACHE_DIR": str(tmp_path), "LAZYTORCH_BACKEND": "cpp", **threads}


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS")


def test_openblas_runs_on_the_callers_thread(tmp_path):
    # OpenMP threads do the parallel work; OpenBLAS's own pool would fight them for cores.
    # Its pool is told to take 2 threads, so only lazytorch's setting can make it 1.
    env = _subprocess_env(tmp_path, OPENBLAS_NUM_THREADS="2")
    r = subprocess.run(
        [sys.executable, "-c", _BLAS_THREADS], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


_BLAS_POOL = textwrap.dedent(
    """
    import os
    import numpy as np  # NumPy's own BLAS (and its pool) first, as in a user's script
    def threads():
        return len(os.listdir("/proc/self/task"))
    import lazytorch as lt
    before = threads()
    x = lt.from_numpy(np.ones((256, 256), dtype=np.float32))
    (x @ x).numpy()  # a program that links lazytorch's BLAS
    print(threads() - before, os.environ.get("OPENBLAS_NUM_THREADS"))
    """
)


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
    reason="counts a process's threads in /proc, on a machine with cores for a pool",
)
def test_lazytorchs_blas_starts_no_thread_pool(tmp_path):
    """OpenBLAS loaded by a program would start a pool of one thread per core, spinning for
    a tenth of a second (a new process's first step pays it); programs never use that pool.
    It is loaded with OPENBLAS_NUM_THREADS=1 instead, and the user's value is put back for
    any BLAS loaded later. OpenMP has one thread here, so a new thread can only be BLAS's."""
    env = _subprocess_env(tmp_path, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="3")
    r = subprocess.run([sys.executable, "-c", _BLAS_POOL], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "3"]


_OMP_SPIN = textwrap.dedent(
    """
    import ctypes, ctypes.util, os, sys
    import numpy as np
    import lazytorch as lt
    x = lt.from_numpy(np.ones(1 << 16, dtype=np.float32))
    float((x * 2).sum())  # a program: its OpenMP runtime is loaded now
    sys.stderr.flush()
    ctypes.CDLL(ctypes.util.find_library("gomp")).omp_display_env(1)  # writes to stderr
    print(os.environ.get("GOMP_SPINCOUNT"))
    """
)


@pytest.mark.skipif(
    ctypes.util.find_library("gomp") is None, reason="the OpenMP runtime is libgomp here"
)
@pytest.mark.parametrize(
    "user, spincount",
    [
        ({}, "1000"),  # lazytorch's short spin
        ({"GOMP_SPINCOUNT": "12345"}, "12345"),  # the user's, left alone
        ({"OMP_WAIT_POLICY": "active"}, None),  # the user's policy decides the spin
    ],
)
def test_openmp_threads_spin_briefly_unless_the_user_chose(tmp_path, user, spincount):
    """libgomp's idle threads spin 300,000 iterations by default; on busy cores that
    spinning thread holds the core the next barrier waits for (the ResNet-8 step: 616 ms
    against 104 ms, load 5 on 2 cores). Programs load it with GOMP_SPINCOUNT=1000 unless
    the user set a wait policy or spin count, and the variable is not left behind."""
    env = _subprocess_env(tmp_path, OMP_NUM_THREADS="2")
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(name, None)
    env.update(user)
    r = subprocess.run([sys.executable, "-c", _OMP_SPIN], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    shown = re.search(r"GOMP_SPINCOUNT = '(\d+)'", r.stderr)
    assert shown, r.stderr
    if spincount is None:
        assert shown.group(1) != "1000", r.stderr
        assert re.search(r"OMP_WAIT_POLICY = 'ACTIVE'", r.stderr), r.stderr
    else:
        assert shown.group(1) == spincount, r.stderr
    assert r.stdout.split() == [user.get("GOMP_SPINCOUNT", "None")]


# -- the compiler's version is remembered between processes -------------------------------------


def test_compiler_version_memo(tmp_path, monkeypatch):
    from lazytorch.codegen import compiler

    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    first = compiler._compiler_version(cxx, tmp_path)
    assert (tmp_path / "compilers.json").exists()

    def no_subprocess(*a, **k):
        raise AssertionError("the memo should have answered")

    monkeypatch.setattr(subprocess, "run", no_subprocess)
    assert compiler._compiler_version(cxx, tmp_path) == first
    (tmp_path / "compilers.json").write_text("{not json")  # damaged memo: asked again
    monkeypatch.undo()
    assert compiler._compiler_version(cxx, tmp_path) == first


def test_isa_probe_memo(tmp_path, monkeypatch):
    """The AVX512-FP16 probe (a compiler run in every new process, cache hits included) is
    remembered beside the version, keyed by the compiler binary: another binary is asked."""
    from lazytorch.codegen import compiler

    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    monkeypatch.setattr(compiler, "cpu_features", lambda: "sse2 avx512_fp16")
    probe = compiler._isa_flags.__wrapped__  # not the in-process cache
    asked = []
    real_run = subprocess.run

    def counting_run(cmd, *a, **k):
        asked.append(cmd[0])
        return real_run(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "run", counting_run)
    first = probe(cxx, tmp_path)
    assert asked == [cxx] and first in ((), ("-mno-avx512fp16",))
    assert probe(cxx, tmp_path) == first
    assert asked == [cxx]  # answered by the memo
    wrapper = tmp_path / "copy"  # another binary (say, an upgrade): asked again
    wrapper.write_text(f'#!/bin/sh\nexec {cxx} "$@"\n')
    wrapper.chmod(0o755)
    assert probe(str(tmp_path / "copy"), tmp_path) == first
    assert asked == [cxx, str(tmp_path / "copy")]
    (tmp_path / "compilers.json").write_text("[1, 2]")  # damaged memo: asked again
    assert probe(cxx, tmp_path) == first
    assert len(asked) == 3


_EXIT = textwrap.dedent(
    """
    import numpy as np
    import lazytorch as lt
    m = lt.from_numpy(np.ones((512, 2048), dtype=np.float32))
    w = lt.from_numpy(np.ones((2048, 256), dtype=np.float32))
    outs = [m.sum(0), m @ w]
    lt.materialize(*outs)
    print(float(outs[0].sum()), float(outs[1][0, 0]))
    """
)


def test_process_exits_cleanly_after_running_programs(tmp_path):
    # Closing the last program must not unload the OpenMP runtime under its idle workers:
    # before the fix this script crashed with SIGSEGV at exit in about one run in four.
    # At least one idle worker beside the main thread, whatever this process was given.
    env = _subprocess_env(tmp_path, OMP_NUM_THREADS="2")
    for _ in range(12):
        r = subprocess.run([sys.executable, "-c", _EXIT], env=env, capture_output=True, text=True)
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
        assert r.stdout.split() == ["1048576.0", "2048.0"]


def test_assembler_probe_memo(tmp_path, monkeypatch):
    """The unaligned-moves probe assembles an empty file once per compiler binary; later
    processes read the answer from the memo."""
    from lazytorch.codegen import compiler

    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    probe = compiler._assembler_flags.__wrapped__
    asked = []
    real_run = subprocess.run

    def counting_run(cmd, *a, **k):
        asked.append(cmd)
        return real_run(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "run", counting_run)
    first = probe(cxx, tmp_path)
    assert first in ((), (compiler.UNALIGNED_MOVES,))
    assert len(asked) == 1 and "-c" in asked[0]  # assembled, not only preprocessed
    assert probe(cxx, tmp_path) == first and len(asked) == 1
