"""torch.nn.utils.rnn: PackedSequence and the functions that pack, pad and unpad batches of
variable-length sequences.

A packed batch stores its sequences time step by time step, longest first: ``data`` holds
the rows of step 0 for every sequence, then those of step 1 for the sequences still running,
and so on; ``batch_sizes[t]`` says how many rows step t has. The lengths are host integers
(torch keeps ``batch_sizes`` on the CPU for the same reason), so every function here knows
at recording time which row goes where. Packing, padding and unpacking are therefore each
one gather of rows (`index_select`) whose index is computed in Python: one node in the
graph whatever the batch, and its gradient is the matching scatter.

>>> import lazytorch
>>> from lazytorch.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([lazytorch.tensor([1, 2, 3]), lazytorch.tensor([4, 5])])
>>> packed
PackedSequence(data=tensor([1, 4, 2, 5, 3]), batch_sizes=tensor([2, 2, 1]), sorted_indices=None, unsorted_indices=None)
>>> pad_packed_sequence(packed, batch_first=True)
(tensor([[1, 2, 3],
        [4, 5, 0]]), tensor([3, 2]))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import accumulate, pairwise
from typing import Any, NamedTuple

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops.creation import arange, full, tensor, zeros_like
from lazytorch.ops.indexing import index_select
from lazytorch.ops.shape import cat
from lazytorch.tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The data and the per-step batch sizes of a packed batch of sequences (torch's
    namedtuple: ``data, batch_sizes, sorted_indices, unsorted_indices``).

    Made by `pack_padded_sequence` or `pack_sequence`, not by hand. ``batch_sizes`` is an
    int64 tensor of the number of sequences still running at each step; ``sorted_indices``
    (when the batch was sorted by length on the way in) maps sorted position to original
    batch index and ``unsorted_indices`` is its inverse.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([lazytorch.ones(1, 2), lazytorch.ones(3, 2)], enforce_sorted=False)
    >>> p.batch_sizes, p.sorted_indices, p.unsorted_indices
    (tensor([2, 1, 1]), tensor([1, 0]), tensor([1, 0]))
    >>> p.double().data.dtype
    lazytorch.float64
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should "
                "never be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn."
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Convert ``data`` as ``Tensor.to`` does; the index tensors follow its device and
        ``batch_sizes`` stays where it is. Returns self when ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def follow(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(data.device)

        return type(self)(
            data, self.batch_sizes, follow(self.sorted_indices), follow(self.unsorted_indices)
        )

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu")

    def pin_memory(self) -> PackedSequence:
        return self

    def is_pinned(self) -> bool:
        return False

    def double(self) -> PackedSequence:
        return self.to(dtype=dt.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dt.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dt.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=dt.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dt.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=dt.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=dt.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=dt.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (None stays None).

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import invert_permutation
    >>> invert_permutation(lazytorch.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    n = permutation.numel()
    positions = arange(n, dtype=permutation.dtype, device=permutation.device)
    return zeros_like(permutation).scatter(0, permutation, positions)


# -- the host-side bookkeeping ------------------------------------------------------------------
def _host_ints(values: Tensor | Sequence[Any]) -> list[int]:
    """Lengths or indices as Python ints (a tensor is read: they decide the graph's shape)."""
    if isinstance(values, Tensor):
        values = values.tolist()
    return [int(v) for v in values]


def _batch_sizes(sorted_lengths: list[int]) -> list[int]:
    """How many sequences run at each step, given lengths in decreasing order."""
    return [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]


def _lengths_of(batch_sizes: list[int]) -> list[int]:
    """The sorted lengths back from the batch sizes (sequence j runs while j < batch size)."""
    return [sum(1 for b in batch_sizes if b > j) for j in range(batch_sizes[0])]


def _padding_row(value: float, like: Tensor) -> Tensor:
    """One row of `value` shaped as a row of `like` (a (N, *) tensor), in its dtype; the
    value is converted as torch's fill converts it (a float into an integer truncates)."""
    d = like.dtype
    if d is dt.bool_:
        value = bool(value)
    elif not d.is_floating_point:
        value = int(value)
    return full((1, *like.shape[1:]), value, dtype=d, device=like.device)


def _arrange_rows(rows: Tensor, index: list[int], shape: tuple[int, ...], value: float) -> Tensor:
    """A tensor of `shape` whose leading two dims, flattened, take row ``index[k]`` of
    `rows`, or a row of `value` where ``index[k]`` is -1: one gather."""
    if -1 in index:
        rows = cat([rows, _padding_row(value, rows)])
        index = [len(rows) - 1 if i == -1 else i for i in index]
    picked = index_select(rows, 0, tensor(index, dtype=dt.int64, device=rows.device))
    return picked.reshape(shape)


# -- pack ----------------------------------------------------------------------------------------
def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with `batch_first`) of sequences of
    the given `lengths`. With `enforce_sorted` the lengths must be decreasing; otherwise the
    batch is sorted here and the permutation kept in the result.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pack_padded_sequence
    >>> seq = lazytorch.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    >>> pack_padded_sequence(seq, [2, 1, 3], batch_first=True, enforce_sorted=False)
    PackedSequence(data=tensor([4, 1, 3, 5, 2, 6]), batch_sizes=tensor([3, 2, 1]), sorted_indices=tensor([2, 0, 1]), unsorted_indices=tensor([1, 2, 0]))
    """
    op = "pack_padded_sequence"
    lens = _host_ints(lengths)
    steps, batch = (input.size(1), input.size(0)) if batch_first else input.shape[:2]
    if enforce_sorted:
        if len(lens) != batch:
            raise op_error(
                RuntimeError,
                op,
                f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                f"(batch_size={batch})",
            )
        if any(a < b for a, b in pairwise(lens)):
            raise op_error(
                RuntimeError,
                op,
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.",
            )
        order = list(range(len(lens)))
    else:
        # torch sorts the lengths with a stable sort: ties keep their batch order
        order = sorted(range(len(lens)), key=lambda b: -lens[b])
        if any(b >= batch for b in order):
            raise op_error(
                IndexError, op, f"index out of range in self: {len(lens)} lengths for batch {batch}"
            )
    sorted_lens = [lens[b] for b in order]
    if not sorted_lens or sorted_lens[-1] <= 0:
        raise op_error(
            RuntimeError,
            op,
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0",
        )
    if sorted_lens[0] > steps:
        raise op_error(
            RuntimeError,
            op,
            f"a length ({sorted_lens[0]}) is longer than the padded input ({steps} steps)",
        )
    batch_sizes = _batch_sizes(sorted_lens)
    # row (t, b) of the input viewed as (T*B, *) or (B*T, *)
    flat = [
        (order[j] * steps + t) if batch_first else (t * batch + order[j])
        for t, bs in enumerate(batch_sizes)
        for j in range(bs)
    ]
    rows = input.reshape(steps * batch, *input.shape[2:])
    data = index_select(rows, 0, tensor(flat, dtype=dt.int64, device=input.device))
    sorted_indices = None if enforce_sorted else tensor(order, dtype=dt.int64, device=input.device)
    return PackedSequence(data, tensor(batch_sizes, dtype=dt.int64), sorted_indices, None)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of ``(L_i, *)`` sequences: `pad_sequence` then `pack_padded_sequence`.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pack_sequence
    >>> a, b, c = lazytorch.tensor([1, 2, 3]), lazytorch.tensor([4, 5]), lazytorch.tensor([6])
    >>> pack_sequence([a, b, c]).data
    tensor([1, 4, 6, 2, 5, 3])
    """
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


# -- pad -----------------------------------------------------------------------------------------
def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Unpack to a padded ``(T, B, *)`` tensor (``(B, T, *)`` with `batch_first`) in the
    batch's original order, and the int64 lengths; `total_length` pads T further.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([lazytorch.tensor([1, 2]), lazytorch.tensor([3, 4, 5])], False)
    >>> pad_packed_sequence(p, batch_first=True, padding_value=-1)
    (tensor([[ 1,  2, -1],
            [ 3,  4,  5]]), tensor([2, 3]))
    """
    batch_sizes = _host_ints(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise op_error(
                ValueError,
                "pad_packed_sequence",
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}",
            )
        steps = total_length
    batch = batch_sizes[0]
    unsorted = sequence.unsorted_indices
    position = list(range(batch)) if unsorted is None else _host_ints(unsorted)
    offsets = [0, *accumulate(batch_sizes)]

    def row(t: int, b: int) -> int:  # the data row of step t of original sequence b, or -1
        s = position[b]
        return offsets[t] + s if t < len(batch_sizes) and s < batch_sizes[t] else -1

    data = sequence.data
    if batch_first:
        index = [row(t, b) for b in range(batch) for t in range(steps)]
        shape = (batch, steps, *data.shape[1:])
    else:
        index = [row(t, b) for t in range(steps) for b in range(batch)]
        shape = (steps, batch, *data.shape[1:])
    padded = _arrange_rows(data, index, shape, padding_value)
    sorted_lengths = _lengths_of(batch_sizes)
    lengths = tensor([sorted_lengths[position[b]] for b in range(batch)], dtype=dt.int64)
    return padded, lengths


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack ``(L_i, *)`` sequences into ``(T, B, *)`` (``(B, T, *)`` with `batch_first`),
    T the longest length, filling with `padding_value` on `padding_side` ("right" or
    "left"). The result has the first sequence's dtype.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pad_sequence
    >>> pad_sequence([lazytorch.ones(25, 300), lazytorch.ones(22, 300)]).shape
    lazytorch.Size([25, 2, 300])
    >>> pad_sequence([lazytorch.tensor([1, 2]), lazytorch.tensor([3])], True, 9, "left")
    tensor([[1, 2],
            [9, 3]])
    """
    op = "pad_sequence"
    if not isinstance(sequences, Iterable):
        raise op_error(
            RuntimeError,
            op,
            f"Expected iterable for input sequences, but got arg of type: {type(sequences)}",
        )
    seqs = list(sequences)
    if not seqs:
        raise op_error(RuntimeError, op, "received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise op_error(
            RuntimeError,
            op,
            f"Expected padding_side to be one of left or right, but got {padding_side}.",
        )
    first = seqs[0]
    for s in seqs:
        if s.dim() == 0:
            raise op_error(RuntimeError, op, "every sequence must have a length dimension")
        if s.shape[1:] != first.shape[1:]:
            raise op_error(
                RuntimeError,
                op,
                f"the sequences' trailing sizes differ: {list(first.shape[1:])} and "
                f"{list(s.shape[1:])}",
            )
    seqs = [s.to(device=first.device, dtype=first.dtype) for s in seqs]
    lengths = [s.size(0) for s in seqs]
    steps, batch = max(lengths), len(seqs)
    starts = [0, *accumulate(lengths)]

    def row(t: int, b: int) -> int:  # the row of step t of sequence b in the concatenation
        i = t - (steps - lengths[b] if padding_side == "left" else 0)
        return starts[b] + i if 0 <= i < lengths[b] else -1

    if batch_first:
        index = [row(t, b) for b in range(batch) for t in range(steps)]
        shape = (batch, steps, *first.shape[1:])
    else:
        index = [row(t, b) for t in range(steps) for b in range(batch)]
        shape = (steps, batch, *first.shape[1:])
    return _arrange_rows(cat(seqs), index, shape, padding_value)


# -- unpad ---------------------------------------------------------------------------------------
def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences of the given lengths (views of it;
    torch's version also transposes its input in place when not `batch_first`, this one
    leaves it alone).

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pad_sequence, unpad_sequence
    >>> padded = pad_sequence([lazytorch.tensor([1, 2, 3]), lazytorch.tensor([4])])
    >>> unpad_sequence(padded, lazytorch.tensor([3, 1]))
    [tensor([1, 2, 3]), tensor([4])]
    """
    by_batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(by_batch, _host_ints(lengths), strict=True)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a packed batch, as a list in their original order.

    >>> import lazytorch
    >>> from lazytorch.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> seqs = [lazytorch.tensor([1, 2, 3]), lazytorch.tensor([4, 5]), lazytorch.tensor([6])]
    >>> unpack_sequence(pack_sequence(seqs))
    [tensor([1, 2, 3]), tensor([4, 5]), tensor([6])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
