"""Fuzz regression (program), shrunk.

Found by `python -m tests.fuzz --only programs --seed 5 --shrink-seconds 90` (batch 0) run
against 2bcfe5f^, the tree before the memory-plan fix of issue 18 (a multi-pass reduction
kernel reusing in place a buffer a later pass still reads). There the cpp backend gave:

    [cpp lazy] grad of input 0: 4 of 4 elements differ, first at (0,): 11.945397 vs torch
      11.568456 (max abs diff 1.1)

It passes since 2bcfe5f; it stays as a whole-program test of that fix.
"""

import numpy as np

from ..programs import Input, Program, assert_program

# The program, as it runs on torch and on lazytorch:
# def program(lib, v0):
#     v1 = v0 * v0
#     v2 = v0.log1p()
#     v3 = v0.max(dim=0, keepdim=False).values
#     v4 = v0[(slice(None),) * 0 + (lib.tensor([0]),)]
#     v5 = v0 * v0
#     v6 = lib.hypot(v0, v0)
#     return [v1, v2, v3, v4, v5, v6]

PROGRAM = Program(
    inputs=[
        Input(
            np.array(
                [1.4781148433685303, 1.0449044704437256, 0.32257080078125, -0.7248750925064087],
                dtype="float32",
            ).reshape((4,)),
            requires_grad=True,
        ),
    ],
    lines=[
        "v1 = v0 * v0",
        "v2 = v0.log1p()",
        "v3 = v0.max(dim=0, keepdim=False).values",
        "v4 = v0[(slice(None),) * 0 + (lib.tensor([0]),)]",
        "v5 = v0 * v0",
        "v6 = lib.hypot(v0, v0)",
    ],
    outputs=["v1", "v2", "v3", "v4", "v5", "v6"],
)


def test_program():
    assert_program(PROGRAM)
