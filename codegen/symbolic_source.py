"""Source over symbolic sizes, from sources generated at sample sizes.

The code generator prints every size as an integer literal. To compile a program once for
every size, the runtime generates its source at several *sample sizes* (values far above
every size threshold of the scheduler and the code generator, so each sample takes the
general code path, which is correct for small sizes too) and `symbolize` merges them: the
sources must agree token for token except in integer literals, and each literal that
differs must be one integer polynomial (degree <= 2) of the sample sizes, checked on one
more sample than its coefficients need. The literal is then printed as that polynomial of
the size symbols, which the program reads at run time. Anything else — a structural
difference between samples, a literal that no polynomial fits — raises `NotSymbolic`, and
the caller compiles for the concrete sizes instead.

>>> src = [f"for (int64_t i = 0; i < {n}; ++i) y[i] = x[i*{2 * n} + 7];" for n in (101, 103, 107, 109)]
>>> print(symbolize(src, [(101,), (103,), (107,), (109,)], ["S0"]))
for (int64_t i = 0; i < S0; ++i) y[i] = x[i*(2*S0) + 7];
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lazytorch.ir.poly import Poly, fit

__all__ = ["NotSymbolic", "symbolize"]


class NotSymbolic(ValueError):
    """The samples do not make one source over symbolic sizes; the message says where."""


_TOKEN = re.compile(
    r"""
      (?P<comment>//[^\n]*|/\*.*?\*/)
    | (?P<string>"(?:\\.|[^"\\])*")
    | (?P<hexfloat>0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][+-]?\d+[fFlL]?)
    | (?P<hex>0[xX][0-9a-fA-F]+[uUlL]*)
    | (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlL]?|\d+[eE][+-]?\d+[fFlL]?)
    | (?P<int>\d+)[uUlL]*
    | (?P<ident>[A-Za-z_]\w*)
    | (?P<space>\s+)
    | (?P<other>.)
    """,
    re.S | re.X,
)
_COMMENT_NUMBER = re.compile(r"\d+")


def _tokens(source: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "other"
        out.append((kind, m.group("int") if kind == "int" else m.group(0)))
    return out


def symbolize(sources: Sequence[str], points: Sequence[Sequence[int]], names: Sequence[str]) -> str:
    """One source from `sources`, generated at sizes `points`, with sizes named `names`."""
    if len(sources) != len(points):
        raise ValueError("one sample point per source")
    streams = [_tokens(s) for s in sources]
    first = streams[0]
    if any(len(s) != len(first) for s in streams[1:]):
        raise NotSymbolic(_first_difference(streams))
    out: list[str] = []
    line = 1
    for i, (kind, text) in enumerate(first):
        column = [s[i] for s in streams]
        if kind == "int":
            if any(k != "int" for k, _ in column):
                raise NotSymbolic(f"line {line}: {text!r} is not a literal in every sample")
            values = [int(t) for _, t in column]
            poly = fit(points, values)
            if poly is None:
                raise NotSymbolic(
                    f"line {line}: the literal {text} ({', '.join(map(str, values))} at the "
                    "samples) is no polynomial of the sizes"
                )
            out.append(str(values[0]) if poly.is_const() else _c(poly, names))
        elif kind == "comment":
            out.append(_comment(column, points, names))
        elif kind in ("float", "hexfloat") and any(t != text for _, t in column):
            out.append(_float(column, points, names, line))
        else:
            if any(c != (kind, text) for c in column):
                raise NotSymbolic(
                    f"line {line}: the samples differ ({' / '.join(repr(t) for _, t in column[:2])})"
                )
            out.append(text)
        line += text.count("\n")
    return "".join(out)


def _float(
    column: list[tuple[str, str]], points: Sequence[Sequence[int]], names: Sequence[str], line: int
) -> str:
    """A float literal that differs between samples: a whole-number polynomial of the sizes
    (a mean divides by a count), printed as a conversion of that polynomial."""
    if any(k not in ("float", "hexfloat") for k, _ in column):
        raise NotSymbolic(f"line {line}: {column[0][1]!r} is not a literal in every sample")
    values = []
    for kind, text in column:
        body = text.rstrip("fFlL")
        v = float.fromhex(body) if kind == "hexfloat" else float(body)
        if not v.is_integer():
            raise NotSymbolic(f"line {line}: the literal {text} differs between samples")
        values.append(int(v))
    poly = fit(points, values)
    if poly is None:
        raise NotSymbolic(f"line {line}: the literal {column[0][1]} is no polynomial of the sizes")
    ctype = "float" if column[0][1][-1] in "fF" else "double"
    return f"(({ctype})({poly.text(names)}))"


def _c(poly: Poly, names: Sequence[str]) -> str:
    text = poly.text(names)
    return text if text in names else f"({text})"


def _comment(
    column: list[tuple[str, str]], points: Sequence[Sequence[int]], names: Sequence[str]
) -> str:
    """A comment with its sizes written over the symbols where they fit, else as sampled."""
    texts = [t for _, t in column]
    parts = [_COMMENT_NUMBER.split(t) for t in texts]
    numbers = [_COMMENT_NUMBER.findall(t) for t in texts]
    if any(p != parts[0] for p in parts[1:]) or any(len(n) != len(numbers[0]) for n in numbers):
        return texts[0]
    pieces = [parts[0][0]]
    for j in range(len(numbers[0])):
        values = [int(n[j]) for n in numbers]
        poly = fit(points, values)
        pieces.append(numbers[0][j] if poly is None or poly.is_const() else poly.text(names))
        pieces.append(parts[0][j + 1])
    return "".join(pieces)


def _first_difference(streams: list[list[tuple[str, str]]]) -> str:
    a, b = streams[0], next(s for s in streams[1:] if len(s) != len(streams[0]))
    line = 1
    for (ka, ta), (kb, tb) in zip(a, b):
        if ka != kb or (ka not in ("int", "comment") and ta != tb):
            return f"line {line}: the samples differ ({ta!r} / {tb!r})"
        line += ta.count("\n")
    return "the samples differ in length"
