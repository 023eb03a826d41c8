"""Running a cut: capture, program-cache lookup, compile on a miss, run, attach results."""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from lazytorch import _config, _native, metrics
from lazytorch import runtime as _runtime
from lazytorch._devices import backend_for, device_scope, place
from lazytorch.ir.device import CPU
from lazytorch.ir.generalize import SizePattern
from lazytorch.ir.node import Node, format_loc, user_loc
from lazytorch.ir.primitives import get
from lazytorch.ir.program import Capture, Program, canonicalize, capture
from lazytorch.runtime import compile_worker, dynamic, eager, host_fold, observe
from lazytorch.runtime.backends import Backend, Executable, ProgramError, get_backend
from lazytorch.runtime.interpreter import InterpretedProgram
from lazytorch.runtime.tiered import COMPILE_AT_SIGHTING, Tiered

_BUFFER = get("buffer")


class ProgramCache(OrderedDict):  # type: ignore[type-arg]
    """Executables by key, the least recently used dropped past `maxsize`.

    A hit is one dict lookup and one ``move_to_end``, both in C: the lookup is on every
    cut's path, where cachetools' LRUCache (three Python frames per hit) cost about 3 us.

    >>> c = ProgramCache(maxsize=2)
    >>> c["a"], c["b"] = 1, 2
    >>> c.get("a"), c.get("z")
    (1, None)
    >>> c["c"] = 3                     # "b" is now the least recently used
    >>> list(c)
    ['a', 'c']
    """

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def get(self, key: Any, default: Any = None) -> Any:
        value = OrderedDict.get(self, key, _MISSING)
        if value is _MISSING:
            return default
        self.move_to_end(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        OrderedDict.__setitem__(self, key, value)
        self.move_to_end(key)
        if len(self) > self.maxsize:
            self.popitem(last=False)


_MISSING = object()

# Compiled programs by (backend, structural key). The key holds no buffers or nodes.
_programs = ProgramCache(maxsize=4096)

# Callables told about every program run while a profiler is on (lazytorch.autograd.profiler):
# each gets (cause, loc, nodes, backend, t_start, t_built, t_run, t_end), perf_counter seconds;
# t_built is the (start, end) of the build on a miss, None on a cache hit. Empty otherwise: one list check per cut.
listeners: list[Any] = []


def clear_cache() -> None:
    """Forget every compiled program held in memory."""
    _programs.clear()
    _fold_history.clear()
    dynamic.clear()


def build_program(roots: list[Node]) -> Program:
    """The canonical program for `roots` (what a cache miss compiles); for inspection."""
    return canonicalize(Program.from_capture(capture(roots)))


def _walk(roots: list[Node]) -> Capture:
    """The capture a lookup needs (parameters, node order, key); wiring only without _C.

    With the native runtime the walk runs in C++ (`lazytorch._C.capture_key`: the same
    parameters and order as `capture`, the key a 128-bit hash of the same sequence), which is
    most of what a cache hit costs; a miss then walks again in Python for the wiring.
    """
    global _capture_key
    if _capture_key is None:
        mod = _native.load(warn=False)
        _capture_key = mod.capture_key if mod is not None else False
    if _capture_key is False:
        return capture(roots)
    key, params, order = _capture_key(roots)
    return Capture(roots, params, order, None, key)


_capture_key: Any = None


def run(roots: list[Node], cause: str = "", loc: Any = None) -> None:
    global _last_end
    if eager.enabled and _runtime._compile_trace is None and eager.run(roots):
        return  # a DataLoader's small cut, computed node by node (lazytorch.runtime.eager)
    device = roots[0].device
    for n in roots:
        if n.device is not device:  # one program per device: each runs where its values live
            for group in _by_device(roots):
                run(group, cause, loc)
            return
    t0 = time.perf_counter()
    cap = _walk(roots)
    scope = None
    if device is CPU:
        backend: Backend = get_backend(_config.backend_name())
    else:  # a device module names the backend that runs its programs (lazytorch._devices)
        backend = get_backend(backend_for(device) or _config.backend_name())
        scope = device_scope(device)
    deterministic = _config.are_deterministic_algorithms_enabled()
    autotune = _config.max_autotune_enabled()
    precision = _config.get_float32_matmul_precision()
    key = (backend.name, deterministic, autotune, precision, cap.key)
    exe = _programs.get(key)
    if exe is None and device is CPU and _foldable(backend) and not _fold_history.stable(key):
        # A miss whose key holds moving offsets: they are computed on the host, and the cut
        # is looked up again without them (lazytorch.runtime.host_fold); a base of windows
        # computed in one round has its windows read in the next. A key whose fold copied,
        # back soon, did not move (a convolution's taps): it is compiled whole, its slices
        # in kernels, not copied by NumPy at every step.
        missed, copied = key, False
        for _ in range(_FOLD_ROUNDS):
            did = host_fold.fold(roots, cap.order)
            if not did:
                break
            if did == host_fold.COPIED and not copied:
                copied = True
                _fold_history.folded(missed)
            roots = [n for n in roots if n.buffer is None]
            if not roots:
                return
            cap = _walk(roots)
            key = (backend.name, deterministic, autotune, precision, cap.key)
            exe = _programs.get(key)
            if exe is not None:
                break
    t_built: tuple[float, float] | None = None
    if exe is None:
        if cap.wiring is None:
            cap = capture(roots)
        program = canonicalize(Program.from_capture(cap))
        options = {
            "deterministic": deterministic,
            "max_autotune": autotune,
            "matmul_precision": precision,
        }
        t_build = time.perf_counter()
        exe = _build(key, cap.params, program, backend, options, cause, loc, t0, _tiering(backend))
        t_built = (t_build, time.perf_counter())
    elif type(exe) is Tiered:
        exe = exe.pick()
    else:
        metrics.increment("cache_hits_memory")
    hooks = _runtime._compile_trace
    if hooks is not None:  # a lazytorch.compile trace records the programs it runs
        hooks.ran(key, exe, cap.params, cap.roots, device)
    t_run = time.perf_counter()
    # A 0-d tensor may come from another device (as in torch): its value is moved here.
    inputs = [p.buffer if p.device is device else _moved(p, device) for p in cap.params]
    try:
        if scope is None:
            outputs = exe.run(inputs)
        else:
            with scope:
                outputs = exe.run(inputs)
    except ProgramError as pe:
        raise _located(pe, exe.program, cap) from pe.error
    for node, value in zip(cap.roots, outputs):
        node.realize(value, _BUFFER)
    end = time.perf_counter()
    metrics.materialized(t0 - _last_end, end - t_run, end - t0)
    if observe.active:
        observe.ran(key, end - t_run, exe)
    if listeners:
        for tell in listeners:
            tell(cause, loc, len(cap.order), backend.name, t0, t_built, t_run, end)
    _last_end = end


def _by_device(roots: list[Node]) -> list[list[Node]]:
    """`roots` grouped by device, in order of first appearance."""
    groups: dict[Any, list[Node]] = {}
    for n in roots:
        groups.setdefault(n.device, []).append(n)
    return list(groups.values())


def _moved(p: Node, device: Any) -> Any:
    """The value of parameter `p`, recorded on another device, where `device` keeps values."""
    return place(p.buffer, device)


def _build(
    key: Any,
    params: list[Node],
    program: Program,
    backend: Backend,
    options: dict[str, Any],
    cause: str,
    loc: Any,
    t0: float,
    tier: bool = False,
) -> Executable:
    """The executable for a cut that missed the exact cache: a dynamic program's, bound to
    these sizes, or one compiled now (over symbolic sizes if the sizes keep changing) —
    or, when `tier`, the interpreter while it compiles in the background (`_tier0`), unless
    the disk cache holds it."""
    deterministic = options["deterministic"]
    pattern = None
    reason = None
    marks = None
    if _planned_tiers:
        _adopt_finished()
    if hasattr(backend, "compile_dynamic") and dynamic.enabled():
        pattern = SizePattern.of(program)
        marks = dynamic.marks_for(params)
        bound, reason = dynamic.lookup((backend.name, deterministic), pattern, backend, marks)
        if bound is not None:
            _programs[key] = bound
            if reason == "loaded":  # from the disk cache: observed like any program built
                t2 = time.perf_counter()
                metrics.increment("programs_built")
                timings = {"record_s": t0 - _last_end, "capture_s": 0.0, "build_s": t2 - t0}
                shown = bound.info["generalized"].symbolic_program()
                bound.info["observe_key"] = key  # every size's executable shares info
                observe.built(key, shown, bound, backend.name, cause, loc or user_loc(), timings)
            return bound
    # The cut's line, looked up only on a miss: the innermost frame outside lazytorch is
    # the user's materialize()/opt.step()/.item() call.
    loc = loc or user_loc()
    where = format_loc(loc) if loc is not None else f"<{cause or 'unknown'}>"
    # A first sighting runs on the interpreter; so does a size variant of the program last
    # built here, whose program over symbolic sizes compiles meanwhile (below) — unless the
    # disk cache holds this very program. While the symbolic program of this pattern is
    # compiling, that lookup is skipped: it writes the whole program's canonical text
    # (~7 ms at each token of a 330-node program) for a size the symbolic program serves.
    scope = (backend.name, deterministic)
    variant = tier and pattern is not None and dynamic.size_variant(scope, where, pattern, marks)
    if tier and (
        (variant and dynamic.compiling(scope, pattern)) or not _on_disk(backend, program, options)
    ):
        if not variant:
            if pattern is not None:
                dynamic.remember(scope, where, pattern)
            return _tier0(key, program, backend, options, cause, loc, t0)
        # A size variant: the program over symbolic sizes compiles in the background while
        # this size (and every other until it is ready) runs on the interpreter — a loop
        # over a growing sequence (sampling a language model token by token) must not stop
        # for seconds at its second token.
        assert pattern is not None
        planned = dynamic.plan(scope, where, pattern, marks)
        return _tier0(key, program, backend, options, cause, loc, t0, scope, planned)
    # From here on this cut compiles, or loads from disk, in the foreground. (A tiered
    # variant that does not generalize, a slice whose offset moves each step, was given to
    # the interpreter above: `dynamic.plan` returns no plan for it.)
    t1 = time.perf_counter()
    shown = program
    made = None
    if pattern is not None:
        made = dynamic.generalize_and_compile(
            (backend.name, deterministic), where, pattern, backend, options, marks
        )
    if made is not None:
        exe, shown, changed = made
        reason = f"{changed}: compiling one program for every such size"
    else:
        exe = _compiled(backend, program, options)
    _programs[key] = exe
    t2 = time.perf_counter()
    metrics.increment("programs_built")
    metrics.timed("build", t2 - t0)
    timings = {"record_s": t0 - _last_end, "capture_s": t1 - t0, "build_s": t2 - t1}
    if made is not None:
        exe.info["observe_key"] = key  # every size's executable shares info
    observe.built(key, shown, exe, backend.name, cause, loc, timings, reason=reason)
    return exe


def _tiering(backend: Backend) -> bool:
    """Whether a program not compiled yet runs on the interpreter first
    (`lazytorch.runtime.tiered` says when it does not)."""
    return (
        _config.tiered_enabled()
        and backend.name == "cpp"
        and _config.backend_name() == "auto"
        and not _config.are_deterministic_algorithms_enabled()
        and not observe.active
        and observe.record_file is None
    )


_FOLD_ROUNDS = 3

# When the missed keys were folded (host_fold's rule: a key back soon is stable).
_fold_history = host_fold.FoldHistory()


def _foldable(backend: Backend) -> bool:
    """Whether a missed cut folds its windows and constants on the host first: on the cpp
    backend, outside a lazytorch.compile trace (which replays every value it records)."""
    return backend.name == "cpp" and _runtime._compile_trace is None


def _on_disk(backend: Backend, program: Program, options: dict[str, Any]) -> bool:
    """Whether the disk cache already holds `program` compiled (then loading it is cheap)."""
    cached = getattr(backend, "is_cached", None)
    return bool(cached is not None and cached(program, options))


def _tier0(
    key: Any,
    program: Program,
    backend: Backend,
    options: dict[str, Any],
    cause: str,
    loc: Any,
    t0: float,
    scope: Any = None,
    planned: tuple[Any, tuple[int, ...]] | None = None,
) -> Executable:
    """A program seen for the first time: the interpreter runs it now; a `Tiered` entry
    holds it until the background compile (started at its second sighting) is ready.
    `planned` (a size variant's generalized program and point, `dynamic.plan`) is compiled
    over symbolic sizes instead, starting now."""
    fast = InterpretedProgram(program, single_threaded_blas=True)
    where = loc or user_loc()
    # (the symbolic program, its compile error, whether dynamic.adopt heard of them)
    dynamic_result: list[Any] = [None, None, False]

    def compile_in_background() -> Executable:  # on the compile thread: no shared state
        t = time.perf_counter()
        exe = None
        if planned is not None:
            gen, point = planned
            try:
                sym = backend.compile_dynamic(gen, options)  # type: ignore[attr-defined]
                dynamic_result[0] = sym
                exe = sym.bind(point)
            except Exception as e:  # NotSymbolic, or a bug of that path: compile this size
                dynamic_result[1] = e
        if exe is None:
            root = _child_cache_root(backend)
            if root is not None:  # the child compiles into the disk cache; this loads it
                compile_worker.compile_in_child(program, options, root)
            exe = _compiled(backend, program, options)
        exe.info.setdefault("background_s", time.perf_counter() - t)
        return exe

    def adopt() -> None:  # on the main thread, once the job is done (_adopt_finished)
        if planned is not None and not dynamic_result[2]:
            dynamic_result[2] = True
            dynamic.adopt(scope, planned[0], dynamic_result[0], dynamic_result[1])

    def install(exe: Executable) -> None:  # on the main thread, at the first cut after
        if planned is not None:
            adopt()
            exe.info["observe_key"] = key  # every size's executable shares info
        _programs[key] = exe
        metrics.increment("programs_built")
        metrics.timed("build", exe.info.get("background_s", 0.0))
        timings = {"record_s": 0.0, "capture_s": 0.0, "build_s": exe.info.get("background_s", 0.0)}
        # (a recompile of the site, if it is one, is explained by what differs from the
        # program built there before: tiering is how it was compiled, not why)
        observe.built(key, program, exe, backend.name, cause, where, timings)

    tier = Tiered(fast, compile_in_background, install)
    _programs[key] = tier
    if planned is not None:
        tier.sightings = COMPILE_AT_SIGHTING - 1  # the pattern's second: compile now
        _planned_tiers.append((key, tier, adopt))
    return tier.pick()


# Tiered entries compiling a size variant over symbolic sizes: every later size waits for
# that program, so it is adopted at the first cut after the compile finished, whichever
# size that cut has (not only at the next cut of the size that started it).
_planned_tiers: list[tuple[Any, Tiered, Callable[[], None]]] = []


def _adopt_finished() -> None:
    for entry in list(_planned_tiers):
        key, tier, adopt = entry
        job = tier.job
        if job is None or not job.done.is_set():
            continue
        _planned_tiers.remove(entry)
        adopt()
        if job.error is None and _programs.get(key) is tier:
            tier.on_ready(job.result)  # this size's executable, as its next cut would
            metrics.increment("tier_switches")


def _child_cache_root(backend: Backend) -> str | None:
    """The disk cache a compile child may write for `backend`, if one may
    (lazytorch.runtime.compile_worker)."""
    if backend.name != "cpp" or not compile_worker.enabled():
        return None
    try:
        disk = backend.disk  # type: ignore[attr-defined]
    except Exception:  # an unusable cache dir: the in-process compile reports it
        return None
    if disk is None or disk.read_only:
        return None
    return str(disk.root)


def _compiled(backend: Backend, program: Program, options: dict[str, Any]) -> Executable:
    """`backend.compile`, with an OSError the machine caused (a full disk, an unusable
    temporary directory) raised as the `ToolchainError` that names it and the fix."""
    try:
        return backend.compile(program, options)
    except OSError as e:
        # lazy: import time (compiling only)
        from lazytorch.codegen.compiler import environment_error

        err = environment_error(e)
        if err is None:
            raise
        raise err from e


# End of the previous materialization ("record" timings measure from here); before the first
# one, the start of `import lazytorch`.
_last_end: float = getattr(sys.modules.get("lazytorch"), "_t0", time.perf_counter())


def _located(pe: ProgramError, program: Program, cap: Any) -> BaseException:
    """The failing instruction's error, naming its op and the current capture's line."""
    ins = program.instrs[pe.index]
    node = cap.order[ins.origin] if 0 <= ins.origin < len(cap.order) else None
    loc = node.loc if node is not None else ins.loc
    e = pe.error
    msg = f"{e} (in {ins.op.name} recorded at {format_loc(loc)})"
    try:
        return type(e)(msg)
    except Exception:
        return RuntimeError(msg)
