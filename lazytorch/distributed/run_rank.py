"""One rank of ``lazytorch run --nproc-per-node N``: set the rank up, then run the script.

``lazytorch run --nproc-per-node 2 --sync train.py --epochs 1`` becomes::

    mpiexec -n 2 python -m lazytorch.distributed.run_rank --sync train.py --epochs 1

and each rank, before the script's first line:

* sets torch's ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` from the MPI
  launcher's variables (`lazytorch.distributed._env`; torch's own, if inherited, are
  ignored), so the script and ``init_process_group`` read them as under torchrun;
* sets ``OMP_NUM_THREADS`` to the cores divided among this host's ranks, unless it is set
  (``lazytorch run`` sets it before starting mpiexec, where NumPy's BLAS still reads it);
* installs the abort-on-exception hook (`lazytorch.distributed._faults.install_excepthook`
  with `abort_job`): an uncaught exception on any rank prints the rank and the traceback
  and ends the whole job;
* with ``--dump DIR`` and more than one rank, dumps into ``DIR/rank<R>`` so ranks do not
  write over each other's folders;

then runs the script (or ``-m`` module) as ``__main__`` with the other ``lazytorch run``
flags (``--sync``, ``--as-torch``, ``--backend``...), exactly as ``lazytorch run`` does.
It can be started by any mpiexec directly, too. It is a command-line entry point: it sits in
the cli layer (tests/api/test_layering.py) and imports ``lazytorch run``'s runner.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from lazytorch.cli import CliError, run
from lazytorch.distributed._env import LAUNCHER_VARIABLES, LauncherEnv, launcher_env
from lazytorch.distributed._faults import abort_job, install_excepthook

__all__ = ["main", "set_up_rank"]


def set_up_rank(environ: dict[str, str] | None = None) -> LauncherEnv:
    """Set torch's rank variables and ``OMP_NUM_THREADS`` in `environ` from the MPI launcher's.

    >>> env = {"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2",
    ...        "OMP_NUM_THREADS": "3"}
    >>> set_up_rank(env).rank, env["RANK"], env["LOCAL_WORLD_SIZE"], env["OMP_NUM_THREADS"]
    (1, '1', '2', '3')
    """
    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    rank = launcher_env(environ, sources=("mpich", "openmpi"))  # torch's are ours to set
    values = (rank.rank, rank.world_size, rank.local_rank, rank.local_world_size)
    environ.update(dict(zip(LAUNCHER_VARIABLES["torch"], map(str, values))))
    if not environ.get("OMP_NUM_THREADS"):
        environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // rank.local_world_size))
    return rank


def main(argv: Sequence[str] | None = None) -> int:
    """Set this rank up (module doc), then run ``lazytorch run``'s target; return its status."""
    try:
        rank = set_up_rank()
    except ValueError as e:
        print(f"lazytorch run: error: {e}", file=sys.stderr)
        return 2
    install_excepthook(rank.rank, abort_job)
    parser = argparse.ArgumentParser(
        prog=f"lazytorch run (rank {rank.rank})",
        description="One rank of `lazytorch run --nproc-per-node`.",
    )
    run._common(parser)
    parser.add_argument("--dump", metavar="DIR", help="dump every program built into DIR")
    run._target(parser)
    args = parser.parse_args(argv)
    if args.dump and rank.world_size > 1:
        args.dump = os.path.join(args.dump, f"rank{rank.rank}")
    try:
        return run._run(args)
    except CliError as e:
        print(f"lazytorch run: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
