"""Which of our modules import which: the layering, checked by parsing the source.

The target (issue 20) is one direction of dependence, bottom first::

    _settings -> ir -> (support) -> scheduler -> codegen -> runtime -> tensor -> ops/_core
      -> autograd -> ops/* -> nn/optim -> the facade and its siblings -> cli

This test is a **ratchet, not a description of a finished state**: it asserts that nothing
gets worse than today and that every listed exception still exists, so the lists below can
only shrink. Each check fails in both directions:

* `MODULE_CIRCLES` / `LAYER_CIRCLES`: no import circle at module level other than those
  listed (a new one fails; a listed one that is gone fails too, so remove it from the list).
* `UPWARD`: no import that runs back up the layers, at module level or inside a function,
  other than those listed with a reason (same two-way rule).
* `FUNCTION_LEVEL_OWN_IMPORTS`: the number of imports of our own modules made inside
  functions must not grow. When you remove some, lower the constant to the new count: it
  must only go down (target <= 60).
* Every function-level import of our own modules says why it is not at module level, in a
  ``# lazy: <reason> (detail)`` comment on its line or on the comment line above it, the
  reason one of `LAZY_REASONS` (modules in `UNMARKED` excepted, two-way as above). Today's
  40, by reason:

  - import time, 39: ``import lazytorch`` loads none of cuda's memory runtime and Triton,
    the backend registry, the native loader, the legacy tensor types, the IR verifier (8);
    ``lazytorch --help`` imports every cli module (11); a run served from the disk cache
    loads neither the scheduler nor the code generators and compiler (10) nor the
    empty-value splitter (2); the executor loads on the first materialization (2),
    ir.serialize for dumps only (2); serialization's writers and hub load nn (3); the
    tensor formatter loads on the first repr (1);
  - optional dependency, 1: the native extension lazytorch._C.

How imports are read (`ast`, nothing is imported): ``import a.b`` and ``from a import b``
depend on the module named (``a.b`` when it is a module, else the package ``a``), not on
the parent packages Python also initializes (so a circle through a package's
``__init__`` would show only when importing: `lazytorch.ops`'s imports none of its modules
for that reason). Imports under ``if TYPE_CHECKING:`` are not
dependencies. An import inside a ``def`` or ``lambda`` is function-level; any other is
module-level. `scheduler/` and `codegen/` are read as `lazytorch.scheduler` and
`lazytorch.codegen`, as they install.
"""

from __future__ import annotations

import ast
import collections
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "lazytorch": "lazytorch",
    "scheduler": "lazytorch.scheduler",
    "codegen": "lazytorch.codegen",
}

# Compiled extension modules: no Python source, and they import nothing of ours.
EXTENSIONS = {"lazytorch._C"}

# Bottom first; a module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "lazytorch._settings",
            "lazytorch._version",
            "lazytorch._as_torch",
            "lazytorch._public",
            "lazytorch.distributed._env",  # reads os.environ, imports nothing of ours
        ),
    ),
    ("ir", ("lazytorch.ir",)),
    (
        "support",
        (
            "lazytorch._config",
            "lazytorch._dtype_info",
            "lazytorch._errors",
            "lazytorch._format",
            "lazytorch._threads",  # os and threadpoolctl only
            "lazytorch.metrics",
        ),
    ),
    ("scheduler", ("lazytorch.scheduler",)),
    ("codegen", ("lazytorch.codegen",)),
    ("runtime", ("lazytorch.runtime", "lazytorch._native", "lazytorch._devices")),
    ("tensor", ("lazytorch.tensor",)),
    ("ops._core", ("lazytorch.ops._core",)),
    ("autograd", ("lazytorch.autograd",)),
    ("ops", ("lazytorch.ops", "lazytorch.linalg", "lazytorch.func")),
    (
        "nn/optim",
        (
            "lazytorch.nn",
            "lazytorch.optim",
            "lazytorch.distributions",
            "lazytorch.amp",
            "lazytorch.utils",
            "lazytorch.distributed",
        ),
    ),
    # The facade and the user-facing modules beside it (debug, jit, cuda, serialization,
    # _compile, ...): everything not named elsewhere.
    # torch.autograd.functional and torch.autograd.profiler live under autograd by name, but
    # are tools over the whole library (ops, the runtime), loaded at first use.
    (
        "api",
        (
            "lazytorch",
            "lazytorch.autograd.functional",
            "lazytorch.autograd.profiler",
            "lazytorch.autograd.profiler_util",
        ),
    ),
    ("cli", ("lazytorch.cli", "lazytorch.__main__", "lazytorch.distributed.run_rank")),
]

# Strongly connected components of the module-level import graph, each with its reason.
MODULE_CIRCLES: dict[frozenset[str], str] = {}

# Circles between layers (module-level imports), each with its reason.
LAYER_CIRCLES: dict[frozenset[str], str] = {}

# Imports running back up the layers: (importer, imported) -> reason.
UPWARD: dict[tuple[str, str], str] = {}

# Imports of our own modules made inside functions (245 before the first untangling steps).
# Only ever lower this (target <= 60).
FUNCTION_LEVEL_OWN_IMPORTS = 40

# Why an import may sit inside a function: the comment ``# lazy: <reason> (detail)`` on its
# line or on a comment line right above it names one of these.
LAZY_REASONS = ("import time", "optional dependency")
# Modules whose function-level imports are not marked yet, each with why; two-way like the
# lists above (a module left here with every import marked, or none left, fails).
UNMARKED: dict[str, str] = {}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("").parts
    parts = [*PACKAGES[rel[0]].split("."), *rel[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for top in PACKAGES for p in sorted((ROOT / top).rglob("*.py"))}


def _targets(mods: dict[str, Path], cur: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """Our modules an import statement depends on (see the module docstring)."""

    def ours(name: str) -> str:
        while name and name not in mods and name not in EXTENSIONS:
            name = name.rpartition(".")[0]
        return name

    if isinstance(node, ast.Import):
        found = {ours(a.name) for a in node.names}
    else:
        if node.level:
            base = cur.split(".")
            if not mods[cur].name == "__init__.py":
                base.pop()
            base = base[: len(base) - (node.level - 1)]
            name = ".".join([*base, *([node.module] if node.module else [])])
        else:
            name = node.module or ""
        found = {
            f"{name}.{a.name}" if f"{name}.{a.name}" in {*mods, *EXTENSIONS} else ours(name)
            for a in node.names
        }
    return found - {"", cur}


@functools.cache
def _imports() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """(module-level edges, function-level imports as (module, line, target))."""
    mods = _modules()
    edges: dict[str, set[str]] = collections.defaultdict(set)
    in_functions: list[tuple[str, int, str]] = []
    for m, path in mods.items():

        def visit(node: ast.AST, in_function: bool, m: str = m) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for s in child.orelse:
                        visit(ast.Module(body=[s], type_ignores=[]), in_function)
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    for t in sorted(_targets(mods, m, child)):
                        if in_function:
                            in_functions.append((m, child.lineno, t))
                        else:
                            edges[m].add(t)
                else:
                    inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    visit(child, in_function or inner)

        visit(ast.parse(path.read_text(), str(path)), False)
    return edges, in_functions


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _layer(module: str) -> int:
    if module in EXTENSIONS:
        return 0
    best, rank = -1, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank >= 0, f"{module} is in no layer"
    return rank


def test_the_parser_sees_imports() -> None:
    # A parser that found nothing would pass every check below.
    edges, in_functions = _imports()
    assert "lazytorch.ops._core" in edges["lazytorch.ops.elementwise"]
    assert "lazytorch.ir.node" in edges["lazytorch.runtime"]
    assert any(
        m == "lazytorch.runtime" and t == "lazytorch.runtime.executor" for m, _, t in in_functions
    )
    # under `if TYPE_CHECKING:` only: not a dependency
    assert "lazytorch.tensor" not in edges["lazytorch.runtime"]


def test_every_layer_prefix_names_a_module() -> None:
    mods = _modules()
    stale = [
        p for _, ps in LAYERS for p in ps if not any(m == p or m.startswith(p + ".") for m in mods)
    ]
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_no_new_import_circle() -> None:
    edges, _ = _imports()
    found = _circles(edges)
    new = [sorted(c) for c in found - MODULE_CIRCLES.keys()]
    gone = [sorted(c) for c in MODULE_CIRCLES.keys() - found]
    assert not new, f"new module-level import circles: {new}"
    assert not gone, f"circles gone (remove them from MODULE_CIRCLES): {gone}"


def test_no_new_layer_circle() -> None:
    edges, _ = _imports()
    between: dict[str, set[str]] = collections.defaultdict(set)
    for a, targets in edges.items():
        for b in targets:
            la, lb = _layer(a), _layer(b)
            if la != lb:
                between[LAYERS[la][0]].add(LAYERS[lb][0])
    found = _circles(between)
    new = [sorted(c) for c in found - LAYER_CIRCLES.keys()]
    gone = [sorted(c) for c in LAYER_CIRCLES.keys() - found]
    assert not new, f"new circles between layers: {new}"
    assert not gone, f"layer circles gone (remove them from LAYER_CIRCLES): {gone}"


def test_no_new_import_up_the_layers() -> None:
    edges, in_functions = _imports()
    pairs = {(a, b) for a, targets in edges.items() for b in targets}
    pairs |= {(m, t) for m, _, t in in_functions}
    found = {(a, b) for a, b in pairs if _layer(b) > _layer(a)}
    new = sorted(found - UPWARD.keys())
    gone = sorted(UPWARD.keys() - found)
    assert not new, (
        "imports running back up the layers (move the code down, or register a hook as "
        f"autograd does with runtime.before_cut): {new}"
    )
    assert not gone, f"upward imports gone (remove them from UPWARD): {gone}"


def test_function_level_own_imports_only_go_down() -> None:
    _, in_functions = _imports()
    count = len({(m, line) for m, line, _ in in_functions})
    assert count <= FUNCTION_LEVEL_OWN_IMPORTS, (
        f"{count} imports of our own modules inside functions, more than the "
        f"{FUNCTION_LEVEL_OWN_IMPORTS} allowed: import at module level (move code down a "
        "layer if that makes a circle)"
    )


def _lazy_reason(path: Path, line: int) -> str | None:
    """The reason in the ``# lazy: ...`` comment on `line` or on a comment line above it."""
    lines = path.read_text().splitlines()
    texts = [lines[line - 1]]
    if line > 1 and lines[line - 2].lstrip().startswith("#"):
        texts.append(lines[line - 2])
    for text in texts:
        found = re.search(r"# lazy: ([a-z ]+?)(?: \(|$)", text)
        if found:
            return found.group(1)
    return None


def test_every_function_level_import_says_why() -> None:
    mods = _modules()
    _, in_functions = _imports()
    unmarked, bad = set(), []
    for m, line, _ in sorted(set(in_functions)):
        reason = _lazy_reason(mods[m], line)
        if reason is None:
            unmarked.add(m)
            if m not in UNMARKED:
                bad.append(f"{m}:{line}: no '# lazy: <reason>' comment")
        elif reason not in LAZY_REASONS:
            bad.append(f"{m}:{line}: '{reason}' is not one of {LAZY_REASONS}")
    assert not bad, (
        "an import inside a function must say why it is not at module level "
        f"(# lazy: import time / optional dependency / circle), or move up: {bad}"
    )
    gone = sorted(UNMARKED.keys() - unmarked)
    assert not gone, (
        f"modules with every function-level import marked (remove from UNMARKED): {gone}"
    )
