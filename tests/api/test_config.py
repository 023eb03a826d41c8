"""The settings table (`lazytorch._settings`): one declaration and one parser per variable.

Every declared variable parses its default; each kind accepts its good values and refuses
bad ones with a `ValueError` naming the variable; the bugs the table fixed stay fixed
(``LAZYTORCH_VERIFY=false`` turned verification on, a bad ``LAZYTORCH_RECOMPILE_LIMIT``
silently became 8, ``LAZYTORCH_DISK_CACHE`` was parsed three ways); no module outside
`lazytorch._settings` reads a ``LAZYTORCH_*`` variable itself; docs/backends.md's table is
the table's rendering; ``__version__`` is pyproject's.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

import lazytorch
from lazytorch import _config, _settings
from lazytorch._settings import SETTINGS, Setting, declare, env_value, render_table
from lazytorch.cli import main
from lazytorch.codegen import compiler
from lazytorch.ir import verify
from lazytorch.runtime import backends, cpp_backend, dynamic, observe

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ("lazytorch", "codegen", "scheduler")

TRUE = ["1", "true", "TRUE", "yes", "Yes", "on", " ON "]
FALSE = ["0", "false", "False", "no", "NO", "off", " off\n"]
BAD = {
    "bool": ["2", "enabled", "ture", "-1"],
    "positive int": ["0", "-4", "1.5", "ten", "0x10"],
    "count": ["-1", "2.0", "many"],
    "seconds": ["0", "-3", "nan", "inf", "soon"],
    "choice": ["cpu", "AUTO"],
}
GOOD = {
    "positive int": [("7", 7), (" 100000 ", 100_000)],
    "count": [("0", 0), ("12", 12)],
    "seconds": [("2.5", 2.5), ("1e3", 1000.0)],
    "text": [(" -O2 -g ", "-O2 -g"), ("x", "x")],
    "path": [("~/a b", "~/a b"), ("/tmp/x", "/tmp/x")],
}


def of_kind(kind: str) -> list[str]:
    return [name for name, s in SETTINGS.items() if s.kind == kind]


# -- the table ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_every_setting_parses_its_default(monkeypatch, name):
    s = SETTINGS[name]
    assert s.name == name and s.doc and s.when in _settings.WHEN
    monkeypatch.delenv(name, raising=False)
    assert env_value(name) == s.default
    monkeypatch.setenv(name, "  ")  # blank means unset
    assert env_value(name) == s.default
    if s.kind == "choice":
        assert s.default in s.choices


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="LAZYTORCH_SYNC is declared twice"):
        declare("LAZYTORCH_SYNC", "bool", False, "again", when="import")
    with pytest.raises(ValueError, match="must start with LAZYTORCH_"):
        Setting("OMP_NUM_THREADS", "count", 0, "threads", when="use")
    with pytest.raises(ValueError, match="unknown kind 'float'"):
        Setting("LAZYTORCH_X", "float", 0.0, "x", when="use")
    with pytest.raises(ValueError, match="unknown 'when' 'later'"):
        Setting("LAZYTORCH_X", "bool", False, "x", when="later")
    with pytest.raises(ValueError, match="choices go with kind 'choice'"):
        Setting("LAZYTORCH_X", "text", "", "x", when="use", choices=("a",))
    with pytest.raises(KeyError, match="LAZYTORCH_NOPE is not a declared setting"):
        env_value("LAZYTORCH_NOPE")


# -- each kind ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", of_kind("bool"))
def test_booleans(monkeypatch, name):
    for text in TRUE:
        monkeypatch.setenv(name, text)
        assert env_value(name) is True
    for text in FALSE:
        monkeypatch.setenv(name, text)
        assert env_value(name) is False
    for text in BAD["bool"]:
        monkeypatch.setenv(name, text)
        with pytest.raises(ValueError) as e:
            env_value(name)
        assert str(e.value) == (
            f"{name} must be a boolean (1/0, true/false, yes/no or on/off), got {text!r}"
        )


@pytest.mark.parametrize("kind", ["positive int", "count", "seconds", "choice"])
def test_bad_values_name_the_variable_the_value_and_what_is_accepted(monkeypatch, kind):
    names = of_kind(kind)
    assert names, kind
    accepted = {
        "positive int": "a positive integer",
        "count": "an integer >= 0",
        "seconds": "a positive number of seconds",
        "choice": "one of ",
    }[kind]
    for name in names:
        for text in BAD[kind]:
            monkeypatch.setenv(name, text)
            with pytest.raises(ValueError) as e:
                env_value(name)
            message = str(e.value)
            assert message.startswith(f"{name} must be {accepted}"), message
            assert f", got {text!r}" in message


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_good_values(monkeypatch, kind):
    names = of_kind(kind)
    assert names, kind
    for name in names:
        for text, value in GOOD[kind]:
            monkeypatch.setenv(name, text)
            assert env_value(name) == value


def test_choices(monkeypatch):
    for choice in SETTINGS["LAZYTORCH_BACKEND"].choices:
        monkeypatch.setenv("LAZYTORCH_BACKEND", choice)
        assert env_value("LAZYTORCH_BACKEND") == choice
    monkeypatch.setenv("LAZYTORCH_BACKEND", "interprter")
    with pytest.raises(ValueError, match="did you mean 'interpreter'"):
        env_value("LAZYTORCH_BACKEND")


def test_an_import_time_setting_fails_the_import_naming_it(tmp_path):
    """Read at import: ``import lazytorch`` fails. Read at use: the import works."""
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("LAZYTORCH_")}
    code = "import lazytorch; print('imported')"
    bad = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "LAZYTORCH_SYNC": "sometimes"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0
    assert "ValueError: LAZYTORCH_SYNC must be a boolean" in bad.stderr
    assert "got 'sometimes'" in bad.stderr
    late = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "LAZYTORCH_RECOMPILE_LIMIT": "lots", "LAZYTORCH_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert late.returncode == 0 and late.stdout == "imported\n", late.stderr


# -- the bugs the table fixed ---------------------------------------------------------------
def test_verify_false_turns_verification_off(monkeypatch):
    for text in ("false", "off", "no", "0"):
        monkeypatch.setenv("LAZYTORCH_VERIFY", text)
        assert verify.verify_enabled() is False
    monkeypatch.setenv("LAZYTORCH_VERIFY", "true")
    assert verify.verify_enabled() is True
    monkeypatch.setenv("LAZYTORCH_VERIFY", "verbose")
    with pytest.raises(ValueError, match=r"LAZYTORCH_VERIFY must be a boolean .*, got 'verbose'"):
        verify.verify_enabled()


def test_bad_recompile_limit_raises_instead_of_becoming_8(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "3")
    assert observe.recompile_limit() == 3
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "0")
    assert observe.recompile_limit() == 0
    for text in ("eight", "-2", "3.5"):
        monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", text)
        with pytest.raises(
            ValueError, match=f"LAZYTORCH_RECOMPILE_LIMIT must be an integer >= 0, got {text!r}"
        ):
            observe.recompile_limit()


def test_disk_cache_is_parsed_one_way_everywhere(monkeypatch, tmp_path, capsys):
    """The cpp backend, the warm-up command and doctor agree on every spelling."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    backend = cpp_backend.CppBackend.__new__(cpp_backend.CppBackend)
    backend._disk = None
    for text in ("0", "false", "OFF", "No"):
        monkeypatch.setenv("LAZYTORCH_DISK_CACHE", text)
        assert backend.disk is None
        assert main(["warmup", "--manifest", str(tmp_path / "none.jsonl")]) == 2
        assert f"LAZYTORCH_DISK_CACHE={text} turns the disk cache off" in capsys.readouterr().err
    for text in ("1", "true", "ON", ""):
        monkeypatch.setenv("LAZYTORCH_DISK_CACHE", text)
        assert backend.disk is not None
    monkeypatch.setenv("LAZYTORCH_DISK_CACHE", "disabled")  # was: on for cpp, off for none
    with pytest.raises(
        ValueError, match=r"LAZYTORCH_DISK_CACHE must be a boolean .*, got 'disabled'"
    ):
        backend.disk  # noqa: B018


def test_other_read_at_use_settings_go_through_the_table(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "off")
    assert dynamic.enabled() is False
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "maybe")
    with pytest.raises(ValueError, match=r"LAZYTORCH_DYNAMIC must be a boolean .*, got 'maybe'"):
        dynamic.enabled()
    monkeypatch.setenv("LAZYTORCH_DEVICE_BACKEND_AUTOLOAD", "no")
    assert lazytorch._devices.autoload_enabled() is False
    monkeypatch.setenv("LAZYTORCH_CXXFLAGS", "-O2 '-DX=a b'")
    assert compiler._extra_flags() == ["-O2", "-DX=a b"]


# -- backends register their names -----------------------------------------------------------
def test_backends_register_their_names_into_config(monkeypatch):
    monkeypatch.setattr(backends, "_factories", dict(backends._factories))
    monkeypatch.setattr(_config, "_registered_backends", list(_config._registered_backends))
    with pytest.raises(ValueError, match="unknown backend 'npu0'"):
        lazytorch.set_backend("npu0")
    backends.register_backend("npu0", lambda: None)  # type: ignore[arg-type,return-value]
    with lazytorch.backend("npu0"):
        assert _config.backend_name() == "npu0"


# -- nothing reads the environment behind the table's back --------------------------------------
def _env_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a ``LAZYTORCH_*`` string (``ENV_DIR = "LAZYTORCH_..."``)."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and str(node.value.value).startswith("LAZYTORCH_"):
                    out[t.id] = node.value.value
    return out


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or a bare ``environ``."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def environment_reads(source: str, label: str, known: dict[str, str] | None = None) -> list[str]:
    """``label:line: what`` for each read of a LAZYTORCH_* variable from the environment:
    ``os.environ.get/[]/in``, ``os.getenv``, or a walk over ``os.environ`` (``items()``...).
    `known` adds names bound to such a string in other modules (imported constants)."""
    tree = ast.parse(source, label)
    consts = {**(known or {}), **_env_constants(tree)}

    def lazytorch_name(arg: ast.AST) -> str | None:
        if isinstance(arg, ast.Constant) and str(arg.value).startswith("LAZYTORCH_"):
            return str(arg.value)
        if isinstance(arg, ast.Name) and arg.id in consts:
            return consts[arg.id]
        return None

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and _is_environ(f.value) and node.args:
                if f.attr in ("get", "pop", "setdefault"):
                    name = lazytorch_name(node.args[0])
            elif isinstance(f, ast.Attribute) and f.attr == "getenv" and node.args:
                name = lazytorch_name(node.args[0])
            if isinstance(f, ast.Attribute) and _is_environ(f.value):
                if f.attr in ("items", "keys", "values", "copy"):
                    name = f"os.environ.{f.attr}()"
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            if isinstance(node.ctx, ast.Load):
                name = lazytorch_name(node.slice)
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            name = lazytorch_name(node.left)
        if name is not None:
            found.append((node.lineno, f"{label}:{node.lineno}: {name}"))
    return [text for _, text in sorted(found)]


def test_no_module_reads_lazytorch_variables_outside_the_table():
    paths = [p for top in SOURCES for p in sorted((ROOT / top).rglob("*.py"))]
    paths.remove(ROOT / "lazytorch" / "_settings.py")
    sources = {p: p.read_text() for p in paths}
    known: dict[str, str] = {}  # e.g. cache_dirs.ENV_DIR, read by disk_cache
    for source in sources.values():
        known.update(_env_constants(ast.parse(source)))
    reads = []
    for path, source in sources.items():
        reads += environment_reads(source, str(path.relative_to(ROOT)), known)
    assert reads == [], "read these through lazytorch._settings.env_value:\n" + "\n".join(reads)


def test_the_read_detector_sees_every_spelling():
    """The detector above must catch what it is there to catch (else the test cannot fail)."""
    sample = (
        "import os\n"
        'ENV = "LAZYTORCH_X"\n'
        'a = os.environ.get("LAZYTORCH_A", "")\n'
        "b = os.environ[ENV]\n"
        'c = os.getenv("LAZYTORCH_C")\n'
        'd = "LAZYTORCH_D" in os.environ\n'
        "e = dict(os.environ.items())\n"
        'os.environ["LAZYTORCH_W"] = "written, not read"\n'
        'f = os.environ.get("HOME")\n'
        "g = os.environ.get(IMPORTED)\n"
    )
    reads = environment_reads(sample, "sample.py", {"IMPORTED": "LAZYTORCH_I"})
    assert [r.split(": ", 1)[1] for r in reads] == [
        "LAZYTORCH_A",
        "LAZYTORCH_X",
        "LAZYTORCH_C",
        "LAZYTORCH_D",
        "os.environ.items()",
        "LAZYTORCH_I",
    ]


# -- the generated table in docs/backends.md ----------------------------------------------------
BEGIN = "<!-- settings table: generated by lazytorch._settings.render_table(); do not edit -->"
END = "<!-- end of the settings table -->"


def test_docs_table_is_the_rendering_of_the_settings():
    text = (ROOT / "docs" / "backends.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    doc_table = text.split(BEGIN)[1].split(END)[0].strip("\n") + "\n"
    assert doc_table == render_table(), (
        "docs/backends.md's settings table differs from lazytorch._settings.render_table(); "
        "paste the rendering between the markers"
    )
    for name in SETTINGS:
        assert f"| `{name}` |" in doc_table


def test_every_variable_the_docs_name_is_declared():
    # a doc naming a variable the library does not read (a typo, a removed setting) would
    # send a user to set something that does nothing
    named = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in re.findall(r"LAZYTORCH_[A-Z0-9_]*[A-Z0-9]", path.read_text()):
            named.add((name, path.name))
    unknown = sorted((path, name) for name, path in named if name not in SETTINGS)
    assert not unknown, unknown
    assert len(named) > 10  # the scan sees the docs' variables


# -- doctor ------------------------------------------------------------------------------------
def test_doctor_flags_bad_values_and_unknown_names(monkeypatch):
    from lazytorch.cli.doctor import _environment

    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "sometimes")
    monkeypatch.setenv("LAZYTORCH_VERFIY", "1")
    check = _environment()
    assert check.status == "warning"
    assert "LAZYTORCH_DYNAMIC must be a boolean" in check.details[0]
    assert (
        "LAZYTORCH_VERFIY is not a lazytorch setting (did you mean LAZYTORCH_VERIFY?)"
        in (check.details[1])
    )
    monkeypatch.delenv("LAZYTORCH_DYNAMIC")
    monkeypatch.delenv("LAZYTORCH_VERFIY")
    assert _environment().data["problems"] == []


# -- version -----------------------------------------------------------------------------------
def test_version_lives_in_its_own_module_and_matches_pyproject():
    from lazytorch._version import __version__

    assert lazytorch.__version__ == __version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == __version__


def test_a_bad_pool_size_is_named_when_the_native_runtime_loads(monkeypatch):
    from lazytorch import _native

    monkeypatch.setattr(_native, "_module", None)
    monkeypatch.setattr(_native, "_error", None)
    monkeypatch.setenv("LAZYTORCH_POOL_MB", "lots")
    with pytest.raises(ValueError, match="LAZYTORCH_POOL_MB must be"):
        _native.load(warn=False)
    monkeypatch.setenv("LAZYTORCH_POOL_MB", "64")
    assert _native.load(warn=False) is not None
