"""Datasets with ``torch.utils.data.dataset``'s API: map-style `Dataset` and its
compositions, and `IterableDataset` (a stream: the loader batches what it yields).

>>> import lazytorch
>>> from lazytorch.utils.data import TensorDataset, random_split
>>> a, b = random_split(TensorDataset(lazytorch.arange(10)), [0.7, 0.3])
>>> len(a), len(b)
(7, 3)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lazytorch.tensor import Tensor
from lazytorch.utils.data.sampler import _permutation

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
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


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``; the loader batches what
    it yields, in order (no sampler, no shuffle — as torch)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __add__(self, other: Any) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets, one after the other."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Samples zipped from datasets of one length: ``StackDataset(a, b)[i] == (a[i], b[i])``;
    with keywords, a dict."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, but both types are given."
            )
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        n = len(parts[0])
        if any(len(p) != n for p in parts):
            raise ValueError("Size mismatch between datasets")
        self._length = n
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length
