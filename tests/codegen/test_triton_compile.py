"""Every kind of kernel the Triton lowering writes compiles for real GPUs, on this CPU.

The numerics tests (tests/codegen/test_triton_backend.py, tests/gpu/test_cuda_memory.py) run the
kernels under ``TRITON_INTERPRET=1``, which executes them with NumPy and accepts code that
Triton's compiler would refuse (a mismatched block shape, an unsupported cast, a dtype a
``tl.dot`` cannot take). Triton's compiler itself needs no GPU: its bundled LLVM and
``ptxas`` produce PTX and a cubin for any target. So this test records a matrix of programs
(one per code path of `lazytorch.codegen.triton`, and a small GPT's forward and backward),
generates their modules as the triton backend would, compiles every kernel with
`lazytorch.runtime.triton_backend.precompile` for an H100 (sm_90) and an A100 (sm_80),
and checks that no kernel asks for more shared memory than the GPU has (its launch would
fail with OutOfResources).

It runs in a subprocess: the other Triton tests set ``TRITON_INTERPRET=1`` for the whole
pytest process, and under the interpreter nothing is compiled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lazytorch as lt

F = lt.nn.functional
ROOT = Path(__file__).resolve().parents[2]


def r(*shape: int, seed: int = 0, dtype: Any = np.float32) -> lt.Tensor:
    return lt.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def ints(*shape: int, dtype: Any = np.int64) -> lt.Tensor:
    return lt.tensor(np.random.default_rng(1).integers(-9, 10, size=shape).astype(dtype))


# name -> (the outputs of a program, float32 matmul precision); one per code path
CASES: dict[str, Any] = {
    "pointwise_chain": lambda: (F.gelu(r(300, 7) * 2 + 1) * r(300, 7, seed=1).sigmoid()).exp(),
    "transcendentals": lambda: (
        r(64).atan() + r(64).tanh() + r(64).expm1() + r(64).abs().log1p() + r(64).erf()
    ),
    "pow_atan2_f64": lambda: lt.atan2(r(33, dtype=np.float64), r(33, seed=1, dtype=np.float64))
    ** 2.5,
    # one value (a Python number, a 0-d tensor) beside a block in the pow/maximum helpers
    "pow_max_scalar_operands": lambda: (
        r(50).abs() ** 1.7, 2.0 ** r(50), ints(50) ** 1.5, r(50, dtype=np.float64) ** -3,
        lt.maximum(lt.tensor(0.5), r(50)), lt.minimum(r(50), lt.tensor(-0.5)),
        lt.tensor(2.0) ** r(50), lt.tensor(2.0) ** 1.7,
    ),
    "truth_values_of_0d_operands": lambda: (
        (lt.tensor(2.0) > 1.0) & (r(50) > 0), (lt.tensor(0.5) < r(50)) ^ (lt.tensor(1.0) != 0),
    ),
    "float16_math": lambda: (r(40).half() * 3).exp() + r(40, seed=1).half(),
    "bfloat16_math": lambda: (
        (r(40).bfloat16() * 3).exp() + r(40, seed=1).bfloat16(), r(6, 100).bfloat16().sum(1),
        lt.rand(40, dtype=lt.bfloat16), lt.randn(40, dtype=lt.bfloat16),
    ),
    "integer_ops": lambda: (ints(50) // 3, ints(50) % 4, ints(50, dtype=np.int8) * 7, ints(50) & 5),
    "bool_where": lambda: lt.where(r(50) > 0, r(50, seed=1), -r(50, seed=2)),
    "casts": lambda: (r(30).int(), r(30).half(), ints(30).double(), (r(30) > 0).float()),
    "permuted_views": lambda: r(4, 5, 6).permute(2, 0, 1).contiguous() + r(6, 4, 5, seed=1),
    "gather_check": lambda: r(20, 6)[ints(8).abs() % 20] * 2,
    "softmax_short_rows": lambda: F.softmax(r(37, 100), 1),
    "log_softmax_long_rows": lambda: F.log_softmax(r(3, 5000), 1),
    "argmax_argmin": lambda: (r(37, 100).argmax(1), r(3, 5000).argmin(1)),
    "layer_norm_affine": lambda: F.layer_norm(r(37, 100), (100,), r(100, seed=1), r(100, seed=2)),
    "var_mean_columns": lambda: (r(100, 37).var(0), r(100, 37).mean(0)),
    "int_bool_reductions": lambda: (ints(20, 30).sum(1), (r(20, 30) > 0).any(1), ints(20, 30).prod(0)),
    "cumsum_short_and_long": lambda: (r(4, 50).cumsum(1), r(2, 5000).cumsum(1)),
    "scatter_add": lambda: lt.zeros(5, 3).scatter_add(
        0, lt.tensor(np.array([[0, 1, 2], [4, 0, 1]])), r(2, 3)
    ),
    "index_put": lambda: lt.zeros(6, 3).index_put((lt.tensor(np.array([1, 4])),), r(2, 3)),
    # stable: an unstable sort of rows over 16 (torch's introsort order) runs on cpp
    "argsort": lambda: (
        r(6, 100).argsort(1, stable=True),
        r(6, 100).half().argsort(1, descending=True, stable=True),
    ),
    "rand_randn_dropout": lambda: (lt.rand(40, 8) + lt.randn(40, 8, dtype=lt.float64).float(),
                                   F.dropout(r(40, 8), 0.3)),
    "matmul_f32_ieee": lambda: r(70, 40) @ r(40, 90, seed=1),
    "matmul_tf32_grouped": (lambda: r(600, 64) @ r(64, 200, seed=1), "high"),
    "matmul_f16_large_epilogue": lambda: F.relu(
        r(130, 64).half() @ r(64, 130, seed=1).half() + r(130, seed=2).half()
    ),
    "matmul_bf16_large_epilogue": lambda: F.gelu(
        r(130, 64).bfloat16() @ r(64, 130, seed=1).bfloat16() + r(130, seed=2).bfloat16()
    ),
    "matmul_f64_and_int": lambda: (
        r(9, 20, dtype=np.float64) @ r(20, 6, seed=1, dtype=np.float64),
        ints(9, 20, dtype=np.int32) @ ints(20, 6, dtype=np.int32) // 3,
    ),
    "matmul_batched_epilogue": lambda: (r(3, 5, 7) @ r(3, 7, 4, seed=1)).tanh() + r(4, seed=2),
    "matmul_transposed_one_column": lambda: (r(7, 5).t() @ r(7, 1, seed=1)).sigmoid(),
    # MAX_AUTOTUNE: block sizes chosen at launch, tile counts computed in the kernel
    "tuned_matmul_batched_scalar_epilogue": lambda: (r(2, 70, 40) @ r(40, 90, seed=1)) * 0.5,
    "tuned_looped_rows": lambda: r(3, 5000).amax(1) + r(300, 7).exp().sum(),
    # the conv2d extern (implicit GEMM) and its weight gradient, float32 and float64
    "conv2d_and_grads": lambda: _conv_grads(np.float32),
    "conv2d_and_grads_f64": lambda: _conv_grads(np.float64),
    # every kernel of a small GPT's forward and backward (about 50), for sm_90 only
    "gpt_forward_backward": lambda: _gpt_grads(),
}  # fmt: skip
ONLY_SM90 = {"gpt_forward_backward"}


def _conv_grads(dtype: Any) -> tuple[Any, ...]:
    x, w = r(2, 3, 9, 7, dtype=dtype), r(5, 3, 3, 3, seed=1, dtype=dtype)
    x.requires_grad_()
    w.requires_grad_()
    y = F.conv2d(x, w, stride=(2, 1), padding=1)
    y.square().sum().backward()
    return y.detach(), x.grad, w.grad


def _gpt_grads() -> tuple[Any, ...]:
    sys.path.insert(0, str(ROOT))
    from benchmarks.models import gpt

    lt.manual_seed(0)
    model = gpt(lt, vocab=65, context=16, width=32, heads=2, layers=1)
    rng = np.random.default_rng(0)
    idx, tgt = (lt.tensor(rng.integers(0, 65, size=(2, 16))) for _ in range(2))
    loss = model(idx, tgt)[1]
    loss.backward()
    return (loss, *(p.grad for p in model.parameters()))


# Shared memory one block may use (bytes): H100 227 KiB, A100 163 KiB.
SHARED_LIMIT = {90: 227 * 1024, 80: 163 * 1024}


def generate_sources() -> dict[str, str]:
    """Each case's Triton module, as the triton backend generates it."""
    from lazytorch.codegen.triton import generate
    from lazytorch.scheduler import schedule

    out = {}
    for name, case in CASES.items():
        fn, precision = case if isinstance(case, tuple) else (case, "highest")
        res = fn()
        res = res if isinstance(res, tuple) else (res,)
        sched = schedule(lt.debug.program(*res), fuse_epilogues=True)
        tuned = name.startswith("tuned_")
        out[name] = generate(sched, tf32=precision != "highest", autotune=tuned)
    return out


def main() -> None:
    """Compile every case for sm_90 and sm_80; print JSON: case -> kernel -> status."""
    from lazytorch.runtime.triton_backend import precompile

    report: dict[str, dict[str, str]] = {}
    for name, source in generate_sources().items():
        report[name] = {}
        for cap in (90,) if name in ONLY_SM90 else (90, 80):
            try:
                kernels = precompile(source, cap)
            except Exception as e:  # reported per case: the test names every failure
                report[name][f"sm_{cap}"] = f"{type(e).__name__}: {e}"[:3000]
                continue
            for k, compiled in kernels.items():
                ok = compiled.asm.get("cubin") and f".target sm_{cap}" in compiled.asm["ptx"]
                shared = int(compiled.metadata.shared)
                if not ok:
                    report[name][f"{k} sm_{cap}"] = "no cubin"
                elif shared > SHARED_LIMIT[cap]:  # the launch would fail: out of resources
                    report[name][f"{k} sm_{cap}"] = f"{shared} bytes of shared memory"
                else:
                    report[name][f"{k} sm_{cap}"] = "ok"
    print(json.dumps(report))


def test_every_kernel_kind_compiles_for_sm90_and_sm80(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    res = subprocess.run(
        [sys.executable, __file__],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert set(report) == set(CASES)
    failed = {f"{c} {k}": v for c, ks in report.items() for k, v in ks.items() if v != "ok"}
    assert not failed, json.dumps(failed, indent=1)
    for name, kernels in report.items():
        assert any(k.endswith("sm_90") for k in kernels), name
        assert name in ONLY_SM90 or any(k.endswith("sm_80") for k in kernels), name
    assert len(report["gpt_forward_backward"]) >= 40  # each kernel of the step, by name


if __name__ == "__main__":
    main()
