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

* Batches are always built in the main process: ``num_workers > 0`` is accepted with a
  warning and loads in the main process (per-sample code runs op by op on the NumPy
  interpreter, without compiling).
* For a `TensorDataset` (or a `Subset` of one) with the default collate function, a batch
  is one gather per tensor (``t[index_tensor]``) instead of stacking ``batch_size`` rows:
  same values, dtypes and shapes, one node instead of ``batch_size + 1``.
* ``lazy_batches`` is lazytorch's own keyword (above).
* Shuffling uses lazytorch's random generator, so the order is not torch's; it is
  reproducible from ``lazytorch.manual_seed`` or the loader's ``generator``.
* ``IterableDataset`` and multiprocessing-only options (``pin_memory`` etc.) are absent.
"""

from __future__ import annotations

import bisect
import collections.abc
import copy
import itertools
import math
import operator
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import lazytorch
from lazytorch.tensor import Tensor

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]


# -- datasets ----------------------------------------------------------------------------------
class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    ``a + b`` concatenates two datasets.

    >>> from lazytorch.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> both = Squares() + Squares()
    >>> len(both), both[5]
    (8, 1)
    """

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples of the i-th rows of the given tensors (equal first dimensions).

    >>> import lazytorch
    >>> from lazytorch.utils.data import TensorDataset
    >>> ds = TensorDataset(lazytorch.tensor([[1, 2], [3, 4]]), lazytorch.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([3, 4]), tensor(1)))
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        # torch checks this with an `assert`, so AssertionError is the type scripts may catch;
        # raised explicitly so `python -O` keeps the check.
        if not all(len(t) == len(tensors[0]) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


class ConcatDataset(Dataset):
    """The datasets one after another.

    >>> from lazytorch.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    datasets: list[Any]
    cumulative_sizes: list[int]

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")  # torch's assert
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += n
        if idx >= n:
            raise IndexError(f"index {idx} is out of range for a dataset of length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order.

    >>> from lazytorch.utils.data import Subset
    >>> s = Subset(["a", "b", "c", "d"], [3, 1])
    >>> len(s), s[0], s[1]
    (2, 'd', 'b')
    """

    dataset: Any
    indices: Sequence[int]

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):  # passed on as a list, as torch does
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        # torch's batched-fetch protocol: forward it so the wrapped dataset's fast path applies.
        mapped = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(mapped)  # type: ignore[no-any-return]
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Any, lengths: Sequence[int | float], generator: Any = None
) -> list[Subset]:
    """Split `dataset` into random non-overlapping subsets of the given lengths.

    Lengths are counts summing to ``len(dataset)``, or fractions summing to 1 (floors,
    then the remainder handed out one by one from the first split, as torch does).

    >>> import lazytorch
    >>> from lazytorch.utils.data import random_split
    >>> g = lazytorch.Generator().manual_seed(0)
    >>> [len(s) for s in random_split(range(10), [0.5, 0.3, 0.2], generator=g)]
    [5, 3, 2]
    >>> sorted(i for s in random_split(range(4), [1, 3]) for i in s)
    [0, 1, 2, 3]
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(n * frac))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _permutation(n, generator)
    ends = itertools.accumulate(lengths)
    return [
        Subset(dataset, indices[end - length : end])
        for end, length in zip(ends, lengths)  # type: ignore[operator]
    ]


# -- samplers ----------------------------------------------------------------------------------
class Sampler:
    """Base class of index samplers: an iterable of dataset indices (or of index lists)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1.

    >>> from lazytorch.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


_REPLACEMENT_CHUNK = 32  # indices drawn at a time with replacement (torch's chunk too)


class RandomSampler(Sampler):
    """Indices in random order: a new permutation each time it is iterated.

    Draws from `generator`, or from the global generator when it is None — so
    ``lazytorch.manual_seed`` makes the order reproducible either way. With
    ``replacement=True``, draws `num_samples` indices independently.

    >>> import lazytorch
    >>> from lazytorch.utils.data import RandomSampler
    >>> s = RandomSampler(range(5), generator=lazytorch.Generator().manual_seed(0))
    >>> sorted(s)
    [0, 1, 2, 3, 4]
    """

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            # Drawn in chunks as they are consumed, as torch does: the "infinite loader"
            # idiom asks for num_samples=int(1e10) and reads a few thousand.
            left = self.num_samples
            while left > 0:
                chunk = min(left, _REPLACEMENT_CHUNK)
                draws = lazytorch.randint(n, (chunk,), generator=self.generator)
                lazytorch.materialize(draws)  # explicit, so strict mode does not object
                yield from draws.tolist()
                left -= chunk
            return
        # num_samples may exceed n: whole permutations, then part of one more.
        for _ in range(self.num_samples // n):
            yield from _permutation(n, self.generator)
        if self.num_samples % n:
            yield from _permutation(n, self.generator)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size` (the last may be short).

    >>> from lazytorch.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return -(-n // self.batch_size)


def _permutation(n: int, generator: Any) -> list[int]:
    perm = lazytorch.randperm(n, generator=generator)
    lazytorch.materialize(perm)  # explicit, so strict mode does not object
    return perm.tolist()  # type: ignore[no-any-return]


# -- collation ---------------------------------------------------------------------------------
_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_text_array(a: Any) -> bool:
    return a.dtype.kind in "SUO"  # strings and objects have no tensor dtype


def _collate_arrays(batch: list[Any]) -> Any:
    if _is_text_array(batch[0]):
        raise TypeError(_COLLATE_ERROR.format(batch[0].dtype))
    return lazytorch.stack([lazytorch.as_tensor(a) for a in batch])


def _collate_numpy_scalars(batch: list[Any]) -> Any:
    import numpy as np

    return lazytorch.from_numpy(np.asarray(batch))


# Rules for leaf samples: the first entry whose type the batch's first sample is an instance
# of decides. Containers (dicts, namedtuples, sequences) are handled recursively below.
_COLLATE_RULES: dict[type | tuple[type, ...], Callable[[list[Any]], Any]] = {
    Tensor: lambda batch: lazytorch.stack(batch, 0),
    float: lambda batch: lazytorch.tensor(batch, dtype=lazytorch.float64),
    int: lambda batch: lazytorch.tensor(batch),  # bools too: a bool tensor, as in torch
    str: lambda batch: batch,
    bytes: lambda batch: batch,
}


def _collate_rule(elem: Any) -> Callable[[list[Any]], Any] | None:
    np = sys.modules.get("numpy")  # no NumPy value exists unless NumPy was imported
    # NumPy first: np.float64 is also a Python float, but keeps its own dtype in torch.
    if np is not None:
        if isinstance(elem, np.ndarray):
            return _collate_arrays
        if isinstance(elem, (np.bool_, np.number, np.object_)):
            return _collate_numpy_scalars
    for types, rule in _COLLATE_RULES.items():
        if isinstance(elem, types):
            return rule
    return None


def default_collate(batch: list[Any]) -> Any:
    """Merge a list of samples into a batch, like torch's ``default_collate``.

    Tensors are stacked along a new first dimension; NumPy arrays become stacked tensors;
    Python floats a float64 tensor, ints (and bools) an int64 (bool) tensor; strings stay a
    list. Dicts, namedtuples and sequences are collated field by field (tuples and lists
    come back as lists, as in torch).

    >>> import lazytorch
    >>> from lazytorch.utils.data import default_collate
    >>> default_collate([(lazytorch.zeros(2), 1), (lazytorch.ones(2), 2)])
    [tensor([[0., 0.],
            [1., 1.]]), tensor([1, 2])]
    >>> default_collate([{"x": 0.5, "name": "a"}, {"x": 1.5, "name": "b"}])
    {'x': tensor([0.5000, 1.5000], dtype=lazytorch.float64), 'name': ['a', 'b']}
    """
    elem = batch[0]
    rule = _collate_rule(elem)
    if rule is not None:
        return rule(batch)
    elem_type = type(elem)
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _same_mapping_type(elem, fields)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # torch returns a list here, for backwards compatibility
        return _same_sequence_type(elem, columns)
    raise TypeError(_COLLATE_ERROR.format(elem_type))


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays (also inside dicts and sequences) into tensors; leave the rest.

    The collate function of a ``DataLoader`` with ``batch_size=None``.

    >>> import numpy as np
    >>> from lazytorch.utils.data import default_convert
    >>> default_convert({"x": np.array([1, 2]), "n": 3})
    {'x': tensor([1, 2]), 'n': 3}
    """
    if isinstance(data, Tensor):
        return data
    elem_type = type(data)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if elem_type.__name__ == "ndarray" and _is_text_array(data):
            return data
        return lazytorch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping_type(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as in torch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence_type(data, [default_convert(d) for d in data])
    return data


def _same_mapping_type(like: Any, fields: dict[Any, Any]) -> Any:
    # Keep the sample's mapping type (OrderedDict, a user class) where it can be rebuilt.
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(fields)
            return clone
        return type(like)(fields)
    except TypeError:
        return fields


def _same_sequence_type(like: Any, items: list[Any]) -> Any:
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:  # e.g. range: no copy, no constructor from a list
        return items


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
    index = lazytorch.tensor(rows, dtype=lazytorch.int64)
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
        shuffle: bool | None = False,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        drop_last: bool = False,
        generator: Any = None,
        *,
        pin_memory: bool = False,
        lazy_batches: bool = False,
    ) -> None:
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
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        if not self.lazy_batches:
            # Values the dataset holds are computed once here, on the default backend, not
            # again inside every batch that reads them.
            held = [t for t in getattr(self.dataset, "tensors", ()) if isinstance(t, Tensor)]
            lazytorch.materialize(*held)
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self._loaded(lambda index=index: self.collate_fn(self.dataset[index]))
            return
        for indices in self.batch_sampler:
            yield self._loaded(lambda indices=indices: self._fetch(list(indices)))

    def _loaded(self, fetch: Callable[[], Any]) -> Any:
        """A batch as the loader hands it out: computed now (see the module doc)."""
        if self.lazy_batches:
            return fetch()
        with lazytorch.sync_mode(), lazytorch.backend("interpreter"):
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
