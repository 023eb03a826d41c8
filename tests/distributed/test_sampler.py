"""`DistributedSampler`: torch's shards without shuffling; the shuffle's properties with it."""

from __future__ import annotations

import pytest
import torch.utils.data.distributed as torch_data
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch.utils.data import DataLoader, DistributedSampler, TensorDataset


def shards(n: int, replicas: int, **kwargs) -> list[list[int]]:
    return [list(DistributedSampler(range(n), replicas, r, **kwargs)) for r in range(replicas)]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 60), replicas=st.integers(1, 12), drop_last=st.booleans())
def test_unshuffled_shards_are_torchs(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch_data.DistributedSampler(
            range(n), replicas, rank, shuffle=False, drop_last=drop_last
        )
        assert list(ours) == list(theirs), (n, replicas, rank, drop_last)
        assert len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 60),
    replicas=st.integers(1, 12),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**31),
    epoch=st.integers(0, 100),
)
def test_shuffled_shards_split_one_permutation(n, replicas, drop_last, seed, epoch):
    samplers = [
        DistributedSampler(range(n), replicas, r, seed=seed, drop_last=drop_last)
        for r in range(replicas)
    ]
    for s in samplers:
        s.set_epoch(epoch)
    got = [list(s) for s in samplers]
    # equal lengths, as len() says (and as torch's)
    expected_len = len(torch_data.DistributedSampler(range(n), replicas, 0, drop_last=drop_last))
    assert {len(g) for g in got} == {expected_len}
    assert all(len(s) == expected_len for s in samplers)
    # rank r holds positions r, r + replicas, ... of one list that every rank computes the same
    order = [got[i % replicas][i // replicas] for i in range(expected_len * replicas)]
    if drop_last:
        assert len(set(order)) == len(order)  # disjoint shards, no repeats
        assert set(order) <= set(range(n))
        assert len(order) == n - n % replicas
    else:
        assert sorted(set(order)) == list(range(n))  # every index read
        head = order[:n]  # the permutation itself, then its head repeated as padding
        assert sorted(head) == list(range(n))
        assert order[n:] == (head * replicas)[: len(order) - n]


def test_shuffle_is_the_same_on_every_rank_changes_with_the_epoch_and_repeats():
    a = DistributedSampler(range(100), 4, 1, seed=3)
    b = DistributedSampler(range(100), 4, 1, seed=3)
    first = list(a)
    assert first == list(a) == list(b)  # iterating again, and another instance: same order
    a.set_epoch(1)
    second = list(a)
    assert second != first
    b.set_epoch(1)
    assert list(b) == second
    a.set_epoch(0)
    assert list(a) == first
    assert list(DistributedSampler(range(100), 4, 1, seed=4)) != first  # the seed matters
    assert sorted(first) != first  # it shuffles at all


def test_rank_out_of_range_is_torchs_error():
    for rank in (3, -1):
        with pytest.raises(ValueError) as ours:
            DistributedSampler(range(5), num_replicas=3, rank=rank)
        with pytest.raises(ValueError) as theirs:
            torch_data.DistributedSampler(range(5), num_replicas=3, rank=rank)
        assert str(ours.value) == str(theirs.value)


def test_defaults_come_from_the_launcher(monkeypatch):
    for name in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    s = DistributedSampler(range(9), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (3, 2, [2, 5, 8])
    s = DistributedSampler(range(9), num_replicas=4, shuffle=False)  # rank from RANK
    assert (s.num_replicas, s.rank) == (4, 2)
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    s = DistributedSampler(range(9))
    assert (s.num_replicas, s.rank, len(s)) == (1, 0, 9)


def test_feeds_a_dataloader():
    x = lt.arange(10.0).reshape(10, 1)
    ds = TensorDataset(x)
    batches = [
        [b[0].reshape(-1).tolist() for b in DataLoader(ds, batch_size=2, sampler=sampler)]
        for sampler in (DistributedSampler(ds, 3, r, shuffle=False) for r in range(3))
    ]
    assert batches == [
        [[0.0, 3.0], [6.0, 9.0]],
        [[1.0, 4.0], [7.0, 0.0]],
        [[2.0, 5.0], [8.0, 1.0]],
    ]
    sampler = DistributedSampler(ds, 2, 0, seed=1)
    seen = [b[0].reshape(-1).tolist() for b in DataLoader(ds, batch_size=5, sampler=sampler)]
    assert sorted(v for batch in seen for v in batch) == sorted(float(i) for i in sampler)


def test_exported_where_torch_has_it():
    import lazytorch.utils.data.distributed as ours

    assert ours.DistributedSampler is DistributedSampler
    assert lt.utils.data.distributed.DistributedSampler is DistributedSampler
