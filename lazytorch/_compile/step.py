"""Whole-step capture: a compiled training step replays its programs without its Python.

A function that runs ``loss.backward()`` and ``opt.step()`` cannot be replayed as a node
template (`lazytorch._compile.graph`): it writes in place to tensors that outlive it and it
cuts the graph. What it leaves behind is simpler still: one or more *programs* that ran,
each reading the values of tensors that existed before the call (parameters, optimizer
state, gradients, the arguments) and writing the new values those tensors hold after it.
A `StepPlan` records exactly that, and a replay runs the same compiled programs on the
tensors' current values and rebinds the tensors to the results — no Python of the
function, no recording, no graph walk or cache-key hash.

**Contract** (each rule is checked while tracing; a call that breaks one runs the function
every time, with the reason in ``explain()``):

1. *Inputs.* Every value a program reads is (a) the value, at the start of the call, of a
   tracked tensor — an argument, a parameter or buffer of a module the function names, a
   closure or global tensor, a ``.grad`` of one of those, or the state of an optimizer the
   function names; (b) a value an earlier program of the same call computed; (c) a Python
   number or a tensor made inside the call from data (a *constant*); or (d) a number an
   optimizer computes from host state that the replay advances (`HostScalar`: Adam's bias
   corrections from its step count, recomputed by the optimizer's provider at each replay).
   Anything else (a tensor held by an arbitrary object, a value recorded before the call
   and still pending) stops the capture.
2. *Outputs.* After the call every tracked tensor either holds its old value or one a
   program computed; each parameter's ``.grad`` is None, a tracked tensor, or a computed
   value; each returned tensor is tracked or computed. The end of a traced call
   materializes what is still pending among them, as one more program.
3. *Constants are checked, not trusted.* A signature is replayed only after a second call
   records the same plan: the same programs (by cache key), the same bindings, and every
   constant equal. A number that changes from call to call without a provider (a step
   count read as a Python number, a random seed) therefore stops the capture instead of
   being baked in.
4. *Host state is guarded.* Numbers the function reads from its closure and globals (and
   those one object, dict or tuple deep there: ``cfg.flag``), the optimizers' hyperparameters (``lr``, betas, ...) and their non-tensor state (all but what
   a provider advances) are part of the signature: a new value traces anew. A call that
   changes any of them itself (an LR scheduler stepped inside the function) is not
   replayed, since the replay would not change them.
5. *Not captured:* random draws (a replay would repeat them), collectives, reads of values
   (``.item()``) inside the function. Python side effects other than the optimizers'
   providers run only on traced calls, as for any compiled function.
6. *Devices.* Programs on another device (cuda) replay there, under its device scope, with
   0-d inputs from another device moved as the executor moves them; a constant on a device
   is compared by its contents.

What is not checked: a number read two objects deep (``trainer.cfg.lr``) or from a list
that stays the same for the two recorded calls and changes later is replayed with its old
value; pass such numbers as arguments (they are part of the signature).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lazytorch import metrics
from lazytorch._devices import device_scope, host_value, place
from lazytorch.autograd.engine import FREED, kept
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node, format_loc
from lazytorch.ir.primitives import PRIMITIVES
from lazytorch.ops import _core
from lazytorch.ops.views import _refresh
from lazytorch.runtime import materialize
from lazytorch.runtime.backends import ProgramError
from lazytorch.runtime.executor import _programs
from lazytorch.runtime.tiered import Tiered
from lazytorch.tensor import Tensor, version_counter

_BUFFER = PRIMITIVES["buffer"]
_SCALAR = PRIMITIVES["scalar"]
_RAND = PRIMITIVES["rand"]
_new_tensor = object.__new__

# Input bindings of a program: where each of its parameters comes from at a replay.
_SLOT, _EARLIER, _CONST, _HOST = 0, 1, 2, 3
# What a rebound tensor's new node carries for autograd.
_AG_NONE, _AG_FREED, _AG_META = 0, 1, 2


class _Cut:
    """One program that ran inside the call: its cache key, executable, wiring and device
    (with the inputs recorded on another device, moved there as the executor moves them)."""

    __slots__ = ("device", "exe", "inputs", "key", "moved", "params", "roots")

    def __init__(
        self, key: Any, exe: Any, params: list[Node], roots: list[Node], device: Any = CPU
    ) -> None:
        self.key = key
        self.exe = exe
        self.params = params
        self.roots = roots
        self.device = device
        self.moved = [i for i, p in enumerate(params) if p.device is not device]
        self.inputs: list[tuple[Any, ...]] = []


class StepRecorder:
    """Listens to a traced call (through `lazytorch._compile.hooks`): every program it
    runs, every host-scalar provider an optimizer registers, and why it cannot be captured.
    """

    __slots__ = ("cuts", "host", "providers", "reason", "start", "tags", "versions")

    def __init__(self, start: int) -> None:
        self.start = start
        # (slot, counter, value) per distinct version counter of the tracked tensors,
        # before the call (note_versions)
        self.versions: list[tuple[int, list[int], int]] = []
        self.cuts: list[_Cut] = []
        self.providers: list[Callable[[], Any]] = []
        self.reason: str | None = None
        self.host: dict[int, tuple[Node, Any]] = {}
        self.tags: set[Any] = set()

    def __enter__(self) -> StepRecorder:
        _core.host_scalars = self.host
        _core.host_tags = self.tags
        return self

    def __exit__(self, *exc: Any) -> None:
        _core.host_scalars = None
        _core.host_tags = None

    def fail(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def note_versions(self, tensors: list[Tensor]) -> None:
        """Remember the tracked tensors' version counters before the call: what the call
        adds to each, a replay adds again (StepPlan.bumps). Views share their root's."""
        seen: set[int] = set()
        for i, t in enumerate(tensors):
            vc = version_counter(t)
            if id(vc) not in seen:
                seen.add(id(vc))
                self.versions.append((i, vc, vc[0]))

    def provide(self, fn: Callable[[], Any]) -> int:
        self.providers.append(fn)
        return len(self.providers) - 1

    def ran(self, key: Any, exe: Any, params: list[Node], roots: list[Node], device: Any) -> None:
        """A program is about to run (called by the executor, before it runs)."""
        if self.reason is not None:
            return
        start = self.start
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            n = stack.pop()
            if id(n) in seen or n.op.category == "leaf":
                continue
            if n.op.category == "source" and not n.inputs:
                continue  # a literal (shared, immutable): part of the program's key
            seen.add(id(n))
            if n.id < start:
                self.fail(
                    f"computes a value recorded before the call at {format_loc(n.loc)} "
                    "(pending when the call began)"
                )
                return
            if n.op is _RAND:
                self.fail(
                    f"draws random numbers at {format_loc(n.loc)} (a replay would repeat "
                    "the same numbers)"
                )
                return
            stack.extend(n.inputs)
        self.cuts.append(_Cut(key, exe, list(params), list(roots), device))


class StepPlan:
    """What a replay does: run `cuts` in order with their input bindings, then rebind the
    tracked tensors, the parameters' ``.grad`` and build the outputs (module docstring)."""

    __slots__ = ("bumps", "cuts", "grads", "outputs", "providers", "rebinds")

    def __init__(self) -> None:
        self.cuts: list[_Cut] = []
        self.rebinds: list[tuple[int, int, int, int]] = []  # slot, cut, k, ag kind
        # slot, writes: the in-place writes the call made to a tracked tensor's memory
        # (Tensor._version), which a replay counts again
        self.bumps: list[tuple[int, int]] = []
        self.grads: list[tuple[int, tuple[Any, ...]]] = []  # owner slot, binding
        self.outputs: list[tuple[Any, ...]] = []
        self.providers: list[Callable[[], Any]] = []

    def signature(self) -> Any:
        """Everything two recorded calls must agree on (constants by value)."""
        cuts = tuple(
            (c.key, tuple(_comparable(b) for b in c.inputs), len(c.roots)) for c in self.cuts
        )
        return (
            cuts,
            tuple(self.rebinds),
            tuple(self.bumps),
            tuple(self.grads),
            tuple(_comparable(o) for o in self.outputs),
            len(self.providers),
        )

    @property
    def num_programs(self) -> int:
        return len(self.cuts)


def _comparable(b: tuple[Any, ...]) -> Any:
    if b[0] == _CONST:
        v = b[1]
        if isinstance(v, np.ndarray):
            return (_CONST, "array", v.dtype.str, v.shape, v.tobytes())
        if isinstance(v, float):
            return (_CONST, "float", v.hex())
        if hasattr(v, "to_host"):  # a device buffer: by its contents, as an array
            a = np.asarray(host_value(v))
            return (_CONST, "device array", a.dtype.str, a.shape, a.tobytes())
        return (_CONST, type(v).__name__, repr(v))
    if b[0] == _HOST:
        return b[:4]
    return b


def _ag_kind(t: Tensor, n: Node) -> int | None:
    a = n.ag
    if a is None:
        return _AG_NONE
    if a is FREED or n in kept:
        return _AG_FREED
    if a is getattr(t, "_meta", None):
        return _AG_META
    return None


def build_plan(
    rec: StepRecorder,
    tensors: list[Tensor],
    start_nodes: list[Node],
    leaves: list[Tensor],
    labels: list[str],
) -> StepPlan:
    """The plan of a traced call; raises ValueError with the reason it cannot be captured."""
    if rec.reason is not None:
        raise ValueError(rec.reason)
    if not rec.cuts:
        raise ValueError("runs no program (nothing to capture)")
    plan = StepPlan()
    plan.cuts = rec.cuts
    plan.providers = list(rec.providers)
    slot_of: dict[int, int] = {}
    for i, n in enumerate(start_nodes):
        slot_of.setdefault(id(n), i)
    made: dict[int, tuple[int, int]] = {}  # id(root node) -> (cut, output index)
    host = rec.host
    for c, cut in enumerate(rec.cuts):
        for p in cut.params:
            i = slot_of.get(id(p))
            if i is not None:
                cut.inputs.append((_SLOT, i))
                continue
            ck = made.get(id(p))
            if ck is not None:
                cut.inputs.append((_EARLIER, ck[0], ck[1]))
                continue
            if p.id < rec.start:
                raise ValueError(
                    f"reads a tensor recorded at {format_loc(p.loc)} that is not an argument, "
                    "a parameter, buffer or .grad of a module it names, optimizer state, or a "
                    "closure/global tensor (a replay could not read its current value)"
                )
            tagged = host.get(id(p))
            if tagged is not None and tagged[0] is p:
                k, i_param, j = tagged[1]
                cut.inputs.append((_HOST, k, i_param, j, p.dtype))
            elif p.op is _SCALAR or p.op is _BUFFER:
                cut.inputs.append((_CONST, p.buffer))
            else:
                raise ValueError(f"reads a {p.op.name} input it cannot replay")
        for k, r in enumerate(cut.roots):
            made[id(r)] = (c, k)
        cut.params = []  # the nodes are not needed (nor kept alive) once bound
    bound = {(b[1], b[2], b[3]) for cut in rec.cuts for b in cut.inputs if b[0] == _HOST}
    lost = sorted(rec.tags - bound)
    if lost:
        # A provided number that reached no program as itself (an op derived a new float
        # from it, or dropped it): its uses are constants a replay would not update.
        raise ValueError(
            f"an optimizer's host-computed number (provider {lost[0][0]}, parameter "
            f"{lost[0][1]}) did not reach the program as an input"
        )
    seen: set[int] = set()
    owners: list[int] = []
    for i, t in enumerate(tensors):
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._view is not None:
            if t._node is not start_nodes[i]:
                raise ValueError(f"writes in place to {labels[i]}, a view (not captured yet)")
            continue
        meta = getattr(t, "_meta", None)
        if meta is not None and meta.is_leaf:
            owners.append(i)
        e = t._node
        if e is start_nodes[i]:
            continue
        ck = made.get(id(e))
        ag = _ag_kind(t, e)
        if ck is None or ag is None:
            raise ValueError(
                f"leaves {labels[i]} with a value no captured program computed"
                if ck is None
                else f"leaves {labels[i]} carrying gradient history"
            )
        plan.rebinds.append((i, ck[0], ck[1], ag))
    index = {id(t): i for i, t in reversed(list(enumerate(tensors)))}
    for i in owners:
        g = tensors[i]._meta.grad
        if g is None:
            plan.grads.append((i, ()))
            continue
        j = index.get(id(g))
        if j is not None:
            plan.grads.append((i, (_SLOT, j)))
            continue
        ck = made.get(id(g._node))
        if ck is None or g._view is not None or g._node.ag is not None:
            raise ValueError(f"leaves the .grad of {labels[i]} with a value it cannot replay")
        plan.grads.append((i, (_EARLIER, ck[0], ck[1])))
    for t in leaves:
        j = index.get(id(t))
        if j is not None:
            plan.outputs.append((_SLOT, j))
            continue
        ck = made.get(id(t._node))
        ag = _ag_kind(t, t._node)
        if ck is None or ag is None or ag == _AG_META or t._view is not None:
            raise ValueError(
                "returns a tensor no captured program computed (return tensors computed by "
                "the step, such as the loss)"
            )
        plan.outputs.append((_EARLIER, ck[0], ck[1], ag))
    plan.bumps = [(i, vc[0] - before) for i, vc, before in rec.versions if vc[0] != before]
    for cut in plan.cuts:
        cut.roots = [_Shape(r) for r in cut.roots]  # type: ignore[misc]
    return plan


class _Shape:
    """A root's metadata, kept for the nodes a replay makes (not the node itself)."""

    __slots__ = ("device", "dtype", "hash", "shape")

    def __init__(self, n: Node) -> None:
        self.shape, self.dtype, self.device = n.shape, n.dtype, n.device
        self.hash = hash((_BUFFER, n.dtype, n.shape, n.device))


def _node(meta: _Shape, value: Any) -> Node:
    return Node(_BUFFER, (), (), meta.shape, meta.dtype, meta.device, meta.hash, None, value)


def replay(plan: StepPlan, tensors: list[Tensor]) -> list[Any]:
    """Run the plan on the current values of `tensors`; the flat outputs."""
    pending = [t for t in tensors if t._node.buffer is None]
    if pending:
        materialize(*pending)
    host = [fn() for fn in plan.providers]
    results: list[list[Any]] = []
    for cut in plan.cuts:
        ins: list[Any] = []
        for b in cut.inputs:
            kind = b[0]
            if kind == _SLOT:
                ins.append(tensors[b[1]]._node.buffer)
            elif kind == _EARLIER:
                ins.append(results[b[1]][b[2]])
            elif kind == _CONST:
                ins.append(b[1])
            else:
                ins.append(b[4].to_python(host[b[1]][b[2]][b[3]]))
        exe = _programs.get(cut.key)
        if exe is None:
            exe = cut.exe
        elif type(exe) is Tiered:
            exe = exe.pick()
        metrics.increment("materializations")
        device = cut.device
        try:
            if device is CPU:
                results.append(exe.run(ins))
            else:
                for j in cut.moved:  # a 0-d value from another device, as the executor does
                    ins[j] = place(ins[j], device)
                scope = device_scope(device)
                if scope is None:
                    results.append(exe.run(ins))
                else:
                    with scope:
                        results.append(exe.run(ins))
        except ProgramError as pe:
            raise _located(pe, exe) from pe.error
    for i, c, k, ag in plan.rebinds:
        t = tensors[i]
        n = _node(plan.cuts[c].roots[k], results[c][k])  # type: ignore[arg-type]
        if ag == _AG_META:
            n.ag = t._meta
        elif ag == _AG_FREED:
            n.ag = FREED
        t._node = n
        if t._views:
            _refresh_views(t)
    for i, writes in plan.bumps:
        version_counter(tensors[i])[0] += writes
    for i, b in plan.grads:
        meta = tensors[i]._meta
        if not b:
            meta.grad = None
        elif b[0] == _SLOT:
            meta.grad = tensors[b[1]]
        else:
            meta.grad = _wrap(_node(plan.cuts[b[1]].roots[b[2]], results[b[1]][b[2]]))  # type: ignore[arg-type]
    out: list[Any] = []
    for b in plan.outputs:
        if b[0] == _SLOT:
            out.append(tensors[b[1]])
        else:
            n = _node(plan.cuts[b[1]].roots[b[2]], results[b[1]][b[2]])  # type: ignore[arg-type]
            if b[3] == _AG_FREED:
                n.ag = FREED
            out.append(_wrap(n))
    return out


def _located(pe: Any, exe: Any) -> BaseException:
    """The failing instruction's error, naming its op and the line that recorded it."""
    ins = exe.program.instrs[pe.index]
    e = pe.error
    msg = f"{e} (in {ins.op.name} recorded at {format_loc(ins.loc)}, replaying a compiled step)"
    try:
        return type(e)(msg)  # type: ignore[no-any-return]
    except Exception:
        return RuntimeError(msg)


def _wrap(n: Node) -> Tensor:
    t = _new_tensor(Tensor)
    t._node = n
    t._view = None
    t._views = None
    return t


def _refresh_views(t: Tensor) -> None:
    _refresh(t, skip=None)
