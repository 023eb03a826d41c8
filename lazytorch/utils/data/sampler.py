"""Index samplers with ``torch.utils.data.sampler``'s API.

>>> from lazytorch.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lazytorch.ir.dtypes import float64, int64
from lazytorch.ops.creation import as_tensor, empty
from lazytorch.ops.random import Generator, multinomial, randint, randperm
from lazytorch.runtime import materialize

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
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

    Draws from `generator`, or, when it is None, as torch does: from a generator private
    to the pass, seeded by one ``random_`` draw from the global generator — so
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
        generator = self.generator
        if generator is None:
            # As torch: a seed drawn from the global generator (`random_`), then a generator
            # private to the pass, so the global stream advances by one draw per pass
            # whatever the pass draws (and a replay of torch's draws stays aligned).
            seed = empty((), dtype=int64).random_()
            materialize(seed)  # explicit, so strict mode does not object
            generator = Generator().manual_seed(int(seed.item()))
        if self.replacement:
            # Drawn in chunks as they are consumed, as torch does: the "infinite loader"
            # idiom asks for num_samples=int(1e10) and reads a few thousand.
            left = self.num_samples
            while left > 0:
                chunk = min(left, _REPLACEMENT_CHUNK)
                draws = randint(n, (chunk,), generator=generator)
                materialize(draws)  # explicit, so strict mode does not object
                yield from draws.tolist()
                left -= chunk
            return
        # num_samples may exceed n: whole permutations, then part of one more.
        for _ in range(self.num_samples // n):
            yield from _permutation(n, generator)
        if self.num_samples % n:
            yield from _permutation(n, generator)[: self.num_samples % n]

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
    perm = randperm(n, generator=generator)
    materialize(perm)  # explicit, so strict mode does not object
    return perm.tolist()  # type: ignore[no-any-return]


class SubsetRandomSampler(Sampler):
    """The given indices, in a new random order each time it is iterated."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probability proportional to `weights`: one
    `multinomial` draw, as torch's sampler makes (a zero weight is drawn only to fill up a
    draw without replacement).

    >>> from lazytorch.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 2.0, 0.0], 3))
    [1, 1, 1]
    >>> list(WeightedRandomSampler([0.0, 2.0], 2, replacement=False))
    [1, 0]
    """

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = as_tensor(weights, dtype=float64)
        if w.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        # torch's sampler is one multinomial draw over the weights; drawing the same way keeps
        # its semantics (zero-weight indices fill up a draw without replacement, multinomial's
        # checks and errors) and makes it the one draw that a script's replay of torch's
        # random numbers sees
        drawn = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        materialize(drawn)  # explicit, so strict mode does not object
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples
