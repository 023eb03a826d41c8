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

__all__ = ["CppBackend", "CppExecutable", "SymbolicProgram", "manifest_of"]

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
        # A program compiled over symbolic sizes reads the symbols' values after the
        # integer scalars (see SymbolicProgram.bind).
        self.sizes = list(manifest.get("sizes", ()))

    def run(self, inputs: list[Any]) -> list[Any]:
        ins = [inputs[i] for i in self.buffer_params]
        n = len(self.int_slots)
        iargs = [0] * n + self.sizes
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


def _symbolic_manifest(manifests: list[dict[str, Any]], points: list[Any]) -> dict[str, Any]:
    """One manifest from the manifests of the samples: sizes become polynomials (as
    ``[[exponents..., coefficient], ...]`` lists, JSON data)."""
    from lazytorch.codegen.symbolic_source import NotSymbolic
    from lazytorch.ir.poly import fit

    first = manifests[0]
    for key in ("params", "int_slots", "out_positions", "kernels"):
        if any(m[key] != first[key] for m in manifests[1:]):
            raise NotSymbolic(f"the samples' programs differ in {key}")

    def poly(values: list[int], what: str) -> list[list[int]]:
        p = fit(points, values)
        if p is None:
            raise NotSymbolic(f"{what} ({values}) is no polynomial of the sizes")
        return [[*m, c] for m, c in p.terms.items()] or [[0] * len(points[0]) + [0]]

    specs = []
    for j, (dtype, shape) in enumerate(first["out_specs"]):
        dims = []
        for d in range(len(shape)):
            dims.append(poly([m["out_specs"][j][1][d] for m in manifests], f"output {j} dim {d}"))
        specs.append([dtype, dims])
    return {
        "params": first["params"],
        "int_slots": first["int_slots"],
        "out_positions": first["out_positions"],
        "out_specs": specs,
        "arena": poly([m["arena"] for m in manifests], "the arena size"),
        "kernels": first["kernels"],
    }


def _poly_of(terms: list[list[int]]) -> Any:
    from lazytorch.ir.poly import Poly

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
        """The disk-cache key of `program` compiled for its concrete sizes."""
        return self._key(program.canonical_text(), options)

    def _key(self, text: str, options: dict[str, Any], kind: str | None = None) -> str:
        h = hashlib.sha256()
        for part in (
            f"lazytorch {__version__}",
            *([kind] if kind else []),
            self.toolchain.fingerprint,
            f"deterministic={bool(options.get('deterministic'))}",
            text,
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
        manifest, path, source = self._cached(
            key, program, options, info, lambda: self._build(program, options, info)
        )
        return self._executable(program, manifest, path, source, info)

    def compile_dynamic(self, gen: Any, options: dict[str, Any] | None = None) -> SymbolicProgram:
        """Compile `gen` (a `lazytorch.ir.generalize.Generalized`) once for all its sizes.

        The entry is also listed in the disk cache's index for its pattern, so another
        process finds it (`load_dynamic`) before compiling anything for a new size.
        Raises `lazytorch.codegen.symbolic_source.NotSymbolic` when the generated code does
        not generalize (the caller then compiles for the concrete sizes).
        """
        options = options or {}
        program = gen.symbolic_program()
        key = self._dynamic_key(gen.spec_text(), options)
        info: dict[str, Any] = {
            "key": key,
            "deterministic": bool(options.get("deterministic")),
            "generalized": gen,
        }
        manifest, path, source = self._cached(
            key, program, options, info, lambda: self._build_dynamic(gen, options, info)
        )
        if info.get("cache") == "compiled":
            self._index_dynamic(gen.key, options, key)
        native = self._C.Program(str(path))
        return SymbolicProgram(gen, manifest, native, source, info)

    def load_dynamic(self, pattern: Any, options: dict[str, Any] | None = None) -> list[Any]:
        """Programs over symbolic sizes on disk for `pattern`'s pattern key (none compiled)."""
        from lazytorch.ir.generalize import Generalized

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
        return self._dynamic_key("index\n" + pattern_key, options)

    def _index_dynamic(self, pattern_key: str, options: dict[str, Any], key: str) -> None:
        """List `key` in the index entry of its pattern (replaced under the entry's lock)."""
        disk = self.disk
        if disk is None:
            return
        ikey = self._index_key(pattern_key, options)
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
                disk.store(ikey, {}, meta)
        except OSError as e:
            log.debug("could not index the dynamic program %s: %s", key[:16], e)

    def _cached(
        self,
        key: str,
        program: Program,
        options: dict[str, Any],
        info: dict[str, Any],
        build: Any,
    ) -> tuple[dict[str, Any], Path, str | None]:
        """(manifest, shared object path, source if built now) for `key`: from the disk
        cache, or built by `build()` and stored there."""
        disk = self.disk
        if disk is None:
            manifest, so, source = build()
            metrics.increment("cache_misses")
            return manifest, self._scratch_file(key, so), source
        t0 = time.perf_counter()
        entry = disk.lookup(key)
        source = None
        if entry is None:
            with disk.lock(key):
                entry = disk.lookup(key)  # another process may have compiled it meanwhile
                if entry is None:
                    metrics.increment("cache_misses")
                    manifest, so, source = build()
                    meta = {
                        **(
                            {"generalized": info["generalized"].to_json()}
                            if "generalized" in info
                            else {}
                        ),
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
                        return manifest, self._scratch_file(key, so), source
        if source is None:
            metrics.increment("cache_hits_disk")
            info["cache"] = "disk"
            log.debug("loaded from the disk cache: %s", entry.path)
            info["load_s"] = time.perf_counter() - t0
        info["entry"] = str(entry.path)
        return entry.meta["manifest"], entry.file("program.so"), source

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

    def _build_dynamic(
        self, gen: Any, options: dict[str, Any], info: dict[str, Any]
    ) -> tuple[dict[str, Any], bytes, str]:
        from lazytorch.codegen.compiler import compile_shared
        from lazytorch.codegen.cpp import generate, uses_blas
        from lazytorch.codegen.symbolic_source import NotSymbolic, symbolize
        from lazytorch.ir.verify import IRVerificationError, verify_program
        from lazytorch.runtime.dynamic import sample_points
        from lazytorch.scheduler import schedule

        t0 = time.perf_counter()
        points = sample_points(gen.nsym)
        scheds = []
        for point in points:
            # A size that falls as its symbol grows is negative at large samples: such a
            # program only exists for small sizes, so it is not compiled over symbols.
            for where, poly in zip(gen.pattern.where, gen.polys):
                if not poly.is_const() and poly(point) < 0:
                    raise NotSymbolic(f"{where} = {poly} is negative at large sizes")
            prog = gen.instantiate(point)
            try:  # the fitted sizes must satisfy every shape rule at every sample
                verify_program(prog, "generalization")
            except IRVerificationError as e:
                raise NotSymbolic(f"the sizes do not generalize: {e}") from None
            scheds.append(schedule(prog, symbolic=True))
        t1 = time.perf_counter()
        det = bool(options.get("deterministic"))
        names = [f"LT_S{k}" for k in range(gen.nsym)]
        body = symbolize([generate(sc, deterministic=det) for sc in scheds], points, names)
        nint = len(scheds[0].scalar_dtypes)
        defines = [
            f"// over symbolic sizes: {', '.join(f'{n} = {w}' for n, (_, w) in zip(gen.names, gen.sources))}"
        ]
        defines += [f"#define {n} (ia[{nint + k}])" for k, n in enumerate(names)]
        source = "\n".join(defines) + "\n" + body
        manifest = _symbolic_manifest([manifest_of(sc) for sc in scheds], points)
        manifest["symbols"] = gen.nsym
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="lazytorch-so-") as tmp:
            out = Path(tmp) / "program.so"
            seconds = compile_shared(source, out, tc=self.toolchain, blas=uses_blas(scheds[0]))
            so = out.read_bytes()
        metrics.increment("compiles")
        metrics.increment("compile_seconds", seconds)
        metrics.timed("schedule+codegen", t2 - t0)
        metrics.timed("compile", seconds)
        info.update(
            cache="compiled",
            schedule_s=t1 - t0,
            codegen_s=t2 - t1,
            compile_s=seconds,
            samples=len(points),
        )
        log.debug(
            "compiled a program over %d symbolic sizes from %d samples: schedule %.3f s, "
            "codegen %.3f s, g++ %.3f s",
            gen.nsym,
            len(points),
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
