"""Which rank this process is: the variables a launcher sets, read in one place.

`launcher_env` reads rank, world size, local rank and local world size from the first
launcher whose variables are present, in this order:

* torch: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``;
* mpich (Hydra's ``mpiexec``): ``PMI_RANK``, ``PMI_SIZE``, ``MPI_LOCALRANKID``,
  ``MPI_LOCALNRANKS``;
* openmpi: ``OMPI_COMM_WORLD_RANK``, ``OMPI_COMM_WORLD_SIZE``,
  ``OMPI_COMM_WORLD_LOCAL_RANK``, ``OMPI_COMM_WORLD_LOCAL_SIZE``.

torch's variables come first: ``lazytorch run --nproc-per-node`` (and torchrun) set them,
so they win over the MPI launcher's own. A launcher counts as present when its rank or its
world size variable is set; then both must be. Without local variables the job is taken to
run on one node (local rank = rank, local world size = world size). With no launcher at all
the process is rank 0 of 1 (``source == "default"``).

A malformed value is a ValueError naming the variable and the value.

>>> from lazytorch.distributed._env import launcher_env
>>> launcher_env({"PMI_RANK": "1", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"})
LauncherEnv(rank=1, world_size=4, local_rank=1, local_world_size=2, source='mpich')
>>> launcher_env({})
LauncherEnv(rank=0, world_size=1, local_rank=0, local_world_size=1, source='default')
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["LAUNCHER_VARIABLES", "LauncherEnv", "launcher_env"]

# source -> (rank, world size, local rank, local world size) variable names, in lookup order
LAUNCHER_VARIABLES: dict[str, tuple[str, str, str, str]] = {
    "torch": ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    "mpich": ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    "openmpi": (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
}


class LauncherEnv:
    """Where this process sits in the job, and which launcher's variables said so."""

    __slots__ = ("local_rank", "local_world_size", "rank", "source", "world_size")

    def __init__(
        self, rank: int, world_size: int, local_rank: int, local_world_size: int, source: str
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.local_rank = local_rank
        self.local_world_size = local_world_size
        self.source = source

    def _fields(self) -> tuple[int, int, int, int, str]:
        return (self.rank, self.world_size, self.local_rank, self.local_world_size, self.source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LauncherEnv) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"LauncherEnv(rank={self.rank}, world_size={self.world_size}, "
            f"local_rank={self.local_rank}, local_world_size={self.local_world_size}, "
            f"source={self.source!r})"
        )


def launcher_env(
    environ: Mapping[str, str] | None = None, sources: Iterable[str] | None = None
) -> LauncherEnv:
    """Read this process's rank and world size from its launcher's variables (see module doc).

    `environ` defaults to ``os.environ``; `sources` limits the launchers looked for (keys of
    `LAUNCHER_VARIABLES`, looked for in that table's order).

    >>> launcher_env({"RANK": "2", "WORLD_SIZE": "3"})
    LauncherEnv(rank=2, world_size=3, local_rank=2, local_world_size=3, source='torch')
    >>> launcher_env({"RANK": "0", "WORLD_SIZE": "1", "PMI_RANK": "1", "PMI_SIZE": "2"}, ["mpich"])
    LauncherEnv(rank=1, world_size=2, local_rank=1, local_world_size=2, source='mpich')
    """
    env = os.environ if environ is None else environ
    wanted = set(LAUNCHER_VARIABLES if sources is None else sources)
    unknown = wanted - LAUNCHER_VARIABLES.keys()
    if unknown:
        raise ValueError(
            f"unknown launcher(s) {sorted(unknown)}; known: {list(LAUNCHER_VARIABLES)}"
        )
    for source, (rank_var, size_var, local_var, local_size_var) in LAUNCHER_VARIABLES.items():
        if source not in wanted or (rank_var not in env and size_var not in env):
            continue
        for var in (rank_var, size_var):
            if var not in env:
                other = size_var if var == rank_var else rank_var
                raise ValueError(f"{other} is set but {var} is not: a {source} launch sets both")
        world_size = _count(env, size_var)
        rank = _index(env, rank_var, world_size, size_var)
        if local_size_var in env:
            local_world_size = _count(env, local_size_var)
            if local_world_size > world_size:
                raise ValueError(
                    f"{local_size_var}={local_world_size} is larger than {size_var}={world_size}"
                )
        else:
            local_world_size = world_size
        if local_var in env:
            local_rank = _index(env, local_var, local_world_size, local_size_var)
        elif local_size_var in env:
            raise ValueError(f"{local_size_var} is set but {local_var} is not")
        else:
            local_rank = rank
        return LauncherEnv(rank, world_size, local_rank, local_world_size, source)
    return LauncherEnv(0, 1, 0, 1, "default")


def _int(env: Mapping[str, str], var: str) -> int:
    text = env[var]
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{var}={text!r} is not an integer") from None


def _count(env: Mapping[str, str], var: str) -> int:
    n = _int(env, var)
    if n < 1:
        raise ValueError(f"{var}={n} must be at least 1")
    return n


def _index(env: Mapping[str, str], var: str, size: int, size_var: str) -> int:
    i = _int(env, var)
    if not 0 <= i < size:
        raise ValueError(f"{var}={i} is out of range for {size_var}={size} (0 <= {var} < {size})")
    return i
