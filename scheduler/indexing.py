"""Index expressions: integer arithmetic over loop variables, simplified with their ranges.

A kernel reads a buffer at an *index expression*: movement ops (reshape, permute, expand,
slice, flip, pad, cat) never run as kernels, they transform the index at which their input
is read. Composition must simplify back to plain strides, or a reshape of contiguous data
would cost a division per element: ``unravel(ravel(i, [N, C]), [N, C])`` is
``((i0*C + i1) // C, (i0*C + i1) % C)`` and must become ``(i0, i1)``. That is what this
module does, with three rules that hold for integer floor division and modulo:

* ``(k*q + r) // k == q + r // k`` and ``(k*q + r) % k == r % k``  (pull out multiples);
* ``r // k == 0`` and ``r % k == r`` when ``0 <= r < k``  (from the variables' ranges);
* ``k*(e // k) + e % k == e``  (recombination).

An expression is a canonical sum ``const + sum(coef * term)`` whose terms are loop variables,
``e // k``, ``e % k``, ``clamp(e, lo, hi)`` or an opaque runtime value (a gathered index).
Expressions are immutable and hashable; they print as C.

>>> i, j = Var("o0", 4), Var("o1", 6)
>>> flat = i * 6 + j
>>> (flat // 6, flat % 6)
(o0, o1)
>>> (flat // 2) % 3                     # o1 // 2 < 3
o1 / 2
>>> (flat // 4) % 3                     # the ranges do not allow more
(o0*6 + o1) / 4 % 3
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "Clamp",
    "Dyn",
    "Expr",
    "FloorDiv",
    "Mod",
    "Var",
    "const",
    "ravel",
    "unravel",
]

INF = math.inf


class Term:
    """A non-linear atom of an expression (a variable, a division, a modulo...)."""

    __slots__ = ("_hash",)

    def range(self) -> tuple[float, float]:
        raise NotImplementedError

    def vars(self) -> set[str]:
        raise NotImplementedError

    def c(self, names: dict[str, str]) -> str:
        raise NotImplementedError

    def key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __hash__(self) -> int:
        h = getattr(self, "_hash", None)
        if h is None:
            h = hash(self.key())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Term) and self.key() == other.key()

    def __lt__(self, other: Term) -> bool:  # for a canonical term order
        return repr(self.key()) < repr(other.key())


class _Var(Term):
    __slots__ = ("name", "size")

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size

    def range(self) -> tuple[float, float]:
        return (0, self.size - 1)

    def vars(self) -> set[str]:
        return {self.name}

    def c(self, names: dict[str, str]) -> str:
        return names.get(self.name, self.name)

    def key(self) -> tuple[Any, ...]:
        return ("v", self.name)


class _FloorDiv(Term):
    __slots__ = ("e", "k")

    def __init__(self, e: Expr, k: int) -> None:
        self.e = e
        self.k = k

    def range(self) -> tuple[float, float]:
        lo, hi = self.e.range()
        return (
            math.floor(lo / self.k) if lo > -INF else -INF,
            math.floor(hi / self.k) if hi < INF else INF,
        )

    def vars(self) -> set[str]:
        return self.e.vars()

    def c(self, names: dict[str, str]) -> str:
        inner = self.e.c(names)
        if self.e.range()[0] >= 0:  # C's truncating division is floor division here
            return f"{_paren(self.e, inner)} / {self.k}"
        return f"lt::floordiv({inner}, (int64_t){self.k})"

    def key(self) -> tuple[Any, ...]:
        return ("/", self.e.key(), self.k)


class _Mod(Term):
    __slots__ = ("e", "k")

    def __init__(self, e: Expr, k: int) -> None:
        self.e = e
        self.k = k

    def range(self) -> tuple[float, float]:
        return (0, self.k - 1)

    def vars(self) -> set[str]:
        return self.e.vars()

    def c(self, names: dict[str, str]) -> str:
        inner = self.e.c(names)
        if self.e.range()[0] >= 0:
            return f"{_paren(self.e, inner)} % {self.k}"
        return f"lt::floormod({inner}, (int64_t){self.k})"

    def key(self) -> tuple[Any, ...]:
        return ("%", self.e.key(), self.k)


class _Clamp(Term):
    __slots__ = ("e", "hi", "lo")

    def __init__(self, e: Expr, lo: int, hi: int) -> None:
        self.e = e
        self.lo = lo
        self.hi = hi

    def range(self) -> tuple[float, float]:
        lo, hi = self.e.range()
        return (max(lo, self.lo), min(hi, self.hi))

    def vars(self) -> set[str]:
        return self.e.vars()

    def c(self, names: dict[str, str]) -> str:
        return f"lt::clamp_index({self.e.c(names)}, (int64_t){self.lo}, (int64_t){self.hi})"

    def key(self) -> tuple[Any, ...]:
        return ("clamp", self.e.key(), self.lo, self.hi)


class _Dyn(Term):
    """A value only known at run time (an index read from a tensor), named by the kernel."""

    __slots__ = ("hi", "lo", "name")

    def __init__(self, name: str, lo: float = -INF, hi: float = INF) -> None:
        self.name = name
        self.lo = lo
        self.hi = hi

    def range(self) -> tuple[float, float]:
        return (self.lo, self.hi)

    def vars(self) -> set[str]:
        return {self.name}

    def c(self, names: dict[str, str]) -> str:
        return names.get(self.name, self.name)

    def key(self) -> tuple[Any, ...]:
        return ("dyn", self.name, self.lo, self.hi)


def _paren(e: Expr, text: str) -> str:
    simple = len(e.terms) + (e.const != 0) <= 1 and all(c == 1 for c in e.terms.values())
    return text if simple else f"({text})"


class Expr:
    """``const + sum(coef * term)``, canonical (terms sorted, zero coefficients dropped)."""

    __slots__ = ("_hash", "const", "terms")

    def __init__(self, terms: dict[Term, int] | None = None, const: int = 0) -> None:
        self.terms: dict[Term, int] = {t: c for t, c in (terms or {}).items() if c != 0}
        self.const = const
        self._recombine()
        self._hash: int | None = None

    # -- construction helpers ----------------------------------------------------------------
    @staticmethod
    def of(x: Expr | int) -> Expr:
        return x if isinstance(x, Expr) else Expr(None, int(x))

    def _recombine(self) -> None:
        # c*k*(e // k) + c*(e % k)  ->  c*e   (e // k in its canonical form: (a // 4) // 3
        # is stored as a // 12)
        while True:
            for t, c in self.terms.items():
                if isinstance(t, _Mod):
                    q = t.e // t.k
                    if q.const or len(q.terms) != 1:
                        continue
                    ((fd, qc),) = q.terms.items()
                    if qc == 1 and self.terms.get(fd) == c * t.k:
                        del self.terms[t], self.terms[fd]
                        for tt, cc in t.e.terms.items():
                            self.terms[tt] = self.terms.get(tt, 0) + c * cc
                            if self.terms[tt] == 0:
                                del self.terms[tt]
                        self.const += c * t.e.const
                        break
            else:
                return

    # -- queries ------------------------------------------------------------------------------
    def range(self) -> tuple[float, float]:
        lo = hi = float(self.const)
        for t, c in self.terms.items():
            tlo, thi = t.range()
            a, b = c * tlo, c * thi
            lo += min(a, b)
            hi += max(a, b)
        return lo, hi

    def vars(self) -> set[str]:
        out: set[str] = set()
        for t in self.terms:
            out |= t.vars()
        return out

    def is_const(self) -> bool:
        return not self.terms

    def coefficient(self, var: str) -> int | None:
        """The coefficient of loop variable `var` if it appears only linearly, else None."""
        c = 0
        for t, k in self.terms.items():
            if isinstance(t, _Var) and t.name == var:
                c += k
            elif var in t.vars():
                return None
        return c

    def key(self) -> tuple[Any, ...]:
        return (self.const, tuple(sorted((t.key(), c) for t, c in self.terms.items())))

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.key())
        return self._hash

    def __eq__(self, other: object) -> bool:  # structural equality (not a symbolic relation)
        if isinstance(other, int):
            return not self.terms and self.const == other
        return isinstance(other, Expr) and self.key() == other.key()

    # -- arithmetic ----------------------------------------------------------------------------
    def __add__(self, other: Expr | int) -> Expr:
        o = Expr.of(other)
        terms = dict(self.terms)
        for t, c in o.terms.items():
            terms[t] = terms.get(t, 0) + c
        return Expr(terms, self.const + o.const)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return self * -1

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-Expr.of(other))

    def __rsub__(self, other: Expr | int) -> Expr:
        return Expr.of(other) - self

    def __mul__(self, k: int) -> Expr:
        if isinstance(k, Expr):
            if k.is_const():
                k = k.const
            elif self.is_const():
                return k * self.const
            else:
                raise TypeError("index expressions are linear: cannot multiply two of them")
        k = int(k)
        if k == 0:
            return Expr()
        return Expr({t: c * k for t, c in self.terms.items()}, self.const * k)

    __rmul__ = __mul__

    def __floordiv__(self, k: int) -> Expr:
        k = int(k)
        if k <= 0:
            raise ValueError("index division needs a positive divisor")
        if k == 1:
            return self
        q_terms: dict[Term, int] = {}
        r_terms: dict[Term, int] = {}
        for t, c in self.terms.items():
            if c % k == 0:
                q_terms[t] = c // k
            else:
                r_terms[t] = c
        q = Expr(q_terms, self.const // k)
        r = Expr(r_terms, self.const % k)
        lo, hi = r.range()
        if lo >= 0 and hi < k:
            return q
        if lo >= 0 and hi < 2 * k and r.is_const():
            return q + int(r.const // k)
        # (e // a) // k == e // (a*k)
        if not r.const and len(r.terms) == 1:
            ((t, c),) = r.terms.items()
            if c == 1 and isinstance(t, _FloorDiv):
                return q + Expr({_FloorDiv(t.e, t.k * k): 1})
        return q + Expr({_FloorDiv(r, k): 1})

    def __mod__(self, k: int) -> Expr:
        k = int(k)
        if k <= 0:
            raise ValueError("index modulo needs a positive divisor")
        if k == 1:
            return Expr()
        r = Expr({t: c for t, c in self.terms.items() if c % k}, self.const % k)
        lo, hi = r.range()
        if lo >= 0 and hi < k:
            return r
        return Expr({_Mod(r, k): 1})

    def clamp(self, lo: int, hi: int) -> Expr:
        """The expression limited to [lo, hi] (used to keep guarded loads in bounds)."""
        elo, ehi = self.range()
        if elo >= lo and ehi <= hi:
            return self
        if self.is_const():  # a residue class's constant (see codegen's strided_loops)
            return Expr(None, min(max(self.const, lo), hi))
        return Expr({_Clamp(self, lo, hi): 1})

    def substitute(self, mapping: dict[str, Expr]) -> Expr:
        """Replace loop variables by expressions (re-simplifying)."""
        out = Expr(None, self.const)
        for t, c in self.terms.items():
            out = out + _subst_term(t, mapping) * c
        return out

    # -- printing -------------------------------------------------------------------------------
    def c(self, names: dict[str, str] | None = None) -> str:
        """C source for the expression (an int64_t)."""
        names = names or {}
        parts = []
        for t in sorted(self.terms):
            c = self.terms[t]
            s = t.c(names)
            if not isinstance(t, (_Var, _Dyn)) and c != 1:
                s = f"({s})"
            if c == 1:
                parts.append(s)
            elif c == -1:
                parts.append(f"-{s}")
            else:
                parts.append(f"{s}*{c}")
        if self.const or not parts:
            parts.append(str(self.const))
        text = " + ".join(parts)
        return text.replace("+ -", "- ")

    def __repr__(self) -> str:
        return self.c()


def _subst_term(t: Term, mapping: dict[str, Expr]) -> Expr:
    if isinstance(t, _Var):
        return mapping.get(t.name, Expr({t: 1}))
    if isinstance(t, _FloorDiv):
        return t.e.substitute(mapping) // t.k
    if isinstance(t, _Mod):
        return t.e.substitute(mapping) % t.k
    if isinstance(t, _Clamp):
        return t.e.substitute(mapping).clamp(t.lo, t.hi)
    return mapping.get(t.name, Expr({t: 1})) if isinstance(t, _Dyn) else Expr({t: 1})


def Var(name: str, size: int) -> Expr:
    """A loop variable ranging over [0, size)."""
    return Expr({_Var(name, size): 1})


def Dyn(name: str, lo: float = -INF, hi: float = INF) -> Expr:
    """A run-time integer (a gathered index) with a known range, if any."""
    return Expr({_Dyn(name, lo, hi): 1})


def const(v: int) -> Expr:
    return Expr(None, int(v))


# Re-exported term types, for code that inspects expressions.
FloorDiv, Mod, Clamp = _FloorDiv, _Mod, _Clamp


def ravel(index: Sequence[Expr], shape: Sequence[int]) -> Expr:
    """The row-major linear position of `index` in `shape`."""
    out = const(0)
    for e, d in zip(index, shape):
        out = out * int(d) + e
    return out


def unravel(linear: Expr, shape: Sequence[int]) -> list[Expr]:
    """The row-major index in `shape` of linear position `linear`."""
    out: list[Expr] = []
    rest = linear
    for d in reversed(shape):
        d = int(d)
        if d == 1:
            out.append(const(0))
            continue
        out.append(rest % d)
        rest = rest // d
    return list(reversed(out))


def contiguous_strides(shape: Iterable[int]) -> list[int]:
    out: list[int] = []
    acc = 1
    for d in reversed(list(shape)):
        out.append(acc)
        acc *= int(d)
    return list(reversed(out))
