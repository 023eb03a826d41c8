"""``lazytorch run`` and ``lazytorch dump``: run a Python script under lazytorch settings.

``lazytorch run --sync train.py --epochs 1`` runs ``train.py`` (with its own arguments) as
``python train.py`` would, with sync mode on; ``--as-torch`` makes ``import torch`` import
lazytorch (`lazytorch.install_as_torch`), so an unchanged PyTorch script runs on it; ``--strict``, ``--backend``, ``--log``,
``--dump DIR`` and ``--record FILE`` are the command-line forms of ``LAZYTORCH_STRICT``,
``LAZYTORCH_BACKEND``, ``LAZYTORCH_LOG``, ``LAZYTORCH_DUMP_DIR`` and ``LAZYTORCH_RECORD``.
``lazytorch dump --out DIR train.py`` is ``run --dump DIR``: one folder per program
(docs/inspection.md), then ``lazytorch inspect DIR``.

``lazytorch run --nproc-per-node N train.py`` starts N ranks through MPICH's ``mpiexec``
(N per host with ``--hosts``/``--hostfile``), each ``python -m lazytorch.distributed.run_rank``
with the other run flags (see that module and docs/distributed.md); with N = 1 and no hosts
the script runs in this process, as rank 0 of 1.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
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
    _launch_options(run)
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


def _launch_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--nproc-per-node",
        type=int,
        metavar="N",
        help="start N ranks (per host) through MPICH's mpiexec, torch's RANK/WORLD_SIZE/"
        "LOCAL_RANK/LOCAL_WORLD_SIZE set in each; an uncaught exception on any rank ends the job",
    )
    hosts = p.add_mutually_exclusive_group()
    hosts.add_argument(
        "--hosts", metavar="A,B", help="comma-separated hosts to start ranks on (mpiexec -hosts)"
    )
    hosts.add_argument(
        "--hostfile", metavar="FILE", help="file naming the hosts, one a line (mpiexec -f)"
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
    nproc = getattr(args, "nproc_per_node", None)
    hosts, hostfile = getattr(args, "hosts", None), getattr(args, "hostfile", None)
    if nproc is None and (hosts or hostfile):
        raise CliError("--hosts and --hostfile need --nproc-per-node")
    if nproc is not None:
        if nproc < 1:
            raise CliError(f"--nproc-per-node must be at least 1, got {nproc}")
        if nproc > 1 or hosts or hostfile:
            return _launch(args, nproc)
        # one rank on this host: run here, as rank 0 of 1
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
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
        # The script's uncaught exception goes to sys.excepthook, as under `python script.py`:
        # a rank's hook (lazytorch.distributed._faults) aborts the whole job from there.
        sys.excepthook(type(e), e, e.__traceback__)
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


# -- launching ranks ---------------------------------------------------------------------------
_TORCH_RANK_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def _launch(args: argparse.Namespace, nproc: int) -> int:
    """Run the target as `nproc` ranks per host under mpiexec; return mpiexec's status."""
    if args.script is not None and args.module is None and not os.path.isfile(args.script):
        raise CliError(f"no such script: {args.script}")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise CliError(
            f"--nproc-per-node {nproc} starts ranks through MPICH's mpiexec, which was not "
            'found next to this Python or on PATH: pip install "lazytorch[distributed]"'
        )
    command = [mpiexec, *_placement(args, nproc), sys.executable, "-m"]
    command += ["lazytorch.distributed.run_rank", *_rank_flags(args), *_target_argv(args)]
    env = dict(os.environ)  # the ranks' environment: this one, less torch's rank variables
    for name in _TORCH_RANK_VARIABLES:
        env.pop(name, None)
    if "OMP_NUM_THREADS" not in env:  # set here: a rank's NumPy reads it when it is imported
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // nproc))
    status = subprocess.run(command, env=env).returncode
    return status if status >= 0 else 128 - status  # killed by a signal: the shell's 128 + n


def find_mpiexec() -> str | None:
    """MPICH's ``mpiexec``: beside this Python (the ``mpich`` wheel's), its base's, or on PATH."""
    scripts = [
        sysconfig.get_path("scripts"),
        sysconfig.get_path("scripts", vars={"base": sys.base_prefix, "platbase": sys.base_prefix}),
    ]
    for folder in scripts:
        found = shutil.which("mpiexec", path=folder)
        if found is not None:
            return found
    return shutil.which("mpiexec")


def _placement(args: argparse.Namespace, nproc: int) -> list[str]:
    """mpiexec's -n (and -hosts/-f with -ppn: `nproc` consecutive ranks on each host)."""
    if args.hosts:
        names = [h for h in args.hosts.split(",") if h.strip()]
        if not names:
            raise CliError(f"--hosts names no host: {args.hosts!r}")
        return ["-n", str(nproc * len(names)), "-ppn", str(nproc), "-hosts", args.hosts]
    if args.hostfile:
        try:
            with open(args.hostfile) as f:
                lines = [line.split("#", 1)[0].strip() for line in f]
        except OSError as e:
            raise CliError(f"cannot read --hostfile {args.hostfile}: {e.strerror}") from None
        names = [line for line in lines if line]
        if not names:
            raise CliError(f"--hostfile {args.hostfile} names no host")
        return ["-n", str(nproc * len(names)), "-ppn", str(nproc), "-f", args.hostfile]
    return ["-n", str(nproc)]


def _rank_flags(args: argparse.Namespace) -> list[str]:
    """The run flags given here, for each rank's `lazytorch.distributed.run_rank`."""
    flags = [
        flag
        for flag, on in (
            ("--sync", args.sync),
            ("--as-torch", args.as_torch),
            ("--strict", args.strict),
            ("--metrics", args.metrics),
        )
        if on
    ]
    for flag, value in (
        ("--backend", args.backend),
        ("--log", args.log),
        ("--record", args.record),
        ("--dump", args.dump),
    ):
        if value is not None:
            flags += [flag, value]
    return flags


def _target_argv(args: argparse.Namespace) -> list[str]:
    if args.module is not None:
        rest = [args.script, *args.args] if args.script is not None else args.args
        return ["-m", args.module, *rest]
    return [args.script, *args.args]
