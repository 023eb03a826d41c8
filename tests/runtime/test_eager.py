"""The DataLoader's small cuts computed node by node (lazytorch.runtime.eager) and writes
run at once in sync mode: the values are the interpreter's, no program is built for them,
and what the path does not take (big cuts, failing ops) goes through the executor."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from benchmarks.dataloader import pad_collate, sentences
from lazytorch.runtime import eager


def test_a_padding_collate_builds_no_program_and_equals_torch():
    ours = lt.utils.data.DataLoader(sentences(lt, 24), batch_size=8, collate_fn=pad_collate(lt))
    theirs = torch.utils.data.DataLoader(
        sentences(torch, 24), batch_size=8, collate_fn=pad_collate(torch)
    )
    batches = iter(ours)
    first = next(batches)  # (the iterator's base seed, drawn from the generator: a program)
    lt.metrics.reset()
    got = [(x.numpy().copy(), y.numpy().copy()) for x, y in [first, *batches]]
    # every cut of the later batches' per-sample code and collate computed node by node
    assert lt.metrics.counters()["programs_built"] == 0
    want = [(x.numpy(), y.numpy()) for x, y in theirs]
    assert len(got) == len(want)
    for (a, b), (c, d) in zip(got, want):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_sync_mode_runs_a_write_at_once():
    with lt.sync_mode():
        x = lt.zeros(4)
        x[1] = 5.0
        assert x._node.buffer is not None
        v = x[2:]
        v.add_(1)  # through a view: the base is computed too
        assert x._node.buffer is not None
    assert x.tolist() == [0.0, 5.0, 1.0, 1.0]


def test_the_path_computes_what_the_interpreter_computes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    with eager.host_eager():
        x = lt.tensor(a)
        y = (x.exp() * 2 - x.sum(1, keepdim=True)).softmax(1)
        eager_value = y.numpy().copy()
    with lt.sync_mode(), lt.backend("interpreter"):
        x = lt.tensor(a)
        z = (x.exp() * 2 - x.sum(1, keepdim=True)).softmax(1)
        np.testing.assert_array_equal(eager_value, z.numpy())


def test_big_cuts_and_failing_ops_go_through_the_executor():
    with eager.host_eager():
        x = lt.ones(3)
        with lt.sync_mode(False):  # record a cut bigger than the path takes
            y = x
            for _ in range(eager.MAX_NODES + 5):
                y = y + 1
        lt.metrics.reset()
        assert y.tolist() == [eager.MAX_NODES + 6.0] * 3
        assert lt.metrics.counters()["programs_built"] == 1
        with pytest.raises(IndexError, match="out of bounds"):
            lt.arange(3)[lt.tensor([5])]  # the executor's error, naming the op
