"""The ``cpp`` backend: schedule, generate C++, compile, cache on disk, run via lazytorch._C.

A compiled program is stored in the disk cache (`lazytorch.runtime.disk_cache`) under a
key hashing the canonical program text, the toolchain fingerprint (compiler version,
flags, CPU features, runtime headers, and the source of the scheduler and code generator),
the lazytorch version and the options (determinism).
Next to the shared object the entry keeps the generated source, the key's source (the
exact bytes hashed into the key, program text included: `key_source`) and a *manifest* —
how to call the program (parameters, scalar slots, output shapes, arena size) — so a new
process loads it without scheduling or generating anything. The disk cache seals the
manifest to the key; on top of that a loaded manifest must fit the program being run
(`manifest_problem`), else the entry is dropped and the program recompiled.
``LAZYTORCH_DISK_CACHE=0`` turns the disk cache off (programs then compile into a temporary
directory); a read-only cache directory is used for loading only.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import logging
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from lazytorch import _native, metrics
from lazytorch._settings import env_value
from lazytorch._version import __version__
from lazytorch.codegen.compiler import (
    CompilerMissing,
    blas_choice,
    blas_library,
    cpu_features,
    mkl_library,
    toolchain,
)
from lazytorch.ir.dtypes import BY_NAME
from lazytorch.ir.generalize import Generalized
from lazytorch.ir.node import format_loc
from lazytorch.ir.poly import Poly
from lazytorch.ir.program import Program, format_shape
from lazytorch.runtime.backends import get_backend, has_empty_value, runtime_error
from lazytorch.runtime.disk_cache import (
    KEY_FILE,
    CacheDirError,
    CacheLockTimeout,
    DiskCache,
    default_cache_dir,
)

__all__ = [
    "CppBackend",
    "CppExecutable",
    "SymbolicProgram",
    "key_source",
    "key_source_fields",
    "manifest_of",
    "manifest_problem",
]

log = logging.getLogger("lazytorch.compile")  # LAZYTORCH_LOG=compile


def manifest_of(sched: Any) -> dict[str, Any]:
    """How to call a compiled schedule: everything CppExecutable needs, as JSON data."""
    unique: list[int] = []
    for b in sched.outputs:
        if b not in unique:
            unique.append(b)
    return {
        "params": [list(p) for p in sched.params],
        "int_slots": [not d.is_floating_point for d in sched.scalar_dtypes],
        "out_positions": [unique.index(b) for b in sched.outputs],
        "out_specs": [[sched.buffers[b].dtype.name, list(sched.buffers[b].shape)] for b in unique],
        "arena": sched.arena_bytes,
        "kernels": len(sched.kernels),
    }


def key_source(text: str, options: dict[str, Any], fingerprint: str, kind: str | None) -> bytes:
    """The bytes whose SHA-256 is the disk-cache key: lazytorch version, the kind
    (``dynamic`` or none), the toolchain fingerprint, the options, then the program text."""
    parts = (
        f"lazytorch {__version__}",
        *([kind] if kind else []),
        fingerprint,
        f"deterministic={bool(options.get('deterministic'))}",
        text,
    )
    return b"".join(part.encode() + b"\0" for part in parts)


def key_source_fields(head: bytes) -> dict[str, Any] | None:
    """What a key source (or its first few hundred bytes, `head`) says before the program
    text: ``lazytorch`` version, ``kind``, ``toolchain``, ``deterministic``; None if it is
    not a key source.

    >>> src = key_source("program text", {"deterministic": True}, "ab12", "dynamic")
    >>> fields = key_source_fields(src)
    >>> fields["kind"], fields["toolchain"], fields["deterministic"]
    ('dynamic', 'ab12', True)
    """
    first, *rest = head.split(b"\0", 4)
    kind = None
    if rest[:1] == [b"dynamic"]:
        kind, rest = "dynamic", rest[1:]
    flags = (b"deterministic=True", b"deterministic=False")
    if not first.startswith(b"lazytorch ") or len(rest) < 3 or rest[1] not in flags:
        return None
    try:
        version, fingerprint = first[len(b"lazytorch ") :].decode(), rest[0].decode()
    except UnicodeDecodeError:
        return None
    return {
        "lazytorch": version,
        "kind": kind,
        "toolchain": fingerprint,
        "deterministic": rest[1] == flags[0],
    }


def _is_int(x: Any) -> bool:
    return type(x) is int  # JSON true/false must not pass as 1/0


def _poly_problem(terms: Any, nsym: int) -> bool:
    """Whether `terms` is not a polynomial as `cpp_build.symbolic_manifest` writes it."""
    return (
        not isinstance(terms, list)
        or not terms
        or any(
            not isinstance(t, list) or len(t) != nsym + 1 or not all(map(_is_int, t)) for t in terms
        )
    )


def manifest_problem(manifest: Any, program: Program, *, symbols: int = 0) -> str | None:
    """Why a manifest read from disk must not be used to call `program`'s shared object,
    or None if it fits.

    The manifest says how to call native code (which inputs are buffers, which scalar slots
    hold integers, the outputs' dtypes and shapes to allocate, the arena to pass), so a
    wrong one reads or writes out of bounds. Everything the program determines is checked
    against it: parameter kinds and count, integer slots, output count, dtypes and (without
    `symbols`) shapes; the rest must be well formed (the arena size itself is vouched for
    by the entry's seal). `symbols`: the number of symbolic sizes of a program compiled
    over symbols, whose shapes and arena are polynomials.
    """
    if not isinstance(manifest, dict):
        return "its manifest is not an object"
    params, int_slots = manifest.get("params"), manifest.get("int_slots")
    specs, positions = manifest.get("out_specs"), manifest.get("out_positions")
    if not isinstance(params, list) or len(params) != len(program.params):
        return f"its manifest has {_count(params)} parameters, the program {len(program.params)}"
    if not isinstance(int_slots, list) or not all(isinstance(b, bool) for b in int_slots):
        return "its manifest's integer slots are malformed"
    slots = 0
    for i, (p, entry) in enumerate(zip(program.params, params)):
        if not isinstance(entry, list) or len(entry) != 2 or not _is_int(entry[1]):
            return f"its manifest's parameter {i} is malformed"
        if entry[0] != p.kind:
            return f"its manifest calls parameter {i} a {entry[0]!r}, the program a {p.kind!r}"
        if p.kind == "scalar":
            if entry[1] != slots or slots >= len(int_slots):
                return f"its manifest puts scalar parameter {i} in the wrong slot"
            if int_slots[slots] == p.dtype.is_floating_point:
                return f"its manifest passes scalar parameter {i} as the wrong type"
            slots += 1
    if slots != len(int_slots):
        return "its manifest has more scalar slots than the program has scalars"
    if not isinstance(specs, list) or not isinstance(positions, list):
        return "its manifest's outputs are malformed"
    if len(positions) != len(program.outputs) or not all(
        _is_int(j) and 0 <= j < len(specs) for j in positions
    ):
        return (
            f"its manifest maps {_count(positions)} outputs, the program has {len(program.outputs)}"
        )
    if sorted(set(positions)) != list(range(len(specs))):
        return "its manifest has outputs no program output uses"
    for k, (j, o) in enumerate(zip(positions, program.outputs)):
        v = program.value(o)
        spec = specs[j]
        if not isinstance(spec, list) or len(spec) != 2 or not isinstance(spec[1], list):
            return f"its manifest's output {k} is malformed"
        if spec[0] != v.dtype.name:
            return f"its manifest gives output {k} dtype {spec[0]!r}, the program {v.dtype.name!r}"
        if symbols:
            if len(spec[1]) != len(v.shape) or any(_poly_problem(d, symbols) for d in spec[1]):
                return f"its manifest's shape of output {k} is malformed"
        elif spec[1] != [int(d) for d in v.shape]:
            return f"its manifest gives output {k} shape {spec[1]}, the program {list(v.shape)}"
    arena, kernels = manifest.get("arena"), manifest.get("kernels")
    if _poly_problem(arena, symbols) if symbols else not (_is_int(arena) and arena >= 0):
        return f"its manifest's arena size {arena!r} is malformed"
    if not (_is_int(kernels) and kernels >= 0):
        return f"its manifest's kernel count {kernels!r} is malformed"
    if symbols and manifest.get("symbols") != symbols:
        return f"its manifest is over {manifest.get('symbols')!r} symbolic sizes, not {symbols}"
    return None


def _count(x: Any) -> str:
    return str(len(x)) if isinstance(x, list) else "no"


class CppExecutable:
    """A loaded program and what is needed to call it.

    ``info`` says how it was obtained (``cache``: compiled or disk, the key, timings) for
    dumps and logs.
    """

    info: dict[str, Any]

    def __init__(
        self, program: Program, manifest: dict[str, Any], native: Any, source: str | None = None
    ) -> None:
        self.program = program
        self.manifest = manifest
        self.source = source
        self.native = native
        params = manifest["params"]
        self.buffer_params = [i for i, (kind, _) in enumerate(params) if kind == "buffer"]
        self.scalar_params = [(i, ref) for i, (kind, ref) in enumerate(params) if kind == "scalar"]
        self.int_slots = manifest["int_slots"]
        self.out_positions = manifest["out_positions"]
        # By the DType: NumPy knows "bfloat16" only once ml_dtypes is imported (DType.np).
        self.out_specs = [(BY_NAME[d].np, tuple(s)) for d, s in manifest["out_specs"]]
        self.arena = manifest["arena"]
        self.kernels = manifest["kernels"]
        # A program compiled over symbolic sizes reads the symbols' values after the
        # integer scalars (see SymbolicProgram.bind).
        self.sizes = list(manifest.get("sizes", ()))
        # What a call with no scalar inputs passes, built once (a cache hit's path): the
        # native call copies the lists, so they are shared between calls.
        n = len(self.int_slots)
        self._iargs = [0] * n + self.sizes
        self._fargs = [0.0] * n
        self._all_buffers = self.buffer_params == list(range(len(params)))
        self._in_order = self.out_positions == list(range(len(self.out_specs)))

    def run(self, inputs: list[Any]) -> list[Any]:
        if self._all_buffers:
            ins, iargs, fargs = inputs, self._iargs, self._fargs
        else:
            ins = [inputs[i] for i in self.buffer_params]
            iargs, fargs = list(self._iargs), list(self._fargs)
            for i, slot in self.scalar_params:
                if self.int_slots[slot]:
                    iargs[slot] = int(inputs[i])
                else:
                    fargs[slot] = float(inputs[i])
        outs, err = self.native.run(ins, iargs, fargs, self.out_specs, self.arena)
        metrics.increment("kernels_launched", self.kernels)
        if err is not None:
            raise runtime_error(self.program, err)
        return outs if self._in_order else [outs[p] for p in self.out_positions]


def _poly_of(terms: list[list[int]]) -> Any:
    nsym = len(terms[0]) - 1
    return Poly({tuple(t[:-1]): t[-1] for t in terms}, nsym)


class SymbolicProgram:
    """A program compiled over symbolic sizes; `bind` gives the executable for some sizes."""

    def __init__(
        self,
        gen: Any,
        manifest: dict[str, Any],
        native: Any,
        source: str | None,
        info: dict[str, Any],
    ) -> None:
        self.gen = gen
        self.used = False  # bound at least once in this process
        self.program = gen.pattern.program
        self.manifest = manifest
        self.native = native
        self.source = source
        self.info = info
        self.kernels = manifest["kernels"]
        self._specs = [(d, [_poly_of(t) for t in dims]) for d, dims in manifest["out_specs"]]
        self._arena = _poly_of(manifest["arena"])

    def bind(self, point: tuple[int, ...]) -> CppExecutable:
        """The executable at symbol values `point` (sizes already checked by the guards)."""
        m = dict(self.manifest)
        m["out_specs"] = [[d, [p(point) for p in dims]] for d, dims in self._specs]
        m["arena"] = self._arena(point)
        m["sizes"] = list(point)
        exe = CppExecutable(self.program, m, self.native, self.source)
        exe.info = self.info
        return exe


def isa_summary() -> str:
    """The machine and the vector extensions that matter to generated code (for people)."""
    import platform

    wanted = (
        "sse4_2",
        "avx",
        "avx2",
        "fma",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512_bf16",
        "amx_tile",
        "neon",
        "asimd",
        "sve",
    )
    have = set(cpu_features().split())
    return " ".join([platform.machine(), *[f for f in wanted if f in have]])


def _summary(program: Program, options: dict[str, Any]) -> dict[str, Any]:
    """What ``lazytorch cache ls`` shows about an entry without loading it."""
    ops: dict[str, int] = {}
    for ins in program.instrs:
        ops[ins.op.name] = ops.get(ins.op.name, 0) + 1
    first = next((ins.loc for ins in program.instrs if ins.loc is not None), None)
    return {
        "nodes": len(program.instrs),
        "inputs": [f"{p.dtype.short}{format_shape(p.shape)}" for p in program.params],
        "outputs": [
            f"{program.value(o).dtype.short}{format_shape(program.value(o).shape)}"
            for o in program.outputs
        ],
        "ops": dict(sorted(ops.items(), key=lambda kv: -kv[1])[:8]),
        "first_recorded_at": format_loc(first) if first else None,
        "deterministic": bool(options.get("deterministic")),
    }


def _take_lock(disk: Any, key: str, held: contextlib.ExitStack) -> None:
    """Hold `key`'s lock for the rest of `held`, or warn and go on without it.

    The lock only saves duplicate compiles (stores are atomic, first writer wins), so a
    holder that stopped — or a lock that cannot be taken at all — must not stop this process.
    """
    try:
        held.enter_context(disk.lock(key))
    except CacheLockTimeout as e:
        warnings.warn(
            f"{e}. Compiling the program here instead of waiting for it",
            RuntimeWarning,
            stacklevel=4,
        )
    except (OSError, CacheDirError) as e:
        warnings.warn(
            f"lazytorch: cannot take the compile cache's lock for {key[:16]} ({e}); "
            "compiling without it",
            RuntimeWarning,
            stacklevel=4,
        )


def _builder() -> Any:
    """`lazytorch.runtime.cpp_build`, loaded by the first compile: a run served from the
    disk cache never loads the scheduler and code generators."""
    from lazytorch.runtime import cpp_build  # lazy: import time (compiling only)

    return cpp_build


_blas: Any = None  # the BLAS programs link, once loaded (see _load_blas_single_threaded)


def _load_blas_single_threaded() -> None:
    """Load the BLAS that programs link (scipy-openblas32) before any program does, with
    ``OPENBLAS_NUM_THREADS=1`` in the environment while it loads.

    Programs use it on one thread per caller (each program sets that when it loads:
    OpenMP threads do the parallel work). Loaded by a program instead, OpenBLAS first starts
    a pool of one thread per core, and those threads spin waiting for work for about a
    tenth of a second before they sleep: on a 2-core machine they took 6% of a new
    process's first training step, and NumPy's OpenBLAS pool spinning beside them the same
    way another 12% (GPT-small's first step from a warm cache, `perf record`). Only this
    library reads the variable now; it is restored at once, so NumPy's BLAS, if it loads
    later, sees the user's setting.
    """
    global _blas
    if _blas is not None:
        return
    try:
        path = blas_library()
    except CompilerMissing:
        _blas = False  # programs that need it fail with this error when they build
        return
    old = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        _blas = ctypes.CDLL(str(path))
    except OSError:
        _blas = False
    finally:
        if old is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = old
    _load_mkl_global()


_mkl: Any = None  # libmkl_rt, loaded into the global namespace when GEMMs go through MKL


def _load_mkl_global() -> None:
    """With LAZYTORCH_BLAS resolving to MKL, load libmkl_rt with RTLD_GLOBAL before any
    program: programs leave cblas_sgemm/cblas_dgemm undefined and the dynamic loader binds
    them to this library when it loads each one (the compiler does not link MKL)."""
    global _mkl
    if _mkl is not None:
        return
    _mkl = False
    try:
        if blas_choice() != "mkl":
            return
        _mkl = ctypes.CDLL(str(mkl_library()), mode=ctypes.RTLD_GLOBAL)
    except (CompilerMissing, OSError, ValueError):
        return  # programs that need it fail to build or load, naming the library


# Iterations an idle OpenMP thread of a program spins before it sleeps, unless the user
# chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT); libgomp's own default is 300,000. See
# _load_openmp_short_spin.
OMP_SPINCOUNT = "1000"
_omp: Any = None  # libgomp, once loaded (see _load_openmp_short_spin)


def _load_openmp_short_spin() -> None:
    """Load the OpenMP runtime that programs link (libgomp) before any program does, with
    ``GOMP_SPINCOUNT=OMP_SPINCOUNT`` in the environment while it loads (it reads it then).

    Between two parallel regions libgomp's idle threads spin, by default for 300,000
    iterations (milliseconds) before they sleep. On a machine whose cores are all busy —
    DataLoader workers, a second process, a test run beside it — a spinning thread holds
    a core that the thread everyone waits for at the next barrier needs: on 2 cores with
    other work running (load average 5), the ResNet-8 training step took 616 ms with the
    default spin, 104 ms with 1,000 iterations and 104 ms with no spin at all (torch
    eager's step, which spins the same way, took 690 ms there). A short spin still
    carries a thread from one kernel of a program to the next (microseconds apart).
    The user's OMP_WAIT_POLICY or GOMP_SPINCOUNT, if set, is left alone, as is a libgomp
    already loaded; the variable is restored at once, so other OpenMP users see theirs.
    """
    global _omp
    if _omp is not None:
        return
    _omp = False
    if os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT"):
        return
    name = ctypes.util.find_library("gomp")
    if name is None:
        return
    os.environ["GOMP_SPINCOUNT"] = OMP_SPINCOUNT
    try:
        _omp = ctypes.CDLL(name)
    except OSError:
        pass
    finally:
        del os.environ["GOMP_SPINCOUNT"]


class CppBackend:
    name = "cpp"

    def __init__(self) -> None:
        self._disk: Any = None
        self._scratch: Path | None = None
        self.toolchain = toolchain(self._memo_dir())  # raises CompilerMissing with the fix
        # read by the programs themselves (lazytorch_gemm_bf16.h): a bad value fails here
        env_value("LAZYTORCH_BF16_GEMM")
        mod = _native.load(warn=False)
        if mod is None:
            raise CompilerMissing(
                "the native extension lazytorch._C is not built; reinstall with a C++ "
                "compiler available: pip install -e ."
            )
        self._C = mod
        _load_blas_single_threaded()
        _load_openmp_short_spin()

    def _memo_dir(self) -> Path | None:
        """The disk cache's directory, where the compiler's version is remembered, if usable."""
        try:
            disk = self.disk
        except (CacheDirError, OSError):
            return None  # the same error is raised, with its fix, by the first compile
        return disk.root if disk is not None else None

    @property
    def disk(self) -> Any:
        """The disk cache, or None when LAZYTORCH_DISK_CACHE=0."""
        if not env_value("LAZYTORCH_DISK_CACHE"):
            return None
        root = default_cache_dir().absolute()
        if self._disk is None or self._disk.root != root:  # LAZYTORCH_CACHE_DIR may change
            self._disk = DiskCache(root)  # CacheDirError names an unsafe directory and the fix
        return self._disk

    def key(self, program: Program, options: dict[str, Any]) -> str:
        """The disk-cache key of `program` compiled for its concrete sizes (of the part
        that is compiled: without its empty values, see `_compile_with_empty`)."""
        if has_empty_value(program):
            # lazy: import time (programs with empty values only)
            from lazytorch.runtime.empty_values import KeepsEmpty, strip_empty

            with contextlib.suppress(KeepsEmpty):  # that program runs on the interpreter
                program = strip_empty(program).program
        return self._key(program.canonical_text(), options)

    def _key(self, text: str, options: dict[str, Any], kind: str | None = None) -> str:
        return hashlib.sha256(self._key_source(text, options, kind)).hexdigest()

    def _key_source(self, text: str, options: dict[str, Any], kind: str | None = None) -> bytes:
        return key_source(text, options, self.toolchain.fingerprint, kind)

    def is_cached(self, program: Program, options: dict[str, Any]) -> bool:
        """Whether the disk cache holds `program` compiled for these options (a usable
        entry: `compile` would load it without building anything)."""
        disk = self.disk
        if disk is None or has_empty_value(program):
            return False
        key = self._key(program.canonical_text(), options)
        entry = disk.lookup(key)
        return entry is not None and KEY_FILE in entry.meta["files"]

    def compile(self, program: Program, options: dict[str, Any] | None = None) -> Any:
        options = options or {}
        if has_empty_value(program):
            return self._compile_with_empty(program, options)
        key_src = self._key_source(program.canonical_text(), options)
        key = hashlib.sha256(key_src).hexdigest()
        # What observers (dumps, the warm-up record, logs) learn about this compile.
        info: dict[str, Any] = {"key": key, "deterministic": bool(options.get("deterministic"))}
        manifest, path, source = self._cached(
            key,
            key_src,
            program,
            options,
            info,
            lambda: _builder().build(program, options, info, self.toolchain),
        )
        return self._executable(program, manifest, path, source, info)

    def _compile_with_empty(self, program: Program, options: dict[str, Any]) -> Any:
        """`program`, which has a value with no elements (or a symbolic size).

        The empty values are not compiled (`lazytorch.runtime.empty_values`): the rest is,
        as if the cut held only it, so an empty tensor beside real work neither slows the
        work down nor changes its rounding. A program with symbolic sizes, or an op
        without a rule for an empty operand, runs on the reference interpreter: counted in
        the ``interpreter_fallbacks`` metric and logged (``LAZYTORCH_LOG=compile``).
        """
        symbolic = any(
            not isinstance(d, int) for v in (*program.params, *program.instrs) for d in v.shape
        )
        # lazy: import time (programs with empty values only)
        from lazytorch.runtime.empty_values import KeepsEmpty, WithEmptyValues, strip_empty

        why = "symbolic sizes"
        if not symbolic:
            try:
                split = strip_empty(program)
            except KeepsEmpty as e:
                why = str(e)
            else:
                inner = self.compile(split.program, options) if split.program.outputs else None
                return WithEmptyValues(split, inner)
        metrics.increment("interpreter_fallbacks")
        log.info("running a program on the reference interpreter: %s", why)
        return get_backend("interpreter").compile(program, options)

    def compile_dynamic(self, gen: Any, options: dict[str, Any] | None = None) -> SymbolicProgram:
        """Compile `gen` (a `lazytorch.ir.generalize.Generalized`) once for all its sizes.

        The entry is also listed in the disk cache's index for its pattern, so another
        process finds it (`load_dynamic`) before compiling anything for a new size.
        Raises `lazytorch.codegen.symbolic_source.NotSymbolic` when the generated code does
        not generalize (the caller then compiles for the concrete sizes).
        """
        options = options or {}
        program = gen.symbolic_program()
        key_src = self._key_source(gen.spec_text(), options, kind="dynamic")
        key = hashlib.sha256(key_src).hexdigest()
        info: dict[str, Any] = {
            "key": key,
            "deterministic": bool(options.get("deterministic")),
            "generalized": gen,
        }
        manifest, path, source = self._cached(
            key,
            key_src,
            program,
            options,
            info,
            lambda: _builder().build_dynamic(gen, options, info, self.toolchain),
            symbols=gen.nsym,
        )
        if info.get("cache") == "compiled":
            self._index_dynamic(gen.key, options, key)
        native = self._C.Program(str(path))
        return SymbolicProgram(gen, manifest, native, source, info)

    def load_dynamic(self, pattern: Any, options: dict[str, Any] | None = None) -> list[Any]:
        """Programs over symbolic sizes on disk for `pattern`'s pattern key (none compiled)."""
        options = options or {}
        disk = self.disk
        if disk is None:
            return []
        index = disk.lookup(self._index_key(pattern.key, options))
        out = []
        for key in index.meta.get("programs", []) if index is not None else ():
            entry = disk.lookup(key)
            if entry is None or "generalized" not in entry.meta:
                continue
            try:
                gen = Generalized.from_json(pattern, entry.meta["generalized"])
            except ValueError:
                continue
            if not self._fits(disk, entry, gen.pattern.program, gen.nsym):
                continue
            info: dict[str, Any] = {
                "key": key,
                "deterministic": bool(options.get("deterministic")),
                "generalized": gen,
                "cache": "disk",
                "entry": str(entry.path),
            }
            metrics.increment("cache_hits_disk")
            native = self._C.Program(str(entry.file("program.so")))
            out.append(SymbolicProgram(gen, entry.meta["manifest"], native, None, info))
        return out

    def _dynamic_key(self, spec: str, options: dict[str, Any]) -> str:
        """The key of a program over symbolic sizes (`spec`: its text and guards)."""
        return self._key(spec, options, kind="dynamic")

    def _index_key(self, pattern_key: str, options: dict[str, Any]) -> str:
        return hashlib.sha256(self._index_key_source(pattern_key, options)).hexdigest()

    def _index_key_source(self, pattern_key: str, options: dict[str, Any]) -> bytes:
        return self._key_source("index\n" + pattern_key, options, kind="dynamic")

    def _index_dynamic(self, pattern_key: str, options: dict[str, Any], key: str) -> None:
        """List `key` in the index entry of its pattern (replaced under the entry's lock)."""
        disk = self.disk
        if disk is None or disk.read_only:
            return
        ikey_src = self._index_key_source(pattern_key, options)
        ikey = hashlib.sha256(ikey_src).hexdigest()
        try:
            with disk.lock(ikey):
                old = disk.lookup(ikey)
                keys = list(old.meta.get("programs", [])) if old is not None else []
                if key in keys:
                    return
                disk.remove(ikey)
                # The same provenance as a program's entry: `lazytorch cache import` checks it.
                meta = {
                    "programs": [*keys, key],
                    "compiler": self.toolchain.version,
                    "lazytorch": __version__,
                    "isa": isa_summary(),
                    "toolchain": self.toolchain.fingerprint,
                    "summary": {
                        "index": "programs over symbolic sizes for one pattern",
                        "inputs": [f"(index of {len(keys) + 1} program(s) over symbolic sizes)"],
                    },
                }
                disk.store(ikey, {KEY_FILE: ikey_src}, meta)
        except (OSError, CacheDirError) as e:
            log.debug("could not index the dynamic program %s: %s", key[:16], e)

    def _cached(
        self,
        key: str,
        key_src: bytes,
        program: Program,
        options: dict[str, Any],
        info: dict[str, Any],
        build: Any,
        symbols: int = 0,
    ) -> tuple[dict[str, Any], Path, str | None]:
        """(manifest, shared object path, source if built now) for `key`: from the disk
        cache, or built by `build()` and stored there (unless the cache is read-only).

        A lock holder that stops makes this compile without waiting for it, with a warning
        naming the lock file; an entry that does not fit `program` is dropped and rebuilt.
        """
        disk = self.disk
        if disk is None:
            manifest, so, source = build()
            metrics.increment("cache_misses")
            return manifest, self._scratch_file(key, so), source
        t0 = time.perf_counter()
        entry = self._lookup(disk, key, program, symbols)
        source = None
        if entry is None:
            with contextlib.ExitStack() as held:
                if not disk.read_only:  # else nobody can have stored it meanwhile
                    _take_lock(disk, key, held)
                    entry = self._lookup(disk, key, program, symbols)  # compiled meanwhile?
                if entry is None:
                    metrics.increment("cache_misses")
                    manifest, so, source = build()
                    built = (manifest, so, source)
                    entry = self._store(disk, key, key_src, program, options, info, built, symbols)
                    if entry is None:
                        return manifest, self._scratch_file(key, so), source
        if source is None:
            metrics.increment("cache_hits_disk")
            info["cache"] = "disk"
            log.debug("loaded from the disk cache: %s", entry.path)
            info["load_s"] = time.perf_counter() - t0
        info["entry"] = str(entry.path)
        return entry.meta["manifest"], entry.file("program.so"), source

    def _lookup(self, disk: Any, key: str, program: Program, symbols: int) -> Any:
        """The disk cache's verified entry for `key` if it fits `program`, else None."""
        entry = disk.lookup(key)
        return entry if entry is not None and self._fits(disk, entry, program, symbols) else None

    def _fits(self, disk: Any, entry: Any, program: Program, symbols: int) -> bool:
        """Whether `entry` may run `program`; if not it is dropped (warned, counted)."""
        if KEY_FILE not in entry.meta["files"]:
            problem = f"it records no {KEY_FILE} (written by an older lazytorch)"
        else:
            problem = manifest_problem(entry.meta.get("manifest"), program, symbols=symbols)
        if problem is None:
            return True
        disk.reject(entry, f"does not fit the program being run: {problem}")
        return False

    def _store(
        self,
        disk: Any,
        key: str,
        key_src: bytes,
        program: Program,
        options: dict[str, Any],
        info: dict[str, Any],
        built: tuple[dict[str, Any], bytes, str],
        symbols: int,
    ) -> Any:
        """Store a compiled program; the entry now under `key`, or None if none is usable."""
        if disk.read_only:
            return None  # said once, when the cache was opened
        manifest, so, source = built
        meta = {
            **({"generalized": info["generalized"].to_json()} if "generalized" in info else {}),
            "manifest": manifest,
            "compiler": self.toolchain.version,
            "lazytorch": __version__,
            "isa": isa_summary(),
            "toolchain": self.toolchain.fingerprint,
            "summary": _summary(program, options),
        }
        files = {"program.so": so, "program.cpp": source.encode(), KEY_FILE: key_src}
        try:
            entry = disk.store(key, files, meta)
        except (OSError, CacheDirError) as e:
            warnings.warn(
                f"lazytorch: could not write the compile cache ({e}); continuing without it",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        # Another process may have stored the key first: its entry must fit as well.
        if entry.meta["manifest"] == manifest or self._fits(disk, entry, program, symbols):
            return entry
        return None

    def _executable(
        self,
        program: Program,
        manifest: dict[str, Any],
        so: Path,
        source: str | None,
        info: dict[str, Any],
    ) -> CppExecutable:
        exe = CppExecutable(program, manifest, self._C.Program(str(so)), source)
        exe.info = info
        return exe

    def _scratch_file(self, key: str, so: bytes) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lazytorch-so-"))
        path = self._scratch / f"{key}.so"
        path.write_bytes(so)
        return path
