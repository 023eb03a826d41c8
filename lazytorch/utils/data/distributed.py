"""``DistributedSampler``: each rank reads its own shard of a dataset, as in torch.

Every rank builds the same index list (shuffled by ``seed + epoch``, or in order), pads it
by repeating its head until it splits evenly (or, with ``drop_last``, trims its tail), and
takes every ``num_replicas``-th index from position ``rank``. With ``shuffle=False`` the
shards are torch's exactly.

Difference from torch: the shuffled order is NumPy's
``numpy.random.default_rng(seed + epoch).permutation(len(dataset))``, not torch's
``randperm``: the same on every rank and every run for a given seed and epoch, but not
torch's order. (lazytorch's own ``randperm`` would compile a program for every dataset
length; a permutation of indices is host bookkeeping.)

>>> from lazytorch.utils.data import DistributedSampler
>>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
[[0, 2, 4], [1, 3, 0]]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any

from lazytorch.distributed._env import launcher_env
from lazytorch.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of `dataset` that rank `rank` of `num_replicas` reads (see module doc).

    `num_replicas` and `rank` default to ``lazytorch.distributed.get_world_size()`` and
    ``get_rank()`` when a process group is initialized, else to the launcher's variables
    (``RANK``/``WORLD_SIZE``, MPI's; rank 0 of 1 without a launcher). Call
    ``set_epoch(epoch)`` before each epoch for a new shuffle.

    >>> from lazytorch.utils.data import DistributedSampler
    >>> s = DistributedSampler(range(10), num_replicas=3, rank=1, seed=7)
    >>> len(s), len(list(s))
    (4, 4)
    >>> first = list(s); s.set_epoch(1); first != list(s)
    True
    >>> list(DistributedSampler(range(7), num_replicas=3, rank=2, shuffle=False, drop_last=True))
    [2, 5]
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            world_size, own_rank = _default_world()
            num_replicas = world_size if num_replicas is None else num_replicas
            rank = own_rank if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the largest even split: every rank gets the same number of indices
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            import numpy as np  # on first use, as everywhere in lazytorch

            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - n
            if padding <= n:
                indices += indices[:padding]
            else:  # more ranks than indices: repeat the whole list
                indices += (indices * math.ceil(padding / n))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, so that the next iteration shuffles differently (same on all ranks)."""
        self.epoch = epoch


def _default_world() -> tuple[int, int]:
    """(world size, rank) of the initialized process group, else of the launcher."""
    # A group can be initialized only once lazytorch.distributed is imported: look, don't load.
    dist = sys.modules.get("lazytorch.distributed")
    is_initialized = getattr(dist, "is_initialized", None)
    if is_initialized is not None and is_initialized():
        return dist.get_world_size(), dist.get_rank()  # type: ignore[union-attr]
    env = launcher_env()
    return env.world_size, env.rank
