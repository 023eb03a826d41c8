"""`launcher_env`: rank and world size from torch's, MPICH's or Open MPI's variables."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from lazytorch.distributed._env import LAUNCHER_VARIABLES, LauncherEnv, launcher_env

TORCH = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
MPICH = {"PMI_RANK": "5", "PMI_SIZE": "6", "MPI_LOCALRANKID": "2", "MPI_LOCALNRANKS": "3"}
OPENMPI = {
    "OMPI_COMM_WORLD_RANK": "1",
    "OMPI_COMM_WORLD_SIZE": "4",
    "OMPI_COMM_WORLD_LOCAL_RANK": "0",
    "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
}


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({}, LauncherEnv(0, 1, 0, 1, "default")),
        ({"PATH": "/bin"}, LauncherEnv(0, 1, 0, 1, "default")),
        (TORCH, LauncherEnv(3, 8, 1, 2, "torch")),
        (MPICH, LauncherEnv(5, 6, 2, 3, "mpich")),
        (OPENMPI, LauncherEnv(1, 4, 0, 1, "openmpi")),
        # torch's variables win (lazytorch run sets them inside an mpiexec rank), then MPICH's
        ({**MPICH, **TORCH}, LauncherEnv(3, 8, 1, 2, "torch")),
        ({**OPENMPI, **MPICH}, LauncherEnv(5, 6, 2, 3, "mpich")),
        # no local variables: one node
        ({"RANK": "2", "WORLD_SIZE": "4"}, LauncherEnv(2, 4, 2, 4, "torch")),
        ({"PMI_RANK": "0", "PMI_SIZE": "1"}, LauncherEnv(0, 1, 0, 1, "mpich")),
        ({"RANK": " 1 ", "WORLD_SIZE": "2\n"}, LauncherEnv(1, 2, 1, 2, "torch")),
    ],
)
def test_reads_the_first_launcher_present(environ, expected):
    assert launcher_env(environ) == expected


@pytest.mark.parametrize(
    "environ, message",
    [
        ({"RANK": "abc", "WORLD_SIZE": "2"}, "RANK='abc' is not an integer"),
        ({"RANK": "0", "WORLD_SIZE": "two"}, "WORLD_SIZE='two' is not an integer"),
        ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK=2 is out of range for WORLD_SIZE=2"),
        ({"RANK": "-1", "WORLD_SIZE": "2"}, "RANK=-1 is out of range for WORLD_SIZE=2"),
        ({"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE=0 must be at least 1"),
        ({"RANK": "0"}, "RANK is set but WORLD_SIZE is not"),
        ({"PMI_SIZE": "2"}, "PMI_SIZE is set but PMI_RANK is not"),
        (
            {**MPICH, "MPI_LOCALRANKID": "3"},
            "MPI_LOCALRANKID=3 is out of range for MPI_LOCALNRANKS=3",
        ),
        ({**MPICH, "MPI_LOCALNRANKS": "7"}, "MPI_LOCALNRANKS=7 is larger than PMI_SIZE=6"),
        ({**TORCH, "LOCAL_RANK": "x"}, "LOCAL_RANK='x' is not an integer"),
        (
            {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"},
            "LOCAL_WORLD_SIZE is set but LOCAL_RANK is not",
        ),
        ({**OPENMPI, "OMPI_COMM_WORLD_RANK": "4"}, "OMPI_COMM_WORLD_RANK=4 is out of range"),
    ],
)
def test_a_malformed_value_names_the_variable(environ, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        launcher_env(environ)


def test_defaults_to_the_process_environment(monkeypatch):
    for names in LAUNCHER_VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "2")
    assert launcher_env() == LauncherEnv(1, 2, 1, 2, "mpich")


def test_record_is_slotted_and_reads_back():
    env = launcher_env(MPICH)
    assert (env.rank, env.world_size, env.local_rank, env.local_world_size) == (5, 6, 2, 3)
    assert env.source == "mpich"
    with pytest.raises(AttributeError):
        env.extra = 1  # type: ignore[attr-defined]
    assert eval(repr(env), {"LauncherEnv": LauncherEnv}) == env
    assert len({env, launcher_env(MPICH)}) == 1


def test_importing_lazytorch_never_imports_mpi4py():
    code = (
        "import lazytorch, lazytorch.distributed, lazytorch.distributed._env, "
        "lazytorch.distributed._faults, lazytorch.distributed.run_rank, "
        "lazytorch.utils.data.distributed, sys; "
        "assert 'mpi4py' not in sys.modules, sorted(m for m in sys.modules if 'mpi' in m)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_sources_limits_the_launchers_read():
    assert launcher_env({**TORCH, **MPICH}, sources=["mpich"]) == LauncherEnv(5, 6, 2, 3, "mpich")
    assert launcher_env(TORCH, sources=("mpich", "openmpi")).source == "default"
    with pytest.raises(ValueError, match=r"unknown launcher\(s\) \['slurm'\]"):
        launcher_env(TORCH, sources=["slurm"])
