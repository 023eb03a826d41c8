"""C++ source for a schedule: one static function per kernel, one ``lt_entry`` per program.

Loop structure, decided here (codegen owns loops, the scheduler owns fusion):

* outer loops run in parallel (OpenMP) once the work is large enough, collapsing leading
  dims when the first is short; adjacent dims that every access walks contiguously are
  merged first, so a pointwise kernel over contiguous data is one long vectorizable loop;
* a reduction pass accumulates into a fixed number of lanes (vectorizable, and the same
  summation order whatever the thread count), combined in a fixed order at the end; a
  floating sum adds into its lanes in blocks of ROW_BLOCK elements, each block's lane sums
  then added to the running lanes (two-level summation, close to torch's cascade sum in
  accuracy);
* a kernel with one huge row and few outer points splits each pass into fixed-size blocks
  reduced in parallel and combined in block order (deterministic as well);
* a reduction down strided columns (a bias or LayerNorm weight gradient) runs its lanes
  across adjacent outputs instead, per-row operands computed once per row and broadcast,
  and elements the kernel stores on the way (a ReLU's gradient summed into a bias gradient)
  written by their lane;
* a scatter whose last loop splits its targets into disjoint sets (an embedding gradient)
  runs blocks of that loop in parallel, without atomics, in the serial order per target;
* a pointwise loop whose innermost variable is tested against constant bounds (the pieces
  of a ``cat``, a ``pad``'s border) is cut at those bounds, each sub-loop with its tests
  known;
* a pointwise loop whose indices divide the innermost variable by a small stride (an
  interleave, a strided convolution's input gradient) is cut into one loop per residue
  class, each reading its elements in a row with no division;
* range tests of a pointwise kernel that do not read its innermost loop variable are made
  once before that loop (in a scope of their own), and such a kernel is compiled with loop
  unswitching, so g++ vectorizes the selects they drive;
* scans and other scatters run their inner loop sequentially.

The generated code reads like its schedule: a header comment per kernel naming the fused
primitives and source lines, one named temporary per value.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from lazytorch.codegen.cpp_ops import (
    LoweringMissing,
    compute_type,
    const_literal,
    lower,
    rounded,
    storage_type,
)
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import format_loc
from lazytorch.ir.primitives import get
from lazytorch.scheduler.indexing import Clamp, Expr, FloorDiv, Mod, Var, unravel
from lazytorch.scheduler.kernel import (
    ATOMIC_ADD_DTYPES,
    Buffer,
    Extern,
    Kernel,
    KVal,
    Reduce,
    Schedule,
    StridedView,
    index_expr,
)

__all__ = ["LANES", "PARALLEL_MIN", "SPLIT_BLOCK", "generate"]

LANES = 16  # accumulators per reduction: one AVX-512 register of floats, two of AVX2
PARALLEL_MIN = 1 << 15  # elements of work below which a kernel runs on one thread
SPLIT_BLOCK = 1 << 15  # elements per block when one row is reduced by all threads
COLUMN_BLOCK = 256  # rows summed per block in a column reduction (see _KernelWriter.columns)
# Elements a row reduction's lanes sum into block accumulators before adding the blocks'
# sums to their running totals (see _KernelWriter.blocked_sums): each lane then adds
# ROW_BLOCK / LANES terms and then one term per block, so float32 rounding grows with
# ~ (64 + n / 1024) additions instead of n / 16.
ROW_BLOCK = 1024
# A value a later pass of a row needs again is kept in a per-thread row buffer of at most
# this many elements instead of being recomputed, when computing it costs a transcendental.
ROW_CACHE_MAX = 1 << 14
ROW_CACHE_BYTES = 1 << 18  # at most this much of a thread's stack for row buffers
MAX_RANGE_PIECES = 8  # sub-loops a pointwise loop is cut into at most (see range_pieces)
MIN_SPLIT_LANES = 8  # the shortest inner loop a pointwise loop is split into (see inner_split)
MAX_RESIDUES = 4  # the largest stride a pointwise loop is cut into residue classes by
PREFETCH_MIN_ROW = 8192  # bytes of a row below which later passes prefetch nothing
# Below this many elements a kernel calls heavy helpers (Philox) out of line: compile time
# matters more than vector speed there.
SMALL_KERNEL_ELEMENTS = 4096
INDENT = "    "
# Targets of scatter-add/multiply that accumulate in float32 (see widened_targets).
WIDENED_SCATTER = frozenset(dt.LOW_FLOATS)
_BUFFER_NAME = re.compile(r"\bb\d+\b")


def generate(sched: Schedule, title: str = "", deterministic: bool = False) -> str:
    """The translation unit for `sched` (its entry point is ``lt_entry``).

    `deterministic` serializes the one kernel kind whose result can otherwise depend on
    thread timing: scatter-add (parallel with atomic adds by default).
    """
    ctx = _Program(sched, deterministic)
    body = []
    for step in sched.steps:
        body.append("")
        body.append(ctx.step_function(step))
    body.append("")
    body.append(ctx.entry())
    parts = [
        f"// lazytorch program{': ' + title if title else ''}",
        f"// {len(sched.kernels)} kernels, {len(sched.steps) - len(sched.kernels)} extern calls, "
        f"arena {sched.arena_bytes} bytes",
    ]
    if ctx.narrows:
        # g++ 12's SLP vectorizer drops the rounding of a double -> float -> double round
        # trip in loop epilogues (wrong values in the last elements). Loops still vectorize.
        # Set before every include, so header functions keep inlining into the kernels.
        parts.append('#pragma GCC optimize("no-tree-slp-vectorize")')
    parts.append('#include "lazytorch_runtime.h"')
    if any(isinstance(s, Extern) and s.kind == "argsort" for s in sched.steps):
        parts.append('#include "lazytorch_sort.h"')
    if any(isinstance(s, Extern) and s.kind in ("conv", "conv_wgrad") for s in sched.steps):
        parts.append('#include "lazytorch_conv.h"')
    gemms = _gemms(sched)
    if gemms - {None}:  # (uses_blas, without collecting the products twice)
        if "lt::gemm16" in gemms:
            parts.append("#define LT_GEMM16 1")  # the 16-bit products' half of the header
        parts.append('#include "lazytorch_blas.h"')
    return "\n".join(parts + body) + "\n"


def _gemms(sched: Schedule) -> set[str | None]:
    """The lazytorch_blas.h functions the program's products call (None: loops in a kernel)."""
    return {
        _blas_gemm(sched.buffers[s.inputs[0].buffer].dtype)
        for s in sched.steps
        if isinstance(s, Extern) and s.kind == "matmul"
    }


def uses_blas(sched: Schedule) -> bool:
    """True if the generated program calls OpenBLAS (and so must be linked against it)."""
    return bool(_gemms(sched) - {None})


def _blas_gemm(d: dt.DType) -> str | None:
    """The lazytorch_blas.h function multiplying `d` matrices; None: loops in the kernel.

    16-bit floats go through `lt::gemm16` (float32 accumulation: AMX or AVX512-BF16 for
    bfloat16 where the CPU has them, else sbgemm or widened operands and sgemm: see the
    headers); integers and bool have no BLAS.
    """
    if d in (dt.float32, dt.float64):
        return "lt::gemm"
    return "lt::gemm16" if d.is_low_float else None


class _Program:
    def __init__(self, sched: Schedule, deterministic: bool = False) -> None:
        self.sched = sched
        self.deterministic = deterministic
        self.narrows = False  # a float64 value is cast to a narrower type somewhere
        self.functions: dict[str, str] = {}  # canonical code -> first step with it
        self.callee: dict[str, str] = {}  # step name -> function that runs it
        # step name -> buffer id (or "ia"/"fa") -> offset moved from the kernel into the pointer
        self.rebase: dict[str, dict[int | str, int]] = {}

    def buf(self, bid: int) -> Buffer:
        return self.sched.buffers[bid]

    def params_of(self, step: Kernel | Extern) -> list[int]:
        return sorted(step.reads | step.writes)

    def signature(self, step: Kernel | Extern, unswitch: bool = False) -> str:
        inplace = any(self.buf(b).inplace_of is not None for b in step.writes)
        restrict = "" if inplace else " __restrict"
        args = []
        for b in self.params_of(step):
            buf = self.buf(b)
            const_q = "const " if b not in step.writes else ""
            args.append(f"{const_q}{storage_type(buf.dtype)}*{restrict} b{b}")
        args += ["const int64_t* ia", "const double* fa", "int64_t* err"]
        # noinline: the entry calls each step once, and letting g++ inline hundreds of
        # small steps into it makes one huge function whose optimization is superlinear
        # (a 600-step program compiled in 10 s inlined, 5 s not). A call costs nanoseconds.
        # unswitch: the kernel tests loop-invariant conditions before its SIMD loops
        # (`_KernelWriter.inner_loop`); g++ 12 vectorizes those loops' selects only once it
        # has unswitched the loops on them, which -O2 does not do (on every kernel, -O3's
        # unswitching made the ResNet-8 step's program compile 20% longer).
        attrs = 'noinline, optimize("unswitch-loops")' if unswitch else "noinline"
        return f"static __attribute__(({attrs})) void {step.name}({', '.join(args)})"

    def step_function(self, step: Kernel | Extern) -> str:
        """The step's C++ function, or a one-line note when an earlier step has the same
        code up to buffer names (many small identical steps are common: a Python loop of
        `randperm` calls, the pieces of a long `cat`); the entry then calls that one."""
        header = [f"// {step.describe()}"]
        locs = sorted({format_loc(loc) for loc in step.locs})
        if locs:
            header.append(f"//   from {', '.join(locs)}")
        unswitch = False
        if isinstance(step, Extern):
            body = _extern_body(self, step)
        else:
            writer = _KernelWriter(self, step)
            body = writer.body()
            unswitch = writer.hoisted_tests
        code = "\n".join([self.signature(step, unswitch) + " {", *body, "}"])
        # Buffers are named b<id>; renamed by parameter position, equal code means an equal
        # function.
        position = {f"b{b}": f"p{i}" for i, b in enumerate(self.params_of(step))}
        canon = _BUFFER_NAME.sub(lambda m: position.get(m.group(0), m.group(0)), code)
        canon = canon.replace(f" {step.name}(", " STEP(", 1)
        first = self.functions.setdefault(canon, step.name)
        if first != step.name:
            self.callee[step.name] = first
            return f"// {step.name}: same code as {first}"
        return "\n".join([*header, code])

    def entry(self) -> str:
        s = self.sched
        lines = [
            "// Entry: io holds the input buffers (by program parameter) then the outputs;",
            "// temporaries live in the arena at their planned offsets.",
            'extern "C" LT_ENTRY_ATTRS int64_t lt_entry(void* const* io, char* arena, '
            "const int64_t* ia, const double* fa, int64_t* err) {",
        ]
        slot = 0
        for kind, ref in s.params:
            if kind == "buffer":
                b = self.buf(ref)
                lines.append(
                    f"{INDENT}const {storage_type(b.dtype)}* b{b.id} = (const {storage_type(b.dtype)}*)io[{slot}];"
                )
                slot += 1
        seen: set[int] = set()
        for bid in s.outputs:
            if bid in seen:
                continue
            seen.add(bid)
            b = self.buf(bid)
            lines.append(
                f"{INDENT}{storage_type(b.dtype)}* b{b.id} = ({storage_type(b.dtype)}*)io[{slot}];"
            )
            slot += 1
        for b in s.buffers:
            if b.kind == "temp":
                # A symbolic plan's offsets are unrounded, with slack to align into.
                at = f"lt::align_up(arena + {b.offset})" if s.symbolic else f"(arena + {b.offset})"
                lines.append(
                    f"{INDENT}{storage_type(b.dtype)}* b{b.id} = ({storage_type(b.dtype)}*){at};"
                )
        for step in s.steps:
            moved = self.rebase.get(step.name, {})
            args = [f"b{b} + {moved[b]}" if b in moved else f"b{b}" for b in self.params_of(step)]
            args += [f"{p} + {moved[p]}" if p in moved else p for p in ("ia", "fa")]
            fn = self.callee.get(step.name, step.name)
            lines.append(f"{INDENT}{fn}({', '.join(args)}, err);")
            lines.append(f"{INDENT}if (err[0]) return err[0];")
        lines.append(f"{INDENT}return 0;")
        lines.append("}")
        return "\n".join(lines)


class _Printed(int):
    """An int that prints as the C expression computing it from the sizes it derives from.

    Source printed with sizes as literals is turned into source over symbolic sizes by
    fitting each literal as a polynomial of the sizes (lazytorch.codegen.symbolic_source);
    a count derived by rounding, such as a number of blocks, is no polynomial, so it is
    printed as the C that rounds (which g++ folds when the sizes are literals).
    """

    c: str

    def __str__(self) -> str:
        return self.c

    def __format__(self, spec: str) -> str:
        return format(self.c, spec) if spec else self.c


def _ceil_div(n: int, k: int) -> int:
    out = _Printed(-(-n // k))
    out.c = f"(({n} + {k - 1}) / {k})"
    return out


# -- kernels ---------------------------------------------------------------------------------
def _coalesce(
    sizes: list[int], names: list[str], exprs: list[Expr]
) -> tuple[list[int], list[str], dict[str, Expr]]:
    """Merge adjacent loop dims that every expression walks as one (stride a*n, a)."""
    sizes, names = list(sizes), list(names)
    mapping: dict[str, Expr] = {}
    i = 0
    while i + 1 < len(sizes):
        a, b = names[i], names[i + 1]
        n = sizes[i + 1]
        merged = Var(f"{a}_{b}", sizes[i] * n)
        sub = {a: merged // n, b: merged % n}
        ok = True
        for e in exprs:
            e2 = e.substitute({**mapping, **sub}) if (a in e.vars() or b in e.vars()) else None
            if e2 is not None and any(
                type(t).__name__ in ("_FloorDiv", "_Mod") and merged.key() in _subkeys(t)
                for t in e2.terms
            ):
                ok = False
                break
        if not ok:
            i += 1
            continue
        for k, v in list(mapping.items()):
            mapping[k] = v.substitute(sub)
        mapping.update(sub)
        sizes[i : i + 2] = [sizes[i] * n]
        names[i : i + 2] = [f"{a}_{b}"]
    return sizes, names, mapping


def _rebase(k: Kernel) -> dict[int, int]:
    """Constant element offsets to move from a kernel's indices into its buffer pointers.

    ``b[o0 + 4]`` becomes ``b[o0]`` with the entry passing ``b + 4``: the kernels of a
    loop over slices (the pieces of a long ``cat``, per-head slices) then have equal code
    and are compiled once.
    """
    lowest: dict[int, int] = {}
    for v in k.values:
        if v.op == "load":
            bid, idx = v.attr
            lowest[bid] = min(lowest.get(bid, idx.const), idx.const)
    for st in k.stores:
        lowest[st.buffer] = min(lowest.get(st.buffer, st.index.const), st.index.const)
    return {b: c for b, c in lowest.items() if c > 0}


def _subkeys(t: Any) -> set[Any]:
    out = set()
    for term in getattr(t.e, "terms", {}):
        out.add(Expr({term: 1}).key())
    return out


def _divisions(e: Expr, names: set[str]) -> list[int]:
    """The divisors of the ``//`` and ``%`` terms of `e` (nested ones included) that read a
    variable in `names`: each is a division per element, and a gather where it indexes."""
    out: list[int] = []
    for t in e.terms:
        if isinstance(t, (FloorDiv, Mod)):
            if t.e.vars() & names:
                out.append(t.k)
            out += _divisions(t.e, names)
        elif isinstance(t, Clamp):
            out += _divisions(t.e, names)
    return out


class _KernelWriter:
    def __init__(self, prog: _Program, k: Kernel) -> None:
        self.prog = prog
        self.k = k
        self.rebase = _rebase(k)
        # Scalars likewise: the first scalar slot a kernel reads moves into the ia/fa pointer
        # (a loop of `rand` calls gives kernels that differ only in their seed slots).
        self.slot_base: dict[str, int] = {}
        for v in k.values:
            if v.op == "scalar":
                src = "fa" if v.dtype.is_floating_point else "ia"
                self.slot_base[src] = min(self.slot_base.get(src, v.attr), v.attr)
        if prog.sched.symbolic:
            # Sizes are read as ia[...] after the scalars (lazytorch.runtime.dynamic): a
            # kernel's ia pointer must stay where the entry's is.
            self.slot_base.pop("ia", None)
        moved: dict[int | str, int] = {**self.rebase, **self.slot_base}
        moved = {key: c for key, c in moved.items() if c > 0}
        if moved:
            prog.rebase[k.name] = moved
        exprs = self.k.exprs()
        outer_names = [f"o{i}" for i in range(len(k.outer))]
        inner_names = [f"r{i}" for i in range(len(k.inner))]
        if k.kind in ("scan", "scatter"):
            # Loop order matters semantically for a scan; a scatter's target is dynamic.
            self.outer, self.onames, m1 = list(k.outer), outer_names, {}
            self.inner, self.inames, m2 = list(k.inner), inner_names, {}
        else:
            self.outer, self.onames, m1 = _coalesce(list(k.outer), outer_names, exprs)
            self.inner, self.inames, m2 = _coalesce(list(k.inner), inner_names, exprs)
        self.mapping = {**m1, **m2}
        self.n_row = 1  # elements of one row: the product of the inner loop sizes
        for d in self.inner:
            self.n_row *= d
        # values kept across the passes of a row (see row()): id -> row buffer name, and
        # which of them the pass being written stores, or loads instead of recomputing
        self.row_cache: dict[int, str] = {}
        self.cache_save: set[int] = set()
        self.cache_load: set[int] = set()
        # prefetches of the next row's first-pass reads, issued by later passes (see row())
        self.prefetch: list[str] = []
        self.prefetch_now = False
        # range tests known in the piece of the innermost loop being written (range_pieces)
        self.fixed: dict[int, str] = {}
        self.hoisted_tests = False  # some were evaluated before their loop (inner_loop)
        # A scatter whose targets its last loop splits into disjoint sets runs in parallel
        # over that loop, without atomics (see scatter_columns).
        self.by_columns = self.scatter_columns()
        # Scatter-add runs in parallel with atomic adds unless determinism is asked for
        # (the order of float additions would then depend on thread timing).
        self.atomic = (
            k.kind == "scatter"
            and not self.by_columns
            and not prog.deterministic
            and all(s.mode == "add" for s in k.stores)
            and all(prog.buf(s.buffer).dtype in ATOMIC_ADD_DTYPES for s in k.stores)
            and self.work() >= PARALLEL_MIN
        )

    def expr(self, e: Expr) -> str:
        if self.mapping:
            e = e.substitute(self.mapping)
        return e.c()

    # -- values --------------------------------------------------------------------------------
    def value_code(self, v: KVal) -> str:
        t = compute_type(v.dtype)
        vals = self.k.values
        a = [self.value_ref(x) for x in v.args]
        if v.op == "load":
            bid, idx = v.attr
            at = self.expr(idx - self.rebase.get(bid, 0))
            if v.dtype is dt.bool_:
                # Read as bytes and compared: g++ does not vectorize a loop that selects on
                # a bool loaded as bool (a stored mask made attention's softmax scalar).
                rhs = f"(((const uint8_t*)b{bid})[{at}] != 0)"
            else:
                text = f"b{bid}[{at}]"
                rhs = f"({t}){text}" if v.dtype.is_low_float else text
        elif v.op == "scalar":
            src = "fa" if v.dtype.is_floating_point else "ia"
            slot = v.attr - self.slot_base.get(src, 0)
            rhs = rounded(f"({t}){src}[{slot}]", v.dtype)
        elif v.op == "const":
            rhs = const_literal(v.attr, v.dtype)
        elif v.op == "index":
            rhs = f"(int64_t)({self.expr(v.attr)})"
        elif v.op == "inrange" and v.id in self.fixed:
            return f"const bool v{v.id} = {self.fixed[v.id]};"  # known in this piece of the loop
        elif v.op == "inrange":
            e, lo, hi = v.attr
            if self.mapping:
                e = e.substitute(self.mapping)
            elo, ehi = e.range()
            if lo <= elo and ehi <= hi:  # ranges are bounds: known in this loop
                return f"const bool v{v.id} = true;"
            if ehi < lo or elo > hi:
                return f"const bool v{v.id} = false;"
            c = e.c()
            rhs = f"({c} >= {lo} && {c} <= {hi})"
        elif v.op == "select":
            rhs = f"({a[0]} ? {a[1]} : {a[2]})"
        elif v.op == "after":
            rhs = a[0]  # its second argument (a check) is emitted first
        elif v.op == "prim":
            name, params = v.attr[0], dict(v.attr[1])
            origin = v.attr[2] if len(v.attr) > 2 else -1
            in_dtypes = [vals[x].dtype for x in v.args]
            if name == "cast" and in_dtypes[0] is dt.float64 and v.dtype is not dt.float64:
                self.prog.narrows = True
            rhs = lower(name, a, in_dtypes, v.dtype, params, origin)
        elif v.op == "acc":
            return ""  # an accumulator: referenced by name
        elif v.op == "rand":
            lin, dist = v.attr
            counter = f"(uint64_t){a[1]} + (uint64_t)({self.expr(lin)})"
            seed = f"(uint64_t){a[0]}"
            # Small kernels call Philox out of line (see lazytorch_runtime.h).
            tmpl = "<true>" if self.numel() < SMALL_KERNEL_ELEMENTS else ""
            if dist == "normal":
                n = f"lt::rand_normal{tmpl}({counter}, {seed})"
                if v.dtype is dt.float16:  # NumPy rounds float64 to float16 directly
                    rhs = f"(float)(lt::half)({n})"
                else:  # ml_dtypes rounds float64 to bfloat16 via float32
                    rhs = rounded(f"({t})({n})", v.dtype)
            else:
                fn = {
                    dt.float32: "rand_uniform_f32",
                    dt.float64: "rand_uniform_f64",
                    dt.float16: "rand_uniform_f16",
                    dt.bfloat16: "rand_uniform_bf16",
                }[v.dtype]
                rhs = f"lt::{fn}{tmpl}({counter}, {seed})"
        elif v.op == "check":
            size, origin, axis = v.attr
            rhs = f"lt::checked_index((int64_t){a[0]}, {size}, {origin}, {axis}, err)"
        else:
            raise LoweringMissing(f"kernel value {v.op}")
        return f"const {t} v{v.id} = {rhs};"

    def numel(self) -> int:
        n = 1
        for d in (*self.k.outer, *self.k.inner):
            n *= d
        return n

    def value_ref(self, vid: int) -> str:
        v = self.k.values[vid]
        if v.op == "acc":
            return f"a{v.attr}"
        return f"v{vid}"

    def closure(self, roots: list[int], want_inner: bool) -> list[int]:
        """`Kernel.closure`, reading row-cached values back instead of recomputing them."""
        return self.k.closure(roots, want_inner, stop=self.cache_load)

    def emit_values(self, ids: list[int], out: list[str], depth: int) -> None:
        for x in ids:
            if x in self.cache_load:
                t = compute_type(self.k.values[x].dtype)
                out.append(
                    INDENT * depth + f"const {t} v{x} = {self.row_cache[x]}[{self.row_index()}];"
                )
                continue
            code = self.value_code(self.k.values[x])
            if code:
                out.append(INDENT * depth + code)
            if x in self.cache_save:
                out.append(INDENT * depth + f"{self.row_cache[x]}[{self.row_index()}] = v{x};")

    def row_index(self) -> str:
        """The position in a row buffer of the current inner iteration (row-major)."""
        terms, stride = [], 1
        for name, size in reversed(list(zip(self.inames, self.inner))):
            terms.append(name if stride == 1 else f"{name}*{stride}")
            stride *= size
        return " + ".join(reversed(terms)) or "0"

    def next_row_prefetch(self, first_pass: list[int]) -> list[str]:
        """Prefetches of the next row's first-pass reads, one cache line per lane block.

        The first pass of a row streams it from memory; the later passes work on data in
        cache and leave the memory system idle. Prefetching the next row while they run
        overlaps the two (softmax over 4096-wide rows: 7.2 -> 6.6 ms). Rows under
        PREFETCH_MIN_ROW bytes are left to the hardware prefetcher, which already follows
        a stream of short contiguous rows (layer_norm over 1024-wide rows got slower).
        """
        if len(self.onames) != 1 or not self.inames:
            return []
        o, last, n_outer = self.onames[0], self.inames[-1], self.outer[0]
        lines = []
        for x in self.closure(first_pass, True):
            v = self.k.values[x]
            if v.op != "load":
                continue
            bid, idx = v.attr
            e = idx - self.rebase.get(bid, 0)
            if self.mapping:
                e = e.substitute(self.mapping)
            if {o, last} - e.vars() or self.n_row * v.dtype.itemsize < PREFETCH_MIN_ROW:
                continue  # the same for every row, not walking the row, or a short row
            at = e.c({o: f"({o} + 1)", last: f"{last}_base"})
            lines.append(f"if ({o} + 1 < {n_outer}) __builtin_prefetch(&b{bid}[{at}], 0, 3);")
        return lines

    def plan_row_cache(self, pass_roots: list[list[int]]) -> dict[int, int]:
        """Values to keep in row buffers: id -> the pass that computes and stores them.

        A value that a later pass needs again, whose computation involves a transcendental
        (softmax's exp(x - max) is needed by the sum and again by the division), is stored
        by the first pass that computes it and read back by the later ones: a load from L1
        instead of a second exp per element. Only the topmost such values are kept.
        """
        k = self.k
        if k.kind != "reduction" or k.npasses < 2 or self.n_row > ROW_CACHE_MAX or not self.inames:
            return {}
        sets = [set(self.closure(r, True)) for r in pass_roots]
        first: dict[int, int] = {}
        again: set[int] = set()
        for p, ids in enumerate(sets):
            for x in ids:
                if x in first:
                    again.add(x)
                else:
                    first[x] = p

        def costly(x: int) -> bool:
            return any(
                k.values[y].op == "prim" and get(k.values[y].attr[0]).transcendental
                for y in self.closure([x], True)
            )

        shared = {x for x in again if costly(x)}
        # drop values that only feed other kept values (their consumer's copy suffices)
        below: set[int] = set()
        for x in shared:
            below.update(y for y in self.closure(list(k.values[x].args), True) if y in shared)
        # the buffers live on each thread's stack: keep their total small
        kept, total = {}, 0
        for x in sorted(shared - below):
            total += self.n_row * 8
            if total > ROW_CACHE_BYTES:
                break
            kept[x] = first[x]
        return kept

    def store_code(self, s: Any) -> str:
        b = self.prog.buf(s.buffer)
        val = self.value_ref(s.value)
        target = f"b{s.buffer}[{self.expr(s.index - self.rebase.get(s.buffer, 0))}]"
        cast = f"({storage_type(b.dtype)})"
        if s.mode != "set" and b.dtype in WIDENED_SCATTER:  # see widened_targets
            wide = f"w{s.buffer}[{self.expr(s.index - self.rebase.get(s.buffer, 0))}]"
            return f"{wide} = {wide} {'+' if s.mode == 'add' else '*'} {val};"
        if s.mode == "add":
            if self.atomic:
                return f"#pragma omp atomic\n{INDENT * 3}{target} += {val};"
            if b.dtype is dt.bool_:
                return f"{target} = {target} || {val};"
            if b.dtype.is_low_float:
                return f"{target} = {rounded(f'(float){target} + {val}', b.dtype)};"
            return f"{target} = {cast}({target} + {val});"
        if s.mode == "mul":  # scatter with reduce="multiply": serial (no atomic multiply)
            if b.dtype is dt.bool_:
                return f"{target} = {target} && {val};"
            if b.dtype.is_low_float:
                return f"{target} = {rounded(f'(float){target} * {val}', b.dtype)};"
            return f"{target} = {cast}({target} * {val});"
        if b.dtype.is_low_float:
            # Assigned, not cast: a cast to lt::bf16 makes a temporary that keeps g++ from
            # vectorizing the loop (the assignment rounds the same way).
            return f"{target} = {val};"
        return f"{target} = {cast}({val});"

    # -- loops ---------------------------------------------------------------------------------
    def loop_open(
        self, names: list[str], sizes: list[int], depth: int, out: list[str], simd_last: bool
    ) -> int:
        for i, (n, size) in enumerate(zip(names, sizes)):
            if simd_last and i == len(names) - 1:
                out.append(INDENT * depth + "#pragma omp simd")
            out.append(INDENT * depth + f"for (int64_t {n} = 0; {n} < {size}; ++{n}) {{")
            depth += 1
        return depth

    def loop_close(self, count: int, depth: int, out: list[str]) -> int:
        for _ in range(count):
            depth -= 1
            out.append(INDENT * depth + "}")
        return depth

    def work(self) -> int:
        n = 1
        for d in (*self.k.outer, *self.k.inner):
            n *= d
        return n

    def parallel_pragma(self, depth: int, out: list[str], sizes: list[int]) -> int:
        """Emit `omp parallel for` over the leading loops; returns how many it collapses."""
        if (
            (self.k.kind == "scatter" and not self.atomic)
            or self.work() < PARALLEL_MIN
            or not sizes
        ):
            return 0
        collapse, prod = 0, 1
        for d in sizes:
            collapse += 1
            prod *= d
            if prod >= 64:
                break
        clause = f" collapse({collapse})" if collapse > 1 else ""
        if self.prog.sched.symbolic:
            # Sizes are symbols: whether the work is worth the threads is known at run time.
            work = " * ".join(str(d) for d in (*self.k.outer, *self.k.inner)) or "1"
            clause += f" if((int64_t){work} >= {PARALLEL_MIN})"
        out.append(INDENT * depth + f"#pragma omp parallel for schedule(static){clause}")
        return collapse

    def body(self) -> list[str]:
        k = self.k
        out: list[str] = []
        if not k.inner and k.kind != "scan":
            self.pointwise(out)
            return out
        outer_n = 1
        for d in self.outer:
            outer_n *= d
        inner_n = 1
        for d in self.inner:
            inner_n *= d
        split = (
            k.kind == "reduction"
            and outer_n < 64
            and inner_n >= 4 * SPLIT_BLOCK
            and len(self.inner) == 1
        )
        if not split and self.column_ok():
            self.columns(out)
            return out
        depth = 1
        if not split:
            self.parallel_pragma(depth, out, self.outer)
        depth = self.loop_open(self.onames, self.outer, depth, out, simd_last=False)
        self.row(out, depth, split)
        self.loop_close(len(self.outer), depth, out)
        return out

    # -- column reductions: lanes across the kept axis ----------------------------------------
    def column_ok(self) -> bool:
        """Whether this reduction reads its rows down columns: the reduced axis is strided in
        memory and the last kept axis contiguous (a bias gradient: the sum of a (rows, n)
        matrix over its rows). Lanes then run across LANES adjacent outputs, so each load is
        a contiguous vector, instead of across a row whose elements are n apart.

        An operand the same for every output of a row (LayerNorm backward's per-row mean
        and rstd: coefficient 0 on the kept axis) is one scalar per row broadcast across
        the lanes, so it does not stand in the way; an operand walking along the row while
        it varies with the output (a transposed read) does: the row layout suits it.
        """
        k = self.k
        if (
            k.kind != "reduction"
            or k.npasses != 1
            or not self.onames
            or not self.inames
            or self.outer[-1] < LANES
            or any(s.inner and s.mode != "set" for s in k.stores)
            or any(r.kind not in ("sum", "max", "min") for r in k.reductions)
        ):
            return False
        o_last, r_last = self.onames[-1], self.inames[-1]
        for s in k.stores:
            if s.inner:
                # An element stored on the way (a ReLU's gradient, fused before the bias
                # gradient that sums it) is written once per (row, output), as in the row
                # layout: lanes must write distinct elements, adjacent ones for a vector.
                e = s.index.substitute(self.mapping) if self.mapping else s.index
                if e.coefficient(o_last) != 1:
                    return False
        column = False
        for x in self.closure(self._column_roots(), True):
            v = k.values[x]
            if v.op != "load":
                continue
            e = v.attr[1]
            if self.mapping:
                e = e.substitute(self.mapping)
            co, cr = e.coefficient(o_last), e.coefficient(r_last)
            if co is None or cr is None:
                return False
            if co == 0:
                continue  # one value per row (or per kernel): broadcast across the lanes
            if cr == 1:
                return False  # some operand walks along the row: the row layout suits it
            if co == 1 and cr != 0:
                column = True
        return column

    def _column_roots(self) -> list[int]:
        """What the lanes of a column reduction compute: the reduced values and what the
        inner stores (always "set" there) write and index by."""
        k = self.k
        inner = [x for s in k.stores if s.inner for x in k.store_deps(s)]
        return [r.value for r in k.reductions] + inner

    def varying(self, name: str) -> set[int]:
        """The values whose result changes with loop variable `name` (after coalescing):
        those whose index expression names it, and everything computed from them."""
        k = self.k
        out: set[int] = set()
        for x, v in enumerate(k.values):
            e = index_expr(v)
            if e is not None and self.mapping:
                e = e.substitute(self.mapping)
            if (e is not None and name in e.vars()) or any(y in out for y in k.refs(x)):
                out.add(x)
        return out

    def columns(self, out: list[str]) -> None:
        k = self.k
        lead, lead_n = self.onames[:-1], self.outer[:-1]
        o, n = self.onames[-1], self.outer[-1]
        nblocks = _ceil_div(n, LANES)
        depth = 1
        self.parallel_pragma(depth, out, [*lead_n, nblocks])
        depth = self.loop_open([*lead, f"{o}_blk"], [*lead_n, nblocks], depth, out, simd_last=False)
        out.append(INDENT * depth + f"const int64_t {o}_base = {o}_blk * {LANES};")
        out.append(
            INDENT * depth
            + f"const int {o}_n = {n} - {o}_base < {LANES} ? (int)({n} - {o}_base) : {LANES};"
        )
        reds = list(k.reductions)
        for r in reds:
            out.append(INDENT * depth + f"{self.acc_type(r)} a{r.id}_c[{LANES}];")
            out.append(
                INDENT * depth + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_c[l] = {self.init(r)};"
            )
        roots = self._column_roots()
        varies = self.varying(o)
        # the same for every lane and every row: once per block of outputs
        self.emit_values([x for x in self.closure(roots, False) if x not in varies], out, depth)
        # Sums over long columns add in blocks of COLUMN_BLOCK rows, then the block sums:
        # the rounding error grows with the block length, not with the column's.
        blocked = (
            len(self.inames) == 1
            and self.inner[0] > COLUMN_BLOCK
            and all(r.kind == "sum" for r in reds)
        )
        acc = "b" if blocked else "c"
        d = depth
        if blocked:
            r0, nr = self.inames[0], self.inner[0]
            out.append(
                INDENT * d + f"for (int64_t {r0}_b = 0; {r0}_b < {nr}; {r0}_b += {COLUMN_BLOCK}) {{"
            )
            d += 1
            for r in reds:
                out.append(INDENT * d + f"{self.acc_type(r)} a{r.id}_b[{LANES}];")
                out.append(INDENT * d + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_b[l] = 0;")
            end = f"{r0}_b + {COLUMN_BLOCK} < {nr} ? {r0}_b + {COLUMN_BLOCK} : {nr}"
            out.append(INDENT * d + f"const int64_t {r0}_e = {end};")
            out.append(INDENT * d + f"for (int64_t {r0} = {r0}_b; {r0} < {r0}_e; ++{r0}) {{")
            inner_d = d + 1
        else:
            inner_d = self.loop_open(self.inames, self.inner, d, out, simd_last=False)
        # What does not change across the lanes (a row's mean and rstd, and what is computed
        # from them alone) is computed once per row, before the lane loop.
        per_row = [x for x in self.closure(roots, True) if x not in varies]
        self.emit_values(per_row, out, inner_d)
        out.append(INDENT * inner_d + "#pragma omp simd")
        out.append(INDENT * inner_d + f"for (int lane = 0; lane < {o}_n; ++lane) {{")
        out.append(INDENT * (inner_d + 1) + f"const int64_t {o} = {o}_base + lane;")
        self.emit_values([x for x in self.closure(roots, False) if x in varies], out, inner_d + 1)
        self.emit_values([x for x in self.closure(roots, True) if x in varies], out, inner_d + 1)
        for r in reds:
            a, v = f"a{r.id}_{acc}[lane]", self.value_ref(r.value)
            out.append(INDENT * (inner_d + 1) + f"{a} = {self.combine_expr(r, a, v)};")
        for st in k.stores:
            if st.inner:
                out.append(INDENT * (inner_d + 1) + self.store_code(st))
        out.append(INDENT * inner_d + "}")
        if blocked:
            out.append(INDENT * d + "}")
            for r in reds:
                out.append(
                    INDENT * d
                    + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_c[l] = a{r.id}_c[l] + a{r.id}_b[l];"
                )
            out.append(INDENT * depth + "}")
        else:
            self.loop_close(len(self.inames), inner_d, out)
        out.append(INDENT * depth + f"for (int lane = 0; lane < {o}_n; ++lane) {{")
        out.append(INDENT * (depth + 1) + f"const int64_t {o} = {o}_base + lane;")
        for r in reds:
            t = compute_type(r.dtype)
            out.append(
                INDENT * (depth + 1)
                + f"const {t} a{r.id} = {self._finish_acc(r, f'a{r.id}_c[lane]')};"
            )
        stores = [s for s in k.stores if not s.inner]
        deps = [x for s in stores for x in self.k.store_deps(s)]
        self.emit_values(self.closure(deps, False), out, depth + 1)
        for s in stores:
            out.append(INDENT * (depth + 1) + self.store_code(s))
        out.append(INDENT * depth + "}")
        self.loop_close(len(lead) + 1, depth, out)

    # -- scatters split by their last loop ------------------------------------------------------
    def scatter_columns(self) -> bool:
        """Whether threads can split this scatter by its last loop, each owning the targets
        of its own range of that loop: an embedding's gradient adds row ``i`` of the
        output gradient into row ``idx[i]`` of a (vocab, n) table, and the columns of the
        table are disjoint between threads even when the rows collide.

        That holds when every store's target is ``c * o_last`` plus terms whose
        coefficients are multiples of ``|c| * n`` (n: the last loop's size): two iterations
        with different ``o_last`` then differ modulo ``|c| * n``, whatever the gathered
        index. Each target then receives its updates in the serial order (the same result
        as the deterministic, serial loop), and the last loop's lanes never collide, so it
        vectorizes. No value may read a buffer the kernel stores to.
        """
        k = self.k
        if k.kind != "scatter" or self.prog.sched.symbolic or not self.onames:
            return False
        o, n = self.onames[-1], self.outer[-1]
        targets = [s.buffer for s in k.stores]
        if n < 2 or len(set(targets)) != len(targets):
            return False
        if any(v.op == "load" and v.attr[0] in targets for v in k.values):
            return False
        for st in k.stores:
            e = st.index.substitute(self.mapping) if self.mapping else st.index
            c = e.coefficient(o)  # None: o inside a floor division, a modulo, a clamp
            if not c:
                return False
            span = abs(c) * n
            if any(m % span for t, m in e.terms.items() if o not in t.vars()):
                return False
        return True

    def scatter_by_columns(self, out: list[str]) -> None:
        """The loops of a scatter_columns kernel: blocks of the last loop in parallel, every
        row of a block in order, the block's columns (disjoint targets) as SIMD lanes."""
        k = self.k
        lead, lead_n = self.onames[:-1], self.outer[:-1]
        o, n = self.onames[-1], self.outer[-1]
        width = 4 * LANES
        nblocks = _ceil_div(n, width)
        roots = [r for s in k.stores for r in self.k.store_deps(s)]
        varies = self.varying(o)
        depth = 1
        if self.work() >= PARALLEL_MIN and nblocks > 1:
            out.append(INDENT * depth + "#pragma omp parallel for schedule(static)")
        out.append(INDENT * depth + f"for (int64_t {o}_blk = 0; {o}_blk < {nblocks}; ++{o}_blk) {{")
        depth += 1
        out.append(INDENT * depth + f"const int64_t {o}_lo = {o}_blk * {width};")
        out.append(
            INDENT * depth
            + f"const int64_t {o}_hi = {o}_lo + {width} < {n} ? {o}_lo + {width} : {n};"
        )
        d = self.loop_open(lead, lead_n, depth, out, simd_last=False)
        ids = self.closure(roots, False)
        self.emit_values([x for x in ids if x not in varies], out, d)  # once per row
        out.append(INDENT * d + "#pragma omp simd")
        out.append(INDENT * d + f"for (int64_t {o} = {o}_lo; {o} < {o}_hi; ++{o}) {{")
        self.emit_values([x for x in ids if x in varies], out, d + 1)
        for s in k.stores:
            out.append(INDENT * (d + 1) + self.store_code(s))
        out.append(INDENT * d + "}")
        self.loop_close(len(lead), d, out)
        out.append(INDENT + "}")

    def pointwise(self, out: list[str]) -> None:
        k = self.k
        depth = 1
        simd = k.kind != "scatter"
        wide = self.widened_targets()
        for bid in wide:  # sums in float32: the whole target widened first
            # w<id> mirrors b<id>, which may point `moved` elements into its buffer
            lo, hi, moved = self.widened_range(bid)
            out.append(INDENT + f"float* w{bid}_all = new float[{self.prog.buf(bid).numel}];")
            out.append(INDENT + f"float* w{bid} = w{bid}_all{moved};  // accumulated in float32")
            out.append(INDENT + f"for (int64_t i = {lo}; i < {hi}; ++i) w{bid}[i] = b{bid}[i];")
        if self.by_columns:
            self.scatter_by_columns(out)
            self.widened_back(wide, out)
            return
        pieces = self.range_pieces() if simd else []
        if simd and not pieces and self.onames:
            split = self.inner_split(self.onames[-1], 0, self.outer[-1])
            if split is not None:  # the innermost loop as two (see inner_split)
                lanes, self.mapping = split
                o, n = self.onames[-1], self.outer[-1]
                self.onames[-1:] = [f"{o}a", f"{o}b"]
                self.outer[-1:] = [n // lanes, lanes]
            elif self.strided_loops(self.onames[-1], 0, self.outer[-1]) is not None:
                pieces = [(0, self.outer[-1], {})]  # one piece, cut by residue classes
        collapsed = self.parallel_pragma(depth, out, self.outer)
        if simd and collapsed and collapsed == len(self.outer):
            # the innermost loop is one of the parallel ones: one combined construct
            out[-1] = out[-1].replace("parallel for", "parallel for simd")
            simd, pieces = False, []
        roots = [r for s in k.stores for r in self.k.store_deps(s)]
        if pieces or (simd and self.onames):
            # the innermost loop on its own (in pieces, each with its range tests known)
            depth = self.loop_open(self.onames[:-1], self.outer[:-1], depth, out, False)
            o, n = self.onames[-1], self.outer[-1]
            whole = self.mapping
            for lo, hi, fixed in pieces or [(0, n, {})]:
                self.fixed = fixed
                split = self.inner_split(o, lo, hi) if pieces else None
                strided = self.strided_loops(o, lo, hi) if pieces and split is None else None
                if strided is not None:
                    for var, count, self.mapping in strided:
                        head = [f"for (int64_t {var} = 0; {var} < {count}; ++{var}) {{"]
                        self.inner_loop(out, depth, head, {var}, roots)
                elif split is None:
                    head = [f"for (int64_t {o} = {lo}; {o} < {hi}; ++{o}) {{"]
                    self.inner_loop(out, depth, head, {o}, roots)
                else:
                    lanes, self.mapping = split
                    oa, ob = f"{o}a", f"{o}b"
                    head = [
                        f"for (int64_t {oa} = 0; {oa} < {(hi - lo) // lanes}; ++{oa}) {{",
                        f"for (int64_t {ob} = 0; {ob} < {lanes}; ++{ob}) {{",
                    ]
                    self.inner_loop(out, depth, head, {oa, ob}, roots)
                self.mapping = whole
            self.fixed = {}
            self.loop_close(len(self.outer) - 1, depth, out)
            self.widened_back(wide, out)
            return
        depth = self.loop_open(self.onames, self.outer, depth, out, simd_last=simd)
        self.emit_values(self.closure(roots, False), out, depth)
        for s in k.stores:
            out.append(INDENT * depth + self.store_code(s))
        self.loop_close(len(self.outer), depth, out)
        self.widened_back(wide, out)

    def inner_loop(
        self, out: list[str], depth: int, head: list[str], loop_vars: set[str], roots: list[int]
    ) -> None:
        """The innermost SIMD loop (`head`: its ``for`` lines, the last one vectorized) with
        the kernel's body and stores.

        Range tests that read none of `loop_vars` (a border test of an outer axis, a
        parity of the row) are evaluated once, before the loop, in a scope of their own:
        inside, g++ 12 turns ``test ? load : 0`` on a loop-invariant test into a masked
        load it then cannot vectorize (the loop stays scalar), while a test made outside it
        selects whole vectors.
        """
        ids = self.closure(roots, False)
        hoisted = [x for x in ids if self.invariant_test(x, loop_vars)]
        d = depth
        if hoisted:
            self.hoisted_tests = True
            out.append(INDENT * d + "{")
            d += 1
            self.emit_values(hoisted, out, d)
            done = set(hoisted)
            ids = [x for x in ids if x not in done]
        first = d
        for i, line in enumerate(head):
            if i == len(head) - 1:
                out.append(INDENT * d + "#pragma omp simd")
            out.append(INDENT * d + line)
            d += 1
        self.emit_values(ids, out, d)
        for s in self.k.stores:
            out.append(INDENT * d + self.store_code(s))
        for dd in range(d - 1, first - 1, -1):
            out.append(INDENT * dd + "}")
        if hoisted:
            out.append(INDENT * depth + "}")

    def invariant_test(self, vid: int, loop_vars: set[str]) -> bool:
        """Whether value `vid` is a range test that reads none of `loop_vars` (nor a
        gathered index), so it can be evaluated before their loops."""
        v = self.k.values[vid]
        if v.op != "inrange" or vid in self.fixed:
            return False
        e = v.attr[0]
        if self.mapping:
            e = e.substitute(self.mapping)
        names = e.vars()
        return not names & loop_vars and not any(x.startswith("v") for x in names)

    def exprs_of(self, o: str) -> list[Expr]:
        """The kernel's index expressions that read loop variable `o` (after the mapping)."""
        exprs = self.k.exprs()
        if self.mapping:
            exprs = [e.substitute(self.mapping) for e in exprs]
        return [e for e in exprs if o in e.vars()]

    def strided_loops(
        self, o: str, lo: int, hi: int
    ) -> list[tuple[str, int, dict[str, Expr]]] | None:
        """The innermost loop variable `o` over [lo, hi) as sub-loops, one per residue
        class modulo a small divisor; (loop variable, trip count, mapping) per sub-loop, or None.

        * **One residue class per sub-loop.** A strided slice's gradient (a stride-2
          convolution's input gradient) reads ``(o - 2) // 2`` where ``(o - 2) % 2 == 0``:
          two divisions per element and a gather. Written as ``o = 2*q + s`` for each start
          ``s`` in ``[lo, lo + 2)``, the tests are constants and the reads consecutive in
          ``q``. Taken for a divisor of at most MAX_RESIDUES that leaves fewer divisions per
          element, on a range of at least that many vectors' worth.

        Only the loop's shape changes: every element is computed once by the same code.
        """
        if self.prog.sched.symbolic:
            return None
        n = hi - lo
        raw = self.exprs_of(o)
        here = [e.substitute({o: Var(o, n) + lo}) for e in raw]
        before = sum(len(_divisions(e, {o})) for e in here)
        best: tuple[float, int] | None = None  # (divisions per element, divisor)
        for k in sorted({d for e in here for d in _divisions(e, {o})}):
            if k > MAX_RESIDUES or n < k * MIN_SPLIT_LANES:
                continue
            left = 0
            for s in range(lo, lo + k):
                sub = {o: Var(f"{o}q", (hi - s + k - 1) // k) * k + s}
                left += sum(len(_divisions(e.substitute(sub), {f"{o}q"})) for e in raw)
            if left / k < before and (best is None or left / k < best[0]):
                best = (left / k, k)
        if best is None:
            return None
        k, name = best[1], f"{o}q"
        loops = []
        for s in range(lo, lo + k):
            count = (hi - s + k - 1) // k
            sub = {o: Var(name, count) * k + s}
            mapping = {key: v.substitute(sub) for key, v in self.mapping.items()}
            mapping.update(sub)
            loops.append((name, count, mapping))
        return loops

    def inner_split(self, o: str, lo: int, hi: int) -> tuple[int, dict[str, Expr]] | None:
        """The innermost loop variable `o` over [lo, hi) as ``lo + lanes*oa + ob``, when
        that takes divisions out of the kernel's indices; (lanes, the mapping) or None.

        A permuted or reshaped read (attention's heads: (B, H, T, D) read as (B, T, H*D))
        indexes with ``o // D`` and ``o % D``: a division per element, and since the lanes
        of one vector do not read consecutive elements, a gather (a bfloat16 gather is
        scalar loads). Written as ``D*oa + ob``, the indices simplify to ``oa`` and ``ob``
        and the inner loop over ``ob`` reads D elements in a row. Only the loop's shape
        changes: every element is still computed once by the same code, in the same order.
        Chooses the divisor (of [lo, hi)'s length, at least MIN_SPLIT_LANES) that leaves the
        fewest divisions over `o`, the largest among equals.
        """
        if self.prog.sched.symbolic:
            return None
        n = hi - lo
        exprs = self.exprs_of(o)
        here = {o: Var(o, n) + lo}  # o's own range: a clamp that cannot bind disappears
        exprs = [e.substitute(here) for e in exprs]
        before = [k for e in exprs for k in _divisions(e, {o})]
        best: tuple[int, int] | None = None  # (divisions left, -lanes)
        for lanes in sorted(set(before), reverse=True):
            if lanes < MIN_SPLIT_LANES or lanes >= n or n % lanes:
                continue
            oa, ob = f"{o}a", f"{o}b"
            sub = {o: Var(oa, n // lanes) * lanes + Var(ob, lanes)}
            left = sum(len(_divisions(e.substitute(sub), {oa, ob})) for e in exprs)
            if left < len(before) and (best is None or (left, -lanes) < best):
                best = (left, -lanes)
        if best is None:
            return None
        lanes = -best[1]
        whole = {o: Var(f"{o}a", n // lanes) * lanes + Var(f"{o}b", lanes) + lo}
        mapping = {k: v.substitute(whole) for k, v in self.mapping.items()}
        mapping.update(whole)
        return lanes, mapping

    def range_pieces(self) -> list[tuple[int, int, dict[int, str]]]:
        """The innermost loop of a pointwise kernel cut where its range tests change.

        A ``cat`` or a ``pad`` is a sum of pieces, each selected by a test of the loop
        variable against constant bounds (``o2 >= 128 && o2 <= 255``); a loop over the
        whole range loads every piece (with clamped indices) at every element and keeps
        one. Cut at the bounds, each sub-loop knows its tests (the values in `fixed`) and
        g++ drops the loads it does not use. Returns (start, end, fixed) per sub-loop; []
        when there is nothing to cut or too much (over MAX_RANGE_PIECES).
        """
        if self.prog.sched.symbolic or not self.onames:
            return []
        o, n = self.onames[-1], self.outer[-1]
        tests: dict[int, tuple[int, int]] = {}
        cuts = {0, n}
        for v in self.k.values:
            if v.op != "inrange":
                continue
            e, lo, hi = v.attr
            if self.mapping:
                e = e.substitute(self.mapping)
            if e.vars() != {o} or e.coefficient(o) != 1 or len(e.terms) != 1:
                continue
            a, b = lo - e.const, hi - e.const + 1  # the test: a <= o < b
            tests[v.id] = (a, b)
            cuts.update(x for x in (a, b) if 0 < x < n)
        if not tests or len(cuts) - 1 > MAX_RANGE_PIECES or len(cuts) < 3:
            return []
        at = sorted(cuts)
        return [
            (lo, hi, {x: "true" if a <= lo and hi <= b else "false" for x, (a, b) in tests.items()})
            for lo, hi in pairwise(at)
        ]

    def widened_back(self, wide: list[int], out: list[str]) -> None:
        for bid in wide:  # rounded once
            lo, hi, _ = self.widened_range(bid)
            out.append(INDENT + f"for (int64_t i = {lo}; i < {hi}; ++i) b{bid}[i] = w{bid}[i];")
            out.append(INDENT + f"delete[] w{bid}_all;")

    def widened_range(self, bid: int) -> tuple[str, str, str]:
        """The indices of b<bid> covering its whole buffer (the kernel's pointer may point
        into it, see _rebase), and the offset of w<bid> in its allocation."""
        n, moved = self.prog.buf(bid).numel, self.rebase.get(bid, 0)
        if not moved:
            return "0", str(n), ""
        return f"-{moved}", f"{n - moved}", f" + {moved}"

    def widened_targets(self) -> list[int]:
        """Buffers a scatter-add (or multiply) accumulates into in float32, rounded once at
        the end: bfloat16 ones, as torch and the interpreter (which widens bfloat16) do.
        float16 sums round at every addition, as the interpreter's NumPy float16 does."""
        if self.k.kind != "scatter":
            return []
        return sorted(
            {
                s.buffer
                for s in self.k.stores
                if s.mode != "set" and self.prog.buf(s.buffer).dtype in WIDENED_SCATTER
            }
        )

    # -- one outer point of a kernel with inner passes ----------------------------------------------
    def row(self, out: list[str], depth: int, split: bool) -> None:
        k = self.k
        done_outer: set[int] = set()

        def emit_outer(roots: list[int], ready: int) -> None:
            ids = [
                x
                for x in self.closure(roots, False)
                if x not in done_outer and self.k.ready(x, ready)
            ]
            self.emit_values(ids, out, depth)
            done_outer.update(ids)

        pass_roots = []
        for p in range(1, k.npasses + 1):
            reds = [r for r in k.reductions if r.pass_no == p]
            stores = [s for s in k.stores if s.inner and s.pass_no == p]
            pass_roots.append(
                [r.value for r in reds] + [x for s in stores for x in self.k.store_deps(s)]
            )
        cached = {} if split else self.plan_row_cache(pass_roots)
        for x in cached:
            self.row_cache[x] = f"c{x}"
            t = compute_type(k.values[x].dtype)
            out.append(
                INDENT * depth + f"alignas(64) {t} c{x}[{self.n_row}];  // kept for later passes"
            )

        if not split and k.kind == "reduction" and k.npasses >= 2:
            self.prefetch = self.next_row_prefetch(pass_roots[0])

        for p in range(1, k.npasses + 1):
            reds = [r for r in k.reductions if r.pass_no == p]
            stores = [s for s in k.stores if s.inner and s.pass_no == p]
            roots = pass_roots[p - 1]
            self.cache_save = {x for x, q in cached.items() if q == p - 1}
            self.cache_load = {x for x, q in cached.items() if q < p - 1}
            self.prefetch_now = p >= 2
            emit_outer(roots, p - 1)
            # Each pass is its own block; its accumulators' final values stay visible.
            for r in reds:
                out.append(INDENT * depth + f"{compute_type(r.dtype)} a{r.id};")
            out.append(INDENT * depth + f"{{  // pass {p}")
            if k.kind == "scan":
                self.scan_pass(out, depth + 1, reds, stores)
            elif split:
                self.split_pass(out, depth + 1, reds, stores)
            else:
                self.lane_pass(out, depth + 1, reds, stores)
            out.append(INDENT * depth + "}")
            for s in k.stores:
                if not s.inner and s.pass_no == p:
                    emit_outer(self.k.store_deps(s), p)
                    out.append(INDENT * depth + self.store_code(s))
        for s in k.stores:
            if not s.inner and s.pass_no == 0:
                emit_outer(self.k.store_deps(s), 0)
                out.append(INDENT * depth + self.store_code(s))

    def inner_body(self, roots: list[int], out: list[str], depth: int) -> None:
        self.emit_values(self.closure(roots, True), out, depth)

    def lane_pass(self, out: list[str], depth: int, reds: list[Reduce], stores: list[Any]) -> None:
        roots = [r.value for r in reds] + [x for s in stores for x in self.k.store_deps(s)]
        for r in reds:
            self.declare_lanes(r, out, depth)
        self.declare_blocks(reds, out, depth)
        lead_names, last = self.inames[:-1], self.inames[-1] if self.inames else None
        d = self.loop_open(lead_names, self.inner[:-1], depth, out, simd_last=False)
        if last is None:  # reductions over nothing: one element
            out.append(INDENT * d + "{ const int lane = 0;")
            self.inner_body(roots, out, d + 1)
            self.accumulate(reds, out, d + 1, "0")
            for s in stores:
                out.append(INDENT * (d + 1) + self.store_code(s))
            out.append(INDENT * d + "}")
        else:
            n = self.inner[-1]
            if reds:
                self.lane_loop(out, d, last, "0", str(n), roots, reds, stores)
            else:
                out.append(INDENT * d + "#pragma omp simd")
                out.append(INDENT * d + f"for (int64_t {last} = 0; {last} < {n}; ++{last}) {{")
                self.inner_body(roots, out, d + 1)
                for s in stores:
                    out.append(INDENT * (d + 1) + self.store_code(s))
                out.append(INDENT * d + "}")
        self.loop_close(len(lead_names), d, out)
        self.flush_blocks(reds, out, depth)
        for r in reds:
            self.combine_lanes(r, out, depth)

    def lane_loop(
        self,
        out: list[str],
        d: int,
        last: str,
        start: str,
        end: str,
        roots: list[int],
        reds: list[Reduce],
        stores: list[Any],
    ) -> None:
        """``last`` from ``start`` to ``end``: LANES-wide simd blocks, then a scalar tail.

        Each lane keeps its own accumulator, so the simd block has no loop-carried
        dependence and the lane order (hence the result) does not depend on threads.
        """
        out.append(INDENT * d + f"int64_t {last}_base = {start};")
        out.append(
            INDENT * d + f"for (; {last}_base + {LANES} <= {end}; {last}_base += {LANES}) {{"
        )
        out.append(INDENT * (d + 1) + "#pragma omp simd")
        out.append(INDENT * (d + 1) + f"for (int lane = 0; lane < {LANES}; ++lane) {{")
        out.append(INDENT * (d + 2) + f"const int64_t {last} = {last}_base + lane;")
        self.inner_body(roots, out, d + 2)
        self.accumulate(reds, out, d + 2, last)
        for s in stores:
            out.append(INDENT * (d + 2) + self.store_code(s))
        out.append(INDENT * (d + 1) + "}")
        self.count_block(reds, out, d + 1, LANES)
        if self.prefetch_now:
            out += [INDENT * (d + 1) + line for line in self.prefetch]
        out.append(INDENT * d + "}")
        out.append(INDENT * d + f"for (int64_t {last} = {last}_base; {last} < {end}; ++{last}) {{")
        out.append(INDENT * (d + 1) + "const int lane = 0;")
        self.inner_body(roots, out, d + 1)
        self.accumulate(reds, out, d + 1, last)
        for s in stores:
            out.append(INDENT * (d + 1) + self.store_code(s))
        self.count_block(reds, out, d + 1, 1)
        out.append(INDENT * d + "}")

    # reductions
    def acc_type(self, r: Reduce) -> str:
        src = self.k.values[r.value].dtype
        if r.kind in ("sum", "prod", "cumsum") and src.is_low_float:
            return "float"
        return compute_type(src)

    def init(self, r: Reduce) -> str:
        src = self.k.values[r.value].dtype
        if r.kind in ("sum", "cumsum"):
            return "0"
        if r.kind == "prod":
            return "1"
        is_max = r.kind in ("max", "argmax")
        if src is dt.bool_:
            return "false" if is_max else "true"
        if src.is_floating_point:
            inf = "__builtin_inff()" if src is not dt.float64 else "__builtin_inf()"
            return f"(-{inf})" if is_max else inf
        bits = src.itemsize * 8
        if src.is_signed:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            lo, hi = 0, (1 << bits) - 1
        return (
            f"(({compute_type(src)}){lo if is_max else hi}LL)"
            if bits < 64
            else ("INT64_MIN" if is_max else "INT64_MAX")
        )

    def declare_lanes(self, r: Reduce, out: list[str], depth: int) -> None:
        t = self.acc_type(r)
        out.append(INDENT * depth + f"{t} a{r.id}_l[{LANES}];")
        if r.kind in ("argmax", "argmin"):
            out.append(INDENT * depth + f"int64_t a{r.id}_i[{LANES}];")
        out.append(
            INDENT * depth + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_l[l] = {self.init(r)};"
        )
        if r.kind in ("argmax", "argmin"):
            out.append(INDENT * depth + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_i[l] = l;")

    # Two-level sums: a lane adds a reduction's terms into a block accumulator, and every
    # ROW_BLOCK elements of the pass (counted across rows, so short rows are blocked too)
    # the blocks are added to the running lanes and cleared. The flush is outside the
    # vectorized lane loop: one vector add per LANES-wide accumulator per block.
    def blocked_sum(self, r: Reduce) -> bool:
        return r.kind == "sum" and self.k.values[r.value].dtype.is_floating_point

    def declare_blocks(self, reds: list[Reduce], out: list[str], depth: int) -> None:
        blocked = [r for r in reds if self.blocked_sum(r)]
        if not blocked:
            return
        out.append(INDENT * depth + "int64_t blk_n = 0;  // elements in the current block")
        for r in blocked:
            out.append(INDENT * depth + f"{self.acc_type(r)} a{r.id}_b[{LANES}];")
            out.append(INDENT * depth + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_b[l] = 0;")

    def count_block(self, reds: list[Reduce], out: list[str], depth: int, step: int) -> None:
        blocked = [r for r in reds if self.blocked_sum(r)]
        if not blocked:
            return
        out.append(INDENT * depth + f"if ((blk_n += {step}) >= {ROW_BLOCK}) {{")
        out.append(INDENT * (depth + 1) + "blk_n = 0;")
        self.flush_blocks(blocked, out, depth + 1)
        out.append(INDENT * depth + "}")

    def flush_blocks(self, reds: list[Reduce], out: list[str], depth: int) -> None:
        for r in reds:
            if self.blocked_sum(r):
                out.append(
                    INDENT * depth + f"for (int l = 0; l < {LANES}; ++l) "
                    f"{{ a{r.id}_l[l] = a{r.id}_l[l] + a{r.id}_b[l]; a{r.id}_b[l] = 0; }}"
                )

    def combine_expr(self, r: Reduce, acc: str, v: str) -> str:
        src = self.k.values[r.value].dtype
        if r.kind in ("sum", "cumsum"):
            return f"{acc} || {v}" if src is dt.bool_ else f"{acc} + {v}"
        if r.kind == "prod":
            return f"{acc} && {v}" if src is dt.bool_ else f"{acc} * {v}"
        if r.kind in ("max", "min"):
            op = ">" if r.kind == "max" else "<"
            if src.is_floating_point:
                return f"(({v}) != ({v}) || {v} {op} {acc}) ? {v} : {acc}"
            return f"({v} {op} {acc}) ? {v} : {acc}"
        raise AssertionError(r.kind)

    def accumulate(self, reds: list[Reduce], out: list[str], depth: int, index: str) -> None:
        for r in reds:
            v = self.value_ref(r.value)
            a = f"a{r.id}_{'b' if self.blocked_sum(r) else 'l'}[lane]"
            if r.kind in ("argmax", "argmin"):
                fn = "better_max" if r.kind == "argmax" else "better_min"
                pos = self.arg_position(index)
                out.append(
                    INDENT * depth
                    + f"if (lt::{fn}({v}, {pos}, {a}, a{r.id}_i[lane])) {{ {a} = {v}; a{r.id}_i[lane] = {pos}; }}"
                )
            else:
                out.append(INDENT * depth + f"{a} = {self.combine_expr(r, a, v)};")

    def arg_position(self, index: str) -> str:
        # argmax/argmin reduce one axis: the position is the inner loop variable itself.
        return index

    def combine_lanes(self, r: Reduce, out: list[str], depth: int) -> None:
        t = self.acc_type(r)
        if r.kind in ("argmax", "argmin"):
            fn = "better_max" if r.kind == "argmax" else "better_min"
            n = self.inner[-1] if self.inner else 1
            out.append(INDENT * depth + f"{t} a{r.id}_v = a{r.id}_l[0]; a{r.id} = a{r.id}_i[0];")
            out.append(
                INDENT
                * depth
                + f"for (int l = 1; l < {LANES} && l < {n}; ++l) if (lt::{fn}(a{r.id}_l[l], a{r.id}_i[l], "
                f"a{r.id}_v, a{r.id})) {{ a{r.id}_v = a{r.id}_l[l]; a{r.id} = a{r.id}_i[l]; }}"
            )
            return
        out.append(INDENT * depth + f"{t} a{r.id}_t = a{r.id}_l[0];")
        out.append(
            INDENT * depth
            + f"for (int l = 1; l < {LANES}; ++l) a{r.id}_t = {self.combine_expr(r, f'a{r.id}_t', f'a{r.id}_l[l]')};"
        )
        out.append(INDENT * depth + f"a{r.id} = {self._finish_acc(r, f'a{r.id}_t')};")

    def _finish_acc(self, r: Reduce, name: str) -> str:
        if r.dtype.is_low_float:
            return rounded(name, r.dtype)
        return f"({compute_type(r.dtype)}){name}"

    def split_pass(self, out: list[str], depth: int, reds: list[Reduce], stores: list[Any]) -> None:
        """One huge row: fixed blocks reduced in parallel, combined in block order."""
        roots = [r.value for r in reds] + [x for s in stores for x in self.k.store_deps(s)]
        last = self.inames[0]
        n = self.inner[0]
        nb = _ceil_div(n, SPLIT_BLOCK)
        for r in reds:
            t = self.acc_type(r)
            out.append(INDENT * depth + f"{t}* a{r.id}_part = new {t}[{nb}];")
            if r.kind in ("argmax", "argmin"):
                out.append(INDENT * depth + f"int64_t* a{r.id}_ipart = new int64_t[{nb}];")
        pragma = "#pragma omp parallel for schedule(static)"
        if self.prog.sched.symbolic:  # a short row at run time is one block: no threads
            pragma += f" if({nb} > 1)"
        out.append(INDENT * depth + pragma)
        out.append(INDENT * depth + f"for (int64_t blk = 0; blk < {nb}; ++blk) {{")
        d = depth + 1
        for r in reds:
            self.declare_lanes(r, out, d)
            if r.kind in ("argmax", "argmin"):
                out.append(
                    INDENT * d
                    + f"for (int l = 0; l < {LANES}; ++l) a{r.id}_i[l] = blk * {SPLIT_BLOCK} + l;"
                )
        out.append(INDENT * d + f"const int64_t lo = blk * {SPLIT_BLOCK};")
        out.append(
            INDENT * d + f"const int64_t hi = lo + {SPLIT_BLOCK} < {n} ? lo + {SPLIT_BLOCK} : {n};"
        )
        self.declare_blocks(reds, out, d)
        self.lane_loop(out, d, last, "lo", "hi", roots, reds, stores)
        self.flush_blocks(reds, out, d)
        for r in reds:
            if r.kind in ("argmax", "argmin"):
                fn = "better_max" if r.kind == "argmax" else "better_min"
                out.append(
                    INDENT
                    * d
                    + f"{{ auto bv = a{r.id}_l[0]; int64_t bi = a{r.id}_i[0]; for (int l = 1; l < {LANES}; ++l) "
                    f"if (lt::{fn}(a{r.id}_l[l], a{r.id}_i[l], bv, bi)) {{ bv = a{r.id}_l[l]; bi = a{r.id}_i[l]; }} "
                    f"a{r.id}_part[blk] = bv; a{r.id}_ipart[blk] = bi; }}"
                )
            else:
                out.append(
                    INDENT * d
                    + f"{{ auto t = a{r.id}_l[0]; for (int l = 1; l < {LANES}; ++l) t = {self.combine_expr(r, 't', f'a{r.id}_l[l]')}; a{r.id}_part[blk] = t; }}"
                )
        out.append(INDENT * depth + "}")
        for r in reds:
            t = self.acc_type(r)
            if r.kind in ("argmax", "argmin"):
                fn = "better_max" if r.kind == "argmax" else "better_min"
                out.append(
                    INDENT * depth + f"{t} a{r.id}_v = a{r.id}_part[0]; a{r.id} = a{r.id}_ipart[0];"
                )
                out.append(
                    INDENT
                    * depth
                    + f"for (int64_t b = 1; b < {nb}; ++b) if (lt::{fn}(a{r.id}_part[b], a{r.id}_ipart[b], a{r.id}_v, a{r.id})) "
                    f"{{ a{r.id}_v = a{r.id}_part[b]; a{r.id} = a{r.id}_ipart[b]; }}"
                )
                out.append(INDENT * depth + f"delete[] a{r.id}_ipart;")
            else:
                out.append(INDENT * depth + f"{t} a{r.id}_t = a{r.id}_part[0];")
                out.append(
                    INDENT * depth
                    + f"for (int64_t b = 1; b < {nb}; ++b) a{r.id}_t = {self.combine_expr(r, f'a{r.id}_t', f'a{r.id}_part[b]')};"
                )
                out.append(INDENT * depth + f"a{r.id} = {self._finish_acc(r, f'a{r.id}_t')};")
            out.append(INDENT * depth + f"delete[] a{r.id}_part;")

    def scan_pass(self, out: list[str], depth: int, reds: list[Reduce], stores: list[Any]) -> None:
        roots = [r.value for r in reds] + [x for s in stores for x in self.k.store_deps(s)]
        for r in reds:
            out.append(INDENT * depth + f"{self.acc_type(r)} a{r.id}_run = 0;")
        d = self.loop_open(self.inames, self.inner, depth, out, simd_last=False)
        ids = [x for x in self.closure(roots, True)]
        for x in ids:
            code = self.value_code(self.k.values[x])
            if code:
                out.append(INDENT * d + code)
        for r in reds:
            v = self.value_ref(r.value)
            out.append(INDENT * d + f"a{r.id}_run = {self.combine_expr(r, f'a{r.id}_run', v)};")
            out.append(INDENT * d + f"a{r.id} = {self._finish_acc(r, f'a{r.id}_run')};")
        for s in stores:
            out.append(INDENT * d + self.store_code(s))
        self.loop_close(len(self.inames), d, out)


# -- externs ------------------------------------------------------------------------------------
def _extern_body(prog: _Program, e: Extern) -> list[str]:
    if e.kind == "matmul":
        return _matmul(prog, e)
    if e.kind == "argsort":
        src = prog.buf(e.inputs[0])
        axis = e.attrs["axis"]
        shape = src.shape
        pre = 1
        for d in shape[:axis]:
            pre *= d
        post = 1
        for d in shape[axis + 1 :]:
            post *= d
        desc = "true" if e.attrs["descending"] else "false"
        order, k = e.attrs["order"], e.attrs["k"]
        mode = {"stable": "kStable", "sort": "kSortOrder", "kth": "kKth"}.get(order, "kTopk")
        sorted_ = "false" if order == "topk_unsorted" else "true"
        return [
            f"{INDENT}lt::argsort_rows(b{src.id}, b{e.output}, {pre}, {shape[axis]}, {post}, "
            f"{desc}, lt::{mode}, {k}, {sorted_});"
        ]
    if e.kind in ("conv", "conv_wgrad"):
        # lt::conv2d(x, w, out, ...) or lt::conv2d_wgrad(x, dy, dw, ...), one geometry
        x, other = (prog.buf(b) for b in e.inputs)
        n, c, h, wd = x.shape
        if e.kind == "conv":
            fn, (o, _, kh, kw) = "conv2d", other.shape
        else:
            fn, o, (kh, kw) = "conv2d_wgrad", other.shape[1], e.attrs["kernel"]
        a = e.attrs
        geometry = (n, c, h, wd, o, kh, kw, *a["stride"], *a["padding"], *a["dilation"])
        return [
            f"{INDENT}(void)ia;",
            f"{INDENT}lt::{fn}(b{x.id}, b{other.id}, b{e.output}, "
            f"{', '.join(str(v) for v in geometry)});",
        ]
    raise LoweringMissing(f"extern {e.kind}")


def _matmul(prog: _Program, e: Extern) -> list[str]:
    """A product: the step's body.

    An epilogue (lazytorch_blas.h, "epilogues") is a function over a block of the product's
    rows and columns, which the GEMM calls on each of its blocks once multiplied. It is a
    static member of a class local to the step (`Ep::run`), so the step stays one function
    (compiler.split_units deals whole step functions to translation units) while the
    epilogue keeps a function's restrict-qualified pointers. The product goes to its
    buffer when the program keeps it, else to a tile of the calling thread (`lt::Tile`),
    never to the arena."""
    a, b = e.inputs
    out = prog.buf(e.output)
    batch = out.shape[:-2]
    m, n = out.shape[-2:]
    k = a.shape[-1]
    lines: list[str] = []
    if m == 0 or n == 0:  # no elements (nor any for an epilogue)
        return [f"{INDENT}(void)ia;"]
    nbatch = 1
    for d in batch:
        nbatch *= d
    ct = storage_type(out.dtype)
    # the operands' type: C is float32 for a product of 16-bit floats kept unrounded
    # (the matmul primitive's out_dtype), whose float32 sum `lt::gemm16` stores as it is
    opd = prog.buf(a.buffer).dtype
    at = storage_type(opd)
    gemm = _blas_gemm(opd)
    ep = e.epilogue
    if k == 0 and ep is None:
        return [f"{INDENT}for (int64_t i = 0; i < {nbatch * m * n}; ++i) b{out.id}[i] = ({ct})0;"]
    # Offsets of each batch for the operands (strided batch dims), and the output's.
    bvars = [f"n{i}" for i in range(len(batch))]
    if nbatch > 1:
        # many small products: one per thread (a product inside runs single-threaded)
        lines.append(
            f"{INDENT}#pragma omp parallel for schedule(static) "
            # The product printed factor by factor: each is one size (one literal to fit
            # when the sizes are symbols, see codegen/symbolic_source.py).
            f"if({nbatch} >= omp_get_max_threads() && "
            f"(int64_t){nbatch} * {m} * {n} * {k} >= (int64_t(1) << 21))"
        )
    lines.append(f"{INDENT}for (int64_t bi = 0; bi < {nbatch}; ++bi) {{")
    rest = "bi"
    for i in range(len(batch) - 1, -1, -1):
        lines.append(f"{INDENT * 2}const int64_t {bvars[i]} = {rest} % {batch[i]};")
        rest = f"({rest} / {batch[i]})"

    def offset(v: StridedView) -> str:
        terms = [str(v.offset)] + [f"{bvars[i]}*{v.strides[i]}" for i in range(len(batch))]
        return " + ".join(terms)

    lines.append(f"{INDENT * 2}const {at}* A = b{a.buffer} + {offset(a)};")
    lines.append(f"{INDENT * 2}const {at}* B = b{b.buffer} + {offset(b)};")
    i2, after = INDENT * 2, []
    if ep is None or e.store_output:
        lines.append(f"{i2}{ct}* C = b{out.id} + bi * {m * n};")
    elif gemm is not None:
        lines.append(f"{i2}lt::Tile<{ct}> tile({m * n});  // the product is not kept")
        lines.append(f"{i2}{ct}* C = tile.data;")
    else:  # (integer products: no lazytorch_blas.h)
        lines.append(f"{i2}{ct}* C = new {ct}[{m * n}];  // the product is not kept")
        after.append(f"{i2}delete[] C;")
    call = ""
    if ep is not None:
        name = "Ep::run"
        text = _EpilogueWriter(prog, ep, nbatch * m, n).function("run")
        lines[:0] = [
            f"{INDENT}struct Ep {{  // the epilogue",
            *(INDENT * 2 + ln for ln in text.split("\n")),
            f"{INDENT}}};",
        ]
        # its loads of the product read C: a pointer placed so that row r of the product
        # (over the batch) is row r - bi*m of C
        args = [
            f"C - bi * {m * n}" if bid == e.output else f"b{bid}"
            for bid in sorted(ep.reads | ep.writes)
        ]
        args += ["ia", "fa", "err", f"bi * {m} + i0", f"bi * {m} + i1", "j0", "j1"]
        call = f"{name}({', '.join(args)});"
    if k == 0:
        lines.append(f"{i2}for (int64_t i = 0; i < {m * n}; ++i) C[i] = ({ct})0;")
    elif gemm is not None:
        ta, lda = _blas_operand(a.strides[-2], a.strides[-1], m, k)
        tb, ldb = _blas_operand(b.strides[-2], b.strides[-1], k, n)
        fixed = "true" if prog.deterministic else "false"
        then = ""
        if ep is not None:
            then = f", [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {{ {call} }}"
        lines.append(
            f"{i2}{gemm}(lt::{ta}, lt::{tb}, {m}, {n}, {k}, A, {lda}, B, {ldb}, C, {n}, {fixed}{then});"
        )
        call = ""  # (the GEMM calls it)
    else:
        acc = compute_type(out.dtype) if out.dtype.is_floating_point else "int64_t"
        lines += [
            f"{i2}for (int64_t i = 0; i < {m}; ++i)",
            f"{INDENT * 3}for (int64_t j = 0; j < {n}; ++j) {{",
            f"{INDENT * 4}{acc} s = 0;",
            f"{INDENT * 4}for (int64_t p = 0; p < {k}; ++p) s += ({acc})A[i*{a.strides[-2]} + p*{a.strides[-1]}] * ({acc})B[p*{b.strides[-2]} + j*{b.strides[-1]}];",
            f"{INDENT * 4}C[i*{n} + j] = ({ct})s;",
            f"{INDENT * 3}}}",
        ]
    if call:  # the whole product at once
        lines.append(f"{i2}{{ const int64_t i0 = 0, i1 = {m}, j0 = 0, j1 = {n}; {call} }}")
    lines += after
    lines.append(f"{INDENT}}}")
    return lines


class _EpilogueWriter(_KernelWriter):
    """A matmul's epilogue kernel (scheduler/epilogue.py) as a function over one block of
    the product: rows ``[r0, r1)`` and columns ``[c0, c1)`` of its matrix view (``rows`` =
    batch x m rows of ``cols`` elements). The kernel iterates the product's elements in
    row-major order, so its loop variables are re-indexed from that position; the block's
    product is read where the caller's pointer puts it (a tile, see `_matmul`).
    No offsets move into pointers (the step calls it, not the entry) and it runs on the
    block's thread: no parallel loops."""

    def __init__(self, prog: _Program, k: Kernel, rows: int, cols: int) -> None:
        super().__init__(prog, k)
        prog.rebase.pop(k.name, None)
        self.rebase, self.slot_base = {}, {}
        flat = Var("e0", rows) * cols + Var("e1", cols)
        self.mapping = {f"o{i}": x for i, x in enumerate(unravel(flat, k.outer))}
        self.outer, self.onames = [rows, cols], ["e0", "e1"]
        self.inner, self.inames = [], []

    def function(self, name: str) -> str:
        prog, k = self.prog, self.k
        args = []
        for b in sorted(k.reads | k.writes):
            const_q = "" if b in k.writes else "const "
            args.append(f"{const_q}{storage_type(prog.buf(b).dtype)}* __restrict b{b}")
        args += ["const int64_t* ia", "const double* fa", "int64_t* err"]
        args += [f"int64_t {v}" for v in ("r0", "r1", "c0", "c1")]
        out = [f"static __attribute__((noinline)) void {name}({', '.join(args)}) {{"]
        out.append(f"{INDENT}for (int64_t e0 = r0; e0 < r1; ++e0) {{")
        roots = [r for st in k.stores for r in k.store_deps(st)]
        self.inner_loop(out, 2, ["for (int64_t e1 = c0; e1 < c1; ++e1) {"], {"e1"}, roots)
        out += [f"{INDENT}}}", "}"]
        return "\n".join(out)


def _blas_operand(s_rows: int, s_cols: int, rows: int, cols: int) -> tuple[str, int]:
    """(transpose flag, leading dimension) for a row-major BLAS operand with these strides."""
    if (s_cols == 1 or cols == 1) and (s_rows >= max(cols, 1) or rows == 1):
        return "kNoTrans", max(s_rows, cols, 1)
    return "kTrans", max(s_cols, rows, 1)
