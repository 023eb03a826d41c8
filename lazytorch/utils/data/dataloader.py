"""``DataLoader`` with ``torch.utils.data.dataloader``'s API (see `lazytorch.utils.data`
for how batches are computed).
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import random
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lazytorch.ir.dtypes import int64
from lazytorch.ops import random as _random
from lazytorch.ops.creation import empty, tensor
from lazytorch.runtime import materialize
from lazytorch.runtime.eager import host_eager
from lazytorch.tensor import Tensor
from lazytorch.utils.data._utils.collate import default_collate, default_convert
from lazytorch.utils.data.dataset import IterableDataset, Subset, TensorDataset
from lazytorch.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info` returns while a worker builds a batch (torch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_current: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The worker building the current batch, or ``None`` in the main process.

    >>> import lazytorch
    >>> from lazytorch.utils.data import DataLoader, get_worker_info
    >>> class Ids(lazytorch.utils.data.Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return get_worker_info().id
    >>> [b.tolist() for b in DataLoader(Ids(), batch_size=1, num_workers=2)]
    [[0], [1], [0], [1]]
    """
    return _current


def _worker_numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words torch seeds a worker's NumPy generator with: a SeedSequence-
    style hash of the worker id and the loader's base seed (torch's ``_generate_state``,
    constants and all, so a dataset drawing from ``np.random`` gets torch's numbers)."""
    mask = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    hash_a = [0x43B0D7E5]

    def hashed(v: int) -> int:
        v = (v ^ hash_a[0]) & mask
        hash_a[0] = (hash_a[0] * mult_a) & mask
        v = (v * hash_a[0]) & mask
        return (v ^ (v >> 16)) & mask

    def mix(x: int, y: int) -> int:
        r = (((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)) & mask
        return (r ^ (r >> 16)) & mask

    pool = [hashed(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashed(pool[src]))
    hash_b = 0x8B51F9DD
    state = []
    for v in pool:
        v = (v ^ hash_b) & mask
        hash_b = (hash_b * mult_b) & mask
        v = (v * hash_b) & mask
        state.append((v ^ (v >> 16)) & mask)
    return state


class _Worker:
    """One of torch's worker processes, played in the main process: its own random states
    (Python's `random`, NumPy's global generator, lazytorch's default generator), seeded as
    torch seeds a worker (``random.seed(base + id)``, ``manual_seed(base + id)``, NumPy from
    `_worker_numpy_seed`), and swapped in around each batch it builds, so a dataset that
    draws from them gets a worker's numbers and leaves the main process's streams alone."""

    def __init__(self, loader: DataLoader, wid: int, base_seed: int) -> None:
        seed = base_seed + wid
        self.info = WorkerInfo(wid, loader.num_workers, seed, loader.dataset)
        self.py = random.Random(seed).getstate()
        self.np = np.random.RandomState(_worker_numpy_seed(base_seed, wid)).get_state()
        self.gen = (seed & 0xFFFF_FFFF_FFFF_FFFF, 0)
        if loader.worker_init_fn is not None:
            with self.active():
                loader.worker_init_fn(wid)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        global _current
        g = _random.default_generator
        saved = (random.getstate(), np.random.get_state(), (g._seed, g._offset), _current)
        random.setstate(self.py)
        np.random.set_state(self.np)
        g._seed, g._offset = self.gen
        _current = self.info
        try:
            yield
        finally:
            self.py, self.np = random.getstate(), np.random.get_state()
            self.gen = (g._seed, g._offset)
            random.setstate(saved[0])
            np.random.set_state(saved[1])
            (g._seed, g._offset), _current = saved[2], saved[3]


def _gathered_batch(dataset: Any, indices: list[Any]) -> list[Tensor] | None:
    """``default_collate([dataset[i] for i in indices])`` as one gather per tensor, for a
    TensorDataset or Subsets of one; None for any other dataset."""
    while type(dataset).__getitem__ is Subset.__getitem__:
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset).__getitem__ is not TensorDataset.__getitem__ or not indices:
        return None
    n = len(dataset)
    rows = []
    for i in indices:
        i = operator.index(i)
        # Checked here so a bad index fails now, as `t[i]` would, not at materialization.
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {n}")
        rows.append(i + n if i < 0 else i)
    index = tensor(rows, dtype=int64)
    return [t[index] for t in dataset.tensors]


# -- the loader --------------------------------------------------------------------------------
class DataLoader:
    """Iterate over `dataset` in batches, like ``torch.utils.data.DataLoader``.

    ``batch_size=None`` turns batching off (each sample goes through `default_convert`).
    ``shuffle=True`` draws a new permutation per epoch from `generator` (or the global
    generator). With ``num_workers > 0`` batches are still built in the main process, each by
    an emulated worker (batch k by worker k % num_workers, as torch deals them) with torch's
    per-worker random seeding and `get_worker_info`.

    >>> import lazytorch
    >>> from lazytorch.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(lazytorch.arange(7.0))
    >>> loader = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True,
    ...                     generator=lazytorch.Generator().manual_seed(0))
    >>> len(loader), [x.shape for (x,) in loader]
    (2, [lazytorch.Size([3]), lazytorch.Size([3])])
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], Any] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
        lazy_batches: bool = False,
    ) -> None:
        # timeout, worker_init_fn, multiprocessing_context, prefetch_factor,
        # persistent_workers, pin_memory_device and in_order steer worker processes and
        # pinned host memory, which a main-process loader does not have: accepted, no effect.
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if num_workers > 0:
            warnings.warn(
                f"lazytorch DataLoader: num_workers={num_workers} runs no processes; batches "
                "are built in the main process (per-sample code runs on the NumPy "
                "interpreter), each by an emulated worker with torch's per-worker seeds",
                stacklevel=2,
            )
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and shuffle:
            raise ValueError(
                f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
            )
        if self._iterable and (sampler is not None or batch_sampler is not None):
            which = "sampler" if sampler is not None else "batch_sampler"
            given = sampler if sampler is not None else batch_sampler
            raise ValueError(
                f"DataLoader with IterableDataset: expected unspecified {which} option, "
                f"but got {which}={given}"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
        if sampler is None:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.pin_memory = pin_memory  # no effect: there is no separate device memory to pin
        self.lazy_batches = lazy_batches
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self._workers: list[_Worker] | None = None  # kept across epochs when persistent
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        if self._iterable:  # torch: the dataset's length, in batches
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        if not self.lazy_batches:
            # Values the dataset holds are computed once here, on the default backend, not
            # again inside every batch that reads them.
            held = [t for t in getattr(self.dataset, "tensors", ()) if isinstance(t, Tensor)]
            materialize(*held)
        workers = self._start_workers()
        if self._iterable:
            if workers:
                yield from self._streams(workers)
            else:
                yield from self._stream()
            return
        if self.batch_sampler is None:
            fetches: Iterable[Callable[[], Any]] = (
                lambda index=index: self.collate_fn(self.dataset[index]) for index in self.sampler
            )
        else:
            fetches = (
                lambda indices=indices: self._fetch(list(indices)) for indices in self.batch_sampler
            )
        for k, fetch in enumerate(fetches):
            if workers:
                with workers[k % len(workers)].active():
                    batch = self._loaded(fetch)
                yield batch
            else:
                yield self._loaded(fetch)

    def _start_workers(self) -> list[_Worker]:
        """The epoch's workers (none for num_workers=0). Like torch's iterator, each epoch
        draws a base seed from the loader's generator (`Tensor.random_`), with workers or
        without (so the generator's stream advances as torch's does); persistent workers
        keep the states of their first epoch."""
        base = self._base_seed()
        if self.num_workers == 0:
            return []
        if self._workers is None or not self.persistent_workers:
            self._workers = [_Worker(self, w, base) for w in range(self.num_workers)]
        return self._workers

    def _base_seed(self) -> int:
        seed = empty((), dtype=int64).random_(generator=self.generator)
        materialize(seed)  # explicit, so strict mode does not object
        return int(seed.item())

    def _streams(self, workers: list[_Worker]) -> Iterator[Any]:
        """An `IterableDataset` with workers: as in torch, each worker iterates its own copy
        of the dataset (one that shards itself by `get_worker_info` yields each item once;
        one that does not, once per worker), and batches come from the workers in turn,
        skipping those whose copy is exhausted."""
        streams = []
        for w in workers:
            with w.active():
                streams.append(iter(self._stream()))
        live = list(zip(workers, streams))
        while live:
            for w, it in list(live):
                with w.active():
                    try:
                        batch = next(it)
                    except StopIteration:
                        live.remove((w, it))
                        continue
                yield batch

    def _stream(self) -> Iterator[Any]:
        """Batches of an `IterableDataset`: consecutive items, `batch_size` at a time."""
        items = iter(self.dataset)
        if self.batch_size is None:
            for item in items:
                yield self._loaded(lambda item=item: self.collate_fn(item))
            return
        while chunk := list(itertools.islice(items, self.batch_size)):
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield self._loaded(lambda chunk=chunk: self.collate_fn(chunk))

    def _loaded(self, fetch: Callable[[], Any]) -> Any:
        """A batch as the loader hands it out: computed now (see the module doc)."""
        if self.lazy_batches:
            return fetch()
        with host_eager():  # sync mode on the interpreter, small cuts node by node
            return fetch()

    def _fetch(self, indices: list[Any]) -> Any:
        if self.collate_fn is default_collate:
            batch = _gathered_batch(self.dataset, indices)
            if batch is not None:
                return batch
        if callable(getattr(self.dataset, "__getitems__", None)):
            samples = self.dataset.__getitems__(indices)
        else:
            samples = [self.dataset[i] for i in indices]
        return self.collate_fn(samples)
