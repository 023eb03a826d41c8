"""Datasets, samplers, collation and ``DataLoader``, with ``torch.utils.data``'s API.

A loader yields computed batches, as torch's workers do: a dataset's per-sample code
(``x[1:1 + len(ix)] = ix`` with a length that varies per word) and the collation run op by
op on the NumPy interpreter, so they never become part of the training step's program
(where a graph that changes with every batch would compile a new program per batch) and
never wait for a compiler. Tensors a `TensorDataset` holds are computed once, on the
default backend, when iteration starts. ``DataLoader(..., lazy_batches=True)`` yields lazy
batches instead: collation is recorded and computed inside the step that reads it.

>>> import lazytorch
>>> from lazytorch.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(lazytorch.arange(10.0).reshape(5, 2), lazytorch.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]

Differences from torch:

* Batches are always built in the main process (per-sample code runs op by op on the NumPy
  interpreter, without compiling). ``num_workers > 0`` is accepted with a warning, and
  the main process plays the workers: batch k is built by worker k % num_workers, with
  that worker's own Python `random`, NumPy and lazytorch generators seeded as torch seeds
  a worker from the base seed the loader draws each epoch (``random_`` on its generator),
  so augmentation drawing from ``np.random`` or ``random`` gets a torch worker's numbers
  from the same base seed, and the main process's streams are left alone.
  `get_worker_info` names the worker, ``worker_init_fn`` runs as each worker starts
  (once, for ``persistent_workers``), and an `IterableDataset` is iterated once per worker
  (each shards itself by `get_worker_info`, or yields its items once per worker, as in
  torch). A dataset's state is shared between the workers, not copied per process.
* For a `TensorDataset` (or a `Subset` of one) with the default collate function, a batch
  is one gather per tensor (``t[index_tensor]``) instead of stacking ``batch_size`` rows:
  same values, dtypes and shapes, one node instead of ``batch_size + 1``.
* ``lazy_batches`` is lazytorch's own keyword (above).
* Shuffling uses lazytorch's random generator, so the order is not torch's; it is
  reproducible from ``lazytorch.manual_seed`` or the loader's ``generator``.
* Multiprocessing-only options (``pin_memory``, ``prefetch_factor``, ``timeout``,
  ``multiprocessing_context``) are accepted and have no effect.
"""

from lazytorch.utils.data import dataloader, dataset, distributed, sampler
from lazytorch.utils.data._utils.collate import default_collate, default_convert
from lazytorch.utils.data.dataloader import DataLoader, get_worker_info
from lazytorch.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from lazytorch.utils.data.distributed import DistributedSampler
from lazytorch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "dataloader",
    "dataset",
    "default_collate",
    "default_convert",
    "distributed",
    "get_worker_info",
    "random_split",
    "sampler",
]


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
