"""From a cut of the lazy graph to a canonical program.

`capture(roots)` walks the pending graph once. It finds the program's parameters (nodes
whose value is already known: data leaves, Python scalars, earlier results), the nodes to
compute in topological order, and the cache key. The key is the sequence of structural
hashes *plus the local wiring* (which earlier value each input refers to): leaves hash by
metadata only, so hashes alone cannot tell ``(x + y) * x`` from ``(x + y) * y``.

On a cache miss, `Program.from_capture` turns the capture into a `Program` — parameters
renumbered ``0..P-1``, instructions after them, no references to live nodes or buffers —
and the passes (`cse`, `fold_constants`, `dce`) rewrite it. A program prints as the
readable IR the dumps and the CLI show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.device import Device
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node, format_loc
from lazytorch.ir.primitives import Primitive, get, reference

__all__ = ["Capture", "Instr", "Param", "Program", "capture", "format_shape"]


class Capture:
    """One walk of the pending graph: what a materialization needs, hit or miss."""

    __slots__ = ("key", "order", "params", "roots", "wiring")

    def __init__(
        self,
        roots: list[Node],
        params: list[Node],
        order: list[Node],
        wiring: list[tuple[int, ...]] | None,
        key: tuple[Any, ...],
    ) -> None:
        self.roots = roots
        self.params = params
        self.order = order
        self.wiring = wiring
        self.key = key


def capture(roots: Sequence[Node]) -> Capture:
    """Walk the graph below `roots` (post-order, inputs left to right) — see module doc."""
    ids: dict[Node, int] = {}
    params: list[Node] = []
    order: list[Node] = []
    wiring: list[tuple[int, ...]] = []
    sig: list[Any] = []
    for root in roots:
        if root in ids:
            continue
        stack = [root]
        while stack:
            n = stack[-1]
            if n in ids:
                stack.pop()
                continue
            if n.buffer is not None:
                ids[n] = len(ids)
                params.append(n)
                sig.append(n.struct_hash)
                stack.pop()
                continue
            missing = [i for i in n.inputs if i not in ids]
            if missing:
                stack.extend(reversed(missing))
                continue
            stack.pop()
            ids[n] = len(ids)
            order.append(n)
            w = tuple([ids[i] for i in n.inputs])
            wiring.append(w)
            sig.append((n.struct_hash, w))
    sig.append(tuple([ids[r] for r in roots]))
    return Capture(list(roots), params, order, wiring, tuple(sig))


def format_shape(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


class Param:
    """A program input: a buffer (tensor data) or a scalar (a Python number)."""

    __slots__ = ("device", "dtype", "kind", "shape")

    def __init__(self, kind: str, shape: tuple[Any, ...], dtype: DType, device: Device) -> None:
        self.kind = kind
        self.shape = shape
        self.dtype = dtype
        self.device = device


class Instr:
    """One primitive application inside a program; inputs are value numbers."""

    __slots__ = ("attrs", "device", "dtype", "inputs", "loc", "op", "origin", "shape")

    def __init__(
        self,
        op: Primitive,
        inputs: tuple[int, ...],
        attrs: tuple[Any, ...],
        shape: tuple[Any, ...],
        dtype: DType,
        device: Device,
        loc: tuple[str, int] | None,
        origin: int = -1,
    ) -> None:
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.device = device
        # `loc` is where the capture that *compiled* this program recorded the node; a
        # cached program serves later captures too, so runtime errors map `origin` (the
        # node's index in the capture's order) to the current capture's node instead.
        self.loc = loc
        self.origin = origin

    @property
    def params(self) -> dict[str, Any]:
        return dict(zip(self.op.attr_names, self.attrs))

    def structure(self) -> tuple[Any, ...]:
        """What makes two instructions interchangeable (the CSE key)."""
        return _structure(self, self.inputs)


def _structure(ins: Instr, inputs: tuple[int, ...]) -> tuple[Any, ...]:
    """`Instr.structure` of `ins` with `inputs` in place of its own (cse renames them)."""
    op = ins.op
    attrs = ins.attrs if op.hash_attrs is None else op.hash_attrs(ins.attrs)
    return (op, attrs, ins.dtype, ins.shape, ins.device, inputs)


class Program:
    """A canonical program: values ``0..P-1`` are params, then one value per instruction."""

    __slots__ = ("instrs", "key", "outputs", "params")

    def __init__(
        self, params: list[Param], instrs: list[Instr], outputs: list[int], key: Any = None
    ) -> None:
        self.params = params
        self.instrs = instrs
        self.outputs = outputs
        self.key = key

    @classmethod
    def from_capture(cls, cap: Capture) -> Program:
        remap: dict[int, int] = {}
        params: list[Param] = []
        instrs: list[Instr] = []
        # Walk ids interleave params and instructions; renumber params first.
        param_walk_ids: list[int] = []
        instr_walk_ids: list[int] = []
        for walk_id, entry in enumerate(cap.key[:-1]):
            (instr_walk_ids if isinstance(entry, tuple) else param_walk_ids).append(walk_id)
        for j, (wid, node) in enumerate(zip(param_walk_ids, cap.params)):
            remap[wid] = j
            kind = "scalar" if node.op.name == "scalar" else "buffer"
            params.append(Param(kind, node.shape, node.dtype, node.device))
        base = len(params)
        for j, wid in enumerate(instr_walk_ids):
            remap[wid] = base + j
        for k, (node, wiring) in enumerate(zip(cap.order, cap.wiring)):
            instrs.append(
                Instr(
                    node.op,
                    tuple([remap[w] for w in wiring]),
                    node.attrs,
                    node.shape,
                    node.dtype,
                    node.device,
                    node.loc,
                    k,
                )
            )
        outputs = [remap[w] for w in cap.key[-1]]
        return cls(params, instrs, outputs, cap.key)

    # -- access -----------------------------------------------------------------------------
    def value(self, i: int) -> Param | Instr:
        p = len(self.params)
        return self.params[i] if i < p else self.instrs[i - p]

    def __len__(self) -> int:
        return len(self.instrs)

    def ops(self) -> list[str]:
        return [ins.op.name for ins in self.instrs]

    # -- printing -----------------------------------------------------------------------------
    def lines(self) -> list[str]:
        rows: list[tuple[str, str]] = []
        for i, p in enumerate(self.params):
            rows.append(
                (f"%{i} : {p.dtype.short}{format_shape(p.shape)}", f"= input {i} ({p.kind})")
            )
        base = len(self.params)
        locs = []
        for j, ins in enumerate(self.instrs):
            args = ", ".join(f"%{a}" for a in ins.inputs)
            if ins.op.name == "const":
                rhs = f"= const {ins.attrs[0]!r}"
            else:
                # The dtype shows in the type column; the device rarely differs.
                attrs = ", ".join(
                    f"{k}={_fmt_attr(v)}"
                    for k, v in ins.params.items()
                    if not isinstance(v, Device) and not (k == "dtype" and v is ins.dtype)
                )
                rhs = f"= {ins.op.name}{'[' + attrs + ']' if attrs else ''}{' ' + args if args else ''}"
            rows.append((f"%{base + j} : {ins.dtype.short}{format_shape(ins.shape)}", rhs))
            locs.append(ins.loc)
        width = max((len(a) for a, _ in rows), default=0)
        text = [f"{a.ljust(width)} {b}" for a, b in rows]
        code_width = max((len(t) for t in text), default=0)
        out = []
        for k, t in enumerate(text):
            j = k - base
            if j >= 0 and locs[j] is not None:
                t = f"{t.ljust(code_width)}  # {format_loc(locs[j])}"
            out.append("  " + t)
        out.append("  return " + ", ".join(f"%{o}" for o in self.outputs))
        return out

    def canonical_text(self) -> str:
        """The program's structure as text, without source lines: equal for programs that
        compute the same thing, stable across processes (the on-disk cache key)."""
        rows = [f"in {p.kind} {p.dtype.name}{format_shape(p.shape)}" for p in self.params]
        for ins in self.instrs:
            attrs = ",".join(f"{k}={canon_attr(v)}" for k, v in ins.params.items())
            args = ",".join(str(a) for a in ins.inputs)
            rows.append(f"{ins.op.name}[{attrs}]({args}) {ins.dtype.name}{format_shape(ins.shape)}")
        rows.append("out " + ",".join(str(o) for o in self.outputs))
        return "\n".join(rows)

    def __str__(self) -> str:
        head = (
            f"program ({len(self.params)} inputs, {len(self.instrs)} nodes, "
            f"{len(self.outputs)} outputs)"
        )
        return "\n".join([head, *self.lines()])

    def __repr__(self) -> str:
        return f"<Program {len(self.params)} inputs, {len(self.instrs)} nodes>"


def canon_attr(v: Any) -> str:
    """An attribute as `Program.canonical_text` writes it."""
    if isinstance(v, DType):
        return v.name
    if isinstance(v, Device):
        return str(v)
    if isinstance(v, float):
        return v.hex() if v == v else "nan"
    if isinstance(v, tuple):
        return "(" + ",".join(canon_attr(x) for x in v) + ")"
    return repr(v)


def _fmt_attr(v: Any) -> str:
    if isinstance(v, DType):
        return v.short
    if isinstance(v, Device):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt_attr(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v) if isinstance(v, str) else str(v)


# -- passes -------------------------------------------------------------------------------------


def _rebuild(prog: Program, keep: list[int], remap: dict[int, int]) -> Program:
    """Keep instructions `keep` (old indices), renaming every value through `remap`."""
    new_instrs = []
    for j in keep:
        ins = prog.instrs[j]
        new_instrs.append(
            Instr(
                ins.op,
                tuple([remap[a] for a in ins.inputs]),
                ins.attrs,
                ins.shape,
                ins.dtype,
                ins.device,
                ins.loc,
                ins.origin,
            )
        )
    return Program(prog.params, new_instrs, [remap[o] for o in prog.outputs], prog.key)


def dce(prog: Program) -> Program:
    """Drop instructions no output depends on."""
    base = len(prog.params)
    live = set(prog.outputs)
    for j in range(len(prog.instrs) - 1, -1, -1):
        if base + j in live:
            live.update(prog.instrs[j].inputs)
    keep = [j for j in range(len(prog.instrs)) if base + j in live]
    if len(keep) == len(prog.instrs):
        return prog
    remap = {i: i for i in range(base)}
    for new, j in enumerate(keep):
        remap[base + j] = base + new
    return _rebuild(prog, keep, remap)


def cse(prog: Program) -> Program:
    """Merge instructions with the same op, attrs and (merged) inputs."""
    base = len(prog.params)
    seen: dict[tuple[Any, ...], int] = {}
    remap = {i: i for i in range(base)}
    keep: list[int] = []
    changed = False
    for j, ins in enumerate(prog.instrs):
        s = _structure(ins, tuple([remap[a] for a in ins.inputs]))
        hit = seen.get(s)
        if hit is not None:
            remap[base + j] = hit
            changed = True
            continue
        new_id = base + len(keep)
        seen[s] = new_id
        remap[base + j] = new_id
        keep.append(j)
    return _rebuild(prog, keep, remap) if changed else prog


_FOLDABLE = ("elementwise",)


def fold_constants(prog: Program) -> Program:
    """Evaluate elementwise instructions whose inputs are all literals into one literal."""
    const = get("const")
    base = len(prog.params)
    literal: dict[int, Any] = {}
    new_instrs = list(prog.instrs)
    changed = False
    for j, ins in enumerate(prog.instrs):
        if ins.op is const:
            literal[base + j] = ins.attrs[0]
            continue
        if (
            ins.op.category in _FOLDABLE
            and ins.inputs
            and all(a in literal for a in ins.inputs)
            and ins.shape == ()
        ):
            dtypes = [prog.value(a).dtype for a in ins.inputs]
            args = [np.asarray(literal[a], dtype=d.np) for a, d in zip(ins.inputs, dtypes)]
            try:
                with np.errstate(all="ignore"):  # inf and NaN as the program would give
                    value = reference(ins.op, dtypes, ins.dtype)(*args, **ins.params)
            except Exception:
                continue  # leave it to runtime, which reports the error at the user's line
            py = np.asarray(value).item()
            new_instrs[j] = Instr(
                const,
                (),
                (py, ins.dtype, ins.device),
                (),
                ins.dtype,
                ins.device,
                ins.loc,
                ins.origin,
            )
            literal[base + j] = py
            changed = True
    if not changed:
        return prog
    return dce(Program(prog.params, new_instrs, prog.outputs, prog.key))


def canonicalize(prog: Program, verify: bool | None = None) -> Program:
    """The standard pipeline: CSE, constant folding, DCE — verified after each pass if asked."""
    from lazytorch.ir.verify import verify_enabled, verify_program  # lazy: import time (tests)

    if verify is None:
        verify = verify_enabled()
    if verify:
        verify_program(prog, "capture")
    for name, p in (("cse", cse), ("fold_constants", fold_constants), ("dce", dce)):
        prog = p(prog)
        if verify:
            verify_program(prog, name)
    return prog
