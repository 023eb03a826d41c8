"""Values with no elements in a compiled program: handed back without compiling them.

A cut may hold values of size 0 (``lt.zeros(0, 3) + 1``, ``x[:, 2:2]``, a cat with an
empty piece) beside real work. A compiled backend must not send the whole cut to the
reference interpreter for them: that runs the real work slower and with other rounding
than sync mode. `strip_empty` rewrites the program so that no value is empty:

* an empty value is dropped; an empty result is an empty array made at run time;
* an op that reads an empty value and gives a non-empty one is replaced by what it
  computes then (`RULES`): a sum of nothing is 0, a product 1, a matmul over a size-0
  contraction 0, a cat skips the empty pieces, a pad of nothing is its fill value, a
  scatter of no elements leaves its input as it is.

What is left is an ordinary program for the backend; `WithEmptyValues` runs it and puts
the empty results in their places.

>>> import lazytorch as lt
>>> from lazytorch.runtime.executor import build_program
>>> y, z, e = lt.ones(2, 3).sum(0), lt.zeros(0, 3).sum(0), lt.zeros(0, 3) + 1
>>> split = strip_empty(build_program([y._node, z._node, e._node]))
>>> split.program.ops()  # z: a sum of nothing is 0s; e is not computed
['const', 'expand', 'reduce_sum', 'reshape', 'const', 'expand', 'reshape']
>>> split.outputs
[0, 1, ((0, 3), dtype('float32'))]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazytorch.ir.primitives import get
from lazytorch.ir.program import Instr, Program, canonicalize
from lazytorch.ir.symbolic import SymInt

__all__ = ["RULES", "KeepsEmpty", "Split", "WithEmptyValues", "is_empty", "strip_empty"]

_CONST = get("const")
_EXPAND = get("expand")


class KeepsEmpty(ValueError):
    """No rule says what an op computes from an empty operand (the message names it)."""


def is_empty(shape: tuple[Any, ...]) -> bool:
    """True if a concrete shape has no elements."""
    return any(not isinstance(d, SymInt) and d == 0 for d in shape)


class _Builder:
    """The rewritten instructions: params keep their numbers, instructions follow."""

    def __init__(self, program: Program) -> None:
        self.base = len(program.params)
        self.instrs: list[Instr] = []

    def emit(
        self,
        like: Instr,
        op: Any,
        inputs: tuple[int, ...],
        attrs: tuple[Any, ...],
        shape: tuple[Any, ...] | None = None,
    ) -> int:
        """A new instruction with `like`'s dtype, device and origin (and shape, unless
        given); returns its value."""
        shape = like.shape if shape is None else shape
        self.instrs.append(
            Instr(op, inputs, attrs, shape, like.dtype, like.device, like.loc, like.origin)
        )
        return self.base + len(self.instrs) - 1

    def full(self, value: int, like: Instr) -> int:
        """`like`'s shape filled with `value` (a literal expanded, as ``lt.full`` builds it)."""
        d = like.dtype
        v: Any = float(value) if d.is_floating_point else bool(value) if d.name == "bool" else value
        c = self.emit(like, _CONST, (), (v, d, like.device), shape=())
        return self.expand(c, like) if like.shape else c

    def expand(self, vid: int, like: Instr) -> int:
        """Value `vid` broadcast to `like`'s shape; a copy where the shape is the same (an
        instruction of its own, so a program output never aliases an input)."""
        return self.emit(like, _EXPAND, (vid,), (tuple(like.shape),))


# A rule gets the builder, the instruction and its operands' new values (None for an empty
# operand) and returns the value that replaces the instruction's (non-empty) result.
Rule = Callable[[_Builder, Instr, list[int | None]], int]


def _cat(b: _Builder, ins: Instr, args: list[int | None]) -> int:
    pieces = tuple(a for a in args if a is not None)
    if len(pieces) == 1:
        return b.expand(pieces[0], ins)
    return b.emit(ins, ins.op, pieces, ins.attrs)


def _pad(b: _Builder, ins: Instr, args: list[int | None]) -> int:
    value = args[1]  # args[0], the padded value, is empty
    if value is None:  # the fill value is 0-d: never empty
        raise KeepsEmpty("pad: empty fill value")
    return b.expand(value, ins)  # all padding


def _scatter(b: _Builder, ins: Instr, args: list[int | None]) -> int:
    dest, index, src = args
    if dest is None or index is not None or src is not None:
        raise KeepsEmpty("scatter: a non-empty index with an empty source")
    return b.expand(dest, ins)  # no element written: the input as it is


RULES: dict[str, Rule] = {
    "reduce_sum": lambda b, ins, args: b.full(0, ins),
    "reduce_prod": lambda b, ins, args: b.full(1, ins),
    # A non-empty product of an empty operand contracts over size 0 (other sizes of 0
    # leave the result empty too).
    "matmul": lambda b, ins, args: b.full(0, ins),
    "cat": _cat,
    "pad": _pad,
    "scatter": _scatter,
}


class Split:
    """A program without its empty values (`program`, maybe with no outputs at all), how
    its inputs come from the original's (`params`), and where the original's outputs come
    from (`outputs`: an index into the program's outputs, or the (shape, NumPy dtype) of
    an empty array)."""

    def __init__(
        self, program: Program, params: list[int], outputs: list[int | tuple[Any, Any]]
    ) -> None:
        self.program = program
        self.params = params
        self.outputs = outputs


def strip_empty(program: Program) -> Split:
    """`program` rewritten so that no value is empty (see the module doc).

    Raises `KeepsEmpty` for an op that reads an empty value, gives a non-empty one, and
    has no rule in `RULES` (``gather`` from an empty tensor at a non-empty index, which
    is an error the reference interpreter reports).
    """
    b = _Builder(program)
    base = b.base
    new: dict[int, int | None] = {}  # old value -> new value (None: empty)
    for i, p in enumerate(program.params):
        new[i] = None if is_empty(p.shape) else i
    for j, ins in enumerate(program.instrs):
        vid = base + j
        if is_empty(ins.shape):
            new[vid] = None
            continue
        args = [new[a] for a in ins.inputs]
        if all(a is not None for a in args):
            new[vid] = b.emit(ins, ins.op, tuple(args), ins.attrs)  # type: ignore[arg-type]
            continue
        rule = RULES.get(ins.op.name)
        if rule is None:
            raise KeepsEmpty(
                f"no rule for {ins.op.name!r} with an empty operand and a non-empty result"
            )
        new[vid] = rule(b, ins, args)
    outputs: list[int | tuple[Any, Any]] = []
    kept: list[int] = []
    for o in program.outputs:
        v = new[o]
        if v is None:
            spec = program.value(o)
            outputs.append((tuple(spec.shape), spec.dtype.np))
        else:
            outputs.append(len(kept))
            kept.append(v)
    stripped, params = _compact(program, b.instrs, kept)
    return Split(canonicalize(stripped), params, outputs)


def _compact(
    program: Program, instrs: list[Instr], outputs: list[int]
) -> tuple[Program, list[int]]:
    """Only the params and instructions the outputs read, renumbered; and for each kept
    param its number in `program`."""
    base = len(program.params)
    live = set(outputs)
    for j in range(len(instrs) - 1, -1, -1):
        if base + j in live:
            live.update(instrs[j].inputs)
    params = [i for i in range(base) if i in live]
    remap = {old: k for k, old in enumerate(params)}
    keep = [j for j in range(len(instrs)) if base + j in live]
    for k, j in enumerate(keep):
        remap[base + j] = len(params) + k
    rebuilt = []
    for j in keep:
        ins = instrs[j]
        inputs = tuple(remap[a] for a in ins.inputs)
        rebuilt.append(
            Instr(ins.op, inputs, ins.attrs, ins.shape, ins.dtype, ins.device, ins.loc, ins.origin)
        )
    prog = Program(
        [program.params[i] for i in params], rebuilt, [remap[o] for o in outputs], program.key
    )
    return prog, params


class WithEmptyValues:
    """Runs the compiled part of a split program (`inner`, None when every result is
    empty) and hands back the empty results as new empty arrays in their places.

    ``program`` is the compiled part's (runtime errors name its instructions); ``info``,
    ``kernels`` and ``source`` are the inner executable's.
    """

    def __init__(self, split: Split, inner: Any) -> None:
        self.split = split
        self.inner = inner
        self.program = split.program
        self.info: dict[str, Any] = dict(getattr(inner, "info", None) or {})
        self.info["empty_outputs"] = sum(1 for o in split.outputs if not isinstance(o, int))
        self.kernels = getattr(inner, "kernels", 0)
        self.source = getattr(inner, "source", None)

    @property
    def sched(self) -> Any:
        """The schedule of the compiled part (for dumps)."""
        from lazytorch.scheduler import schedule  # lazy: import time (compiling only)

        return schedule(self.program)

    def run(self, inputs: list[Any]) -> list[Any]:
        import numpy as np

        outs = self.inner.run([inputs[i] for i in self.split.params]) if self.inner else []
        return [
            outs[o] if isinstance(o, int) else np.empty(o[0], dtype=o[1])
            for o in self.split.outputs
        ]
