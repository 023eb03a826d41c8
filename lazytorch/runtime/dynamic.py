"""Dynamic shapes: serving new sizes from a program compiled over symbolic sizes.

The executor's in-memory cache is keyed by the exact program, sizes included. When a cut
misses it, `lookup` asks whether a program compiled over symbolic sizes covers the new one
(same pattern, see `lazytorch.ir.generalize`, and every guard holds); the executable bound
to the new sizes then goes into the exact cache, so the next cut of that size is an
ordinary hit. When nothing covers it and the program at the same cut location was last
built for other sizes, `generalize_and_compile` turns the two into one program over the
input sizes that changed ("automatic dynamic": the second size seen makes a dim dynamic)
and compiles it once.

Code generation stays integer-only: the program is generated at a few *sample sizes* and
the sources are merged into one over the symbols (`lazytorch.codegen.symbolic_source`).
The samples are large primes (no divisibility, no size threshold of the scheduler or code
generator between them, never equal to each other), so each takes the general code path.

``LAZYTORCH_DYNAMIC=0`` turns this off: every size then compiles its own program.
"""

from __future__ import annotations

import logging
import random
import weakref
from typing import Any

from lazytorch import metrics
from lazytorch._settings import env_value
from lazytorch.ir.generalize import (
    Marks,
    NotGeneralizable,
    SizePattern,
    generalize,
    generalize_marked,
)
from lazytorch.ir.poly import determines, monomials
from lazytorch.ir.program import Program

__all__ = [
    "adopt",
    "enabled",
    "generalize_and_compile",
    "lookup",
    "marks",
    "marks_for",
    "plan",
    "sample_points",
]

_log = logging.getLogger("lazytorch.recompiles")
_log_cache = logging.getLogger("lazytorch.cache")

# (backend, deterministic, pattern key) -> programs compiled over symbolic sizes
_compiled: dict[tuple[Any, ...], list[Any]] = {}
# (backend, deterministic, cut location) -> the pattern last built there
_last_at: dict[tuple[Any, ...], SizePattern] = {}
# (backend, deterministic, pattern key, symbol positions) -> why that did not compile
_refused: dict[tuple[Any, ...], str] = {}
# (backend, deterministic, pattern key) of programs being compiled in the background (`plan`)
_planned: set[tuple[Any, ...]] = set()
# What `lazytorch.mark_dynamic` / `mark_static` said, by node: {dim: ("dynamic", min, max) |
# ("static",)}; nodes of dead tensors drop out.
marks: weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, ...]]] = weakref.WeakKeyDictionary()


def marks_for(params: list[Any]) -> dict[tuple[int, int], tuple[Any, ...]]:
    """The marks of a program's parameters, by (parameter, dim)."""
    if not marks:
        return {}
    out = {}
    for i, node in enumerate(params):
        m = marks.get(node)
        if m:
            for d, entry in m.items():
                out[(i, d)] = entry
    return out


def enabled() -> bool:
    """Automatic dynamic shapes are on unless ``LAZYTORCH_DYNAMIC=0``."""
    return env_value("LAZYTORCH_DYNAMIC")


def clear() -> None:
    """Forget every dynamic program and observation (with the in-memory program cache)."""
    _compiled.clear()
    _last_at.clear()
    _refused.clear()
    _planned.clear()


def lookup(
    scope: tuple[Any, ...], pattern: SizePattern, backend: Any = None, marks: Marks | None = None
) -> tuple[Any, str | None]:
    """(executable bound to `pattern`'s sizes, None) if a dynamic program covers it, else
    (None, why the last one tried does not), why being None when there is none. The
    first use of a program loaded from disk gives (executable, "loaded").

    The first time a pattern is seen, `backend`'s disk cache is asked for the programs
    compiled over symbolic sizes for it (by earlier processes or ``lazytorch warmup``)."""
    why = None
    key = (*scope, pattern.key)
    if key not in _compiled and backend is not None and hasattr(backend, "load_dynamic"):
        _compiled[key] = backend.load_dynamic(pattern, {"deterministic": scope[1]})
    static = _static_positions(pattern, marks) if marks else ()
    for sym in _compiled.get(key, ()):
        if static and any(not sym.gen.polys[pos].is_const() for pos in static):
            continue  # a dim marked static: not served by a program over it
        point = sym.gen.match(pattern.ints)
        if point is not None:
            if not sym.used:  # loaded from disk just now: observers hear of it as built
                sym.used = True
                return sym.bind(point), "loaded"
            metrics.increment("dynamic_hits")
            if _log_cache.isEnabledFor(logging.DEBUG):
                bound = ", ".join(f"{n} = {v}" for n, v in zip(sym.gen.names, point))
                _log_cache.debug("dynamic program serves %s", bound)
            return sym.bind(point), None
        why = sym.gen.why_not(pattern.ints)
    return None, why


def _static_positions(pattern: SizePattern, marks: Marks) -> list[int]:
    offsets, acc = [], 0
    for p in pattern.program.params:
        offsets.append(acc)
        acc += len(p.shape)
    return [offsets[i] + d for (i, d), m in marks.items() if m[0] == "static" and i < len(offsets)]


def size_variant(
    scope: tuple[Any, ...], where: str, pattern: SizePattern, marks: Marks | None = None
) -> bool:
    """Whether `generalize_and_compile` would try a program over symbolic sizes for
    `pattern` at `where` (marked dynamic inputs, or the previous program there with other
    sizes). Reads, changes nothing."""
    if not enabled():
        return False
    prev = _last_at.get((*scope, where))
    marked = bool(marks) and any(m[0] == "dynamic" for m in marks.values())
    if marked:
        return prev is None or prev.key != pattern.key
    return prev is not None and prev.key == pattern.key


def remember(scope: tuple[Any, ...], where: str, pattern: SizePattern) -> None:
    """Note `pattern` as the last program built at `where` without compiling it now (a
    tiered first run): the next sizes at `where` are then seen as a size variant."""
    _last_at[(*scope, where)] = pattern


def generalize_and_compile(
    scope: tuple[Any, ...],
    where: str,
    pattern: SizePattern,
    backend: Any,
    options: dict[str, Any],
    marks: Marks | None = None,
) -> tuple[Any, Program, str] | None:
    """Compile the program at `where` over symbolic sizes if it is the previous one there
    with other sizes, or has inputs marked dynamic: (executable for `pattern`, symbolic
    program, what became dynamic). Otherwise None (and `pattern` is remembered as the last
    one built at `where`)."""
    prev = _last_at.get((*scope, where))
    _last_at[(*scope, where)] = pattern
    key = (*scope, pattern.key)
    if not enabled() or not hasattr(backend, "compile_dynamic"):
        return None
    marked = bool(marks) and any(m[0] == "dynamic" for m in marks.values())
    if marked and (prev is None or prev.key != pattern.key):
        try:
            gen = generalize_marked(pattern, marks or {})
            sym = backend.compile_dynamic(gen, options)
        except Exception as e:  # as below: the static compile is the fallback
            # A guess from one program: it may be wrong where a second one will not be.
            _log.info("not compiling the program at %s over the marked sizes: %s", where, e)
            return None
        sym.used = True
        _compiled.setdefault(key, []).append(sym)
        metrics.increment("dynamic_programs")
        point = sym.gen.match(pattern.ints)
        if point is None:
            return None
        what = ", ".join(f"{w} is {n}" for n, (_, w) in zip(gen.names, gen.sources))
        return sym.bind(point), gen.symbolic_program(), f"{what} (marked dynamic)"
    if prev is None or prev.key != pattern.key:
        return None
    try:
        gen = generalize(prev, pattern, marks)
    except NotGeneralizable as e:
        _log.info("not compiling the program at %s over symbolic sizes: %s", where, e)
        return None
    point = gen.match(pattern.ints)
    if point is None:  # a size 0 or 1: it stays specialized (the next size generalizes)
        return None
    # The same sizes of the same pattern would fail the same way: tried once.
    attempt = (*key, tuple(pos for pos, _ in gen.sources))
    if attempt in _refused:
        return None
    try:
        sym = backend.compile_dynamic(gen, options)
    except Exception as e:  # any failure here has the static compile to fall back to
        # lazy: import time (compiling only)
        from lazytorch.codegen.symbolic_source import NotSymbolic

        # NotSymbolic says why the code does not generalize; anything else (a sample the
        # scheduler rejects, a compile error in the merged source) is a bug of this path,
        # never the user's: the program is compiled for its sizes, as without dynamic shapes.
        if not isinstance(e, NotSymbolic):
            e = NotSymbolic(f"{type(e).__name__}: {e}")
        _refused[attempt] = str(e)
        _log.info("not compiling the program at %s over symbolic sizes: %s", where, e)
        metrics.increment("dynamic_refused")
        return None
    sym.used = True
    _compiled.setdefault(key, []).append(sym)
    metrics.increment("dynamic_programs")
    changed = ", ".join(
        f"{w} ({prev.ints[pos]} -> {pattern.ints[pos]}) is {n}"
        for n, (pos, w) in zip(gen.names, gen.sources)
    )
    return sym.bind(point), gen.symbolic_program(), changed


def compiling(scope: tuple[Any, ...], pattern: SizePattern) -> bool:
    """Whether a background compile of `pattern`'s program over symbolic sizes (`plan`) is
    running. Reads, changes nothing."""
    return (*scope, pattern.key) in _planned


def plan(
    scope: tuple[Any, ...], where: str, pattern: SizePattern, marks: Marks | None = None
) -> tuple[Any, tuple[int, ...]] | None:
    """For a tiered size variant (`size_variant` said yes): the generalized program to
    compile over symbolic sizes in the background, and `pattern`'s point in it; None when
    there is nothing to compile (not generalizable, a size 0 or 1, refused before, or a
    compile for this pattern already running). Remembers `pattern` at `where`; compiles
    nothing. The caller hands the result to `adopt` on the main thread."""
    prev = _last_at.get((*scope, where))
    _last_at[(*scope, where)] = pattern
    key = (*scope, pattern.key)
    if key in _planned:
        return None  # its compile is running: this size waits on the interpreter too
    try:
        if bool(marks) and any(m[0] == "dynamic" for m in (marks or {}).values()):
            gen = generalize_marked(pattern, marks or {})
        elif prev is not None:
            gen = generalize(prev, pattern, marks)
        else:
            return None
    except NotGeneralizable as e:
        _log.info("not compiling the program at %s over symbolic sizes: %s", where, e)
        return None
    point = gen.match(pattern.ints)
    if point is None or (*key, tuple(pos for pos, _ in gen.sources)) in _refused:
        return None
    _planned.add(key)
    return gen, point


def adopt(scope: tuple[Any, ...], gen: Any, sym: Any, error: BaseException | None) -> None:
    """On the main thread: the background compile of `gen` (from `plan`) finished with
    `sym`, or failed with `error` (then the pattern is not tried again for those symbols)."""
    key = (*scope, gen.key)
    _planned.discard(key)
    if sym is not None:
        sym.used = True
        _compiled.setdefault(key, []).append(sym)
        metrics.increment("dynamic_programs")
        return
    _refused[(*key, tuple(pos for pos, _ in gen.sources))] = str(error)
    _log.info("not compiling over symbolic sizes (in the background): %s", error)
    metrics.increment("dynamic_refused")


# -- sample sizes ------------------------------------------------------------------------------
_LOW, _HIGH = 300_000, 3_000_000  # above every size threshold (ROW_CACHE_BYTES of bytes...)


def _is_prime(n: int) -> bool:
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def _prime(rng: random.Random) -> int:
    n = rng.randrange(_LOW, _HIGH) | 1
    while not _is_prime(n):
        n += 2
    return n


_points: dict[int, list[tuple[int, ...]]] = {}


def sample_points(nsym: int) -> list[tuple[int, ...]]:
    """Sample sizes for `nsym` symbols: enough to fit every polynomial of degree 2, and two
    more to check each fit. Deterministic; values differ within a point and their order
    varies between points (so code that compares two sizes differs between samples)."""
    pts = _points.get(nsym)
    if pts is not None:
        return pts
    need = len(monomials(nsym))
    rng = random.Random(20261124 + nsym)
    while True:
        pts: list[tuple[int, ...]] = []
        while len(pts) < need + 2:
            p = tuple(_prime(rng) for _ in range(nsym))
            if len(set(p)) == nsym and p not in pts:
                pts.append(p)
        if determines(pts[:need]):
            break
    _points[nsym] = pts
    return pts
