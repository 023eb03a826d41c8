"""From a canonical program to a schedule: anchors, groups, kernel bodies, memory.

See `lazytorch.scheduler.fusion` for the fusion rules and `lazytorch.scheduler.lower` for
how a kernel body computes values at index expressions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.ir.program import Program
from lazytorch.ir.symbolic import SymInt
from lazytorch.ir.verify import verify_enabled
from lazytorch.scheduler.epilogue import fuse_epilogues
from lazytorch.scheduler.fusion import (
    Group,
    can_share_space,
    describe_anchor,
    log,
    reaches,
    topo_order,
)
from lazytorch.scheduler.indexing import Dyn, Expr, Var, ravel
from lazytorch.scheduler.kernel import Buffer, Extern, Kernel, Schedule, StridedView
from lazytorch.scheduler.lower import MOVES, BodyBuilder, FusionRefused, move_index
from lazytorch.scheduler.memory import plan_memory
from lazytorch.scheduler.plan_check import check_plan

__all__ = ["SchedulingError", "schedule"]

# Inline-cost model for bound_recompute: each primitive's `cost` (lazytorch.ir.primitives;
# transcendental calls count as several plain ops, index-only moves as none). The shared
# threshold was 16 until a CNN step showed what it missed: ReLU's gradient over a strided
# convolution's columns gathered back (pads and adds, cost ~9, plus the gather's division
# and modulo index arithmetic, which costs count as nothing) was redone in every pass of
# BatchNorm's backward reductions; stored at 8, that step went from 44 to 39 ms with the
# GPT and MLP steps and the pointwise benchmarks unchanged (benchmarks/RESULTS.md).
INLINE_SHARED_COST = 8
INLINE_MAX_COST = 64
# A value broadcast into a larger space (an expand) is recomputed at every element of that
# space when inlined: a bias drawn by randn and never stored (an untrained model) redid its
# Philox rounds at each of the 300 x 256 outputs of the GEMM epilogue reading it, not once
# per column. At this inline cost it is stored once instead.
INLINE_BROADCAST_COST = 8
# Values a kernel body may inline along all its read paths (bound_recompute): a cat reads
# each input at its own index, so a chain of cats of slices of one value (roll after roll)
# doubles the inlined code at each step while its arithmetic cost barely grows.
INLINE_MAX_NODES = 512
FUSION_CANDIDATES = 16  # groups tried per anchor in place()
# Siblings fused side by side per kernel: past this a kernel only grows g++'s work (a loop
# of 2000 unrelated random draws compiles for seconds) without saving a pass over memory.
MAX_GROUP_ANCHORS = 32
# A cat of more inputs than this is not inlined as a chain of selects (which computes
# every piece at every element) but written piece by piece into its output's slices.
CAT_SELECT_MAX = 8
# Inputs of one shape stored by one kernel of such a cat: one pass over their shape (and one
# parallel region) instead of one per input; past this a kernel only grows g++'s work.
CAT_RUN_MAX = 16

EXTERN_KINDS = {
    "matmul": "matmul",
    "conv2d": "conv",
    "conv2d_wgrad": "conv",
    "argsort": "argsort",
    "scatter": "scatter",
    "cumsum": "scan",
}


def _broadcasts(shape: tuple[Any, ...], ins: Any) -> bool:
    """Whether `ins` (an expand of a value of `shape`) repeats that value: a new leading
    dim, or a size-1 dim made another size."""
    out = ins.shape
    new = len(out) - len(shape)

    def one(d: Any) -> bool:
        return isinstance(d, int) and d == 1  # a symbolic size is never 1 (it is >= 2)

    return any(not one(o) for o in out[:new]) or any(
        one(d) and not one(o) for d, o in zip(shape, out[new:])
    )


class SchedulingError(NotImplementedError):
    """The scheduler cannot handle this program (names the reason)."""


def schedule(prog: Program, symbolic: bool = False, fuse_epilogues: bool = True) -> Schedule:
    """The schedule that computes `prog`'s outputs.

    Sizes must be integers. A program over symbolic sizes (dynamic shapes) is scheduled
    at sample sizes instead, each sample with `symbolic` set, and the C++ backend merges
    the sources generated from them into one over the symbols
    (`lazytorch.codegen.symbolic_source`). `symbolic` says the sizes in `prog` are such
    samples: the memory plan then makes only size-independent decisions (see
    `lazytorch.scheduler.memory`).
    With `fuse_epilogues` the pointwise kernel after a matmul runs on each block of the
    product while the block is in cache or registers (`lazytorch.scheduler.epilogue`);
    both backends take it, False is for comparing against the unfused schedule.
    """
    for ins in prog.instrs:
        if ins.op.category == "collective":  # the runtime cuts at it (runtime/collectives.py)
            raise NotImplementedError(
                f"{ins.op.name} cannot be compiled into a program: a communication engine "
                "computes it, and the runtime runs it before any program that reads it"
            )
    sched = _Scheduler(prog, symbolic, fuse_epilogues).run()
    # (not at symbolic samples: the arena test could choose differently at each sample, and
    # their sources must have one structure to merge)
    narrow = frozenset() if symbolic else _narrowed(prog, sched)
    if narrow:  # scheduled again with them stored; kept only where the plan is smaller
        again = _Scheduler(prog, symbolic, fuse_epilogues, store=narrow).run()
        if again.arena_bytes < sched.arena_bytes:
            return again
    return sched


def _narrowed(prog: Program, sched: Schedule) -> frozenset[int]:
    """Narrower values worth storing in place of the wider stored value they come from.

    Under bfloat16 autocast a linear layer's output is ``cast(x @ w.T + b)``: the GEMM
    product is float32 and the output half its bytes. Inlined into every reader, the output
    keeps the float32 product in memory until the backward's last reader of it (gelu's and
    relu's gradients read the output again); stored, the product is read once, by the
    GEMM's epilogue, and never stored. So for each stored value that more than one step
    reads, the first narrower value down its chain of single-reader elementwise values
    (same elements, fewer bytes each; reshapes looked through) is a candidate;
    `schedule` keeps the schedule with them stored only if its planned arena is smaller.
    The numbers are the same either way: a stored value is what each reader would have
    recomputed.
    """
    base = len(prog.params)
    users: dict[int, list[int]] = {}
    for j, ins in enumerate(prog.instrs):
        for a in set(ins.inputs):
            users.setdefault(a, []).append(base + j)
    readers: dict[int, int] = {}
    for step in sched.steps:
        for b in set(step.reads):
            readers[b] = readers.get(b, 0) + 1
        if isinstance(step, Extern) and step.epilogue is not None:  # reads its own product
            readers[step.output] = readers.get(step.output, 0) + 1
    outputs = set(prog.outputs)
    found: set[int] = set()
    for buf in sched.buffers:
        if buf.kind != "temp" or buf.value is None or readers.get(buf.id, 0) < 2:
            continue
        wide = prog.value(buf.value)
        v = buf.value
        while len(users.get(v, ())) == 1 and v not in outputs:
            (u,) = users[v]
            ins = prog.value(u)
            if ins.op.name != "reshape" and ins.op.category != "elementwise":
                break
            if math.prod(ins.shape) != buf.numel:  # (a broadcast: more elements)
                break
            if ins.dtype.itemsize < wide.dtype.itemsize:
                found.add(u)
                break
            v = u
    return frozenset(found)


class _Scheduler:
    def __init__(
        self,
        prog: Program,
        symbolic: bool = False,
        epilogues: bool = False,
        store: frozenset[int] = frozenset(),
    ) -> None:
        self.prog = prog
        self.store = store  # values stored whatever fusion would inline (_narrowed)
        self.symbolic = symbolic
        self.epilogues = epilogues
        self.base = len(prog.params)
        self.buffers: list[Buffer] = []
        self.buffer_of: dict[int, Buffer] = {}
        self.scalar_slot: dict[int, int] = {}
        self.scalar_dtypes: list[dt.DType] = []
        self.params: list[tuple[str, int]] = []
        self.kind_of: dict[int, str] = {}  # anchor value -> anchor kind
        self.group_of: dict[int, int] = {}  # anchor value -> group id
        self.producer: dict[int, int] = {}  # anchor's buffer id -> group id
        self.groups: dict[int, Group] = {}
        self.views: dict[int, list[StridedView]] = {}  # matmul anchor -> operand views
        self.built: dict[int, list[Kernel | Extern]] = {}
        # Values stored to bound recomputation (bound_recompute). A reader at another index
        # (through a slice, a cat, a transpose...) must load one from memory, so it never
        # joins the kernel that computes it: inside that kernel it would be inlined again.
        self.bounded: set[int] = set()

    # -- setup -------------------------------------------------------------------------------
    def new_buffer(self, shape: tuple[Any, ...], dtype: dt.DType, kind: str, **kw: Any) -> Buffer:
        if any(isinstance(d, SymInt) for d in shape):
            raise SchedulingError(
                "schedule: sizes must be integers, got a symbolic size; a program over "
                "symbolic sizes is scheduled at sample sizes (see "
                "lazytorch.codegen.symbolic_source), or run by the interpreter backend"
            )
        b = Buffer(len(self.buffers), tuple(int(d) for d in shape), dtype, kind, **kw)
        self.buffers.append(b)
        return b

    def run(self) -> Schedule:
        prog = self.prog
        for i, p in enumerate(prog.params):
            if p.kind == "scalar":
                self.scalar_slot[i] = len(self.scalar_dtypes)
                self.scalar_dtypes.append(p.dtype)
                self.params.append(("scalar", self.scalar_slot[i]))
            else:
                b = self.new_buffer(p.shape, p.dtype, "input", param=i, value=i)
                self.buffer_of[i] = b
                self.params.append(("buffer", b.id))
        self.classify()
        for vid in sorted(self.kind_of):
            v = prog.value(vid)
            kind = "output" if vid in prog.outputs else "temp"
            self.buffer_of[vid] = self.new_buffer(v.shape, v.dtype, kind, value=vid)
        for vid in sorted(self.kind_of):
            self.place(vid)
        steps = self.finish()
        outputs = [self.buffer_of[o].id for o in prog.outputs]
        if self.epilogues:
            steps = fuse_epilogues(steps, self.buffers, set(outputs))
        used = {b for s in steps for b in (*s.reads, *s.writes)}
        for b in self.buffers:
            if b.kind == "temp" and b.id not in used:
                b.kind = "unused"
        arena, naive = plan_memory(self.buffers, steps, self.symbolic)
        sched = Schedule(
            self.buffers,
            steps,
            self.params,
            self.scalar_dtypes,
            outputs,
            arena,
            naive,
            symbolic=self.symbolic,
        )
        if verify_enabled():
            check_plan(sched)
        return sched

    # -- anchors ------------------------------------------------------------------------------
    def classify(self) -> None:
        prog = self.prog
        for j, ins in enumerate(prog.instrs):
            vid = self.base + j
            name = ins.op.name
            if ins.op.reduce_kind is not None:
                self.kind_of[vid] = "reduction"
            elif name in EXTERN_KINDS:
                self.kind_of[vid] = EXTERN_KINDS[name]
            elif name == "cat" and len(ins.inputs) > CAT_SELECT_MAX:
                self.kind_of[vid] = "concat"
            elif vid in prog.outputs:
                self.kind_of[vid] = "pointwise"
        # Operands an extern must find in memory become realized values.
        for vid, kind in list(self.kind_of.items()):
            ins = prog.value(vid)
            if kind == "matmul":
                views = []
                for a in ins.inputs:
                    view = self.strided_view(a)
                    if view is None:
                        # A view of a computed value (a reshape of a kernel's result): store
                        # that value and read it through strides, rather than copying the
                        # view into a buffer of its own.
                        base = self.below_moves(a)
                        if base != a:
                            self.realize(base)
                            view = self.strided_view(a)
                    if view is None or (ins.dtype.is_floating_point and not _blas_ok(view)):
                        self.realize(a)
                        view = None
                    views.append(view)
                self.views[vid] = views  # None entries are resolved after buffers exist
            elif kind == "argsort":
                self.realize(ins.inputs[0])
            elif kind == "conv":  # both operands contiguous in memory (lt::conv2d's layout)
                for a in ins.inputs:
                    self.realize(a)
        self.bound_recompute()
        for vid in sorted(self.store):
            self.realize(vid)

    def bound_recompute(self) -> None:
        """Store values whose inlined recomputation would cost more than a load.

        Fusion inlines every pointwise producer into each kernel that reads it, which is
        free for short chains but compounds when kernel after kernel reads the previous
        one's pointwise result (softmax over dim 0, then dim 1, ...): each kernel would redo
        the whole history. Like TorchInductor's realize thresholds, a value is stored once
        (becoming a kernel output) when it has several readers and its inline cost reaches
        INLINE_SHARED_COST, or when its cost alone reaches INLINE_MAX_COST.

        A value read through an ``expand`` that broadcasts it (a size-1 dim made larger) is
        stored when its inline cost reaches INLINE_BROADCAST_COST: inlined, it would be
        computed once per element of the larger space rather than once per element of its
        own.

        Code size is bounded too: `size` counts the values a kernel would emit to inline a
        value, along every path by which it is read (a cat reads each input at an index of
        its own; an elementwise op reads its inputs at one index, where the body builder
        computes a shared input once). A value whose inlined form would exceed
        INLINE_MAX_NODES is stored, so generated code grows linearly with the program
        (13 chained rolls once made a 1.5 MB kernel that g++ took two minutes over).
        """
        prog = self.prog
        users: dict[int, int] = {}
        for ins in prog.instrs:
            for a in set(ins.inputs):
                users[a] = users.get(a, 0) + 1
        cost: dict[int, int] = {}
        size: dict[int, int] = {}
        for j, ins in enumerate(prog.instrs):
            vid = self.base + j
            if vid in self.kind_of:
                cost[vid] = 0  # already stored
                continue
            if ins.op.name == "expand" and _broadcasts(prog.value(ins.inputs[0]).shape, ins):
                a = ins.inputs[0]
                # (not a bool: a mask is index arithmetic and compares, which vectorize
                # inlined, while a loop selecting on a stored mask vectorizes poorly)
                if (
                    cost.get(a, 0) >= INLINE_BROADCAST_COST
                    and a not in self.kind_of
                    and prog.value(a).dtype is not dt.bool_
                ):
                    self.kind_of[a] = "pointwise"
                    self.bounded.add(a)
                    cost[a], size[a] = 0, 1
            read = ins.inputs if ins.op.name == "cat" else set(ins.inputs)
            n = 1 + sum(size.get(a, 1) for a in read)
            c = ins.op.cost + sum(cost.get(a, 0) for a in set(ins.inputs))
            if (
                c >= INLINE_MAX_COST
                or (users.get(vid, 0) >= 2 and c >= INLINE_SHARED_COST)
                or n > INLINE_MAX_NODES
            ):
                self.kind_of[vid] = "pointwise"
                self.bounded.add(vid)
                c, n = 0, 1
            cost[vid] = c
            size[vid] = n

    def realize(self, vid: int) -> None:
        if vid < self.base or vid in self.kind_of:
            return
        self.kind_of[vid] = "pointwise"

    def below_moves(self, vid: int) -> int:
        """The first value under `vid`'s chain of single-input movement ops."""
        v = vid
        while v >= self.base and v not in self.kind_of:
            ins = self.prog.value(v)
            if ins.op.name not in MOVES or len(ins.inputs) != 1:
                break
            v = ins.inputs[0]
        return v

    def strided_view(self, vid: int) -> StridedView | None:
        """`vid` as strides over a buffer (through movement ops), if that is possible."""
        shape = tuple(self.prog.value(vid).shape)
        names = [f"s{i}" for i in range(len(shape))]
        idx = [Var(n, d) for n, d in zip(names, shape)]
        v = vid
        while v >= self.base and v not in self.kind_of:
            ins = self.prog.value(v)
            if ins.op.name not in MOVES:
                return None
            v, idx = move_index(self.prog, ins, idx)
        if v < self.base and self.prog.params[v].kind == "scalar":
            return None
        src_shape = self.prog.value(v).shape
        lin = ravel(idx, src_shape) if src_shape else Expr()
        strides = []
        for n in names:
            c = lin.coefficient(n)
            if c is None:
                return None
            strides.append(c)
        if any(type(t).__name__ != "_Var" for t in lin.terms):
            return None
        return StridedView(-1 - v, lin.const, shape, tuple(strides))  # buffer filled in later

    # -- grouping -------------------------------------------------------------------------------
    def space(self, vid: int) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        ins = self.prog.value(vid)
        kind = self.kind_of[vid]
        if kind == "reduction":
            src = self.prog.value(ins.inputs[0])
            axes = tuple(ins.params["axes"]) if "axes" in ins.params else (ins.params["axis"],)
            return kind, tuple(src.shape), axes
        if kind == "scan":
            return kind, tuple(ins.shape), (ins.params["axis"],)
        return kind, tuple(ins.shape), ()

    def place(self, vid: int) -> None:
        kind, shape, axes = self.space(vid)
        # The most recent groups first, and only the last few: a program of thousands of
        # kernels must not cost a trial build per pair (fusing with a group far back in
        # program order would rarely pay off anyway).
        moved: set[int] | None = None  # anchors vid reads at another index, found once
        for gid in sorted(self.groups, reverse=True)[:FUSION_CANDIDATES]:
            g = self.groups[gid]
            ok, why = can_share_space(g, kind, shape, axes)
            if ok and len(g.anchors) >= MAX_GROUP_ANCHORS:
                ok, why = False, f"it already computes {MAX_GROUP_ANCHORS} values"
            if ok and (held := self.bounded.intersection(g.anchors)):
                if moved is None:
                    moved = self.moved_reads(vid)
                if held & moved:
                    at = min(held & moved)
                    ok, why = False, f"it reads %{at} at another index (stored to be loaded)"
            if ok:
                n = self.size_in(g, vid)
                if n > INLINE_MAX_NODES:
                    ok, why = False, f"it would inline {n} values (limit {INLINE_MAX_NODES})"
            if not ok:
                log.debug(
                    "not fused: %s into %s: %s", describe_anchor(self.prog, vid), g.label(), why
                )
                continue
            try:
                steps = self.build(g, [*g.anchors, vid], final=False)
            except FusionRefused as e:
                log.debug(
                    "not fused: %s into %s: %s", describe_anchor(self.prog, vid), g.label(), e
                )
                continue
            deps = self.deps_of(steps, gid)
            # Only a group g does not read yet can close a cycle: one it reads already
            # reaching g would be a cycle now. (Walking every dep's ancestors, each check
            # was a walk of most of a big program's groups: 2 of DenseNet's 7 s schedule.)
            new = deps - g.deps
            cyc = None
            if new and reaches(self.groups, new, gid):
                cyc = next(d for d in sorted(new) if reaches(self.groups, d, gid))
            if cyc is not None:
                log.debug(
                    "not fused: %s into %s: it would read group %d, which reads this group",
                    describe_anchor(self.prog, vid),
                    g.label(),
                    cyc,
                )
                continue
            g.anchors.append(vid)
            g.inlined[vid] = n
            g.deps = deps
            self.group_of[vid] = gid
            self.producer[self.buffer_of[vid].id] = gid
            return
        gid = len(self.groups)
        g = Group(gid, kind, shape, axes, [vid])
        self.groups[gid] = g
        self.group_of[vid] = gid
        self.producer[self.buffer_of[vid].id] = gid
        g.deps = self.deps_of(self.build(g, g.anchors, final=False), gid)

    def size_in(self, g: Group, vid: int) -> int:
        """Values a kernel of group `g` emits to compute anchor `vid`, counted along every
        read path: `vid`'s inlined inputs, and the anchors of `g` it reads, which a kernel
        computes inline rather than loads (bound_recompute counts one kernel's values;
        this counts what fusing anchors that read each other adds up to)."""
        memo: dict[int, int] = {}

        def known(a: int) -> int | None:
            if a < self.base:
                return 1
            if a in self.kind_of:
                return g.inlined.get(a, 1)  # an anchor of g is inlined; others are loaded
            return memo.get(a)

        stack = [(vid, False)]
        while stack:  # post-order over the inlined values (chains may be long)
            v, ready = stack.pop()
            if v in memo:
                continue
            ins = self.prog.value(v)
            read = ins.inputs if ins.op.name == "cat" else list(set(ins.inputs))
            todo = [a for a in read if known(a) is None]
            if todo and not ready:
                stack.append((v, True))
                stack.extend((a, False) for a in todo)
                continue
            memo[v] = 1 + sum(known(a) or 0 for a in read)
        return memo[vid]

    def moved_reads(self, vid: int) -> set[int]:
        """The anchors `vid` reads, through the values it inlines, along a path with a
        movement op (a read at an index other than the reader's own)."""
        out: set[int] = set()
        stack = [(a, False) for a in self.prog.value(vid).inputs]
        seen: set[tuple[int, bool]] = set()
        while stack:
            a, moved = stack.pop()
            if (a, moved) in seen or a < self.base:
                continue
            seen.add((a, moved))
            if a in self.kind_of:
                if moved:
                    out.add(a)
                continue
            ins = self.prog.value(a)
            moved = moved or ins.op.category == "movement" or ins.op.name == "gather"
            stack.extend((x, moved) for x in ins.inputs)
        return out

    def deps_of(self, steps: list[Kernel | Extern], gid: int) -> set[int]:
        out: set[int] = set()
        for s in steps:
            for b in s.reads:
                g = self.producer.get(b)
                if g is not None and g != gid:
                    out.add(g)
        return out

    # -- bodies ---------------------------------------------------------------------------------
    def read_elsewhere(self) -> set[int]:
        """Anchors whose values a kernel of another group (or the caller) reads."""
        out = set(self.prog.outputs)
        for gid, steps in self.built.items():
            for s in steps:
                for b in s.reads:
                    v = self.buffers[b].value
                    if v is not None and self.group_of.get(v, gid) != gid:
                        out.add(v)
        return out

    def build(self, g: Group, anchors: list[int], final: bool) -> list[Kernel | Extern]:
        own = set(anchors)
        buf_map = _Without(self.buffer_of, own)
        name = f"k{g.id}"
        if g.kind in ("matmul", "argsort", "conv"):
            return [self.extern(g, anchors[0])]
        if g.kind == "scatter":
            return self.scatter(g, anchors[0], buf_map)
        if g.kind == "concat":
            return self.concat(g, anchors[0], buf_map)
        local = {a for a in anchors if self.kind_of[a] == "reduction"}
        kind = {"reduction": "reduction", "scan": "scan"}.get(g.kind, "pointwise")
        bb = BodyBuilder(self.prog, name, kind, g.shape, g.axes, buf_map, self.scalar_slot, local)
        keep = self.needs_store if final else set(self.prog.outputs)
        for a in anchors:
            k = self.kind_of[a]
            buf = self.buffer_of[a]
            if k == "reduction":
                bb.add_reduction(a)
                if a in keep:
                    idx = bb.kept_index()
                    bb.store(buf, bb.value_at(a, idx), idx)
            elif k == "scan":
                acc = bb.add_scan(a)
                bb.store(buf, acc, bb.full_index())
            else:
                idx = bb.index_for(tuple(self.prog.value(a).shape))
                assert idx is not None, "can_share_space admitted an incompatible shape"
                bb.store(buf, bb.value_at(a, idx), idx)
        return [bb.finish()]

    def scatter(self, g: Group, vid: int, buf_map: Mapping[int, Buffer]) -> list[Kernel | Extern]:
        ins = self.prog.value(vid)
        x, index, src = ins.inputs
        out = self.buffer_of[vid]
        axis, reduce = ins.params["axis"], ins.params["reduce"]
        init = BodyBuilder(
            self.prog,
            f"k{g.id}_init",
            "pointwise",
            tuple(ins.shape),
            (),
            buf_map,
            self.scalar_slot,
            set(),
        )
        full = init.full_index()
        init.store(out, init.value_at(x, full), full)
        idx_shape = tuple(self.prog.value(index).shape)
        upd = BodyBuilder(
            self.prog, f"k{g.id}", "scatter", idx_shape, (), buf_map, self.scalar_slot, set()
        )
        pos = upd.full_index()
        j = upd.value_at(index, pos)
        size = ins.shape[axis]
        checked = upd._add("check", (j,), (size, ins.origin, axis), dt.int64, False)
        target = list(pos)
        target[axis] = Dyn(f"v{checked}", 0, size - 1)
        upd.note(ins)
        mode = {"add": "add", "multiply": "mul"}.get(reduce, "set")
        upd.store(out, upd.value_at(src, pos), target, mode=mode)
        return [init.finish(), upd.finish()]

    def concat(self, g: Group, vid: int, buf_map: Mapping[int, Buffer]) -> list[Kernel | Extern]:
        """Pointwise kernels storing each input into its slice of the output: one kernel per
        run of consecutive inputs of one shape (a convolution's taps), at most
        `CAT_RUN_MAX` of them, storing each at its own offset as it iterates their shape."""
        ins = self.prog.value(vid)
        axis = ins.params["axis"]
        out = self.buffer_of[vid]
        pieces: list[list[tuple[int, int, int]]] = []  # runs of (input index, value, start)
        start = 0
        for i, x in enumerate(ins.inputs):
            shape = tuple(self.prog.value(x).shape)
            if 0 not in shape:
                run = pieces[-1] if pieces else None
                if (
                    run is None
                    or len(run) >= CAT_RUN_MAX
                    or tuple(self.prog.value(run[0][1]).shape) != shape
                ):
                    pieces.append([])
                pieces[-1].append((i, x, start))
            start += shape[axis]
        steps: list[Kernel | Extern] = []
        for run in pieces:
            shape = tuple(self.prog.value(run[0][1]).shape)
            bb = BodyBuilder(
                self.prog,
                f"k{g.id}_{run[0][0]}",
                "pointwise",
                shape,
                (),
                buf_map,
                self.scalar_slot,
                set(),
            )
            src = bb.full_index()
            bb.note(ins)
            for _i, x, at in run:
                dst = list(src)
                dst[axis] = src[axis] + at
                bb.store(out, bb.value_at(x, src), dst)
            steps.append(bb.finish())
        return steps

    def extern(self, g: Group, vid: int) -> Extern:
        ins = self.prog.value(vid)
        out = self.buffer_of[vid].id
        if g.kind == "argsort":
            src = self.buffer_of[ins.inputs[0]].id
            attrs = {
                "axis": ins.params["axis"],
                "descending": ins.params["descending"],
                "order": ins.params["order"],
                "k": ins.params["k"],
            }
            return Extern(f"k{g.id}", "argsort", [src], out, attrs, [ins.loc] if ins.loc else [])
        if g.kind == "conv":
            srcs = [self.buffer_of[a].id for a in ins.inputs]
            attrs = {k: ins.params[k] for k in ("stride", "padding", "dilation")}
            kind = "conv" if ins.op.name == "conv2d" else "conv_wgrad"
            if kind == "conv_wgrad":
                attrs["kernel"] = ins.params["kernel"]
            return Extern(f"k{g.id}", kind, srcs, out, attrs, [ins.loc] if ins.loc else [])
        views = []
        for a, view in zip(ins.inputs, self.views[vid]):
            if view is None:
                view = self.strided_view(a)
            assert view is not None
            view = StridedView(
                self.buffer_of[-1 - view.buffer].id, view.offset, view.shape, view.strides
            )
            views.append(view)
        return Extern(f"k{g.id}", "matmul", views, out, {}, [ins.loc] if ins.loc else [])

    def finish(self) -> list[Kernel | Extern]:
        for gid, g in self.groups.items():
            self.built[gid] = self.build(g, g.anchors, final=False)
        self.needs_store = self.read_elsewhere()
        steps: list[Kernel | Extern] = []
        for g in topo_order(self.groups):
            steps.extend(self.build(g, g.anchors, final=True))
        return steps


def _blas_ok(view: StridedView) -> bool:
    """Whether BLAS can read the last two dims through these strides (one of them unit)."""
    if len(view.shape) < 2:
        return False
    (m, k), (sm, sk) = view.shape[-2:], view.strides[-2:]
    row_major = (sk == 1 or k == 1) and (sm >= max(k, 1) or m == 1)
    col_major = (sm == 1 or m == 1) and (sk >= max(m, 1) or k == 1)
    return row_major or col_major


class _Without(Mapping[int, Buffer]):
    """`buffer_of` minus a group's own anchors, without copying it for every trial build
    (a copy per build made scheduling quadratic in the number of kernels)."""

    def __init__(self, base: dict[int, Buffer], hidden: set[int]) -> None:
        self.base = base
        self.hidden = hidden

    def __getitem__(self, vid: int) -> Buffer:
        if vid in self.hidden:
            raise KeyError(vid)
        return self.base[vid]

    def __iter__(self) -> Iterator[int]:
        return (v for v in self.base if v not in self.hidden)

    def __len__(self) -> int:
        return sum(1 for _ in self)
