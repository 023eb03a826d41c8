"""bfloat16 on the cpp backend: conversions bit for bit, arithmetic rounded once per
primitive, GEMM through float32, and no fallback to the interpreter.

The C++ backend stores bfloat16 as a struct of its 16 bits (``lt::bf16``,
codegen/include/lazytorch_runtime.h) and computes in float, rounding to nearest even after
every primitive, as the reference interpreter (ml_dtypes) and torch's CPU kernels do. So:

* conversions are checked on every one of the 65,536 bit patterns and on float32 values at,
  just below and just above every rounding tie, against torch's ``.bfloat16()``;
* every elementwise primitive over all 65,536 bfloat16 inputs gives exactly the float32
  kernel's result rounded once (``round(f32_op(widen(x)))``): the lowering adds nothing but
  that rounding. Against the interpreter the bits are equal where both backends' float32
  math is correctly rounded (the IEEE operations); transcendentals may differ where
  lazytorch_math.h and NumPy differ in float32 (tests/codegen/test_math_header.py);
* reductions accumulate in float32: a bfloat16 reduction is the float32 reduction of the
  widened input, rounded once (the same lanes and order, so bit for bit);
* bfloat16 matmul runs on AMX or AVX512-BF16 where the CPU has them (the kernels themselves:
  tests/codegen/test_gemm_bf16.py): float32 sums of exact products, within k·eps(float32)
  of the float64 product, the same bits on 1 and 2 threads; else, and for float16, it widens
  to float32 and calls sgemm (this OpenBLAS has no sbgemm), rounding C once: bit for bit
  the float32 product of the widened operands. The program reports the path it took.

NaN: a float NaN becomes the quiet NaN of its sign (0x7FC0 / 0xFFC0), as ml_dtypes gives it;
torch's CPU kernels give 0xFFFF (and c10's scalar conversion 0x7FC0), so against torch a NaN
is only checked to be a NaN.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.codegen.compiler import cpu_features

pytestmark = pytest.mark.filterwarnings(
    # NumPy warns when it casts NaN and inf to bfloat16: the values these tests are about
    "ignore:invalid value encountered in cast:RuntimeWarning",
    "ignore:overflow encountered in cast:RuntimeWarning",
    "ignore:The reduce argument of torch.scatter:UserWarning",  # still what torch computes
)

BF16 = lt.bfloat16.np  # ml_dtypes' NumPy bfloat16
EVERY_BF16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)  # every bit pattern


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    """The cpp backend with a private, empty disk cache; fallbacks counted from zero."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    lt.metrics.reset()
    with lt.backend("cpp"):
        yield tmp_path / "cache"
    assert lt.metrics.counters()["interpreter_fallbacks"] == 0


def bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def torch_bf16_bits(f: np.ndarray) -> np.ndarray:
    return torch.from_numpy(f.copy()).bfloat16().view(torch.int16).numpy().view(np.uint16)


def quiet_nan_of_sign(b: np.ndarray) -> np.ndarray:
    return (b & 0x8000) | 0x7FC0


def run(fn, *arrays):
    """`fn` over tensors of `arrays` (each an input buffer), computed as one program: its
    output as a NumPy array, or a dict of them for a dict of outputs."""
    out = fn(*[lt.tensor(a) for a in arrays])
    if isinstance(out, dict):
        lt.materialize(*out.values())
        return {k: v.numpy() for k, v in out.items()}
    return out.numpy()


# -- conversions ---------------------------------------------------------------------------------


def test_every_bfloat16_widens_exactly_and_narrows_back(cpp):
    x = EVERY_BF16.view(BF16)
    wide = run(lambda t: t.float(), x)
    assert lt.metrics.counters()["kernels_launched"] == 1
    # bfloat16 -> float32 is the bits shifted up: every pattern, NaN payloads included
    want = torch.from_numpy(EVERY_BF16.view(np.int16)).view(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(bits(wide), EVERY_BF16.astype(np.uint32) << 16)
    np.testing.assert_array_equal(bits(wide), bits(want))
    back = bits(run(lambda t: t.bfloat16(), wide))
    nan = np.isnan(wide)
    assert nan.sum() == 2 * 127  # exponent all ones, 127 nonzero 7-bit payloads, 2 signs
    np.testing.assert_array_equal(back[~nan], EVERY_BF16[~nan])
    np.testing.assert_array_equal(back[nan], quiet_nan_of_sign(EVERY_BF16[nan]))
    # as the interpreter (ml_dtypes) gives them, NaNs included; torch: the same numbers
    np.testing.assert_array_equal(back, bits(wide.astype(BF16)))
    np.testing.assert_array_equal(back[~nan], torch_bf16_bits(wide)[~nan])
    assert np.isnan(torch.from_numpy(wide.copy()).bfloat16().float().numpy()[nan]).all()


def _around_ties() -> np.ndarray:
    """float32 bit patterns over every bfloat16 `p`: exactly p, the smallest step above,
    just below the tie, the tie (p's low half 0x8000), just above it, the largest step."""
    lows = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    return ((EVERY_BF16.astype(np.uint32) << 16)[:, None] | lows[None, :]).reshape(-1)


def test_float32_rounds_to_nearest_even_as_torch(cpp):
    """Ties to even, subnormals kept (not flushed), the largest float rounding to inf, inf
    kept, and NaN quiet with its sign, on 393,216 crafted float32 values."""
    f = _around_ties().view(np.float32)
    got = bits(run(lambda t: t.bfloat16(), f))
    nan = np.isnan(f)
    want = torch_bf16_bits(f)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    np.testing.assert_array_equal(got[nan], quiet_nan_of_sign(bits(f)[nan] >> 16))
    np.testing.assert_array_equal(got, bits(f.astype(BF16)))  # ml_dtypes, the interpreter's
    # spot checks of what the table above covers
    cases = {
        0x3F808000: 0x3F80,  # 1 + 2**-8: a tie, the even neighbour is 1.0
        0x3F818000: 0x3F82,  # a tie whose lower neighbour is odd: rounds up
        0x3F808001: 0x3F81,  # just above a tie
        0x00018000: 0x0002,  # a subnormal tie: to even, not flushed
        0x7F7FFFFF: 0x7F80,  # the largest float rounds to inf
        0xFF800000: 0xFF80,  # -inf
        0xFFA00000: 0xFFC0,  # a negative signaling NaN: quiet, sign kept
    }
    probe = np.array(list(cases), dtype=np.uint32).view(np.float32)
    assert bits(run(lambda t: t.bfloat16(), probe)).tolist() == list(cases.values())


def test_float64_and_integers_round_through_float32_as_torch(cpp):
    # float64 and int64 -> bfloat16 round to float32 first (torch, ml_dtypes): twice
    doubles = np.array([1 + 2**-8 + 2**-40, 1 + 2**-8, -(2.0**-130), 3.0e38, 1e300, -1e-300])
    ints = np.array([2**31 + 2**23 + 1, 2**24 + 1, -(2**40) - 1, 257, 0, -3])
    for x in (doubles, ints):
        got = bits(run(lambda t: t.bfloat16(), x))
        np.testing.assert_array_equal(got, torch_bf16_bits(x))
        np.testing.assert_array_equal(got, bits(x.astype(np.float32).astype(BF16)))


# -- elementwise and reductions ------------------------------------------------------------------

UNARY = "exp log sqrt sin cos tanh atan log1p expm1 sigmoid erf neg abs floor ceil round".split()
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": lambda a, b: lt.maximum(a, b),
    "minimum": lambda a, b: lt.minimum(a, b),
    "fmod": lambda a, b: lt.fmod(a, b),
    "remainder": lambda a, b: lt.remainder(a, b),
    "floordiv": lambda a, b: a // b,
    "pow": lambda a, b: lt.pow(a, b),
    "atan2": lambda a, b: lt.atan2(a, b),
}
# float32 math that is correctly rounded on both backends: the bits equal the interpreter's
IEEE = {"sqrt", "neg", "abs", "floor", "ceil", "round", "add", "sub", "mul", "div"}
IEEE |= {"maximum", "minimum", "fmod", "floordiv"}


def _same_numbers(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bits, except that any NaN equals any NaN (the sign of a computed NaN differs
    between float32 math libraries: lazytorch_math.h and NumPy's)."""
    g, w = got.astype(np.float32), want.astype(np.float32)
    differ = (bits(got) != bits(want)) & ~(np.isnan(g) & np.isnan(w))
    assert not differ.any(), (
        f"{what}: {differ.sum()} differ, e.g. {g[differ][:4]} vs {w[differ][:4]}"
    )


def _every_op(x: lt.Tensor, y: lt.Tensor) -> dict[str, lt.Tensor]:
    out = {op: getattr(lt, op)(x) for op in UNARY}
    out.update({op: fn(x, y) for op, fn in BINARY.items()})
    return out


def test_elementwise_is_the_float32_kernel_rounded_once(cpp):
    """Every elementwise primitive over all 65,536 bfloat16 inputs (paired with a
    permutation of them for binary ones): bit for bit the float32 kernel on the widened
    inputs rounded once, NaNs included; and the interpreter's numbers where float32 math is
    correctly rounded."""
    x = EVERY_BF16.view(BF16)
    y = np.random.default_rng(0).permutation(x)
    got = run(_every_op, x, y)
    rounded = {
        op: v.astype(BF16)
        for op, v in run(_every_op, *(v.astype(np.float32) for v in (x, y))).items()
    }
    with lt.backend("interpreter"):
        ref = run(_every_op, x, y)
    # Where both operands are NaN, IEEE 754 leaves open which one the result carries, and
    # g++ may commute `a + b` to `b + a` (x86 returns the first operand's NaN): -O2 did so
    # in the float32 kernel and not in the bfloat16 one, flipping the NaN's sign for the
    # ~1 pair of NaNs the permutation draws. There any NaN is right; every other element,
    # NaNs from one NaN operand included, must keep its bits.
    fx, fy = (v.astype(np.float32) for v in (x, y))
    both_nan = np.isnan(fx) & np.isnan(fy)
    for op, g in got.items():
        assert g.dtype == BF16, op
        want = rounded[op]
        nan_both = np.isnan(g.astype(np.float32)) & np.isnan(want.astype(np.float32))
        free = both_nan & nan_both if op in BINARY else False
        np.testing.assert_array_equal(
            np.where(free, 0, bits(g)), np.where(free, 0, bits(want)), err_msg=op
        )
        if op in IEEE:
            _same_numbers(g, ref[op], f"{op}: cpp vs interpreter")


def test_elementwise_chain_matches_torch(cpp):
    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    a = x.astype(BF16)
    got = run(lambda t: ((t * 3 - 1).abs() + 0.5).sqrt() / (t * t + 1), a)
    ta = torch.from_numpy(x).bfloat16()
    want = (((ta * 3 - 1).abs() + 0.5).sqrt() / (ta * ta + 1)).view(torch.int16).numpy()
    np.testing.assert_array_equal(bits(got), want.view(np.uint16))  # torch rounds each op too


REDUCTIONS = {
    "sum": lambda t: t.sum(1),
    "sum_columns": lambda t: t.sum(0),
    "mean": lambda t: t.mean(1),
    "amax": lambda t: t.amax(1),
    "amin": lambda t: t.amin(0),
    "prod": lambda t: (t * 2**-7 + 1).prod(1),
    "cumsum": lambda t: t.cumsum(1),
    "one_long_row": lambda t: t.reshape(-1).sum(),
}


def test_reductions_accumulate_in_float32(cpp):
    """A bfloat16 reduction is the float32 reduction of the widened input rounded once (the
    float32 accumulators, lanes and order are the same), and torch's within rounding."""
    x = np.random.default_rng(2).standard_normal((96, 1500)).astype(np.float32).astype(BF16)
    got = run(lambda t: {k: fn(t) for k, fn in REDUCTIONS.items()}, x)
    f32 = run(lambda t: {k: fn(t) for k, fn in REDUCTIONS.items()}, x.astype(np.float32))
    tx = torch.from_numpy(x.astype(np.float32)).bfloat16()
    for name, fn in REDUCTIONS.items():
        assert got[name].dtype == BF16, name
        if name != "prod":  # prod rounds t * 2**-7 + 1 to bfloat16 first
            np.testing.assert_array_equal(bits(got[name]), bits(f32[name].astype(BF16)), name)
        # torch's bfloat16 prod does not accumulate in float32 (0.19 for an exact 0.32 in
        # row 0): compare with its float32 product of the same bfloat16 factors
        want = (tx * 2**-7 + 1).float().prod(1) if name == "prod" else fn(tx)
        want = want.float().numpy()
        np.testing.assert_allclose(
            got[name].astype(np.float32),
            want,
            rtol=2**-7,
            atol=2**-7 * np.abs(want).max(),
            err_msg=name,
        )


def test_softmax_layer_norm_and_argmax_match_torch(cpp):
    x = np.random.default_rng(3).standard_normal((64, 300)).astype(np.float32)
    a, ta = x.astype(BF16), torch.from_numpy(x).bfloat16()
    F, TF = lt.nn.functional, torch.nn.functional
    for name, ours, theirs in [
        ("softmax", lambda t: lt.softmax(t, 1), lambda t: torch.softmax(t, 1)),
        ("layer_norm", lambda t: F.layer_norm(t, (300,)), lambda t: TF.layer_norm(t, (300,))),
    ]:
        got = run(ours, a).astype(np.float32)
        want = theirs(ta).float().numpy()
        np.testing.assert_allclose(got, want, rtol=2**-6, atol=2**-6, err_msg=name)
    np.testing.assert_array_equal(run(lambda t: t.argmax(1), a), ta.argmax(1).numpy())


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_accumulates_in_float32(cpp, reduce):
    """Scatter-add (and multiply) into bfloat16 sums in float32 and rounds once, as torch and
    the interpreter do: their bits."""
    rng = np.random.default_rng(4)
    src = rng.standard_normal((50, 8)).astype(np.float32).astype(BF16)
    idx = rng.integers(0, 10, size=(50, 8))

    def fn(s, i):
        return lt.ones(10, 8, dtype=lt.bfloat16).scatter(0, i, s, reduce=reduce)

    got = run(fn, src, idx)
    with lt.backend("interpreter"):
        np.testing.assert_array_equal(bits(got), bits(run(fn, src, idx)))
    ts = torch.from_numpy(src.astype(np.float32)).bfloat16()
    want = torch.ones(10, 8, dtype=torch.bfloat16).scatter(
        0, torch.from_numpy(idx), ts, reduce=reduce
    )
    np.testing.assert_array_equal(bits(got), want.view(torch.int16).numpy().view(np.uint16))


def test_gather_and_argsort(cpp):
    rng = np.random.default_rng(4)
    src = rng.standard_normal((50, 8)).astype(np.float32).astype(BF16)
    idx = rng.integers(0, 50, size=(20, 8))
    g = run(lambda s, i: s.gather(0, i), src, idx)
    np.testing.assert_array_equal(bits(g), bits(np.take_along_axis(src, idx, 0)))
    keys = np.array([[3.0, -1.0, np.nan, 0.5, -1.0]], dtype=np.float32).astype(BF16)
    assert run(lambda t: t.argsort(1), keys).tolist() == [[1, 4, 3, 0, 2]]


def test_random_bits_equal_the_interpreter(cpp):
    """Philox in the kernel gives the reference's bits: uniform is the top 8 bits of r0
    times 2**-8, normal the float64 Box-Muller rounded through float32."""
    out = {}
    for backend in ("cpp", "interpreter"):
        with lt.backend(backend):
            lt.manual_seed(11)
            u, n = lt.rand(5000, dtype=lt.bfloat16), lt.randn(5000, dtype=lt.bfloat16)
            out[backend] = (bits(u.numpy()), bits(n.numpy()))
    for got, want in zip(out["cpp"], out["interpreter"]):
        np.testing.assert_array_equal(got, want)
    u = out["cpp"][0].view(BF16).astype(np.float32)
    assert u.min() >= 0 and u.max() < 1 and len(np.unique(u)) == 256


# -- fusion, no fallback, dynamic sizes ---------------------------------------------------------


def test_cast_chain_is_one_kernel(cpp):
    """float32 -> bfloat16 -> ops -> float32: the casts fuse into the ops' kernel (no pass
    over memory of their own)."""
    x, b = (np.random.default_rng(i).standard_normal(10_000).astype(np.float32) for i in (5, 6))
    lx, lb = lt.tensor(x), lt.tensor(b)
    y = (lt.exp(lx.bfloat16() * 0.5) + lb.bfloat16()).sigmoid().float() * 2
    s = lt.debug.schedule(y)
    assert len(s.kernels) == 1 and len(s.steps) == 1
    # 3 casts of the chain, and 2 of `* 0.5`: a bfloat16 times a Python number computes in
    # float32 with the number's own value (torch's mul), rounded after
    assert s.kernels[0].fused.count("cast") == 5
    got = y.numpy()
    assert lt.metrics.counters()["kernels_launched"] == 1
    tx, tb = torch.from_numpy(x), torch.from_numpy(b)
    want = ((torch.exp(tx.bfloat16() * 0.5) + tb.bfloat16()).sigmoid().float() * 2).numpy()
    np.testing.assert_allclose(got, want, rtol=2**-7, atol=0)


def test_bfloat16_programs_compile_to_cpp(cpp):
    """No program with a bfloat16 value falls back to the interpreter (the fixture checks
    the ``interpreter_fallbacks`` metric stays 0); each is a compiled C++ program."""
    x = np.random.default_rng(7).standard_normal((20, 30)).astype(np.float32).astype(BF16)
    t = lt.tensor(x)
    outs = [
        t * 2,
        t.sum(0),
        t @ t.T,
        t.argsort(1),
        t.half(),
        t.double(),
        t.int(),
        lt.rand(3, dtype=lt.bfloat16),
    ]
    lt.materialize(*outs)
    c = lt.metrics.counters()
    assert c["programs_built"] == 1 and c["kernels_launched"] >= 1, c
    src = lt.debug.source(t * 2)
    assert "lt::bf16" in src and "lt::round_bf16" in src


def test_dynamic_sizes(cpp):
    """A bfloat16 program recorded at several sizes from one line becomes one program over
    symbolic sizes: elementwise bits equal the interpreter's, sums within rounding."""
    rng = np.random.default_rng(8)

    def fn(t):
        return {"ew": (t * 3 + 1).abs().sqrt(), "sum": (t * 2).sum(0)}

    inputs = [
        rng.standard_normal((n, 7)).astype(np.float32).astype(BF16) for n in (5, 9, 2, 33, 17)
    ]
    with lt.backend("interpreter"):
        wants = [run(fn, x) for x in inputs]
    lt.metrics.reset()
    for x, want in zip(inputs, wants):
        got = run(fn, x)
        np.testing.assert_array_equal(bits(got["ew"]), bits(want["ew"]))
        np.testing.assert_allclose(
            got["sum"].astype(np.float32), want["sum"].astype(np.float32), rtol=2**-7
        )
    c = lt.metrics.counters()
    assert c.get("dynamic_programs", 0) == 1 and c["programs_built"] <= 3, c


# -- GEMM ------------------------------------------------------------------------------------------


def _openblas_exports(symbol: str) -> bool:
    spec = importlib.util.find_spec("scipy_openblas32")
    assert spec is not None and spec.submodule_search_locations
    lib = next(
        (Path(next(iter(spec.submodule_search_locations))) / "lib").glob("libscipy_openblas*.so*")
    )
    return hasattr(ctypes.CDLL(str(lib)), symbol)


def _gemm16_calls(cache: Path) -> list[int]:
    """The 16-bit products run by the cache's programs in this process, by path:
    [widened to sgemm, sbgemm, AVX512-BF16, AMX] (lazytorch_blas.h's lt_gemm16_calls)."""
    from lazytorch.runtime.disk_cache import DiskCache

    total = [0, 0, 0, 0]
    for entry in DiskCache(cache).entries():
        lib = ctypes.CDLL(str(entry.file("program.so")))
        if hasattr(lib, "lt_gemm16_calls"):
            total = [
                t + c for t, c in zip(total, (ctypes.c_int64 * 4).in_dll(lib, "lt_gemm16_calls"))
            ]
    return total


PATH_INDEX = {"widened": 0, "sbgemm": 1, "avx512": 2, "amx": 3}


def _os_grants_amx() -> bool:
    """Whether Linux gives this process AMX's tile state (what a program asks before its
    first tile instruction: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA))."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return False
    sys_arch_prctl, req_xcomp_perm, xtiledata = 158, 0x1023, 18
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(sys_arch_prctl, req_xcomp_perm, xtiledata) == 0


def _bf16_path(wanted: str = "auto") -> str:
    """The path a program takes for bfloat16 products on this machine, LAZYTORCH_BF16_GEMM
    being `wanted`: the best the CPU (and OS) can run, no better than the one asked for."""
    flags = set(cpu_features().split())
    if wanted in ("auto", "amx") and {"amx_bf16", "amx_tile"} <= flags and _os_grants_amx():
        return "amx"
    if wanted in ("auto", "amx", "avx512") and {"avx512_bf16", "avx512bw"} <= flags:
        return "avx512"
    sbgemm = _openblas_exports("scipy_cblas_sbgemm") and bool({"avx512_bf16", "amx_bf16"} & flags)
    return "sbgemm" if sbgemm else "widened"


def test_bfloat16_matmul_path_is_reported(cpp):
    """AMX where the CPU has it and the OS grants it, else AVX512-BF16, else sbgemm where
    the linked OpenBLAS exports it, else (this machine's scipy-openblas32 has no sbgemm)
    float32 operands and sgemm; float16 always the latter. The compiled program counts the
    products each path ran."""
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((200, 300)).astype(np.float32).astype(BF16) for _ in range(2))
    la, lb = lt.tensor(a), lt.tensor(b)
    want = [0, 0, 0, 0]
    for _ in range(2):  # the same program again
        (la @ lb.T).numpy()
        want[PATH_INDEX[_bf16_path()]] += 1
        assert _gemm16_calls(cpp) == want
    (la.half() @ lb.half().T).numpy()
    assert _gemm16_calls(cpp)[0] == want[0] + 1


_PATHS_RUN = textwrap.dedent(
    """
    import ctypes, sys
    import numpy as np
    import lazytorch as lt
    from lazytorch.runtime.disk_cache import DiskCache

    lt.use_deterministic_algorithms(True)
    rng = np.random.default_rng(12)
    def bf16(*shape):
        return lt.tensor(rng.standard_normal(shape).astype(np.float32).astype(lt.bfloat16.np))
    a, b, c, d = bf16(300, 257), bf16(257, 200), bf16(4, 33, 65), bf16(4, 65, 47)
    outs = {
        "nn": a @ b,  # split over threads: 300·200·257 > 128^3
        "tn": a.T[:100] @ a[:, :90],  # a transposed view; the other strided (lda 257)
        "nt": a[:31] @ a[40:90].T,
        "batched": c @ d,
    }
    lt.materialize(*outs.values())
    np.savez(sys.argv[1], **{k: v.numpy().astype(np.float32) for k, v in outs.items()})
    (entry,) = DiskCache(sys.argv[2]).entries()
    calls = (ctypes.c_int64 * 4).in_dll(ctypes.CDLL(str(entry.file("program.so"))), "lt_gemm16_calls")
    print(list(calls))
    """
)


@pytest.mark.parametrize("wanted", ["auto", "avx512", "widened"])
def test_forced_paths_are_deterministic_across_thread_counts(tmp_path, wanted):
    """LAZYTORCH_BF16_GEMM picks the path (the best the CPU has, no better than asked); in
    deterministic mode each gives the same bits on 1 and 2 threads, within k·eps(float32)
    of the float64 product (plus C's rounding). A new process per run: a program reads the
    variable once."""
    cache = tmp_path / "cache"
    results, reported = [], set()
    for threads in (1, 2):
        env = {**os.environ, "LAZYTORCH_CACHE_DIR": str(cache), "LAZYTORCH_BACKEND": "cpp",
               "LAZYTORCH_BF16_GEMM": wanted, "OMP_NUM_THREADS": str(threads)}  # fmt: skip
        out = tmp_path / f"out{threads}.npz"
        r = subprocess.run(
            [sys.executable, "-c", _PATHS_RUN, str(out), str(cache)],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        reported.add(r.stdout.strip())
        results.append(dict(np.load(out)))
    calls = [0, 0, 0, 0]
    calls[PATH_INDEX[_bf16_path(wanted)]] = 4 + 3  # one product each, the batch's 4
    assert reported == {str(calls)}
    for name in results[0]:
        np.testing.assert_array_equal(results[0][name], results[1][name], err_msg=name)
    # the values: the same products of the same inputs, in float64
    rng = np.random.default_rng(12)
    a, b, c, d = (
        rng.standard_normal(s).astype(np.float32).astype(BF16).astype(np.float64)
        for s in ((300, 257), (257, 200), (4, 33, 65), (4, 65, 47))
    )
    refs = {"nn": (a, b), "tn": (a.T[:100], a[:, :90]), "nt": (a[:31], a[40:90].T)}
    refs["batched"] = (c, d)
    for name, (x, y) in refs.items():
        ref, scale = x @ y, np.abs(x) @ np.abs(y)
        bound = 2.0**-8 * np.abs(ref) + (x.shape[-1] + 1) * 2.0**-24 * scale
        err = np.abs(results[0][name] - ref)
        assert (err <= bound).all(), (name, err.max())


MATMULS = {  # name: operand shapes, product
    "nn": (((33, 70), (70, 45)), lambda x, y: x @ y),
    "nt": (((64, 300), (200, 300)), lambda x, y: x @ y.transpose(0, 1)),
    "tn": (((300, 64), (300, 80)), lambda x, y: x.transpose(0, 1) @ y),
    "batched": (((6, 17, 40), (6, 40, 23)), lambda x, y: x @ y),
    "large": (((260, 520), (520, 130)), lambda x, y: x @ y),
    "odd": (((1, 77), (77, 1)), lambda x, y: x @ y),  # one row, one column, k odd
    "strided": (((40, 90), (90, 50)), lambda x, y: x[:, 3:70] @ y[3:70, 1:34]),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16bit_matmul_is_the_float32_product_rounded_once(cpp, dtype):
    """float32 accumulation, C rounded once. Widened operands and sgemm (float16; bfloat16
    without a native path): bit for bit the float32 program's product of the same values,
    rounded. A native bfloat16 path sums in another order: within k·eps(float32) of the
    float64 product, plus C's rounding. Both within rounding of torch's."""
    rng = np.random.default_rng(10)
    np16 = BF16 if dtype == "bfloat16" else np.float16
    ins = [
        rng.standard_normal(s).astype(np.float32).astype(np16)
        for c in MATMULS.values()
        for s in c[0]
    ]

    def products(*ts):
        return {
            name: mm(ts[2 * i], ts[2 * i + 1]) for i, (name, (_, mm)) in enumerate(MATMULS.items())
        }

    got = run(products, *ins)
    f32 = run(products, *(v.astype(np.float32) for v in ins))
    want = products(
        *(torch.from_numpy(v.astype(np.float32)).to(getattr(torch, dtype)) for v in ins)
    )
    exact = dtype == "float16" or _bf16_path() in ("widened", "sbgemm")
    f64 = products(*(torch.from_numpy(v.astype(np.float64)) for v in ins))
    absolute = products(*(torch.from_numpy(np.abs(v.astype(np.float64))) for v in ins))
    ks = products(*(torch.ones(v.shape, dtype=torch.float64) for v in ins))  # k, per element
    for name in MATMULS:
        assert got[name].dtype == np16, name
        if exact:
            np.testing.assert_array_equal(bits(got[name]), bits(f32[name].astype(np16)), name)
        else:
            ref = f64[name].numpy()
            k = ks[name].numpy()
            bound = 2.0**-8 * np.abs(ref) + (k + 1) * 2.0**-24 * absolute[name].numpy()
            assert (np.abs(got[name].astype(np.float64) - ref) <= bound).all(), name
        np.testing.assert_allclose(
            got[name].astype(np.float32),
            want[name].float().numpy(),
            rtol=2**-7,
            atol=1e-2,
            err_msg=name,
        )
