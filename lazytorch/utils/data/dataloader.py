"""``DataLoader`` with ``torch.utils.data.dataloader``'s API (see `lazytorch.utils.data`
for how batches are computed).
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lazytorch._config import backend, sync_mode
from lazytorch.ir.dtypes import int64
from lazytorch.ops.creation import tensor
from lazytorch.runtime import materialize
from lazytorch.tensor import Tensor
from lazytorch.utils.data._utils.collate import default_collate, default_convert
from lazytorch.utils.data.dataset import IterableDataset, Subset, TensorDataset
from lazytorch.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


def get_worker_info() -> None:
    """``None``: batches are built in the main process, as in a torch worker-less loader."""
    return None


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
    generator). ``num_workers > 0`` warns and loads in the main process.

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
                f"lazytorch DataLoader: num_workers={num_workers} is ignored; batches are "
                "built in the main process (per-sample code runs on the NumPy interpreter)",
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
        if self._iterable:
            yield from self._stream()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self._loaded(lambda index=index: self.collate_fn(self.dataset[index]))
            return
        for indices in self.batch_sampler:
            yield self._loaded(lambda indices=indices: self._fetch(list(indices)))

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
        with sync_mode(), backend("interpreter"):
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
