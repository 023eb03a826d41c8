"""The ``lazytorch`` command: run, dump, inspect and warmup, as a user runs them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lazytorch.cli import main

SCRIPT = """\
import sys
import lazytorch as torch

w = torch.ones(16, 4) * 0.5
outs = []
for b in (2, 3, 2):
    x = torch.arange(b * 16.0).reshape(b, 16) / 100
    y = (x @ w).relu().sum(1)
    torch.materialize(y)
    outs.append(round(float(y.sum().item()), 4))
print("sync", torch.is_sync_mode(), "args", sys.argv[1:], "outs", outs)
c = torch.metrics.counters()
print("compiles", c["compiles"], "disk", c["cache_hits_disk"])
"""


def lazytorch_cmd(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 120):
    full_env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "lazytorch", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def work(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    return tmp_path


@pytest.fixture
def cache_env(tmp_path):
    return {"LAZYTORCH_CACHE_DIR": str(tmp_path / "cache")}


def test_help_lists_every_command_and_each_has_help(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("run", "dump", "inspect", "cache", "warmup", "doctor"):
        assert re.search(rf"^\s+{cmd}\s+\S", out, re.M), cmd
        assert main([cmd, "--help"]) == 0
        assert "usage: lazytorch " + cmd in capsys.readouterr().out


def test_console_script_is_declared():
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert 'lazytorch = "lazytorch.__main__:main"' in text


def test_run_passes_arguments_and_settings(work, cache_env):
    r = lazytorch_cmd("run", "--sync", "script.py", "--epochs", "1", cwd=work, env=cache_env)
    assert r.returncode == 0, r.stderr
    assert "sync True args ['--epochs', '1'] outs [9.92, 22.56, 9.92]" in r.stdout


def test_run_exit_status_and_errors(work):
    (work / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (work / "raises.py").write_text("raise ValueError('boom')\n")
    assert lazytorch_cmd("run", "exits.py", cwd=work).returncode == 3
    r = lazytorch_cmd("run", "raises.py", cwd=work)
    assert r.returncode == 1 and "ValueError: boom" in r.stderr and "raises.py" in r.stderr
    r = lazytorch_cmd("run", "missing.py", cwd=work)
    assert r.returncode == 2 and "lazytorch run: error: no such script: missing.py" in r.stderr


def test_run_strict_refuses_implicit_materialization_at_the_users_line(work, cache_env):
    r = lazytorch_cmd("run", "--strict", "script.py", cwd=work, env=cache_env)
    assert r.returncode == 1
    assert re.search(
        r"ImplicitMaterializationError: implicit materialization by item\(\) at "
        r"script\.py:10 in strict mode",
        r.stderr,
    ), r.stderr


def test_run_logs_syncs_and_recompiles(work, cache_env):
    r = lazytorch_cmd("run", "--log", "syncs,recompiles", "script.py", cwd=work, env=cache_env)
    assert r.returncode == 0, r.stderr
    assert "[lazytorch.syncs] implicit materialization: item() at script.py:10" in r.stderr
    # x comes from arange in the script, so the changed size is a node's, not an input's:
    # the second size makes it symbolic, and one program serves both sizes.
    assert (
        "[lazytorch.recompiles] recompiling program at script.py:9: %8 (reshape at "
        "script.py:7) dim 0 (2 -> 3) is s0: compiling one program for every such size"
    ) in r.stderr
    assert (
        "[lazytorch.recompiles] recompiling program at script.py:10: "
        "input 0 dim 0 (2 -> 3) is s0: compiling one program for every such size"
    ) in r.stderr
    assert "compiles 4 disk 0" in r.stdout  # 2 sizes x 2 cut lines; the third run hits
    # Env var form, for any process; with dynamic shapes off, every size compiles.
    env = {**cache_env, "LAZYTORCH_LOG": "recompiles", "LAZYTORCH_DYNAMIC": "0"}
    r2 = subprocess.run(
        [sys.executable, "script.py"],
        cwd=work,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        "[lazytorch.recompiles] recompiling program at script.py:9: node 0 (iota) is f64[48], "
        "was f64[32] (recorded at script.py:7); sizes and dtypes are specialized"
    ) in r2.stderr
    assert (
        "[lazytorch.recompiles] recompiling program at script.py:10: "
        "input 0 f32[2] -> f32[3] (sizes and dtypes are specialized)"
    ) in r2.stderr


def test_dump_then_inspect(work, cache_env):
    r = lazytorch_cmd("dump", "--out", "d", "script.py", cwd=work, env=cache_env)
    assert r.returncode == 0, r.stderr
    assert "lazytorch: dumped" in r.stderr and "lazytorch inspect d" in r.stderr
    index = json.loads((work / "d" / "index.json").read_text())
    causes = {(p["cause"], p["loc"]) for p in index["programs"]}
    assert ("materialize()", "script.py:9") in causes and ("item()", "script.py:10") in causes

    r = lazytorch_cmd("inspect", "d", cwd=work)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert (
        lines[0].split()
        == "prog nodes kernels ops/kernel peak compile cache guards runs cut".split()
    )
    assert any(
        re.match(r"000\s+\d+\s+\d+ \+1 ext.*materialize\(\) at script\.py:9$", ln) for ln in lines
    ), r.stdout
    assert "recompiled at script.py:9" in r.stdout

    r = lazytorch_cmd("inspect", "d", "--program", "0", cwd=work)
    assert r.returncode == 0
    assert "cut: materialize() at script.py:9" in r.stdout
    assert "extern matmul" in r.stdout and "= matmul" in r.stdout and "timings:" in r.stdout

    r = lazytorch_cmd("inspect", "d", "--program", "0", "--format", "json", cwd=work)
    detail = json.loads(r.stdout)
    assert detail["program"] == "000" and detail["ir"]["format"] == 1
    r = lazytorch_cmd("inspect", "d", "--program", "0", "--format", "dot", cwd=work)
    assert r.stdout.startswith("digraph program {")

    r = lazytorch_cmd("inspect", "d", "--program", "77", cwd=work)
    assert r.returncode == 2 and "no program 77 in d" in r.stderr
    r = lazytorch_cmd("inspect", ".", cwd=work)
    assert r.returncode == 2 and "has no index.json: not a lazytorch dump" in r.stderr


def test_dump_dir_env_var_works_for_any_process(work, cache_env):
    env = {**os.environ, **cache_env, "LAZYTORCH_DUMP_DIR": str(work / "envdump")}
    r = subprocess.run(
        [sys.executable, "script.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads((work / "envdump" / "index.json").read_text())["programs"]
    assert len(rows) >= 3 and all(
        (work / "envdump" / row["program"] / "ir.txt").exists() for row in rows
    )


def _record(work: Path, env: dict[str, str]) -> Path:
    r = lazytorch_cmd("run", "--record", "programs.jsonl", "script.py", cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    return work / "programs.jsonl"


def test_warmup_from_a_recorded_manifest_gives_zero_compiles(work, cache_env):
    manifest = _record(work, cache_env)
    n = len(manifest.read_text().splitlines())
    assert n == 4  # two batch sizes, the y.sum(), and the first run's weights
    fresh = {"LAZYTORCH_CACHE_DIR": str(work / "fresh")}
    r = lazytorch_cmd("warmup", "--manifest", "programs.jsonl", "--cache-dir", "fresh", cwd=work)
    assert r.returncode == 0, r.stderr
    assert re.search(
        rf"warmup: {n} programs from programs.jsonl: {n} compiled, 0 already "
        r"cached, 0 failed",
        r.stdout,
    ), r.stdout
    assert re.search(rf"\[{n}/{n}\] script\.py:\d+: ", r.stdout)  # progress lines
    again = lazytorch_cmd(
        "warmup", "--manifest", "programs.jsonl", "--cache-dir", "fresh", cwd=work
    )
    assert f"0 compiled, {n} already cached" in again.stdout  # idempotent
    r = subprocess.run(
        [sys.executable, "script.py"],
        cwd=work,
        env={**os.environ, **fresh},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "outs [9.92, 22.56, 9.92]" in r.stdout
    assert re.search(r"compiles 0 disk [1-9]", r.stdout), r.stdout


def test_two_processes_warming_one_cache_leave_it_consistent(work, cache_env):
    manifest = _record(work, cache_env)
    n = len(manifest.read_text().splitlines())
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    cmd = [
        sys.executable,
        "-m",
        "lazytorch",
        "warmup",
        "--manifest",
        "programs.jsonl",
        "--cache-dir",
        "shared",
        "--jobs",
        "1",
    ]
    procs = [
        subprocess.Popen(
            cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    compiled = [int(re.search(r"(\d+) compiled", o).group(1)) for o, _ in outs]
    assert sum(compiled) == n  # the per-key lock: each program compiled once in all
    r = lazytorch_cmd("cache", "verify", "--cache-dir", "shared", cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    entries = [p for p in (work / "shared" / "v1").glob("*/*") if p.is_dir()]
    # one entry per program, plus one index entry per program over symbolic sizes
    dynamic = sum('"dynamic"' in line for line in manifest.read_text().splitlines())
    assert len(entries) == n + dynamic
    assert not list((work / "shared" / "v1" / "tmp").iterdir())


def test_warmup_an_entry_point_over_input_specs(work, cache_env):
    (work / "model.py").write_text(
        textwrap.dedent("""\
        import lazytorch as torch

        W = torch.ones(8, 3)

        def predict(x):
            b = x.shape[0]
            bucket = 1 << (b - 1).bit_length()          # pad to a power of two
            if bucket > b:
                x = torch.cat([x, torch.zeros(bucket - b, x.shape[1])])
            return (x @ W).softmax(-1)[:b]
        """)
    )
    # with tiered execution on, as a user's shell has it (the test suite turns it off):
    # warming must compile, not run first sightings on the interpreter
    r = lazytorch_cmd(
        "warmup",
        "model:predict",
        "--input",
        "float32[1..8,8]",
        "--cache-dir",
        "c",
        cwd=work,
        env={"LAZYTORCH_TIERED": "1"},
    )
    assert r.returncode == 0, r.stderr
    m = re.search(
        r"warmup: 8 calls of model:predict: (\d+) programs, (\d+) compiled, "
        r"0 already cached, 0 failed",
        r.stdout,
    )
    assert m, r.stdout
    assert int(m.group(2)) >= 4  # at least one program per bucket 1, 2, 4, 8
    again = lazytorch_cmd(
        "warmup", "model:predict", "--input", "float32[1..8,8]", "--cache-dir", "c", cwd=work
    )
    assert ", 0 compiled, " in again.stdout
    # The warmed programs are the ones a real caller's data (not lazy random inputs) needs.
    call = (
        "import numpy as np, lazytorch as torch, model\n"
        "for b in (5, 1, 8):\n"
        "    model.predict(torch.from_numpy(np.ones((b, 8), np.float32))).numpy()\n"
        "print('compiles', torch.metrics.counters()['compiles'])\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", call],
        cwd=work,
        env={**os.environ, "LAZYTORCH_CACHE_DIR": str(work / "c")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "compiles 0" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["warmup"], "give either --manifest FILE or MODULE:FUNCTION"),
        (["warmup", "--manifest", "nope.jsonl"], "cannot read manifest nope.jsonl"),
        (["warmup", "nocolon", "--input", "float32[2]"], "expected MODULE:FUNCTION"),
        (["warmup", "json:dumps", "--input", "float32[2..1]"], "is not N, A..B (A <= B) or A|B|C"),
        (["warmup", "json:dumps", "--input", "cfloat[2]"], "unknown dtype 'cfloat'"),
        (["warmup", "no_such_module_x:f", "--input", "float32[2]"], "cannot import"),
        (["run"], "give a SCRIPT to run"),
    ],
)
def test_usage_errors_are_clear(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_warmup_rejects_a_line_that_is_not_a_record(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.jsonl").write_text('{"format": 1}\n')
    assert main(["warmup", "--manifest", "m.jsonl"]) == 2
    assert "m.jsonl:1: not a lazytorch warm-up record" in capsys.readouterr().err


def test_log_graphs_and_cache_channels(work, cache_env):
    r = lazytorch_cmd("run", "--log", "graphs,cache", "script.py", cwd=work, env=cache_env)
    assert r.returncode == 0, r.stderr
    assert re.search(
        r"\[lazytorch\.graphs\] program built at script\.py:9 \(cut by materialize\(\); "
        r"compiled\):\nprogram \(\d+ inputs, \d+ nodes, 1 outputs\)",
        r.stderr,
    ), r.stderr
    assert re.search(
        r"\[lazytorch\.cache\] miss [0-9a-f]{16} for script\.py:9: compiled in", r.stderr
    )
    again = lazytorch_cmd("run", "--log", "cache", "script.py", cwd=work, env=cache_env)
    assert re.search(
        r"\[lazytorch\.cache\] disk hit [0-9a-f]{16} for script\.py:9 \(loaded in", again.stderr
    ), again.stderr


def test_dump_renders_svg_when_graphviz_is_installed(work, cache_env):
    # A stand-in for Graphviz's `dot` that records its arguments and writes the -o file.
    bindir = work / "bin"
    bindir.mkdir()
    fake = bindir / "dot"
    fake.write_text(
        "#!/bin/sh\n"
        'echo "$@" >> "$(dirname "$0")/calls"\n'
        'while [ "$1" != "-o" ]; do shift; done\n'
        'echo "<svg/>" > "$2"\n'
    )
    fake.chmod(0o755)
    env = {**cache_env, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = lazytorch_cmd("dump", "--out", "d", "script.py", cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    assert "Graphviz 'dot' is not installed" not in r.stderr
    index = json.loads((work / "d" / "index.json").read_text())
    assert index["svg"] is True
    for row in index["programs"]:
        assert (work / "d" / row["program"] / "graph.svg").read_text() == "<svg/>\n"
    assert "-Tsvg" in (bindir / "calls").read_text()


def test_dump_says_when_graphviz_is_missing(tmp_path, capsys, monkeypatch):
    import lazytorch as lt
    from lazytorch.runtime import observe

    real_which = shutil.which
    monkeypatch.setattr(observe.shutil, "which", lambda n: None if n == "dot" else real_which(n))
    monkeypatch.setattr(observe, "_warned_dot", False)
    observe.set_dump_dir(tmp_path)
    try:
        lt.materialize(lt.arange(41.0) + 2)
        lt.materialize(lt.arange(43.0) + 2)
    finally:
        observe.set_dump_dir(None)
    err = capsys.readouterr().err
    assert err.count("Graphviz 'dot' is not installed, so only graph.dot is written") == 1
    assert len(list(tmp_path.glob("*/graph.dot"))) == 2
    assert not list(tmp_path.glob("*/graph.svg"))
    assert json.loads((tmp_path / "index.json").read_text())["svg"] is False
