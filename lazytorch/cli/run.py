"""``lazytorch run`` and ``lazytorch dump``: run a Python script under lazytorch settings.

``lazytorch run --sync train.py --epochs 1`` runs ``train.py`` (with its own arguments) as
``python train.py`` would, with sync mode on; ``--as-torch`` makes ``import torch`` import
lazytorch (`lazytorch.install_as_torch`), so an unchanged PyTorch script runs on it; ``--strict``, ``--backend``, ``--log``,
``--dump DIR`` and ``--record FILE`` are the command-line forms of ``LAZYTORCH_STRICT``,
``LAZYTORCH_BACKEND``, ``LAZYTORCH_LOG``, ``LAZYTORCH_DUMP_DIR`` and ``LAZYTORCH_RECORD``.
``lazytorch dump --out DIR train.py`` is ``run --dump DIR``: one folder per program
(docs/inspection.md), then ``lazytorch inspect DIR``.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from typing import Any

import lazytorch
from lazytorch import _config
from lazytorch.cli import CliError

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run a Python script under lazytorch settings",
        description="Run SCRIPT (or -m MODULE) with ARGS as `python SCRIPT ARGS` would, under "
        "the lazytorch settings given here. Everything after SCRIPT goes to the script.",
    )
    _common(run)
    run.add_argument("--dump", metavar="DIR", help="dump every program built into DIR")
    _target(run)
    run.set_defaults(func=_run)

    dump = sub.add_parser(
        "dump",
        help="run a script and dump every program it builds",
        description="Run SCRIPT and write, for every program it materializes, a folder "
        "DIR/NNN/ with ir.txt, ir.json, graph.dot (graph.svg with Graphviz), schedule.txt, "
        "the generated source, guards.txt and timings.json, plus DIR/index.json listing "
        "each program with the cause and line of its cut. Inspect with `lazytorch inspect DIR`.",
    )
    dump.add_argument("--out", metavar="DIR", required=True, help="directory to dump into")
    _common(dump)
    _target(dump)
    dump.set_defaults(func=_dump)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sync", action="store_true", help="sync mode: run every op as recorded")
    p.add_argument(
        "--as-torch",
        action="store_true",
        help="resolve `import torch` (and torch.*) to lazytorch, so a PyTorch script runs unchanged",
    )
    p.add_argument("--strict", action="store_true", help="make implicit materializations errors")
    p.add_argument("--backend", choices=("auto", "cpp", "interpreter"), help="what runs programs")
    p.add_argument(
        "--log",
        metavar="CATS",
        help="log channels to stderr, comma-separated: graphs, syncs, recompiles, fusion, "
        "cache, compile, or all",
    )
    p.add_argument(
        "--record", metavar="FILE", help="append compiled programs to a warm-up manifest"
    )
    p.add_argument(
        "--metrics", action="store_true", help="print lazytorch.metrics.report() at exit"
    )


def _target(p: argparse.ArgumentParser) -> None:
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module, like python -m")
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="the Python file to run")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's arguments")


def _dump(args: argparse.Namespace) -> int:
    args.dump = args.out
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from lazytorch.runtime import observe  # lazy: import time (cli --help)

    if args.module is None and args.script is None:
        raise CliError("give a SCRIPT to run (or -m MODULE)")
    if args.module is not None and args.script is not None:
        args.args = [args.script, *args.args]  # `-m mod a b`: everything is the module's
    if args.script is not None and args.module is None and not os.path.isfile(args.script):
        raise CliError(f"no such script: {args.script}")
    if args.as_torch:
        lazytorch.install_as_torch()
    if args.sync:
        _config.set_sync_mode(True)
    if args.strict:
        _config.set_strict_mode(True)
    if args.backend:
        _config.set_backend(args.backend)
    if args.log:
        _config.enable_logs(args.log)
    if args.record:
        observe.set_record_file(args.record)
    if args.dump:
        observe.set_dump_dir(args.dump)

    status = 0
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if args.module is not None:
            sys.argv = [args.module, *args.args]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [args.script, *args.args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
            runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        traceback.print_exc()
        status = 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if args.dump:
            observe.set_dump_dir(None)
            n = _count_programs(args.dump)
            print(
                f"lazytorch: dumped {n} program{'s' if n != 1 else ''} to {args.dump}; "
                f"see them with: lazytorch inspect {args.dump}",
                file=sys.stderr,
            )
        if args.metrics:
            print(lazytorch.metrics.report(), file=sys.stderr)
    return status


def _count_programs(path: str) -> int:
    import json

    try:
        with open(os.path.join(path, "index.json")) as f:
            return len(json.load(f)["programs"])
    except (OSError, ValueError, KeyError):
        return 0
