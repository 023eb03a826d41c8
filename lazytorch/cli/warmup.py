"""``lazytorch warmup``: compile programs into the cache directory ahead of time.

Two sources of programs:

* ``--manifest FILE``: a warm-up manifest written during a real run with
  ``LAZYTORCH_RECORD=FILE`` (or ``lazytorch run --record FILE``). Each line holds a
  program's cache key, input signature, guards and the program itself, so warm-up needs
  neither the script nor its data.
* ``module:function --input SPEC ...``: call an entry point on generated inputs and
  compile whatever it materializes. A SPEC is ``dtype[dims]``; a dim is a size, a range
  ``A..B`` or alternatives ``A|B|C``, and every combination is called. Inputs are data
  (``from_numpy``), as a server's would be: float inputs random normal, integer and bool
  inputs zeros.

Both are idempotent (a program already in the cache is not compiled again), show progress,
and end with a summary. Give every size a server will see: ``--input
"float32[1..64,784]"`` calls the function 64 times. Each call cuts as a real one would, so
a size that changes becomes symbolic after its second value (docs/dynamic_shapes.md) and
the range compiles a few programs, not 64; where a size cannot be symbolic
(``LAZYTORCH_DYNAMIC=0``, a dtype, a size the program cannot take as an argument) each
size compiles its own (a function that pads to size buckets compiles one per bucket).

    LAZYTORCH_RECORD=programs.jsonl python serve.py --selftest
    lazytorch warmup --manifest programs.jsonl --cache-dir build/cache
    lazytorch warmup mymodel:predict --input "float32[1..64,784]"
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import lazytorch
from lazytorch import _config, metrics
from lazytorch._settings import env_value, raw_value
from lazytorch._version import __version__
from lazytorch.cli import CliError
from lazytorch.ir.dtypes import BY_NAME
from lazytorch.tensor import Tensor

__all__ = ["add_parser", "parse_spec"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "warmup",
        help="compile programs into the cache ahead of time",
        description="Compile programs into the cache directory before they are needed: "
        "from a manifest recorded with LAZYTORCH_RECORD=FILE, or by calling "
        "module:function on generated inputs. Idempotent; prints progress and a summary.",
    )
    p.add_argument("target", nargs="?", metavar="MODULE:FUNCTION", help="entry point to call")
    p.add_argument("--manifest", metavar="FILE", help="warm-up manifest (LAZYTORCH_RECORD)")
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="SPEC",
        help='an input spec per positional argument, e.g. "float32[1..64,784]" '
        "(sizes: N, A..B or A|B|C)",
    )
    p.add_argument(
        "--cache-dir", metavar="DIR", help="cache directory (default: LAZYTORCH_CACHE_DIR)"
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=max(1, (os.cpu_count() or 1)),
        metavar="N",
        help="programs compiled at once from a manifest (default: CPU count)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.set_defaults(func=_warmup)


def _warmup(args: argparse.Namespace) -> int:
    if (args.manifest is None) == (args.target is None):
        raise CliError("give either --manifest FILE or MODULE:FUNCTION with --input specs")
    if args.cache_dir:
        os.environ["LAZYTORCH_CACHE_DIR"] = os.path.abspath(args.cache_dir)
    if not env_value("LAZYTORCH_DISK_CACHE"):
        raise CliError(
            f"LAZYTORCH_DISK_CACHE={raw_value('LAZYTORCH_DISK_CACHE')} turns the disk cache "
            "off: nothing to warm"
        )
    if args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.manifest is not None:
        return _from_manifest(args)
    return _from_function(args)


# -- from a manifest ------------------------------------------------------------------------------
def _read_manifest(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise CliError(f"cannot read manifest {path}: {e.strerror}") from None
    records: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise CliError(f"{path}:{n}: not a JSON line ({e})") from None
        if not isinstance(rec, dict) or rec.get("format") != 1 or "program" not in rec:
            raise CliError(f"{path}:{n}: not a lazytorch warm-up record (format 1)")
        records.setdefault(str(rec.get("key")), rec)  # the same program recorded twice
    return list(records.values())


def _from_manifest(args: argparse.Namespace) -> int:
    # lazy: import time (cli --help)
    from lazytorch.ir.serialize import ProgramFormatError, program_from_json
    from lazytorch.runtime.backends import get_backend  # lazy: import time (cli --help)

    records = _read_manifest(args.manifest)
    backend = get_backend("cpp")  # CompilerMissing names the fix
    disk = backend.disk
    t0 = time.perf_counter()
    total = len(records)
    done = {"compiled": 0, "cached": 0, "failed": 0, "rekeyed": 0}
    jobs: list[tuple[int, dict[str, Any], Any, str]] = []
    for i, rec in enumerate(records, 1):
        where = rec.get("loc", "?")
        try:
            program = program_from_json(rec["program"])
        except ProgramFormatError as e:
            done["failed"] += 1
            print(f"[{i}/{total}] {where}: unreadable program: {e}", file=sys.stderr)
            continue
        options = {"deterministic": bool(rec.get("options", {}).get("deterministic"))}
        if "dynamic" in rec:  # a program over symbolic sizes: one instance plus the fit
            # lazy: import time (cli --help)
            from lazytorch.ir.generalize import Generalized, SizePattern

            try:
                program = Generalized.from_json(SizePattern.of(program), rec["dynamic"])
            except ValueError as e:
                done["failed"] += 1
                print(f"[{i}/{total}] {where}: unreadable generalization: {e}", file=sys.stderr)
                continue
            key = backend._dynamic_key(program.spec_text(), options)
        else:
            key = backend.key(program, options)
        if key != rec.get("key"):
            # Recorded by another lazytorch, compiler or machine: the program is the same,
            # its cache entry here has another key (that of this toolchain).
            done["rekeyed"] += 1
        if disk.lookup(key) is not None:
            done["cached"] += 1
            if not args.quiet:
                print(f"[{i}/{total}] {where}: already cached ({len(program)} nodes)")
            continue
        jobs.append((i, rec, program, key))

    def compile_one(job: tuple[int, dict[str, Any], Any, str]) -> tuple[int, str, float, str]:
        i, rec, program, _ = job
        options = {"deterministic": bool(rec.get("options", {}).get("deterministic"))}
        t = time.perf_counter()
        try:
            if hasattr(program, "spec_text"):
                exe = backend.compile_dynamic(program, options)
            else:
                exe = backend.compile(program, options)
        except Exception as e:  # report and go on: one bad program must not stop the rest
            return i, "failed", time.perf_counter() - t, f"{type(e).__name__}: {e}"
        how = "compiled" if exe.info.get("cache") == "compiled" else "cached"
        return i, how, time.perf_counter() - t, ""

    by_index = {j[0]: j for j in jobs}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for i, how, seconds, err in pool.map(compile_one, jobs):
            done[how] += 1
            rec = by_index[i][1]
            where = rec.get("loc", "?")
            if how == "failed":
                print(f"[{i}/{total}] {where}: FAILED: {err}", file=sys.stderr)
            elif not args.quiet:
                nodes = len(by_index[i][2])
                what = "compiled" if how == "compiled" else "already cached (by another process)"
                print(f"[{i}/{total}] {where}: {what} ({nodes} nodes) in {seconds:.2f} s")
    elapsed = time.perf_counter() - t0
    note = (
        f"; {done['rekeyed']} were recorded with another lazytorch, compiler or CPU and were "
        "compiled for this one"
        if done["rekeyed"]
        else ""
    )
    print(
        f"warmup: {total} programs from {args.manifest}: {done['compiled']} compiled, "
        f"{done['cached']} already cached, {done['failed']} failed in {elapsed:.1f} s "
        f"(cache {disk.root}, lazytorch {__version__}){note}"
    )
    return 1 if done["failed"] else 0


# -- from an entry point ------------------------------------------------------------------------------
_SPEC = re.compile(r"^\s*([a-z0-9_]+)\s*\[(.*)\]\s*$")


def parse_spec(spec: str) -> tuple[Any, list[list[int]]]:
    """``"float32[1..4,784]"`` -> (float32, [[1, 2, 3, 4], [784]]): the sizes per dim.

    >>> d, dims = parse_spec("int64[2|8, 3..5]")
    >>> d.name, dims
    ('int64', [[2, 8], [3, 4, 5]])
    """
    m = _SPEC.match(spec)
    if m is None:
        raise CliError(f"bad input spec {spec!r}: expected dtype[dims], e.g. float32[1..64,784]")
    dtype = BY_NAME.get(m.group(1))
    if dtype is None:
        raise CliError(f"bad input spec {spec!r}: unknown dtype {m.group(1)!r}")
    dims: list[list[int]] = []
    body = m.group(2).strip()
    for part in body.split(",") if body else []:
        part = part.strip()
        try:
            if ".." in part:
                lo, hi = (int(x) for x in part.split(".."))
                if lo > hi or lo < 0:
                    raise ValueError
                sizes = list(range(lo, hi + 1))
            else:
                sizes = [int(x) for x in part.split("|")]
        except ValueError:
            raise CliError(
                f"bad input spec {spec!r}: dim {part!r} is not N, A..B (A <= B) or A|B|C"
            ) from None
        if any(s < 0 for s in sizes):
            raise CliError(f"bad input spec {spec!r}: negative size in {part!r}")
        dims.append(sizes)
    return dtype, dims


def _load_target(target: str) -> Any:
    if ":" not in target:
        raise CliError(f"{target!r}: expected MODULE:FUNCTION, e.g. mymodel:predict")
    mod_name, _, attr = target.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as e:
        raise CliError(f"cannot import {mod_name!r}: {e}") from None
    for name in attr.split("."):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise CliError(f"{mod_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise CliError(f"{target} is not callable")
    return obj


def _tensors(out: Any) -> list[Any]:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _tensors(v)]
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in _tensors(v)]
    return []


def _from_function(args: argparse.Namespace) -> int:
    # Warming compiles: a first-seen program must not run on the interpreter instead
    # (tiered execution), or the cache would be as cold after the warmup as before it.
    tiered, _config.DEFAULTS.tiered = _config.DEFAULTS.tiered, False
    try:
        return _warm_function(args)
    finally:
        _config.DEFAULTS.tiered = tiered


def _warm_function(args: argparse.Namespace) -> int:
    import numpy as np

    if not args.input:
        raise CliError("give one --input SPEC per argument of the function")
    fn = _load_target(args.target)
    specs = [parse_spec(s) for s in args.input]
    per_input = [list(itertools.product(*dims)) for _, dims in specs]
    combos = list(itertools.product(*per_input))
    before = metrics.counters()
    t0 = time.perf_counter()
    failed = 0
    last_print = 0.0
    rng = np.random.default_rng(0)
    for n, shapes in enumerate(combos, 1):
        # Inputs are data, as a caller's would be (from_numpy): lazy random inputs would be
        # compiled into the program, which then never matches a real call.
        inputs = []
        for (dtype, _), shape in zip(specs, shapes):
            if dtype.is_floating_point:
                a = rng.standard_normal(shape).astype(dtype.np)
            else:
                a = np.zeros(shape, dtype=dtype.np)
            inputs.append(lazytorch.from_numpy(a))
        try:
            # Cut as a caller's read of the result (.numpy(), .tolist()) cuts: with the
            # live tensors that share its work, so the warmed program is the caller's.
            lazytorch.runtime.materialize_as_read(*_tensors(fn(*inputs)))
        except Exception as e:
            failed += 1
            print(
                f"[{n}/{len(combos)}] shapes {list(shapes)}: FAILED: {type(e).__name__}: {e}",
                file=sys.stderr,
            )
            continue
        now = time.perf_counter()
        if not args.quiet and (now - last_print > 0.5 or n == len(combos)):
            c = metrics.counters()
            print(
                f"[{n}/{len(combos)}] shapes {[list(s) for s in shapes]}: "
                f"{c['compiles'] - before['compiles']} compiled, "
                f"{c['cache_hits_disk'] - before['cache_hits_disk']} already cached so far"
            )
            last_print = now
    c = metrics.counters()
    print(
        f"warmup: {len(combos)} calls of {args.target}: "
        f"{c['programs_built'] - before['programs_built']} programs, "
        f"{c['compiles'] - before['compiles']} compiled, "
        f"{c['cache_hits_disk'] - before['cache_hits_disk']} already cached, {failed} failed "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return 1 if failed else 0
