"""The IR verifier: run after every transformation in tests (``LAZYTORCH_VERIFY=1``).

It checks what every later stage assumes: values are defined before use (topological
order), each instruction's recorded shape and dtype are what its primitive's rules give
for its inputs and attrs, and outputs name existing values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from lazytorch._settings import env_value
from lazytorch.ir.node import Node, format_loc
from lazytorch.ir.primitives import PRIMITIVES

if TYPE_CHECKING:
    from lazytorch.ir.program import Program

__all__ = ["IRVerificationError", "verify_enabled", "verify_graph", "verify_program"]


def verify_enabled() -> bool:
    """Whether ``LAZYTORCH_VERIFY`` asks for the checks after every pass (IR and plans)."""
    return env_value("LAZYTORCH_VERIFY")


class IRVerificationError(AssertionError):
    """The IR broke an invariant; the message names the pass, the value and the rule."""


def verify_program(prog: Program, after: str = "") -> None:
    where = f" after {after}" if after else ""
    base = len(prog.params)
    for j, ins in enumerate(prog.instrs):
        vid = base + j
        # formatted only when a check fails: format_loc is most of the verifier's time
        name = _Name(lambda vid=vid, ins=ins: f"%{vid} ({ins.op.name} at {format_loc(ins.loc)})")
        if PRIMITIVES.get(ins.op.name) is not ins.op:
            raise IRVerificationError(f"{name}{where}: unregistered primitive")
        if ins.op.category == "leaf":
            raise IRVerificationError(f"{name}{where}: a leaf cannot be an instruction")
        for a in ins.inputs:
            if not 0 <= a < vid:
                raise IRVerificationError(f"{name}{where}: input %{a} is not defined before use")
        if ins.op.nin is not None and len(ins.inputs) != ins.op.nin:
            raise IRVerificationError(
                f"{name}{where}: takes {ins.op.nin} inputs, has {len(ins.inputs)}"
            )
        _check_rules(
            ins.op, [prog.value(a) for a in ins.inputs], ins, _Name(lambda n=name: f"{n}{where}")
        )
    for o in prog.outputs:
        if not 0 <= o < base + len(prog.instrs):
            raise IRVerificationError(f"output %{o}{where} does not exist")


def verify_graph(roots: Iterable[Node]) -> int:
    """Check every pending node below `roots`; returns how many were checked."""
    seen: set[int] = set()
    stack = list(roots)
    count = 0
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        count += 1
        name = _Name(lambda n=n: f"node %{n.id} ({n.op.name} at {format_loc(n.loc)})")
        if n.op.category == "leaf":
            if n.buffer is None:
                raise IRVerificationError(f"{name}: a leaf without a value")
            continue
        if n.buffer is not None:
            raise IRVerificationError(f"{name}: realized but not turned into a leaf")
        for i in n.inputs:
            if i.id >= n.id:
                raise IRVerificationError(f"{name}: input %{i.id} was created after it")
        _check_rules(n.op, list(n.inputs), n, name)
        stack.extend(n.inputs)
    return count


class _Name:
    """A value's description for an error message, formatted only when one is raised."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], str]) -> None:
        self.fn = fn

    def __format__(self, spec: str) -> str:
        return format(self.fn(), spec)


def _check_rules(op, inputs, value, name: _Name) -> None:  # type: ignore[no-untyped-def]
    try:
        shape = tuple(op.shape_rule(tuple(inputs), *value.attrs))
        dtype = op.dtype_rule(tuple(inputs), *value.attrs)
    except Exception as e:
        raise IRVerificationError(f"{name}: its rules reject the inputs: {e}") from e
    if shape != tuple(value.shape) or dtype is not value.dtype:
        raise IRVerificationError(
            f"{name}: records {value.dtype.short}{list(value.shape)} but the rules give "
            f"{dtype.short}{list(shape)}"
        )
