"""Errors a user sees: torch's exception types, raised when the op is recorded, with a
message naming the op and the user's file:line; errors only knowable when computing name
the line that recorded the failing node."""

from __future__ import annotations

import sys

import pytest

import lazytorch as lt


def line_after() -> int:
    return sys._getframe(1).f_lineno + 1


CASES = [
    ("add", RuntimeError, "must match the size", lambda: lt.ones(2, 3) + lt.ones(4)),
    ("sum", IndexError, "Dimension out of range", lambda: lt.ones(2).sum(3)),
    ("matmul", RuntimeError, "cannot be multiplied", lambda: lt.ones(2, 3) @ lt.ones(2, 3)),
    ("view", RuntimeError, "is invalid for input of size 6", lambda: lt.ones(2, 3).view(4, 2)),
    (
        "cat",
        RuntimeError,
        "Sizes of tensors must match",
        lambda: lt.cat([lt.ones(2, 3), lt.ones(3, 2)]),
    ),
    ("index", IndexError, "out of bounds", lambda: lt.ones(2, 3)[5]),
    ("exp", TypeError, "must be Tensor", lambda: lt.exp([1.0, 2.0])),
    ("div", RuntimeError, "rounding_mode", lambda: lt.div(lt.ones(2), 2, rounding_mode="round")),
    (
        "einsum",
        RuntimeError,
        "subscript i is repeated for operand 0 but the sizes don't match",
        lambda: lt.einsum("ii->i", lt.ones(2, 3)),
    ),
    ("mean", RuntimeError, "could not infer output dtype", lambda: lt.tensor([1, 2]).mean()),
    ("neg", RuntimeError, "bool tensor is not supported", lambda: -lt.tensor([True])),
    ("zeros", RuntimeError, "negative dimension", lambda: lt.zeros(2, -1)),
    ("zeros", RuntimeError, "not available", lambda: lt.zeros(2, device="cuda")),
]


@pytest.mark.parametrize(
    "op, exc, text, make", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_recording_errors_have_torch_types_op_names_and_user_lines(op, exc, text, make):
    with pytest.raises(exc) as err:
        make()
    msg = str(err.value)
    assert text in msg
    assert f"{op}(" in msg or f"{op}:" in msg
    assert "test_errors.py:" in msg  # the user's frame (the lambda above)


def test_message_points_at_the_exact_line():
    x = lt.ones(2, 3)
    with pytest.raises(RuntimeError) as err:
        line = line_after()
        x + lt.ones(5)
    assert f"test_errors.py:{line})" in str(err.value)


def test_runtime_errors_name_the_recording_line_not_the_cut():
    x = lt.arange(4.0)
    line = line_after()
    bad = x[lt.tensor([0, 9])]
    ok = x * 2
    with pytest.raises(IndexError) as err:
        lt.materialize(bad, ok)
    msg = str(err.value)
    assert "out of bounds" in msg and "gather" in msg
    assert f"test_errors.py:{line})" in msg


def test_integer_division_by_zero_is_a_runtime_error_at_materialization():
    a, b = lt.tensor([4, 5]), lt.tensor([2, 0])
    line = line_after()
    q = a // b
    with pytest.raises(RuntimeError, match="ZeroDivisionError") as err:
        q.tolist()
    assert f"test_errors.py:{line}" in str(err.value)


def test_a_failed_cut_leaves_tensors_pending_and_usable():
    x = lt.arange(3.0)
    bad = x[lt.tensor([7])]
    with pytest.raises(IndexError):
        bad.tolist()
    assert not bad.is_materialized
    assert (x * 2).tolist() == [0.0, 2.0, 4.0]


def test_item_on_many_elements():
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        lt.ones(3).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(lt.ones(3))
