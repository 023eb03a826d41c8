"""Compiling generated C++ into shared objects, and what identifies the result.

Flags: ``-O3 -march=native -fopenmp`` plus ``-fno-math-errno -fno-trapping-math`` (they let
g++ vectorize sqrt and if-convert without changing any result) — never ``-ffast-math``, so
NaN and Inf propagate as in torch. ``LAZYTORCH_CXX`` picks the compiler (default: ``g++``,
then ``c++``) and ``LAZYTORCH_CXXFLAGS`` adds flags; both are part of the fingerprint that
keys the compile cache, together with the compiler's version, the CPU's features and the
runtime headers' contents.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CompileError",
    "CompilerMissing",
    "Toolchain",
    "compile_shared",
    "include_dir",
    "toolchain",
]

BASE_FLAGS = [
    "-std=c++17",
    "-O3",
    "-march=native",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
    # No contraction of a*b+c into an FMA across primitives: a fused kernel must round each
    # primitive like the unfused (sync-mode) program does, so both give the same numbers.
    "-ffp-contract=off",
    "-fPIC",
    "-shared",
]


class CompilerMissing(RuntimeError):
    """No usable C++ compiler (or the BLAS it links against) on this machine."""


class CompileError(RuntimeError):
    """The C++ compiler rejected generated code (a lazytorch bug: please report it)."""


def include_dir() -> Path:
    return Path(__file__).parent / "include"


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    version: str
    flags: tuple[str, ...]
    link: tuple[str, ...]
    fingerprint: str  # hex digest of everything that changes the compiled binary


def cpu_features() -> str:
    """The CPU's feature flags as /proc/cpuinfo lists them (the machine name elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.machine()


def _blas_flags() -> list[str]:
    # Found without importing scipy_openblas32: its __init__ reads its own version through
    # importlib.metadata, which costs ~20 ms of a new process's first materialization.
    import importlib.util

    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - a dependency
        raise CompilerMissing(
            "scipy-openblas32 (the BLAS lazytorch links) is not installed: pip install scipy-openblas32"
        )
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    names = sorted(
        f.name for f in lib.glob("libscipy_openblas*") if ".so" in f.name or f.suffix == ".dylib"
    )
    if not names:  # pragma: no cover - a broken install
        raise CompilerMissing(f"scipy-openblas32 has no shared library in {lib}")
    name = names[0][3:].split(".")[0]  # libscipy_openblas.so -> scipy_openblas
    return [f"-L{lib}", f"-l{name}", f"-Wl,-rpath,{lib}"]


def _generator_digest() -> str:
    """A digest of the code that writes programs (scheduler, codegen, the cpp backend).

    Part of every cache key, so a changed scheduler or lowering never loads a program that
    the previous version generated (the version number alone does not change in between
    releases, e.g. in an editable install).
    """
    import importlib.util

    h = hashlib.sha256()
    roots = [Path(__file__).parent]
    spec = importlib.util.find_spec("lazytorch.scheduler")
    if spec is not None and spec.submodule_search_locations:
        roots += [Path(p) for p in spec.submodule_search_locations]
    files = [f for r in roots for f in sorted(r.glob("*.py"))]
    backend = importlib.util.find_spec("lazytorch.runtime.cpp_backend")
    if backend is not None and backend.origin:
        files.append(Path(backend.origin))
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _compiler_version(cxx: str, memo_dir: Path | None) -> str:
    """The first line of `cxx --version`, remembered across processes in `memo_dir`.

    Running the compiler costs a few milliseconds of every new process's first
    materialization, even when every program it runs is already compiled on disk. The memo is
    keyed by the compiler binary's path, size and modification time, so an upgraded compiler
    is asked again.
    """
    st = os.stat(cxx)
    ident = f"{os.path.realpath(cxx)}:{st.st_size}:{st.st_mtime_ns}"
    memo = memo_dir / "compilers.json" if memo_dir is not None else None
    known: dict[str, str] = {}
    if memo is not None:
        try:
            known = json.loads(memo.read_text())
            if isinstance(known, dict) and isinstance(known.get(ident), str):
                return known[ident]
        except (OSError, ValueError):
            known = {}
    import subprocess  # here: a process that only loads compiled programs never needs it

    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise CompilerMissing(f"{cxx} --version failed: {e}") from e
    version = out.stdout.splitlines()[0] if out.stdout else cxx
    if memo is not None and memo_dir is not None and memo_dir.is_dir():
        known = (
            {k: v for k, v in known.items() if isinstance(v, str)}
            if isinstance(known, dict)
            else {}
        )
        known[ident] = version
        try:  # atomic: a reader sees the old memo or the new one, never half of one
            fd, tmp = tempfile.mkstemp(dir=memo_dir, prefix=".compilers-")
            with os.fdopen(fd, "w") as f:
                json.dump(known, f)
            os.replace(tmp, memo)
        except OSError:
            pass  # the memo is an optimization only
    return version


@functools.lru_cache(maxsize=4)
def toolchain(memo_dir: Path | None = None) -> Toolchain:
    """The compiler and flags in use (looked up once); CompilerMissing if there is none.

    `memo_dir` (the compile cache's directory) remembers the compiler's version between
    processes.
    """
    wanted = os.environ.get("LAZYTORCH_CXX", "").strip()
    candidates = [wanted] if wanted else ["g++", "c++"]
    cxx = next((shutil.which(c) for c in candidates if shutil.which(c)), None)
    if cxx is None:
        raise CompilerMissing(
            f"no C++ compiler found (looked for {', '.join(candidates)}); install g++ "
            "(Debian/Ubuntu: apt install g++) or set LAZYTORCH_CXX"
        )
    version = _compiler_version(cxx, memo_dir)
    extra = shlex.split(os.environ.get("LAZYTORCH_CXXFLAGS", ""))
    flags = (*BASE_FLAGS, f"-I{include_dir()}", *extra)
    link = tuple(_blas_flags())
    h = hashlib.sha256()
    for part in (version, " ".join(flags), " ".join(link), cpu_features()):
        h.update(part.encode())
        h.update(b"\0")
    for header in sorted(include_dir().glob("*.h")):
        h.update(header.read_bytes())
    h.update(_generator_digest().encode())
    return Toolchain(cxx, version, flags, link, h.hexdigest())


def compile_shared(
    source: str, out: Path, *, tc: Toolchain | None = None, blas: bool = True
) -> float:
    """Compile `source` into the shared object `out`; returns the seconds it took.

    `blas=False` leaves OpenBLAS out of the link: loading a program that does not call it
    then costs no dynamic loading of a 30 MB library.
    """
    import subprocess
    import time

    tc = tc or toolchain()
    link = tc.link if blas else ()
    units = split_units(source, os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="lazytorch-cc-") as tmp:
        obj = Path(tmp) / "program.so"
        t0 = time.perf_counter()
        if units is None:
            src = Path(tmp) / "program.cpp"
            src.write_text(source)
            _check(subprocess.run([tc.cxx, *tc.flags, str(src), "-o", str(obj), *link],
                                  capture_output=True, text=True), tc, source)  # fmt: skip
        else:
            # One g++ per unit, all at once, then one link: a big program compiles in about
            # the time of its largest unit instead of the sum (g++ uses one core).
            procs = []
            for i, unit in enumerate(units):
                src = Path(tmp) / f"unit{i}.cpp"
                src.write_text(unit)
                cmd = [tc.cxx, *tc.flags, "-c", str(src), "-o", str(src.with_suffix(".o"))]
                procs.append(subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True))
            for proc in procs:
                _, err = proc.communicate()
                _check(subprocess.CompletedProcess(proc.args, proc.returncode, "", err), tc, source)
            objs = [str(Path(tmp) / f"unit{i}.o") for i in range(len(units))]
            _check(subprocess.run([tc.cxx, *tc.flags, *objs, "-o", str(obj), *link],
                                  capture_output=True, text=True), tc, source)  # fmt: skip
        dt = time.perf_counter() - t0
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(obj), out)
    return dt


def _check(res: Any, tc: Toolchain, source: str) -> None:
    if res.returncode != 0:
        raise CompileError(
            f"C++ compilation failed ({tc.cxx}):\n{res.stderr[-4000:]}\n"
            "This is a lazytorch bug; the generated source is kept at "
            f"{_keep(source)}"
        )


# How generated programs mark their step functions (see codegen/cpp.py); a program with at
# least SPLIT_MIN_STEPS of them compiles as several units in parallel.
STEP_PREFIX = "static __attribute__((noinline)) void "
SPLIT_MIN_STEPS = 24


def split_units(source: str, cores: int) -> list[str] | None:
    """`source` as two translation units that link into the same program, or None when it
    is too small to gain (or there is one core).

    Every unit repeats the header (pragmas, includes). The step functions are split in two
    halves by size and lose ``static`` (hidden visibility keeps them private to the shared
    object); the unit with the entry point declares the other unit's functions.
    """
    if cores < 2:
        return None
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(STEP_PREFIX)]
    entry = next((i for i, line in enumerate(lines) if line.startswith('extern "C"')), None)
    if len(starts) < SPLIT_MIN_STEPS or entry is None or entry < starts[-1]:
        return None
    # Each function's leading comment lines belong to it.
    bounds = []
    for i in starts:
        while i > 0 and lines[i - 1].startswith("//"):
            i -= 1
        bounds.append(i)
    while entry > 0 and lines[entry - 1].startswith("//"):
        entry -= 1
    header = lines[: bounds[0]]
    funcs = [lines[a:b] for a, b in zip(bounds, [*bounds[1:], entry])]
    half, size, cut = sum(map(len, funcs)) / 2, 0, len(funcs)
    for k, f in enumerate(funcs):
        size += len(f)
        if size >= half:
            cut = k + 1
            break
    exported = "static __attribute__((noinline)) void "
    hidden = '__attribute__((noinline, visibility("hidden"))) void '

    def export(f: list[str]) -> list[str]:
        return [ln.replace(exported, hidden, 1) if ln.startswith(exported) else ln for ln in f]

    first = [ln for f in funcs[:cut] for ln in export(f)]
    protos = [
        ln.replace(exported, hidden, 1).rstrip().removesuffix("{").rstrip() + ";"
        for f in funcs[:cut]
        for ln in f
        if ln.startswith(exported)
    ]
    second = [ln for f in funcs[cut:] for ln in f]
    return [
        "\n".join([*header, *first]) + "\n",
        "\n".join([*header, *protos, *second, *lines[entry:]]),
    ]


def _keep(source: str) -> str:
    fd, path = tempfile.mkstemp(prefix="lazytorch-failed-", suffix=".cpp")
    with os.fdopen(fd, "w") as f:
        f.write(source)
    return path
