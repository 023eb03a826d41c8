"""Fuzz regression (program), shrunk.

Found while tuning the generator (random programs, 2026-11-25), shrunk by hand. When
found, lazytorch disagreed with torch:

    [cpp lazy] grad of input: grad of input 0: grad is None, torch's is not
    [interpreter lazy] grad of input: grad of input 0: grad is None, torch's is not

Writing a constant over every element of a non-leaf that requires grad (``y[:] = c``)
made lazytorch's ``y`` stop requiring grad; torch keeps it in the graph (CopySlices), so
``y.sum().backward()`` works and ``x.grad`` is zeros. lazytorch's backward raised "does not
require grad" and ``x.grad`` stayed None (an optimizer then skipped x: no weight decay).
Fixed in `lazytorch.ops.views._still_differentiable`.
"""

import numpy as np

from ..programs import Input, Program, assert_program

# The program, as it runs on torch and on lazytorch:
# def program(lib, v0, v1):
#     v2 = v0 * 2.0
#     v2[:] = v1.sum(); v3 = v2
#     return [v3]

PROGRAM = Program(
    inputs=[
        Input(np.array([0.75, -1.25], dtype="float64").reshape((2,)), requires_grad=True),
        Input(np.array([0.5], dtype="float64").reshape(()), requires_grad=False),
    ],
    lines=[
        "v2 = v0 * 2.0",
        "v2[:] = v1.sum(); v3 = v2",
    ],
    outputs=["v3"],
)


def test_program():
    assert_program(PROGRAM)
