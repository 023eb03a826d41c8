"""Random whole programs against torch: the fixed-seed slice of the fuzzer (tests/fuzz/).

Each example is a random DAG of ops over a few inputs (broadcasting shapes, size-1 and
size-0 dims, 0-d tensors), with values reused by several ops, in-place writes to non-leaf
tensors and views; its outputs are summed against fixed cotangents and back-propagated,
and outputs and gradients are read together: one fused forward+backward program. It runs
on the cpp backend, the interpreter and in sync mode, and must match torch. The same
generator runs for as long as you like with ``python -m tests.fuzz --minutes N``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, reject, settings

from fuzz.programs import Input, Program, Refused, assert_program, programs

# derandomized: every CI run draws the same programs (and so hits the same compile cache)
SLICE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _check(program: Program, runs: tuple[str, ...]) -> None:
    try:
        assert_program(program, runs)
    except Refused:  # torch refuses it (an in-place write to a tensor saved for backward)
        reject()


@settings(SLICE, max_examples=100)
@given(programs(max_ops=20, float32=False))
def test_random_float64_programs_match_torch(program):
    _check(program, ("cpp lazy", "interpreter lazy", "interpreter sync"))


@settings(SLICE, max_examples=20)
@given(programs(max_ops=10, float32=True))
def test_random_float32_programs_match_torch(program):
    _check(program, ("cpp lazy", "interpreter lazy"))


@settings(SLICE, max_examples=8)
@given(programs(max_ops=6, float32=False))
def test_random_programs_in_sync_mode_on_cpp_match_torch(program):
    _check(program, ("cpp sync",))


def test_multi_pass_reduction_reusing_a_dead_buffer():
    """Issue 18: the kernel of the three sums re-read a buffer a later pass overwrote in
    place (fixed in 2bcfe5f); the fuzzer's program form of the report."""
    x = np.random.default_rng(0).uniform(-2, 2, size=(4, 3))
    program = Program(
        [Input(x, requires_grad=True)],
        [
            "v1 = (v0 * v0)[1::3]",
            "v2 = v1.abs().sum() + lib.logaddexp(v0[-1], v0).sum() + v1.sum()",
        ],
        ["v2"],
    )
    assert_program(program)
