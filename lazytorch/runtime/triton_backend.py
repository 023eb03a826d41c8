"""The ``triton`` backend: schedule, generate a Triton module, import it, launch its kernels.

The program is scheduled exactly as for the ``cpp`` backend (`lazytorch.scheduler`), so
both run the same kernels; `lazytorch.codegen.triton` prints them as ``@triton.jit``
functions plus a ``run`` launcher. Triton's JIT reads a kernel's source with `inspect`, so
the module is written to a real file (one per distinct source, in a private temporary
directory that lives as long as the backend) and imported with importlib.

Memory lives wherever the *carrier* puts it. A carrier is any object with

* ``to_device(array: np.ndarray) -> buffer``  (a copy of a host array on the device),
* ``empty(shape: tuple[int, ...], dtype: np.dtype) -> buffer``,
* ``to_host(buffer) -> np.ndarray``,

where a buffer is what Triton accepts as a pointer argument (a torch tensor: on the CPU
under ``TRITON_INTERPRET=1``, in device memory on a GPU). lazytorch never imports torch
itself; the caller chooses the carrier.

By default every run copies each input to the device and each output back to the host:
executables take and return host arrays, as on the other backends. A carrier with
``resident = True`` keeps values on the device instead (the ``cuda`` device's
`lazytorch.runtime.cuda_memory.CudaCarrier`); it also has

* ``owns(value) -> bool``: `value` is one of its buffers, taken as an input with no copy
  (anything else, a host array, is copied in with ``to_device``);
* ``arg(buffer)``: what a kernel launch receives for a buffer (the buffer itself on a GPU;
  a torch CPU tensor over the same memory for a test's fake device).

Its executables return device buffers, and the programs it hands to the reference
interpreter (below) copy their device inputs to the host and their outputs back.

Each temporary gets its own allocation from the
carrier: the arena memory plan the C++ backend follows (`Buffer.offset`, ``inplace_of``) is
ignored for now, which costs memory, not correctness (an in-place temporary only reuses its
source's memory; separate memory gives the same values).

Programs with an empty value or a symbolic size run on the reference interpreter (the
``cpp`` backend compiles the non-empty part, `lazytorch.runtime.empty_values`, and compiles
recorded programs over symbolic sizes through ``compile_dynamic``; this backend has
neither yet). A program the Triton lowering does not handle yet (`TritonLoweringMissing`:
an argsort of 64-bit values, ...) runs on the ``cpp`` backend instead, logged on
``LAZYTORCH_LOG=compile`` and counted in the ``triton_fallbacks`` metric. The backend is not registered at import: call ``register(carrier)``.

**Autotuning** happens only in ``MAX_AUTOTUNE`` mode (``LAZYTORCH_MAX_AUTOTUNE=1``, or
``lazytorch.compile(..., mode="max-autotune")``). Kernels are then launched through a
`Tuner`. The first time it launches a kernel, it times each candidate block size and
keeps the fastest. A carrier with a ``synchronize()`` method is synchronized around each
timing. The choice is stored in the disk cache under the kernel's source and name, so
later runs and later processes launch it without timing anything. Kernels whose
re-running would change the result are not tuned: scatter-adds accumulate.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from lazytorch import metrics
from lazytorch._settings import env_value
from lazytorch._version import __version__
from lazytorch.ir._lazynp import np
from lazytorch.ir.program import Program
from lazytorch.runtime.backends import get_backend, has_empty_value, register_backend, runtime_error
from lazytorch.runtime.disk_cache import DiskCache, default_cache_dir

__all__ = [
    "Carrier",
    "Launch",
    "OnHost",
    "TritonBackend",
    "TritonExecutable",
    "Tuner",
    "is_resident",
    "precompile",
    "register",
]

log = logging.getLogger("lazytorch.compile")

ERR_SLOTS = 5  # err[0] = failing instruction + 1, err[1] = kind, err[2:5] = details


class Carrier(Protocol):
    """Where buffers live and how arrays get there and back (see the module docstring)."""

    def to_device(self, array: Any) -> Any: ...

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any: ...

    def to_host(self, buffer: Any) -> Any: ...


class TritonExecutable:
    """A scheduled program and its imported Triton module, ready to ``run(inputs)``."""

    info: dict[str, Any]
    source_name = "program.py"  # what a dump (lazytorch.runtime.observe) calls the source

    def __init__(
        self, program: Program, sched: Any, module: ModuleType, source: str, carrier: Carrier
    ) -> None:
        self.program = program
        self.sched = sched
        self.module = module
        self.source = source
        self.carrier = carrier
        self.kernels = len(sched.kernels)
        # generated kernels and extern (matmul) kernels, and the transposes some GEMMs add
        self.launches = getattr(module, "LAUNCHES", len(sched.steps))
        # scratch memory the module's kernels use (its WORKSPACE): allocated at the first
        # run and reused by every later one (runs are ordered on the device)
        self._workspace: dict[str, Any] | None = None
        self.info = {}
        self.tuner: Tuner | None = None  # set in MAX_AUTOTUNE mode
        # buffers the steps touch (the schedule also lists values it never materializes)
        self.touched: set[int] = set(sched.outputs)
        for step in sched.steps:
            self.touched |= step.reads | step.writes
        # The scalar-slot and error arrays some kernel reads (the module's USES): only those
        # are copied to the device, and the error array is read back (a synchronization)
        # only when a kernel can report an error, so runs can queue up behind each other.
        self.uses = frozenset(getattr(module, "USES", ("ia", "fa", "err")))
        self._uploaded: dict[str, tuple[bytes, Any]] = {}  # see _slots
        self._no_error = np.zeros(ERR_SLOTS, dtype=np.int64)  # the error array before a run
        # What run() does per parameter and which buffers it allocates, worked out once:
        # this is on every run's path.
        self._inputs = [
            (kind == "buffer", ref, *self._input_facts(kind, ref)) for kind, ref in sched.params
        ]
        self._fresh = [
            (b.id, tuple(b.shape), b.dtype.np)
            for b in sched.buffers
            if b.id in self.touched and b.kind in ("output", "temp")
        ]
        self._nslots = max(len(sched.scalar_dtypes), 1)  # a zero-size array is no pointer

    def _input_facts(self, kind: str, ref: int) -> tuple[Any, Any]:
        """(shape, NumPy dtype) of a buffer parameter; (is it a float, None) of a scalar."""
        if kind == "buffer":
            b = self.sched.buffers[ref]
            return tuple(b.shape), b.dtype.np
        return self.sched.scalar_dtypes[ref].is_floating_point, None

    def _slots(self, name: str, values: np.ndarray) -> Any:
        """The device copy of the scalar-slot or error array `values`, reused while the
        values are those of the run before: kernels only read ``ia``/``fa``, and write
        ``err`` only to report the error that ends a run, so a steady loop uploads nothing
        (an upload from host memory also waits for the kernels queued before it)."""
        key = values.tobytes()
        held = self._uploaded.get(name)
        if held is not None and held[0] == key:
            return held[1]
        # the old copy goes first, so its memory can take the new values (stream order
        # puts the upload after the kernels that read the old ones)
        self._uploaded.pop(name, None)
        held = None  # the last reference to the old copy: its memory is free from here
        buf = self.carrier.to_device(values)
        self._uploaded[name] = (key, buf)
        return buf

    def run(self, inputs: list[Any]) -> list[Any]:
        sched, carrier, uses = self.sched, self.carrier, self.uses
        resident = is_resident(carrier)
        bufs: dict[int, Any] = {}
        iargs = np.zeros(self._nslots, dtype=np.int64) if "ia" in uses else None
        fargs = np.zeros(self._nslots, dtype=np.float64) if "fa" in uses else None
        for value, (is_buffer, ref, shape, np_dtype) in zip(inputs, self._inputs):
            if is_buffer:
                if resident and carrier.owns(value):  # already on the device: no copy
                    bufs[ref] = value if tuple(value.shape) == shape else value.reshape(shape)
                    continue
                host = np.ascontiguousarray(np.asarray(value, dtype=np_dtype))
                bufs[ref] = carrier.to_device(host.reshape(shape))
            elif shape:  # a float scalar (read only where a kernel reads fa)
                if fargs is not None:
                    fargs[ref] = float(value)
            elif iargs is not None:
                iargs[ref] = int(value)
        for ref, shape, np_dtype in self._fresh:
            if ref not in bufs:
                bufs[ref] = carrier.empty(shape, np_dtype)
        workspace = self._workspace
        if workspace is None:
            spaces = getattr(self.module, "WORKSPACE", {})
            workspace = self._workspace = {
                k: carrier.empty((n,), np.dtype(d)) for k, (n, d) in spaces.items()
            }
        bufs.update(workspace)  # type: ignore[arg-type]
        # named, not temporaries: a carrier may reuse a dropped buffer's memory at once
        err = self._slots("err", self._no_error) if "err" in uses else None
        ia = self._slots("ia", iargs) if iargs is not None else None
        fa = self._slots("fa", fargs) if fargs is not None else None
        arg = kernel_arg(carrier)
        if arg is None:  # buffers are kernel arguments as they are
            self.module.run(bufs, ia, fa, err, self.tuner)
        else:
            self.module.run(
                {k: arg(v) for k, v in bufs.items()},
                *(None if a is None else arg(a) for a in (ia, fa, err)),
                self.tuner,
            )
        metrics.increment("kernels_launched", self.launches)
        # One look at the error array after all kernels: a failing lane reads element 0
        # instead, so later kernels stay in bounds, and the first failure is kept.
        if err is not None:
            failed = carrier.to_host(err)
            if int(failed[0]):
                self._uploaded.pop("err", None)  # written: the next run needs zeros again
                raise runtime_error(self.program, tuple(int(x) for x in failed))
        if resident:  # the outputs stay on the device
            return [bufs[b] for b in sched.outputs]
        outs = {b: carrier.to_host(bufs[b]) for b in dict.fromkeys(sched.outputs)}
        return [outs[b] for b in sched.outputs]


def kernel_arg(carrier: Any) -> Callable[[Any], Any] | None:
    """What turns a carrier's buffer into a kernel argument; None where it is the buffer
    itself (the carrier's ``arg_function()``, else its ``arg`` method, if any)."""
    function = getattr(carrier, "arg_function", None)
    if function is not None:
        return function()
    return getattr(carrier, "arg", None)


def is_resident(carrier: Any) -> bool:
    """Whether `carrier` keeps values on the device between runs (``resident = True``)."""
    return bool(getattr(carrier, "resident", False))


class OnHost:
    """A program the reference interpreter runs for a resident carrier: its device inputs
    are copied to the host, and its outputs back to the device."""

    def __init__(self, exe: Any, carrier: Carrier) -> None:
        self.exe = exe
        self.carrier = carrier
        self.program = exe.program

    def __getattr__(self, name: str) -> Any:  # info, steps, ...: the interpreter's
        if name == "exe":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.exe, name)

    def run(self, inputs: list[Any]) -> list[Any]:
        c = self.carrier
        host = [c.to_host(v) if c.owns(v) else v for v in inputs]  # type: ignore[attr-defined]
        return [c.to_device(np.asarray(out)) for out in self.exe.run(host)]


class TritonBackend:
    """Backend protocol implementation (``name``, ``compile``) over a `Carrier`."""

    name = "triton"

    def __init__(self, carrier: Carrier, name: str = "triton") -> None:
        self.carrier = carrier
        self.name = name
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._modules: dict[str, ModuleType] = {}  # source hash -> imported module

    def compile(self, program: Program, options: dict[str, Any] | None = None) -> Any:
        options = options or {}
        if has_empty_value(program):
            # nothing to launch for empty values; symbolic sizes are not arguments yet
            exe = get_backend("interpreter").compile(program, options)
            return OnHost(exe, self.carrier) if is_resident(self.carrier) else exe
        # lazy: import time (compiling only)
        from lazytorch.codegen.triton import TritonLoweringMissing, generate
        from lazytorch.scheduler import schedule  # lazy: import time (compiling only)

        t0 = time.perf_counter()
        sched = schedule(program, fuse_epilogues=True)  # the GEMM is generated code
        t1 = time.perf_counter()
        autotune = bool(options.get("max_autotune"))
        try:
            source = generate(
                sched,
                deterministic=bool(options.get("deterministic")),
                autotune=autotune,
                tf32=options.get("matmul_precision", "highest") != "highest",
            )
        except TritonLoweringMissing as e:
            return self._fallback(program, options, e)
        t2 = time.perf_counter()
        module = self._load(source)
        t3 = time.perf_counter()
        exe = TritonExecutable(program, sched, module, source, self.carrier)
        if autotune:
            exe.tuner = Tuner(hashlib.sha256(source.encode()).hexdigest(), self.carrier)
        exe.info = {
            "cache": "compiled",
            "schedule_s": t1 - t0,
            "codegen_s": t2 - t1,
            "load_s": t3 - t2,  # Triton itself compiles each kernel on its first launch
            "path": module.__file__,
        }
        metrics.increment("compiles")
        return exe

    def _fallback(self, program: Program, options: dict[str, Any], why: Exception) -> Any:
        """The program on a CPU backend, because the Triton lowering misses something
        (`why` names it): the ``cpp`` backend, or the reference interpreter where it cannot
        compile. A resident carrier's values are copied to the host and back (`OnHost`).
        Counted in the ``triton_fallbacks`` metric and logged on ``LAZYTORCH_LOG=compile``.
        """
        try:
            exe, used = get_backend("cpp").compile(program, options), "cpp"
        except Exception:  # no C++ toolchain (or it refused): the interpreter runs anything
            exe, used = get_backend("interpreter").compile(program, options), "interpreter"
        metrics.increment("triton_fallbacks")
        copies = ", through host copies" if is_resident(self.carrier) else ""
        log.info("%s: %s; this program runs on the %s backend%s", self.name, why, used, copies)
        return OnHost(exe, self.carrier) if is_resident(self.carrier) else exe

    def _load(self, source: str) -> ModuleType:
        """Import `source` from a file (Triton's JIT needs the text of its kernels)."""
        digest = hashlib.sha256(source.encode()).hexdigest()[:20]
        module = self._modules.get(digest)
        if module is not None:
            return module
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="lazytorch-triton-")
        module = _import_source(source, Path(self._dir.name))
        direct_launches(module)
        self._modules[digest] = module
        return module


class Tuner:
    """Chooses each kernel's block sizes in ``MAX_AUTOTUNE`` mode (see the module doc).

    Called by a generated ``run`` as ``tuner(name, kernel, grid, args, configs)``: `grid`
    maps a config to the launch grid, `configs` lists the candidates, the default first.
    """

    REPEATS = 3  # timed launches per candidate (after one untimed launch that compiles it)

    def __init__(self, digest: str, carrier: Any) -> None:
        self.digest = digest
        self.carrier = carrier
        self.chosen: dict[str, dict[str, int]] = {}

    def __call__(
        self,
        name: str,
        kernel: Any,
        grid: Any,
        args: tuple[Any, ...],
        configs: list[dict[str, int]],
    ) -> None:
        c = configs[0] if len(configs) == 1 else self.chosen.get(name)
        if c is None:
            c = self.chosen[name] = self._choose(name, kernel, grid, args, configs)
        kernel[grid(c)](*args, **c)

    def _key(self, name: str) -> str:
        import triton

        h = hashlib.sha256()
        for part in ("triton-autotune", triton.__version__, self.digest, name):
            h.update(part.encode() + b"\0")
        return h.hexdigest()

    def _choose(
        self,
        name: str,
        kernel: Any,
        grid: Any,
        args: tuple[Any, ...],
        configs: list[dict[str, int]],
    ) -> dict[str, int]:
        disk = _disk()
        key = self._key(name)
        entry = disk.lookup(key) if disk is not None else None
        if entry is not None and entry.meta.get("config") in configs:
            metrics.increment("autotune_disk_hits")
            return dict(entry.meta["config"])
        sync = getattr(self.carrier, "synchronize", None) or (lambda: None)
        timings: list[float] = []
        first_error: Exception | None = None
        for c in configs:
            try:
                kernel[grid(c)](*args, **c)  # compiles it (and warms up)
                sync()
            except Exception as e:  # e.g. OutOfResources: more shared memory than the GPU has
                log.info("autotune %s: candidate %s skipped: %s: %s", name, c, type(e).__name__, e)
                first_error = first_error or e
                timings.append(float("inf"))
                continue
            runs = []
            for _ in range(self.REPEATS):
                t0 = time.perf_counter()
                kernel[grid(c)](*args, **c)
                sync()
                runs.append(time.perf_counter() - t0)
            timings.append(sorted(runs)[len(runs) // 2])
        if all(t == float("inf") for t in timings):
            assert first_error is not None
            raise first_error
        metrics.increment("autotune_benchmarks")
        best = configs[min(range(len(configs)), key=timings.__getitem__)]
        if disk is not None:
            meta = {
                "config": best,
                # (None: the candidate failed to launch)
                "candidates": [
                    [c, t if t != float("inf") else None] for c, t in zip(configs, timings)
                ],
                "lazytorch": __version__,
                "summary": {"autotune": name, "inputs": [f"(autotune choice for {name})"]},
            }
            import contextlib

            # a read-only cache: the choice is remembered in memory only
            with contextlib.suppress(OSError):
                disk.store(key, {}, meta)
        return best


def precompile(source: str, capability: int = 90) -> dict[str, Any]:
    """Compile every kernel of a generated Triton module (`lazytorch.codegen.triton`) for an
    NVIDIA GPU of compute `capability` (90: H100/H200, 80: A100), without a GPU.

    Triton's compiler needs only its bundled LLVM and ``ptxas``, so this checks on any
    machine that the kernels compile as a GPU would compile them (Triton's interpreter,
    which the numerics tests use, accepts programs the compiler refuses). Each kernel is
    compiled with the argument types and constants the module's ``KERNELS`` table gives,
    as ``run`` launches it. Returns kernel name -> Triton's compiled kernel (its ``asm``
    holds ``ttir``, ``ttgir``, ``llir``, ``ptx`` and ``cubin``). Raises RuntimeError under
    ``TRITON_INTERPRET=1`` (kernels are not compiled there) and the compiler's error for
    a kernel that does not compile.
    """
    import os

    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        raise RuntimeError("precompile(): TRITON_INTERPRET=1 is set, so Triton compiles nothing")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    with tempfile.TemporaryDirectory(prefix="lazytorch-precompile-") as d:
        module = _import_source(source, Path(d))
        target = GPUTarget("cuda", capability, 32)
        out = {}
        for name, spec in module.KERNELS.items():
            src = ASTSource(getattr(module, name), spec["signature"], spec["constexprs"])
            out[name] = triton.compile(src, target=target, options=spec["options"])
        return out


class Launch:
    """``kernel[grid](*args, **constants)`` for one generated kernel, past Triton's JIT
    dispatch after its first launch.

    Triton's ``JITFunction.run`` binds the arguments, works out the specialization key
    (each pointer's 16-byte alignment, each integer's divisibility) and looks the compiled
    kernel up on every launch: most of a launch's ~15 µs of Python on an H200's host
    (`benchmarks.gpu_host`). A generated ``run`` launches each kernel from one line, with
    the same integers and constants every time, so only the pointers' alignment can change
    the key. After a launch through the JIT, this keeps the compiled kernel the JIT
    returned, the constants in signature order (the tail of the arguments the JIT passes
    to the launcher), and which pointers were 16-byte aligned. A later launch with the
    same constants whose pointers are still aligned calls the compiled kernel through
    ``CompiledKernel[grid](*args)`` (Triton's launcher for compiled kernels, which reads
    the current stream and the launch hooks as the JIT does). Anything else goes through
    the JIT again, which compiles a new specialization where one is needed, and re-arms
    the direct path. (A pointer that was unaligned when the kernel was compiled needs no
    check: that kernel assumes nothing of it.)

    Under ``TRITON_INTERPRET=1`` the JIT returns no compiled kernel, so every launch is
    the JIT's; `Tuner` launches go through here too and re-arm when the choice changes.
    """

    __slots__ = ("aligned", "compiled", "constants", "jit", "tail")

    def __init__(self, jit: Any) -> None:
        self.jit = jit
        self.compiled: Any = None
        self.constants: dict[str, Any] = {}
        self.tail: tuple[Any, ...] = ()
        self.aligned: tuple[int, ...] = ()  # positions of the pointers aligned at compile

    def __getitem__(self, grid: tuple[int, ...]) -> Callable[..., Any]:
        def launch(*args: Any, **constants: Any) -> Any:
            return self.launch(grid, args, constants)

        return launch

    def launch(self, grid: tuple[int, ...], args: tuple[Any, ...], constants: dict) -> Any:
        compiled = self.compiled
        if compiled is not None and constants == self.constants:
            for i in self.aligned:
                if args[i].data_ptr() & 15:
                    break
            else:
                grid3 = (*grid, 1, 1)[:3] if len(grid) < 3 else grid
                compiled[grid3](*args, *self.tail)
                metrics.increment("triton_direct_launches")
                return compiled
        compiled = self.jit[grid](*args, **constants)
        self._arm(compiled, args, constants)
        return compiled

    def _arm(self, compiled: Any, args: tuple[Any, ...], constants: dict[str, Any]) -> None:
        self.compiled = None
        if compiled is not None and not hasattr(compiled, "run"):
            result = getattr(compiled, "result", None)  # a compile future (newer Triton)
            compiled = result() if callable(result) else None
        if compiled is None:  # the interpreter's launch
            return
        names = getattr(self.jit, "arg_names", None)
        if names is None or len(names) < len(args):
            return
        rest = names[len(args) :]
        if any(n not in constants for n in rest):  # a default we would have to look up
            return
        self.tail = tuple(constants[n] for n in rest)
        self.constants = dict(constants)
        self.aligned = tuple(
            i for i, a in enumerate(args) if hasattr(a, "data_ptr") and not int(a.data_ptr()) & 15
        )
        self.compiled = compiled


def direct_launches(module: ModuleType) -> None:
    """Launch `module`'s kernels (its ``KERNELS``) through `Launch` from now on."""
    for name in getattr(module, "KERNELS", {}):
        kernel = getattr(module, name, None)
        if kernel is not None and not isinstance(kernel, Launch):
            setattr(module, name, Launch(kernel))


def _import_source(source: str, folder: Path) -> ModuleType:
    """`source` imported as a module from a file in `folder` (Triton's JIT reads a
    kernel's text with `inspect`, so the module must come from a real file)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    name = f"lazytorch_triton_{digest}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton resolves a kernel's globals through its module
    spec.loader.exec_module(module)
    return module


def _disk() -> Any:
    """The disk cache (None when LAZYTORCH_DISK_CACHE=0)."""

    if not env_value("LAZYTORCH_DISK_CACHE"):
        return None
    return DiskCache(default_cache_dir().absolute())


def register(carrier: Carrier, name: str = "triton") -> None:
    """Make `name` a backend name (``get_backend("triton")``) running on `carrier`.

    Raises ValueError if a backend of that name is already registered.
    """
    register_backend(name, lambda: TritonBackend(carrier, name=name))
