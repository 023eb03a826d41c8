"""What the runtime tells about each program it builds: dumps, the warm-up record, recompiles.

The executor calls `built` once per program it compiles or loads (a miss of the in-memory
cache) and, only while a dump is being written, `ran` after every run. Everything here is
off the hot path: a cache hit costs one module-global check.

* **Dumps** (``LAZYTORCH_DUMP_DIR=DIR``, ``lazytorch dump``, `set_dump_dir`): one folder
  ``DIR/NNN/`` per distinct program with its IR (text and JSON), a Graphviz graph, the
  schedule, the generated source, its guards and timings, and ``DIR/index.json`` listing
  every program with the cause and line of its cut. `write_dump` documents the files.
* **The warm-up record** (``LAZYTORCH_RECORD=FILE``): one JSON line per compiled program
  with its cache key, input signature, guards and the program itself, which
  ``lazytorch warmup --manifest FILE`` compiles ahead of time into a cache directory.
* **Recompiles:** a program built at a cut location that already built a different one is
  a recompile. It is counted (``recompiles`` in `lazytorch.metrics`) and explained on the
  ``lazytorch.recompiles`` logger: which input's shape or dtype changed, or where the graph
  itself changed.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from lazytorch import metrics
from lazytorch._errors import SettingError, path_problem
from lazytorch._settings import env_value
from lazytorch._version import __version__
from lazytorch.ir.node import _is_internal, format_loc
from lazytorch.ir.program import Program, format_shape

__all__ = ["active", "built", "dump_dir", "ran", "set_dump_dir", "set_record_file"]

_log_graphs = logging.getLogger("lazytorch.graphs")
_log_recompiles = logging.getLogger("lazytorch.recompiles")
_log_cache = logging.getLogger("lazytorch.cache")

# True while anything needs to hear about every run (a dump in progress).
active = False
dump_dir: Path | None = None
record_file: Path | None = None
# Where each path came from ("LAZYTORCH_DUMP_DIR", "set_dump_dir()"), for error messages.
_dump_setting = "set_dump_dir()"
_record_setting = "set_record_file()"

# In-memory cache key -> what was observed of that program (bounded like the program cache).
_seen: LRUCache[Any, _Seen] = LRUCache(maxsize=8192)
_by_loc: dict[str, _Signature] = {}  # cut location -> the program last built there
_recorded: set[str] = set()  # keys already written to the record file by this process
_recompiles_at: dict[str, int] = {}  # cut location -> recompiles there
_warned_dot = False
_next_number = 0


class _Signature:
    """What a recompile explanation compares: the inputs and the op sequence."""

    __slots__ = ("inputs", "locs", "ops")

    def __init__(self, program: Program) -> None:
        self.inputs = [(p.kind, p.dtype.short, tuple(p.shape)) for p in program.params]
        self.ops = [(ins.op.name, ins.dtype.short, tuple(ins.shape)) for ins in program.instrs]
        self.locs = [ins.loc for ins in program.instrs]


class _Seen:
    __slots__ = (
        "backend",
        "cache",
        "cause",
        "externs",
        "folder",
        "fusion",
        "guards",
        "kernels",
        "key",
        "loc",
        "nodes",
        "number",
        "peak",
        "recompile",
        "runs",
        "timings",
    )

    def __init__(self, number: int) -> None:
        self.number = number
        self.runs: list[float] = []
        self.folder: Path | None = None
        self.kernels: int | None = None
        self.peak: dict[str, int] | None = None
        self.fusion: list[int] | None = None  # ops fused into each kernel
        self.externs: int | None = None
        self.guards: int | None = None
        self.recompile: str | None = None


def set_dump_dir(path: str | os.PathLike[str] | None) -> None:
    """Dump every program this process builds from now on into `path` (None: stop).

    Numbering continues after the folders already in `path`, so several runs (or
    ``lazytorch dump`` twice) into one directory keep each other's programs. `path` is
    created if missing; one that cannot be (or cannot be written) raises `SettingError`.

    >>> import tempfile, lazytorch
    >>> from lazytorch.runtime import observe
    >>> d = tempfile.mkdtemp()
    >>> observe.set_dump_dir(d)
    >>> lazytorch.materialize(lazytorch.arange(3.0) * 7)
    >>> observe.set_dump_dir(None)
    >>> sorted(p.name for p in Path(d, "000").iterdir())[:3]
    ['graph.dot', 'guards.txt', 'ir.json']
    """
    _set_dump_dir(path, "set_dump_dir()")


def _set_dump_dir(path: str | os.PathLike[str] | None, setting: str) -> None:
    global dump_dir, active, _next_number, _dump_setting
    if path is None:
        if dump_dir is not None:
            _finish_dump()
        dump_dir, active = None, False
        return
    p = Path(path).expanduser().absolute()
    _check_writable_dir(p, setting)
    dump_dir, _dump_setting = p, setting
    active = True
    numbers = [int(c.name) for c in p.iterdir() if c.is_dir() and c.name.isdigit()]
    _next_number = max(numbers, default=-1) + 1
    # Programs already in memory are dumped again when they next run.
    for s in _seen.values():
        s.folder = None


def set_record_file(path: str | os.PathLike[str] | None) -> None:
    """Append each program compiled from now on to the warm-up manifest `path` (None: stop).

    The file (and its directory) is created if missing; a path that cannot be appended to
    raises `SettingError`.
    """
    _set_record_file(path, "set_record_file()")


def _set_record_file(path: str | os.PathLike[str] | None, setting: str) -> None:
    global record_file, _record_setting
    if path is None:
        record_file = None
        return
    p = Path(path).expanduser().absolute()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise SettingError(
            f"{setting}: the warm-up record file {p} {path_problem(e, p)}. Fix: "
            f"{_fix(setting, 'a file in a directory you can write, e.g. programs.jsonl')}"
        ) from None
    record_file, _record_setting = p, setting


def _check_writable_dir(p: Path, setting: str) -> None:
    """Create directory `p` if needed and write a file in it; SettingError if that fails."""
    import tempfile

    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=p, prefix=".lazytorch-probe-")
        try:
            os.write(fd, b"x")  # an empty file takes no space: this finds a full disk
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise SettingError(
            f"{setting}: the dump directory {p} {path_problem(e, p)}. Fix: "
            f"{_fix(setting, 'a directory you can write (it is created if missing)')}"
        ) from None


def _fix(setting: str, wanted: str) -> str:
    if setting.startswith("LAZYTORCH_"):
        return f"set {setting} to {wanted}, or unset it"
    return f"pass {wanted}"


def _stop_writing(what: str, setting: str, path: Path | None, e: OSError) -> None:
    """A dump or record write failed after its path was checked (a full disk, a directory
    removed meanwhile): warn once, naming the setting, and write no more of it."""
    import warnings

    problem = path_problem(e, e.filename or path or "")
    warnings.warn(
        f"lazytorch: stopped writing {what}: {setting} ({path}) {problem}. The program "
        "ran; fix the path (or free space) and set it again.",
        RuntimeWarning,
        stacklevel=_user_stacklevel(),
    )


def built(
    key: Any,
    program: Program,
    exe: Any,
    backend: str,
    cause: str,
    loc: tuple[str, int] | None,
    timings: dict[str, float],
    reason: str | None = None,
) -> None:
    """The executor built (compiled or loaded) `exe` for `program`: account, log, dump.

    `reason` explains a recompile when the executor knows better than a comparison with
    the last program built here (a guard of a dynamic program that failed).
    """
    global _next_number
    if loc is None and program.instrs:
        loc = program.instrs[-1].loc
    where = format_loc(loc) if loc is not None else f"<{cause or 'unknown'}>"
    info = getattr(exe, "info", None) or {}
    s = _Seen(_next_number)
    _next_number += 1
    s.key = info.get("key")
    s.backend = backend
    s.cause = cause
    s.loc = where
    s.nodes = len(program.instrs)
    s.cache = info.get("cache", "none")
    s.kernels = getattr(exe, "kernels", None)
    s.timings = {**timings, **{k: v for k, v in info.items() if k.endswith("_s")}}
    gen = info.get("generalized")
    metrics.observe(
        "symbolic_guards_per_graph", len(gen.symbolic_guards()) if gen is not None else 0
    )

    sig = _Signature(program)
    prev = _by_loc.get(where)
    # Sync mode cuts after every op, so one line builds one program per op it records:
    # that is the mode working, not a recompile.
    if prev is not None and cause != "sync mode":
        s.recompile = reason or _explain(prev, sig)
        metrics.recompile(s.recompile)
        _log_recompiles.info("recompiling program at %s: %s", where, s.recompile)
        n = _recompiles_at[where] = _recompiles_at.get(where, 0) + 1
        if n == recompile_limit():
            _warn_limit(where, n, s.recompile)
    _by_loc[where] = sig

    if _log_graphs.isEnabledFor(logging.DEBUG):
        _log_graphs.debug(
            "program built at %s (cut by %s; %s):\n%s", where, cause, s.cache, program
        )
    if _log_cache.isEnabledFor(logging.DEBUG) and s.key:
        if s.cache == "disk":
            _log_cache.debug(
                "disk hit %s for %s (loaded in %.1f ms)",
                s.key[:16],
                where,
                1e3 * info.get("load_s", 0.0),
            )
        else:
            _log_cache.debug(
                "miss %s for %s: compiled in %.2f s and stored",
                s.key[:16],
                where,
                info.get("compile_s", 0.0),
            )
    _seen[key] = s
    if record_file is not None and s.key and backend == "cpp":
        try:
            _record(program, info, s)
        except OSError as e:
            _stop_writing("the warm-up record", _record_setting, record_file, e)
            set_record_file(None)
    if dump_dir is not None:
        _dump(s, program, exe)


def _dump(s: _Seen, program: Program, exe: Any) -> None:
    """`write_dump`, or a warning and no more dumps when the directory cannot be written."""
    try:
        write_dump(s, program, exe)
    except OSError as e:
        _stop_writing("program dumps", _dump_setting, dump_dir, e)
        set_dump_dir(None)


def ran(key: Any, seconds: float, exe: Any) -> None:
    """One run of `exe`, the program under `key`, took `seconds` (called only while `active`)."""
    global _next_number
    info = getattr(exe, "info", None) or {}
    key = info.get("observe_key", key)  # a dynamic program's runs at every size are one's
    s = _seen.get(key)
    if s is None:  # built before anything observed it (or forgotten): what the program says
        s = _seen[key] = _Seen(_next_number)
        _next_number += 1
        info = getattr(exe, "info", None) or {}
        s.key, s.backend, s.cause, s.loc = info.get("key"), key[0], "(built earlier)", "?"
        s.nodes, s.cache, s.timings = len(exe.program.instrs), "memory", {}
        s.kernels = getattr(exe, "kernels", None)
    s.runs.append(seconds)
    if dump_dir is not None and s.folder is None:
        # Built before the dump started: dump it now, without build timings.
        gen = info.get("generalized")
        _dump(s, exe.program if gen is None else gen.symbolic_program(), exe)


# -- recompile explanations ------------------------------------------------------------------
class RecompileWarning(RuntimeWarning):
    """A cut location keeps compiling new programs (see `recompile_limit`)."""


def recompile_limit() -> int:
    """Recompiles per cut location before a `RecompileWarning` (``LAZYTORCH_RECOMPILE_LIMIT``,
    default 8; 0 never warns)."""
    return env_value("LAZYTORCH_RECOMPILE_LIMIT")


def _warn_limit(where: str, n: int, reason: str) -> None:
    """Warn once per location: compiling keeps working (nothing falls back), but slowly."""
    import warnings

    warnings.warn(
        f"lazytorch: the graph cut at {where} has been recompiled {n} times (limit "
        f"{n}); the latest because {reason}. Sizes that change become symbolic after their "
        "second value, so what keeps changing here is something a program cannot take as "
        "an argument: a dtype, the graph itself, a size marked static, a size outside a "
        "mark_dynamic range, or a third independent size. Mark the sizes that vary with "
        "lazytorch.mark_dynamic(x, dim) (or widen its min/max), pad inputs to a few bucket "
        "sizes (docs/serving.md shows how), or move the cut; LAZYTORCH_LOG=recompiles shows "
        "every recompile and LAZYTORCH_RECOMPILE_LIMIT raises this limit (0 turns the "
        "warning off).",
        RecompileWarning,
        stacklevel=_user_stacklevel(),
    )


def _user_stacklevel() -> int:
    """The `warnings.warn` stacklevel of the innermost frame outside lazytorch."""
    f, level = sys._getframe(2), 2  # 1 is our caller (_warn_limit), warn counts from it
    while f is not None and _is_internal(f.f_code.co_filename):
        f, level = f.f_back, level + 1
    return level


def _explain(prev: _Signature, new: _Signature) -> str:
    """Why `new` is a different program from `prev`, the last one built at its location."""
    if [o[0] for o in prev.ops] == [o[0] for o in new.ops] and len(prev.inputs) == len(new.inputs):
        changes = [
            f"input {i} {a[1]}{format_shape(a[2])} -> {b[1]}{format_shape(b[2])}"
            for i, (a, b) in enumerate(zip(prev.inputs, new.inputs))
            if a != b
        ]
        if changes:
            more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
            return ", ".join(changes[:3]) + more + " (sizes and dtypes are specialized)"
        for j, (a, b) in enumerate(zip(prev.ops, new.ops)):
            if a != b:  # a size that comes from the script, not from an input
                at = new.locs[j]
                return (
                    f"node {j} ({b[0]}) is {b[1]}{format_shape(b[2])}, was "
                    f"{a[1]}{format_shape(a[2])}"
                    + (f" (recorded at {format_loc(at)})" if at else "")
                    + "; sizes and dtypes are specialized"
                )
        return "the same ops over the same inputs, with other attributes or wiring"
    for j, (a, b) in enumerate(zip(prev.ops, new.ops)):
        if a[0] != b[0]:
            at = new.locs[j]
            return (
                f"the graph changed ({len(prev.ops)} -> {len(new.ops)} nodes): node {j} is "
                f"{b[0]}, was {a[0]}" + (f" (recorded at {format_loc(at)})" if at else "")
            )
    return f"the graph changed ({len(prev.ops)} -> {len(new.ops)} nodes)"


# -- the warm-up record ------------------------------------------------------------------------
def _record(program: Program, info: dict[str, Any], s: _Seen) -> None:
    from lazytorch.ir.serialize import program_to_json  # lazy: import time (only for dumps)

    if s.key in _recorded or record_file is None:
        return
    gen = info.get("generalized")
    try:
        # A program over symbolic sizes is recorded as one of its instances plus the fit.
        body = program_to_json(program if gen is None else gen.pattern.program)
    except TypeError as e:  # a program the JSON form cannot hold yet: say so, keep running
        _log_cache.warning("LAZYTORCH_RECORD: program at %s not recorded: %s", s.loc, e)
        return
    line = {
        "format": 1,
        "key": s.key,
        "backend": s.backend,
        "options": {"deterministic": bool(info.get("deterministic", False))},
        "lazytorch": __version__,
        "inputs": [f"{p.kind} {p.dtype.name}{format_shape(p.shape)}" for p in program.params],
        "guards": guards_of(program) if gen is None else gen.guards(),
        "loc": s.loc,
        "cause": s.cause,
        "program": body,
        **({"dynamic": gen.to_json()} if gen is not None else {}),
    }
    text = json.dumps(line, separators=(",", ":")) + "\n"
    import fcntl

    # One write under an exclusive lock: lines from concurrent processes never interleave.
    with open(record_file, "a", encoding="utf-8") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            f.write(text)
            f.flush()
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    _recorded.add(s.key)


def guards_of(program: Program) -> list[str]:
    """The conditions under which a cached program is reused, one readable line each.

    Every size is specialized today, so the guards are the exact input signature; the
    in-memory lookup checks them as part of the structural key.
    """
    return [
        f"input {i}: {p.kind} {p.dtype.name}{format_shape(p.shape)} on {p.device} (exact)"
        for i, p in enumerate(program.params)
    ]


# -- dumps -----------------------------------------------------------------------------------------
def write_dump(s: _Seen, program: Program, exe: Any) -> None:
    """Write ``NNN/`` for one program (see the module docstring) and refresh index.json.

    ``ir.txt`` (readable IR: value, dtype[shape], op, inputs, user file:line), ``ir.json``
    (`lazytorch.ir.serialize` form plus lines), ``graph.dot`` (and ``graph.svg`` when
    Graphviz's ``dot`` is on PATH), ``schedule.txt`` (kernels with the ops each fuses,
    buffers, memory plan), the generated source (``program.cpp``; ``program.py`` for
    Triton), ``guards.txt`` and ``timings.json`` (seconds: record, capture, schedule,
    codegen, compile, load, run).
    """
    global _warned_dot
    assert dump_dir is not None
    folder = dump_dir / f"{s.number:03d}"
    folder.mkdir(parents=True, exist_ok=True)
    s.folder = folder
    from lazytorch.ir.serialize import program_to_json  # lazy: import time (only for dumps)

    (folder / "ir.txt").write_text(str(program) + "\n")
    gen = (getattr(exe, "info", None) or {}).get("generalized")
    try:
        # Over symbolic sizes: the instance it was built for, plus the fit (as recorded).
        body: Any = program_to_json(program if gen is None else gen.pattern.program)
        if gen is not None:
            body["dynamic"] = gen.to_json()
    except TypeError as e:
        body = {"error": str(e)}
    (folder / "ir.json").write_text(json.dumps(body, indent=1) + "\n")
    (folder / "graph.dot").write_text(graph_dot(program))
    if shutil.which("dot"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["dot", "-Tsvg", "-o", str(folder / "graph.svg"), str(folder / "graph.dot")],
                check=True,
                capture_output=True,
                timeout=60,
            )
    elif not _warned_dot:
        _warned_dot = True
        print(
            "lazytorch dump: Graphviz 'dot' is not installed, so only graph.dot is written "
            "(install graphviz for graph.svg, or render graph.dot elsewhere)",
            file=sys.stderr,
        )
    (folder / "schedule.txt").write_text(_schedule_text(s, program, exe) + "\n")
    source = getattr(exe, "source", None)
    entry = (getattr(exe, "info", None) or {}).get("entry")
    if source is None and entry:
        with contextlib.suppress(OSError):
            source = Path(entry, "program.cpp").read_text()
    if source is not None:
        # the backend's language: program.cpp (C++), program.py (the Triton module)
        (folder / getattr(exe, "source_name", "program.cpp")).write_text(source)
    gen = (getattr(exe, "info", None) or {}).get("generalized")
    guards = guards_of(program) if gen is None else gen.guards()
    s.guards = len(guards)
    (folder / "guards.txt").write_text(
        "# the cached program is reused while all of these hold\n"
        + "\n".join(guards)
        + (
            "\nsymbolic guards: none (every size in this program is static)\n"
            if gen is None
            else f"\nsymbolic sizes: {', '.join(gen.names)}\n"
        )
    )
    _write_timings(s)
    _write_index()


def _schedule_text(s: _Seen, program: Program, exe: Any = None) -> str:
    gen = (getattr(exe, "info", None) or {}).get("generalized")
    note = ""
    if gen is not None:  # over symbolic sizes: show it at the sizes it was built for
        program = gen.pattern.program
        bound = ", ".join(
            f"{n} = {gen.pattern.ints[pos]}" for n, (pos, _) in zip(gen.names, gen.sources)
        )
        note = (
            f"\n(shown at {bound}; the compiled program takes every size its guards allow, "
            "see program.cpp and guards.txt)"
        )
    sched = getattr(exe, "sched", None)  # the backend's own (Triton's fuses epilogues)
    if sched is None:
        try:
            from lazytorch.scheduler import schedule  # lazy: import time (compiling only)

            sched = schedule(program, symbolic=gen is not None)
        except Exception as e:  # a program the cpp backend does not take
            return f"not scheduled for the cpp backend: {type(e).__name__}: {e}"
    s.kernels = len(sched.kernels) if s.kernels is None else s.kernels
    s.peak = {"planned": sched.arena_bytes, "naive": sched.naive_bytes}
    s.fusion = [len(k.fused) for k in sched.kernels]
    s.externs = len(sched.steps) - len(sched.kernels)
    return str(sched) + note


def _write_timings(s: _Seen) -> None:
    if s.folder is None:
        return
    t = dict(s.timings)
    if s.runs:
        t["run_s"] = s.runs[0]
        t["runs"] = len(s.runs)
        t["run_median_s"] = statistics.median(s.runs)
    (s.folder / "timings.json").write_text(json.dumps(t, indent=1, sort_keys=True) + "\n")


def _row(s: _Seen) -> dict[str, Any]:
    t = s.timings
    return {
        "program": f"{s.number:03d}",
        "key": s.key,
        "backend": s.backend,
        "cause": s.cause,
        "loc": s.loc,
        "nodes": s.nodes,
        "kernels": s.kernels,
        "extern_calls": s.externs,
        "fused_ops_per_kernel": s.fusion,
        "peak_bytes": s.peak,
        "guards": s.guards,
        "cache": s.cache,
        "compile_s": t.get("compile_s"),
        "runs": len(s.runs),
        "recompile": s.recompile,
        "pid": os.getpid(),
    }


def _write_index() -> None:
    if dump_dir is None:
        return
    path = dump_dir / "index.json"
    mine = {r["program"]: r for r in (_row(s) for s in _seen.values() if s.folder is not None)}
    rows: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        old = json.loads(path.read_text())
        rows = {r["program"]: r for r in old.get("programs", []) if isinstance(r, dict)}
    rows.update(mine)
    data = {
        "format": 1,
        "svg": shutil.which("dot") is not None,
        "programs": [rows[k] for k in sorted(rows)],
    }
    tmp = path.with_name(f".index.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def _finish_dump() -> None:
    for s in _seen.values():
        if s.folder is not None:
            with contextlib.suppress(OSError):
                _write_timings(s)
    with contextlib.suppress(OSError):
        _write_index()


def _at_exit() -> None:
    if dump_dir is not None:
        _finish_dump()


atexit.register(_at_exit)


_CATEGORY_COLOR = {
    "leaf": "#dddddd",
    "source": "#f0e0ff",
    "elementwise": "#e0f0ff",
    "reduce": "#ffe0c0",
    "scan": "#ffe0c0",
    "movement": "#f4f4f4",
    "index": "#ffd0d0",
    "matmul": "#c8f0c8",
    "sort": "#ffd0d0",
}


def graph_dot(program: Program) -> str:
    """The program as a Graphviz digraph: one node per value, colored by op category."""
    out = [
        "digraph program {",
        '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10];',
    ]
    for i, p in enumerate(program.params):
        label = _label(f"%{i} input {i} ({p.kind})", f"{p.dtype.short}{format_shape(p.shape)}")
        out.append(f'  v{i} [label="{label}", shape=ellipse, fillcolor="#dddddd"];')
    base = len(program.params)
    outputs = set(program.outputs)
    for j, ins in enumerate(program.instrs):
        v = base + j
        op = ins.op.name if ins.op.name != "const" else f"const {ins.attrs[0]!r}"
        lines = [f"%{v} {op}", f"{ins.dtype.short}{format_shape(ins.shape)}"]
        if ins.loc is not None:
            lines.append(f"{os.path.basename(ins.loc[0])}:{ins.loc[1]}")
        color = _CATEGORY_COLOR.get(ins.op.category, "#ffffff")
        extra = ", peripheries=2" if v in outputs else ""
        out.append(f'  v{v} [label="{_label(*lines)}", fillcolor="{color}"{extra}];')
        out.extend(f"  v{a} -> v{v};" for a in ins.inputs)
    out.append("}")
    return "\n".join(out) + "\n"


def _label(*lines: str) -> str:
    """A Graphviz label: each line escaped, joined by Graphviz's own line break."""
    return "\\n".join(x.replace("\\", "\\\\").replace('"', '\\"') for x in lines)


def _env_setup() -> None:
    dump = env_value("LAZYTORCH_DUMP_DIR")
    if dump:
        _set_dump_dir(dump, "LAZYTORCH_DUMP_DIR")
    rec = env_value("LAZYTORCH_RECORD")
    if rec:
        _set_record_file(rec, "LAZYTORCH_RECORD")


_env_setup()
