"""``lazytorch doctor``: the report on this machine (compiler, OpenMP, BLAS, cache, ...)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import lazytorch
from lazytorch.cli import main
from lazytorch.codegen.compiler import toolchain
from lazytorch.runtime.disk_cache import DiskCache

TIMEOUT = 120


def doctor(capsys: pytest.CaptureFixture[str], *argv: str | os.PathLike[str]) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["doctor", *map(str, argv)])
    return status, capsys.readouterr().out


@pytest.fixture
def cache_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    """A cache with one (fake) entry: the doctor counts entries, it does not load them."""
    root = tmp_path / "cache"
    DiskCache(root).store("cd" * 8, {"program.so": b"\x7fELF"}, {"manifest": {"kernels": 1}})
    return root


def test_doctor_report(capsys, cache_dir):
    status, out = doctor(capsys, "--cache-dir", cache_dir)
    assert status == 0, out
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("[")}
    assert list(lines) == [
        "python", "lazytorch", "native", "compiler", "openmp", "cpu", "blas", "backend",
        "triton", "gpu", "cache", "environment",
    ]  # fmt: skip
    for name in ("python", "lazytorch", "native", "compiler", "openmp", "blas"):
        assert lines[name].startswith("[ok]"), lines[name]
    assert lazytorch.__version__ in lines["lazytorch"]
    assert toolchain().version in lines["compiler"] and toolchain().cxx in lines["compiler"]
    assert "omp_get_max_threads() = " in lines["openmp"]
    assert "scipy-openblas32" in lines["blas"]
    assert f"{cache_dir} (private), 1 entry," in lines["cache"] and "0 corrupt" in lines["cache"]
    assert "lazytorch.cuda is not available: " in lines["gpu"]
    assert "LAZYTORCH_CACHE_DIR=" in out  # conftest sets it: listed under environment
    assert out.rstrip().endswith(
        "result: compiled execution works (native extension, compiler and OpenMP ok)"
    )


def test_doctor_json(capsys, cache_dir):
    status, out = doctor(capsys, "--json", "--cache-dir", cache_dir)
    assert status == 0
    report = json.loads(out)
    checks = report["checks"]
    assert report["exit_status"] == 0
    assert checks["compiler"]["version"] == toolchain().version
    assert checks["openmp"]["works"] is True and checks["openmp"]["threads"] >= 1
    assert checks["blas"]["found"] is True and os.path.exists(checks["blas"]["library"])
    assert checks["cache"]["path"] == str(cache_dir)
    assert (checks["cache"]["entries"], checks["cache"]["corrupt"]) == (1, 0)
    assert checks["backend"]["resolved"] in ("cpp", "interpreter")
    assert checks["gpu"]["gpu_backend"] is False
    assert all(c["status"] in ("ok", "warning", "missing") for c in checks.values())


def test_doctor_reports_corrupt_and_unsafe_caches(capsys, cache_dir, tmp_path):
    entry = DiskCache(cache_dir).entries()[0]
    entry.file("program.so").write_bytes(b"\x7fELG")
    status, out = doctor(capsys, "--json", "--cache-dir", cache_dir)
    cache = json.loads(out)["checks"]["cache"]
    assert status == 0 and cache["status"] == "warning" and cache["corrupt"] == 1

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    status, out = doctor(capsys, "--cache-dir", shared)
    assert status == 1  # compiling would fail with CacheDirError
    assert "result: the cache directory is unusable" in out
    line = next(line for line in out.splitlines() if line.split()[1:2] == ["cache"])
    assert line.startswith("[missing]") and "is unusable" in line
    assert "world-writable" in out and "Fix:" in out


def test_doctor_missing_cache_dir_is_not_created(capsys, tmp_path):
    status, out = doctor(capsys, "--json", "--cache-dir", tmp_path / "later")
    assert status == 0 and json.loads(out)["checks"]["cache"]["exists"] is False
    assert not (tmp_path / "later").exists()


def test_doctor_cli_entry_point(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "lazytorch", "doctor", "--json"],
        env={**os.environ, "LAZYTORCH_CACHE_DIR": str(tmp_path / "c")},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["checks"]["cache"]["path"] == str(tmp_path / "c")
    assert report["checks"]["environment"]["variables"]["LAZYTORCH_CACHE_DIR"] == str(
        tmp_path / "c"
    )


def test_doctor_without_compiler_exits_1(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "lazytorch", "doctor"],
        env={
            **os.environ,
            "LAZYTORCH_CACHE_DIR": str(tmp_path / "c"),
            "LAZYTORCH_CXX": "no-such-compiler++",
            "LAZYTORCH_BACKEND": "auto",
        },
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    lines = {line.split()[1]: line for line in res.stdout.splitlines() if line.startswith("[")}
    assert lines["compiler"].startswith("[missing]") and "no-such-compiler++" in lines["compiler"]
    assert lines["openmp"].startswith("[missing]")
    assert lines["backend"].startswith("[warning]") and "interpreter" in lines["backend"]
    assert "result: compiled execution is unavailable (compiler, openmp)" in res.stdout


def test_doctor_gpu_from_nvidia_smi(monkeypatch, tmp_path):
    """A GPU that nvidia-smi lists is reported, with why lazytorch.cuda cannot use it here
    (this machine has no driver); a warning, as the GPU is there but unused."""
    from lazytorch.cli import doctor as doctor_module

    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    check = doctor_module._gpu()
    assert check.status == "warning" and check.data["gpus"] == [
        "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB"
    ]
    assert "NVIDIA H100" in check.summary
    assert "lazytorch.cuda is not available: " in check.summary
    assert check.data["gpu_backend"] is False


def test_doctor_help(capsys):
    status, out = doctor(capsys, "--help")
    assert status == 0 and "--cache-dir DIR" in out and "--json" in out and "OpenMP" in out
