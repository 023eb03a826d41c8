"""Faults end the whole job: a rank that raises or dies, and a collective that hangs.

Each job runs two ranks under MPICH's mpiexec, started either by ``lazytorch run
--nproc-per-node 2`` or by a plain ``mpiexec -n 2 python script.py`` whose script installs
the hook itself (as ``init_process_group`` does). Rank 1 fails; rank 0 would sleep for a
minute, so a job that ends before the subprocess timeout ended because of the fault. Each
rank writes its pid first; once the job is over, none of them may still run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("mpi4py")

from lazytorch.cli.run import find_mpiexec
from lazytorch.distributed._env import LAUNCHER_VARIABLES

JOB_TIMEOUT = 15  # s: the job must end long before rank 0's 60 s sleep

SCRIPT = textwrap.dedent(
    """\
    import os, signal, sys, time
    fault, pid_dir = sys.argv[1], sys.argv[2]
    if "RANK" in os.environ:  # started by lazytorch run: the hook is installed already
        rank = int(os.environ["RANK"])
    else:  # plain mpiexec: install it as init_process_group does
        from lazytorch.distributed._faults import abort_job, install_excepthook
        rank = int(os.environ["PMI_RANK"])
        install_excepthook(rank, abort_job)
    if fault == "raise-in-mpi":
        from mpi4py import MPI  # MPI initialized: the abort is MPI_Abort
        MPI.COMM_WORLD.Barrier()
    with open(os.path.join(pid_dir, f"rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
    if rank == 1:
        time.sleep(0.2)
        if fault == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("rank one gave up")
    time.sleep(60)
    """
)


def clean_env() -> dict[str, str]:
    """This environment without any launcher's rank variables; one OpenMP thread."""
    launcher = {name for names in LAUNCHER_VARIABLES.values() for name in names}
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    env["OMP_NUM_THREADS"] = "1"
    return env


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie left for an init that does not reap is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def survivors(pid_dir) -> list[int]:
    pids = [int(p.read_text()) for p in pid_dir.glob("rank*.pid")]
    assert len(pids) == 2, "both ranks started"
    deadline = time.monotonic() + 5  # the launcher may return while its ranks are reaped
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def run_job(launcher: str, fault: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    if launcher == "lazytorch run":
        command = [sys.executable, "-m", "lazytorch", "run", "--nproc-per-node", "2"]
    else:
        command = [find_mpiexec(), "-n", "2", sys.executable]
    return subprocess.run(
        [*command, str(script), fault, str(pid_dir)],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT,
    )


@pytest.mark.parametrize("launcher", ["lazytorch run", "mpiexec"])
@pytest.mark.parametrize("fault", ["raise", "raise-in-mpi"])
def test_a_rank_that_raises_ends_the_job_naming_rank_and_exception(launcher, fault, tmp_path):
    r = run_job(launcher, fault, tmp_path)
    assert r.returncode != 0
    assert "rank 1 raised ValueError: rank one gave up; aborting the job" in r.stderr
    assert "Traceback (most recent call last)" in r.stderr
    assert survivors(tmp_path / "pids") == []


@pytest.mark.parametrize("launcher", ["lazytorch run", "mpiexec"])
def test_a_killed_rank_ends_the_job_and_leaves_no_orphans(launcher, tmp_path):
    r = run_job(launcher, "killed", tmp_path)
    assert r.returncode != 0
    assert "raised" not in r.stderr  # nothing raised: the launcher noticed the death
    assert survivors(tmp_path / "pids") == []


def test_a_watchdog_aborts_a_call_that_outlives_its_deadline():
    code = textwrap.dedent(
        """\
        import time
        from lazytorch.distributed._faults import Watchdog, abort_job
        dog = Watchdog(0, abort_job)
        dog.arm(30, "broadcast #1 on group world")
        dog.disarm()  # finished in time: no abort
        time.sleep(0.6)
        dog.arm(0.5, "all_reduce #3 on group world")
        time.sleep(60)
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT,
    )
    assert r.returncode == 1
    assert "rank 0: all_reduce #3 on group world did not complete within 0.5 s" in r.stderr
    assert "broadcast" not in r.stderr
