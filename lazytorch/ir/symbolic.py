"""Symbolic sizes: SymInt, SymFloat and SymBool over sympy expressions, and the ShapeEnv.

A static dimension is a plain ``int``; only a dimension that may change between calls is a
`SymInt`. Each symbolic value carries a *hint* (the concrete value seen now), so code that
branches on it can follow the hint — and the branch is recorded as a guard in the shape
environment, which a cached program must satisfy to be reused. Nothing here imports sympy
until the first symbol is created.

>>> from lazytorch.ir.symbolic import ShapeEnv
>>> env = ShapeEnv()
>>> s = env.create_symbol(8)
>>> n = s * 2 + 1
>>> n, n.hint
(2*s0 + 1, 17)
>>> bool(s > 4)        # follows the hint and records the guard s0 > 4 ...
True
>>> [str(g) for g in env.guards]
['s0 > 4']
>>> bool(s >= 2)       # ... unless the symbol's range already decides it
True
>>> len(env.guards)
1
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "Guard",
    "ShapeEnv",
    "SymBool",
    "SymFloat",
    "SymInt",
    "is_symbolic",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
]


def _sympy() -> Any:
    import sympy

    return sympy


def is_symbolic(x: object) -> bool:
    """True for SymInt, SymFloat and SymBool values."""
    return isinstance(x, (SymInt, SymFloat, SymBool))


class Guard:
    """A condition a cached program relies on, with the user line that introduced it."""

    __slots__ = ("expr", "loc", "reason")

    def __init__(self, expr: Any, reason: str = "", loc: tuple[str, int] | None = None) -> None:
        self.expr = expr
        self.reason = reason
        self.loc = loc

    def __str__(self) -> str:
        return str(self.expr)

    def __repr__(self) -> str:
        where = f" at {self.loc[0]}:{self.loc[1]}" if self.loc else ""
        return f"Guard({self.expr}{where})"


class _SymbolInfo:
    __slots__ = ("hint", "max", "min", "source", "symbol")

    def __init__(self, symbol: Any, hint: int, lo: int, hi: int | None, source: str) -> None:
        self.symbol = symbol
        self.hint = hint
        self.min = lo
        self.max = hi
        self.source = source


class ShapeEnv:
    """Creates size symbols, decides or guards comparisons on them, and keeps the guards.

    Symbols are positive integers with a range (default ``[2, inf)``: sizes 0 and 1 stay
    specialized because broadcasting and empty-tensor logic depend on them).
    """

    def __init__(self) -> None:
        self.symbols: dict[str, _SymbolInfo] = {}
        self.guards: list[Guard] = []
        self._replacements: dict[Any, Any] = {}
        self._guard_keys: set[Any] = set()
        # A hook returning the user's (file, line); set by the runtime so guards have provenance.
        self.loc_hook: Callable[[], tuple[str, int] | None] | None = None

    # -- symbols -------------------------------------------------------------------------
    def create_symbol(
        self, hint: int, *, min: int = 2, max: int | None = None, source: str = ""
    ) -> SymInt | int:
        """A new size symbol whose current value is `hint`; 0 and 1 come back as plain ints."""
        if not isinstance(hint, int) or hint < 0:
            raise ValueError(
                f"create_symbol(): a size hint must be a non-negative int, got {hint!r}"
            )
        if hint in (0, 1):
            return hint
        lo = 2 if min is None else builtins_max(min, 2)
        if hint < lo or (max is not None and hint > max):
            raise ValueError(f"create_symbol(): hint {hint} is outside the range [{lo}, {max}]")
        sp = _sympy()
        name = f"s{len(self.symbols)}"
        sym = sp.Symbol(name, integer=True, positive=True)
        self.symbols[name] = _SymbolInfo(sym, hint, lo, max, source)
        return SymInt(sym, hint, self)

    def hint_of(self, name: str) -> int:
        return self.symbols[name].hint

    def bounds(self, name: str) -> tuple[int, int | None]:
        info = self.symbols[name]
        return info.min, info.max

    # -- simplification and static decisions --------------------------------------------
    def simplify(self, expr: Any) -> Any:
        """Apply the replacements learned from equality guards (s1 -> s0, s2 -> 8)."""
        if self._replacements:
            expr = expr.xreplace(self._replacements)
        return expr

    def _shifted(self, diff: Any, upper: bool) -> Any:
        """diff with each symbol written as lo + t (or hi - t), t a non-negative integer."""
        sp = _sympy()
        subs = {}
        for s in diff.free_symbols:
            info = self.symbols.get(s.name)
            if info is None:
                continue
            t = sp.Symbol(f"_t_{s.name}", integer=True, nonnegative=True)
            if upper:
                if info.max is None:
                    continue
                subs[s] = info.max - t
            else:
                subs[s] = info.min + t
        return sp.expand(diff.xreplace(subs)) if subs else sp.expand(diff)

    def statically_known(self, expr: Any) -> bool | None:
        """Decide a relational from the symbols' ranges alone, or None if it depends on them."""
        sp = _sympy()
        expr = self.simplify(expr)
        if expr is sp.true:
            return True
        if expr is sp.false:
            return False
        if not isinstance(expr, sp.core.relational.Relational):
            return None
        diff = expr.lhs - expr.rhs
        for upper in (False, True):
            d = self._shifted(diff, upper)
            verdict = _decide_sign(expr.rel_op, d)
            if verdict is not None:
                return verdict
        return None

    # -- guards --------------------------------------------------------------------------
    def guard(self, expr: Any, hint: bool, reason: str = "") -> bool:
        """Return `hint` for the boolean `expr`, recording a guard unless it is static."""
        sp = _sympy()
        known = self.statically_known(expr)
        if known is not None:
            return known
        fact = self.simplify(expr) if hint else _negate(self.simplify(expr))
        if fact is sp.true or fact in self._guard_keys:
            return hint
        loc = self.loc_hook() if self.loc_hook is not None else None
        self._guard_keys.add(fact)
        self.guards.append(Guard(fact, reason, loc))
        self._learn(fact)
        return hint

    def _learn(self, fact: Any) -> None:
        sp = _sympy()
        if not isinstance(fact, sp.Eq):
            return
        lhs, rhs = fact.lhs, fact.rhs
        if isinstance(lhs, sp.Symbol) and isinstance(rhs, sp.Symbol):
            # Keep the older symbol: it is what earlier shapes were written in.
            old, new = sorted((lhs, rhs), key=lambda s: int(s.name[1:]))
            self._replacements[new] = old
        elif isinstance(lhs, sp.Symbol) and rhs.is_Integer:
            self._replacements[lhs] = rhs
        elif isinstance(rhs, sp.Symbol) and lhs.is_Integer:
            self._replacements[rhs] = lhs

    def specialize(self, expr: Any, hint: int, reason: str = "specialized by int()") -> int:
        """Turn a symbolic int into its hint, guarding that it keeps that value."""
        sp = _sympy()
        self.guard(sp.Eq(expr, hint), True, reason)
        return hint

    def range_guards(self) -> list[Any]:
        """The symbols' range conditions, which every cached entry implicitly relies on."""
        sp = _sympy()
        out = []
        for info in self.symbols.values():
            out.append(sp.Ge(info.symbol, info.min))
            if info.max is not None:
                out.append(sp.Le(info.symbol, info.max))
        return out

    def all_guard_exprs(self) -> list[Any]:
        return self.range_guards() + [g.expr for g in self.guards]

    def evaluate(self, values: Mapping[str, int]) -> bool:
        """Evaluate every guard with sympy for the given symbol values (the slow oracle)."""
        sp = _sympy()
        subs = {self.symbols[k].symbol: v for k, v in values.items()}
        return all(e.xreplace(subs) is sp.true for e in self.all_guard_exprs())

    def failed_guards(self, values: Mapping[str, int]) -> list[Any]:
        sp = _sympy()
        subs = {self.symbols[k].symbol: v for k, v in values.items()}
        return [e for e in self.all_guard_exprs() if e.xreplace(subs) is not sp.true]

    def compile_guards(self) -> Callable[..., bool]:
        """A fast Python predicate over the symbol values (positional, in symbol order).

        Written as Python source so a cache lookup costs one call with integer arithmetic,
        not a sympy evaluation.
        """
        names = list(self.symbols)
        exprs = self.all_guard_exprs()
        body = " and ".join(f"({_pyexpr(e)})" for e in exprs) or "True"
        src = f"def _guards({', '.join(names)}):\n    return {body}\n"
        namespace: dict[str, Any] = {"_floor": math.floor, "_ceil": math.ceil}
        exec(compile(src, "<lazytorch guards>", "exec"), namespace)
        fn = namespace["_guards"]
        fn.source = src  # type: ignore[attr-defined]
        return fn


builtins_max = max
builtins_min = min


def _negate(expr: Any) -> Any:
    sp = _sympy()
    if isinstance(expr, sp.core.relational.Relational):
        return expr.negated
    return sp.Not(expr)


def _decide_sign(rel_op: str, d: Any) -> bool | None:
    if rel_op == ">=":
        return True if d.is_nonnegative else False if d.is_negative else None
    if rel_op == ">":
        return True if d.is_positive else False if d.is_nonpositive else None
    if rel_op == "<=":
        return True if d.is_nonpositive else False if d.is_positive else None
    if rel_op == "<":
        return True if d.is_negative else False if d.is_nonnegative else None
    if rel_op == "==":
        return True if d.is_zero else False if d.is_zero is False else None
    if rel_op == "!=":
        return False if d.is_zero else True if d.is_zero is False else None
    return None


def _pyexpr(e: Any) -> str:
    """Python source for a guard expression over integer symbols."""
    sp = _sympy()
    if isinstance(e, sp.And):
        return " and ".join(f"({_pyexpr(a)})" for a in e.args)
    if isinstance(e, sp.Or):
        return " or ".join(f"({_pyexpr(a)})" for a in e.args)
    if isinstance(e, sp.Not):
        return f"not ({_pyexpr(e.args[0])})"
    if isinstance(e, sp.core.relational.Relational):
        return f"{_pyexpr(e.lhs)} {e.rel_op} {_pyexpr(e.rhs)}"
    if e is sp.true:
        return "True"
    if e is sp.false:
        return "False"
    if isinstance(e, sp.Symbol):
        return e.name
    if e.is_Integer:
        return str(int(e))
    if e.is_Rational:
        return f"({int(e.p)}/{int(e.q)})"
    if e.is_Float:
        return repr(float(e))
    if isinstance(e, sp.Add):
        return "(" + " + ".join(_pyexpr(a) for a in e.args) + ")"
    if isinstance(e, sp.Mul):
        return "(" + " * ".join(_pyexpr(a) for a in e.args) + ")"
    if isinstance(e, sp.Pow):
        return f"({_pyexpr(e.base)} ** {_pyexpr(e.exp)})"
    if isinstance(e, sp.floor):
        return f"_floor({_pyexpr(e.args[0])})"
    if isinstance(e, sp.ceiling):
        return f"_ceil({_pyexpr(e.args[0])})"
    if isinstance(e, sp.Mod):
        return f"({_pyexpr(e.args[0])} % {_pyexpr(e.args[1])})"
    if isinstance(e, sp.Max):
        return "max(" + ", ".join(_pyexpr(a) for a in e.args) + ")"
    if isinstance(e, sp.Min):
        return "min(" + ", ".join(_pyexpr(a) for a in e.args) + ")"
    if isinstance(e, sp.Piecewise):
        out = None
        for val, cond in reversed(e.args):
            out = _pyexpr(val) if out is None else f"({_pyexpr(val)} if {_pyexpr(cond)} else {out})"
        return out or "None"
    raise NotImplementedError(f"cannot print guard expression {e!r} as Python")


# ---------------------------------------------------------------------------------------
# The symbolic number types.
# ---------------------------------------------------------------------------------------


def _split(x: Any) -> tuple[Any, Any, ShapeEnv | None]:
    """(expr, hint, env) of an operand, or (None, None, None) if it is not a number."""
    if isinstance(x, (SymInt, SymFloat, SymBool)):
        return x.expr, x.hint, x.env
    if isinstance(x, (int, float)):  # bool is an int
        return x, x, None
    return None, None, None


def _env_of(a: ShapeEnv | None, b: ShapeEnv | None) -> ShapeEnv:
    if a is not None and b is not None and a is not b:
        raise RuntimeError("cannot combine symbolic sizes from different shape environments")
    env = a if a is not None else b
    assert env is not None
    return env


def _int_result(expr: Any, hint: int, env: ShapeEnv) -> SymInt | int:
    expr = env.simplify(expr)
    if expr.is_Integer:
        return int(expr)
    return SymInt(expr, hint, env)


def _float_result(expr: Any, hint: float, env: ShapeEnv) -> SymFloat | float:
    expr = env.simplify(expr)
    if expr.is_Number:
        return float(expr)
    return SymFloat(expr, hint, env)


def _bool_result(expr: Any, hint: bool, env: ShapeEnv) -> SymBool | bool:
    sp = _sympy()
    known = env.statically_known(expr) if expr not in (sp.true, sp.false) else expr is sp.true
    if known is not None:
        return known
    return SymBool(env.simplify(expr), hint, env)


_RELATIONS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "==": ("Eq", operator.eq),
    "!=": ("Ne", operator.ne),
    "<": ("Lt", operator.lt),
    "<=": ("Le", operator.le),
    ">": ("Gt", operator.gt),
    ">=": ("Ge", operator.ge),
}


class _SymNumber:
    __slots__ = ("env", "expr", "hint")

    def __init__(self, expr: Any, hint: Any, env: ShapeEnv) -> None:
        self.expr = expr
        self.hint = hint
        self.env = env

    def __repr__(self) -> str:
        return str(self.expr)

    def __hash__(self) -> int:
        # Structural, so shapes holding the same expression hash alike. Note that == on a
        # symbolic value returns a SymBool (and guards when used as a bool), as in torch.
        return hash(self.expr)

    def _cmp(self, other: Any, op: str) -> Any:
        oe, oh, oenv = _split(other)
        if oe is None:
            return NotImplemented
        env = _env_of(self.env, oenv)
        sp = _sympy()
        rel = getattr(sp, _RELATIONS[op][0])(self.expr, oe)
        return _bool_result(rel, _RELATIONS[op][1](self.hint, oh), env)

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        return self._cmp(other, "==")

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        return self._cmp(other, "!=")

    def __lt__(self, other: Any) -> Any:
        return self._cmp(other, "<")

    def __le__(self, other: Any) -> Any:
        return self._cmp(other, "<=")

    def __gt__(self, other: Any) -> Any:
        return self._cmp(other, ">")

    def __ge__(self, other: Any) -> Any:
        return self._cmp(other, ">=")


def _arith(op: str, a: Any, b: Any) -> Any:
    """a <op> b where at least one side is symbolic; NotImplemented for foreign operands."""
    ae, ah, aenv = _split(a)
    be, bh, benv = _split(b)
    if ae is None or be is None:
        return NotImplemented
    env = _env_of(aenv, benv)
    sp = _sympy()
    is_float = isinstance(a, (float, SymFloat)) or isinstance(b, (float, SymFloat))
    if op == "+":
        expr, hint = ae + be, ah + bh
    elif op == "-":
        expr, hint = ae - be, ah - bh
    elif op == "*":
        expr, hint = ae * be, ah * bh
    elif op == "/":
        if bh == 0:
            raise ZeroDivisionError("division by zero")
        return _float_result(sp.Mul(ae, sp.Pow(be, -1)), ah / bh, env)
    elif op == "//":
        if bh == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        expr, hint = sp.floor(ae / be), ah // bh
    elif op == "%":
        if bh == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        expr, hint = sp.Mod(ae, be), ah % bh
    elif op == "**":
        expr, hint = sp.Pow(ae, be), ah**bh
        if isinstance(hint, float):
            is_float = True
    else:  # pragma: no cover - internal misuse
        raise AssertionError(op)
    if is_float:
        return _float_result(expr, float(hint), env)
    return _int_result(expr, int(hint), env)


class SymInt(_SymNumber):
    """A symbolic integer: behaves like an int, records guards when it must decide.

    ``int(s)`` (and ``operator.index``) specializes to the hint and guards that value.
    """

    __slots__ = ()

    def __add__(self, o: Any) -> Any:
        return _arith("+", self, o)

    def __radd__(self, o: Any) -> Any:
        return _arith("+", o, self)

    def __sub__(self, o: Any) -> Any:
        return _arith("-", self, o)

    def __rsub__(self, o: Any) -> Any:
        return _arith("-", o, self)

    def __mul__(self, o: Any) -> Any:
        return _arith("*", self, o)

    def __rmul__(self, o: Any) -> Any:
        return _arith("*", o, self)

    def __truediv__(self, o: Any) -> Any:
        return _arith("/", self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return _arith("/", o, self)

    def __floordiv__(self, o: Any) -> Any:
        return _arith("//", self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        return _arith("//", o, self)

    def __mod__(self, o: Any) -> Any:
        return _arith("%", self, o)

    def __rmod__(self, o: Any) -> Any:
        return _arith("%", o, self)

    def __pow__(self, o: Any) -> Any:
        return _arith("**", self, o)

    def __rpow__(self, o: Any) -> Any:
        return _arith("**", o, self)

    def __neg__(self) -> Any:
        return _int_result(-self.expr, -self.hint, self.env)

    def __pos__(self) -> SymInt:
        return self

    def __abs__(self) -> Any:
        return _int_result(_sympy().Abs(self.expr), abs(self.hint), self.env)

    def __int__(self) -> int:
        return self.env.specialize(self.expr, self.hint)

    __index__ = __int__

    def __float__(self) -> float:
        return float(int(self))

    def __bool__(self) -> bool:
        return bool(self != 0)

    def __round__(self, ndigits: int | None = None) -> Any:
        return self

    def __trunc__(self) -> Any:
        return self

    def __floor__(self) -> Any:
        return self

    def __ceil__(self) -> Any:
        return self

    @property
    def node(self) -> Any:
        """The sympy expression (torch spells it `node`)."""
        return self.expr


class SymFloat(_SymNumber):
    """A symbolic float; ``float(x)`` specializes and guards."""

    __slots__ = ()

    __add__ = SymInt.__add__
    __radd__ = SymInt.__radd__
    __sub__ = SymInt.__sub__
    __rsub__ = SymInt.__rsub__
    __mul__ = SymInt.__mul__
    __rmul__ = SymInt.__rmul__
    __truediv__ = SymInt.__truediv__
    __rtruediv__ = SymInt.__rtruediv__
    __pow__ = SymInt.__pow__
    __rpow__ = SymInt.__rpow__

    def __floordiv__(self, o: Any) -> Any:
        r = _arith("/", self, o)
        return r if r is NotImplemented else sym_float(_floor_int(r))

    def __neg__(self) -> Any:
        return _float_result(-self.expr, -self.hint, self.env)

    def __float__(self) -> float:
        sp = _sympy()
        self.env.guard(sp.Eq(self.expr, sp.Float(self.hint)), True, "specialized by float()")
        return float(self.hint)

    def __int__(self) -> int:
        return int(sym_int(self))

    def __bool__(self) -> bool:
        return bool(self != 0)


class SymBool:
    """A symbolic condition; ``bool(b)`` follows the hint and records a guard."""

    __slots__ = ("env", "expr", "hint")

    def __init__(self, expr: Any, hint: bool, env: ShapeEnv) -> None:
        self.expr = expr
        self.hint = hint
        self.env = env

    def __bool__(self) -> bool:
        return self.env.guard(self.expr, self.hint)

    def __repr__(self) -> str:
        return str(self.expr)

    def __hash__(self) -> int:
        return hash(self.expr)

    def _logic(self, other: Any, op: str) -> Any:
        if isinstance(other, bool):
            oe, oh, oenv = other, other, None
        elif isinstance(other, SymBool):
            oe, oh, oenv = other.expr, other.hint, other.env
        else:
            return NotImplemented
        env = _env_of(self.env, oenv)
        sp = _sympy()
        if op == "&":
            return _bool_result(sp.And(self.expr, oe), self.hint and oh, env)
        return _bool_result(sp.Or(self.expr, oe), self.hint or oh, env)

    def __and__(self, o: Any) -> Any:
        return self._logic(o, "&")

    __rand__ = __and__

    def __or__(self, o: Any) -> Any:
        return self._logic(o, "|")

    __ror__ = __or__

    def __invert__(self) -> Any:
        return sym_not(self)


# ---------------------------------------------------------------------------------------
# Helpers that build expressions instead of branching (so they add no guards).
# ---------------------------------------------------------------------------------------


def _floor_int(x: Any) -> Any:
    if isinstance(x, SymFloat):
        return _int_result(_sympy().floor(x.expr), math.floor(x.hint), x.env)
    return math.floor(x)


def sym_int(x: Any) -> Any:
    """int(x) that stays symbolic: truncates a SymFloat toward zero without a guard."""
    if isinstance(x, SymInt):
        return x
    if isinstance(x, SymFloat):
        sp = _sympy()
        expr = sp.Piecewise((sp.floor(x.expr), x.expr >= 0), (sp.ceiling(x.expr), True))
        return _int_result(expr, math.trunc(x.hint), x.env)
    return int(x)


def sym_float(x: Any) -> Any:
    """float(x) that stays symbolic for a SymInt."""
    if isinstance(x, SymFloat):
        return x
    if isinstance(x, SymInt):
        return SymFloat(x.expr * _sympy().Float(1.0), float(x.hint), x.env)
    return float(x)


def sym_not(x: Any) -> Any:
    if isinstance(x, SymBool):
        return _bool_result(_negate(x.expr), not x.hint, x.env)
    return not x


def _minmax(kind: str, a: Any, b: Any) -> Any:
    if not (is_symbolic(a) or is_symbolic(b)):
        return max(a, b) if kind == "max" else min(a, b)
    ae, ah, aenv = _split(a)
    be, bh, benv = _split(b)
    if ae is None or be is None:
        raise TypeError(f"sym_{kind}() expects numbers, got {type(a).__name__}, {type(b).__name__}")
    env = _env_of(aenv, benv)
    sp = _sympy()
    expr = sp.Max(ae, be) if kind == "max" else sp.Min(ae, be)
    hint = max(ah, bh) if kind == "max" else min(ah, bh)
    if isinstance(hint, float):
        return _float_result(expr, hint, env)
    return _int_result(expr, hint, env)


def sym_max(a: Any, b: Any) -> Any:
    """max(a, b) as an expression (no guard on which side is larger)."""
    return _minmax("max", a, b)


def sym_min(a: Any, b: Any) -> Any:
    """min(a, b) as an expression (no guard on which side is smaller)."""
    return _minmax("min", a, b)


def sym_sum(values: Iterable[Any]) -> Any:
    """sum(values) built as one sympy Add (faster than repeated + on symbolic values)."""
    vals = list(values)
    if not any(is_symbolic(v) for v in vals):
        return sum(vals)
    sp = _sympy()
    env = None
    exprs, hint = [], 0
    for v in vals:
        e, h, venv = _split(v)
        if e is None:
            raise TypeError(f"sym_sum() expects numbers, got {type(v).__name__}")
        env = venv if env is None else _env_of(env, venv)
        exprs.append(e)
        hint += h
    assert env is not None
    if isinstance(hint, float):
        return _float_result(sp.Add(*exprs), hint, env)
    return _int_result(sp.Add(*exprs), hint, env)


def sym_ite(cond: Any, then: Any, otherwise: Any) -> Any:
    """`then if cond else otherwise`, kept as an expression when `cond` is symbolic."""
    if not isinstance(cond, SymBool):
        return then if cond else otherwise
    te, th, tenv = _split(then)
    oe, oh, oenv = _split(otherwise)
    if te is None or oe is None:
        raise TypeError("sym_ite() branches must be numbers")
    env = _env_of(_env_of(cond.env, tenv), oenv)
    sp = _sympy()
    expr = sp.Piecewise((te, cond.expr), (oe, True))
    hint = th if cond.hint else oh
    if isinstance(hint, float):
        return _float_result(expr, hint, env)
    return _int_result(expr, hint, env)


def hint_int(x: Any) -> int:
    """The concrete value of a size without specializing it (for sizing and printing)."""
    return x.hint if isinstance(x, SymInt) else x
