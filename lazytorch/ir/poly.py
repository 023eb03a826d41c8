"""Integer polynomials over size symbols, and exact fitting from sample points.

A program compiled over symbolic sizes describes each size it depends on — a dim, a byte
count, an index coefficient — as a small polynomial in the size symbols ``s0, s1, ...``
with integer coefficients (degree two at most: a ``[s0, s0]`` matrix holds ``s0*s0``
elements). `fit` recovers such a polynomial exactly from its values at sample points, and
says so (None) when no polynomial of that form matches every point.

>>> p = fit([(3,), (5,), (7,), (11,)], [9 + 2, 25 + 2, 49 + 2, 121 + 2])
>>> p, p(4)
(s0*s0 + 2, 18)
>>> fit([(3,), (5,), (7,), (11,)], [3, 5, 7, 12]) is None   # not a polynomial of degree 2
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

__all__ = ["Poly", "determines", "fit", "monomials"]

Monomial = tuple[int, ...]  # exponent of each symbol


class Poly:
    """``sum(coef * s0**e0 * s1**e1 ...)`` with integer coefficients; immutable."""

    __slots__ = ("nsym", "terms")

    def __init__(self, terms: dict[Monomial, int], nsym: int) -> None:
        self.terms = {m: c for m, c in sorted(terms.items(), reverse=True) if c}
        self.nsym = nsym

    @classmethod
    def const(cls, value: int, nsym: int) -> Poly:
        return cls({(0,) * nsym: int(value)}, nsym)

    @classmethod
    def symbol(cls, k: int, nsym: int) -> Poly:
        return cls({tuple(int(i == k) for i in range(nsym)): 1}, nsym)

    def is_const(self) -> bool:
        return all(not any(m) for m in self.terms)

    def __call__(self, point: Sequence[int] | int) -> int:
        if isinstance(point, int):
            point = (point,)
        total = 0
        for m, c in self.terms.items():
            v = c
            for x, e in zip(point, m):
                v *= x**e
            total += v
        return total

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(tuple(self.terms.items()))

    def text(self, names: Sequence[str] | None = None) -> str:
        """The polynomial as C (and Python) source, symbols named by `names`."""
        names = names or [f"s{k}" for k in range(self.nsym)]
        parts: list[str] = []
        for m, c in self.terms.items():
            factors = [n for n, e in zip(names, m) for _ in range(e)]
            if not factors:
                parts.append(str(c))
            elif c == 1:
                parts.append("*".join(factors))
            elif c == -1:
                parts.append("-" + "*".join(factors))
            else:
                parts.append(f"{c}*" + "*".join(factors))
        if not parts:
            return "0"
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self) -> str:
        return self.text()

    __str__ = __repr__


def monomials(nsym: int, degree: int = 2) -> list[Monomial]:
    """Every monomial of total degree <= `degree` in `nsym` symbols, constant first."""
    out = [
        m
        for d in range(degree + 1)
        for m in itertools.product(range(d + 1), repeat=nsym)
        if sum(m) == d
    ]
    return sorted(set(out), key=lambda m: (sum(m), [-e for e in m]))


def fit(points: Sequence[Sequence[int]], values: Sequence[int], degree: int = 2) -> Poly | None:
    """The integer polynomial of degree <= `degree` through every (point, value), or None.

    The first ``len(monomials)`` points determine it (they must make the system solvable);
    every further point verifies it.
    """
    nsym = len(points[0])
    mons = monomials(nsym, degree)
    n = len(mons)
    if len(points) < n:
        raise ValueError(f"fitting {n} coefficients needs at least {n} points")
    if all(v == values[0] for v in values):
        return Poly.const(values[0], nsym)
    rows = [[Fraction(_mono(p, m)) for m in mons] + [Fraction(v)] for p, v in zip(points, values)]
    a = rows[:n]
    for col in range(n):  # Gauss-Jordan elimination over the rationals: exact
        piv = next((r for r in range(col, n) if a[r][col] != 0), None)
        if piv is None:
            raise ValueError("the sample points do not determine the polynomial")
        a[col], a[piv] = a[piv], a[col]
        inv = 1 / a[col][col]
        a[col] = [x * inv for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    coefs = [row[n] for row in a]
    if any(c.denominator != 1 for c in coefs):
        return None
    poly = Poly({m: int(c) for m, c in zip(mons, coefs)}, nsym)
    if any(poly(p) != v for p, v in zip(points, values)):
        return None
    return poly


def determines(points: Sequence[Sequence[int]], degree: int = 2) -> bool:
    """Whether the values at `points` determine every polynomial of degree <= `degree`."""
    mons = monomials(len(points[0]), degree)
    try:
        fit(points, list(range(len(points))), degree)
    except ValueError:
        return False
    return len(points) >= len(mons)


def _mono(point: Sequence[int], m: Monomial) -> int:
    v = 1
    for x, e in zip(point, m):
        v *= x**e
    return v
