"""Building a program for the ``cpp`` backend: schedule, generate C++, compile.

`lazytorch.runtime.cpp_backend` loads this module on its first compile, so a run whose
programs all come from the disk cache never imports the scheduler or the code generators.
`build` compiles a program for its sizes, `build_dynamic` one over symbolic sizes (generated
at a few sample sizes and merged, see `lazytorch.runtime.dynamic`); each returns the
manifest, the shared object's bytes and the source.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from lazytorch import metrics
from lazytorch.codegen.compiler import Toolchain, compile_shared
from lazytorch.codegen.cpp import generate, uses_blas
from lazytorch.codegen.symbolic_source import NotSymbolic, symbolize
from lazytorch.ir.poly import fit
from lazytorch.ir.program import Program
from lazytorch.ir.verify import IRVerificationError, verify_program
from lazytorch.runtime.cpp_backend import manifest_of
from lazytorch.runtime.dynamic import sample_points
from lazytorch.scheduler import schedule

__all__ = ["build", "build_dynamic", "symbolic_manifest"]

log = logging.getLogger("lazytorch.compile")  # LAZYTORCH_LOG=compile


def build(
    program: Program, options: dict[str, Any], info: dict[str, Any], tc: Toolchain
) -> tuple[dict[str, Any], bytes, str]:
    """Schedule, generate and compile `program` with `tc`; record timings in `info`."""
    t0 = time.perf_counter()
    sched = schedule(program)
    t1 = time.perf_counter()
    source = generate(sched, deterministic=bool(options.get("deterministic")))
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lazytorch-so-") as tmp:
        out = Path(tmp) / "program.so"
        seconds = compile_shared(source, out, tc=tc, blas=uses_blas(sched))
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


def build_dynamic(
    gen: Any, options: dict[str, Any], info: dict[str, Any], tc: Toolchain
) -> tuple[dict[str, Any], bytes, str]:
    """Compile `gen` (a `lazytorch.ir.generalize.Generalized`) once over its symbolic sizes;
    NotSymbolic when the samples' code does not merge into one program."""
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
    manifest = symbolic_manifest([manifest_of(sc) for sc in scheds], points)
    manifest["symbols"] = gen.nsym
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lazytorch-so-") as tmp:
        out = Path(tmp) / "program.so"
        seconds = compile_shared(source, out, tc=tc, blas=uses_blas(scheds[0]))
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


def symbolic_manifest(manifests: list[dict[str, Any]], points: list[Any]) -> dict[str, Any]:
    """One manifest from the manifests of the samples: sizes become polynomials (as
    ``[[exponents..., coefficient], ...]`` lists, JSON data)."""
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
