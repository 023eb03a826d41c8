"""The backend matrix: which tests run once per backend, and which of their cases run.

A test is *in the matrix* when it compares against torch through ``tests/helpers.py`` (it
calls ``check``/``check_grad`` or reads ``helpers.BACKENDS``, directly or through a function
or table of its module: found by reading the module's source) or when it asks for the
``backend`` fixture by name (an argument, or ``usefixtures("backend")``). Such a test is
collected once per backend, the backend last in its id::

    tests/ops/test_elementwise.py::test_unary_function[exp-float32-interpreter]
    tests/ops/test_elementwise.py::test_unary_function[exp-float32-cpp]

so ``pytest tests/ops -k "cpp and unary"`` runs the cpp cases of the unary ops. Each item runs
``check()`` on its one backend (``helpers.BACKENDS == [backend]``). A test outside the matrix
is collected once, as before.

Which backends: those of the test's ``@pytest.mark.backends(...)`` marker (function, module
or class level), all of them; without one, ``interpreter`` and ``cpp``, cpp per
``LAZYTORCH_TEST_CPP``:

* ``all``    every case also on cpp
* ``sample`` (default) a fixed quarter of the cases, chosen by a hash of the case's id
* ``none``   interpreter only

A cpp item outside the sample is *deselected* at collection (the summary counts it under
"deselected", not as a skip). The hash is of ``tests/<file>::<test>[<params>]``: the id
without the layer directory and without the backend, which is the id the case had before the
tests moved into layer directories, so the sample did not change with that move and does not
change when a file moves between layers.

Two guards keep the matrix honest: ``check()`` in a test outside the matrix raises (the source
reading missed a way the test reaches it: mark the test ``@pytest.mark.backends(...)`` or ask
for ``backend``), and a test put in the matrix for calling ``check()`` fails if it compared
nothing (it was multiplied for nothing).
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import zlib
from pathlib import Path

import pytest

import helpers

DEFAULT = ("interpreter", "cpp")
SAMPLED = "cpp"  # the default backend whose cases are sampled
CPP_SHARE = os.environ.get("LAZYTORCH_TEST_CPP", "sample").strip().lower()
if CPP_SHARE not in ("all", "sample", "none"):
    raise ValueError(f"LAZYTORCH_TEST_CPP must be all, sample or none, got {CPP_SHARE!r}")

# helpers' names that make a test a matrix test; calls to the first two are counted
_CHECKS = {"check", "check_grad"}
_SEEDS = _CHECKS | {"BACKENDS"}
_MATRIX = "<matrix>"  # stands for a seed in a module's reference graph
_CALLS = "<calls check>"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backends(*names): run this test's backend matrix on exactly these backends, every "
        "case (tests/backend_matrix.py)",
    )


def _refs(node: ast.AST, seeds: dict[str, str]) -> set[str]:
    """The module-level names `node` may reach: names read, argument names, seeds."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
            if sub.id in seeds:
                out.add(_MATRIX)
        elif isinstance(sub, ast.arg):
            out.add(sub.arg)
        elif (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "helpers"
            and sub.attr in _SEEDS
        ):
            out.add(_MATRIX)
            if sub.attr in _CHECKS:
                out.add(_CALLS)
        if isinstance(sub, ast.Name) and sub.id in seeds and seeds[sub.id] in _CHECKS:
            out.add(_CALLS)
    return out


@functools.cache
def _module_matrix(path: Path) -> dict[str, str]:
    """Module-level name -> "calls" (reaches check/check_grad) or "reads" (only BACKENDS),
    for the names of the test module at `path` that reach helpers' matrix."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    seeds: dict[str, str] = {}  # local name -> helpers' name
    for n in ast.walk(tree):  # imports inside functions too
        if isinstance(n, ast.ImportFrom) and n.module == "helpers":
            for a in n.names:
                local = a.asname or a.name
                if a.name in _SEEDS and local not in defined:  # a local def shadows it
                    seeds[local] = a.name
    refs: dict[str, set[str]] = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            refs.setdefault(n.name, set()).update(_refs(n, seeds))
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            value = _refs(n.value, seeds) if n.value is not None else set()
            for t in targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        refs.setdefault(name.id, set()).update(value)
    found: dict[str, str] = {}
    changed = True
    while changed:  # to a fixed point: a name reaches what the names it reads reach
        changed = False
        for name, rs in refs.items():
            calls = _CALLS in rs or any(found.get(r) == "calls" for r in rs)
            kind = "calls" if calls else "reads" if _MATRIX in rs or rs & found.keys() else None
            if kind and found.get(name) != kind and found.get(name) != "calls":
                found[name] = kind
                changed = True
    return found


def _asks_for_backend(metafunc: pytest.Metafunc) -> bool:
    if "backend" in inspect.signature(metafunc.function).parameters:
        return True
    return any("backend" in m.args for m in metafunc.definition.iter_markers("usefixtures"))


def _parametrizes_backend(markers) -> bool:
    """The test parametrizes `backend` itself (its ids already name the backend)."""
    for m in markers:
        names = m.args[0]
        names = [s.strip() for s in names.split(",")] if isinstance(names, str) else names
        if "backend" in names:
            return True
    return False


_OUTSIDE = "outside"  # _reach of a test outside the matrix (or with its own backend params)


@pytest.hookimpl(trylast=True)  # after the test's own parametrize marks: the backend goes last
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if _parametrizes_backend(metafunc.definition.iter_markers("parametrize")):
        return
    reach = _module_matrix(metafunc.definition.path).get(metafunc.function.__name__)
    if reach is None and not _asks_for_backend(metafunc):
        return
    marker = metafunc.definition.get_closest_marker("backends")
    metafunc.parametrize("backend", list(marker.args if marker else DEFAULT), indirect=True)


def _reach(item: pytest.Item) -> str | None:
    """_OUTSIDE, or how a matrix test reaches the matrix: "calls" (check/check_grad), "reads"
    (BACKENDS only) or None (it asked for `backend`)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "backend" not in callspec.params:
        return _OUTSIDE
    if _parametrizes_backend(item.iter_markers("parametrize")):
        return _OUTSIDE
    return _module_matrix(item.path).get(item.originalname)


def sample_key(item: pytest.Item) -> str:
    """The case's id without its layer directory and its backend (see the module doc)."""
    path, rest = item.nodeid.split("::", 1)
    parts = Path(path).parts
    if len(parts) == 3:  # tests/<layer>/<file>
        path = f"{parts[0]}/{parts[2]}"
    backend = item.callspec.params["backend"]
    if rest.endswith(f"[{backend}]"):
        rest = rest[: -len(f"[{backend}]")]
    else:
        rest = rest[: -len(f"-{backend}]")] + "]"
    return f"{path}::{rest}"


def _in_sample(item: pytest.Item) -> bool:
    if item.get_closest_marker("backends") or item.callspec.params["backend"] != SAMPLED:
        return True
    if CPP_SHARE == "all":
        return True
    return CPP_SHARE == "sample" and zlib.crc32(sample_key(item).encode()) % 4 == 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        (keep if _reach(item) == _OUTSIDE or _in_sample(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest) -> str | None:
    """The backend this case of the matrix runs on (``check()`` compares on it alone); None
    for a test outside the matrix, where ``check()`` refuses to run."""
    name = getattr(request, "param", None)
    helpers.BACKENDS[:] = [name] if name else []
    return name


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # before the fixtures: a test with its own `backend` parameter does not run the fixture
    helpers.BACKENDS.clear()
    helpers.RUNS.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    result = yield
    if _reach(item) == "calls" and not helpers.RUNS:
        raise AssertionError(
            "this test is in the backend matrix because it calls check()/check_grad(), but it "
            "compared nothing: tests/backend_matrix.py multiplied it for nothing"
        )
    return result
