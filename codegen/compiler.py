"""Compiling generated C++ into shared objects, and what identifies the result.

Flags: ``-O2 -fvect-cost-model=dynamic -march=native -fopenmp`` (see `BASE_FLAGS` for why
not ``-O3``) plus ``-fno-math-errno -fno-trapping-math`` (they let
g++ vectorize sqrt and if-convert without changing any result) — never ``-ffast-math``, so
NaN and Inf propagate as in torch — and 512-bit vectors on AVX-512 CPUs (`_vector_flags`).
``LAZYTORCH_CXX`` picks the compiler (default: ``g++``, then ``c++``) and
``LAZYTORCH_CXXFLAGS`` adds flags; both are part of the fingerprint that keys the compile
cache, together with the compiler's version, the CPU's features and the runtime headers'
contents.

Failures are sorted by cause. `CompilerMissing` (no compiler, or ``LAZYTORCH_CXX`` names
something that is not one) and `ToolchainError` (the compiler, its flags, the BLAS or the
temporary directory fail whatever the program: ``LAZYTORCH_CXXFLAGS`` g++ rejects, a full
``TMPDIR``) are the machine's; their messages name the variable or directory and the fix.
`CompileError` — the compiler rejects generated code although it compiles a trivial program
with the same flags — is a lazytorch bug.
"""

from __future__ import annotations

import contextlib
import errno
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

from lazytorch._settings import env_value, raw_value

__all__ = [
    "OPT_FLAGS",
    "CompileError",
    "CompilerMissing",
    "Toolchain",
    "ToolchainError",
    "compile_shared",
    "environment_error",
    "include_dir",
    "toolchain",
]

# -O2 with -O3's vectorizer cost model, not -O3: g++'s time on a GPT-small training
# step's program 2.71 -> 1.53 s (the cold first step 2.1 -> 1.4 s) while the steps run
# as fast (2-core EPYC: GPT-small, MLP and CNN steps, softmax, layer_norm and the
# elementwise chain all within noise; benchmarks/RESULTS.md, 2026-11-27). -O3's extra
# time goes to loop peeling, unswitching and unrolling the kernels do not need: their
# hot loops are `#pragma omp simd` over explicit lanes, vectorized at either level.
# A `-O3` in LAZYTORCH_CXXFLAGS comes later and wins.
OPT_FLAGS = ("-O2", "-fvect-cost-model=dynamic")

BASE_FLAGS = [
    "-std=c++17",
    *OPT_FLAGS,
    "-march=native",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
    # No contraction of a*b+c into an FMA across primitives: a fused kernel must round each
    # primitive like the unfused (sync-mode) program does, so both give the same numbers.
    "-ffp-contract=off",
    # No SLP (straight-line) vectorization: g++ 12.2 with -O3 -march=native on an AVX-512
    # CPU miscompiles a fully unrolled 4-wide kernel that reads a value and its transpose
    # under masks (g + tril(g, -1).T gave a row's own element where the transposed one
    # belongs; tests/codegen/test_compiler_bugs.py). Loops are vectorized by the loop
    # vectorizer (`#pragma omp simd`), which stays on.
    "-fno-tree-slp-vectorize",
    "-fPIC",
    "-shared",
]


class ToolchainError(RuntimeError):
    """The machine's C++ toolchain cannot build any program: the compiler
    (``LAZYTORCH_CXX``), its flags (``LAZYTORCH_CXXFLAGS``), the BLAS it links or the
    temporary directory (``TMPDIR``). The message names which, and the fix."""


class CompilerMissing(ToolchainError):
    """No usable C++ compiler (or the BLAS it links against) on this machine."""


class CompileError(RuntimeError):
    """The C++ compiler rejected generated code that a working toolchain should compile
    (it compiles a trivial program with the same flags): a lazytorch bug, please report it."""


def include_dir() -> Path:
    return Path(__file__).parent / "include"


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    version: str
    flags: tuple[str, ...]
    link: tuple[str, ...]
    fingerprint: str  # hex digest of everything that changes the compiled binary
    extra: tuple[str, ...] = ()  # the flags from LAZYTORCH_CXXFLAGS (the end of `flags`)


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


def blas_library() -> Path:
    """The shared library of the BLAS programs link (scipy-openblas32's); CompilerMissing
    when it is not installed."""
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
    return lib / names[0]


@functools.lru_cache(maxsize=1)
def _mkl_wheel_library() -> Path | None:
    """libmkl_rt of the installed ``mkl`` wheel, else None (looked up once: reading the
    installed distributions costs ~10 ms, and the toolchain and the backend both ask)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("mkl")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if f.name.startswith("libmkl_rt.so"):
            return Path(str(dist.locate_file(f))).resolve()
    return None


def mkl_library() -> Path:
    """libmkl_rt of the ``mkl`` wheel (``LAZYTORCH_BLAS=mkl``); CompilerMissing when the
    wheel is not installed."""
    path = _mkl_wheel_library()
    if path is None:
        raise CompilerMissing(
            "LAZYTORCH_BLAS=mkl: the mkl wheel is not installed. Fix: pip install "
            "'lazytorch[mkl]' (or unset LAZYTORCH_BLAS for OpenBLAS)"
        )
    return path


def blas_choice() -> str:
    """``mkl`` or ``openblas``: LAZYTORCH_BLAS, whose default `auto` is MKL where the mkl
    wheel is installed (``pip install 'lazytorch[mkl]'``); an explicit ``mkl`` without the
    wheel raises CompilerMissing naming the fix.

    float32/float64 GEMMs then go through MKL (lazytorch_blas.h, LT_BLAS_MKL) while OpenBLAS
    stays linked for bfloat16's sbgemm. Programs are not linked against MKL: the cpp
    backend loads it into the global namespace before any program (runtime/cpp_backend.py)
    and a program's cblas_sgemm binds to it as it loads. Linking libmkl_rt's symbol table
    doubled g++'s time on a small GEMM program (0.12 -> 0.23 s).
    """
    choice = str(env_value("LAZYTORCH_BLAS"))
    if choice == "mkl":
        mkl_library()
    elif choice == "auto":
        choice = "openblas" if _mkl_wheel_library() is None else "mkl"
    return choice


def _blas_flags() -> list[str]:
    path = blas_library()
    name = path.name[3:].split(".")[0]  # libscipy_openblas.so -> scipy_openblas
    return [f"-L{path.parent}", f"-l{name}", f"-Wl,-rpath,{path.parent}"]


def _generator_digest() -> str:
    """A digest of the code that writes programs (scheduler, codegen, the cpp backend, and
    the primitive definitions, whose cost and compare facts the lowerings read).

    Part of every cache key, so a changed scheduler or lowering never loads a program that
    the previous version generated (the version number alone does not change in between
    releases, e.g. in an editable install).
    """
    h = hashlib.sha256()
    for f in _generator_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _generator_files() -> list[Path]:
    """The source files `_generator_digest` covers."""
    import importlib.util

    roots = [Path(__file__).parent]
    for package in ("lazytorch.scheduler", "lazytorch.ir.prims"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            roots += [Path(p) for p in spec.submodule_search_locations]
    files = [f for r in roots for f in sorted(r.glob("*.py"))]
    primitives = importlib.util.find_spec("lazytorch.ir.primitives")
    if primitives is not None and primitives.origin:
        files.append(Path(primitives.origin))
    backend = importlib.util.find_spec("lazytorch.runtime.cpp_backend")
    if backend is not None and backend.origin:
        files.append(Path(backend.origin))
    return files


def _compiler_ident(cxx: str) -> str:
    """The compiler binary's identity for the memo: its real path, size and modification
    time (an upgraded or replaced compiler is a new identity, so it is asked again)."""
    st = os.stat(cxx)
    return f"{os.path.realpath(cxx)}:{st.st_size}:{st.st_mtime_ns}"


def _memo_read(memo_dir: Path | None) -> dict[str, str]:
    """The answers remembered in ``memo_dir/compilers.json`` (none if it is unreadable)."""
    if memo_dir is None:
        return {}
    try:
        known = json.loads((memo_dir / "compilers.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(v, str)}


def _memo_write(memo_dir: Path | None, key: str, value: str) -> None:
    """Remember `value` under `key`, replacing the memo atomically (a reader sees the old
    memo or the new one, never half of one); an optimization only, so failures pass."""
    if memo_dir is None or not memo_dir.is_dir():
        return
    known = _memo_read(memo_dir)
    known[key] = value
    try:
        fd, tmp = tempfile.mkstemp(dir=memo_dir, prefix=".compilers-")
        with os.fdopen(fd, "w") as f:
            json.dump(known, f)
        os.replace(tmp, memo_dir / "compilers.json")
    except OSError:
        pass


def _compiler_version(cxx: str, memo_dir: Path | None) -> str:
    """The first line of `cxx --version`, remembered across processes in `memo_dir`.

    Running the compiler costs a few milliseconds of every new process's first
    materialization, even when every program it runs is already compiled on disk. The memo is
    keyed by `_compiler_ident`, so an upgraded compiler is asked again.
    """
    ident = _compiler_ident(cxx)
    known = _memo_read(memo_dir).get(ident)
    if known is not None:
        return known
    import subprocess  # here: a process that only loads compiled programs never needs it

    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise CompilerMissing(
            f"{_named(cxx)} cannot be run ({why}), so it is not a working C++ compiler. "
            f"Fix: {_FIX_CXX}"
        ) from e
    if out.returncode != 0:
        raise CompilerMissing(
            f"{_named(cxx)} is not a working C++ compiler: `{cxx} --version` exited with "
            f"status {out.returncode}{_tail(out.stderr) or '. '}Fix: {_FIX_CXX}"
        )
    version = out.stdout.splitlines()[0] if out.stdout else cxx
    _memo_write(memo_dir, ident, version)
    return version


_FIX_CXX = (
    "point LAZYTORCH_CXX at a C++ compiler (g++ or clang++: a name on PATH or a full "
    "path), or unset it to use g++"
)


def _named(cxx: str) -> str:
    """`cxx` as the user chose it: ``LAZYTORCH_CXX='...'`` when that variable picked it."""
    wanted = env_value("LAZYTORCH_CXX")
    if not wanted:
        return cxx
    return f"LAZYTORCH_CXX={wanted!r}" + (f" ({cxx})" if cxx != wanted else "")


def _tail(stderr: str | None, chars: int = 2000) -> str:
    text = (stderr or "").strip()
    return f":\n{text[-chars:]}\n" if text else ""


def _wanted_compiler(wanted: str) -> str:
    """The executable LAZYTORCH_CXX names; CompilerMissing saying what is wrong with it."""
    found = shutil.which(os.path.expanduser(wanted))
    if found is not None:
        return found
    path = Path(wanted).expanduser()
    if os.sep not in wanted and not path.exists():
        problem = "is not a program on PATH"
    elif not path.exists():
        problem = "does not exist"
    elif path.is_dir():
        problem = "is a directory, not a compiler"
    elif not os.access(path, os.X_OK):
        problem = "is not executable, so it is not a compiler"
    else:
        problem = "is not an executable file"
    hint = ""
    if len(wanted.split()) > 1:
        hint = " (LAZYTORCH_CXX names one program; put flags in LAZYTORCH_CXXFLAGS)"
    raise CompilerMissing(f"LAZYTORCH_CXX={wanted!r} {problem}{hint}. Fix: {_FIX_CXX}")


def _extra_flags() -> list[str]:
    raw = env_value("LAZYTORCH_CXXFLAGS")
    try:
        return shlex.split(raw)
    except ValueError as e:  # an unclosed quote
        raise ToolchainError(
            f"LAZYTORCH_CXXFLAGS={raw!r} cannot be split into flags ({e}). Fix: close the "
            "quote (the value is split like a shell command line), or unset LAZYTORCH_CXXFLAGS"
        ) from None


def _accepted(cxx: str, flag: str, memo_dir: Path | None, *, assemble: bool) -> bool:
    """Whether `cxx` accepts `flag`: preprocessing an empty file, or with `assemble`
    compiling it to an object (an ``-Wa,`` flag is judged by the assembler). The answer is
    remembered in `memo_dir` like the compiler's version, keyed by the compiler binary:
    asking costs a process start in every new process, cache hits included."""
    key = f"{_compiler_ident(cxx)} accepts {flag}"
    known = _memo_read(memo_dir).get(key)
    if known in ("yes", "no"):
        return known == "yes"
    import subprocess

    stage = "-c" if assemble else "-E"
    try:
        probe = subprocess.run(
            [cxx, flag, "-x", "c++", stage, "-o", os.devnull, os.devnull],
            capture_output=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return False  # a compiler that cannot answer this will say why when it compiles
    _memo_write(memo_dir, key, "yes" if probe.returncode == 0 else "no")
    return probe.returncode == 0


@functools.lru_cache(maxsize=8)
def _isa_flags(cxx: str, memo_dir: Path | None = None) -> tuple[str, ...]:
    """Instruction sets that ``-march=native`` enables but the toolchain mishandles.

    AVX512-FP16: g++ 12 emits masked ``vmovsh`` forms for float16 code that binutils 2.40
    cannot assemble ("unsupported masking"), so a float16 kernel fails to build on a CPU
    that has the extension (Sapphire Rapids and later). lazytorch computes float16 in
    float32 and converts with F16C/AVX-512F instructions, which stay enabled: turning the
    extension off loses nothing. Asked only on such CPUs, and only of a compiler that
    knows the flag.
    """
    if "avx512_fp16" not in cpu_features().split():
        return ()
    flag = "-mno-avx512fp16"
    return (flag,) if _accepted(cxx, flag, memo_dir, assemble=False) else ()


UNALIGNED_MOVES = "-Wa,-muse-unaligned-vector-move"


@functools.lru_cache(maxsize=8)
def _assembler_flags(cxx: str, memo_dir: Path | None = None) -> tuple[str, ...]:
    """Unaligned forms for every vector move, where the assembler can (binutils 2.38+).

    g++ 12.2 at -O2 with AVX-512 placed a 16-byte stack array in the red zone of a frame
    it had made 8 mod 16, then stored to it with the aligned ``vmovdqa``: the bool
    min-reduction of a generated kernel crashed the process with SIGSEGV
    (tests/codegen/test_compiler_bugs.py holds it). The assembler's
    ``-muse-unaligned-vector-move`` writes ``vmovdqu``/``vmovups`` wherever g++ wrote an
    aligned move, so no miscounted alignment can fault, at whatever -O level. On every x86
    CPU since Nehalem an unaligned move of aligned data costs the same as the aligned one,
    and the kernels' results cannot change (the bytes moved are the same).
    """
    flag = UNALIGNED_MOVES
    return (flag,) if _accepted(cxx, flag, memo_dir, assemble=True) else ()


def _vector_flags() -> tuple[str, ...]:
    """512-bit vectors where the CPU has AVX-512F.

    ``-march=native`` on g++ 12 still prefers 256-bit vectors on most AVX-512 CPUs (a
    guard against the clock drop of early Skylake-X parts). lazytorch's kernels are
    long SIMD loops over the math header, compute-bound where it matters (exp, erf, the
    bfloat16 conversions), and the wider vectors pay on the CPUs measured: on a 2-core
    Sapphire Rapids, the GPT-small step 4-5% faster (float32 and bf16 autocast) and the
    MLP's bf16 step 18% (benchmarks/RESULTS.md, 2026-11-26). Results are unchanged: the
    kernels fix their summation order with explicit lanes and never contract or
    reassociate. A ``-mprefer-vector-width`` in ``LAZYTORCH_CXXFLAGS`` comes later and wins.
    """
    return ("-mprefer-vector-width=512",) if "avx512f" in cpu_features().split() else ()


@functools.lru_cache(maxsize=4)
def toolchain(memo_dir: Path | None = None) -> Toolchain:
    """The compiler and flags in use (looked up once); CompilerMissing if there is none.

    `memo_dir` (the compile cache's directory) remembers the compiler's version between
    processes.
    """
    wanted = env_value("LAZYTORCH_CXX")
    if wanted:
        cxx = _wanted_compiler(wanted)
    else:
        cxx = shutil.which("g++") or shutil.which("c++")
        if cxx is None:
            raise CompilerMissing(
                "no C++ compiler found (looked for g++, c++ on PATH). Fix: install g++ "
                "(Debian/Ubuntu: apt install g++), or set LAZYTORCH_CXX to a C++ compiler"
            )
    version = _compiler_version(cxx, memo_dir)
    extra = _extra_flags()
    # LAZYTORCH_CXXFLAGS comes last: it wins over ours, and `_failure` finds the flags
    # without it by cutting `extra` off the end.
    blas_define = ("-DLT_BLAS_MKL",) if blas_choice() == "mkl" else ()
    flags = (
        *BASE_FLAGS,
        *_isa_flags(cxx, memo_dir),
        *_assembler_flags(cxx, memo_dir),
        *_vector_flags(),
        f"-I{include_dir()}",
        *blas_define,
        *extra,
    )
    link = tuple(_blas_flags())
    h = hashlib.sha256()
    for part in (version, " ".join(flags), " ".join(link), cpu_features()):
        h.update(part.encode())
        h.update(b"\0")
    for header in sorted(include_dir().glob("*.h")):
        h.update(header.read_bytes())
    h.update(_generator_digest().encode())
    return Toolchain(cxx, version, flags, link, h.hexdigest(), tuple(extra))


def compile_shared(
    source: str, out: Path, *, tc: Toolchain | None = None, blas: bool = True
) -> float:
    """Compile `source` into the shared object `out`; returns the seconds it took.

    `blas=False` leaves OpenBLAS out of the link: loading a program that does not call it
    then costs no dynamic loading of a 30 MB library. A failure raises `ToolchainError` when
    the machine is at fault (see `_failure`), `CompileError` when the generated code is.
    """
    import time

    tc = tc or toolchain()
    link = tc.link if blas else ()
    units = split_units(source, env_value("LAZYTORCH_COMPILE_CORES") or os.cpu_count() or 1)
    try:
        with tempfile.TemporaryDirectory(prefix="lazytorch-cc-") as tmp:
            t0 = time.perf_counter()
            failed = _run_compiler(tc.cxx, tc.flags, link, source, units, Path(tmp))
            dt = time.perf_counter() - t0
            if failed is not None:
                raise _failure(failed, tc, link, source, units)
            obj = Path(tmp) / "program.so"
            if not obj.is_file():
                raise ToolchainError(
                    f"{_named(tc.cxx)} exited with status 0 but wrote no shared object, so "
                    f"it is not a C++ compiler. Fix: {_FIX_CXX}"
                )
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(obj), out)
    except OSError as e:
        err = environment_error(e)
        if err is None:
            raise
        raise err from e
    return dt


def _run_compiler(
    cxx: str,
    flags: tuple[str, ...],
    link: tuple[str, ...],
    source: str,
    units: list[str] | None,
    tmp: Path,
) -> Any:
    """Build ``tmp/program.so`` from `source` (or its `units`); the first compiler run that
    failed (a CompletedProcess), or None."""

    obj = tmp / "program.so"
    if units is None:
        src = tmp / "program.cpp"
        src.write_text(source)
        res = _wait(_spawn([cxx, *flags, str(src), "-o", str(obj), *link]))
        return res if res.returncode != 0 else None
    # One g++ per unit, all at once, then one link: a big program compiles in about the
    # time of its largest unit instead of the sum (g++ uses one core).
    procs = []
    failed = None
    try:
        # (spawned inside the try: a Ctrl-C between two spawns stops the ones started)
        for i, unit in enumerate(units):
            src = tmp / f"unit{i}.cpp"
            src.write_text(unit)
            cmd = [cxx, *flags, "-c", str(src), "-o", str(src.with_suffix(".o"))]
            procs.append(_spawn(cmd))
        for proc in procs:  # every one waited for, even after a failure
            res = _wait(proc)
            if res.returncode != 0 and failed is None:
                failed = res
    except BaseException:  # Ctrl-C: the units not waited for yet are stopped too
        for proc in procs:
            _kill(proc)
            _running.discard(proc)
        raise
    if failed is not None:
        return failed
    objs = [str(tmp / f"unit{i}.o") for i in range(len(units))]
    res = _wait(_spawn([cxx, *flags, *objs, "-o", str(obj), *link]))
    return res if res.returncode != 0 else None


# Compiler processes running now (any thread): stopped at exit by a background compile's
# owner (`lazytorch.runtime.tiered`), so no compiler outlives the process that wanted it.
# They stay in our process group, so a signal to the group (Ctrl-C, `timeout`, a closed
# terminal) reaches them as it reaches us.
_running: set[Any] = set()
_stopped = False


def _spawn(cmd: list[str]) -> Any:
    import subprocess  # lazy: most imports of this module never run a compiler

    if _stopped:
        raise ToolchainError("the process is exiting: no new compiler runs")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _running.add(proc)
    return proc


def _wait(proc: Any) -> Any:
    import subprocess  # lazy: as in _spawn

    try:
        out, err = proc.communicate()
    except BaseException:  # an interrupt: SIGINT to this process alone reaches no compiler
        _kill(proc)
        raise
    finally:
        _running.discard(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kill(proc: Any) -> None:
    """Kill a compiler and the processes it runs.

    The g++ driver killed alone leaves its cc1plus and as running to the end of their
    work, so the driver is stopped first (it starts no more), then its descendants, found
    in /proc, are killed, then the driver. Where there is no /proc, the driver alone.
    """
    import signal  # lazy: only at a stop

    if proc.poll() is not None:
        return  # ended and reaped: its pid may be another process's now
    with contextlib.suppress(OSError):
        os.kill(proc.pid, signal.SIGSTOP)
    for pid in _descendants(proc.pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (Linux /proc; empty elsewhere)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for d in entries:
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
            children.setdefault(ppid, []).append(int(d))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def stop_running_compilers() -> None:
    """Stop every compiler process this process started and start no more (at exit)."""
    global _stopped
    _stopped = True
    for proc in list(_running):
        _kill(proc)


# What `_failure` compiles to tell a broken toolchain from generated code it rejects.
_PROBE = 'extern "C" int lazytorch_probe(void) { return 0; }\n'


def _trial(
    tc: Toolchain, flags: tuple[str, ...], link: tuple[str, ...], source: str, units: Any
) -> Any:
    """Compile `source` once more with `flags` in a fresh directory: the failure or None."""
    with tempfile.TemporaryDirectory(prefix="lazytorch-probe-") as tmp:
        return _run_compiler(tc.cxx, flags, link, source, units, Path(tmp))


def _failure(res: Any, tc: Toolchain, link: tuple[str, ...], source: str, units: Any) -> Exception:
    """The error for a failed compile of generated `source`, by cause.

    The machine's fault (`ToolchainError`, naming the variable or directory to fix): the
    compiler was killed, the disk is full, the compiler fails even on a trivial program
    (with ``LAZYTORCH_CXXFLAGS`` blamed when it works without them), or the program
    compiles without ``LAZYTORCH_CXXFLAGS``. Anything else is a lazytorch bug
    (`CompileError`).
    """
    stderr = res.stderr or ""
    if res.returncode < 0:  # the OOM killer's SIGKILL, or a user's ^C
        return ToolchainError(
            f"{_named(tc.cxx)} was killed by signal {-res.returncode} while compiling a "
            f"program{_tail(stderr) or '. '}Fix: if the machine ran out of memory, free some "
            "and run again"
        )
    full = _disk_full(stderr)
    if full is not None:
        return full
    base = tc.flags[: len(tc.flags) - len(tc.extra)]
    probe = _trial(tc, tc.flags, link, _PROBE, None)
    if probe is not None:
        full = _disk_full(probe.stderr)
        if full is not None:
            return full
        if tc.extra and _trial(tc, base, link, _PROBE, None) is None:
            return _flags_error(tc, stderr)
        install = "install a complete C++ toolchain (Debian/Ubuntu: apt install g++), or "
        what = "" if env_value("LAZYTORCH_CXX") else install
        return ToolchainError(
            f"{_named(tc.cxx)} fails to compile even a trivial program with lazytorch's "
            f"flags ({' '.join([*tc.flags, *link])}){_tail(stderr) or '. '}"
            f"Fix: {what}{_FIX_CXX}"
        )
    if tc.extra and _trial(tc, base, link, source, units) is None:
        return _flags_error(tc, stderr)
    return CompileError(
        f"C++ compilation failed ({tc.cxx}):\n{stderr[-4000:]}\n"
        "This is a lazytorch bug; the generated source is kept at "
        f"{_keep(source)}"
    )


def _flags_error(tc: Toolchain, stderr: str) -> ToolchainError:
    raw = raw_value("LAZYTORCH_CXXFLAGS") or " ".join(tc.extra)
    return ToolchainError(
        f"LAZYTORCH_CXXFLAGS={raw!r}: {tc.cxx} fails with these flags and compiles the same "
        f"program without them{_tail(stderr) or '. '}Fix: correct LAZYTORCH_CXXFLAGS, or unset it"
    )


def _disk_full(stderr: str | None) -> ToolchainError | None:
    """The error for a compiler run that failed writing to a full disk, if it did."""
    for line in (stderr or "").splitlines():
        if "No space left on device" in line or "Disk quota exceeded" in line:
            return ToolchainError(
                f"the C++ compiler ran out of disk space: {line.strip()}\n"
                f"It writes its temporary files to {_tmp_named()}. Fix: free space there, or "
                "set TMPDIR to a directory on a disk with room"
            )
    return None


def _tmp_named() -> str:
    """Where temporary files go, as the user would set it."""
    env = os.environ.get("TMPDIR", "").strip()
    if env:
        return f"TMPDIR={env!r}"
    with contextlib.suppress(OSError):
        return f"{tempfile.gettempdir()} (TMPDIR is not set)"
    return "the default temporary directory (TMPDIR is not set)"


def environment_error(exc: OSError) -> ToolchainError | None:
    """The `ToolchainError` for an OSError raised while compiling when the machine caused
    it — a full disk, an unusable temporary directory — or None.

    >>> import errno
    >>> err = environment_error(OSError(errno.ENOSPC, "No space left on device", "/t/a.so"))
    >>> "TMPDIR" in str(err)
    True
    """
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ToolchainError(
            f"no space left to write {exc.filename or 'a temporary file'} while compiling a "
            f"program ({exc.strerror}). Temporary files go to {_tmp_named()}. Fix: free space "
            "there, or set TMPDIR to a directory on a disk with room"
        )
    fix = "Fix: make it writable, or set TMPDIR to a writable directory"
    if exc.filename is None and "No usable temporary directory" in str(exc):
        return ToolchainError(f"no writable temporary directory for compiling ({exc}). {fix}")
    tmp = tempfile.tempdir
    if tmp is None or exc.filename is None:
        return None
    unusable = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR)
    inside = os.path.abspath(os.fspath(exc.filename)).startswith(os.path.abspath(tmp) + os.sep)
    if exc.errno in unusable and inside:
        return ToolchainError(
            f"the temporary directory {tmp} cannot be used for compiling: {exc.strerror}: "
            f"{exc.filename}. {fix}"
        )
    return None


# How generated programs mark their step functions (see codegen/cpp.py). A program compiles
# as one translation unit per STEPS_PER_UNIT step functions, at most one per core (and
# MAX_UNITS): g++ optimizes a unit on one core, so a big program compiles in about the time
# of its largest unit; each extra unit costs a compiler process and a parse of the runtime
# headers (about 0.05 s of CPU).
# (a step whose loops are unswitched adds an optimize attribute after noinline)
STEP_PREFIX = "static __attribute__((noinline"
STEPS_PER_UNIT = 12
MAX_UNITS = 8


def unit_count(steps: int, cores: int) -> int:
    """How many translation units a program with `steps` step functions compiles as.

    >>> unit_count(69, 2), unit_count(69, 16), unit_count(23, 16), unit_count(500, 1)
    (2, 5, 1, 1)
    """
    return max(1, min(cores, MAX_UNITS, steps // STEPS_PER_UNIT))


def _compile_cost(function: list[str]) -> int:
    """An estimate of g++'s time for a function, in characters of source: its length plus
    a fixed cost per function (fitted on a GPT training step's kernels at -O3: time
    follows length with r = 0.77, lines or loops predict it worse). Only the ratios
    matter (it balances units); -O2 took 0.56x -O3's time on that whole program."""
    return sum(map(len, function)) + 900


def split_units(source: str, cores: int) -> list[str] | None:
    """`source` as `unit_count` translation units that link into the same program (the
    entry point in the last), or None when it compiles as one.

    Every unit repeats the header (pragmas, includes). The step functions are dealt to
    the units by estimated compile time (`_compile_cost`), largest first to the lightest
    unit, keeping their order within a unit. Functions outside the last unit
    lose ``static`` (hidden visibility keeps them private to the shared object); the last
    unit declares them.
    """
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(STEP_PREFIX)]
    entry = next((i for i, line in enumerate(lines) if line.startswith('extern "C"')), None)
    count = unit_count(len(starts), cores)
    if count < 2 or entry is None or entry < starts[-1]:
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
    cost = [_compile_cost(f) for f in funcs]
    load = [0] * count
    load[-1] = _compile_cost([])  # the entry point: calls only, compiled in ~0.02 s
    dealt: list[list[int]] = [[] for _ in range(count)]
    for k in sorted(range(len(funcs)), key=lambda k: -cost[k]):
        unit = min(range(count), key=lambda u: (load[u], u))
        load[unit] += cost[k]
        dealt[unit].append(k)
    exported = STEP_PREFIX
    hidden = '__attribute__((noinline, visibility("hidden")'

    def export(f: list[str]) -> list[str]:
        return [ln.replace(exported, hidden, 1) if ln.startswith(exported) else ln for ln in f]

    units = [[ln for k in sorted(ks) for ln in export(funcs[k])] for ks in dealt[:-1]]
    protos = [
        ln.replace(exported, hidden, 1).rstrip().removesuffix("{").rstrip() + ";"
        for ks in dealt[:-1]
        for k in sorted(ks)
        for ln in funcs[k]
        if ln.startswith(exported)
    ]
    last = [ln for k in sorted(dealt[-1]) for ln in funcs[k]]
    return [
        *("\n".join([*header, *unit]) + "\n" for unit in units),
        "\n".join([*header, *protos, *last, *lines[entry:]]),
    ]


def _keep(source: str) -> str:
    try:
        fd, path = tempfile.mkstemp(prefix="lazytorch-failed-", suffix=".cpp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
    except OSError as e:  # the report matters more than the copy
        return f"(nowhere: it could not be written: {e})"
    return path
