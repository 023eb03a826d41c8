"""The ``cpp`` backend: schedule, generate C++, compile, cache on disk, run via lazytorch._C.

A compiled program is stored in the disk cache (`lazytorch.runtime.disk_cache`) under a
key hashing the canonical program text, the toolchain fingerprint (compiler version,
flags, CPU features, runtime headers, and the source of the scheduler and code generator),
the lazytorch version and the options (determinism).
Next to the shared object the entry keeps the generated source and a *manifest* — how to
call the program (parameters, scalar slots, output shapes, arena size) — so a new process
loads it without scheduling or generating anything. ``LAZYTORCH_DISK_CACHE=0`` turns the
disk cache off (programs then compile into a temporary directory).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from lazytorch import __version__, metrics
from lazytorch.ir.program import Program
from lazytorch.runtime.backends import has_empty_value, runtime_error

__all__ = ["CppBackend", "CppExecutable", "manifest_of"]

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


class CppExecutable:
    """A loaded program and what is needed to call it.

    ``info`` says how it was obtained (``cache``: compiled or disk, the key, timings) for
    dumps and logs.
    """

    info: dict[str, Any]

    def __init__(
        self, program: Program, manifest: dict[str, Any], native: Any, source: str | None = None
    ) -> None:
        import numpy as np

        self.program = program
        self.manifest = manifest
        self.source = source
        self.native = native
        params = manifest["params"]
        self.buffer_params = [i for i, (kind, _) in enumerate(params) if kind == "buffer"]
        self.scalar_params = [(i, ref) for i, (kind, ref) in enumerate(params) if kind == "scalar"]
        self.int_slots = manifest["int_slots"]
        self.out_positions = manifest["out_positions"]
        self.out_specs = [(np.dtype(d), tuple(s)) for d, s in manifest["out_specs"]]
        self.arena = manifest["arena"]
        self.kernels = manifest["kernels"]

    def run(self, inputs: list[Any]) -> list[Any]:
        ins = [inputs[i] for i in self.buffer_params]
        n = len(self.int_slots)
        iargs = [0] * n
        fargs = [0.0] * n
        for i, slot in self.scalar_params:
            if self.int_slots[slot]:
                iargs[slot] = int(inputs[i])
            else:
                fargs[slot] = float(inputs[i])
        outs, err = self.native.run(ins, iargs, fargs, self.out_specs, self.arena)
        metrics.increment("kernels_launched", self.kernels)
        if err is not None:
            raise runtime_error(self.program, err)
        return [outs[p] for p in self.out_positions]


def isa_summary() -> str:
    """The machine and the vector extensions that matter to generated code (for people)."""
    import platform

    from lazytorch.codegen.compiler import cpu_features

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
    from lazytorch.ir.program import format_shape

    ops: dict[str, int] = {}
    for ins in program.instrs:
        ops[ins.op.name] = ops.get(ins.op.name, 0) + 1
    first = next((ins.loc for ins in program.instrs if ins.loc is not None), None)
    from lazytorch.ir.node import format_loc

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


class CppBackend:
    name = "cpp"

    def __init__(self) -> None:
        from lazytorch import _native
        from lazytorch.codegen.compiler import CompilerMissing, toolchain

        self._disk: Any = None
        self._scratch: Path | None = None
        self.toolchain = toolchain(self._memo_dir())  # raises CompilerMissing with the fix
        mod = _native.load(warn=False)
        if mod is None:
            raise CompilerMissing(
                "the native extension lazytorch._C is not built; reinstall with a C++ "
                "compiler available: pip install -e ."
            )
        self._C = mod

    def _memo_dir(self) -> Path | None:
        """The disk cache's directory, where the compiler's version is remembered, if usable."""
        from lazytorch.runtime.disk_cache import CacheDirError

        try:
            disk = self.disk
        except (CacheDirError, OSError):
            return None  # the same error is raised, with its fix, by the first compile
        return disk.root if disk is not None else None

    @property
    def disk(self) -> Any:
        """The disk cache, or None when LAZYTORCH_DISK_CACHE=0."""
        if os.environ.get("LAZYTORCH_DISK_CACHE", "1").strip() in ("0", "false", "no", "off"):
            return None
        from lazytorch.runtime.disk_cache import DiskCache, default_cache_dir

        root = default_cache_dir().absolute()
        if self._disk is None or self._disk.root != root:  # LAZYTORCH_CACHE_DIR may change
            self._disk = DiskCache(root)  # CacheDirError names an unsafe directory and the fix
        return self._disk

    def key(self, program: Program, options: dict[str, Any]) -> str:
        h = hashlib.sha256()
        for part in (
            f"lazytorch {__version__}",
            self.toolchain.fingerprint,
            f"deterministic={bool(options.get('deterministic'))}",
            program.canonical_text(),
        ):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def compile(self, program: Program, options: dict[str, Any] | None = None) -> Any:
        options = options or {}
        if has_empty_value(program):
            # Some value has no elements: there is nothing to compute in a loop, and the
            # results (empty arrays, reductions of nothing) are cheapest to get from the
            # reference interpreter; compiling would spend a g++ run on zero work. Symbolic
            # sizes also run there until the cpp backend takes sizes as arguments.
            from lazytorch.runtime.backends import get_backend

            return get_backend("interpreter").compile(program, options)
        key = self.key(program, options)
        # What observers (dumps, the warm-up record, logs) learn about this compile.
        info: dict[str, Any] = {"key": key, "deterministic": bool(options.get("deterministic"))}
        disk = self.disk
        if disk is None:
            manifest, so, source = self._build(program, options, info)
            path = self._scratch_file(key, so)
            metrics.increment("cache_misses")
            return self._executable(program, manifest, path, source, info)
        t0 = time.perf_counter()
        entry = disk.lookup(key)
        source = None
        if entry is None:
            with disk.lock(key):
                entry = disk.lookup(key)  # another process may have compiled it meanwhile
                if entry is None:
                    metrics.increment("cache_misses")
                    manifest, so, source = self._build(program, options, info)
                    meta = {
                        "manifest": manifest,
                        "compiler": self.toolchain.version,
                        "lazytorch": __version__,
                        "isa": isa_summary(),
                        "toolchain": self.toolchain.fingerprint,
                        "summary": _summary(program, options),
                    }
                    try:
                        entry = disk.store(
                            key, {"program.so": so, "program.cpp": source.encode()}, meta
                        )
                    except OSError as e:
                        warnings.warn(
                            f"lazytorch: could not write the compile cache ({e}); continuing without it",
                            RuntimeWarning,
                            stacklevel=2,
                        )
                        path = self._scratch_file(key, so)
                        return self._executable(program, manifest, path, source, info)
        if source is None:
            metrics.increment("cache_hits_disk")
            info["cache"] = "disk"
            log.debug("loaded from the disk cache: %s", entry.path)
        info["entry"] = str(entry.path)
        exe = self._executable(
            program, entry.meta["manifest"], entry.file("program.so"), source, info
        )
        if source is None:
            info["load_s"] = time.perf_counter() - t0
        return exe

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

    def _build(
        self, program: Program, options: dict[str, Any], info: dict[str, Any]
    ) -> tuple[dict[str, Any], bytes, str]:
        from lazytorch.codegen.compiler import compile_shared
        from lazytorch.codegen.cpp import generate, uses_blas
        from lazytorch.scheduler import schedule

        t0 = time.perf_counter()
        sched = schedule(program)
        t1 = time.perf_counter()
        source = generate(sched, deterministic=bool(options.get("deterministic")))
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="lazytorch-so-") as tmp:
            out = Path(tmp) / "program.so"
            seconds = compile_shared(source, out, tc=self.toolchain, blas=uses_blas(sched))
            so = out.read_bytes()
        metrics.increment("compiles")
        metrics.increment("compile_seconds", seconds)
        metrics.timed("schedule+codegen", t2 - t0)
        metrics.timed("compile", seconds)
        info.update(cache="compiled", schedule_s=t1 - t0, codegen_s=t2 - t1, compile_s=seconds)
        manifest = manifest_of(sched)
        log.debug(
            "compiled %d kernels, %d extern calls: schedule %.3f s, codegen %.3f s, g++ %.3f s",
            manifest["kernels"],
            len(sched.steps) - manifest["kernels"],
            t1 - t0,
            t2 - t1,
            seconds,
        )
        return manifest, so, source

    def _scratch_file(self, key: str, so: bytes) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lazytorch-so-"))
        path = self._scratch / f"{key}.so"
        path.write_bytes(so)
        return path
