"""What the scheduler produces: buffers, kernels, extern calls, and the schedule.

A `Kernel` is a loop nest over an *outer* iteration space (run in parallel) with an
optional *inner* space (the reduced dims of its reductions). Its body is a small SSA
graph of `KVal`s; each value lives at the outer level (once per outer point) or the inner
level (once per element), and the kernel runs as a sequence of passes over the inner
space: pass 1 computes the reductions that need nothing else, pass 2 those that need pass
1's results (a variance needs its mean), ..., and element-level stores run in the first
pass after the reductions they read. Softmax over rows is one kernel of three passes; a
pointwise kernel has no inner space and one implicit pass.

This is plain data: the scheduler decides it, codegen prints it, nobody else changes it.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import format_loc
from lazytorch.scheduler.indexing import Expr

__all__ = [
    "ATOMIC_ADD_DTYPES",
    "Buffer",
    "Extern",
    "KVal",
    "Kernel",
    "Reduce",
    "Schedule",
    "Store",
]

# Buffer dtypes whose scatter-add ("add" stores) both writers do with hardware atomics (C++
# ``#pragma omp atomic``, Triton ``tl.atomic_add``); other dtypes are serialized (C++) or
# refused (Triton).
ATOMIC_ADD_DTYPES = frozenset([dt.float32, dt.float64, dt.int32, dt.int64])


@dataclass
class Buffer:
    """A tensor in memory: a program input, a program output, or a temporary in the arena."""

    id: int
    shape: tuple[int, ...]
    dtype: DType
    kind: str  # "input" | "output" | "temp"
    param: int | None = None  # program parameter number (inputs)
    value: int | None = None  # program value it holds
    offset: int | None = None  # arena offset (temps), set by the memory plan
    inplace_of: int | None = None  # temp whose memory it reuses, if any

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def __str__(self) -> str:
        return f"b{self.id}:{self.dtype.short}{list(self.shape)}"


@dataclass
class KVal:
    """One value in a kernel body.

    ops: ``load`` (attr = (buffer id, index Expr)), ``scalar`` (attr = scalar slot),
    ``const`` (attr = Python number), ``index`` (attr = Expr, an int64), ``inrange``
    (attr = (Expr, lo, hi), a bool), ``prim`` (attr = (primitive name, params dict)),
    ``select`` (args = cond, a, b), ``acc`` (attr = Reduce id: a reduction's result),
    ``rand`` (args = seed, offset; attr = (linear index Expr, dist)), ``check`` (args =
    index value; attr = (size, program instruction, axis): bounds-checked index), ``after``
    (args = value, check: the value, once the check has run).
    """

    id: int
    op: str
    args: tuple[int, ...]
    attr: Any
    dtype: DType
    inner: bool = False

    def __str__(self) -> str:
        a = ", ".join(f"v{x}" for x in self.args)
        return f"v{self.id} = {self.op}{'(' + a + ')' if a else ''} {self.attr!r}"


def index_expr(v: KVal) -> Expr | None:
    """The index expression value `v` evaluates (load, inrange, rand, index), if any."""
    if v.op == "load":
        return v.attr[1]
    if v.op in ("inrange", "rand"):
        return v.attr[0]
    if v.op == "index":
        return v.attr
    return None


@dataclass
class Reduce:
    """A reduction of an inner-level value over the inner space, in pass `pass_no`."""

    id: int
    kind: str  # sum | prod | max | min | argmax | argmin | cumsum
    value: int  # KVal id (inner level)
    dtype: DType  # result dtype
    pass_no: int = 1


@dataclass
class Store:
    """Write a value to a buffer at an index (inner level: per element of a pass)."""

    buffer: int
    index: Expr
    value: int
    inner: bool
    pass_no: int = 1
    mode: str = "set"  # "set" | "add" (scatter-add) ; dynamic indices come from check values


@dataclass
class Kernel:
    name: str
    kind: str  # pointwise | reduction | scan | scatter
    outer: tuple[int, ...]
    inner: tuple[int, ...]
    values: list[KVal] = field(default_factory=list)
    reductions: list[Reduce] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)
    npasses: int = 1
    fused: list[str] = field(default_factory=list)  # primitive names, for printing
    locs: list[tuple[str, int]] = field(default_factory=list)

    @property
    def reads(self) -> set[int]:
        return {v.attr[0] for v in self.values if v.op == "load"}

    def exprs(self) -> list[Expr]:
        """Every index expression the kernel evaluates: its values' and its stores'."""
        out = [e for v in self.values if (e := index_expr(v)) is not None]
        return out + [s.index for s in self.stores]

    def refs(self, vid: int) -> list[int]:
        """The values value `vid` reads: its arguments and the values named inside its
        index expression (a gathered index, a ``v<N>`` variable in a load/inrange/rand/index)."""
        v = self.values[vid]
        e = index_expr(v)
        if e is None:
            return list(v.args)
        return [*v.args, *(int(n[1:]) for n in e.vars() if n.startswith("v"))]

    def store_deps(self, s: Store) -> list[int]:
        """The values a store reads: the stored value and those named in its index."""
        return [s.value] + [int(n[1:]) for n in s.index.vars() if n.startswith("v")]

    def ready(self, vid: int, after_pass: int) -> bool:
        """Whether the reductions value `vid` depends on are all computed by `after_pass`."""
        stack, seen = [vid], set()
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            v = self.values[x]
            if v.op == "acc" and self.reductions[v.attr].pass_no > after_pass:
                return False
            stack.extend(self.refs(x))
        return True

    def closure(self, roots: Iterable[int], inner: bool, stop: Container[int] = ()) -> list[int]:
        """Values of one level (`inner` or outer) that `roots` depend on, in id order.

        The walk crosses levels (an inner value may use an outer one) and stops at
        accumulators, which their own pass computes, and at values in `stop` (a writer's
        values it reads back instead of recomputing), which are still listed.
        """
        seen: set[int] = set()
        need: list[int] = []
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            v = self.values[x]
            if v.op == "acc":
                continue
            if v.inner == inner:
                need.append(x)
            if x not in stop:
                stack.extend(self.refs(x))
        return sorted(need)

    @property
    def writes(self) -> set[int]:
        return {s.buffer for s in self.stores}

    def describe(self) -> str:
        ops = ", ".join(self.fused) if self.fused else "copy"
        space = "x".join(str(d) for d in self.outer) or "1"
        if self.inner:
            space += " | " + "x".join(str(d) for d in self.inner)
        passes = f", {self.npasses} passes" if self.inner and self.npasses > 1 else ""
        return f"{self.name} [{self.kind} {space}{passes}]: fused[{ops}]"


@dataclass
class Extern:
    """A call into a library routine: matmul (BLAS), conv and conv_wgrad (a direct
    convolution and its weight gradient) or argsort.

    A matmul may carry an `epilogue` (`lazytorch.scheduler.epilogue`): a pointwise kernel
    over the product's elements, computed on each output tile before it is stored. Its
    loads of the product read the tile instead of memory, and the product itself is stored
    only when `store_output` says a later step or the caller reads it.
    """

    name: str
    kind: str  # matmul | conv | conv_wgrad | argsort
    inputs: list[Any]  # matmul: StridedView per operand; conv, argsort: buffer ids
    output: int  # buffer id
    attrs: dict[str, Any] = field(default_factory=dict)
    locs: list[tuple[str, int]] = field(default_factory=list)
    epilogue: Kernel | None = None
    store_output: bool = True

    @property
    def reads(self) -> set[int]:
        out = set()
        for i in self.inputs:
            out.add(i.buffer if isinstance(i, StridedView) else i)
        if self.epilogue is not None:
            out |= self.epilogue.reads - {self.output}
        return out

    @property
    def writes(self) -> set[int]:
        out = {self.output} if self.store_output else set()
        if self.epilogue is not None:
            out |= self.epilogue.writes
        return out

    def describe(self) -> str:
        text = f"{self.name} [extern {self.kind}] {self.attrs}"
        if self.epilogue is not None:
            ops = ", ".join(self.epilogue.fused) or "copy"
            text += f" + epilogue[{ops}]"
            if not self.store_output:
                text += " (product not stored)"
        return text


@dataclass
class StridedView:
    """A buffer read through strides: how BLAS sees an operand without a copy."""

    buffer: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class Schedule:
    """The whole plan for a program: what runs, in order, over which buffers."""

    buffers: list[Buffer]
    steps: list[Kernel | Extern]
    params: list[tuple[str, int]]  # per program param: ("buffer", buffer id) | ("scalar", slot)
    scalar_dtypes: list[DType]
    outputs: list[int]  # buffer ids, one per program output
    arena_bytes: int = 0
    naive_bytes: int = 0
    # Sizes are samples of symbolic sizes: temporaries' offsets are unrounded, with ALIGN
    # bytes of slack each, and must be aligned at run time (see scheduler.memory).
    symbolic: bool = False
    # Lines the caller adds to the printout (e.g. what a backward pass keeps from forward).
    notes: list[str] = field(default_factory=list)

    @property
    def kernels(self) -> list[Kernel]:
        return [s for s in self.steps if isinstance(s, Kernel)]

    def __str__(self) -> str:
        nk = len(self.kernels)
        ne = len(self.steps) - nk
        kinds = {"input": 0, "output": 0, "temp": 0}
        for b in self.buffers:
            if b.kind in kinds:
                kinds[b.kind] += 1
        lines = [
            f"schedule: {nk} kernels, {ne} extern calls; buffers: {kinds['input']} inputs, "
            f"{kinds['output']} outputs, {kinds['temp']} temporaries"
        ]
        for s in self.steps:
            lines.append("  " + s.describe())
            ins = sorted(s.reads)
            outs = sorted(s.writes)
            if ins or outs:
                lines.append(
                    f"      reads {', '.join(str(self.buffers[i]) for i in ins) or '-'}"
                    f"  writes {', '.join(str(self.buffers[o]) for o in outs)}"
                )
            if s.locs:
                lines.append("      from " + ", ".join(sorted({format_loc(loc) for loc in s.locs})))
        lines.append(
            f"memory: planned peak {_bytes(self.arena_bytes)} for temporaries "
            f"(naive {_bytes(self.naive_bytes)})"
        )
        lines += self.notes
        return "\n".join(lines)


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
