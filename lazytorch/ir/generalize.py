"""One program for many sizes: generalizing programs that differ only in their sizes.

Recording is concrete: every shape in the lazy graph is a plain ``int``, so recording stays
cheap and user code that branches on sizes behaves exactly as in eager mode. What makes a
program *dynamic* is seeing it twice. When a cut compiles a program that differs from the
previous one at the same place only in some integers (shapes, and attributes such as an
expand's target), those integers are explained as functions of the input sizes that
changed, and the program is compiled once over symbols ``s0, s1, ...`` instead.

A `SizePattern` is a program with its integers taken out: the *pattern key* (the program's
canonical text with ``#`` for every integer) and the integers in order. `generalize` fits
each integer of two patterns with the same key as a polynomial in the symbols. The result,
a `Generalized`, then decides for any later program with that pattern key whether it is an
*instance* — every one of its integers equals its polynomial at the sizes bound from the
inputs — which is an exact check: a program that matches is, integer for integer, the
generalized program at those sizes, whatever the fit guessed. That check, compiled to one
Python function, is the guard of a dynamic program; `Generalized.why_not` names the first
guard that fails.

>>> import lazytorch as lt
>>> from lazytorch.debug import program
>>> def prog(n):
...     x = lt.ones(n, 3)
...     lt.materialize(x)
...     return program((x * 2).sum(1))
>>> a, b = SizePattern.of(prog(5)), SizePattern.of(prog(7))
>>> a.key == b.key, a.ints, b.ints
(True, (5, 3, 5, 3, 5, 1, 1, 5, 5), (7, 3, 7, 3, 7, 1, 1, 7, 7))
>>> g = generalize(a, b)
>>> g.sources, g.polys[:3]
([(0, 'input 0 dim 0')], [s0, 3, s0])
>>> g.match(SizePattern.of(prog(40)).ints), g.match(SizePattern.of(prog(1)).ints)
((40,), None)
>>> g.why_not(SizePattern.of(prog(1)).ints)
'guard s0 >= 2 failed (s0 = 1; sizes 0 and 1 stay specialized)'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from lazytorch.ir.node import format_loc
from lazytorch.ir.poly import Poly, determines, fit, monomials
from lazytorch.ir.program import Instr, Param, Program, canon_attr, format_shape

__all__ = [
    "MAX_SYMBOLS",
    "Generalized",
    "NotGeneralizable",
    "SizePattern",
    "generalize",
    "generalize_marked",
]

# Symbols per program. Compiling over k symbols generates the code at 1 + 2k + k(k-1)/2 + 1
# sample sizes (see lazytorch.runtime.dynamic), so the bound keeps compiles cheap.
MAX_SYMBOLS = 3


class NotGeneralizable(ValueError):
    """Two programs are not one program over symbolic sizes; the message says why."""


class _Hole:
    def __repr__(self) -> str:
        return "#"

    __str__ = __repr__


_HOLE = _Hole()


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_size_float(v: Any) -> bool:
    # A whole float may be a size too: mean() divides by the count of what it averages.
    return isinstance(v, float) and v.is_integer() and abs(v) < 2**31


def _collect(v: Any, out: list[int], floats: list[bool]) -> None:
    if _is_int(v):
        out.append(v)
        floats.append(False)
    elif _is_size_float(v):
        out.append(int(v))
        floats.append(True)
    elif isinstance(v, tuple):
        for x in v:
            _collect(x, out, floats)


def _scan(v: Any, out: list[int], floats: list[bool]) -> str:
    """`_collect` and, returned, `v` as `Program.canonical_text` writes an attribute with
    "#" for each integer collected (one walk: a cut of a big program scans thousands)."""
    t = type(v)
    if t is int:  # the common cases first, by exact type
        out.append(v)
        floats.append(False)
        return "#"
    if t is tuple:
        return "(" + ",".join([_scan(x, out, floats) for x in v]) + ")"
    if _is_int(v) or _is_size_float(v):
        _collect(v, out, floats)
        return "#"
    if isinstance(v, tuple):
        return "(" + ",".join([_scan(x, out, floats) for x in v]) + ")"
    return canon_attr(v)


class _HoledShapes(dict[int, str]):
    """A shape of n holes as `format_shape` writes it: "[#, #]" for n = 2."""

    def __missing__(self, n: int) -> str:
        self[n] = text = format_shape(["#"] * n)
        return text


_HOLED_SHAPES = _HoledShapes()


def _refill(v: Any, it: Any) -> Any:
    if _is_int(v):
        return next(it)
    if _is_size_float(v):
        x = next(it)
        return float(x) if isinstance(x, int) else x
    if isinstance(v, tuple):
        return tuple(_refill(x, it) for x in v)
    return v


class SizePattern:
    """A program split into its pattern key and its integers (see module doc).

    ``where`` names each integer (``input 0 dim 1``, ``%12 (sum at model.py:3) dim 0``) for
    messages; it is written out on first use, since every cut that may compile builds a
    pattern and most never print one (formatting a thousand source locations costs
    tens of milliseconds of a warm start).
    """

    __slots__ = ("_spots", "_where", "ints", "key", "program")

    def __init__(
        self,
        program: Program,
        ints: tuple[int, ...],
        spots: list[tuple[int, int | str]],
        key: str | None = None,
    ) -> None:
        self.program = program
        self.ints = ints
        self._spots = spots  # see `where`
        self._where: list[str] | None = None
        # The key is the canonical text of the program with every integer a hole; `of`
        # writes it in the pass that collects the integers (the same text: tests/ir).
        self.key = self.instantiate([_HOLE] * len(ints)).canonical_text() if key is None else key

    @property
    def where(self) -> list[str]:
        """The name of each integer, in `ints` order."""
        if self._where is None:
            prog, base, names = self.program, len(self.program.params), {}
            where = []
            for j, what in self._spots:
                if isinstance(what, int):  # a dimension, else a parameter's name
                    what = f"dim {what}"
                if j < 0:
                    where.append(f"input {-1 - j} {what}")
                    continue
                if j not in names:
                    ins = prog.instrs[j]
                    at = f" at {format_loc(ins.loc)}" if ins.loc is not None else ""
                    names[j] = f"%{base + j} ({ins.op.name}{at})"
                where.append(f"{names[j]} {what}")
            self._where = where
        return self._where

    @classmethod
    def of(cls, program: Program) -> SizePattern:
        ints: list[int] = []
        floats: list[bool] = []
        spots: list[tuple[int, int | str]] = []  # (-1 - input or instruction, dim or name)
        rows = []  # the key: `Program.canonical_text` with "#" for every integer
        for i, p in enumerate(program.params):
            for d, n in enumerate(p.shape):
                ints.append(n)
                spots.append((-1 - i, d))
            rows.append(f"in {p.kind} {p.dtype.name}{_HOLED_SHAPES[len(p.shape)]}")
        for j, ins in enumerate(program.instrs):
            for d, n in enumerate(ins.shape):
                ints.append(n)
                spots.append((j, d))
            attrs = []
            for k, v in zip(ins.op.attr_names, ins.attrs):
                before = len(ints)
                text = _scan(v, ints, floats)
                if len(ints) > before:
                    spots.extend([(j, k)] * (len(ints) - before))
                attrs.append(f"{k}={text}")
            args = ",".join(str(a) for a in ins.inputs)
            rows.append(
                f"{ins.op.name}[{','.join(attrs)}]({args}) "
                f"{ins.dtype.name}{_HOLED_SHAPES[len(ins.shape)]}"
            )
        rows.append("out " + ",".join(str(o) for o in program.outputs))
        return cls(program, tuple(ints), spots, "\n".join(rows))

    def instantiate(self, values: Sequence[Any]) -> Program:
        """The program with its integers replaced by `values` (in `ints` order)."""
        it = iter(values)
        prog = self.program
        params = [
            Param(p.kind, tuple(next(it) for _ in p.shape), p.dtype, p.device) for p in prog.params
        ]
        instrs = []
        for ins in prog.instrs:
            shape = tuple(next(it) for _ in ins.shape)
            attrs = tuple(_refill(a, it) for a in ins.attrs)
            instrs.append(
                Instr(ins.op, ins.inputs, attrs, shape, ins.dtype, ins.device, ins.loc, ins.origin)
            )
        return Program(params, instrs, list(prog.outputs), prog.key)


class Generalized:
    """A program over size symbols, fitted from observed programs (see module doc)."""

    __slots__ = ("_match", "bounds", "key", "names", "nsym", "pattern", "polys", "sources")

    def __init__(
        self,
        pattern: SizePattern,
        polys: list[Poly],
        sources: list[tuple[int, str]],
        bounds: list[tuple[int, int | None]] | None = None,
    ) -> None:
        self.pattern = pattern
        self.key = pattern.key
        self.polys = polys
        self.sources = sources  # per symbol: (position in the integers, what it is)
        self.nsym = len(sources)
        self.names = [f"s{k}" for k in range(self.nsym)]
        # per symbol: (min, max or None); min is at least 2 (sizes 0 and 1 are specialized)
        self.bounds = bounds or [(2, None)] * self.nsym
        self._match = self._compile()

    def _compile(self) -> Callable[[tuple[int, ...]], tuple[int, ...] | None]:
        # One function: bind each symbol from its input dim, check the specialized sizes,
        # then compare every integer of the program in one tuple comparison.
        lines = ["def match(v):"]
        for k, ((pos, _), (lo, hi)) in enumerate(zip(self.sources, self.bounds)):
            lines.append(f"    s{k} = v[{pos}]")
            lines.append(f"    if s{k} < {lo}: return None")
            if hi is not None:
                lines.append(f"    if s{k} > {hi}: return None")
        expected = ", ".join(p.text(self.names) for p in self.polys)
        lines.append(f"    if v != ({expected}{',' if len(self.polys) == 1 else ''}): return None")
        lines.append(f"    return ({''.join(f's{k}, ' for k in range(self.nsym))})")
        scope: dict[str, Any] = {}
        exec(compile("\n".join(lines), "<lazytorch guards>", "exec"), scope)
        return scope["match"]  # type: ignore[no-any-return]

    def match(self, ints: tuple[int, ...]) -> tuple[int, ...] | None:
        """The symbol values under which the program with integers `ints` is an instance
        of this one, or None when a guard fails."""
        if len(ints) != len(self.polys):
            return None
        return self._match(ints)

    def why_not(self, ints: tuple[int, ...]) -> str:
        """The first guard the program with integers `ints` fails, in words."""
        if len(ints) != len(self.polys):
            return "the graph changed"
        point = tuple(ints[pos] for pos, _ in self.sources)
        for name, v, (lo, hi) in zip(self.names, point, self.bounds):
            if v < 2:
                return f"guard {name} >= 2 failed ({name} = {v}; sizes 0 and 1 stay specialized)"
            if v < lo:
                return f"guard {name} >= {lo} failed ({name} = {v})"
            if hi is not None and v > hi:
                return f"guard {name} <= {hi} failed ({name} = {v})"
        for where, poly, v in zip(self.pattern.where, self.polys, ints):
            want = poly(point)
            if v != want:
                bound = ", ".join(f"{n} = {x}" for n, x in zip(self.names, point))
                return f"guard {where} == {poly} failed ({where} = {v}; {bound})"
        return "no guard fails"

    def __len__(self) -> int:  # nodes, as a Program
        return len(self.pattern.program)

    def to_json(self) -> dict[str, Any]:
        """The fit as JSON data: with a program of the same pattern, `from_json` rebuilds it
        (the disk cache and the warm-up record keep it this way)."""
        return {
            "polys": [[[*m, c] for m, c in p.terms.items()] for p in self.polys],
            "sources": [[pos, what] for pos, what in self.sources],
            "bounds": [[lo, hi] for lo, hi in self.bounds],
        }

    @classmethod
    def from_json(cls, pattern: SizePattern, data: dict[str, Any]) -> Generalized:
        """The fit `data` (from `to_json`) over `pattern`'s program; ValueError if it does
        not fit that program (another pattern, or a program that is no instance)."""
        try:
            sources = [(int(pos), str(what)) for pos, what in data["sources"]]
            nsym = len(sources)
            polys = [Poly({tuple(t[:-1]): int(t[-1]) for t in p}, nsym) for p in data["polys"]]
            bounds = [(int(lo), None if hi is None else int(hi)) for lo, hi in data["bounds"]]
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ValueError(f"not a generalization: {e}") from None
        if len(polys) != len(pattern.ints) or len(bounds) != nsym:
            raise ValueError("the generalization is for another program")
        if any(not 0 <= pos < len(polys) for pos, _ in sources):
            raise ValueError("the generalization is for another program")
        return cls(pattern, polys, sources, bounds)

    def spec_text(self) -> str:
        """The symbolic program and its guards as text: equal for equal generalizations."""
        return _symbolic_text(self) + "\n" + "\n".join(self.guards())

    def instantiate(self, point: Sequence[int]) -> Program:
        """The concrete program at symbol values `point`."""
        return self.pattern.instantiate([p(point) for p in self.polys])

    def symbolic_program(self) -> Program:
        """The program with its sizes written over the symbols (what dumps print)."""
        return self.pattern.instantiate(self.polys)

    def guards(self) -> list[str]:
        """The conditions under which the program is reused, one readable line each: the
        inputs (symbolic shapes), then `symbolic_guards`, then the check of every size."""
        sym = self.symbolic_program()
        out = [
            f"input {i}: {p.kind} {p.dtype.name}{format_shape(p.shape)} on {p.device}"
            + (" (exact)" if all(isinstance(d, Poly) and d.is_const() for d in p.shape) else "")
            for i, p in enumerate(sym.params)
        ]
        out += self.symbolic_guards()
        rest = sum(1 for p in self.polys if not p.is_const())
        out.append(f"every size of every node equals its expression ({rest} symbolic)")
        return out

    def symbolic_guards(self) -> list[str]:
        """Where each symbol comes from, its bounds, and input sizes tied to it."""
        out = [f"{n} = {what}" for n, (_, what) in zip(self.names, self.sources)]
        for n, (lo, hi) in zip(self.names, self.bounds):
            out.append(f"{n} >= {lo}" + (" (sizes 0 and 1 stay specialized)" if lo == 2 else ""))
            if hi is not None:
                out.append(f"{n} <= {hi}")
        source_pos = {pos for pos, _ in self.sources}
        for pos, (where, poly) in enumerate(zip(self.pattern.where, self.polys)):
            if where.startswith("input") and not poly.is_const() and pos not in source_pos:
                out.append(f"{where} == {poly}")
        return out


Marks = dict[tuple[int, int], tuple[Any, ...]]  # (input, dim) -> ("dynamic", lo, hi) | ("static",)


def _param_pos(pattern: SizePattern, marks: Marks) -> dict[int, tuple[Any, ...]]:
    """Marks by position in the pattern's integers."""
    offsets, acc = [], 0
    for p in pattern.program.params:
        offsets.append(acc)
        acc += len(p.shape)
    return {offsets[i] + d: m for (i, d), m in marks.items() if i < len(offsets)}


def _bounds(sources: list[tuple[int, str]], by_pos: dict[int, tuple[Any, ...]]) -> list[Any]:
    out = []
    for pos, _ in sources:
        m = by_pos.get(pos)
        out.append((max(2, m[1] or 2), m[2]) if m and m[0] == "dynamic" else (2, None))
    return out


class _Value:
    """What a shape rule reads of an input: its shape and dtype."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype


def _probes(point0: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The program's own sizes, then probe sizes (far from any size a program holds,
    different per symbol) that determine every polynomial of degree 2, plus one to check."""
    nsym = len(point0)
    need = len(monomials(nsym))
    shift = 0
    while True:
        out = [point0] + [
            tuple(1_000_003 + 7_919 * (j + shift) + 104_729 * k * (j % 3 + 1) for k in range(nsym))
            for j in range(need)
        ]
        if determines(out[:need]):
            return out
        shift += 1


def _probe_shapes(
    ins: Instr,
    attr_polys: list[Poly],
    probes: list[tuple[int, ...]],
    shapes_of: dict[int, list[tuple[int, ...]]],
    prog: Program,
) -> list[tuple[int, ...]] | None:
    """`ins`'s shape at each probe by its shape rule, or None if the rule rejects one."""
    shapes = []
    for t, pt in enumerate(probes):
        it = iter([ap(pt) for ap in attr_polys])
        attrs = tuple(_refill(a, it) for a in ins.attrs)
        args = tuple(_Value(shapes_of[a][t], prog.value(a).dtype) for a in ins.inputs)
        try:
            shapes.append(tuple(int(d) for d in ins.op.shape_rule(args, *attrs)))
        except Exception:
            return None
    return shapes


def generalize_marked(b: SizePattern, marks: Marks) -> Generalized:
    """`b` over symbols for the input dims marked dynamic (`lazytorch.mark_dynamic`), from
    this one program.

    An attribute's integer (a view's target shape, an expand's) equal to a marked size is
    taken to be that size; every node's shape is then derived by its primitive's shape rule
    at probe sizes and fitted, so a weight whose dim happens to equal the batch size stays
    what it is. The guess is checked like any fit: a later program is an instance only if
    every integer matches, and the compile checks the shape rules at its sample sizes.
    """
    by_pos = _param_pos(b, marks)
    sources = [(pos, b.where[pos]) for pos, m in sorted(by_pos.items()) if m[0] == "dynamic"]
    if not sources:
        raise NotGeneralizable("no input dim is marked dynamic")
    if len(sources) > MAX_SYMBOLS:
        raise NotGeneralizable(f"{len(sources)} dims marked dynamic; at most {MAX_SYMBOLS}")
    nsym = len(sources)
    value_of: dict[int, int] = {}
    for k, (pos, _) in enumerate(sources):
        value_of.setdefault(b.ints[pos], k)
    source_sym = {pos: k for k, (pos, _) in enumerate(sources)}
    probes = _probes(tuple(b.ints[pos] for pos, _ in sources))
    prog = b.program
    polys: list[Poly] = []
    shapes_of: dict[int, list[tuple[int, ...]]] = {}  # value id -> its shape at each probe
    pos = 0
    for i, p in enumerate(prog.params):
        dims = []
        for _ in p.shape:
            k = source_sym.get(pos)
            dims.append(Poly.symbol(k, nsym) if k is not None else Poly.const(b.ints[pos], nsym))
            pos += 1
        polys.extend(dims)
        shapes_of[i] = [tuple(d(pt) for d in dims) for pt in probes]
    base = len(prog.params)
    # Per node: its integers (shape, then attributes) and the ways to read the attribute
    # integers that equal a marked size: as that size or as a constant. Most symbols first,
    # earlier positions first; a depth-first search takes the first reading of every node
    # that each shape rule accepts (an expand to (10, 10) at batch 10 is (s0, 10) when the
    # softmax after it needs that).
    nodes = []
    for ins in prog.instrs:
        counted: list[int] = []
        for a in ins.attrs:
            _collect(a, counted, [])
        attr_ints = b.ints[pos + len(ins.shape) : pos + len(ins.shape) + len(counted)]
        pos += len(ins.shape) + len(counted)
        maybe = [q for q, v in enumerate(attr_ints) if v in value_of and v >= 2][:6]
        choices = [c for r in range(len(maybe), -1, -1) for c in itertools.combinations(maybe, r)]
        nodes.append((attr_ints, choices))
    found: list[tuple[list[Poly], list[Poly]] | None] = [None] * len(nodes)
    tried = [0] * len(nodes)
    budget = 4096
    j = 0
    while 0 <= j < len(nodes):
        ins = prog.instrs[j]
        attr_ints, choices = nodes[j]
        found[j] = None
        while tried[j] < len(choices) and budget > 0:
            chosen = choices[tried[j]]
            tried[j] += 1
            budget -= 1
            attr_polys = [
                Poly.symbol(value_of[v], nsym) if q in chosen else Poly.const(v, nsym)
                for q, v in enumerate(attr_ints)
            ]
            shapes = _probe_shapes(ins, attr_polys, probes, shapes_of, prog)
            if shapes is None or shapes[0] != tuple(ins.shape):
                continue
            dims = [fit(probes, [sh[d] for sh in shapes]) for d in range(len(ins.shape))]
            if any(d is None for d in dims):
                continue
            found[j] = ([d for d in dims if d is not None], attr_polys)
            shapes_of[base + j] = shapes
            break
        if found[j] is not None:
            j += 1
        else:
            tried[j] = 0
            j -= 1  # back to the previous node's next reading
    if j < 0 or budget <= 0:
        raise NotGeneralizable("the marked sizes do not fit every node's shape rule")
    for dims, attr_polys in found:  # type: ignore[misc]
        polys.extend(dims)
        polys.extend(attr_polys)
    return Generalized(b, polys, sources, _bounds(sources, by_pos))


def generalize(a: SizePattern, b: SizePattern, marks: Marks | None = None) -> Generalized:
    """The program both `a` and `b` are instances of, over the input sizes that differ.

    Symbols are the input sizes that differ, then sizes recorded from the script that no
    symbol explains. Raises `NotGeneralizable` (saying why) when they differ in structure,
    in no size, in a size `marks` says is static (`lazytorch.mark_static`), or in more
    than `MAX_SYMBOLS` independent sizes.
    """
    if a.key != b.key:
        raise NotGeneralizable("the graphs differ in more than their sizes")
    by_pos = _param_pos(b, marks or {})
    for pos, m in by_pos.items():
        if m[0] == "static" and a.ints[pos] != b.ints[pos]:
            raise NotGeneralizable(
                f"{b.where[pos]} changed ({a.ints[pos]} -> {b.ints[pos]}) but is marked static"
            )
    nparam_ints = sum(len(p.shape) for p in b.program.params)
    pairs: dict[tuple[int, int], int] = {}
    sources: list[tuple[int, str]] = []
    for pos in range(nparam_ints):
        pair = (a.ints[pos], b.ints[pos])
        if pair[0] != pair[1] and pair not in pairs:
            pairs[pair] = len(sources)
            sources.append((pos, b.where[pos]))
    # Sizes that come from the script (an arange's length, a view's target) can change
    # without any input changing: the smallest such change that no symbol explains yet
    # becomes a symbol too (a [b, 16] view of arange(16 * b): b, not 16 * b).
    rest = sorted(
        (abs(b.ints[pos] - a.ints[pos]), pos)
        for pos in range(nparam_ints, len(b.ints))
        if a.ints[pos] != b.ints[pos]
    )
    for _, pos in rest:
        x, y = a.ints[pos], b.ints[pos]
        if not any((y - x) % (vy - vx) == 0 for vx, vy in pairs):
            pairs[(x, y)] = len(sources)
            sources.append((pos, b.where[pos]))
    if not sources:
        raise NotGeneralizable("no size changed")
    if len(sources) > MAX_SYMBOLS:
        raise NotGeneralizable(
            f"{len(sources)} input sizes changed; at most {MAX_SYMBOLS} become symbolic"
        )
    nsym = len(sources)
    values = [(a.ints[pos], b.ints[pos]) for pos, _ in sources]
    polys: list[Poly] = []
    for pos, (x, y) in enumerate(zip(a.ints, b.ints)):
        if x == y:
            polys.append(Poly.const(y, nsym))
            continue
        best: tuple[int, Poly] | None = None
        for k, (vx, vy) in enumerate(values):
            # y - x == c * (vy - vx) for an integer c: the integer is c*s_k + d.
            if vx == vy or (y - x) % (vy - vx):
                continue
            c = (y - x) // (vy - vx)
            d = y - c * vy
            rank = 0 if (c, d) == (1, 0) else 1 if d == 0 else 2
            if best is None or rank < best[0]:
                best = (rank, Poly({_unit(k, nsym): c, (0,) * nsym: d}, nsym))
        if best is None:
            raise NotGeneralizable(
                f"{b.where[pos]} went {x} -> {y}, not an affine function of a changed input size"
            )
        polys.append(best[1])
    return Generalized(b, polys, sources, _bounds(sources, by_pos))


def _symbolic_text(gen: Generalized) -> str:
    return gen.symbolic_program().canonical_text()


def _unit(k: int, nsym: int) -> tuple[int, ...]:
    return tuple(int(i == k) for i in range(nsym))
