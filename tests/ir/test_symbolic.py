"""Symbolic sizes: SymInt/SymFloat/SymBool arithmetic against Python numbers, guards and
their compiled predicates, specialization, and the expression helpers."""

from __future__ import annotations

import operator
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch.ir.symbolic import (
    ShapeEnv,
    SymBool,
    SymFloat,
    SymInt,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)

sizes = st.integers(min_value=2, max_value=10_000)
ints = st.integers(min_value=-50, max_value=50)

ARITH = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def value(x):
    """The concrete value an expression takes at the symbols' hints (checked by sympy)."""
    if isinstance(x, (SymInt, SymFloat)):
        subs = {info.symbol: info.hint for info in x.env.symbols.values()}
        return x.expr.xreplace(subs)
    return x


@settings(max_examples=200, deadline=None)
@given(a=sizes, b=ints, op=st.sampled_from(ARITH), swap=st.booleans())
def test_symint_arithmetic_agrees_with_python_ints(a, b, op, swap):
    assume(not (op in (operator.floordiv, operator.mod) and (b == 0 if not swap else False)))
    env = ShapeEnv()
    s = env.create_symbol(a)
    r = op(b, s) if swap else op(s, b)
    want = op(b, a) if swap else op(a, b)
    if isinstance(r, SymInt):
        assert r.hint == want
        assert int(value(r)) == want  # the expression, not just the hint, is right
    else:
        assert r == want  # simplified to a plain int


@settings(max_examples=200, deadline=None)
@given(a=sizes, b=sizes, op=st.sampled_from(ARITH))
def test_two_symbols_combine(a, b, op):
    env = ShapeEnv()
    s, t = env.create_symbol(a), env.create_symbol(b)
    r = op(s, t)
    want = op(a, b)
    got = r.hint if isinstance(r, SymInt) else r
    assert got == want
    assert int(value(r)) == want


@settings(max_examples=200, deadline=None)
@given(a=sizes, b=st.integers(min_value=-5, max_value=20_000), op=st.sampled_from(COMPARE))
def test_comparisons_follow_the_hint_and_guard(a, b, op):
    env = ShapeEnv()
    s = env.create_symbol(a)
    r = op(s, b)
    want = op(a, b)
    assert bool(r) == want
    # Whatever was recorded holds at the hint, and the compiled predicate agrees.
    pred = env.compile_guards()
    assert pred(a) is True
    assert env.evaluate({"s0": a})


@settings(max_examples=150, deadline=None)
@given(
    a=sizes,
    b=sizes,
    ops=st.lists(st.tuples(st.sampled_from(COMPARE), ints, st.booleans()), min_size=1, max_size=4),
    probe=st.tuples(sizes, sizes),
)
def test_compiled_guard_predicate_agrees_with_sympy(a, b, ops, probe):
    env = ShapeEnv()
    s, t = env.create_symbol(a), env.create_symbol(b)
    for op, k, use_t in ops:
        lhs = s + k if not use_t else s - t + k
        bool(op(lhs, t if use_t else k * 3))
    pred = env.compile_guards()
    values = {"s0": probe[0], "s1": probe[1]}
    assert pred(*probe) == env.evaluate(values)
    assert (pred(*probe)) == (not env.failed_guards(values))


def test_ranges_decide_without_guards():
    env = ShapeEnv()
    s = env.create_symbol(8)
    assert bool(s >= 2) and bool(s != 1) and bool(s > 0) and not bool(s == 1)
    assert env.guards == []
    bounded = env.create_symbol(8, max=64)
    assert bool(bounded <= 64) and env.guards == []


def test_sizes_zero_and_one_stay_specialized():
    env = ShapeEnv()
    assert env.create_symbol(0) == 0 and type(env.create_symbol(1)) is int
    assert env.symbols == {}


def test_int_specializes_and_guards_equality():
    env = ShapeEnv()
    s = env.create_symbol(12)
    assert int(s) == 12 and operator.index(s) == 12
    assert [str(g) for g in env.guards] == ["Eq(s0, 12)"]
    # The equality became a replacement: later arithmetic is concrete.
    assert s * 2 == 24 and type(s * 2) is int


def test_equality_of_two_symbols_unifies_them():
    env = ShapeEnv()
    s, t = env.create_symbol(5), env.create_symbol(5)
    assert bool(s == t)
    assert str(t + 1) == "s0 + 1"


def test_guard_records_the_users_line():
    env = ShapeEnv()
    env.loc_hook = lambda: ("model.py", 12)
    s = env.create_symbol(9)
    bool(s < 64)
    assert env.guards[0].loc == ("model.py", 12)
    assert "model.py:12" in repr(env.guards[0])


def test_unknown_operands_are_not_implemented():
    s = ShapeEnv().create_symbol(4)
    assert s.__add__("x") is NotImplemented
    with pytest.raises(TypeError):
        s + "x"
    with pytest.raises(TypeError):
        [1, 2] * SymBool(s.expr > 3, True, s.env)


def test_mixing_environments_is_an_error():
    a, b = ShapeEnv().create_symbol(4), ShapeEnv().create_symbol(4)
    with pytest.raises(RuntimeError, match="different shape environments"):
        a + b


def test_truediv_gives_symfloat_and_float_specializes():
    env = ShapeEnv()
    s = env.create_symbol(10)
    f = s / 4
    assert isinstance(f, SymFloat) and f.hint == 2.5
    assert float(f) == 2.5
    assert any("Eq" in str(g) for g in env.guards)


def test_helpers_build_expressions_without_guards():
    env = ShapeEnv()
    s, t = env.create_symbol(7), env.create_symbol(3)
    m = sym_max(s, t)
    assert m.hint == 7 and str(m) == "Max(s0, s1)"
    assert sym_min(s, t).hint == 3
    total = sym_sum([s, t, 4])
    assert total.hint == 14 and str(total) == "s0 + s1 + 4"
    pick = sym_ite(s > t, s, t)
    assert pick.hint == 7
    f = sym_float(s)
    assert isinstance(f, SymFloat) and f.hint == 7.0
    assert sym_int(f / 2).hint == 3
    assert sym_not(s > t).hint is False
    assert env.guards == []
    # Plain numbers pass straight through.
    assert (
        sym_max(2, 5) == 5
        and sym_int(3.7) == 3
        and sym_ite(True, 1, 2) == 1
        and sym_sum([1, 2]) == 3
    )


def test_symbool_logic():
    env = ShapeEnv()
    s = env.create_symbol(5)
    both = (s > 3) & (s < 10)
    assert isinstance(both, SymBool) and bool(both)
    either = (s < 3) | (s > 4)
    assert bool(either)
    assert bool(~(s < 3))


def test_sympy_is_not_imported_until_a_symbol_is_created():
    code = (
        "import sys, lazytorch as lt\n"
        "x = (lt.ones(3) * 2).sum().item()\n"
        "assert 'sympy' not in sys.modules, 'sympy imported by static shapes'\n"
        "from lazytorch.ir.symbolic import ShapeEnv\n"
        "ShapeEnv().create_symbol(5)\n"
        "assert 'sympy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_facade_exports_the_helpers():
    assert lt.sym_max is sym_max and lt.SymInt is SymInt and lt.sym_ite is sym_ite
