"""The reference executor: runs a program one primitive at a time with NumPy.

It is the correctness oracle every compiled backend is tested against, and the
``interpreter`` backend users can select. It checks each result's shape and dtype against
what the IR recorded (a reference that silently drifts is worse than none), frees values
after their last use, and reports a failing primitive with the user line that recorded it.
"""

from __future__ import annotations

from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.node import format_loc
from lazytorch.ir.primitives import reference
from lazytorch.ir.program import Program
from lazytorch.ir.symbolic import SymInt
from lazytorch.runtime.backends import ProgramError
from lazytorch.runtime.blas_threads import single_threaded

__all__ = ["InterpretedProgram", "InterpreterBackend", "ProgramError"]


def _concrete(v: Any) -> Any:
    """`v` with each symbolic size replaced by its hint (`v` itself where it holds none: a
    big program's attributes are walked once per instruction when it is loaded)."""
    t = type(v)
    if t is int or t is float or t is bool or v is None:
        return v
    if t is tuple:
        for x in v:
            tx = type(x)
            if not (tx is int or tx is float or tx is bool or x is None):
                return tuple(_concrete(y) for y in v)
        return v
    if isinstance(v, SymInt):
        return v.hint
    if isinstance(v, tuple):
        return tuple(_concrete(x) for x in v)
    return v


class InterpretedProgram:
    """`program` run one primitive at a time. `single_threaded_blas`: NumPy's GEMMs on one
    thread (the interpreter tier, beside a background compile: `blas_threads`)."""

    def __init__(self, program: Program, single_threaded_blas: bool = False) -> None:
        self.program = program
        # Only a product calls BLAS: a program without one skips setting the pools (two
        # threadpoolctl calls there and back, ~150 us: more than a small program's run).
        self.single_threaded_blas = single_threaded_blas and any(
            i.op.category in ("matmul", "conv") for i in program.instrs
        )
        # what observers learn about the build (a compiled backend's executables carry one
        # too; a background compile that fell back to this one is installed the same way)
        self.info: dict[str, Any] = {}
        base = len(program.params)
        last_use: dict[int, int] = {}
        for j, ins in enumerate(program.instrs):
            for a in ins.inputs:
                last_use[a] = j
        keep = set(program.outputs)
        # One tuple per instruction, unpacked by the loop of `_run`: (reference, input
        # slots, keyword attributes or None, output slot, dtype, shape, slots freed after).
        # The loop is the interpreter tier's per-instruction cost, which short scripts pay
        # at every step before their compiled program is ready.
        self.steps: list[tuple[Any, ...]] = []
        for j, ins in enumerate(program.instrs):
            free = tuple(a for a in set(ins.inputs) if last_use.get(a) == j and a not in keep)
            kwargs = {k: _concrete(v) for k, v in ins.params.items()}
            self.steps.append(
                (
                    reference(ins.op, [program.value(a).dtype for a in ins.inputs], ins.dtype),
                    ins.inputs,
                    kwargs or None,
                    base + j,
                    ins.dtype.np,
                    _concrete(tuple(ins.shape)),
                    free,
                )
            )
        self.param_dtypes = [p.dtype.np for p in program.params]
        self.n_values = base + len(program.instrs)

    def run(self, inputs: list[Any]) -> list[Any]:
        if self.single_threaded_blas:
            with single_threaded():
                return self._run(inputs)
        return self._run(inputs)

    def _run(self, inputs: list[Any]) -> list[Any]:
        vals: list[Any] = [None] * self.n_values
        ndarray = np.ndarray
        # Overflow and invalid operations give inf/NaN as in torch, silently: the references
        # leave the error state to their caller (`lazytorch.ir.primitives.reference`).
        with np.errstate(all="ignore"):
            for i, (v, dt) in enumerate(zip(inputs, self.param_dtypes)):
                vals[i] = np.asarray(v, dtype=dt)
            for j, (ref, ins, kwargs, out_at, dtype, shape, free) in enumerate(self.steps):
                try:
                    if kwargs is None:
                        out = ref(*[vals[a] for a in ins])
                    else:
                        out = ref(*[vals[a] for a in ins], **kwargs)
                except Exception as e:
                    raise ProgramError(j, e) from e
                if type(out) is not ndarray:
                    out = np.asarray(out)
                if out.dtype != dtype or out.shape != shape:
                    ins_ = self.program.instrs[j]
                    raise AssertionError(
                        f"reference {ins_.op.name} returned {out.dtype}{list(out.shape)}, the "
                        f"IR recorded {dtype}{list(shape)} (at {format_loc(ins_.loc)})"
                    )
                vals[out_at] = out
                for a in free:
                    vals[a] = None
        return [vals[o] for o in self.program.outputs]


class InterpreterBackend:
    name = "interpreter"

    def compile(
        self, program: Program, options: dict[str, Any] | None = None
    ) -> InterpretedProgram:
        # The reference runs primitives one by one in a fixed order: always deterministic.
        return InterpretedProgram(program)
