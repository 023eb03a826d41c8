"""Random whole programs, run on lazytorch (cpp, interpreter, sync mode) and torch.

A program is Python source over ``lib`` (torch or lazytorch) and its inputs::

    def program(lib, v0, v1):
        v2 = v0 * v0
        v3 = v2[1::3]
        v4 = lib.logaddexp(v1, v0)
        return [v3, v4]

`programs()` is the hypothesis strategy that draws one: input shapes that broadcast with
each other (size-1 and sometimes size-0 dims, 0-d tensors), then a DAG of ops from
`ops.TABLE` whose operands are earlier values, reused several times (what makes the
scheduler build multi-pass kernels and reuse buffers). While drawing, each op runs in
torch so its guard sees real values (no kinks, no domain edges).

`check_program` runs it: the outputs are projected on fixed cotangents, summed and
back-propagated, and the outputs and every input gradient are read in one go after
``backward()`` — one fused forward+backward program in lazy mode. torch is the oracle;
each lazytorch run (cpp lazy, interpreter lazy, sync mode) must match it.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import lazytorch as lt

from . import ops as op_table

# Tolerances by dtype. float64: a program of at most ~20 ops over at most a few hundred
# elements loses far less than 1e-9 relative (eps 2.2e-16); the absolute part is relative
# to the output's largest magnitude, for cancellation in sums of mixed signs. float32: the
# same, with float32's eps (1.2e-7) in place of float64's, plus the error torch itself
# makes in float32 against the float64 result (lazytorch may round differently, not worse).
TOL = {"float64": 1e-9, "float32": 2e-4}


@dataclass
class Input:
    values: np.ndarray
    requires_grad: bool


@dataclass
class Program:
    inputs: list[Input]
    lines: list[str]
    outputs: list[str]

    @property
    def dtype(self) -> str:
        kinds = {str(i.values.dtype) for i in self.inputs}
        return "float32" if kinds == {"float32"} else "float64"

    def source(self) -> str:
        args = ", ".join(f"v{i}" for i in range(len(self.inputs)))
        body = "".join(f"    {line}\n" for line in self.lines)
        return f"def program(lib, {args}):\n{body}    return [{', '.join(self.outputs)}]\n"

    def function(self) -> Any:
        scope: dict[str, Any] = {}
        exec(compile(self.source(), "<fuzz program>", "exec"), scope)
        return scope["program"]

    def __repr__(self) -> str:
        head = ", ".join(
            f"{tuple(i.values.shape)} {i.values.dtype}{' grad' if i.requires_grad else ''}"
            for i in self.inputs
        )
        return f"Program(inputs: {head})\n{self.source()}"


# -- drawing ------------------------------------------------------------------------------------

# The order hypothesis draws ops from. It favours the first entry (and shrinks towards it):
# make that a plain broadcasting product, and the rest a fixed shuffle rather than the
# alphabet (which put abs first, a third of all ops).
OP_ORDER = [
    "mul",
    *sorted(set(op_table.TABLE) - {"mul"}, key=lambda n: hashlib.sha1(n.encode()).hexdigest()),
]


@dataclass
class _Value:
    name: str
    t: torch.Tensor  # the value computed eagerly in torch while drawing
    storage: int  # values that alias share this number
    leaf: bool  # an input or a view of one: never written in place
    frozen: bool  # may alias in one library and not the other: never written in place


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _into(b: tuple[int, ...], a: tuple[int, ...]) -> bool:
    """b broadcasts into a's shape without growing it."""
    return len(b) <= len(a) and all(y in (1, x) for x, y in zip(reversed(a), reversed(b)))


def _partners(op: op_table.Op, a: _Value, values: list[_Value], params: dict) -> list[_Value]:
    sa = tuple(a.t.shape)
    ok = []
    for v in values:
        sb = tuple(v.t.shape)
        if op.pairing == "broadcast":
            good = _broadcasts(sa, sb)
        elif op.pairing == "into":
            good = _into(sb, sa) and v.storage != a.storage
        elif op.pairing == "same":
            good = sb == sa
        elif op.pairing == "cat":
            d = params["dim"] % len(sa)
            good = len(sb) == len(sa) and all(
                x == y for i, (x, y) in enumerate(zip(sa, sb)) if i != d
            )
        elif op.pairing == "matmul":
            good = len(sa) >= 1 and len(sb) >= 1 and sa[-1] == sb[max(len(sb) - 2, 0)]
        else:
            good = True
        if good:
            ok.append(v)
    return ok


def _pick(draw, st, values: list[_Value]) -> _Value:
    """An operand: half the time one of the newest values (long chains), else any value,
    inputs most often (the same value read by many ops: multi-pass kernels, buffer reuse)."""
    i = draw(st.integers(0, len(values) - 1))
    return values[-1 - i] if draw(st.booleans()) else values[i]


def _shape(draw, st) -> tuple[int, ...]:
    rank = draw(st.sampled_from([2, 3, 1, 0, 2, 3]))
    dims = st.sampled_from([1, 2, 3, 4, 5, 6])
    kind = draw(st.integers(0, 9))
    if kind == 1:  # sometimes an empty dim
        dims = st.sampled_from([0, 1, 2, 3])
    elif kind == 2:  # sometimes sizes past a vector width, with remainders
        dims = st.sampled_from([7, 16, 33, 1, 2])
    return tuple(draw(dims) for _ in range(rank))


def programs(max_ops: int = 20, float32: bool | None = None):
    """The hypothesis strategy of random programs (at most `max_ops` ops)."""
    from hypothesis import strategies as st

    @st.composite
    def draw_program(draw) -> Program:
        f32 = draw(st.integers(0, 3)) == 0 if float32 is None else float32
        base = _shape(draw, st)
        n_in = draw(st.integers(1, 3))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        inputs, values = [], []
        for i in range(n_in):
            keep = draw(st.integers(0, len(base)))
            shape = tuple(
                1 if draw(st.integers(0, 3)) == 0 else s for s in base[len(base) - keep :]
            )
            dtype = "float32" if f32 else "float64"
            x = rng.uniform(-2.0, 2.0, size=shape).astype(dtype)
            grad = draw(st.integers(0, 4)) > 0
            inputs.append(Input(x, grad))
            values.append(_Value(f"v{i}", torch.from_numpy(x.copy()), i, True, False))
        lines: list[str] = []
        used: set[str] = set()
        n_ops = draw(st.integers(max(1, max_ops // 2), max_ops))
        storages = n_in
        names = OP_ORDER
        for _ in range(4 * n_ops):
            if len(lines) == n_ops:
                break
            op = op_table.TABLE[draw(st.sampled_from(names))]
            if op.inplace:  # a value no op has read yet, not an input nor a view of one
                writable = [v for v in values if not (v.leaf or v.frozen)]
                if not writable:
                    continue
                a = _pick(draw, st, writable)
            else:
                a = _pick(draw, st, values)
            params = op.params(draw, [tuple(a.t.shape)]) if op.params else {}
            if params is None:
                continue
            operands = [a]
            for _k in range(op.arity - 1):
                cands = _partners(op, a, values, params)
                if not cands:
                    break
                operands.append(_pick(draw, st, cands))
            if len(operands) < op.arity:
                continue
            name = f"v{len(values)}"
            line = op.render(name, [v.name for v in operands], params)
            out = _try(line, name, [v.t for v in operands], values, op, params)
            if out is None:
                continue
            lines.append(line)
            used.update(v.name for v in operands)
            if op.inplace:
                values.append(_Value(name, out, a.storage, False, op.saves_output))
            elif op.view:
                values.append(_Value(name, out, a.storage, a.leaf, a.frozen or op.frozen))
                if op.frozen:  # the base must not change under a maybe-view either
                    for v in values:
                        if v.storage == a.storage:
                            v.frozen = True
            else:
                values.append(_Value(name, out, storages, False, op.saves_output))
                storages += 1
            # a storage read by an op must not be written afterwards (torch may have saved
            # it for backward); an in-place op may go on writing its own target
            read = {v.storage for v in operands[1:]}
            if not op.inplace:
                read.add(a.storage)
            for v in values:
                if v.storage in read and not (op.inplace and v.storage == a.storage):
                    v.frozen = True
        sinks = [v.name for v in values[n_in:] if v.name not in used]
        extra = draw(st.lists(st.sampled_from([v.name for v in values]), max_size=2))
        outputs = list(dict.fromkeys(sinks + extra)) or [values[-1].name]
        return Program(inputs, lines, outputs)

    return draw_program()


def _try(line: str, name: str, args: list[torch.Tensor], values: list[_Value], op, params):
    """Run one line in torch (on the drawn values); None if torch refuses or a guard fails."""
    scope: dict[str, Any] = {"lib": torch}
    scope.update({v.name: v.t for v in values})
    if op.inplace:  # check the guard on a copy first: the line mutates its operand
        if op.guard is not None and not op.guard(*[t.clone() for t in args], None, **params):
            return None
    aliases = [v for v in values if op.inplace and v.storage == _storage_of(args[0], values)]
    saved = [v.t.clone() for v in aliases]
    out = None
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(line, scope)
        out = scope[name]
    except Exception:
        pass
    if not _acceptable(out, args, op, params):
        with torch.no_grad():  # undo a write that will not be part of the program
            for v, s in zip(aliases, saved):
                v.t.copy_(s)
        return None
    return out


def _storage_of(t: torch.Tensor, values: list[_Value]) -> int:
    return next(v.storage for v in values if v.t is t)


def _acceptable(out: Any, args: list[torch.Tensor], op, params) -> bool:
    if not isinstance(out, torch.Tensor) or not out.dtype.is_floating_point:
        return False
    if out.numel() and not bool(torch.isfinite(out).all() and out.abs().max() < op_table.MAX_ABS):
        return False
    return op.inplace or op.guard is None or op.guard(*args, out, **params)


# -- running ------------------------------------------------------------------------------------


class Refused(Exception):
    """torch refuses the program as a whole (e.g. an in-place write to a saved tensor)."""


def _cotangent(k: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(100 + k).uniform(0.5, 1.5, size=shape)


def run(lib: Any, program: Program, upcast: bool = False) -> tuple[list[Any], list[Any]]:
    """Outputs and input gradients of `program` on `lib` (torch or lazytorch), as NumPy.

    The loss is sum_k <out_k, ct_k> over the float outputs that require grad; outputs and
    gradients are read together after ``backward()``.
    """
    mk = torch.from_numpy if lib is torch else lt.from_numpy
    args = []
    for i in program.inputs:
        x = i.values.astype(np.float64) if upcast else i.values
        t = mk(x.copy())
        if i.requires_grad:
            t.requires_grad_()
        args.append(t)
    outs = program.function()(lib, *args)
    loss = None
    for k, o in enumerate(outs):
        if o.requires_grad:
            term = (o.double() * mk(_cotangent(k, tuple(o.shape)))).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    grads = [a.grad for a in args if a.requires_grad]
    if lib is lt:
        lt.materialize(*[t for t in outs + grads if t is not None])

    def to_np(t: Any) -> np.ndarray:  # (numpy() refuses a tensor that requires grad)
        return t.detach().numpy()

    return [to_np(o) for o in outs], [None if g is None else to_np(g) for g in grads]


@dataclass
class Mismatch:
    """One disagreement; `kind` classifies it so shrinking keeps the same failure."""

    run: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.run}] {self.kind}: {self.detail}"


def _compare(label: str, got: np.ndarray | None, want: np.ndarray | None, truth, dtype: str):
    if want is None or got is None:
        if (want is None) != (got is None):
            return f"{label}: grad is {'None' if got is None else 'set'}, torch's is not"
        return None
    if got.shape != want.shape:
        return f"{label}: shape {got.shape} != torch {want.shape}"
    if str(got.dtype) != str(want.dtype):
        return f"{label}: dtype {got.dtype} != torch {want.dtype}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    ref = w if truth is None else truth
    tol = TOL[dtype]
    scale = max(1.0, float(np.nanmax(np.abs(ref)))) if ref.size else 1.0
    allowed = tol * (np.abs(ref) + scale)
    if truth is not None:  # float32: plus torch's own float32 error
        allowed = allowed + 4 * np.abs(w - truth)
    bad = ~((np.abs(g - w) <= allowed) | (np.isnan(g) & np.isnan(w)))
    if bad.any():
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        return (
            f"{label}: {int(bad.sum())} of {bad.size} elements differ, first at {i}: "
            f"{g[i]!r} vs torch {w[i]!r} (max abs diff {float(np.nanmax(np.abs(g - w))):.3g})"
        )
    return None


RUNS = {
    "cpp lazy": ("cpp", False),
    "interpreter lazy": ("interpreter", False),
    "interpreter sync": ("interpreter", True),
    "cpp sync": ("cpp", True),
}


def check_program(program: Program, runs: tuple[str, ...] = tuple(RUNS)) -> list[Mismatch]:
    """Run `program` on torch and on each lazytorch run; the disagreements found.

    Raises `Refused` when torch itself refuses the program.
    """
    try:
        want = run(torch, program)
    except RuntimeError as e:
        raise Refused(str(e)) from e
    truth = run(torch, program, upcast=True) if program.dtype == "float32" else None
    found: list[Mismatch] = []
    for name in runs:
        backend, sync = RUNS[name]
        try:
            with lt.backend(backend), lt.sync_mode(sync):
                got = run(lt, program)
        except Exception as e:
            found.append(Mismatch(name, f"raises {type(e).__name__}", str(e)[:500]))
            continue
        for part, k in ((0, "output"), (1, "grad of input")):
            for j, (g, w) in enumerate(zip(got[part], want[part])):
                t = None if truth is None else truth[part][j]
                msg = _compare(f"{k} {j}", g, w, t, program.dtype)
                if msg:
                    found.append(Mismatch(name, k, msg))
    return found


def assert_program(program: Program, runs: tuple[str, ...] = tuple(RUNS)) -> None:
    """check_program, as a test assertion (a regression file calls this)."""
    found = check_program(program, runs)
    assert not found, "\n".join(map(str, found)) + f"\n\n{program!r}"


def input_literal(i: Input) -> str:
    """Source for one input that reproduces its values exactly (float repr round-trips)."""
    flat = ", ".join(repr(float(x)) for x in i.values.reshape(-1))
    shape = tuple(i.values.shape)
    return (
        f'Input(np.array([{flat}], dtype="{i.values.dtype}").reshape({shape}), '
        f"requires_grad={i.requires_grad})"
    )
