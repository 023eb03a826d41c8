"""Triton source for a schedule: one ``@triton.jit`` kernel per schedule Kernel, one ``run``.

This lowers the same `Schedule` the C++ code generator prints (`lazytorch.codegen.cpp`):
the scheduler decides fusion, this module only decides how each kernel's loops map onto
Triton programs. The generated module is plain Python: helper functions (``_lt_*``), the
kernels ``k0``, ``k1``, ... (named like the schedule's kernels, each headed by the same
``# k0 [pointwise ...]: fused[...]`` line as the C++), and ``run(bufs, ia, fa, err)``, which
launches them in schedule order.

Program layout
--------------
* A **pointwise** kernel flattens its outer space: program ``p`` handles the ``XBLOCK``
  consecutive positions ``xindex = p*XBLOCK + arange(XBLOCK)``, masked by
  ``xmask = xindex < xnumel``.
* A **reduction** kernel runs one program per outer point (``xindex = program_id(0)``, a
  scalar) and walks the flattened inner space with ``rindex``:

  - *persistent* when the row has at most `PERSISTENT_MAX` elements: the whole row is one
    block of ``RBLOCK`` (the next power of two) lanes, masked by ``rmask``. Every inner
    value is computed once and stays live for the later passes (softmax's ``exp(x - max)``
    is computed in pass 2 and reused by pass 3: what the C++ row cache does, for free);
  - *looped* otherwise: each pass is a ``for roffset in range(0, rnumel, RBLOCK)`` loop that
    keeps ``RBLOCK`` partial accumulators and recomputes the inner values it needs (a long
    row does not fit in registers), like the C++ lane loops without the row cache. The
    partials are combined by a tree reduction after the loop.

  Short persistent rows (up to `MULTI_ROW_RBLOCK` lanes, not scans) run **several to a
  program**: ``xindex`` is a column of ``XBLOCK`` rows (``[:, None]``) and ``rindex`` a row
  of lanes (``[None, :]``), so the block is ``XBLOCK x RBLOCK`` (at most `MULTI_ROW_ELEMS`
  lanes), masked by ``xmask & rmask``. Reductions run over axis 1 with ``keep_dims=True``,
  so a row's result is an ``[XBLOCK, 1]`` block that broadcasts against its row, and row
  values are stored with ``xmask``.

  Passes follow the scheduler's semantics exactly: pass ``p`` computes the reductions with
  ``pass_no == p`` and the element stores of that pass; outer values are computed as soon as
  the reductions they read are done; outer stores follow their pass.

* A **scan** kernel (cumsum) is laid out like a persistent reduction, one program per outer
  point, the row in one block: ``a<id> = tl.cumsum(block, 0)`` is the running sum of every
  element (float16 accumulates in float32, each prefix rounded; bools are a running or;
  int8/int16 wrap like C). A row longer than `PERSISTENT_MAX` is scanned block by block in
  a loop: each block's prefix sums plus a carry, the sum of the blocks before it, kept in
  the widened type. On a GPU ``tl.cumsum`` adds in tree order, so float prefixes may differ
  from the C++ sequential loop in the last bits (the interpreter adds sequentially).
* An **extern matmul** (`_MatmulWriter`) is a tiled GEMM over the operands' `StridedView`s:
  any offset and strides, so transposed, sliced and broadcast (stride-0 batch) operands are
  read in place. A flat grid of ``nbatch * tiles_m * tiles_n`` programs (no 65535 limit on
  the batch); each computes a ``BLOCK_M x BLOCK_N`` tile (``tl.constexpr``: defaults
  `MATMUL_BLOCKS`, `MATMUL_BLOCKS_BIG` with 8 warps for large tensor-core products,
  shrunk for small products; candidates in ``MAX_AUTOTUNE`` mode), walking K in
  ``BLOCK_K`` steps with masked edges. Tiles are visited in groups of `GROUP_M` rows of
  tiles, column by column, so the columns of B a group reads stay in L2. float32 and
  float16 use ``tl.dot`` accumulating in float32 with ``input_precision="ieee"`` (no TF32
  unless ``set_float32_matmul_precision`` allows it, so results match the reference
  closely); float64 and
  integers (summed in int64, as the C++ loop) use ``tl.sum(a[:, :, None] * b[None, :, :], 1)``
  per K block (`MATMUL_BLOCKS_SUM`), as ``tl.dot`` does not take them everywhere. The output
  is contiguous, stored in its dtype.
* A matmul with an **epilogue** (the scheduler's decision, `lazytorch.scheduler.epilogue`:
  bias, activation, residual add ...) computes the epilogue kernel on each tile after the
  K loop (`_EpilogueWriter`): its loop variables are the tile's ``row``/``col`` (and the
  batch ``bi``), its loads of the product are the accumulator rounded to the product's
  dtype, and the product is stored only if something else reads it.

Index expressions
-----------------
Loop variables ``o<i>`` / ``r<i>`` are replaced by the unravelled flat index
(``xindex // 8 % 4`` ...) and the expression is re-simplified by `scheduler.indexing`, so a
contiguous access collapses back to ``xindex`` (its recombination rule) and a permuted one
keeps only the divisions it needs. `texpr` prints the result for Triton: ``//`` and ``%``
where the dividend is provably non-negative (Triton's integer division truncates like C),
``_lt_floordiv`` / ``_lt_floormod`` otherwise, clamps as ``tl.minimum(tl.maximum(...))``.
Gathered indices (``Dyn`` terms) are the kernel values they name. Indices are int32 unless
some buffer or expression can reach 2**31, then int64.

Semantics mirrored from the C++ lowering (`codegen/cpp_ops.py`, ``lazytorch_runtime.h``)
---------------------------------------------------------------------------------------
NaN-propagating max/min (and their reductions), first-index-wins argmax/argmin with NaN
winning, Python-style integer ``//`` and ``%``, integer powers with torch's rules, C casts
(float -> int truncates, ``!= 0`` for bool), float16 computed in float32 and rounded after
every primitive, small integer types wrapping. Float32 division and square root use the
correctly rounded ``tl.div_rn`` / ``tl.sqrt_rn`` (plain ``/`` is approximate on NVIDIA).
Transcendentals without a ``tl`` builtin are written out so that they run everywhere,
including ``TRITON_INTERPRET=1`` (no libdevice): ``expm1``/``log1p`` by Kahan's
cancellation trick, ``tanh`` from ``expm1``, ``atan``/``atan2`` by the Cephes rational
approximation in float64, ``pow`` as ``exp(b*log|a|)`` in float64 with C99's special cases
(float64 results may differ from libm by a few ulps times ``|b*log a|``).

Random numbers (``rand``) are the reference Philox4x32-10 (`lazytorch.ir.philox`,
``lt::philox``) written out in uint32 arithmetic (``tl.umulhi`` for the high words): counter
``offset + linear index`` as (lo, hi, 0, 0), key ``seed`` (lo, hi), the seed and offset slots'
int64 bits read as uint64. Uniform draws convert the words exactly as ``lt::rand_uniform_*``
(so they are bit-identical everywhere); normal draws are Box-Muller in float64 over
``tl.log``/``tl.cos``/``tl.sqrt``, rounded once to the output dtype: bit-identical under the
interpreter (NumPy's functions, as the reference), within libdevice's ulps of libm on a GPU.

Errors a kernel finds (an out-of-range gathered index, an integer division by zero) are
reported as in the C++ runtime: the first report claims ``err[0] = instruction + 1`` with a
compare-and-swap and fills ``err[1:5]`` (kind, details); the offending lane reads element 0
or yields 0, so later kernels stay in bounds. The host checks ``err`` once after ``run``.

Scalar slots (Python numbers the program takes) are read from two small device arrays,
``ia`` (int64) and ``fa`` (float64), like the C++ ``ia``/``fa``: a Python float kernel
argument would be typed float32 by Triton, losing float64 scalars, and varying integer
arguments would be re-specialized. Sizes (``xnumel``, ``rnumel``) are kernel arguments;
block sizes are ``tl.constexpr``.

An **extern conv** (`_ConvWriter`) is an implicit GEMM: output pixels (image, row, column)
by output channels, summed over (channel, tap) in ``BLOCK_K`` steps whose input tile is
gathered straight from the unpadded input (padding is the load's mask): ``tl.dot`` in
float32 (``input_precision="ieee"`` unless TF32 is allowed), a broadcast-and-sum tile in
float64. Its weight gradient (`_ConvWgradWriter`) is the same product transposed: weight
elements (output channel by (channel, tap)) summed over output pixels.

An **extern argsort** (`_ArgsortWriter`) is one program per row, the row in one block:
each value packed with its position into a 64-bit key and ``tl.sort``-ed (a stable sort).

Elementwise primitives are lowered by the table of `lazytorch.codegen.triton_ops`, and the
``_lt_*`` helpers they call are the ``@triton.jit`` functions of ``triton_helpers.py``,
copied into the module as text (only those it uses).

Not supported yet (`TritonLoweringMissing`, a NotImplementedError naming the kernel or op
and "triton backend"): argsort of values wider than 32 bits (float64, int64) or of rows
longer than `PERSISTENT_MAX`, scatter-multiply, scatter-add into other dtypes than
`ATOMIC_ADD_DTYPES` (`lazytorch.scheduler.kernel`) or under deterministic algorithms, and
primitives without an entry in `triton_ops.LOWERINGS`. A **scatter** kernel is laid out
like a pointwise one over its source; its store goes to the gathered index, with
``tl.store`` (scatter) or ``tl.atomic_add`` (scatter-add: several lanes may add into one
element).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from lazytorch.codegen.triton_ops import (
    CHECKS_DIVISOR,
    TL,
    TritonLoweringMissing,
    compute_tl,
    helpers,
    lower,
    round_low,
    storage_tl,
)
from lazytorch.codegen.triton_ops import LOWERINGS as TRITON_LOWERINGS
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import format_loc
from lazytorch.ir.primitives import REDUCE_KINDS
from lazytorch.scheduler.indexing import Clamp, Expr, FloorDiv, Mod, Var, unravel
from lazytorch.scheduler.indexing import _Dyn as DynTerm  # term types, to print them
from lazytorch.scheduler.indexing import _Var as VarTerm
from lazytorch.scheduler.kernel import (
    ATOMIC_ADD_DTYPES,
    Extern,
    Kernel,
    KVal,
    Reduce,
    Schedule,
    Store,
    StridedView,
)

__all__ = [
    "LOOP_RBLOCK",
    "MATMUL_BLOCKS",
    "MATMUL_BLOCKS_SUM",
    "MAX_XBLOCK",
    "PERSISTENT_MAX",
    "TritonLoweringMissing",
    "generate",
    "kernel_names",
]

PERSISTENT_MAX = 4096  # row elements up to which a reduction keeps its whole row in one block
# Persistent rows up to MULTI_ROW_RBLOCK lanes run several to a program, XBLOCK rows of at
# most MULTI_ROW_ELEMS lanes in all (and at most MAX_ROWS rows): a program per short row
# would leave most of each program's lanes idle.
MULTI_ROW_RBLOCK = 1024
MULTI_ROW_ELEMS = 2048
MAX_ROWS = 64
LOOP_RBLOCK = 1024  # lanes per iteration of a looped reduction
MAX_XBLOCK = 1024  # positions per program of a pointwise kernel
INDENT = "    "
# Every launch compiles without floating-point contraction: a*b + c stays a multiply and an
# add, each rounded, as in the reference interpreter and the C++ backend (-ffp-contract=off).
# Triton's NVIDIA backend would otherwise fuse them into FMAs, one rounding instead of two.
NO_FP_FUSION = {"enable_fp_fusion": False}


# -- index expressions ------------------------------------------------------------------------
def texpr(e: Expr, used: set[str] | None = None) -> str:
    """Triton source for index expression `e` (records the helpers it needs in `used`)."""
    used = used if used is not None else set()
    parts = []
    for t in sorted(e.terms):
        c = e.terms[t]
        s = _term(t, used)
        atom = isinstance(t, (VarTerm, DynTerm, Clamp))
        if c == 1:
            parts.append(s)
        elif c == -1:
            parts.append(f"-{s}" if atom else f"-({s})")
        else:
            parts.append(f"{s} * {c}" if atom else f"({s}) * {c}")
    if e.const or not parts:
        parts.append(str(e.const))
    return " + ".join(parts).replace("+ -", "- ")


def _term(t: Any, used: set[str]) -> str:
    if isinstance(t, (VarTerm, DynTerm)):
        return t.name
    if isinstance(t, Clamp):
        return f"tl.minimum(tl.maximum({texpr(t.e, used)}, {t.lo}), {t.hi})"
    if isinstance(t, (FloorDiv, Mod)):
        inner = texpr(t.e, used)
        if t.e.range()[0] >= 0:  # non-negative: Triton's truncating // and % are floor ones
            simple = len(t.e.terms) + (t.e.const != 0) <= 1 and all(
                c == 1 for c in t.e.terms.values()
            )
            op = "//" if isinstance(t, FloorDiv) else "%"
            return f"{inner if simple else f'({inner})'} {op} {t.k}"
        fn = "_lt_floordiv" if isinstance(t, FloorDiv) else "_lt_floormod"
        used.add(fn)
        return f"{fn}({inner}, {t.k})"
    raise TritonLoweringMissing(f"index term {t!r}")


def _const_text(value: Any, d: dt.DType) -> str:
    """A typed scalar constant (Triton would type a bare Python literal by its own rules)."""
    if d is dt.bool_:
        return f"tl.full([], {1 if value else 0}, tl.int1)"
    if not d.is_floating_point:
        return f"tl.full([], {int(value)}, {TL[d.name]})"
    v = float(value)
    if math.isnan(v):
        text = 'float("nan")'
    elif math.isinf(v):
        text = 'float("inf")' if v > 0 else '-float("inf")'
    else:
        if d is not dt.float64:
            import numpy as np

            v = float(np.asarray(v, dtype=d.np))  # the value as the reference rounds it
        text = repr(v)
    return f"tl.full([], {text}, {compute_tl(d)})"


def _init_text(r_kind: str, src: dt.DType) -> str:
    """The identity of a reduction, as a Python literal (typed by the tensor it meets)."""
    if r_kind == "sum":
        return "0"
    if r_kind == "prod":
        return "1"
    is_max = r_kind in ("max", "argmax")
    if src is dt.bool_:
        return "0" if is_max else "1"  # bool values are reduced as int8
    if src.is_floating_point:
        return '-float("inf")' if is_max else 'float("inf")'
    bits = src.itemsize * 8
    if src.is_signed:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        lo, hi = 0, (1 << bits) - 1
    return str(lo if is_max else hi)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _prod(xs: Iterable[int]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


# -- kernels -----------------------------------------------------------------------------------
class _KernelWriter:
    """Writes one schedule Kernel as a @triton.jit function (see the module docstring)."""

    def __init__(
        self, sched: Schedule, k: Kernel, used: set[str], deterministic: bool = False
    ) -> None:
        self.sched = sched
        self.k = k
        self.used = used  # helpers the module must define
        self.deterministic = deterministic
        self.scan = k.kind == "scan"
        self.reduction = k.kind in ("reduction", "scan")  # one program per outer point
        self.xnumel = _prod(k.outer)
        self.rnumel = _prod(k.inner) if self.reduction else 1
        self.persistent = self.rnumel <= PERSISTENT_MAX
        self._check_supported()
        # several rows per program: short persistent rows (not scans) in 2-D blocks
        self.multi = False
        if self.reduction:
            self.rblock = _next_pow2(self.rnumel) if self.persistent else LOOP_RBLOCK
            self.xblock = 1
            if self.persistent and not self.scan and self.rblock <= MULTI_ROW_RBLOCK:
                self.xblock = min(
                    _next_pow2(self.xnumel), max(1, MULTI_ROW_ELEMS // self.rblock), MAX_ROWS
                )
                self.multi = self.xblock > 1
        else:
            self.rblock = 1
            self.xblock = min(_next_pow2(self.xnumel), MAX_XBLOCK)
        # o<i> and r<i> as functions of the flat indices: contiguous accesses simplify back
        mapping: dict[str, Expr] = {}
        for i, e in enumerate(unravel(Var("xindex", self.xnumel), k.outer)):
            mapping[f"o{i}"] = e
        if self.reduction:
            for i, e in enumerate(unravel(Var("rindex", self.rnumel), k.inner)):
                mapping[f"r{i}"] = e
        self.mapping = mapping
        self._flags()

    def _flags(self) -> None:
        """Index width, the arrays the kernel reads, and which values are blocks (from
        `mapping`, the loop variables as functions of the program's lanes)."""
        k = self.k
        reach = max([self.xnumel * self.rnumel] + [self.sched.buffers[b].numel for b in self.bufs])
        for e in self.k.exprs():
            lo, hi = e.substitute(self.mapping).range()
            reach = max(reach, abs(lo) if lo > -math.inf else 0, hi if hi < math.inf else 0)
        self.wide = reach >= 2**31 - 1
        self.uses_ia = any(v.op == "scalar" and not v.dtype.is_floating_point for v in k.values)
        self.uses_fa = any(v.op == "scalar" and v.dtype.is_floating_point for v in k.values)
        self.uses_err = any(
            v.op == "check"
            or (
                v.op == "prim"
                and v.attr[0] in ("floordiv", "remainder", "fmod")
                and not v.dtype.is_floating_point
            )
            for v in k.values
        )
        # whether each value is a block (varies across lanes) or a scalar of the program
        self.block: dict[int, bool] = {}
        for v in k.values:
            self.block[v.id] = self._is_block(v)

    # -- what is supported ---------------------------------------------------------------------
    def _check_supported(self) -> None:
        k = self.k
        where = k.describe()
        if k.kind not in ("pointwise", "reduction", "scan", "scatter"):
            raise TritonLoweringMissing(f"{k.kind} kernel {where!r}")
        for v in k.values:
            if v.op not in (
                "load",
                "rand",
                "scalar",
                "const",
                "index",
                "inrange",
                "prim",
                "select",
                "acc",
                "check",
                "after",
            ):
                raise TritonLoweringMissing(f"kernel value op {v.op!r} (kernel {where!r})")
            if v.op == "prim" and v.attr[0] not in TRITON_LOWERINGS:
                raise TritonLoweringMissing(f"primitive {v.attr[0]!r} (kernel {where!r})")
        for r in k.reductions:
            if r.kind not in (("cumsum",) if k.kind == "scan" else REDUCE_KINDS):
                raise TritonLoweringMissing(f"reduction {r.kind!r} (kernel {where!r})")
        for s in k.stores:
            if s.mode == "set":
                continue
            b = self.sched.buffers[s.buffer]
            if s.mode != "add" or b.dtype not in ATOMIC_ADD_DTYPES:
                raise TritonLoweringMissing(
                    f"store mode {s.mode!r} into {b.dtype.name} (kernel {where!r})"
                )
            if self.deterministic:
                # Atomic adds land in whatever order the lanes run: float sums could differ
                # from run to run (the C++ backend serializes this kernel instead).
                raise TritonLoweringMissing(
                    f"scatter-add under deterministic algorithms (kernel {where!r})"
                )

    @property
    def bufs(self) -> list[int]:
        return sorted(self.k.reads | self.k.writes)

    def expr(self, e: Expr) -> str:
        return texpr(e.substitute(self.mapping), self.used)

    def expr_is_block(self, e: Expr) -> bool:
        for name in e.substitute(self.mapping).vars():
            if name == "rindex" or (name == "xindex" and (self.multi or not self.reduction)):
                return True
            if name.startswith("v") and self.block.get(int(name[1:]), False):
                return True
        return False

    def _is_block(self, v: KVal) -> bool:
        if v.op == "load":
            return self.expr_is_block(v.attr[1])
        if v.op == "inrange":
            return self.expr_is_block(v.attr[0])
        if v.op == "rand":
            return self.expr_is_block(v.attr[0]) or any(self.block[a] for a in v.args)
        if v.op == "index":
            return self.expr_is_block(v.attr)
        if v.op == "acc":
            # a running sum has one value per element; several rows, one value per row
            return self.scan or self.multi
        if v.op in ("scalar", "const"):
            return False
        return any(self.block[a] for a in v.args)

    def mask_for(self, v_inner: bool) -> str | None:
        if not self.reduction:
            return "xmask"
        if self.multi:
            return "xmask & rmask" if v_inner else "xmask"
        return "rmask" if v_inner else None

    def value_mask(self, v: KVal) -> str | None:
        """The mask of block value `v`'s load."""
        return self.mask_for(v.inner)

    # -- values ----------------------------------------------------------------------------------
    def ref(self, vid: int) -> str:
        v = self.k.values[vid]
        return f"a{v.attr}" if v.op == "acc" else f"v{vid}"

    def value_lines(self, v: KVal) -> list[str]:
        """The statements computing value `v` (empty for accumulators)."""
        a = [self.ref(x) for x in v.args]
        ct = compute_tl(v.dtype)
        mask = self.value_mask(v) if self.block[v.id] else None
        if v.op == "acc":
            return []
        if v.op == "load":
            bid, idx = v.attr
            at = self.expr(idx)
            ptr = f"b{bid} + {self._paren(at)}" if at != "0" else f"b{bid}"
            text = f"tl.load({ptr}, mask={mask}, other=0)" if mask else f"tl.load({ptr})"
            if v.dtype.is_low_float:
                text += ".to(tl.float32)"
            return [f"v{v.id} = {text}"]
        if v.op == "scalar":
            src = "fa" if v.dtype.is_floating_point else "ia"
            text = f"tl.load({src} + {v.attr})"
            if v.dtype is dt.bool_:
                return [f"v{v.id} = {text} != 0"]
            if v.dtype.is_low_float:
                return [f"v{v.id} = {round_low(text, v.dtype, self.helper)}"]
            if v.dtype in (dt.float64, dt.int64):
                return [f"v{v.id} = {text}"]
            return [f"v{v.id} = {text}.to({ct})"]
        if v.op == "const":
            return [f"v{v.id} = {_const_text(v.attr, v.dtype)}"]
        if v.op == "index":
            e = v.attr.substitute(self.mapping)
            if e.is_const():
                return [f"v{v.id} = tl.full([], {e.const}, tl.int64)"]
            return [f"v{v.id} = ({self.expr(v.attr)}).to(tl.int64)"]
        if v.op == "inrange":
            e, lo, hi = v.attr
            es = e.substitute(self.mapping)
            if es.is_const():
                return [f"v{v.id} = tl.full([], {int(lo <= es.const <= hi)}, tl.int1)"]
            c = self._paren(self.expr(e))
            return [f"v{v.id} = ({c} >= {lo}) & ({c} <= {hi})"]
        if v.op == "select":
            return [f"v{v.id} = tl.where({a[0]}, {a[1]}, {a[2]})"]
        if v.op == "rand":
            return self.rand_lines(v, a)
        if v.op == "after":
            return [f"v{v.id} = {a[0]}  # after the check v{v.args[1]}"]
        if v.op == "check":
            size, origin, axis = v.attr
            i = a[0]
            lines = [f"v{v.id}_bad = ({i} < 0) | ({i} >= {size})"]
            lines += self.report(f"v{v.id}_bad", v.id, origin, 1, i, str(size), str(axis))
            # an out-of-range index reads element 0 instead (lt::checked_index)
            lines.append(f"v{v.id} = tl.where(v{v.id}_bad, 0, {i})")
            return lines
        if v.op == "prim":
            name = v.attr[0]
            origin = v.attr[2] if len(v.attr) > 2 else -1
            in_dtypes = [self.k.values[x].dtype for x in v.args]
            lines = []
            if name in CHECKS_DIVISOR and not v.dtype.is_floating_point:
                lines.append(f"v{v.id}_bad = {a[1]} == 0")
                # (the details of a division by zero are zeros: the divisor where it failed)
                zero = f"{a[1]}.to(tl.int64)" if self.block[v.id] else "0"
                lines += self.report(f"v{v.id}_bad", v.id, origin, 2, zero, "0", "0")
            rhs = lower(name, a, in_dtypes, v.dtype, self.used.add)
            if v.dtype is dt.bool_ and not self.block[v.id]:
                # One truth value (from 0-d operands). Triton's interpreter types a 0-d
                # comparison's result (and & or | of one) as its operands' dtype, so
                # broadcasting it into a block's & or | gives floats that & refuses; a
                # select types it as int1 (on a GPU it costs nothing).
                rhs = f"tl.where({rhs}, True, False)"
            lines.append(f"v{v.id} = {rhs}")
            return lines
        raise TritonLoweringMissing(f"kernel value op {v.op!r}")

    def rand_lines(self, v: KVal, a: list[str]) -> list[str]:
        """Philox draws as lt::rand_* (codegen/cpp.py): counter = offset + linear index."""
        lin, dist = v.attr
        e = lin.substitute(self.mapping)
        idx = f"tl.full([], {e.const}, tl.int64)" if e.is_const() else f"({self.expr(lin)})"
        # seed and offset are int64 slots holding uint64 bits; the sum wraps like uint64_t
        seed = f"{a[0]}.to(tl.uint64, bitcast=True)"
        counter = f"{a[1]}.to(tl.uint64, bitcast=True) + {idx}.to(tl.int64).to(tl.uint64)"
        lines = [f"v{v.id}_ctr = {counter}", f"v{v.id}_seed = {seed}"]
        call = f"(v{v.id}_ctr, v{v.id}_seed)"
        if dist == "normal":
            z = f"{self.helper('_lt_rand_normal')}{call}"
            if v.dtype is dt.float64:
                rhs = z
            elif v.dtype.is_low_float:  # rounded from float64 directly
                rhs = round_low(z, v.dtype, self.helper)
            else:
                rhs = f"{z}.to({TL[v.dtype.name]})"
        else:
            fn = {
                "float32": "_lt_rand_uniform_f32",
                "float64": "_lt_rand_uniform_f64",
                "float16": "_lt_rand_uniform_f16",
                "bfloat16": "_lt_rand_uniform_bf16",
            }
            rhs = f"{self.helper(fn[v.dtype.name])}{call}"
        return [*lines, f"v{v.id} = {rhs}"]

    def report(
        self, bad: str, vid: int, origin: int, kind: int, a: str, size: str, axis: str
    ) -> list[str]:
        if self.block[vid]:
            mask = self.mask_for(self.k.values[vid].inner)
            self.used.add("_lt_report")
            cond = f"{bad} & {mask}" if mask else bad
            return [f"_lt_report(err, {cond}, {origin}, {kind}, {a}, {size}, {axis})"]
        self.used.add("_lt_report1")
        return [
            f"if {bad}:",
            f"{INDENT}_lt_report1(err, {origin}, {kind}, {a}, {size}, {axis})",
        ]

    @staticmethod
    def _paren(text: str) -> str:
        return text if text.replace("_", "").isalnum() else f"({text})"

    def helper(self, name: str) -> str:
        self.used.add(name)
        return name

    # -- dependency walks (as the C++ writer's) --------------------------------------------------
    def closure(self, roots: list[int], want_inner: bool) -> list[int]:
        """Values of one level that `roots` depend on, in order (`Kernel.closure`)."""
        return self.k.closure(roots, want_inner)

    def emit(self, ids: list[int], out: list[str], depth: int, done: set[int]) -> None:
        for x in ids:
            if x in done:
                continue
            done.add(x)
            out += [INDENT * depth + line for line in self.value_lines(self.k.values[x])]

    def store_line(self, s: Store) -> str:
        b = self.sched.buffers[s.buffer]
        val = self.ref(s.value)
        vd = self.k.values[s.value].dtype
        if vd is not b.dtype or b.dtype.is_low_float:
            val = f"{val}.to({storage_tl(b.dtype)})"
        idx = self.expr(s.index)
        level_block = "xindex" if not self.reduction else ("rindex" if s.inner else None)
        if self.multi and level_block is None:
            level_block = "xindex"  # one value per row of the block
        if level_block is None:  # one outer point: a scalar store
            return f"tl.store(b{s.buffer} + {self._paren(idx)}, {val})"
        if not self.expr_is_block(s.index):
            # the same element from every lane (a 0-d output): give the pointer the block shape
            idx = f"{self._paren(idx)} + tl.zeros_like({level_block})"
        mask = "xmask" if not self.reduction else "rmask"
        if self.multi:
            mask = "xmask & rmask" if s.inner else "xmask"
        if s.mode == "add":  # scatter-add: lanes may hit one element, so add atomically
            return f"tl.atomic_add(b{s.buffer} + {self._paren(idx)}, {val}, mask={mask})"
        return f"tl.store(b{s.buffer} + {self._paren(idx)}, {val}, mask={mask})"

    # -- the function ----------------------------------------------------------------------------
    def _arrays(self) -> list[str]:
        """The scalar-slot and error arrays the kernel reads, in argument order."""
        used = (("ia", self.uses_ia), ("fa", self.uses_fa), ("err", self.uses_err))
        return [name for name, u in used if u]

    def signature(self) -> list[str]:
        args = [f"b{b}" for b in self.bufs] + self._arrays()
        args.append("xnumel")
        if self.reduction:
            args += ["rnumel", "RBLOCK: tl.constexpr"]
            if self.multi:
                args.append("XBLOCK: tl.constexpr")
        else:
            args.append("XBLOCK: tl.constexpr")
        return args

    def function(self) -> list[str]:
        k = self.k
        out = [f"# {k.describe()}"]
        locs = sorted({format_loc(loc) for loc in k.locs})
        if locs:
            out.append(f"#   from {', '.join(locs)}")
        if self.reduction:
            mode = (
                f"persistent: the whole row ({self.rnumel}) in one block"
                if self.persistent
                else f"looped: rows of {self.rnumel} in blocks of {self.rblock}"
            )
            if self.multi:
                mode = f"persistent: XBLOCK rows of {self.rnumel} per program, in 2-D blocks"
            if self.scan:
                mode += "; the prefix sums by tl.cumsum"
            per = "" if self.multi else "one program per output row; "
            out.append(f"#   {per}{mode}")
        out.append("@triton.jit")
        out.append(f"def {k.name}({', '.join(self.signature())}):")
        body = self.pointwise() if not self.reduction else self.reduce_body()
        out += [INDENT + line if line else "" for line in body]
        return out

    def _pid(self) -> str:
        return "tl.program_id(0).to(tl.int64)" if self.wide else "tl.program_id(0)"

    def pointwise(self) -> list[str]:
        k = self.k
        out = [
            f"xindex = {self._pid()} * XBLOCK + tl.arange(0, XBLOCK)",
            "xmask = xindex < xnumel",
        ]
        roots = [x for s in k.stores for x in self.k.store_deps(s)]
        done: set[int] = set()
        self.emit(self.closure(roots, False), out, 0, done)
        for s in k.stores:
            out.append(self.store_line(s))
        return out

    def reduce_body(self) -> list[str]:
        k = self.k
        if self.multi:
            out = [
                f"xindex = {self._pid()} * XBLOCK + tl.arange(0, XBLOCK)[:, None]  # its rows",
                "xmask = xindex < xnumel",
                "rindex = tl.arange(0, RBLOCK)[None, :]",
                "rmask = rindex < rnumel",
            ]
        else:
            out = [f"xindex = {self._pid()}  # this program's output row"]
            if self.persistent:
                out += ["rindex = tl.arange(0, RBLOCK)", "rmask = rindex < rnumel"]
        done_outer: set[int] = set()
        done_inner: set[int] = set()  # persistent: inner values stay live across passes

        def emit_outer(roots: list[int], ready: int) -> None:
            ids = [x for x in self.closure(roots, False) if self.k.ready(x, ready)]
            self.emit(ids, out, 0, done_outer)

        for p in range(1, k.npasses + 1):
            reds = [r for r in k.reductions if r.pass_no == p]
            stores = [s for s in k.stores if s.inner and s.pass_no == p]
            roots = [r.value for r in reds] + [x for s in stores for x in self.k.store_deps(s)]
            what = ", ".join(f"{r.kind} a{r.id}" for r in reds) or "stores"
            out.append(f"# pass {p}: {what}")
            emit_outer(roots, p - 1)
            if self.persistent:
                self.emit(self.closure(roots, True), out, 0, done_inner)
                for r in reds:
                    out += self.reduce_block(r)
                for s in stores:
                    out.append(self.store_line(s))
            else:
                self.looped_pass(reds, stores, roots, out)
            for s in k.stores:
                if not s.inner and s.pass_no == p:
                    emit_outer(self.k.store_deps(s), p)
                    out.append(self.store_line(s))
        for s in k.stores:
            if not s.inner and s.pass_no == 0:
                emit_outer(self.k.store_deps(s), 0)
                out.append(self.store_line(s))
        return out

    # reductions
    def _red_input(self, r: Reduce) -> tuple[str, dt.DType]:
        """The masked block a reduction consumes, and the dtype it is reduced in."""
        src = self.k.values[r.value].dtype
        v = self.ref(r.value)
        if src is dt.bool_:
            v, src_t = f"{v}.to(tl.int8)", dt.int8
        else:
            src_t = src
        return f"tl.where(rmask, {v}, {_init_text(r.kind, src)})", src_t

    def _finish(self, r: Reduce, text: str, have: dt.DType) -> str:
        """The accumulated `text` (of dtype `have`) as the reduction's result dtype."""
        src = self.k.values[r.value].dtype
        if src is dt.bool_ and r.kind in ("sum", "prod", "max", "min"):
            text, have = f"{text} != 0", dt.bool_  # or / and of bools (lt's bool combine)
        if r.dtype.is_low_float:
            return round_low(text, r.dtype, self.helper)
        if have is r.dtype or (have.is_low_float and r.dtype is dt.float32):
            return text
        return f"({text}).to({TL[r.dtype.name]})"

    def reduce_block(self, r: Reduce) -> list[str]:
        """Persistent: reduce the row's block to the accumulator a<id>."""
        if r.kind in ("argmax", "argmin"):
            # (value, position) pairs; the position is the flat inner index
            x, _ = self._red_input(r)
            fn = self.helper(f"_lt_{r.kind}_combine")
            pos = "rindex"
            if self.multi:  # both halves of the pair in the block's shape
                out = [f"a{r.id}_x = {x}"]
                x, pos = f"a{r.id}_x", f"tl.broadcast_to(rindex, a{r.id}_x.shape)"
            else:
                out = []
            out.append(f"_, a{r.id} = tl.reduce(({x}, {pos}), {self._axis()}, {fn}{self._keep()})")
            return [*out, f"a{r.id} = a{r.id}.to(tl.int64)"]
        if r.kind == "cumsum":
            return [f"a{r.id} = {self.scan_expr(r)}"]
        return [f"a{r.id} = {self.reduce_expr(r)}"]

    def scan_expr(self, r: Reduce) -> str:
        """Persistent scan: the running sum of the row, one value per element (lt's cumsum:
        float16 accumulates in float32 and each prefix is rounded; bool is a running or)."""
        src = self.k.values[r.value].dtype
        v = self.ref(r.value)
        if src is dt.bool_:  # counted in int32 (no wrap-around), then != 0
            return f"tl.cumsum(tl.where(rmask, {v}, 0).to(tl.int32), 0) != 0"
        text = f"tl.cumsum(tl.where(rmask, {v}, 0), 0)"
        if src in (dt.int8, dt.uint8, dt.int16):
            text += f".to({TL[src.name]})"  # tl.cumsum widens; C accumulates in the type (wraps)
        return self._finish(r, text, src)

    def _axis(self) -> str:
        """The axis a persistent block reduces over: the row's lanes."""
        return "1" if self.multi else "0"

    def _keep(self) -> str:
        """Several rows: reduce to one value per row as an [XBLOCK, 1] block."""
        return ", keep_dims=True" if self.multi else ""

    def reduce_expr(self, r: Reduce) -> str:
        x, src_t = self._red_input(r)
        kind = self._kind(r)
        ax, kd = self._axis(), self._keep()
        if kind == "sum":
            text = f"tl.sum({x}, {ax}{kd})"
            if src_t in (dt.int8, dt.uint8, dt.int16):
                text += f".to({TL[src_t.name]})"  # tl.sum widens; C accumulates in the type
            return self._finish(r, text, src_t)
        if kind == "prod":
            fn = self.helper("_lt_mul_combine")
            return self._finish(r, f"tl.reduce({x}, {ax}, {fn}{kd})", src_t)
        if src_t.is_floating_point:  # max / min
            fn = self.helper(f"_lt_{kind}_combine")
            return self._finish(r, f"tl.reduce({x}, {ax}, {fn}{kd})", src_t)
        return self._finish(r, f"tl.{kind}({x}, {ax}{kd})", src_t)

    def _kind(self, r: Reduce) -> str:
        """The reduction as computed: bool sum / prod are or / and, i.e. max / min."""
        if self.k.values[r.value].dtype is dt.bool_:
            return {"sum": "max", "prod": "min"}.get(r.kind, r.kind)
        return r.kind

    def _scan_input(self, r: Reduce) -> tuple[str, str]:
        """A scan's masked block and the type its prefix sums are counted in: bools in
        int32 (a running or is a running count != 0), small ints widened as tl.cumsum does."""
        src = self.k.values[r.value].dtype
        v = self.ref(r.value)
        if src is dt.bool_:
            return f"tl.where(rmask, {v}, 0).to(tl.int32)", "tl.int32"
        if src in (dt.int8, dt.uint8, dt.int16):
            return f"tl.where(rmask, {v}, 0).to(tl.int32)", "tl.int32"
        return f"tl.where(rmask, {v}, 0)", compute_tl(src)

    def _scan_finish(self, r: Reduce, text: str) -> str:
        src = self.k.values[r.value].dtype
        if src is dt.bool_:
            return f"{text} != 0"
        if src in (dt.int8, dt.uint8, dt.int16):
            text = f"({text}).to({TL[src.name]})"  # C accumulates in the type (wraps)
        return self._finish(r, text, src)

    def looped_pass(
        self, reds: list[Reduce], stores: list[Store], roots: list[int], out: list[str]
    ) -> None:
        scans = [r for r in reds if r.kind == "cumsum"]
        reds = [r for r in reds if r.kind != "cumsum"]
        for r in scans:
            # A row longer than one block: each block's prefix sums plus the sum of the
            # blocks before it, carried in the widened type.
            _, acc_t = self._scan_input(r)
            out.append(f"a{r.id}_carry = tl.sum(tl.zeros([RBLOCK], {acc_t}), 0)")
        for r in reds:
            _, src_t = self._red_input(r)
            init = _init_text(r.kind, self.k.values[r.value].dtype)
            acc_t = compute_tl(src_t)
            out.append(f"a{r.id}_acc = tl.full([RBLOCK], {init}, {acc_t})")
            if r.kind in ("argmax", "argmin"):
                idx_t = "tl.int64" if self.wide else "tl.int32"
                out.append(f"a{r.id}_pos = tl.full([RBLOCK], rnumel, {idx_t})")
        out.append("for roffset in range(0, rnumel, RBLOCK):")
        d = 1
        out.append(INDENT * d + "rindex = roffset + tl.arange(0, RBLOCK)")
        out.append(INDENT * d + "rmask = rindex < rnumel")
        self.emit(self.closure(roots, True), out, d, set())
        for r in scans:
            x, _ = self._scan_input(r)
            out.append(INDENT * d + f"a{r.id}_blk = {x}")
            prefix = f"tl.cumsum(a{r.id}_blk, 0) + a{r.id}_carry"
            out.append(INDENT * d + f"a{r.id} = {self._scan_finish(r, prefix)}")
            out.append(INDENT * d + f"a{r.id}_carry = a{r.id}_carry + tl.sum(a{r.id}_blk, 0)")
        for r in reds:
            x, src_t = self._red_input(r)
            kind = self._kind(r)
            acc = f"a{r.id}_acc"
            if kind == "sum":
                step = f"{acc} + {x}"
            elif kind == "prod":
                step = f"{acc} * {x}"
            elif kind in ("max", "min"):
                step = (
                    f"{self.helper(f'_lt_{kind}_combine')}({acc}, {x})"
                    if src_t.is_floating_point
                    else f"tl.{'maximum' if kind == 'max' else 'minimum'}({acc}, {x})"
                )
            else:
                fn = self.helper(f"_lt_{kind}_combine")
                out.append(
                    INDENT * d + f"{acc}, a{r.id}_pos = {fn}({acc}, a{r.id}_pos, {x}, rindex)"
                )
                continue
            out.append(INDENT * d + f"{acc} = {step}")
        for s in stores:
            out.append(INDENT * d + self.store_line(s))
        # after the loop: combine the RBLOCK partial accumulators (a tree reduction)
        for r in reds:
            _, src_t = self._red_input(r)
            kind = self._kind(r)
            acc = f"a{r.id}_acc"
            if kind == "sum":
                total = f"tl.sum({acc}, 0)"
                if src_t in (dt.int8, dt.uint8, dt.int16):
                    total += f".to({TL[src_t.name]})"  # tl.sum widens; C accumulates in the type
            elif kind == "prod":
                total = f"tl.reduce({acc}, 0, {self.helper('_lt_mul_combine')})"
            elif kind in ("max", "min"):
                total = (
                    f"tl.reduce({acc}, 0, {self.helper(f'_lt_{kind}_combine')})"
                    if src_t.is_floating_point
                    else f"tl.{kind}({acc}, 0)"
                )
            else:
                fn = self.helper(f"_lt_{kind}_combine")
                out.append(f"_, a{r.id} = tl.reduce(({acc}, a{r.id}_pos), 0, {fn})")
                out.append(f"a{r.id} = a{r.id}.to(tl.int64)")
                continue
            out.append(f"a{r.id} = {self._finish(r, total, src_t)}")

    def configs(self) -> list[dict[str, int]]:
        """Block sizes `MAX_AUTOTUNE` tries, the default first. Only kernels that can run
        again with the same result are tuned: not a scatter-add (its adds accumulate)."""
        if any(s.mode != "set" for s in self.k.stores) or self.k.reads & self.k.writes:
            return [self._config()]
        if not self.reduction:
            top = max(_next_pow2(self.xnumel), TUNE_XBLOCKS[0])
            sizes = [self.xblock] + [b for b in TUNE_XBLOCKS if b != self.xblock and b <= top]
            return [{"XBLOCK": b} for b in sizes]
        if self.persistent:  # the row must fit in one block (rows per program: fixed)
            config: dict[str, int] = self._config()
            return [config | {"num_warps": self.warps()}] if self.warps() != 4 else [config]
        return [
            {"RBLOCK": b} for b in [self.rblock] + [b for b in TUNE_RBLOCKS if b != self.rblock]
        ]

    def _config(self) -> dict[str, int]:
        if self.multi:
            return {"RBLOCK": self.rblock, "XBLOCK": self.xblock}
        return {"RBLOCK": self.rblock} if self.reduction else {"XBLOCK": self.xblock}

    def warps(self) -> int:
        """Warps per program: a long persistent row spreads over more of them (as Triton's
        softmax tutorial does), so each thread keeps at most 16 of the row's values."""
        if self.reduction and not self.multi and self.persistent:
            return min(16, max(4, self.rblock // 256))
        return 4

    def _args(self) -> list[str]:
        args = [f"bufs[{b}]" for b in self.bufs] + self._arrays()
        args.append(str(self.xnumel))
        if self.reduction:
            args.append(str(self.rnumel))
        return args

    def _grid(self, c: str) -> str:
        if self.reduction and not self.multi:
            return str(self.xnumel)
        return f"-(-{self.xnumel} // {c}['XBLOCK'])"

    def launch(self) -> str:
        config: dict[str, Any] = self._config()
        if self.warps() != 4:  # Triton's default
            config["num_warps"] = self.warps()
        cfg = ", ".join(f"{k}={v}" for k, v in (config | NO_FP_FUSION).items())
        grid = -(-self.xnumel // self.xblock)  # xblock is 1 for one row per program
        return f"{self.k.name}[({grid},)]({', '.join([*self._args(), cfg])})"

    def tuned_launch(self) -> str:
        return _tuned_launch(self.k.name, self._args(), self._grid("c"), self.configs())

    def spec(self) -> dict[str, Any]:
        """The kernel's argument types and constants (see `KERNELS` in `generate`)."""
        sig = {f"b{b}": _ptr(self.sched.buffers[b].dtype) for b in self.bufs}
        sig.update((a, ARRAY_TYPES[a]) for a in self._arrays())
        sizes = ["xnumel", "rnumel"] if self.reduction else ["xnumel"]
        sig.update((n, "i64" if self.wide else "i32") for n in sizes)
        consts = self._config()
        sig.update((c, "constexpr") for c in consts)
        options = {"num_warps": self.warps()} if self.warps() != 4 else {}
        return {"signature": sig, "constexprs": consts, "options": options | NO_FP_FUSION}


def _tuned_launch(name: str, args: list[str], grid: str, configs: list[dict[str, int]]) -> str:
    """A launch through the run's tuner (`MAX_AUTOTUNE`): it picks one of `configs` (timing
    each the first time, or reading the choice it stored) and launches with it."""
    configs = [c | NO_FP_FUSION for c in configs]
    return f'tuner("{name}", {name}, lambda c: ({grid},), ({", ".join(args)},), {configs!r})'


def _times(x: str, k: int) -> str:
    """``x * k`` without a multiplication by 1."""
    return x if k == 1 else "0" if k == 0 else f"{x} * {k}"


def _plus(x: str, off: str) -> str:
    """``x + off`` without an addition of 0."""
    return x if off == "0" else f"{x} + {off}" if " " not in off else f"{x} + ({off})"


class _EpilogueWriter(_KernelWriter):
    """A matmul's epilogue (`Extern.epilogue`, a pointwise kernel) on one output tile.

    The kernel's loop variables become the tile's coordinates: ``row = rm[:, None]`` and
    ``col = rn[None, :]`` for the product's last two dims, the batch index ``bi`` for the
    others. Its lanes are the tile's (``xmask = mmask & nmask``), and its loads of the
    product are the accumulator, rounded to the product's dtype as a store and a load
    would round it.
    """

    def __init__(
        self,
        sched: Schedule,
        k: Kernel,
        used: set[str],
        deterministic: bool,
        product: Any,
        acc: str,
    ) -> None:
        self.sched = sched
        self.k = k
        self.used = used
        self.deterministic = deterministic
        self.scan = self.reduction = self.multi = False
        self.xnumel = _prod(k.outer)
        self.rnumel = 1
        self.persistent = True
        self.rblock = self.xblock = 1
        self.product = product.id
        self.acc = acc
        self._check_supported()
        *batch, m, n = product.shape
        # The tile element's position in the product; the scheduler checked that the
        # kernel's outer space is the product's elements in row-major order, so its loop
        # variables unravel from it (and simplify to row / col where the dims agree).
        flat = Var("row", m) * n if m > 1 else Expr()
        flat = flat + (Var("col", n) if n > 1 else Expr())
        nbatch = _prod(batch)
        if nbatch > 1:
            flat = flat + Var("bi", nbatch) * (m * n)
        self.mapping = {f"o{i}": e for i, e in enumerate(unravel(flat, k.outer))}
        self.lanes = [x for x, d in (("row", m), ("col", n)) if d > 1]
        self._flags()

    @property
    def bufs(self) -> list[int]:
        return sorted((self.k.reads - {self.product}) | self.k.writes)

    def expr_is_block(self, e: Expr) -> bool:
        for name in e.substitute(self.mapping).vars():
            if name in ("row", "col"):
                return True
            if name.startswith("v") and self.block.get(int(name[1:]), False):
                return True
        return False

    def value_mask(self, v: KVal) -> str | None:
        # a load that varies along one tile axis only (a bias) is a row or a column
        names = v.attr[1].substitute(self.mapping).vars() if v.op == "load" else {"?"}
        if names == {"col"}:
            return "nmask"
        if names == {"row"}:
            return "mmask"
        return "xmask"

    def value_lines(self, v: KVal) -> list[str]:
        if v.op == "load" and v.attr[0] == self.product:
            return [f"v{v.id} = {self.acc}  # the product, b{self.product}"]
        return super().value_lines(v)

    def store_line(self, s: Store) -> str:
        line = super().store_line(s)
        if {"row", "col"} <= s.index.substitute(self.mapping).vars():
            return line
        # the product has one row or one column: give the pointer the tile's shape
        idx = self._paren(self.expr(s.index))
        full = f"{idx} + tl.zeros((BLOCK_M, BLOCK_N), tl.int32)"
        return line.replace(f"b{s.buffer} + {idx},", f"b{s.buffer} + {full},", 1)

    def body(self) -> list[str]:
        """The statements applying the epilogue to the tile in ``acc``."""
        k = self.k
        out = [f"# epilogue {k.describe()}"]
        out += [f"{x} = {'rm[:, None]' if x == 'row' else 'rn[None, :]'}" for x in self.lanes]
        out.append("xmask = mmask & nmask")
        roots = [x for s in k.stores for x in k.store_deps(s)]
        self.emit(self.closure(roots, False), out, 0, set())
        out += [self.store_line(s) for s in k.stores]
        return out


# -- extern matmul ------------------------------------------------------------------------------
MATMUL_BLOCKS = (64, 64, 32)  # BLOCK_M, BLOCK_N, BLOCK_K of a tl.dot tile (float32, float16)
# Tensor-core products (float16, TF32) of at least these sizes take larger tiles with 8
# warps: the fastest of the tiles tried for float16 at 4096³ on an H200 (benchmarks/gpu_sweep.py).
MATMUL_BLOCKS_BIG = (128, 128, 64)
# float32 inputs (TF32) take twice the shared memory per K element: half the K block
MATMUL_BLOCKS_BIG_F32 = (128, 128, 32)
MATMUL_BLOCKS_BIG_TF32_KMAJOR = (128, 256, 32)  # 3 stages: 144 KiB of shared memory
MATMUL_BLOCKS_SUM = (32, 32, 8)  # the same for the broadcast-and-sum tile (float64, integers)
GROUP_M = 8  # rows of tiles visited together, so their columns of B stay in L2
# What MAX_AUTOTUNE tries besides the defaults.
TUNE_XBLOCKS = (256, 512, 1024, 2048)
TUNE_RBLOCKS = (256, 512, 2048)
TUNE_MATMUL = (
    (32, 32, 32),
    (64, 64, 64),
    (128, 64, 32),
    (64, 128, 32),
    (128, 128, 64),
    (128, 256, 64),
    (256, 128, 64),
)
# float32 inputs: the large tiles with K blocks of 32, so that 3 pipeline stages fit in
# an A100's shared memory (128x256x64 would need 288 KiB)
TUNE_MATMUL_F32 = (
    (32, 32, 32),
    (64, 64, 32),
    (128, 64, 32),
    (64, 128, 32),
    (128, 128, 32),
    (128, 256, 32),
    (256, 128, 32),
)
TUNE_MATMUL_SUM = ((16, 16, 16), (32, 32, 16), (64, 32, 8))
# TF32 GEMMs copy a row-major B K-major first when B has at least this many rows and
# columns (see _MatmulWriter); the copy's tiles are KMAJOR_TILE square.
KMAJOR_MIN = 64
KMAJOR_TILE = 64


class _MatmulWriter:
    """An extern matmul as one tiled @triton.jit kernel (see the module docstring).

    Program ``pid`` of a flat grid computes the ``BLOCK_M x BLOCK_N`` tile ``(pid_m, pid_n)``
    of batch ``bi``; the operands are read through their `StridedView` (offset, batch
    strides, row and column strides: transposed and sliced operands need no copy).
    """

    def __init__(
        self,
        sched: Schedule,
        e: Extern,
        tunable: bool = False,
        used: set[str] | None = None,
        deterministic: bool = False,
        tf32: bool = False,
    ) -> None:
        self.sched = sched
        self.e = e
        self.tf32 = tf32
        self.tunable = tunable  # block sizes chosen at launch: tile counts computed in-kernel
        self.a, self.b = e.inputs
        out = sched.buffers[e.output]
        self.out = out
        self.batch = tuple(out.shape[:-2])
        self.m, self.n = out.shape[-2:]
        self.kdim = self.a.shape[-1]
        self.nbatch = _prod(self.batch)
        if out.dtype.name not in TL:
            raise TritonLoweringMissing(f"extern matmul of {out.dtype.name} ({e.describe()!r})")
        # The operands' dtype decides how to multiply; the output's how to store. They
        # differ for 16-bit operands whose float32 sum is stored unrounded (out_dtype).
        od = sched.buffers[self.a.buffer].dtype
        self.od = od
        self.dot = od in (dt.float32, dt.float16, dt.bfloat16)
        self.cores = self.dot and (od.is_low_float or tf32)  # tensor cores
        # TF32 with B stored row-major ([K, N], N contiguous): Hopper's TF32 tensor-core
        # instructions take K-major operands only, and Triton's kernel over a row-major B
        # ran at 82-88 TFLOP/s on an H200 against 268-307 with B as [N, K]
        # (benchmarks/RESULTS-gpu.md). B is first copied to a K-major workspace by a tiled
        # transpose kernel (one pass over B), and the GEMM reads it from there.
        b = self.b
        self.b_src: StridedView | None = None
        if (
            self.cores
            and od is dt.float32
            and all(isinstance(d, int) for d in (self.m, self.n, self.kdim))
            and self.n >= KMAJOR_MIN
            and self.kdim >= KMAJOR_MIN
            and b.strides[-1] == 1
            and all(st == 0 for st in b.strides[:-2])  # one B for every batch
        ):
            self.b_src = b
            self.b = StridedView(-1, 0, b.shape, (*b.strides[:-2], 1, self.kdim))
        big = self.m >= 128 and self.n >= 128 and self.a.shape[-1] >= 64
        base = MATMUL_BLOCKS if self.dot else MATMUL_BLOCKS_SUM
        if self.cores and big:
            base = MATMUL_BLOCKS_BIG if od.is_low_float else MATMUL_BLOCKS_BIG_F32
            if self.b_src is not None:  # K-major TF32: the sweep's fastest tile (307 TFLOP/s)
                base = MATMUL_BLOCKS_BIG_TF32_KMAJOR
        low = 16 if self.dot else 1  # tl.dot needs every tile dimension >= 16
        # small products get small tiles (fewer masked lanes), never below tl.dot's minimum
        self.blocks = tuple(
            min(blk, max(low, _next_pow2(d))) for blk, d in zip(base, (self.m, self.n, self.kdim))
        )
        self.candidates = [self.blocks]
        if tunable:
            if self.dot:
                extra = TUNE_MATMUL if od.is_low_float else TUNE_MATMUL_F32
            else:
                extra = TUNE_MATMUL_SUM
            self.candidates += [c for c in extra if c != self.blocks]
        big = tuple(max(c[i] for c in self.candidates) for i in range(3))
        self.tiles_m = -(-self.m // self.blocks[0])
        self.tiles_n = -(-self.n // self.blocks[1])
        # visit tiles in groups of GROUP_M rows when there are both rows and columns of them
        self.grouped = tunable or (self.tiles_m > 1 and self.tiles_n > 1)
        # the largest element offset any lane forms (masked lanes included): int32 or int64
        # (the largest candidate block pads the most)
        pad_m = -(-self.m // big[0]) * big[0]
        pad_n = -(-self.n // big[1]) * big[1]
        pad_k = -(-self.kdim // big[2]) * big[2]
        reach = self.nbatch * pad_m * pad_n
        for v, rows, cols in ((self.a, pad_m, pad_k), (self.b, pad_k, pad_n)):
            dims = (*v.shape[:-2], rows, cols)
            reach = max(reach, v.offset + sum(abs(st) * d for st, d in zip(v.strides, dims)))
        self.wide = reach >= 2**31 - 1
        if self.dot:
            acc_t = "tl.float32"
        elif out.dtype.is_floating_point:
            acc_t = "tl.float64"
        else:
            acc_t = "tl.int64"  # as the C++ loop: integers (and bools) summed in int64
        self.acc_t = acc_t
        ot = storage_tl(out.dtype)
        # the product in its storage dtype
        if out.dtype is dt.bool_:
            self.stored = "acc != 0"
        else:
            self.stored = "acc" if acc_t == ot else f"acc.to({ot})"
        self.epi: _EpilogueWriter | None = None
        self.interpreted = False  # the GEMM has an INTERPRETED branch (bfloat16)
        if e.epilogue is not None:
            # as the epilogue would read it back: float16 computes in float32
            read = self.stored + (".to(tl.float32)" if out.dtype.is_low_float else "")
            self.epi = _EpilogueWriter(
                sched, e.epilogue, used if used is not None else set(), deterministic, out, read
            )
            self.wide = self.wide or self.epi.wide

    @property
    def bufs(self) -> list[int]:
        # (a K-major B is read from the workspace, not from its buffer; A may be that buffer)
        own = [self.a.buffer] + ([self.b.buffer] if self.b_src is None else [])
        own += [self.e.output] if self.e.store_output else []
        return sorted(set(own) | set(self.epi.bufs if self.epi else ()))

    @property
    def workspace(self) -> str | None:
        """The key in ``run``'s `bufs` of the K-major copy of B (see __init__), if any."""
        return None if self.b_src is None else f"ws_{self.e.name}"

    def _params(self) -> list[str]:
        return [*(f"b{x}" for x in self.bufs), *(["bws"] if self.workspace else [])]

    def _args(self) -> list[str]:
        ws = [f'bufs["{self.workspace}"]'] if self.workspace else []
        return [f"bufs[{x}]" for x in self.bufs] + ws + self._arrays()

    def _arrays(self) -> list[str]:
        return self.epi._arrays() if self.epi else []

    def _batch_offset(self, v: StridedView) -> str:
        """The element offset of batch `bi` in operand `v` (its batch dims may be strided)."""
        terms = [str(v.offset)] if v.offset else []
        inner = 1
        for i in range(len(self.batch) - 1, -1, -1):
            d, st = self.batch[i], v.strides[i]
            if d > 1 and st != 0:
                q = "bi" if inner == 1 else f"(bi // {inner})"
                idx = q if inner * d == self.nbatch else f"{q} % {d}"
                terms.append(f"{idx} * {st}" if idx == "bi" else f"({idx}) * {st}")
            inner *= d
        return " + ".join(terms) or "0"

    def function(self) -> list[str]:
        e, a, b, out = self.e, self.a, self.b, self.out
        m, n, kd = self.m, self.n, self.kdim
        bm, bn, bk = self.blocks
        lines = [f"# {e.describe()}"]
        locs = sorted({format_loc(loc) for loc in e.locs})
        if locs:
            lines.append(f"#   from {', '.join(locs)}")
        prec = "tf32" if self.tf32 else "ieee"
        how = (
            f"tl.dot in float32 ({prec})"
            if self.dot
            else "broadcast-multiply and tl.sum per K block"
        )
        lines += [
            f"#   C[{'x'.join(map(str, (*self.batch, m, n)))}] = A[{m}x{kd}] @ B[{kd}x{n}]"
            f"{f' in {self.nbatch} batches' if self.nbatch > 1 else ''}; tiles of "
            f"{bm}x{bn}, K blocks of {bk}, {how}",
            "@triton.jit",
            f"def {e.name}({', '.join([*self._params(), *self._arrays()])}, "
            "BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):",
        ]
        if self.epi is not None:
            lines.insert(
                -2,
                f"#   then the epilogue {self.epi.k.name} on each tile"
                + ("" if e.store_output else f" (the product b{out.id} is never stored)"),
            )
        tiles: int | str = self.tiles_m * self.tiles_n
        tm: int | str = self.tiles_m
        tn: int | str = self.tiles_n
        tile_m = "tile" if tn == 1 else f"(tile // {tn})"
        tile_n = "" if tn == 1 else f"(tile % {tn}) * BLOCK_N + "
        if self.tunable:  # tile counts follow the block sizes chosen at launch
            tiles, tm, tn = "tiles", "tiles_m", "tiles_n"
        if self.grouped:
            tile_m, tile_n = "pid_m", "pid_n * BLOCK_N + "
        out_ptr = f"b{out.id}" if self.nbatch == 1 else f"b{out.id} + bi * {m * n}"
        pid = "tl.program_id(0).to(tl.int64)" if self.wide else "tl.program_id(0)"
        body = [f"pid = {pid}"]
        if self.tunable:
            body += [f"tiles_m = tl.cdiv({m}, BLOCK_M)", f"tiles_n = tl.cdiv({n}, BLOCK_N)"]
            if self.nbatch > 1:
                body.append("tiles = tiles_m * tiles_n")
        if self.nbatch > 1:
            if tiles == 1:
                body += ["bi = pid  # the batch", "tile = 0"]
            else:
                body += [f"bi = pid // {tiles}  # the batch", f"tile = pid % {tiles}"]
        else:
            body.append("tile = pid")
        if self.grouped:
            per_group = f"({GROUP_M} * {tn})" if self.tunable else f"{GROUP_M * self.tiles_n}"
            body += [
                f"# tiles in groups of {GROUP_M} rows, column by column: B's columns stay in L2",
                f"first_m = tile // {per_group} * {GROUP_M}",
                f"group_m = tl.minimum({tm} - first_m, {GROUP_M})",
                f"pid_m = first_m + tile % {per_group} % group_m",
                f"pid_n = tile % {per_group} // group_m",
            ]
        body += [
            f"rm = {tile_m} * BLOCK_M + tl.arange(0, BLOCK_M)",
            f"rn = {tile_n}tl.arange(0, BLOCK_N)",
            "rk = tl.arange(0, BLOCK_K)",
            f"a_ptr = {_plus(f'b{a.buffer}', self._batch_offset(a))}",
            f"b_ptr = {'bws' if self.workspace else _plus(f'b{b.buffer}', self._batch_offset(b))}",
            f"a_rows = {_times('rm[:, None]', a.strides[-2])}",
            f"b_cols = {_times('rn[None, :]', b.strides[-1])}",
            f"mmask = rm[:, None] < {m}",
            f"nmask = rn[None, :] < {n}",
        ]
        acc_t = self.acc_t
        # K a multiple of every candidate's BLOCK_K: no K bound in the loads' masks, which
        # then stay constant along K (whole rows of A load as wide vectors)
        k_even = isinstance(kd, int) and all(kd % c[2] == 0 for c in self.candidates)
        a_mask = "mmask" if k_even else f"mmask & (kk[None, :] < {kd})"
        b_mask = "nmask" if k_even else f"(kk[:, None] < {kd}) & nmask"
        body += [
            f"acc = tl.zeros((BLOCK_M, BLOCK_N), {acc_t})",
            f"for koff in range(0, {kd}, BLOCK_K):",
            INDENT + "kk = koff + rk",
            INDENT + f"a = tl.load(a_ptr + a_rows + {_times('kk[None, :]', a.strides[-1])}, "
            f"mask={a_mask}, other=0)",
            INDENT + f"b = tl.load(b_ptr + {_times('kk[:, None]', b.strides[-2])} + b_cols, "
            f"mask={b_mask}, other=0)",
        ]
        if self.dot:
            # float32 inputs: exact products unless TF32 is allowed (16-bit floats: exact)
            prec = f', input_precision="{prec}"' if self.od is dt.float32 else ""
            if self.od is dt.bfloat16:
                # Triton's interpreter multiplies bfloat16 tiles' bits as integers: there
                # (tests without a GPU) the tiles are widened, exactly, to float32 first
                body += [
                    INDENT + "if INTERPRETED:",
                    INDENT * 2 + "acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, "
                    'input_precision="ieee")',
                    INDENT + "else:",
                    INDENT * 2 + "acc = tl.dot(a, b, acc)",
                ]
                self.interpreted = True
            else:
                body.append(INDENT + f"acc = tl.dot(a, b, acc{prec})")
        else:
            if acc_t != storage_tl(out.dtype):
                body += [INDENT + f"a = a.to({acc_t})", INDENT + f"b = b.to({acc_t})"]
            body.append(INDENT + "acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)")
        if e.store_output:
            body.append(
                f"tl.store({out_ptr} + {_times('rm[:, None]', n)} + rn[None, :], {self.stored}, "
                "mask=mmask & nmask)"
            )
        if self.epi is not None:
            body += self.epi.body()
        return lines + [INDENT + line for line in body]

    def launch(self) -> str:
        args = self._args()
        args += [f"{k}={v}" for k, v in (self.configs()[0] | NO_FP_FUSION).items()]
        grid = self.nbatch * self.tiles_m * self.tiles_n
        return self._transpose_launch() + f"{self.e.name}[({grid},)]({', '.join(args)})"

    # -- the K-major workspace (see __init__) --
    def _transpose_name(self) -> str:
        return f"t{self.e.name}"

    def _transpose_launch(self) -> str:
        """The launch of the transpose kernel, then ``; `` (or nothing without one)."""
        b = self.b_src
        if b is None:
            return ""
        grid = -(-self.kdim // KMAJOR_TILE) * -(-self.n // KMAJOR_TILE)
        args = (
            f'bufs[{b.buffer}], bufs["{self.workspace}"], TB={KMAJOR_TILE}, enable_fp_fusion=False'
        )
        return f"{self._transpose_name()}[({grid},)]({args}); "

    def transpose_function(self) -> list[str]:
        """The tiled transpose of B into the workspace: ws[n, k] = B[k, n]."""
        b = self.b_src
        assert b is not None
        kd, n = self.kdim, self.n
        tiles_n = -(-n // KMAJOR_TILE)
        wide = kd * n >= 2**31 - 1 or b.offset + b.strides[-2] * kd >= 2**31 - 1
        pid = "tl.program_id(0).to(tl.int64)" if wide else "tl.program_id(0)"
        src = _plus("bsrc", str(b.offset))
        return [
            f"# B of {self.e.name} ({kd}x{n}, rows of {b.strides[-2]}) copied K-major for TF32",
            "@triton.jit",
            f"def {self._transpose_name()}(bsrc, bws, TB: tl.constexpr):",
            f"    pid = {pid}",
            f"    rk = pid // {tiles_n} * TB + tl.arange(0, TB)",
            f"    rn = pid % {tiles_n} * TB + tl.arange(0, TB)",
            f"    tile = tl.load({src} + {_times('rk[:, None]', b.strides[-2])} + rn[None, :], "
            f"mask=(rk[:, None] < {kd}) & (rn[None, :] < {n}), other=0)",
            f"    tl.store(bws + {_times('rn[:, None]', kd)} + rk[None, :], tl.trans(tile), "
            f"mask=(rn[:, None] < {n}) & (rk[None, :] < {kd}))",
        ]

    def transpose_spec(self) -> dict[str, Any]:
        sig = {"bsrc": "*fp32", "bws": "*fp32", "TB": "constexpr"}
        return {"signature": sig, "constexprs": {"TB": KMAJOR_TILE}, "options": dict(NO_FP_FUSION)}

    def configs(self) -> list[dict[str, int]]:
        out = []
        for bm, bn, bk in self.candidates:
            c = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}
            if self.dot:  # 8 warps for the large tiles; tl.dot pipelines 3 K blocks ahead
                c.update(num_warps=8 if bm * bn >= 128 * 128 else 4, num_stages=3)
            out.append(c)
        return out

    def tuned_launch(self) -> str:
        grid = f"{self.nbatch} * (-(-{self.m} // c['BLOCK_M'])) * (-(-{self.n} // c['BLOCK_N']))"
        tuned = _tuned_launch(self.e.name, self._args(), grid, self.configs())
        return self._transpose_launch() + tuned

    def spec(self) -> dict[str, Any]:
        sig = {f"b{b}": _ptr(self.sched.buffers[b].dtype) for b in self.bufs}
        if self.workspace:
            sig["bws"] = "*fp32"
        sig.update((a, ARRAY_TYPES[a]) for a in self._arrays())
        config = dict(self.configs()[0])
        options = {k: config.pop(k) for k in ("num_warps", "num_stages") if k in config}
        sig.update((c, "constexpr") for c in config)
        return {"signature": sig, "constexprs": config, "options": options | NO_FP_FUSION}


class _ArgsortWriter:
    """An extern argsort as one @triton.jit kernel: one program per row, the row in one
    block (rows of at most `PERSISTENT_MAX` elements).

    Each lane packs an order-preserving 32-bit key of its value (NaN canonicalized to sort
    last, as in `lt::key_less`; inverted for descending order) above its position, and one
    ``tl.sort`` of the 64-bit words gives a stable argsort: equal keys keep their order, and
    the lanes past the row (key all ones, larger positions) sort after every element.
    """

    def __init__(self, sched: Schedule, e: Extern) -> None:
        self.e = e
        src = sched.buffers[e.inputs[0]]
        self.src = src
        axis = e.attrs["axis"]
        self.n = src.shape[axis]
        self.pre = _prod(src.shape[:axis])
        self.post = _prod(src.shape[axis + 1 :])
        self.descending = bool(e.attrs["descending"])
        if src.dtype not in ARGSORT_DTYPES:
            raise TritonLoweringMissing(
                f"extern argsort of {src.dtype.name} (values wider than 32 bits do not fit "
                f"one sort key with their position; {e.describe()!r})"
            )
        if self.n > PERSISTENT_MAX:
            raise TritonLoweringMissing(
                f"extern argsort of rows of {self.n} > {PERSISTENT_MAX} elements ({e.describe()!r})"
            )
        order = e.attrs["order"]
        if (order == "sort" and self.n > 16) or order not in ("stable", "sort"):
            # torch's CPU orders among ties (an introsort; topk's and kthvalue's selections)
            # are not a tl.sort of packed keys
            raise TritonLoweringMissing(
                f"extern argsort in torch's {order} order of rows of {self.n} elements "
                f"({e.describe()!r})"
            )
        self.rblock = _next_pow2(max(self.n, 1))

    def function(self) -> list[str]:
        e, d = self.e, self.src.dtype
        out = [f"# {e.describe()}"]
        locs = sorted({format_loc(loc) for loc in e.locs})
        if locs:
            out.append(f"#   from {', '.join(locs)}")
        out += [
            f"#   one program per row of {self.n}: a stable sort of (key, position) words",
            "@triton.jit",
            f"def {e.name}(bx, bout, post, n, RBLOCK: tl.constexpr):",
            "    row = tl.program_id(0).to(tl.int64)",
            "    base = (row // post) * n * post + row % post",
            "    r = tl.arange(0, RBLOCK)",
            "    rmask = r < n",
            "    x = tl.load(bx + base + r * post, mask=rmask, other=0)",
        ]
        if d.is_floating_point:
            out += [
                "    x = x.to(tl.float32)",
                '    x = tl.where(x != x, float("nan"), x)  # one NaN, sorting last',
                "    x = tl.where(x == 0, 0.0, x)  # -0.0 and 0.0 are equal keys",
                "    bits = x.to(tl.uint32, bitcast=True)",
                "    key = tl.where((bits >> 31) != 0, ~bits, bits | 0x80000000)",
            ]
        else:
            out += [
                "    key = x.to(tl.int32).to(tl.uint32, bitcast=True) ^ 0x80000000",
            ]
        if self.descending:
            out.append("    key = ~key")
        out += [
            "    key = tl.where(rmask, key, 0xFFFFFFFF)",
            "    word = (key.to(tl.uint64) << 32) | r.to(tl.uint64)",
            "    word = tl.sort(word, 0)",
            "    idx = (word & 0xFFFFFFFF).to(tl.int64)",
            "    tl.store(bout + base + r * post, idx, mask=rmask)",
        ]
        return out

    def launch(self) -> str:
        e = self.e
        args = [f"bufs[{self.src.id}]", f"bufs[{e.output}]", str(self.post), str(self.n)]
        args += [f"RBLOCK={self.rblock}", "enable_fp_fusion=False"]
        return f"{e.name}[({self.pre * self.post},)]({', '.join(args)})"

    def spec(self) -> dict[str, Any]:
        sig = {"bx": _ptr(self.src.dtype), "bout": "*i64", "post": "i32", "n": "i32"}
        sig["RBLOCK"] = "constexpr"
        return {
            "signature": sig,
            "constexprs": {"RBLOCK": self.rblock},
            "options": dict(NO_FP_FUSION),
        }

    def tuned_launch(self) -> str:  # the row must fit in one block: nothing to choose
        e = self.e
        args = [f"bufs[{self.src.id}]", f"bufs[{e.output}]", str(self.post), str(self.n)]
        return _tuned_launch(e.name, args, str(self.pre * self.post), [{"RBLOCK": self.rblock}])


class _ConvWriter:
    """implicit GEMM of a conv2d: output pixels x channels, summed over (channel, tap).

    NCHW input, OIHW weight, both contiguous; one program per BLOCK_M output pixels x
    BLOCK_N output channels (module docstring). The first line of a writer's docstring is
    the comment above its kernel."""

    ARGS = ("N", "C", "H", "W", "O", "KH", "KW", "Ho", "Wo", "SH", "SW", "PT", "PL", "DH", "DW")
    OPERANDS = ("bx", "bw")  # the pointer arguments before the output's
    BLOCKS = {True: (64, 32, 32), False: (32, 32, 8)}  # BLOCK_M, _N, _K: tl.dot, or float64
    BIG = {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}  # the other MAX_AUTOTUNE candidate

    def __init__(self, sched: Schedule, e: Extern, tf32: bool = False) -> None:
        self.e = e
        self.x, self.other = (sched.buffers[b] for b in e.inputs)
        self.out = sched.buffers[e.output]
        n, c, h, wd = self.x.shape
        o, kh, kw = self._channels_and_kernel()
        ho, wo = self._output_size()
        (sh, sw), pads, (dh, dw) = e.attrs["stride"], e.attrs["padding"], e.attrs["dilation"]
        self.sizes = (n, c, h, wd, o, kh, kw, ho, wo, sh, sw, pads[0], pads[2], dh, dw)
        self.dot = self.out.dtype is dt.float32
        self.prec = "tf32" if tf32 else "ieee"
        self.blocks = self.BLOCKS[self.dot]

    def _channels_and_kernel(self) -> tuple[Any, Any, Any]:
        o, _, kh, kw = self.other.shape
        return o, kh, kw

    def _output_size(self) -> tuple[Any, Any]:
        return self.out.shape[2], self.out.shape[3]

    def _grid_sizes(self) -> tuple[str, str]:
        """The grid's two extents: elements along BLOCK_M, and along BLOCK_N."""
        n, o, ho, wo = (str(v) for v in self.out.shape)
        return f"{n} * {ho} * {wo}", o

    def _body(self) -> list[str]:
        """The kernel's statements after its signature (one level of indent)."""
        return [
            "rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
            "rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
            "rk = tl.arange(0, BLOCK_K)",
            "taps = KH * KW",
            "K = C * taps",
            "pixels = Ho * Wo",
            "mmask = rm < N * pixels",
            "nmask = rn < O",
            "img = rm // pixels",
            "pix = rm % pixels",
            "oy = pix // Wo",
            "ox = pix % Wo",
            f"acc = tl.zeros((BLOCK_M, BLOCK_N), {self._acc_type()})",
            "for koff in range(0, K, BLOCK_K):",
            "    kk = koff + rk",
            "    kmask = kk < K",
            "    c = kk // taps",
            "    t = kk % taps",
            "    iy = oy[:, None] * SH + (t // KW)[None, :] * DH - PT",
            "    ix = ox[:, None] * SW + (t % KW)[None, :] * DW - PL",
            "    amask = mmask[:, None] & kmask[None, :] & (iy >= 0) & (iy < H)",
            "    amask = amask & (ix >= 0) & (ix < W)",
            "    a = tl.load(bx + ((img[:, None] * C + c[None, :]) * H + iy) * W + ix, "
            "mask=amask, other=0)",
            "    b = tl.load(bw + rn[None, :] * K + kk[:, None], "
            "mask=kmask[:, None] & nmask[None, :], other=0)",
            f"    {self._step()}",
            "dst = (img[:, None] * O + rn[None, :]) * pixels + pix[:, None]",
            "tl.store(bout + dst, acc, mask=mmask[:, None] & nmask[None, :])",
        ]

    def _acc_type(self) -> str:
        return "tl.float32" if self.dot else "tl.float64"

    def _step(self) -> str:
        if self.dot:
            return f'acc = tl.dot(a, b, acc, input_precision="{self.prec}")'
        return "acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)"

    def function(self) -> list[str]:
        e = self.e
        out = [f"# {e.describe()}"]
        locs = sorted({format_loc(loc) for loc in e.locs})
        if locs:
            out.append(f"#   from {', '.join(locs)}")
        doc = (self.__doc__ or "").strip().splitlines()[0].rstrip(".")
        out += [
            f"#   {doc}",
            "@triton.jit",
            f"def {e.name}({', '.join(self.OPERANDS)}, bout, {', '.join(self.ARGS)}, "
            "BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):",
            *(INDENT + line for line in self._body()),
        ]
        return out

    def _args(self) -> list[str]:
        bufs = [f"bufs[{b.id}]" for b in (self.x, self.other, self.out)]
        return bufs + [str(v) for v in self.sizes]

    def launch(self) -> str:
        bm, bn, bk = self.blocks
        m, n = self._grid_sizes()
        grid = f"(triton.cdiv({m}, {bm}), triton.cdiv({n}, {bn}))"
        args = [*self._args(), f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}"]
        return f"{self.e.name}[{grid}]({', '.join([*args, 'enable_fp_fusion=False'])})"

    def spec(self) -> dict[str, Any]:
        bm, bn, bk = self.blocks
        d = _ptr(self.out.dtype)
        sig = {name: d for name in (*self.OPERANDS, "bout")} | {a: "i64" for a in self.ARGS}
        sig |= {"BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
        return {
            "signature": sig,
            "constexprs": {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk},
            "options": dict(NO_FP_FUSION),
        }

    def tuned_launch(self) -> str:
        bm, bn, bk = self.blocks
        configs = [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}]
        if self.dot:
            configs.append(dict(self.BIG))
        m, n = self._grid_sizes()
        grid = f"triton.cdiv({m}, c['BLOCK_M']), triton.cdiv({n}, c['BLOCK_N'])"
        return _tuned_launch(self.e.name, self._args(), grid, configs)


class _ConvWgradWriter(_ConvWriter):
    """implicit GEMM of a conv2d's weight gradient, summed over output pixels.

    dW (O x C*kH*kW) = dY^T (O x pixels) @ columns (pixels x C*kH*kW), the columns gathered
    from the input as the forward gathers them; one program per BLOCK_M output channels x
    BLOCK_N weight columns, walking the pixels by BLOCK_K."""

    OPERANDS = ("bx", "bdy")
    BLOCKS = {True: (32, 32, 32), False: (16, 16, 8)}
    BIG = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}

    def _channels_and_kernel(self) -> tuple[Any, Any, Any]:
        kh, kw = self.e.attrs["kernel"]
        return self.other.shape[1], kh, kw

    def _output_size(self) -> tuple[Any, Any]:
        return self.other.shape[2], self.other.shape[3]

    def _grid_sizes(self) -> tuple[str, str]:
        o, c, kh, kw = (str(v) for v in self.out.shape)
        return o, f"{c} * {kh} * {kw}"

    def _body(self) -> list[str]:
        return [
            "ro = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
            "rc = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
            "rp = tl.arange(0, BLOCK_K).to(tl.int64)",
            "taps = KH * KW",
            "K = C * taps",
            "pixels = Ho * Wo",
            "omask = ro < O",
            "cmask = rc < K",
            "c = rc // taps",
            "t = rc % taps",
            "ki = t // KW",
            "kj = t % KW",
            f"acc = tl.zeros((BLOCK_M, BLOCK_N), {self._acc_type()})",
            "for poff in range(0, N * pixels, BLOCK_K):",
            "    m = poff + rp",
            "    pmask = m < N * pixels",
            "    img = m // pixels",
            "    pix = m % pixels",
            "    oy = pix // Wo",
            "    ox = pix % Wo",
            "    a = tl.load(bdy + (img[None, :] * O + ro[:, None]) * pixels + pix[None, :], "
            "mask=omask[:, None] & pmask[None, :], other=0)",
            "    iy = oy[:, None] * SH + ki[None, :] * DH - PT",
            "    ix = ox[:, None] * SW + kj[None, :] * DW - PL",
            "    bmask = pmask[:, None] & cmask[None, :] & (iy >= 0) & (iy < H)",
            "    bmask = bmask & (ix >= 0) & (ix < W)",
            "    b = tl.load(bx + ((img[:, None] * C + c[None, :]) * H + iy) * W + ix, "
            "mask=bmask, other=0)",
            f"    {self._step()}",
            "tl.store(bout + ro[:, None] * K + rc[None, :], acc, "
            "mask=omask[:, None] & cmask[None, :])",
        ]


# Triton's names of pointer and scalar argument types (`KERNELS`: ahead-of-time compiles).
ARG_TYPES = {
    "bool": "u1",
    "uint8": "u8",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
}
ARRAY_TYPES = {"ia": "*i64", "fa": "*fp64", "err": "*i64"}


def _ptr(d: dt.DType) -> str:
    return "*" + ARG_TYPES[d.name]


# dtypes an argsort packs into 32-bit keys exactly.
ARGSORT_DTYPES = frozenset(
    [dt.float32, dt.float16, dt.int32, dt.int16, dt.int8, dt.uint8, dt.bool_]
)


def _helper_order(used: set[str]) -> list[str]:
    """The helpers `used` needs, each after the ones it calls."""
    order: list[str] = []
    table = helpers()

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in table[name][1]:
            visit(dep)
        order.append(name)

    for name in sorted(used):
        visit(name)
    return order


def _writer_name(w: Any) -> str:
    """The kernel name of a writer."""
    return w.k.name if isinstance(w, _KernelWriter) else w.e.name


def _arrays_used(writers: list[Any]) -> tuple[str, ...]:
    """Which of ``ia``, ``fa``, ``err`` some kernel takes (``run`` may pass None for the
    others: nothing to copy to the device before the run, nor to read back after it)."""
    used: set[str] = set()
    for w in writers:
        arrays = getattr(w, "_arrays", None)
        used.update(arrays() if arrays is not None else ())
    return tuple(name for name in ("ia", "fa", "err") if name in used)


def kernel_names(source: str) -> list[str]:
    """The schedule kernels a generated module defines (helpers excluded)."""
    import re

    return re.findall(r"^@triton\.jit\ndef (k\w*)\(", source, flags=re.M)


def generate(
    sched: Schedule,
    title: str = "",
    deterministic: bool = False,
    autotune: bool = False,
    tf32: bool = False,
) -> str:
    """The Python module (source) running `sched` with Triton; its entry point is ``run``.

    ``run(bufs, ia, fa, err)`` takes a mapping buffer id -> device buffer (program inputs,
    outputs and temporaries, each its own allocation), the int64 and float64 scalar-slot
    arrays, and an int64[5] error array (zeros). Raises `TritonLoweringMissing` for what
    this backend does not lower yet. `deterministic` refuses kernels whose result depends
    on the order threads run in (scatter-add). `autotune` (``MAX_AUTOTUNE``) launches every
    kernel through ``run``'s `tuner` argument with the block sizes it may choose from.
    `tf32` lets float32 matmuls use TensorFloat-32 (``set_float32_matmul_precision``).
    """
    used: set[str] = set()
    writers: list[_KernelWriter | _MatmulWriter | _ArgsortWriter | _ConvWriter] = []  # (and wgrad)
    for step in sched.steps:
        if isinstance(step, Extern):
            if step.kind == "matmul":
                writers.append(_MatmulWriter(sched, step, autotune, used, deterministic, tf32))
            elif step.kind == "argsort":
                writers.append(_ArgsortWriter(sched, step))
            elif step.kind == "conv":
                writers.append(_ConvWriter(sched, step, tf32))
            elif step.kind == "conv_wgrad":
                writers.append(_ConvWgradWriter(sched, step, tf32))
            else:
                raise TritonLoweringMissing(f"extern {step.kind} ({step.describe()!r})")
        else:
            writers.append(_KernelWriter(sched, step, used, deterministic))
    functions = [w.function() for w in writers]  # fills `used`
    kmajor = [w for w in writers if isinstance(w, _MatmulWriter) and w.workspace]
    functions = [w.transpose_function() for w in kmajor] + functions
    specs = {_writer_name(w): w.spec() for w in writers}
    specs.update((w._transpose_name(), w.transpose_spec()) for w in kmajor)
    workspace = {w.workspace: (w.n * w.kdim, "float32") for w in kmajor}  # one B for all batches
    interpreted = any(isinstance(w, _MatmulWriter) and w.interpreted for w in writers)
    lines = [
        f'"""lazytorch program{": " + title if title else ""} (Triton).',
        "",
        f"{len(writers)} kernels; generated by lazytorch.codegen.triton from the same schedule",
        'the C++ backend compiles. Entry point: run(bufs, ia, fa, err)."""',
        "",
        *(["import os", ""] if interpreted else []),
        "import triton",
        "import triton.language as tl",
        "",
        *(
            ['INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")']
            if interpreted
            else []
        ),
        f"NUM_KERNELS = {len(writers)}",
        f"LAUNCHES = {len(writers) + len(kmajor)}  # with the transposes of TF32 GEMM operands",
        f"USES = {_arrays_used(writers)!r}  # the arrays some kernel reads: others may be None",
        "# scratch memory run() expects in bufs under these keys: (elements, dtype), reused by",
        "# every run (a K-major copy of a TF32 GEMM's B)",
        f"WORKSPACE = {workspace!r}",
        "# each kernel's argument types and constants, as run() launches it (for compiling",
        "# ahead of time with triton.compile: lazytorch.runtime.triton_backend.precompile)",
        "KERNELS = {",
        *(f"    {name!r}: {spec!r}," for name, spec in specs.items()),
        "}",
    ]
    for name in _helper_order(used):
        lines += ["", "", helpers()[name][0]]
    for fn in functions:
        lines += ["", "", *fn]
    lines += [
        "",
        "",
        "def run(bufs, ia, fa, err, tuner=None):",
        '    """Launch every kernel in schedule order (bufs: buffer id -> device buffer)."""',
    ]
    launches = [w.tuned_launch() if autotune else w.launch() for w in writers]
    lines += [INDENT + x for x in launches] or [INDENT + "pass"]
    return "\n".join(lines) + "\n"
