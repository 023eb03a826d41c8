"""torch's thread-count functions: set/get round trips and torch's argument errors."""

from __future__ import annotations

import pytest
import torch

import lazytorch as lt


def test_set_num_threads_round_trips() -> None:
    before = lt.get_num_threads()
    assert before >= 1
    try:
        lt.set_num_threads(1)
        assert lt.get_num_threads() == 1
        x = lt.ones(64, 64)
        assert float((x @ x).sum()) == 64.0**3  # programs still run
    finally:
        lt.set_num_threads(before)
    assert lt.get_num_threads() == before


def test_interop_threads_round_trip() -> None:
    lt.set_num_interop_threads(3)
    assert lt.get_num_interop_threads() == 3


@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_counts_raise_as_torch(bad: int) -> None:
    with pytest.raises(RuntimeError):
        torch.set_num_threads(bad)
    with pytest.raises(RuntimeError, match="must be positive"):
        lt.set_num_threads(bad)


def test_non_int_raises_as_torch() -> None:
    with pytest.raises(RuntimeError, match="expects an int"):
        torch.set_num_threads(1.5)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        lt.set_num_threads(1.5)  # type: ignore[arg-type]
