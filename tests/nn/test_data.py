"""lazytorch.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader.

Batch order and shapes are deterministic with shuffle=False and are compared with torch
directly; shuffled orders come from a different generator, so those tests check the
properties instead (a permutation, reproducible from the seed, new each epoch).
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
import lazytorch.utils.data as ldata


@pytest.fixture(autouse=True)
def _interpreter():
    # Loading does not depend on the backend; the interpreter avoids one C++ compile per
    # distinct batch shape.
    with lt.backend("interpreter"):
        yield


def pair(n: int, *row: int, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(n * int(np.prod(row, dtype=np.int64)), dtype=dtype).reshape(n, *row)
    y = np.arange(n, dtype=np.int64) % 3
    return x, y


def both(*arrays: np.ndarray) -> tuple[ldata.TensorDataset, tdata.TensorDataset]:
    ours = ldata.TensorDataset(*(lt.from_numpy(a) for a in arrays))
    theirs = tdata.TensorDataset(*(torch.from_numpy(a.copy()) for a in arrays))
    return ours, theirs


def as_numpy(tree):
    """A batch (nested lists/dicts of tensors) with every tensor as a NumPy array."""
    if isinstance(tree, (lt.Tensor, torch.Tensor)):
        return np.asarray(tree.numpy())
    if isinstance(tree, dict):
        return {k: as_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(as_numpy(v) for v in tree) if not hasattr(tree, "_fields") else tree
    return tree


def assert_same(ours, theirs):
    """Same structure, container types, dtypes, shapes and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, lt.Tensor)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours == theirs


# -- datasets ----------------------------------------------------------------------------------
def test_tensor_dataset_indexing_and_len_match_torch():
    ours, theirs = both(*pair(7, 3))
    assert len(ours) == len(theirs) == 7
    for i in (0, 3, 6, -1, -7):
        assert_same(ours[i], theirs[i])
    assert_same(ours[1:4], theirs[1:4])


def test_tensor_dataset_size_mismatch_is_refused_like_torch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        ldata.TensorDataset(lt.zeros(3), lt.zeros(4))


def test_concat_and_subset_match_torch():
    a, ta = both(*pair(3, 2))
    b, tb = both(*pair(4, 2))
    ours, theirs = a + b, ta + tb
    assert isinstance(ours, ldata.ConcatDataset)
    assert ours.cumulative_sizes == theirs.cumulative_sizes == [3, 7]
    for i in range(-7, 7):
        assert_same(ours[i], theirs[i])
    with pytest.raises(ValueError, match="absolute value of index"):
        ours[-8]
    with pytest.raises(IndexError):
        ours[7]
    with pytest.raises(AssertionError, match="empty iterable"):
        ldata.ConcatDataset([])

    sub, tsub = ldata.Subset(ours, [6, 0, 3]), tdata.Subset(theirs, [6, 0, 3])
    assert len(sub) == len(tsub) == 3
    assert_same(sub[1], tsub[1])
    sub, tsub = ldata.Subset(a, [2, 0]), tdata.Subset(ta, [2, 0])
    assert_same(sub[[1, 0]], tsub[[1, 0]])


def test_base_dataset_needs_getitem():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        ldata.Dataset()[0]


@given(
    n=st.integers(0, 40),
    fractions=st.lists(st.integers(1, 10), min_size=1, max_size=4),
    as_counts=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_random_split_lengths_match_torch(n, fractions, as_counts):
    total = sum(fractions)
    if as_counts:
        lengths = [n * f // total for f in fractions]
        lengths[0] += n - sum(lengths)
    else:
        lengths = [f / total for f in fractions]
        lengths[-1] = 1 - sum(lengths[:-1])  # exact sum 1 up to rounding, as torch needs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length splits warn in both
        theirs = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
        ours = ldata.random_split(range(n), lengths, generator=lt.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))


def test_random_split_errors_and_warnings_match_torch():
    for lengths in ([3, 3], [0.5, 0.6]):
        with pytest.raises(ValueError, match="Sum of input lengths") as theirs:
            tdata.random_split(range(5), lengths)
        with pytest.raises(ValueError, match="Sum of input lengths") as ours:
            ldata.random_split(range(5), lengths)
        assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ldata.random_split(range(1), [0.5, 0.5])


def test_random_split_draws_from_the_global_generator():
    lt.manual_seed(3)
    first = [s.indices for s in ldata.random_split(range(20), [10, 10])]
    lt.manual_seed(3)
    again = [s.indices for s in ldata.random_split(range(20), [10, 10])]
    later = [s.indices for s in ldata.random_split(range(20), [10, 10])]
    assert first == again != later


# -- samplers ----------------------------------------------------------------------------------
@given(n=st.integers(0, 30), batch_size=st.integers(1, 8), drop_last=st.booleans())
@settings(max_examples=40, deadline=None)
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    ours = ldata.BatchSampler(ldata.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


@pytest.mark.parametrize(
    ("batch_size", "drop_last"), [(0, False), (-1, False), (True, False), (2, 1)]
)
def test_batch_sampler_refuses_bad_arguments_like_torch(batch_size, drop_last):
    with pytest.raises(ValueError) as theirs:
        tdata.BatchSampler(range(3), batch_size, drop_last)
    with pytest.raises(ValueError) as ours:
        ldata.BatchSampler(range(3), batch_size, drop_last)
    assert str(ours.value) == str(theirs.value)


def test_random_sampler_is_a_fresh_permutation_each_epoch():
    sampler = ldata.RandomSampler(range(50), generator=lt.Generator().manual_seed(0))
    epochs = [list(sampler) for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(50))
    assert epochs[0] != epochs[1] != epochs[2]
    again = ldata.RandomSampler(range(50), generator=lt.Generator().manual_seed(0))
    assert list(again) == epochs[0]


def test_random_sampler_with_replacement_and_num_samples():
    g = lt.Generator().manual_seed(1)
    draws = list(ldata.RandomSampler(range(4), replacement=True, num_samples=100, generator=g))
    assert len(draws) == 100 and set(draws) <= {0, 1, 2, 3} and len(set(draws)) > 1
    more = list(ldata.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        ldata.RandomSampler(range(0))


# -- collation ---------------------------------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])


def samples(lib):
    """The same list of samples built with lazytorch or torch tensors."""
    return [
        {
            "image": lib.tensor([[i, i + 1.0]]),
            "label": i,
            "weight": i / 2,
            "flag": i % 2 == 0,
            "name": f"s{i}",
            "pair": (lib.tensor(i), [np.float32(i), np.arange(2) + i]),
            "point": Point(i, lib.tensor([i, i], dtype=lib.int16)),
        }
        for i in range(3)
    ]


def test_default_collate_matches_torch():
    ours = ldata.default_collate(samples(lt))
    theirs = tdata.default_collate(samples(torch))
    assert isinstance(ours["point"], Point)
    ours["point"], theirs["point"] = list(ours["point"]), list(theirs["point"])
    assert_same(ours, theirs)


def test_default_collate_keeps_mapping_types_and_refuses_unknown_values():
    batch = [collections.OrderedDict(a=1, b=2.0), collections.OrderedDict(a=3, b=4.0)]
    assert_same(ldata.default_collate(batch), tdata.default_collate(batch))
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as theirs:
            tdata.default_collate(bad)
        with pytest.raises(TypeError) as ours:
            ldata.default_collate(bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        ldata.default_collate([[1, 2], [3]])


def test_default_convert_matches_torch():
    data = {"a": np.arange(3), "b": (np.float64(2.5), "x"), "c": [np.ones(2, np.float32)]}
    assert_same(ldata.default_convert(data), tdata.default_convert(data))


# -- DataLoader --------------------------------------------------------------------------------
@given(n=st.integers(1, 40), batch_size=st.integers(1, 12), drop_last=st.booleans())
@settings(max_examples=30, deadline=None)
def test_loader_batches_match_torch(n, batch_size, drop_last):
    ours_ds, theirs_ds = both(*pair(n, 2))
    ours = ldata.DataLoader(ours_ds, batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(theirs_ds, batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    ours_batches, theirs_batches = list(ours), list(theirs)
    assert len(ours_batches) == len(theirs_batches) == len(ours)
    for a, b in zip(ours_batches, theirs_batches):
        assert type(a) is type(b) is list
        assert [(tuple(t.shape), str(t.dtype)[10:]) for t in a] == [
            (tuple(t.shape), str(t.dtype)[6:]) for t in b
        ]


def test_concatenated_batches_equal_the_data():
    x, y = pair(23, 4, 3)
    ds, _ = both(x, y)
    batches = list(ldata.DataLoader(ds, batch_size=5))
    xs = lt.cat([b[0] for b in batches])
    ys = lt.cat([b[1] for b in batches])
    np.testing.assert_array_equal(xs.numpy(), x)
    np.testing.assert_array_equal(ys.numpy(), y)


def test_gathered_batches_equal_stacked_rows():
    # A collate_fn that is not default_collate itself takes the per-sample path.
    x, y = pair(11, 3, dtype="float16")
    base, _ = both(x, y)
    for ds in (base, ldata.Subset(base, [10, 2, 5, 7, 0, 1]), base + base):
        fast = list(ldata.DataLoader(ds, batch_size=4))
        slow = list(
            ldata.DataLoader(ds, batch_size=4, collate_fn=lambda b: ldata.default_collate(b))
        )
        assert len(fast) == len(slow)
        for a, b in zip(fast, slow):
            assert [t.dtype for t in a] == [t.dtype for t in b]
            for s, t in zip(a, b):
                np.testing.assert_array_equal(s.numpy(), t.numpy())


def test_one_dimensional_tensors_and_custom_batch_samplers():
    ds = ldata.TensorDataset(lt.arange(6), lt.arange(6.0) * 2)
    loader = ldata.DataLoader(ds, batch_sampler=[[5, -1], [0, 2, 4]])
    assert [b[1].tolist() for b in loader] == [[10.0, 10.0], [0.0, 4.0, 8.0]]
    bad = ldata.DataLoader(ds, batch_sampler=[[0, 6]])
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        next(iter(bad))


def test_shuffle_is_a_reproducible_permutation_that_changes_each_epoch():
    ds = ldata.TensorDataset(lt.arange(37))
    loader = ldata.DataLoader(
        ds, batch_size=8, shuffle=True, generator=lt.Generator().manual_seed(0)
    )
    epochs = [lt.cat([b[0] for b in loader]).tolist() for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(37))
    assert epochs[0] != epochs[1] != epochs[2]
    again = ldata.DataLoader(
        ds, batch_size=8, shuffle=True, generator=lt.Generator().manual_seed(0)
    )
    assert lt.cat([b[0] for b in again]).tolist() == epochs[0]


def test_shuffle_without_a_generator_follows_manual_seed():
    ds = ldata.TensorDataset(lt.arange(20))

    def epoch():
        return lt.cat([b[0] for b in ldata.DataLoader(ds, batch_size=6, shuffle=True)]).tolist()

    lt.manual_seed(5)
    first, second = epoch(), epoch()
    lt.manual_seed(5)
    assert epoch() == first and epoch() == second and first != second


@pytest.mark.parametrize("replacement", [False, True])
def test_random_sampler_takes_one_seed_per_pass_from_the_global_generator(replacement):
    """As torch's: without a generator, a pass draws one int64 seed with ``random_`` from
    the global generator and permutes with a private one (a replay of torch's draws then
    stays aligned, epoch after epoch)."""
    lt.manual_seed(0)
    list(ldata.RandomSampler(range(10), replacement=replacement))
    after = lt.rand(3).tolist()
    lt.manual_seed(0)
    lt.empty((), dtype=lt.int64).random_()
    assert lt.rand(3).tolist() == after


def test_shuffle_works_in_strict_mode():
    ds = ldata.TensorDataset(lt.arange(10))
    with lt.strict_mode():
        batches = list(ldata.DataLoader(ds, batch_size=4, shuffle=True))
        lt.materialize(*(b[0] for b in batches))
    assert sorted(lt.cat([b[0] for b in batches]).tolist()) == list(range(10))


def test_no_batching_with_batch_size_none_matches_torch():
    arrays = pair(3, 2)
    ours_ds, theirs_ds = both(*arrays)
    ours = list(ldata.DataLoader(ours_ds, batch_size=None))
    theirs = list(tdata.DataLoader(theirs_ds, batch_size=None))
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        assert_same(a, b)
    numpy_ds = [{"x": np.ones(2) * i} for i in range(2)]
    assert_same(
        list(ldata.DataLoader(numpy_ds, batch_size=None)),
        list(tdata.DataLoader(numpy_ds, batch_size=None)),
    )


def test_generic_datasets_and_custom_collate():
    class Squares(ldata.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": float(i), "y": i * i}

    loader = ldata.DataLoader(Squares(), batch_size=2)
    batches = list(loader)
    assert len(loader) == 3 and batches[2]["y"].tolist() == [16]
    assert batches[0]["x"].dtype == lt.float64
    summed = list(ldata.DataLoader(Squares(), batch_size=3, collate_fn=lambda b: len(b)))
    assert summed == [3, 2]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sampler": [0, 1], "shuffle": True},
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_sampler": [[0]], "drop_last": True},
        {"batch_size": None, "drop_last": True},
        {"num_workers": -1},
    ],
)
def test_loader_refuses_conflicting_options_like_torch(kwargs):
    ours_ds, theirs_ds = both(*pair(2))
    with pytest.raises(ValueError) as theirs:
        tdata.DataLoader(theirs_ds, **kwargs)
    with pytest.raises(ValueError) as ours:
        ldata.DataLoader(ours_ds, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_workers_run_in_the_main_process_with_a_warning():
    ds = ldata.TensorDataset(lt.arange(4))
    with pytest.warns(UserWarning, match="num_workers=2 runs no processes"):
        loader = ldata.DataLoader(ds, batch_size=2, num_workers=2, pin_memory=True)
    assert [b[0].tolist() for b in loader] == [[0, 1], [2, 3]]


def _noisy(lib):
    """A dataset drawing from NumPy's and Python's global generators, as augmentation code
    does, and reporting the worker that built each item."""
    import random

    class Noisy(lib.utils.data.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            w = lib.utils.data.get_worker_info()
            return np.array([i, w.id, w.num_workers, w.seed, np.random.rand(), random.random()])

    return Noisy()


def _torch_base_seed(seed):
    # torch's iterator draws its workers' base seed first thing from the loader's generator
    return int(
        torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(seed))
    )


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("workers", [1, 3])
def test_workers_draw_torchs_numbers_from_numpy_and_random(workers, persistent, monkeypatch):
    """Batch k is built by worker k % num_workers with torch's seeds: Python's random from
    base + id, NumPy from torch's hash of both; the main process's streams are untouched."""
    import random

    def run(lib, loader):
        np.random.seed(5)
        random.seed(5)
        epochs = [[np.asarray(b, dtype=np.float64) for b in loader] for _ in range(2)]
        return epochs, np.random.rand(), random.random()

    kw = {"batch_size": 2, "num_workers": workers, "persistent_workers": persistent}
    want = run(
        torch, tdata.DataLoader(_noisy(torch), generator=torch.Generator().manual_seed(3), **kw)
    )
    bases = iter([_torch_base_seed(3), _torch_base_seed(3)])  # torch's generator, twice
    if not persistent:  # each epoch a new draw from the generator torch's run used
        g = torch.Generator().manual_seed(3)
        bases = iter(
            [int(torch.empty((), dtype=torch.int64).random_(generator=g)) for _ in range(2)]
        )
    with pytest.warns(UserWarning):
        loader = ldata.DataLoader(_noisy(lt), **kw)
    monkeypatch.setattr(loader, "_base_seed", lambda: next(bases))
    got = run(lt, loader)
    for e_want, e_got in zip(want[0], got[0]):
        assert len(e_want) == len(e_got)
        for a, b in zip(e_want, e_got):
            np.testing.assert_array_equal(a, b)
    assert want[1:] == got[1:]


def test_worker_init_fn_and_iterable_datasets_sharded_by_worker_match_torch():
    def make(lib):
        class Shards(lib.utils.data.IterableDataset):
            def __iter__(self):
                w = lib.utils.data.get_worker_info()
                return iter(range(w.id, 10, w.num_workers))

        class Whole(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

        return Shards(), Whole()

    def batches(loader):
        return [b.tolist() for b in loader]

    t_shards, t_whole = make(torch)
    with pytest.warns(UserWarning):
        l_shards, l_whole = (ldata.DataLoader(d, batch_size=2, num_workers=2) for d in make(lt))
    assert batches(l_shards) == batches(tdata.DataLoader(t_shards, batch_size=2, num_workers=2))
    # unsharded, each worker yields the whole dataset, as in torch
    assert batches(l_whole) == batches(tdata.DataLoader(t_whole, batch_size=2, num_workers=2))
    seen = []
    with pytest.warns(UserWarning):
        loader = ldata.DataLoader(
            ldata.TensorDataset(lt.arange(4)),
            num_workers=3,
            worker_init_fn=lambda i: seen.append((i, ldata.get_worker_info().id)),
        )
    list(loader)
    assert seen == [(0, 0), (1, 1), (2, 2)]


def test_reachable_as_torch_utils_data():
    assert lt.utils.data.DataLoader is ldata.DataLoader
    assert "utils" in lt.__all__
