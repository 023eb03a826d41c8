"""The test suite's own layout: a directory per layer, unique file names, and how the backend
matrix (tests/backend_matrix.py) finds its tests and picks its cpp sample."""

from __future__ import annotations

import re
import textwrap
import types
from pathlib import Path

import backend_matrix

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _layers_in_docs() -> set[str]:
    text = (ROOT / "docs" / "testing.md").read_text()
    return set(re.findall(r"^\| `tests/(\w+)`", text, flags=re.M))


def test_every_test_file_sits_in_a_layer_directory_named_in_the_docs():
    layers = _layers_in_docs()
    assert "ops" in layers and "codegen" in layers, layers
    for path in TESTS.rglob("test_*.py"):
        rel = path.relative_to(TESTS)
        assert len(rel.parts) > 1, f"{rel}: put it in a layer directory (docs/testing.md)"
        assert rel.parts[0] in layers, f"{rel}: {rel.parts[0]!r} is not a layer of docs/testing.md"
    on_disk = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.rglob("test_*.py"))}
    assert on_disk == layers, on_disk ^ layers


def test_test_file_names_are_unique():
    # pytest imports each test file by its name (rootdir-based, no __init__.py in the layers)
    seen: dict[str, Path] = {}
    for path in TESTS.rglob("test_*.py"):
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path


def _matrix_of(tmp_path: Path, source: str) -> dict[str, str]:
    path = tmp_path / "test_x.py"
    path.write_text(textwrap.dedent(source))
    return backend_matrix._module_matrix(path)


def test_matrix_tests_are_found_through_helpers_and_tables(tmp_path):
    found = _matrix_of(
        tmp_path,
        """
        import helpers
        from helpers import check as c, randn

        def _unary(name):
            c(lambda t, x: getattr(t, name)(x), randn(3))

        CASES = {"exp": lambda: _unary("exp")}

        def test_direct():
            c(lambda t, x: x + 1, randn(2))

        def test_through_a_helper():
            _unary("sin")

        def test_through_a_table():
            CASES["exp"]()

        def test_backends_only():
            for b in helpers.BACKENDS:
                pass

        def test_local_import():
            from helpers import check_grad
            check_grad(lambda t, x: x.exp(), randn(2))

        def test_outside():
            assert randn(2).shape == (2,)
        """,
    )
    assert found.get("test_direct") == "calls"
    assert found.get("test_through_a_helper") == "calls"
    assert found.get("test_through_a_table") == "calls"
    assert found.get("test_backends_only") == "reads"
    assert found.get("test_local_import") == "calls"
    assert "test_outside" not in found


def test_a_module_check_of_its_own_is_not_the_matrix(tmp_path):
    found = _matrix_of(
        tmp_path,
        """
        from helpers import check

        def check(fn):  # test_triton_backend.py's own comparison
            fn()

        def test_own():
            check(lambda: None)
        """,
    )
    assert "test_own" not in found


def _item(nodeid: str, backend: str) -> object:
    return types.SimpleNamespace(
        nodeid=nodeid, callspec=types.SimpleNamespace(params={"backend": backend})
    )


def test_the_sample_is_keyed_by_the_id_without_layer_and_backend():
    key = backend_matrix.sample_key
    assert (
        key(_item("tests/ops/test_elementwise.py::test_unary_function[exp-float32-cpp]", "cpp"))
        == "tests/test_elementwise.py::test_unary_function[exp-float32]"
    )
    assert (
        key(_item("tests/ops/test_errors.py::test_plain[cpp]", "cpp"))
        == "tests/test_errors.py::test_plain"
    )
    # deeper files keep their path (the fuzzer's regressions did not move)
    assert (
        key(_item("tests/fuzz/regressions/test_program_ab.py::test_replay[cpp]", "cpp"))
        == "tests/fuzz/regressions/test_program_ab.py::test_replay"
    )
