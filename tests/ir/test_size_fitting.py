"""The pieces under dynamic shapes: polynomial fits, size patterns and their guards, and
merging sources generated at sample sizes (lazytorch.ir.poly, lazytorch.ir.generalize,
lazytorch.codegen.symbolic_source)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch.codegen.symbolic_source import NotSymbolic, symbolize
from lazytorch.debug import program
from lazytorch.ir.generalize import NotGeneralizable, SizePattern, generalize, generalize_marked
from lazytorch.ir.poly import Poly, fit, monomials
from lazytorch.runtime.dynamic import sample_points

coef = st.integers(-50, 50)


@settings(max_examples=60, deadline=None)
@given(nsym=st.integers(1, 3), data=st.data())
def test_fit_recovers_every_integer_polynomial_of_degree_2(nsym, data):
    mons = monomials(nsym)
    terms = {m: data.draw(coef) for m in mons}
    p = Poly(terms, nsym)
    pts = sample_points(nsym)
    assert fit(pts, [p(x) for x in pts]) == p


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 5000))
def test_fit_refuses_rounded_counts(k):
    pts = sample_points(1)
    values = [-(-x // k) for (x,) in pts]  # ceil division: no polynomial
    assert fit(pts, values) is None


def test_poly_text_and_evaluation():
    p = Poly({(2, 0): 1, (1, 1): -3, (0, 0): 7}, 2)
    assert p.text() == "s0*s0 - 3*s0*s1 + 7"
    assert p((4, 5)) == 16 - 60 + 7
    assert Poly.const(0, 1).text() == "0"


def _prog(n, m=3):
    x = lt.ones(n, m)
    lt.materialize(x)
    y = (x * 2).sum(1).reshape(n, 1).expand(n, m) + x
    return program(y)


def test_patterns_of_two_sizes_share_a_key_and_differ_in_ints():
    a, b = SizePattern.of(_prog(4)), SizePattern.of(_prog(7))
    assert a.key == b.key and a.ints != b.ints
    assert SizePattern.of(_prog(4, 5)).key == a.key  # every integer is a hole
    assert b.instantiate(a.ints).canonical_text() == _prog(4).canonical_text()


def test_pattern_names_its_integers_on_first_use(monkeypatch):
    """`where` names every integer (an input's dimension, an instruction's dimension or
    parameter, with its source line), written out only when read: building a pattern, on
    every cut that may compile, formats no source location."""
    import lazytorch.ir.generalize as g

    prog = _prog(4)
    real = g.format_loc
    monkeypatch.setattr(g, "format_loc", lambda loc: pytest.fail("formatted eagerly"))
    p = SizePattern.of(prog)
    monkeypatch.setattr(g, "format_loc", real)
    assert len(p.where) == len(p.ints) and p.where is p.where
    assert p.where[:2] == ["input 0 dim 0", "input 0 dim 1"]
    base = len(prog.params)
    for name in p.where[2:]:
        j, rest = int(name[1:].split(" ")[0]) - base, name.split(") ", 1)[1]
        ins = prog.instrs[j]
        assert name.startswith(f"%{base + j} ({ins.op.name} at {real(ins.loc)})")
        assert rest.startswith("dim ") or rest in ins.params


def test_generalize_refuses_different_graphs_and_static_marks():
    a = SizePattern.of(_prog(4))
    x = lt.ones(4, 3)
    lt.materialize(x)
    other = SizePattern.of(program(x.exp()))
    with pytest.raises(NotGeneralizable, match="differ in more than their sizes"):
        generalize(a, other)
    with pytest.raises(NotGeneralizable, match="marked static"):
        generalize(a, SizePattern.of(_prog(7)), {(0, 0): ("static",)})
    with pytest.raises(NotGeneralizable, match="no size changed"):
        generalize(a, SizePattern.of(_prog(4)))


@settings(max_examples=40, deadline=None)
@given(
    n1=st.integers(2, 40),
    n2=st.integers(2, 40),
    m=st.integers(1, 6),
    probe=st.tuples(st.integers(0, 60), st.integers(1, 6)),
)
def test_guard_predicate_agrees_with_evaluating_the_guards(n1, n2, m, probe):
    """The compiled match function says yes exactly when every guard expression holds."""
    if n1 == n2:
        n2 = n1 + 1
    gen = generalize(SizePattern.of(_prog(n1, m)), SizePattern.of(_prog(n2, m)))
    p = SizePattern.of(_prog(*probe))
    if p.key != gen.key:
        return
    point = tuple(p.ints[pos] for pos, _ in gen.sources)
    holds = all(v >= lo and (hi is None or v <= hi) for v, (lo, hi) in zip(point, gen.bounds))
    holds = holds and all(poly(point) == v for poly, v in zip(gen.polys, p.ints))
    assert (gen.match(p.ints) is not None) == holds
    assert (gen.match(p.ints) == point) if holds else gen.why_not(p.ints).startswith("guard")
    if probe[1] == m and probe[0] >= 2:
        assert holds  # the same program at another size is always an instance


def test_marked_generalization_from_one_program_with_bounds():
    b = SizePattern.of(_prog(6))
    gen = generalize_marked(b, {(0, 0): ("dynamic", 3, 10)})
    assert gen.match(SizePattern.of(_prog(9)).ints) == (9,)
    assert gen.match(SizePattern.of(_prog(11)).ints) is None
    assert gen.why_not(SizePattern.of(_prog(11)).ints) == "guard s0 <= 10 failed (s0 = 11)"
    assert gen.why_not(SizePattern.of(_prog(2)).ints) == "guard s0 >= 3 failed (s0 = 2)"
    assert "s0 <= 10" in gen.guards()


def test_generalization_json_round_trip():
    gen = generalize(SizePattern.of(_prog(4)), SizePattern.of(_prog(9)))
    other = SizePattern.of(_prog(13))
    back = type(gen).from_json(other, gen.to_json())
    assert back.spec_text() == gen.spec_text()
    assert back.match(SizePattern.of(_prog(5)).ints) == (5,)
    with pytest.raises(ValueError):
        type(gen).from_json(other, {"polys": []})


# -- merging sources -------------------------------------------------------------------------------
PTS = [(101,), (103,), (107,), (109,)]


def test_symbolize_fits_literals_comments_and_whole_floats():
    src = [
        f"// k [pointwise {n}x4]\nfloat c = {float(n)!r}f; x[i*{n * n} + {3 * n + 1}] = 0x1p+0f;"
        for (n,) in PTS
    ]
    out = symbolize(src, PTS, ["N"])
    assert out == (
        "// k [pointwise Nx4]\nfloat c = ((float)(N)); x[i*(N*N) + (3*N + 1)] = 0x1p+0f;"
    )


def test_symbolize_refuses_structural_differences_and_non_polynomials():
    with pytest.raises(NotSymbolic, match="differ"):
        symbolize([f"a{'+' if n < 105 else '-'}{n};" for (n,) in PTS], PTS, ["N"])
    pts = sample_points(1)
    with pytest.raises(NotSymbolic, match="no polynomial"):
        symbolize([f"x = {(n + 15) // 16};" for (n,) in pts], pts, ["N"])
    with pytest.raises(NotSymbolic, match="differs between samples"):
        symbolize([f"x = {1 / n!r};" for (n,) in PTS], PTS, ["N"])


def test_sample_points_are_distinct_primes_above_every_threshold():
    for k in (1, 2, 3):
        pts = sample_points(k)
        assert len(pts) == len(monomials(k)) + 2
        for p in pts:
            assert len(set(p)) == k and min(p) > 1 << 18
            assert all(all(v % f for f in range(2, 1000)) for v in p)
        if k > 1:  # the order of two sizes varies between samples
            assert len({tuple(np.argsort(p)) for p in pts}) > 1


def _attr_rich_programs():
    """Programs whose instructions carry every kind of attribute: shapes, axes, slices and
    pads (negative too), whole and fractional floats, bools, dtypes, devices, strings."""
    x = lt.randn(6, 8)
    idx = lt.tensor([[0, 2], [1, 1]])
    lt.materialize(x, idx)
    yield program(lt.nn.functional.layer_norm(x, (8,), eps=1e-5).mean(0))
    yield program(lt.nn.functional.gelu(x[1:5:2].flip(1)).var(1, keepdim=True))
    yield program(lt.nn.functional.pad(x, (1, -2, 0, 3), value=0.5).to(lt.float64))
    yield program(lt.cat([x, x.exp()], 1).topk(3, dim=1)[0] > 0.25)
    yield program(lt.gather(x, 1, idx.repeat(3, 1)).cumsum(0) + lt.rand(6, 2))
    q = x.view(1, 2, 6, 4)
    yield program(lt.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True))
    yield program(lt.arange(12).view(3, 4).sum(1).float() / 3.0)


@pytest.mark.parametrize("i", range(7))
def test_pattern_key_is_the_canonical_text_with_holes(i):
    # SizePattern.of writes its key in the pass that collects the integers; it must be the
    # canonical text of the program with every integer replaced by a hole, as instantiating
    # the holes and writing the text gives.
    prog = list(_attr_rich_programs())[i]
    pat = SizePattern.of(prog)
    assert pat.key == SizePattern(pat.program, pat.ints, pat._spots).key
    assert pat.key.count("#") >= len(pat.ints)
