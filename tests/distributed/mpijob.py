"""Run a Python script as an MPI job of N ranks (``mpiexec -n N``) for the tests.

Each job gets one OpenMP thread per rank, the test session's cache directory, and a time
limit; what every rank wrote to stdout/stderr comes back with the exit status.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
WORKERS = HERE / "workers"


def mpiexec() -> str:
    """The mpiexec `lazytorch run` would use (the mpich wheel's, beside this Python or its
    base installation, else on PATH)."""
    pytest.importorskip("mpi4py")
    from lazytorch.cli.run import find_mpiexec

    found = find_mpiexec()
    if found is None:
        pytest.fail('mpiexec not found: pip install "lazytorch[distributed]"')
    return found


def run_job(
    n: int, script: str | Path, *args: str, timeout: float = 120, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `script` (a path, or a file name under workers/) on `n` ranks."""
    path = Path(script)
    if not path.is_absolute():
        path = WORKERS / path
    # tests/ (helpers) and the repository root (benchmarks.models, shared with the benchmarks)
    path_dirs = [str(HERE.parent), str(HERE.parent.parent), os.environ.get("PYTHONPATH", "")]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(path_dirs)}
    full_env.pop("RANK", None)
    full_env.pop("WORLD_SIZE", None)
    full_env.update(env or {})
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(path), *args]
    return subprocess.run(
        cmd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False
    )
