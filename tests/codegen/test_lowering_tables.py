"""Every primitive against every code generator: lowered, or listed as falling back.

An elementwise primitive is lowered by an entry of its backend's table
(`lazytorch.codegen.cpp_ops.LOWERINGS`, `lazytorch.codegen.triton_ops.LOWERINGS`); every
other primitive becomes something else in the schedule (index arithmetic, a reduction, a
store, an extern call), listed in `STRUCTURAL` with where that happens. A primitive a
backend does not lower at all is listed in `FALLS_BACK` with the reason. Completeness is
checked three ways: the tables name only real elementwise primitives, every primitive is
either lowered or listed (never both), and one sample program per primitive generates
source on every backend (or raises that backend's "not supported" error if it falls back).
A primitive added to `PRIMITIVES` without its lowerings fails here, not at run time.

The Triton helpers (`codegen/triton_helpers.py`) are real ``@triton.jit`` functions, read
as text by the generator: their dependencies must resolve, and where Triton is installed
the module imports and defines the same functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazytorch as lt
from lazytorch.codegen import cpp, cpp_ops, triton_ops
from lazytorch.codegen import triton as triton_codegen
from lazytorch.ir.primitives import PRIMITIVES, Primitive
from lazytorch.ops._core import wrap
from lazytorch.scheduler import schedule

F = lt.nn.functional
BACKENDS = ("cpp", "triton")
TABLES = {"cpp": cpp_ops.LOWERINGS, "triton": triton_ops.LOWERINGS}

# Non-elementwise primitives: what the scheduler makes of them, which each writer lowers.
STRUCTURAL = {
    "buffer": "a program input: a buffer argument",
    "scalar": "a program input: a scalar slot (ia/fa)",
    "const": "a kernel value 'const' (a literal)",
    "iota": "index arithmetic (a kernel value 'index')",
    "rand": "a kernel value 'rand' (Philox of the element's linear index)",
    "reshape": "index arithmetic (scheduler.lower.move_index)",
    "permute": "index arithmetic (scheduler.lower.move_index)",
    "expand": "index arithmetic (scheduler.lower.move_index)",
    "slice": "index arithmetic (scheduler.lower.move_index)",
    "flip": "index arithmetic (scheduler.lower.move_index)",
    "pad": "a guarded read: 'inrange' and 'select' kernel values",
    "cat": "guarded reads ('select'), or a copy per piece for many inputs",
    "gather": "a data-dependent load behind a bounds 'check'",
    "scatter": "a scatter kernel's store at a checked index (mode 'set' or 'add')",
    "reduce_sum": "a Reduce of kind 'sum'",
    "reduce_prod": "a Reduce of kind 'prod'",
    "reduce_max": "a Reduce of kind 'max'",
    "reduce_min": "a Reduce of kind 'min'",
    "argmax": "a Reduce of kind 'argmax'",
    "argmin": "a Reduce of kind 'argmin'",
    "cumsum": "a scan kernel (Reduce of kind 'cumsum')",
    "matmul": "an extern matmul (BLAS or loops in C++, a tiled tl.dot kernel in Triton)",
    "argsort": "an extern argsort (lt::argsort in C++, a tl.sort kernel in Triton)",
    "conv2d": "an extern conv (lt::conv2d, a direct kernel, in C++; an implicit GEMM in Triton)",
    "conv2d_wgrad": "an extern conv_wgrad (lt::conv2d_wgrad in C++; an implicit GEMM in Triton)",
}
# Collectives never reach a code generator: the runtime runs them before any program that
# reads them (runtime/collectives.py), and the scheduler refuses a program holding one.
CUT_BY_RUNTIME = {
    "all_reduce": (0, 1, 1, "sum"),
    "broadcast": (0, 1, 1, 0),
    "all_gather": (0, 1, 1),
    "gather_to_rank": (0, 1, 1, 0),
    "reduce_scatter": (0, 1, 1, "sum"),
    "scatter_from_rank": (0, 1, 1, 0),
}
# backend -> primitive -> why the backend does not lower it (its programs run elsewhere)
FALLS_BACK: dict[str, dict[str, str]] = {"cpp": {}, "triton": {}}


def _r(*shape: int, dtype: Any = np.float32, seed: int = 0) -> lt.Tensor:
    return lt.tensor(np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(dtype))


def _i(*shape: int) -> lt.Tensor:
    return lt.tensor(np.random.default_rng(1).integers(0, 4, size=shape))


def _b(*shape: int) -> lt.Tensor:
    return lt.tensor(np.random.default_rng(2).random(shape) < 0.5)


# One sample per primitive: a function whose program records it.
UNARY_FLOAT = "exp log sqrt sin cos tanh atan log1p expm1 sigmoid erf".split()
SAMPLES: dict[str, Callable[[], Any]] = {
    **{name: (lambda n=name: getattr(_r(4, 5), n)()) for name in UNARY_FLOAT},
    "neg": lambda: -_i(4, 5),
    "abs": lambda: _r(4, 5).abs(),
    "floor": lambda: _r(4, 5).floor(),
    "ceil": lambda: _r(4, 5).ceil(),
    "round": lambda: _r(4, 5).round(),
    "bitwise_not": lambda: ~_b(4, 5),
    "add": lambda: _r(4, 5) + _r(4, 5, seed=1),
    "sub": lambda: _i(4, 5) - _i(4, 5),
    "mul": lambda: _r(4, 5) * _r(4, 5, seed=1),
    "div": lambda: _r(4, 5) / _r(4, 5, seed=1),
    "floordiv": lambda: _i(4, 5) // _i(4, 5).abs().clamp(min=1),
    "remainder": lambda: _r(4, 5) % _r(4, 5, seed=1),
    "fmod": lambda: lt.fmod(_i(4, 5), 3),
    "pow": lambda: _r(4, 5) ** _r(4, 5, seed=1),
    "maximum": lambda: lt.maximum(_r(4, 5), _r(4, 5, seed=1)),
    "minimum": lambda: lt.minimum(_i(4, 5), _i(4, 5)),
    "atan2": lambda: lt.atan2(_r(4, 5), _r(4, 5, seed=1)),
    "eq": lambda: _r(4, 5) == _r(4, 5, seed=1),
    "ne": lambda: _i(4, 5) != 2,
    "lt": lambda: _r(4, 5) < 1.0,
    "le": lambda: _r(4, 5) <= 1.0,
    "gt": lambda: _r(4, 5) > 1.0,
    "ge": lambda: _r(4, 5) >= 1.0,
    "bitwise_and": lambda: _i(4, 5) & _i(4, 5),
    "bitwise_or": lambda: _b(4, 5) | _b(4, 5),
    "bitwise_xor": lambda: _i(4, 5) ^ 3,
    "where": lambda: lt.where(_b(4, 5), _r(4, 5), _r(4, 5, seed=1)),
    "cast": lambda: _r(4, 5).half(),
    "bitcast": lambda: _r(4, 5).half().view(lt.int16),
    "buffer": lambda: _r(4, 5) + 1,
    "scalar": lambda: _r(4, 5) + 1.5,
    "const": lambda: F.relu(_r(4, 5)),  # a 0.0 kept as a literal
    "iota": lambda: lt.arange(5) * 2,
    "rand": lambda: lt.rand(4, 5),
    "reshape": lambda: _r(4, 5).reshape(5, 4) * 2,
    "permute": lambda: _r(4, 5).t() * 2,
    "expand": lambda: _r(4, 1).expand(4, 5) * 2,
    "slice": lambda: _r(4, 5)[1:3] * 2,
    "flip": lambda: _r(4, 5).flip(0) * 2,
    "pad": lambda: F.pad(_r(4, 5), (1, 2)) * 2,
    "cat": lambda: lt.cat([_r(2, 5), _r(3, 5, seed=1)]) * 2,
    "gather": lambda: _r(6, 5)[_i(3)] * 2,
    "scatter": lambda: lt.zeros(4, 3).scatter_add(0, _i(2, 3), _r(2, 3)),
    "reduce_sum": lambda: _r(4, 5).sum(1),
    "reduce_prod": lambda: _r(4, 5).prod(0),
    "reduce_max": lambda: _r(4, 5).amax(1),
    "reduce_min": lambda: _r(4, 5).amin(1),
    "argmax": lambda: _r(4, 5).argmax(1),
    "argmin": lambda: _r(4, 5).argmin(1),
    "cumsum": lambda: _r(4, 5).cumsum(1),
    "matmul": lambda: _r(4, 5) @ _r(5, 3, seed=1),
    "argsort": lambda: _r(4, 5).argsort(1),
    "conv2d": lambda: F.conv2d(_r(2, 3, 6, 5), _r(4, 3, 3, 2, seed=1), stride=(2, 1), padding=1),
    "conv2d_wgrad": lambda: wrap(
        PRIMITIVES["conv2d_wgrad"].bind(
            (_r(2, 3, 6, 5)._node, _r(2, 4, 3, 6, seed=1)._node),
            ((2, 1), (1, 1, 1, 1), (1, 1), (3, 2)),
        )
    ),
    # bound directly (not through lazytorch.distributed, which would run them)
    **{
        name: (lambda n=name, a=attrs: wrap(PRIMITIVES[n].bind((_r(1, 4, 5)._node,), a)) * 2)
        for name, attrs in CUT_BY_RUNTIME.items()
    },
}


def _program(name: str) -> Any:
    lt.manual_seed(0)
    out = SAMPLES[name]()
    return lt.debug.program(*(out if isinstance(out, tuple) else (out,)))


def _generate(backend: str, prog: Any) -> str:
    if backend == "cpp":
        return cpp.generate(schedule(prog))
    return triton_codegen.generate(schedule(prog, fuse_epilogues=True))


def test_tables_name_only_elementwise_primitives():
    for backend, table in TABLES.items():
        for name in table:
            assert name in PRIMITIVES, f"{backend} lowers {name!r}, which is no primitive"
            assert PRIMITIVES[name].category == "elementwise", (backend, name)
    assert set(STRUCTURAL) <= set(PRIMITIVES), set(STRUCTURAL) - set(PRIMITIVES)
    for name in STRUCTURAL:
        assert PRIMITIVES[name].category != "elementwise", name


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_primitive_is_lowered_or_falls_back(backend):
    table, fallback = TABLES[backend], FALLS_BACK[backend]
    for name, prim in PRIMITIVES.items():
        lowered = name in table if prim.category == "elementwise" else name in STRUCTURAL
        lowered = lowered or (prim.category == "collective" and name in CUT_BY_RUNTIME)
        assert lowered or name in fallback, (
            f"{backend}: primitive {name!r} has no lowering; add one to its table "
            f"(codegen/{backend}_ops.py) or list it in FALLS_BACK[{backend!r}] with the reason"
        )
        assert not (name in table and name in fallback), f"{backend}: {name!r} is both"
        if name in fallback:
            assert fallback[name].strip(), f"{backend}: give the reason {name!r} falls back"


def test_every_primitive_has_a_sample():
    assert set(SAMPLES) == set(PRIMITIVES), set(PRIMITIVES) ^ set(SAMPLES)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_sample_program_generates(backend, name):
    prog = _program(name)
    recorded = {i.op.name for i in prog.instrs} | {p.kind for p in prog.params}
    assert name in recorded, f"the sample of {name!r} records {sorted(recorded)}"
    if name in CUT_BY_RUNTIME:
        with pytest.raises(NotImplementedError, match=f"{name} cannot be compiled into a program"):
            _generate(backend, prog)
    elif name in FALLS_BACK[backend]:
        missing = cpp_ops.LoweringMissing if backend == "cpp" else triton_ops.TritonLoweringMissing
        with pytest.raises(missing):
            _generate(backend, prog)
    else:
        entry = " lt_entry(" if backend == "cpp" else "def run("
        assert entry in _generate(backend, prog)


def test_missing_lowering_is_an_error_naming_op_and_backend(monkeypatch):
    monkeypatch.delitem(triton_ops.LOWERINGS, "atan2")
    with pytest.raises(NotImplementedError, match="triton backend: primitive 'atan2'"):
        _generate("triton", _program("atan2"))
    monkeypatch.delitem(cpp_ops.LOWERINGS, "atan2")
    with pytest.raises(NotImplementedError, match=r"cpp backend: no lowering rule.*'atan2'"):
        _generate("cpp", _program("atan2"))


def test_primitive_facts_are_validated():
    with pytest.raises(ValueError, match="cost must be an int"):
        Primitive("x", "elementwise", nin=1, cost=-1)
    with pytest.raises(ValueError, match="compare must be one of"):
        Primitive("x", "elementwise", nin=1, compare="<")
    with pytest.raises(ValueError, match="compare must be one of"):
        Primitive("x", "elementwise", nin=2, compare="=<")
    with pytest.raises(ValueError, match="names its reduce_kind"):
        Primitive("x", "reduce", nin=1)
    with pytest.raises(ValueError, match="names its reduce_kind"):
        Primitive("x", "elementwise", nin=1, reduce_kind="sum")
    with pytest.raises(ValueError, match="names its reduce_kind"):
        Primitive("x", "reduce", nin=1, reduce_kind="mean")


def test_compare_symbols_are_the_ones_both_writers_print():
    from lazytorch.ir import dtypes as dt

    for name, prim in PRIMITIVES.items():
        if prim.compare is None:
            continue
        c = cpp_ops.lower(name, ["a", "b"], [dt.float32] * 2, dt.bool_, {}, 0)
        t = triton_ops.lower(name, ["a", "b"], [dt.float32] * 2, dt.bool_, set().add)
        assert c == f"(a {prim.compare} b)" and t == f"a {prim.compare} b", name
        # the symbol means what the reference computes
        x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
        assert (prim.ref(x, y) == eval(f"x {prim.compare} y")).all(), name


def test_triton_helpers_resolve():
    table = triton_ops.helpers()
    assert table, "no helpers read from triton_helpers.py"
    for name, (source, deps) in table.items():
        assert source.startswith("@triton.jit\ndef " + name + "("), name
        assert set(deps) <= set(table), (name, deps)
    # every helper a lowering or kernel writer may name exists
    used = {h for h in _helper_names_in_codegen() if h in table or h.startswith("_lt_")}
    assert used <= set(table), used - set(table)


def _helper_names_in_codegen() -> set[str]:
    import re
    from pathlib import Path

    names: set[str] = set()
    for mod in (triton_codegen, triton_ops):
        text = Path(mod.__file__).read_text()
        names |= set(re.findall(r"\b_lt_[a-z0-9_]+\b", text))
    # f-string templates (f"_lt_{name}", f"_lt_{kind}_combine") name families, not helpers
    return {n for n in names if not n.endswith("_")}


def test_triton_helpers_module_is_real_triton():
    pytest.importorskip("triton")
    import triton

    from lazytorch.codegen import triton_helpers

    table = triton_ops.helpers()
    defined = {n for n in vars(triton_helpers) if n.startswith("_lt_")}
    assert defined == set(table)
    for name in defined:
        # a JITFunction, or an InterpretedFunction under TRITON_INTERPRET=1: both wrap it
        fn = getattr(triton_helpers, name)
        assert isinstance(fn, triton.runtime.jit.JITFunction) or type(fn).__name__ == (
            "InterpretedFunction"
        ), name
        assert fn.fn.__name__ == name


def test_math_header_has_no_dead_functions():
    """Every public ``lt::`` function of lazytorch_math.h is one the C++ lowering emits."""
    import re
    from pathlib import Path

    include = Path(cpp_ops.__file__).with_name("include")
    public, in_detail = set(), False
    for line in (include / "lazytorch_math.h").read_text().splitlines():
        if line.startswith("namespace detail {"):
            in_detail = True
        elif line.startswith("}  // namespace detail"):
            in_detail = False
        elif not in_detail and (m := re.match(r"LT_MATH_INLINE \w+ (\w+)\(", line)):
            public.add(m.group(1))
    emitting = Path(cpp_ops.__file__).read_text() + Path(cpp.__file__).read_text()
    emitting += "".join(h.read_text() for h in include.glob("*.h") if h.name != "lazytorch_math.h")
    assert public, "no public functions found in lazytorch_math.h"
    dead = {f for f in public if not re.search(rf"\blt::{f}\b", emitting)}
    assert not dead, f"lazytorch_math.h defines {sorted(dead)}, which nothing emits"
