"""Folding the parts of a missed program that only make its key change, on the host.

A program's cache key holds every attribute of every node, so a value whose *position*
attributes change each step makes every step a new program: a first sighting runs on the
interpreter, and nothing is ever compiled. Real scripts do this in two ways:

* **data windows**: ``source[i:i + bptt]`` of a computed tensor with ``i`` moving each step
  (the word-language model's ``get_batch``): the slice's start is part of the key;
* **tensors built element by element**: ``t = zeros(n, 1, 57)`` then ``t[k][0][c] = 1``
  per letter (the char-RNN tutorials' one-hot lines): every assignment's offsets are in the
  key, and the letters change each step.

Both are values computed from data already known on the host, with no autograd history,
before the program's real work starts. When a cut misses the program cache, `fold` computes
them now, on the host, and the cut is looked up again: the program then reads them as
inputs, and its key no longer holds the offsets, so steps of the same shapes share one
compiled program.

Rules (each a contract a test holds):

* Only on a **miss**, never on a cached program: a program whose key hits runs as it was
  compiled, so stable programs are unchanged.
* A fold that **copies** only on a key that moves: a missed key whose fold copied windows
  or computed bases of `COPIED_MIN` elements or more, folded again within `STABLE_WITHIN`
  such folds, has fixed offsets (a convolution's taps of its padded input, at every
  step): it is compiled whole, its slices in kernels, instead of being copied by NumPy at
  every call (a folded key is never compiled, so it would miss forever). A loop's windows
  come back once an epoch, further apart: still folded (`FoldHistory`). Views, small
  constants and small copies cost less than a compile and keep being folded whatever the
  key does (a rank's fixed share of a batch, a batch's columns).
* A **window** is a chain of at most `host_views.MAX_CHAIN` one-input movement nodes over a
  computed CPU NumPy buffer, with at least one ``slice`` in it. It is read with NumPy
  (`host_views.read_on_host`): a view when the result is contiguous (no copy), a copy when
  not, and only up to `MAX_COPY` elements then.
* A **constant** is a node whose whole history is sources (``const``, ``iota``) and Python
  scalars — no buffer, no random draw, no gradient — through elementwise, movement,
  reduction and index nodes of at most `MAX_NUMEL` elements each, with at least one
  position attribute in it (a ``slice``, ``pad``, ``gather`` or ``scatter``). It is
  computed by the reference interpreter, which is what a first sighting would have run.
* The outermost such nodes are folded (their inputs are then not needed); a node that does
  not qualify is looked through to its inputs.
* Only CPU values on the ``cpp`` backend (not the interpreter, which runs everything anyway,
  nor triton, whose kernels read strided operands as they are), outside a
  ``lazytorch.compile`` trace (which must replay every value it records).
* A folded constant that fails (a gather out of range) raises the reference's error with
  the op and the user's line, as a program's failing step does.
* Values are never written in place: a folded node *becomes* a buffer leaf holding a new
  array (or a view of an immutable buffer), so a pending reader of the value before an
  assignment still reads the value before it.

Folds are counted as ``host_folds`` in `lazytorch.metrics` (a window read is a
``host_view_reads`` too).

>>> import lazytorch
>>> def one_hot(word):
...     t = lazytorch.zeros(len(word), 26)
...     for i, c in enumerate(word):
...         t[i][ord(c) - 97] = True  # (an int or float is written on the host instead)
...     return t
>>> w = lazytorch.ones(26, 4)
>>> lazytorch.metrics.reset()
>>> [round((one_hot(word) @ w).sum().item()) for word in ("cat", "dog", "emu", "fox")]
[12, 12, 12, 12]
>>> c = lazytorch.metrics.counters()
>>> c["host_folds"], c["tier0_runs"] + c["programs_built"] <= 2
(4, True)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from lazytorch import metrics
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node, format_loc
from lazytorch.ir.primitives import get, reference
from lazytorch.ir.program import capture
from lazytorch.runtime.host_views import chain_value, realize_on_host

__all__ = [
    "CHEAP",
    "COPIED",
    "COPIED_MIN",
    "MAX_BASE",
    "MAX_COPY",
    "MAX_NUMEL",
    "NOTHING",
    "STABLE_WITHIN",
    "FoldHistory",
    "fold",
]

MAX_NUMEL = 1 << 16  # elements of any node of a folded constant
MAX_COPY = 1 << 20  # elements a non-contiguous window may copy
MAX_BASE = 1 << 24  # elements of pending data computed once for its windows
STABLE_WITHIN = 4  # a key folded again within this many folds did not move


class FoldHistory:
    """When each missed key was last folded with copies, counted in such folds (the `keep`
    latest keys).

    >>> h = FoldHistory(within=2)
    >>> h.folded("conv"); h.stable("conv")     # back at once: its offsets are fixed
    True
    >>> for window in ("w0", "w1", "w2"):
    ...     h.folded(window)
    >>> h.stable("conv"), h.stable("w2"), h.stable("new")
    (False, True, False)
    """

    def __init__(self, within: int = STABLE_WITHIN, keep: int = 256) -> None:
        self.within = within
        self.keep = keep
        self.clock = 0
        self.last: OrderedDict[Any, int] = OrderedDict()

    def stable(self, key: Any) -> bool:
        """Whether `key` was folded within the last `within` folds."""
        t = self.last.get(key)
        return t is not None and self.clock - t < self.within

    def folded(self, key: Any) -> None:
        self.clock += 1
        self.last[key] = self.clock
        self.last.move_to_end(key)
        if len(self.last) > self.keep:
            self.last.popitem(last=False)

    def clear(self) -> None:
        self.last.clear()


_BUFFER = get("buffer")
_SCALAR = get("scalar")
_SOURCES = frozenset(("const", "iota"))
_POSITIONAL = frozenset(("slice", "pad", "gather", "scatter"))
_CONSTANT_CATEGORIES = frozenset(("elementwise", "movement", "reduce", "index"))


def _host_data(n: Node) -> bool:
    """`n` holds a CPU NumPy array (not a scalar input nor a device buffer)."""
    return n.buffer.__class__ is np.ndarray


# What `fold` did: nothing; views, small constants and small copies; or copies and computed
# bases of COPIED_MIN elements or more (worth a compile to stop paying them every call).
NOTHING, CHEAP, COPIED = 0, 1, 2
COPIED_MIN = 1 << 16


def fold(roots: list[Node], order: list[Node]) -> int:
    """Fold the windows and constants below `roots` (see the module doc); `order` is every
    pending node below them, inputs first (the cut's capture order). Returns NOTHING if no
    node was folded, else (the cut must then be walked again) COPIED if a window was copied
    or a base computed, CHEAP if every window was a view and every constant small."""
    # One pass in order: the flags of a node's inputs are known when it is reached.
    pure: set[Node] = set()  # history of sources and scalars only, every node small
    positional: set[Node] = set()  # pure, with a position attribute in its history
    chains: set[Node] = set()  # one-input movement chains over host data, a slice in them
    moved: set[Node] = set()  # pending movements (cat too) of host data and constants only
    bases: list[Node] = []  # pending data that windows are sliced from
    fold_at: list[Node] = []  # outermost constants and chains, in order
    for n in order:
        op = n.op
        ins = n.inputs
        if n.ag or n.device is not CPU:
            pass
        elif op.category == "source":
            if op.name in _SOURCES:
                pure.add(n)
        elif op.category in _CONSTANT_CATEGORIES and all(i in pure or i.op is _SCALAR for i in ins):
            if math.prod(n.shape) <= MAX_NUMEL:
                pure.add(n)
                if op.name in _POSITIONAL or any(i in positional for i in ins):
                    positional.add(n)
        elif op.category == "movement":
            if all(
                i in moved or i in pure or (i.buffer is not None and _host_data(i)) for i in ins
            ):
                moved.add(n)
            if len(ins) == 1:
                i = ins[0]
                if i in chains or (op.name == "slice" and i.buffer is not None):
                    chains.add(n)
                elif op.name == "slice" and i in moved and math.prod(i.shape) <= MAX_BASE:
                    bases.append(i)
        if n not in positional:  # its positional or chain inputs are outermost
            for i in ins:
                if i in positional or (i in chains and n not in chains):
                    fold_at.append(i)
    fold_at.extend(n for n in roots if n in positional or n in chains)
    consts = [n for n in dict.fromkeys(fold_at) if n in positional]
    done = 0
    copied = 0  # elements copied or computed (what each call pays again while folding)
    for n in dict.fromkeys(fold_at):  # once each, in order
        while n in chains and n.buffer is None:  # the outermost link whose read qualifies
            value = chain_value(n)
            if value is not None and (value.flags.c_contiguous or value.size <= MAX_COPY):
                if not value.flags.c_contiguous:
                    copied += value.size
                realize_on_host(n, value)
                done += 1
                break
            n = n.inputs[0]
    computed = [n for n in dict.fromkeys(bases) if n.buffer is None]
    copied += sum(math.prod(n.shape) for n in computed)
    todo = consts + computed
    if todo:
        _evaluate(todo)  # (a base's windows are read at the next walk: fold runs again)
    if not todo and not done:
        return NOTHING
    metrics.increment("host_folds", len(todo) + done)
    return COPIED if copied >= COPIED_MIN else CHEAP


def _evaluate(nodes: list[Node]) -> None:
    """Compute `nodes` with the primitives' NumPy references, node by node in recording
    order, as the interpreter does (checking each result's shape and dtype)."""
    cap = capture(nodes)
    values: dict[int, Any] = {id(p): np.asarray(p.buffer, dtype=p.dtype.np) for p in cap.params}
    with np.errstate(all="ignore"):  # inf and NaN as in torch, silently
        for n in cap.order:
            args = [values[id(i)] for i in n.inputs]
            ref = reference(n.op, [i.dtype for i in n.inputs], n.dtype)
            try:
                out = np.asarray(ref(*args, **n.params))
            except Exception as e:  # as a program's failing step reports it (executor)
                msg = f"{e} (in {n.op.name} recorded at {format_loc(n.loc)})"
                try:
                    located = type(e)(msg)
                except Exception:
                    located = RuntimeError(msg)
                raise located from e
            if out.dtype != n.dtype.np or out.shape != n.shape:
                raise AssertionError(
                    f"lazytorch: folding {n} on the host gave {out.dtype}{list(out.shape)}; "
                    "this is a lazytorch bug"
                )
            values[id(n)] = out
    for n in cap.roots:
        n.realize(values[id(n)], _BUFFER)
