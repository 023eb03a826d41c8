"""Building a kernel body: every fused value evaluated *at an index expression*.

`BodyBuilder.value_at(v, index)` returns the kernel value computing program value `v` at
`index` (expressions over the kernel's loop variables). Movement ops never compute: they
rewrite the index and recurse (a transpose swaps index entries, a reshape ravels and
unravels, a slice scales and shifts, a pad or cat guards a clamped read with a select).
Realized values are loads from their buffers; a gather reads its source at an index taken
from the data (bounds-checked); a reduction computed in this very kernel may only be read at
the current row — anything else would need a value another iteration produces, so the
fusion is refused (`FusionRefused`) and the caller realizes it instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.ir.program import Instr, Program
from lazytorch.scheduler.indexing import Dyn, Expr, Var, const, ravel, unravel
from lazytorch.scheduler.kernel import Buffer, Kernel, KVal, Reduce, Store

__all__ = ["MOVES", "BodyBuilder", "FusionRefused", "move_index"]


class FusionRefused(Exception):
    """This value cannot be computed inside this kernel; the reason says why."""


def _axes(ins: Instr) -> tuple[int, ...]:
    a = ins.params
    return tuple(a["axes"]) if "axes" in a else (a["axis"],)


MOVES = ("reshape", "permute", "expand", "slice", "flip")


def move_index(prog: Program, ins: Instr, idx: list[Expr]) -> tuple[int, list[Expr]]:
    """(input value, index in it) read by a reshape/permute/expand/slice/flip at `idx`."""
    (x,) = ins.inputs
    in_shape = prog.value(x).shape
    name = ins.op.name
    p = ins.params
    if name == "reshape":
        return x, unravel(ravel(idx, ins.shape), in_shape)
    if name == "permute":
        src = [const(0)] * len(p["perm"])
        for i, d in enumerate(p["perm"]):
            src[d] = idx[i]
        return x, src
    if name == "expand":
        lead = len(ins.shape) - len(in_shape)
        return x, [const(0) if d == 1 else idx[lead + j] for j, d in enumerate(in_shape)]
    if name == "slice":
        return x, [e * st + lo for e, lo, st in zip(idx, p["starts"], p["steps"])]
    if name == "flip":
        return x, [(in_shape[d] - 1) - e if d in p["axes"] else e for d, e in enumerate(idx)]
    raise AssertionError(name)


def index_expr(v: KVal) -> Expr | None:
    """The index expression a kernel value reads at, if it has one."""
    if v.op == "load":
        return v.attr[1]  # type: ignore[no-any-return]
    if v.op in ("inrange", "rand"):
        return v.attr[0]  # type: ignore[no-any-return]
    if v.op == "index":
        return v.attr  # type: ignore[no-any-return]
    return None


class BodyBuilder:
    """Builds one kernel over `space`: (shape, reduced axes) of its full iteration space."""

    def __init__(
        self,
        prog: Program,
        name: str,
        kind: str,
        shape: tuple[int, ...],
        axes: tuple[int, ...],
        buffer_of: Mapping[int, Buffer],
        scalar_slot: dict[int, int],
        local_reductions: set[int],
    ) -> None:
        self.prog = prog
        self.base = len(prog.params)
        self.shape = shape
        self.axes = axes
        self.buffer_of = buffer_of
        self.scalar_slot = scalar_slot
        self.local = local_reductions
        outer = tuple(d for i, d in enumerate(shape) if i not in axes)
        inner = tuple(shape[a] for a in axes)
        self.kernel = Kernel(name, kind, outer, inner)
        self.outer_vars = [Var(f"o{k}", d) for k, d in enumerate(outer)]
        self.inner_vars = [Var(f"r{k}", d) for k, d in enumerate(inner)]
        self._memo: dict[tuple[Any, ...], int] = {}
        self._cse: dict[tuple[Any, ...], int] = {}
        self._acc: dict[int, int] = {}  # reduction value id -> Reduce id
        self._fused: list[tuple[int, str]] = []  # (position in the capture, primitive)

    # -- index spaces ------------------------------------------------------------------------
    def full_index(self) -> list[Expr]:
        """The iteration index in the kernel's full shape (outer vars on kept dims)."""
        o, r = iter(self.outer_vars), iter(self.inner_vars)
        return [next(r) if i in self.axes else next(o) for i in range(len(self.shape))]

    def index_for(self, shape: tuple[int, ...]) -> list[Expr] | None:
        """An index for a value of `shape` stored from this kernel's loops, if its dims
        (ignoring size-1 dims) are the kernel's full dims or its kept (outer) dims."""
        for space, want in ((self.full_index(), self.shape), (self.outer_vars, self.kernel.outer)):
            dims = [(e, d) for e, d in zip(space, want) if d != 1]
            if [d for _, d in dims] == [d for d in shape if d != 1]:
                it = iter(e for e, _ in dims)
                return [const(0) if d == 1 else next(it) for d in shape]
        return None

    def kept_index(self) -> list[Expr]:
        """The index of a reduction result (keepdims shape) at the current row."""
        o = iter(self.outer_vars)
        return [const(0) if i in self.axes else next(o) for i in range(len(self.shape))]

    # -- values --------------------------------------------------------------------------------
    def _add(self, op: str, args: tuple[int, ...], attr: Any, dtype: dt.DType, inner: bool) -> int:
        key = (op, args, attr, dtype)
        hit = self._cse.get(key)
        if hit is not None:
            return hit
        vid = len(self.kernel.values)
        self.kernel.values.append(KVal(vid, op, args, attr, dtype, inner))
        self._cse[key] = vid
        return vid

    def _is_inner(self, *items: Any) -> bool:
        names = {f"r{k}" for k in range(len(self.inner_vars))}
        for it in items:
            if isinstance(it, int):
                if self.kernel.values[it].inner:
                    return True
            elif isinstance(it, Expr) and (
                it.vars() & names
                or any(n.startswith("v") and self._dyn_inner(n) for n in it.vars())
            ):
                return True
        return False

    def _dyn_inner(self, name: str) -> bool:
        return self.kernel.values[int(name[1:])].inner

    def load(self, buf: Buffer, index: list[Expr]) -> int:
        lin = ravel(index, buf.shape) if buf.shape else const(0)
        return self._add("load", (), (buf.id, lin), buf.dtype, self._is_inner(lin))

    def value_at(self, vid: int, index: list[Expr]) -> int:
        key = (vid, tuple(index))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._compute(vid, list(index))
        return hit

    def _compute(self, vid: int, idx: list[Expr]) -> int:
        if vid < self.base:
            p = self.prog.params[vid]
            if p.kind == "scalar":
                return self._add("scalar", (), self.scalar_slot[vid], p.dtype, False)
            return self.load(self.buffer_of[vid], idx)
        ins = self.prog.instrs[vid - self.base]
        if vid in self.local:
            return self._local_reduction(vid, ins, idx)
        buf = self.buffer_of.get(vid)
        if buf is not None:
            return self.load(buf, idx)
        self.note(ins)
        name = ins.op.name
        method = getattr(self, f"_lower_{name}", None)
        if method is not None:
            return method(ins, idx)  # type: ignore[no-any-return]
        if ins.op.category == "elementwise":
            args = tuple(
                self.value_at(a, idx if self.prog.value(a).shape else []) for a in ins.inputs
            )
            # Ops that can fail at run time (integer division by zero) name their instruction.
            origin = ins.origin if name in ("floordiv", "remainder", "fmod") else -1
            attr = (name, tuple(sorted(ins.params.items())), origin)
            return self._add("prim", args, attr, ins.dtype, self._is_inner(*args))
        raise FusionRefused(f"{name} cannot be computed inside a kernel")

    def note(self, ins: Instr) -> None:
        if ins.op.name not in ("reshape", "expand", "permute", "const"):
            self._fused.append((ins.origin, ins.op.name))
        if ins.loc is not None:
            self.kernel.locs.append(ins.loc)

    # -- reductions ------------------------------------------------------------------------------
    def add_reduction(self, vid: int) -> int:
        """Reduce program value `vid` (a reduction primitive) in this kernel."""
        ins = self.prog.instrs[vid - self.base]
        self.note(ins)
        (src,) = ins.inputs
        v = self.value_at(src, self.full_index())
        rid = len(self.kernel.reductions)
        self.kernel.reductions.append(Reduce(rid, ins.op.reduce_kind, v, ins.dtype))
        self._acc[vid] = rid
        return rid

    def _local_reduction(self, vid: int, ins: Instr, idx: list[Expr]) -> int:
        want = self.kept_index()
        if [e.key() for e in idx] != [e.key() for e in want]:
            raise FusionRefused(
                f"{ins.op.name} result is read at another row ({idx}) than the one computed"
            )
        rid = self._acc.get(vid)
        if rid is None:
            raise FusionRefused(f"{ins.op.name} is read before it is computed in this kernel")
        return self._add("acc", (), rid, ins.dtype, False)

    def add_scan(self, vid: int) -> int:
        ins = self.prog.instrs[vid - self.base]
        self.note(ins)
        (src,) = ins.inputs
        v = self.value_at(src, self.full_index())
        rid = len(self.kernel.reductions)
        self.kernel.reductions.append(Reduce(rid, "cumsum", v, ins.dtype))
        self._acc[vid] = rid
        return self._add("acc", (), rid, ins.dtype, True)

    # -- stores ----------------------------------------------------------------------------------
    def store(self, buf: Buffer, value: int, index: list[Expr], mode: str = "set") -> None:
        lin = ravel(index, buf.shape) if buf.shape else const(0)
        inner = self._is_inner(value, lin)
        self.kernel.stores.append(Store(buf.id, lin, value, inner, mode=mode))

    # -- movement: rewrite the index ---------------------------------------------------------------
    def _lower_reshape(self, ins: Instr, idx: list[Expr]) -> int:
        return self.value_at(*move_index(self.prog, ins, idx))

    _lower_permute = _lower_expand = _lower_slice = _lower_flip = _lower_reshape

    def _lower_pad(self, ins: Instr, idx: list[Expr]) -> int:
        x, fill = ins.inputs
        in_shape = self.prog.value(x).shape
        f = self.value_at(fill, [])
        if any(d == 0 for d in in_shape):
            return f
        lo = ins.params["lo"]
        cond: int | None = None
        src = []
        for d, (e, a, n) in enumerate(zip(idx, lo, in_shape)):
            pad_here = a or ins.params["hi"][d]
            if pad_here:
                c = self._add("inrange", (), (e, a, a + n - 1), dt.bool_, self._is_inner(e))
                cond = c if cond is None else self._and(cond, c)
                src.append((e - a).clamp(0, n - 1))
            else:
                src.append(e)
        v = self.value_at(x, src)
        if cond is None:
            return v
        return self._add("select", (cond, v, f), None, ins.dtype, self._is_inner(cond, v, f))

    def _lower_cat(self, ins: Instr, idx: list[Expr]) -> int:
        axis = ins.params["axis"]
        pieces = []
        start = 0
        for x in ins.inputs:
            n = self.prog.value(x).shape[axis]
            if n:
                pieces.append((x, start, n))
            start += n
        e = idx[axis]
        out: int | None = None
        for x, s, n in reversed(pieces):
            sub = list(idx)
            sub[axis] = (e - s).clamp(0, n - 1)
            v = self.value_at(x, sub)
            if out is None:
                out = v
                continue
            c = self._add("inrange", (), (e, s, s + n - 1), dt.bool_, self._is_inner(e))
            out = self._add("select", (c, v, out), None, ins.dtype, self._is_inner(c, v, out))
        assert out is not None
        return out

    def _and(self, a: int, b: int) -> int:
        return self._add("prim", (a, b), ("bitwise_and", ()), dt.bool_, self._is_inner(a, b))

    # -- sources -------------------------------------------------------------------------------------
    def _lower_const(self, ins: Instr, idx: list[Expr]) -> int:
        return self._add("const", (), ins.attrs[0], ins.dtype, False)

    def _lower_iota(self, ins: Instr, idx: list[Expr]) -> int:
        e = idx[ins.params["axis"]]
        i = self._add("index", (), e, dt.int64, self._is_inner(e))
        if ins.dtype is dt.int64:
            return i
        return self._add(
            "prim", (i,), ("cast", (("dtype", ins.dtype),)), ins.dtype, self._is_inner(i)
        )

    def _lower_rand(self, ins: Instr, idx: list[Expr]) -> int:
        seed, off = (self.value_at(a, []) for a in ins.inputs)
        lin = ravel(idx, ins.shape)
        attr = (lin, ins.params["dist"])
        return self._add("rand", (seed, off), attr, ins.dtype, self._is_inner(lin))

    # -- data-dependent reads ------------------------------------------------------------------------
    def _lower_gather(self, ins: Instr, idx: list[Expr]) -> int:
        src, index = ins.inputs
        axis = ins.params["axis"]
        size = self.prog.value(src).shape[axis]
        j = self.value_at(index, idx)
        checked = self._add("check", (j,), (size, ins.origin, axis), dt.int64, self._is_inner(j))
        sub = list(idx)
        sub[axis] = Dyn(f"v{checked}", 0, size - 1)
        out = self.value_at(src, sub)
        if not self._depends_on(out, checked):
            # The source does not vary along `axis` (0-d, size 1, expanded, or computed
            # without reading its index): the read no longer mentions the checked index,
            # but an out-of-range index must still raise, so tie the check to the result.
            out = self._add("after", (out, checked), None, ins.dtype, self._is_inner(out, j))
        return out

    def _depends_on(self, vid: int, target: int) -> bool:
        vals = self.kernel.values
        stack, seen = [vid], set()
        while stack:
            x = stack.pop()
            if x == target:
                return True
            if x in seen or x < target:  # values only depend on earlier ones
                continue
            seen.add(x)
            stack.extend(vals[x].args)
            e = index_expr(vals[x])
            if e is not None:
                stack.extend(int(n[1:]) for n in e.vars() if n.startswith("v"))
        return False

    # -- finishing ------------------------------------------------------------------------------------
    def finish(self) -> Kernel:
        """Assign reductions and stores to passes (see scheduler.kernel)."""
        k = self.kernel
        k.fused = [name for _, name in sorted(set(self._fused))]
        red_pass: dict[int, int] = {}

        deps_memo: dict[int, set[int]] = {}

        # Values are created after their arguments (ids ascend), so one forward sweep
        # computes every value's reduction dependencies without recursion (programs with
        # thousands of fused values would overflow Python's stack).
        for vid, v in enumerate(k.values):
            out: set[int] = set()
            if v.op == "acc" and k.reductions[v.attr].kind != "cumsum":
                out.add(v.attr)
            for a in v.args:
                out |= deps_memo[a]
            expr = index_expr(v)
            if expr is not None:
                for n in expr.vars():
                    if n.startswith("v"):
                        out |= deps_memo[int(n[1:])]
            deps_memo[vid] = out

        def red_deps(vid: int) -> set[int]:
            return deps_memo[vid]

        for r in k.reductions:
            deps = red_deps(r.value)
            r.pass_no = 1 + max((red_pass[d] for d in deps), default=0)
            red_pass[r.id] = r.pass_no
        for s in k.stores:
            deps = red_deps(s.value)
            for n in s.index.vars():
                if n.startswith("v"):
                    deps |= red_deps(int(n[1:]))
            last = max((red_pass[d] for d in deps), default=0)
            s.pass_no = last + 1 if s.inner else last
        passes = [r.pass_no for r in k.reductions] + [s.pass_no for s in k.stores if s.inner]
        k.npasses = max(passes, default=1)
        return k
