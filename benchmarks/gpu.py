"""GPU benchmarks: lazytorch's Triton backend beside torch eager and torch.compile on one GPU.

    python -m benchmarks.gpu [--repeats 15] [--only chain,softmax,...] [--json out.json]
    python -m benchmarks.gpu --device cpu --smoke --repeats 2     # the harness, on the CPU

Cases and the goals of the GPU issue (lazytorch's speed ÷ the reference's):

  chain          gelu(x*a + b) * sigmoid(x) + 1 over three 2**26 float32 vectors  >= 0.85 × copy
  softmax        softmax over the rows of 8192x4096 float32                         >= 0.80 × copy
  softmax_short  softmax over the rows of 262144x64 float32                         >= 0.80 × copy
  layer_norm     layer_norm of 8192x4096 float32 with weight and bias               >= 0.80 × copy
  gemm_f16       relu(a @ b + bias), 4096³, float16                      >= 0.70 × torch.matmul
  gemm_tf32      the same in float32 with TF32 (float32 matmul precision "high")
                 (lazytorch: lt.set_float32_matmul_precision; torch: allow_tf32 and
                 torch.set_float32_matmul_precision)                     >= 0.70 × torch.matmul
  gemm_bf16      the same in bfloat16 (tl.dot on bfloat16 tiles, float32 accumulation)
                                                                         >= 0.70 × torch.matmul
  gpt_train      a GPT-small training step (benchmarks/training.py's model, batch and
                 AdamW step), model and data on the device                <= torch eager (ms/step)

The copy floor is torch's ``dst.copy_(src)`` on the device moving the same number of bytes
(half read, half written) as an ideal fused kernel for the case: every input read once,
the output written once. GB/s are those ideal bytes ÷ time; TFLOP/s are 2·m·n·k ÷ time.

Timing. A lazytorch call records the expression, ``lt.materialize(out)`` and
``lt.cuda.synchronize()``: what a user pays per call, recording and cache lookup included.
A torch call is the op followed by ``torch.cuda.synchronize()``. Each figure is the median
of --repeats samples, each sample the mean of enough back-to-back calls to last ~25 ms, after
a warm-up call; the first call (lazytorch's compile, torch.compile's) is reported apart. The
goals are judged on these synchronized calls. The "back-to-back" column repeats the
measurement with one synchronization per sample instead of one per call, so host overhead
can overlap the GPU's work: where it passes and the synchronized figure misses, the time
goes to the host (recording, launching), not to the kernels. Training steps are timed in
blocks of steps ending with the loss read back and a synchronization, as in
benchmarks/training.py.

Before timing, every lazytorch result is compared with torch's on the same inputs (float32
within 1e-4 of the largest magnitude, float16 and TF32 GEMMs within 1e-2, the GPT's first
two losses within 2e-3 from identical weights); a mismatch is marked in the table, warned
about, and makes the command exit with status 1, as does a case that raised.

Recording a run: on a machine with an NVIDIA GPU, lazytorch's cuda extra and a CUDA build
of torch, run ``python -m benchmarks.gpu --json gpu.json`` and paste the printed markdown
(heading, command line, table) into benchmarks/RESULTS-gpu.md, newest first. With
``--device cuda`` (the default) the command fails at once, quoting
``lt.cuda.unavailable_reason()``, where lazytorch has no GPU. ``--device cpu --smoke`` runs
every case at tiny sizes on the CPU (lazytorch's cpu device, torch CPU, the copy floor
with torch on the CPU; torch.compile within --compile-budget seconds in all) to test the
harness: its figures mean nothing (tests/gpu/test_gpu_benchmark_smoke.py runs it).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.__main__ import chain, layer_norm, softmax
from benchmarks.models import copy_weights, gpt
from benchmarks.training import GPT, GPT_BATCH, _step

# -- the cases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One benchmark: what it runs, at which sizes, and the goal it is judged against."""

    name: str
    kind: str  # "bandwidth" | "gemm" | "training"
    goal: float  # lazytorch's speed ÷ the reference's must reach this
    reference: str  # what the goal compares against
    full: tuple[int, ...]  # sizes on the GPU
    smoke: tuple[int, ...]  # sizes for --smoke
    dtype: str = "float32"


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case("chain", "bandwidth", 0.85, "copy", (2**26,), (2**12,)),
        Case("softmax", "bandwidth", 0.80, "copy", (8192, 4096), (64, 128)),
        Case("softmax_short", "bandwidth", 0.80, "copy", (262144, 64), (1024, 16)),
        Case("layer_norm", "bandwidth", 0.80, "copy", (8192, 4096), (64, 128)),
        Case("gemm_f16", "gemm", 0.70, "torch.matmul", (4096, 4096, 4096), (64, 64, 64), "float16"),
        Case("gemm_tf32", "gemm", 0.70, "torch.matmul", (4096, 4096, 4096), (64, 64, 64), "tf32"),
        Case("gemm_bf16", "gemm", 0.70, "torch.matmul", (4096, 4096, 4096), (64, 64, 64), "bfloat16"),
        Case("gpt_train", "training", 1.0, "torch eager", (GPT_BATCH,), (2,)),
    )
}  # fmt: skip

BANDWIDTH_FNS: dict[str, Callable[..., Any]] = {
    "chain": chain,
    "softmax": softmax,
    "softmax_short": softmax,
    "layer_norm": layer_norm,
}
SMOKE_GPT = dict(vocab=65, context=16, width=32, heads=2, layers=1)
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "tf32": 1e-2, "bfloat16": 2e-2, "training": 2e-3}


def gemm_epilogue(t: Any, a: Any, b: Any, bias: Any) -> Any:
    """relu(a @ b + bias): the GEMM with a fused epilogue, for torch or lazytorch."""
    return t.relu(t.matmul(a, b) + bias)


def label(case: Case, smoke: bool) -> str:
    s = case.smoke if smoke else case.full
    if case.name == "chain":
        return f"chain gelu(x*a+b)*sigmoid(x)+1, 3×{s[0]} f32"
    if case.name.startswith("softmax"):
        return f"softmax(dim=1), {s[0]}×{s[1]} f32"
    if case.name == "layer_norm":
        return f"layer_norm {s[0]}×{s[1]} f32, weight+bias"
    if case.kind == "gemm":
        kind = {"float16": "f16", "tf32": "f32 TF32", "bfloat16": "bf16"}[case.dtype]
        return f"GEMM relu(a@b+bias) {s[0]}×{s[2]}×{s[1]} {kind}"
    cfg = SMOKE_GPT if smoke else GPT
    return f"GPT training step (width {cfg['width']}, {cfg['layers']} layers, batch {s[0]}), AdamW"


def bandwidth_inputs(case: Case, smoke: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    s = case.smoke if smoke else case.full
    if case.name == "chain":
        return [rng.standard_normal(s, dtype=np.float32) for _ in range(3)]
    x = rng.standard_normal(s, dtype=np.float32)
    if case.name == "layer_norm":
        w, b = (rng.standard_normal(s[1], dtype=np.float32) for _ in range(2))
        return [x, w, b]
    return [x]


# -- results -------------------------------------------------------------------------------------


@dataclass
class Row:
    """One case's figures (seconds per call or per step) and verdicts; JSON as it stands."""

    name: str
    label: str
    kind: str
    reference: str
    goal: float
    supported: bool = True
    unit: str = ""  # "GB/s" | "TFLOP/s" | "ms/step"
    work: float | None = None  # ideal bytes moved, or flops, per call
    lt_s: float | None = None
    eager_s: float | None = None
    compile_s: float | None = None
    ref_s: float | None = None  # the copy floor, torch.matmul, or torch eager
    lt_b2b_s: float | None = None  # back-to-back: one synchronization per sample
    ref_b2b_s: float | None = None
    lt_first_s: float | None = None  # lazytorch's first call: compile (or disk cache) and run
    compile_first_s: float | None = None  # torch.compile's first call
    compile_note: str = ""
    kernels: float | None = None  # lazytorch kernel launches per call
    check_ok: bool | None = None
    max_err: float | None = None  # max |lazytorch - torch| ÷ max |torch|
    tol: float | None = None
    error: str = ""
    note: str = ""
    speed_vs_ref: float | None = None  # ref_s ÷ lt_s
    speed_vs_ref_b2b: float | None = None
    speed_vs_eager: float | None = None
    speed_vs_compile: float | None = None
    result: str = ""  # PASS | MISS | MISMATCH | ERROR | not supported
    extra: dict[str, Any] = field(default_factory=dict)

    def finish(self) -> Row:
        def speed(ref: float | None, ours: float | None) -> float | None:
            return None if ref is None or ours is None or ours <= 0 else ref / ours

        self.speed_vs_ref = speed(self.ref_s, self.lt_s)
        self.speed_vs_ref_b2b = speed(self.ref_b2b_s, self.lt_b2b_s)
        self.speed_vs_eager = speed(self.eager_s, self.lt_s)
        self.speed_vs_compile = speed(self.compile_s, self.lt_s)
        if not self.supported:
            self.result = "not supported"
        elif self.error:
            self.result = "ERROR"
        elif self.check_ok is False:
            self.result = "MISMATCH"
        elif self.speed_vs_ref is not None:
            self.result = "PASS" if self.speed_vs_ref >= self.goal else "MISS"
        return self


def compare(got: np.ndarray, want: np.ndarray, tol: float) -> tuple[bool, float]:
    """(within tolerance, max |got - want| ÷ max |want|): allclose with rtol = tol and
    atol = tol × the largest magnitude, so values near zero are not judged alone."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False, math.inf
    finite = np.isfinite(want)
    scale = float(np.max(np.abs(want[finite]), initial=0.0)) or 1.0
    diff = np.abs(got - want)[finite]
    err = float(np.max(diff, initial=0.0)) / scale
    same_nonfinite = bool(np.array_equal(np.isfinite(got), finite))
    ok = same_nonfinite and bool(np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True))
    return ok, err if same_nonfinite else math.inf


# -- the harness ---------------------------------------------------------------------------------


class Bench:
    """The two libraries on one device, the timing rules, and torch.compile's budget."""

    def __init__(self, args: argparse.Namespace, torch: Any, lt: Any) -> None:
        self.torch, self.lt = torch, lt
        self.device: str = args.device
        self.smoke: bool = args.smoke
        self.repeats: int = args.repeats
        self.target_s = 0.002 if args.smoke else 0.025  # the length of one timing sample
        self.use_compile = not args.no_compile
        self.compile_budget: float | None = args.compile_budget
        self.compile_spent = 0.0
        self.sync_lt: Callable[[], None] = getattr(lt, self.device).synchronize
        self.sync_torch: Callable[[], None] = (
            torch.cuda.synchronize if self.device == "cuda" else lambda: None
        )

    # -- placement
    def lt_tensor(self, a: np.ndarray, dtype: str = "float32") -> Any:
        t = self.lt.from_numpy(a)
        if dtype == "float16":
            t = t.to(self.lt.float16)
        elif dtype == "bfloat16":
            t = t.to(self.lt.bfloat16)
        return t.to(self.device)

    def torch_tensor(self, a: np.ndarray, dtype: str = "float32") -> Any:
        torch = self.torch
        t = torch.from_numpy(a).to(self.device)
        return t.to({"float16": torch.float16, "bfloat16": torch.bfloat16}.get(dtype, t.dtype))

    # -- timing
    def median_call_s(self, fn: Callable[[], Any], sync: Callable[[], None]) -> tuple[float, float]:
        """(synchronized, back-to-back) medians of seconds per call, after a warm-up call."""
        fn()
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        one = time.perf_counter() - t0
        number = max(1, min(200, int(self.target_s / max(one, 1e-7))))
        synced, b2b = [], []
        for _ in range(self.repeats):
            gc.collect()
            sync()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
                sync()
            synced.append((time.perf_counter() - t0) / number)
            sync()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            b2b.append((time.perf_counter() - t0) / number)
        return statistics.median(synced), statistics.median(b2b)

    def first_call_s(self, fn: Callable[[], Any], sync: Callable[[], None]) -> tuple[Any, float]:
        t0 = time.perf_counter()
        out = fn()
        sync()
        return out, time.perf_counter() - t0

    def kernels_per_call(self, fn: Callable[[], Any]) -> float | None:
        counters = getattr(getattr(self.lt, "metrics", None), "counters", None)
        if counters is None:
            return None
        before = counters().get("kernels_launched", 0)
        fn()
        self.sync_lt()
        return float(counters().get("kernels_launched", 0) - before)

    def compiled(self, fn: Any, first: Callable[[Any], Any], row: Row) -> Any:
        """torch.compile(fn) after its first call `first(compiled)` (timed into `row`); None
        when off, over --compile-budget, or failing (the reason goes to row.compile_note)."""
        if not self.use_compile:
            row.compile_note = "off (--no-compile)"
            return None
        if self.compile_budget is not None and self.compile_spent >= self.compile_budget:
            row.compile_note = f"skipped: --compile-budget {self.compile_budget:g} s spent"
            return None
        t0 = time.perf_counter()
        try:
            c = self.torch.compile(fn)
            first(c)
            self.sync_torch()
        except Exception as e:  # a compile failure is a finding, not a crash of the run
            row.compile_note = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
            return None
        finally:
            self.compile_spent += time.perf_counter() - t0
        row.compile_first_s = time.perf_counter() - t0
        return c

    def release(self) -> None:
        gc.collect()
        if self.device == "cuda":
            self.torch.cuda.empty_cache()
            empty = getattr(self.lt.cuda, "empty_cache", None)
            if empty is not None:
                empty()

    # -- cases
    def run(self, case: Case) -> Row:
        row = Row(case.name, label(case, self.smoke), case.kind, case.reference, case.goal)
        try:
            if case.kind == "bandwidth":
                self.bandwidth(case, row)
            elif case.kind == "gemm":
                self.gemm(case, row)
            else:
                self.training(case, row)
        except Exception as e:
            traceback.print_exc()
            row.error = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        finally:
            self.release()
        return row.finish()

    def bandwidth(self, case: Case, row: Row) -> None:
        torch, lt = self.torch, self.lt
        fn = BANDWIDTH_FNS[case.name]
        ins = bandwidth_inputs(case, self.smoke)
        lt_ins = [self.lt_tensor(a) for a in ins]
        t_ins = [self.torch_tensor(a) for a in ins]
        row.unit = "GB/s"

        def run_lt() -> Any:
            out = fn(lt, *lt_ins)
            lt.materialize(out)
            return out

        got, row.lt_first_s = self.first_call_s(run_lt, self.sync_lt)
        with torch.no_grad():
            want = fn(torch, *t_ins)
            row.work = float(sum(a.nbytes for a in ins) + want.numel() * want.element_size())
            row.tol = TOLERANCE["float32"]
            row.check_ok, row.max_err = compare(got.cpu().numpy(), want.cpu().numpy(), row.tol)
            del got, want
            row.kernels = self.kernels_per_call(run_lt)
            row.lt_s, row.lt_b2b_s = self.median_call_s(run_lt, self.sync_lt)

            row.ref_s, row.ref_b2b_s = self.copy_floor_s(int(row.work))
            row.extra["copy_gbps"] = row.work / row.ref_s / 1e9

            row.eager_s, _ = self.median_call_s(lambda: fn(torch, *t_ins), self.sync_torch)

            def plain(*xs: Any) -> Any:
                return fn(torch, *xs)

            c = self.compiled(plain, lambda c: c(*t_ins), row)
            if c is not None:
                row.compile_s, _ = self.median_call_s(lambda: c(*t_ins), self.sync_torch)

    def copy_floor_s(self, nbytes: int) -> tuple[float, float]:
        """torch's ``dst.copy_(src)`` on the device moving `nbytes`: half read, half written."""
        torch = self.torch
        src = torch.empty(nbytes // 8, dtype=torch.float32, device=self.device).normal_()
        dst = torch.empty_like(src)
        return self.median_call_s(lambda: dst.copy_(src), self.sync_torch)

    def gemm(self, case: Case, row: Row) -> None:
        torch, lt = self.torch, self.lt
        row.unit = "TFLOP/s"
        m, n, k = case.smoke if self.smoke else case.full
        row.work = 2.0 * m * n * k
        rng = np.random.default_rng(1)
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32) / np.float32(math.sqrt(k))
        bias = rng.standard_normal(n, dtype=np.float32)
        storage = "float32" if case.dtype == "tf32" else case.dtype
        lt_ins = [self.lt_tensor(v, storage) for v in (a, b, bias)]
        t_ins = [self.torch_tensor(v, storage) for v in (a, b, bias)]

        def run_lt() -> Any:
            out = gemm_epilogue(lt, *lt_ins)
            lt.materialize(out)
            return out

        with matmul_precision(torch, lt, "high" if case.dtype == "tf32" else None), torch.no_grad():
            got, row.lt_first_s = self.first_call_s(run_lt, self.sync_lt)
            want = gemm_epilogue(torch, *t_ins)
            row.tol = TOLERANCE[case.dtype]
            row.check_ok, row.max_err = compare(
                got.float().cpu().numpy(), want.float().cpu().numpy(), row.tol
            )
            del got, want
            row.kernels = self.kernels_per_call(run_lt)
            row.lt_s, row.lt_b2b_s = self.median_call_s(run_lt, self.sync_lt)
            ta, tb, _ = t_ins
            row.ref_s, row.ref_b2b_s = self.median_call_s(
                lambda: torch.matmul(ta, tb), self.sync_torch
            )
            row.eager_s, _ = self.median_call_s(
                lambda: gemm_epilogue(torch, *t_ins), self.sync_torch
            )

            def plain(a: Any, b: Any, bias: Any) -> Any:
                return gemm_epilogue(torch, a, b, bias)

            c = self.compiled(plain, lambda c: c(*t_ins), row)
            if c is not None:
                row.compile_s, _ = self.median_call_s(lambda: c(*t_ins), self.sync_torch)

    def training(self, case: Case, row: Row) -> None:
        torch, lt = self.torch, self.lt
        row.unit = "ms/step"
        cfg = SMOKE_GPT if self.smoke else GPT
        batch = (case.smoke if self.smoke else case.full)[0]
        torch.manual_seed(0)
        tm = gpt(torch, **cfg)
        lm = gpt(lt, **cfg)
        copy_weights(tm, lm, lt)  # identical weights: the losses must agree
        tm.to(self.device)
        lm.to(self.device)
        t_opt = torch.optim.AdamW(tm.parameters(), lr=1e-3)
        l_opt = lt.optim.AdamW(lm.parameters(), lr=1e-3)
        rng = np.random.default_rng(0)
        idx, tgt = (rng.integers(0, cfg["vocab"], size=(batch, cfg["context"])) for _ in range(2))
        t_idx, t_tgt = (torch.from_numpy(v).to(self.device) for v in (idx, tgt))
        l_idx, l_tgt = (lt.tensor(v).to(self.device) for v in (idx, tgt))

        def t_loss(m: Any) -> Any:
            return m(t_idx, t_tgt)[1]

        def l_loss(m: Any) -> Any:
            return m(l_idx, l_tgt)[1]

        # the forward's lib.arange(T) is made on the default device: the device, as in a
        # torch script that sets it
        with torch.device(self.device), lt.device(self.device):
            t0 = time.perf_counter()
            l_losses = [float(_step(lm, l_opt, l_loss).detach())]
            self.sync_lt()
            row.lt_first_s = time.perf_counter() - t0  # the first program: compile and run
            l_losses.append(float(_step(lm, l_opt, l_loss).detach()))  # the second program
            t_losses = [float(_step(tm, t_opt, t_loss).detach()) for _ in range(2)]
            row.tol = TOLERANCE["training"]
            row.check_ok, row.max_err = compare(np.array(l_losses), np.array(t_losses), row.tol)
            row.extra["losses"] = {"lazytorch": l_losses, "torch": t_losses}

            per = 2 if self.smoke else 5
            row.kernels = self.kernels_per_call(lambda: _step(lm, l_opt, l_loss))
            row.lt_s = self.median_step_s(lambda: _step(lm, l_opt, l_loss), self.sync_lt, per)
            # the same step compiled as a whole (lazytorch._compile.step): replayed from
            # its fourth call, so its steady time has no recording in it
            whole = lt.compile(lambda: _step(lm, l_opt, l_loss))
            row.extra["whole_step_s"] = self.median_step_s(whole, self.sync_lt, per)
            row.extra["whole_step_replays"] = whole.stats["hits"]
            row.eager_s = self.median_step_s(lambda: _step(tm, t_opt, t_loss), self.sync_torch, per)
            row.ref_s = row.eager_s
            c = self.compiled(tm, lambda c: _step(c, t_opt, t_loss), row)
            if c is not None:
                row.compile_s = self.median_step_s(
                    lambda: _step(c, t_opt, t_loss), self.sync_torch, per
                )

    def median_step_s(self, step: Callable[[], Any], sync: Callable[[], None], per: int) -> float:
        """Median of --repeats blocks of `per` steps, each block ending with the loss read
        back and a synchronization (seconds per step), after 3 warm-up steps."""
        for _ in range(3):
            step()
        sync()
        times = []
        for _ in range(self.repeats):
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(per):
                loss = step()
            float(loss.detach())
            sync()
            times.append((time.perf_counter() - t0) / per)
        return statistics.median(times)


@contextlib.contextmanager
def matmul_precision(torch: Any, lt: Any, precision: str | None) -> Iterator[None]:
    """float32 matmuls at `precision` ("high": TF32) in both libraries, restored after."""
    if precision is None:
        yield
        return
    saved = (
        lt.get_float32_matmul_precision(),
        torch.get_float32_matmul_precision(),
        torch.backends.cuda.matmul.allow_tf32,
    )
    lt.set_float32_matmul_precision(precision)
    torch.set_float32_matmul_precision(precision)
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        lt.set_float32_matmul_precision(saved[0])
        torch.set_float32_matmul_precision(saved[1])
        torch.backends.cuda.matmul.allow_tf32 = saved[2]


# -- the report ----------------------------------------------------------------------------------


def figure(row: Row, seconds: float | None) -> str:
    """A cell: throughput and time (GB/s, TFLOP/s), or ms per step."""
    if seconds is None:
        return "—"
    if row.unit == "ms/step":
        return f"{seconds * 1e3:.2f} ms"
    scale = 1e9 if row.unit == "GB/s" else 1e12
    rate = (row.work or 0.0) / seconds / scale
    digits = 0 if rate >= 100 else 1 if rate >= 10 else 2 if rate >= 0.1 else 4
    return f"{rate:.{digits}f} {row.unit} ({seconds * 1e3:.3f} ms)"


def times(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def goal_text(row: Row) -> str:
    if row.kind == "training":
        return "≤ torch eager"
    return f"≥ {row.goal:.2f} × {row.reference}"


def check_text(row: Row) -> str:
    if row.error:
        return f"**ERROR** {row.error}"
    if row.check_ok is None:
        return "—"
    err = f"{row.max_err:.1e}" if row.max_err is not None and math.isfinite(row.max_err) else "inf"
    if row.check_ok:
        return f"ok ({err})"
    return f"**MISMATCH** max err {err} > tol {row.tol:.0e}"


def markdown(rows: list[Row]) -> str:
    head = (
        "| case | lazytorch | torch eager | torch.compile | floor / reference | speed vs ref "
        "| goal | result | speed vs eager | speed vs compile | speed vs ref, back-to-back "
        "| kernels | first call: lt / torch.compile | check vs torch |"
    )
    lines = [head, "|---|" + "---:|" * 5 + "---|---|" + "---:|" * 5 + "---|"]
    for r in rows:
        if not r.supported:
            lines.append(f"| {r.label} | {r.note} |" + " — |" * 5 + " not supported |" + " — |" * 6)
            continue
        if r.kind == "training":
            ref = "= torch eager"
        else:
            name = "copy" if r.reference == "copy" else r.reference
            ref = f"{name} {figure(r, r.ref_s)}"
        comp = figure(r, r.compile_s) if r.compile_s is not None else (r.compile_note or "—")
        first_lt = "—" if r.lt_first_s is None else f"{r.lt_first_s:.2f} s"
        first_c = "—" if r.compile_first_s is None else f"{r.compile_first_s:.2f} s"
        result = f"**{r.result}**" if r.result in ("MISMATCH", "ERROR") else r.result
        kernels = "—" if r.kernels is None else f"{r.kernels:g}"
        lines.append(
            f"| {r.label} | {figure(r, r.lt_s)} | {figure(r, r.eager_s)} | {comp} | {ref} | "
            f"{times(r.speed_vs_ref)} | {goal_text(r)} | {result} | {times(r.speed_vs_eager)} | "
            f"{times(r.speed_vs_compile)} | {times(r.speed_vs_ref_b2b)} | {kernels} | "
            f"{first_lt} / {first_c} | {check_text(r)} |"
        )
    for r in rows:
        whole = r.extra.get("whole_step_s") if r.supported else None
        if whole is not None and r.eager_s:
            lines.append(
                f"\n{r.label}, compiled as a whole step (`lazytorch.compile` of forward, "
                f"backward and update; {r.extra['whole_step_replays']} replays): "
                f"{whole * 1e3:.2f} ms, {r.eager_s / whole:.2f}× torch eager's speed."
            )
    return "\n".join(lines)


def describe_device(torch: Any, device: str) -> str:
    if device == "cuda":
        return str(torch.cuda.get_device_name())
    return f"CPU: {platform.processor() or platform.machine()}"


def versions(torch: Any) -> str:
    parts = [f"Python {platform.python_version()}", f"torch {torch.__version__}"]
    cuda = getattr(torch.version, "cuda", None)
    if cuda:
        parts.append(f"CUDA {cuda}")
    try:
        import triton

        parts.append(f"Triton {triton.__version__}")
    except ImportError:
        pass
    return ", ".join(parts)


def require_device(lt: Any, torch: Any, device: str) -> None:
    """Exit with a clear message when `device` cannot run both libraries."""
    if device != "cuda":
        return
    cuda = getattr(lt, "cuda", None)
    if cuda is None or not cuda.is_available():
        why = getattr(cuda, "unavailable_reason", lambda: None)() if cuda is not None else None
        sys.exit(
            "benchmarks.gpu: lazytorch has no CUDA device"
            + (f": {why}" if why else " (lazytorch.cuda.is_available() is False)")
            + "\n(--device cpu --smoke runs the harness on the CPU)"
        )
    if not torch.cuda.is_available():
        sys.exit(
            f"benchmarks.gpu: torch {torch.__version__} sees no CUDA device; the comparison "
            "needs a CUDA build of torch"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="timing samples per figure")
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated cases")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: tests the harness")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument(
        "--compile-budget",
        type=float,
        default=None,
        help="seconds of torch.compile first calls after which it is skipped "
        "(default: none on cuda, 15 on cpu)",
    )
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.compile_budget is None and args.device == "cpu":
        args.compile_budget = 15.0
    names = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in names if s not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; the cases are {', '.join(CASES)}")

    if args.device == "cpu":
        # two OpenMP pools (lazytorch's programs, torch's) spinning on the same cores slow
        # each other down by orders of magnitude; on the CPU only the harness is tested
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch
    except ImportError:
        sys.exit("benchmarks.gpu: torch is needed (the peers, the copy floor and the checks)")
    import lazytorch as lt

    require_device(lt, torch, args.device)
    bench = Bench(args, torch, lt)
    command = "python -m benchmarks.gpu " + " ".join(
        sys.argv[1:] if argv is None else argv
    )  # fmt: skip
    device_name = describe_device(torch, args.device)
    print(f"## {time.strftime('%Y-%m-%d')} — {device_name}\n")
    print(f"{versions(torch)}. `{command.strip()}`: medians of {args.repeats} samples.\n")

    rows = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows.append(bench.run(CASES[name]))
    print(markdown(rows))
    print(
        "\nspeed = the peer's time ÷ lazytorch's (> 1: lazytorch is faster); the goal is judged "
        "on 'speed vs ref'. GB/s count an ideal fused kernel's bytes (inputs read once, output "
        "written once); the copy floor moves as many."
    )
    bad = [r for r in rows if r.result in ("MISMATCH", "ERROR")]
    for r in bad:
        what = r.error or f"max err {r.max_err} > tol {r.tol}"
        print(f"\nWARNING: {r.name}: {r.result}: {what}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                    "device": device_name,
                    "versions": versions(torch),
                    "command": command.strip(),
                    "repeats": args.repeats,
                    "smoke": args.smoke,
                    "cases": {r.name: asdict(r) for r in rows},
                },
                indent=2,
            )
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
