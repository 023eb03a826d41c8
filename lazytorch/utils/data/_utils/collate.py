"""Collation with ``torch.utils.data._utils.collate``'s rules: `default_collate` stacks
samples into batches (tensors, NumPy arrays, numbers, strings, mappings, named tuples,
sequences); `default_convert` turns NumPy values into tensors without batching.

>>> from lazytorch.utils.data import default_collate
>>> default_collate([(1, 2.0), (3, 4.0)])
[tensor([1, 3]), tensor([2., 4.], dtype=lazytorch.float64)]
"""

from __future__ import annotations

import collections.abc
import copy
import sys
from collections.abc import Callable
from typing import Any

from lazytorch.ir.dtypes import float64
from lazytorch.ops.creation import as_tensor, from_numpy, tensor
from lazytorch.ops.shape import stack
from lazytorch.tensor import Tensor

__all__ = ["default_collate", "default_convert"]


# -- collation ---------------------------------------------------------------------------------
_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_text_array(a: Any) -> bool:
    return a.dtype.kind in "SUO"  # strings and objects have no tensor dtype


def _collate_arrays(batch: list[Any]) -> Any:
    if _is_text_array(batch[0]):
        raise TypeError(_COLLATE_ERROR.format(batch[0].dtype))
    return stack([as_tensor(a) for a in batch])


def _collate_numpy_scalars(batch: list[Any]) -> Any:
    import numpy as np

    return from_numpy(np.asarray(batch))


# Rules for leaf samples: the first entry whose type the batch's first sample is an instance
# of decides. Containers (dicts, namedtuples, sequences) are handled recursively below.
_COLLATE_RULES: dict[type | tuple[type, ...], Callable[[list[Any]], Any]] = {
    Tensor: lambda batch: stack(batch, 0),
    float: lambda batch: tensor(batch, dtype=float64),
    int: lambda batch: tensor(batch),  # bools too: a bool tensor, as in torch
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
        return as_tensor(data)
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
