"""``lazytorch doctor``: what this machine offers lazytorch, and what is missing.

One section per component, each marked ``ok``, ``warning`` or ``missing``: Python and
lazytorch, the native extension, the C++ compiler and OpenMP (checked by compiling and
loading a tiny program), the CPU, BLAS, the default backend, Triton and a GPU (and
whether the ``cuda`` device can use it: `lazytorch.cuda.unavailable_reason`), the compile
cache and the ``LAZYTORCH_*`` environment. The exit status is 0 when compiled execution
works (the native extension loads, the compiler builds OpenMP code, and the cache
directory is usable), else 1.

Usage::

    lazytorch doctor                  # for people
    lazytorch doctor --json           # for scripts and bug reports
    lazytorch doctor --cache-dir DIR  # check another cache directory
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lazytorch
from lazytorch import _config
from lazytorch._settings import SETTINGS, env_value, environment, raw_value, unknown_names
from lazytorch.cli.cache import format_size
from lazytorch.codegen.compiler import blas_choice
from lazytorch.runtime.disk_cache import CacheDirError, DiskCache, default_cache_dir

__all__ = ["Check", "add_parser", "run_checks"]

OK, WARNING, MISSING = "ok", "warning", "missing"

_OPENMP_SOURCE = """\
#include <omp.h>
extern "C" int lazytorch_doctor_threads(void) { return omp_get_max_threads(); }
"""
_COMPILE_TIMEOUT_S = 120
_NVIDIA_SMI_TIMEOUT_S = 10
# Variables read by what lazytorch links (OpenMP, OpenBLAS): they change thread counts.
_RELATED_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CXX")


@dataclass
class Check:
    """One section of the report: a status, a one-line summary, detail lines and data."""

    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The section as ``--json`` prints it."""
        return {
            "status": self.status,
            "summary": self.summary,
            "details": self.details,
            **self.data,
        }


def add_parser(subparsers: Any) -> None:
    """Register ``lazytorch doctor`` with the top-level parser."""
    p = subparsers.add_parser(
        "doctor",
        help="check the compiler, OpenMP, BLAS, cache and more",
        description="Report what this machine offers lazytorch: Python and lazytorch "
        "versions, the native extension, the C++ compiler and OpenMP (by compiling and "
        "loading a test program), the CPU, BLAS, the default backend, Triton, a GPU, the "
        "compile cache and the LAZYTORCH_* variables in effect. Exits 0 when compiled "
        "execution works (native extension, and a compiler that builds OpenMP code), else 1.",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=pathlib.Path,
        help="the cache directory to check (default: LAZYTORCH_CACHE_DIR, else the XDG "
        "cache directory)",
    )
    p.set_defaults(func=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    """``lazytorch doctor``: print the report; 0 if compiled execution works, else 1."""
    checks = run_checks(args.cache_dir)
    status = _exit_status(checks)
    if args.json:
        report = {"exit_status": status, "checks": {c.name: c.as_json() for c in checks}}
        print(json.dumps(report, indent=1, default=str))
        return status
    print("lazytorch doctor: what this machine offers lazytorch\n")
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{'[' + c.status + ']':<10} {c.name:<{width}}  {c.summary}")
        for line in c.details:
            print(f"{'':<10} {'':<{width}}    {line}")
    print()
    if status == 0:
        print("result: compiled execution works (native extension, compiler and OpenMP ok)")
    else:
        broken = [c.name for c in checks if c.name in _REQUIRED and c.status != OK]
        if broken:
            print(
                f"result: compiled execution is unavailable ({', '.join(broken)}); lazytorch "
                "falls back to the NumPy interpreter (correct but slower). See the fixes above."
            )
        else:
            print(
                "result: the cache directory is unusable, so compiling a program fails; fix it "
                "as said above, or run with LAZYTORCH_DISK_CACHE=0 (no cache between processes)"
            )
    return status


_REQUIRED = ("native", "compiler", "openmp")


def _exit_status(checks: list[Check]) -> int:
    """0 if compiled execution works: its sections are ok and the cache dir is usable."""
    needed = all(c.status == OK for c in checks if c.name in _REQUIRED)
    cache_ok = all(c.status != MISSING for c in checks if c.name == "cache")
    return 0 if needed and cache_ok else 1


def run_checks(cache_dir: pathlib.Path | None = None) -> list[Check]:
    """Every section of the report, in order; a check that crashes becomes a warning."""
    state: dict[str, Any] = {}
    steps: list[tuple[str, Callable[[], Check]]] = [
        ("python", _python),
        ("lazytorch", _lazytorch),
        ("native", _native_ext),
        ("compiler", lambda: _compiler(state)),
        ("openmp", lambda: _openmp(state)),
        ("cpu", _cpu),
        ("blas", _blas),
        ("backend", _backend),
        ("triton", _triton),
        ("gpu", _gpu),
        ("cache", lambda: _cache(cache_dir, state)),
        ("environment", _environment),
    ]
    checks = []
    for name, step in steps:
        try:
            checks.append(step())
        except Exception as e:  # a diagnostic tool must report, not crash
            checks.append(Check(name, WARNING, f"the check itself failed: {type(e).__name__}: {e}"))
    return checks


# -- the checks --------------------------------------------------------------------------------
def _python() -> Check:
    """The interpreter's version and path."""
    version = platform.python_version()
    summary = f"{platform.python_implementation()} {version} ({sys.executable})"
    ok = sys.version_info >= (3, 10)
    return Check(
        "python",
        OK if ok else WARNING,
        summary if ok else f"{summary}: lazytorch needs Python 3.10 or newer",
        data={"version": version, "executable": sys.executable},
    )


def _lazytorch() -> Check:
    """The lazytorch version and where it is imported from."""
    where = str(pathlib.Path(lazytorch.__file__).parent)
    return Check(
        "lazytorch",
        OK,
        f"{lazytorch.__version__} at {where}",
        data={"version": lazytorch.__version__, "location": where},
    )


def _native_ext() -> Check:
    """Whether the runtime extension lazytorch._C loads, or why not."""
    from lazytorch import _native  # lazy: import time (cli --help)

    mod = _native.load(warn=False)
    if mod is None:
        return Check(
            "native",
            MISSING,
            f"lazytorch._C could not be loaded: {_native._error}",
            ["fix: reinstall with a C++ compiler available: pip install -e ."],
            {"loaded": False, "error": _native._error},
        )
    path = getattr(mod, "__file__", None)
    return Check(
        "native", OK, f"lazytorch._C loaded from {path}", data={"loaded": True, "path": path}
    )


def _compiler(state: dict[str, Any]) -> Check:
    """The C++ compiler lazytorch would use (kept in `state` for the OpenMP check)."""
    # lazy: import time (cli --help)
    from lazytorch.codegen.compiler import ToolchainError, toolchain

    try:
        tc = toolchain(None)
    except ToolchainError as e:  # CompilerMissing included
        return Check("compiler", MISSING, str(e), data={"found": False, "error": str(e)})
    state["toolchain"] = tc
    details = [f"flags: {' '.join(tc.flags)}", f"toolchain fingerprint: {tc.fingerprint}"]
    if raw_value("LAZYTORCH_CXX"):
        details.insert(0, f"chosen by LAZYTORCH_CXX={raw_value('LAZYTORCH_CXX')}")
    return Check(
        "compiler",
        OK,
        f"{tc.cxx}: {tc.version}",
        details,
        {
            "found": True,
            "path": tc.cxx,
            "version": tc.version,
            "flags": list(tc.flags),
            "fingerprint": tc.fingerprint,
        },
    )


def _openmp(state: dict[str, Any]) -> Check:
    """Compile and load a program calling omp_get_max_threads(), with the real flags."""
    tc = state.get("toolchain")
    if tc is None:
        return Check("openmp", MISSING, "not tested: no C++ compiler", data={"works": False})
    with tempfile.TemporaryDirectory(prefix="lazytorch-doctor-") as tmp:
        src = pathlib.Path(tmp) / "omp_test.cpp"
        out = pathlib.Path(tmp) / "omp_test.so"
        src.write_text(_OPENMP_SOURCE)
        t0 = time.perf_counter()
        try:
            res = subprocess.run(
                [tc.cxx, *tc.flags, str(src), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=_COMPILE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return Check(
                "openmp",
                MISSING,
                f"compiling a 2-line test program took over {_COMPILE_TIMEOUT_S} s",
                data={"works": False},
            )
        seconds = time.perf_counter() - t0
        if res.returncode != 0:
            return Check(
                "openmp",
                MISSING,
                f"{tc.cxx} cannot compile an OpenMP program with lazytorch's flags, so no "
                "program can be compiled",
                [*res.stderr.strip().splitlines()[-6:], _OPENMP_FIX],
                {"works": False, "error": res.stderr[-2000:]},
            )
        try:
            lib = ctypes.CDLL(str(out))
            threads = int(lib.lazytorch_doctor_threads())
        except OSError as e:
            return Check(
                "openmp",
                MISSING,
                f"the compiled test program does not load: {e}",
                [_OPENMP_FIX],
                {"works": False, "error": str(e)},
            )
    details = []
    if os.environ.get("OMP_NUM_THREADS"):
        details.append(f"limited by OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    return Check(
        "openmp",
        OK,
        f"works: omp_get_max_threads() = {threads} (test program compiled and loaded "
        f"in {seconds:.2f} s)",
        details,
        {"works": True, "threads": threads, "compile_seconds": round(seconds, 3)},
    )


_OPENMP_FIX = (
    "fix: install the compiler's OpenMP runtime (Debian/Ubuntu: apt install g++ libgomp1), "
    "or point LAZYTORCH_CXX at a compiler that supports -fopenmp"
)


def _cpu() -> Check:
    """The CPU's model, core count and the vector extensions generated code can use."""
    from lazytorch.runtime.cpp_backend import isa_summary  # lazy: import time (cli --help)

    model = _cpu_model()
    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    isa = isa_summary()
    count = f"{cores} logical CPUs" + (
        f" ({usable} usable by this process)" if usable != cores else ""
    )
    status, details = OK, [f"ISA: {isa}"]
    if platform.machine() in ("x86_64", "AMD64") and "avx2" not in isa.split():
        status = WARNING
        details.append("no AVX2: generated kernels use narrower vectors and run slower")
    return Check(
        "cpu",
        status,
        f"{model}, {count}",
        details,
        {"model": model, "logical_cpus": cores, "usable_cpus": usable, "isa": isa},
    )


def _cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith(("model name", "Hardware", "Model")):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _blas() -> Check:
    """The OpenBLAS that compiled matrix products link (scipy-openblas32)."""
    try:
        version = importlib.metadata.version("scipy-openblas32")
    except importlib.metadata.PackageNotFoundError:
        return Check(
            "blas",
            MISSING,
            "scipy-openblas32 is not installed: compiled matrix products cannot link",
            ["fix: pip install scipy-openblas32"],
            {"found": False},
        )
    spec = importlib.util.find_spec("scipy_openblas32")
    libs: list[str] = []
    if spec is not None and spec.submodule_search_locations:
        lib_dir = pathlib.Path(next(iter(spec.submodule_search_locations))) / "lib"
        libs = sorted(str(p) for p in lib_dir.glob("libscipy_openblas*") if ".so" in p.name)
    details = []
    config = None
    with contextlib.suppress(Exception):  # optional detail: the build's target and threads
        import scipy_openblas32

        config = scipy_openblas32.get_openblas_config()
        details.append(f"config: {config}")
    details.append(f"float32/float64 GEMMs: {_gemm_library()}")
    if not libs:
        return Check(
            "blas",
            MISSING,
            f"scipy-openblas32 {version} has no shared library",
            ["fix: pip install --force-reinstall scipy-openblas32"],
            {"found": False, "version": version},
        )
    return Check(
        "blas",
        OK,
        f"scipy-openblas32 {version} ({libs[0]})",
        details,
        {"found": True, "version": version, "library": libs[0], "config": config},
    )


def _gemm_library() -> str:
    """Which library the cpp backend's float GEMMs call (LAZYTORCH_BLAS, `auto` resolved)."""
    try:
        choice = blas_choice()
    except Exception as e:  # a bad LAZYTORCH_BLAS: the environment check names it
        return f"unknown ({e})"
    if choice != "mkl":
        return "OpenBLAS (pip install 'lazytorch[mkl]' for Intel MKL)"
    try:
        return f"Intel MKL {importlib.metadata.version('mkl')}"
    except importlib.metadata.PackageNotFoundError:
        return "Intel MKL (LAZYTORCH_BLAS=mkl, but the mkl wheel is not installed)"


def _backend() -> Check:
    """The backend programs run on by default, with ``auto`` resolved."""
    configured = _config.backend_name()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resolved = lazytorch.get_backend()
    details = [str(w.message) for w in caught]
    how = f"{configured} -> {resolved}" if configured != resolved else resolved
    if raw_value("LAZYTORCH_BACKEND"):
        details.insert(0, f"set by LAZYTORCH_BACKEND={raw_value('LAZYTORCH_BACKEND')}")
    if resolved == "cpp" or configured == "interpreter":
        status, what = OK, how
    else:
        status, what = WARNING, f"{how}: programs run in the NumPy interpreter (correct but slow)"
    return Check("backend", status, what, details, {"configured": configured, "resolved": resolved})


def _triton() -> Check:
    """Whether Triton is installed (it compiles the cuda device's kernels)."""
    # Looked up, not imported: importing triton can pull in torch, which lazytorch never loads.
    if importlib.util.find_spec("triton") is None:
        return Check(
            "triton",
            MISSING,
            "not installed (the cuda device's kernels need it: pip install 'lazytorch[cuda]')",
            data={"installed": False},
        )
    try:
        version = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown version"
    return Check(
        "triton",
        OK,
        f"installed: {version} (compiles the cuda device's kernels; they also run on the CPU "
        "under TRITON_INTERPRET=1)",
        data={"installed": True, "version": version},
    )


def _gpu() -> Check:
    """An NVIDIA GPU, if nvidia-smi or /dev/nvidia0 shows one, and whether lazytorch's
    ``cuda`` device can use it (`lazytorch.cuda.unavailable_reason`)."""
    smi = shutil.which("nvidia-smi")
    dev = os.path.exists("/dev/nvidia0")
    gpus: list[str] = []
    details: list[str] = []
    if smi is not None:
        try:
            res = subprocess.run(
                [smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=_NVIDIA_SMI_TIMEOUT_S,
            )
            if res.returncode == 0:
                gpus = [line.strip() for line in res.stdout.splitlines() if line.strip()]
            else:
                details.append(f"nvidia-smi failed: {(res.stderr or res.stdout).strip()[:300]}")
        except (OSError, subprocess.TimeoutExpired) as e:
            details.append(f"nvidia-smi failed: {e}")
    reason = lazytorch.cuda.unavailable_reason()
    usable = reason is None
    if usable:
        n = lazytorch.cuda.device_count()
        backend = f"lazytorch.cuda is available: {n} device{'s' if n != 1 else ''}"
    else:
        backend = f"lazytorch.cuda is not available: {reason}"
    data = {"nvidia_smi": smi, "dev_nvidia0": dev, "gpus": gpus, "gpu_backend": usable}
    if gpus:
        return Check(
            "gpu", OK if usable else WARNING, f"{'; '.join(gpus)}. {backend}", details, data
        )
    if smi is not None or dev:
        found = f"nvidia-smi at {smi}" if smi else "/dev/nvidia0"
        return Check("gpu", WARNING, f"{found}, but no GPU listed. {backend}", details, data)
    return Check(
        "gpu",
        MISSING,
        f"no NVIDIA GPU (no nvidia-smi on PATH, no /dev/nvidia0). {backend}",
        details,
        data,
    )


def _cache(cache_dir: pathlib.Path | None, state: dict[str, Any]) -> Check:
    """The compile cache: safe or not, entries, size, corrupt entries (all files hashed)."""
    root = pathlib.Path(cache_dir if cache_dir is not None else default_cache_dir())
    root = root.expanduser().absolute()
    data: dict[str, Any] = {"path": str(root)}
    if not env_value("LAZYTORCH_DISK_CACHE"):
        data["enabled"] = False
        flag = raw_value("LAZYTORCH_DISK_CACHE")
        return Check(
            "cache",
            WARNING,
            f"disabled by LAZYTORCH_DISK_CACHE={flag}: every process compiles its programs again",
            data=data,
        )
    data["enabled"] = True
    if not os.path.lexists(root):
        data.update(exists=False, safe=True, entries=0)
        return Check("cache", OK, f"{root} (created on the first compile)", data=data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cache = DiskCache(root)
        except CacheDirError as e:
            data.update(exists=True, safe=False, error=str(e))
            return Check(
                "cache",
                MISSING,
                f"{root} is unusable: compiling a program raises this error",
                [str(e)],
                data,
            )
    entries = cache.entries()
    corrupt = cache.verify()
    size = cache.size_bytes()
    tc = state.get("toolchain")
    usable = sum(1 for e in entries if tc is not None and e.meta.get("toolchain") == tc.fingerprint)
    data.update(
        exists=True,
        safe=True,
        entries=len(entries),
        size_bytes=size,
        corrupt=len(corrupt),
        usable_here=usable if tc is not None else None,
    )
    details = [str(w.message) for w in caught]
    status = WARNING if caught else OK
    if corrupt:
        status = WARNING
        details.append(
            f"{len(corrupt)} corrupt: they are dropped and recompiled on use; "
            "'lazytorch cache verify' lists them"
        )
    summary = (
        f"{root} (private), {len(entries)} {'entry' if len(entries) == 1 else 'entries'}, "
        f"{format_size(size)}, {len(corrupt)} corrupt"
    )
    if tc is not None and entries:
        summary += f", {usable} usable here"
    return Check("cache", status, summary, details, data)


def _environment() -> Check:
    """The LAZYTORCH_* variables in effect, plus thread-count variables that matter; a
    warning for a value its setting rejects or a name no setting declares (a typo)."""
    found = environment()
    related = {k: os.environ[k] for k in _RELATED_ENV if k in os.environ}
    details = [f"{k}={v}" for k, v in {**found, **related}.items()]
    problems = []
    for name in found:
        if name in SETTINGS:
            try:
                env_value(name)
            except ValueError as e:
                problems.append(str(e))
    problems += [
        f"{name} is not a lazytorch setting ({hint})" for name, hint in unknown_names().items()
    ]
    summary = (
        f"{len(found)} LAZYTORCH_* variable(s) set" if found else "no LAZYTORCH_* variables set"
    )
    if problems:
        summary += f", {len(problems)} wrong"
    data = {"variables": found, "related": related, "problems": problems}
    return Check("environment", WARNING if problems else OK, summary, problems + details, data)
