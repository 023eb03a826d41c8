"""The traced graph: capturing a call's recorded nodes as a replayable template."""

from __future__ import annotations

import builtins
import functools
import linecache
from collections.abc import Callable
from typing import Any

from lazytorch.autograd import engine as _engine
from lazytorch.ir import node as _node_mod
from lazytorch.ir.device import Device
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node, format_loc, grad_mode
from lazytorch.ir.primitives import PRIMITIVES, make_node
from lazytorch.ir.symbolic import SymBool, SymFloat, SymInt
from lazytorch.ops._core import wrap
from lazytorch.tensor import Tensor

_BUFFER = PRIMITIVES["buffer"]
_RAND = PRIMITIVES["rand"]
_REPLAY_FILE = "<lazytorch.compile replay"
# Frames of generated replay code are ours: provenance lookups skip them.
_node_mod.internal_dirs.append(_REPLAY_FILE)


# -- the traced graph -----------------------------------------------------------------------
# What a backend strategy returns for a graph: flat input tensors in, one tensor per output.
Runner = Callable[[list[Tensor]], list[Any]]


class TracedGraph:
    """What one trace of a compiled function recorded: a template of nodes between the
    inputs and the outputs, replayed by `replay` (what a callable backend receives).

    * ``inputs`` — one ``(label, shape, dtype, requires_grad)`` per flat input tensor;
    * ``num_outputs`` — how many tensors the replay returns;
    * ``code`` — the generated Python that replays the template (one ``make_node`` per
      recorded node); ``str(graph)`` prints the template one node per line.

    >>> import lazytorch
    >>> seen = []
    >>> def backend(graph):
    ...     seen.append(graph)
    ...     return graph.replay
    >>> f = lazytorch.compile(lambda x: x.exp() + 1, backend=backend)
    >>> _ = f(lazytorch.ones(2))
    >>> print(seen[0])              # doctest: +ELLIPSIS
    traced graph of <lambda> (1 input, 2 nodes, 1 output)
      %0 : f32[2] = input 0  # arg 0
      %1 : f32[] = constant scalar 1.0
      %2 : f32[2] = exp %0  # ...
      %3 : f32[2] = add %2, %1  # ...
      return %3
    """

    def __init__(
        self,
        name: str,
        inputs: list[tuple[str, tuple[Any, ...], DType, bool]],
        text: list[str],
        num_nodes: int,
        num_outputs: int,
        code: str,
        fn: Runner,
    ) -> None:
        self.name = name
        self.inputs = inputs
        self.num_nodes = num_nodes
        self.num_outputs = num_outputs
        self.code = code
        self._text = text
        self._replay = fn

    def replay(self, *tensors: Tensor) -> list[Any]:
        """Record the template again on `tensors` (one per ``inputs``); the output tensors."""
        if len(tensors) != len(self.inputs):
            raise TypeError(f"replay() takes {len(self.inputs)} tensors, got {len(tensors)}")
        return self._replay(list(tensors))

    def __len__(self) -> int:
        return self.num_nodes

    def __str__(self) -> str:
        n_in = len(self.inputs)
        head = (
            f"traced graph of {self.name} ({n_in} input{'s' * (n_in != 1)}, "
            f"{self.num_nodes} nodes, {self.num_outputs} output{'s' * (self.num_outputs != 1)})"
        )
        return "\n".join([head, *("  " + line for line in self._text)])

    __repr__ = __str__


class _NotReplayable(Exception):
    """Why a trace cannot be replayed (the message is the reason kept for explain())."""


class _Uncacheable(Exception):
    """Why a call has no signature (it runs the function)."""


_TENSOR = "T"  # a tensor's place in a signature's argument tree


def _shape_str(shape: tuple[Any, ...], dtype: DType) -> str:
    return f"{dtype.short}[{', '.join(str(d) for d in shape)}]"


def _capture(
    name: str,
    out: Any,
    tensors: list[Tensor],
    labels: list[str],
    in_nodes: list[Node],
    start: int,
) -> tuple[TracedGraph, Any]:
    """The template between `in_nodes` and the tensors of `out`, as a `TracedGraph`, and the
    output tree. Raises _NotReplayable with the reason when the recording cannot be replayed.
    """
    leaves: list[Tensor] = []
    spec = _out_spec(out, leaves, {})
    tensor_pos = {id(t): k for k, t in enumerate(tensors)}
    input_pos: dict[Node, int] = {}
    for k, n in enumerate(in_nodes):
        input_pos.setdefault(n, k)
    # detach() of a computed input makes a new leaf sharing its buffer: replay it as such.
    buffer_pos = {id(n.buffer): k for k, n in enumerate(in_nodes) if n.op is _BUFFER}

    roots: list[Node] = []
    for t in leaves:
        if id(t) in tensor_pos:
            continue
        if t._view is not None:
            root = t._view[0]
            if id(root) in tensor_pos or root._node.id < start:
                raise _NotReplayable(
                    "returns a view of a tensor from outside the function (a replay would "
                    "return a copy, losing the aliasing); return a clone() or compute it outside"
                )
        if getattr(t, "_meta", None) is not None:
            raise _NotReplayable(
                "sets autograd state (requires_grad_, retain_grad or a hook) on a tensor it returns"
            )
        roots.append(t._node)

    # Walk back from the outputs to the inputs; node ids order the nodes topologically.
    consts: list[Node] = []
    aliases: dict[Node, int] = {}
    interior: list[Node] = []
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen or n in input_pos:
            continue
        seen.add(n)
        cat = n.op.category
        if n.id < start:
            if cat == "source" and not n.inputs:  # a literal: safe to share
                consts.append(n)
                continue
            raise _NotReplayable(
                f"reads a tensor recorded at {format_loc(n.loc)} that is not an argument, "
                "parameter, buffer or closure/global tensor of the function, so a replay "
                "would keep its current value; pass it as an argument (or register it as a "
                "buffer)"
            )
        if cat == "leaf":
            k = buffer_pos.get(id(n.buffer)) if n.op is _BUFFER else None
            if n.ag is not None:
                raise _NotReplayable(
                    "creates a tensor that requires grad inside the function (a gradient leaf)"
                )
            if k is not None:
                aliases[n] = k
            else:
                consts.append(n)  # data recorded inside the function, or a Python scalar
            continue
        if n.op is _RAND:
            raise _NotReplayable(
                f"draws random numbers at {format_loc(n.loc)} (a replay would repeat the "
                "same numbers)"
            )
        if cat == "source" and not n.inputs:
            consts.append(n)
            continue
        if n.ag is not None and n.ag is not True:
            raise _NotReplayable("turns a computed tensor into a gradient leaf (requires_grad_)")
        interior.append(n)
        stack.extend(n.inputs)
    interior.sort(key=lambda n: n.id)
    if _engine._interior and any(n in _engine._interior for n in interior):
        raise _NotReplayable("registers an autograd hook or retain_grad() inside the function")

    # Number the values: inputs, constants, aliases, then the recorded nodes in order.
    names: dict[Node, str] = {}
    ns: dict[str, Any] = {"make_node": make_node, "wrap": wrap, "stop_gradient": None}
    code = ["def replay(ts):"]
    text: list[str] = []
    used = sorted(
        {input_pos[i] for n in interior for i in n.inputs if i in input_pos}
        | set(aliases.values())
        | {input_pos[r] for r in roots if r in input_pos}
        | {tensor_pos[id(t)] for t in leaves if id(t) in tensor_pos}
    )
    for k in range(len(in_nodes)):
        names.setdefault(in_nodes[k], f"v{k}")
        n = in_nodes[k]
        flag = ", requires grad" if n.ag is not None else ""
        text.append(f"%{k} : {_shape_str(n.shape, n.dtype)} = input {k}  # {labels[k]}{flag}")
    for k in used:
        code.append(f"    v{k} = ts[{k}]._node")
    slot = len(in_nodes)
    for n in consts:
        names[n] = f"c{slot}"
        ns[f"c{slot}"] = n
        what = n.op.name
        if n.op.name == "scalar" or n.op.name == "const":
            what += f" {n.buffer if n.op.name == 'scalar' else n.attrs[0]!r}"
        text.append(f"%{slot} : {_shape_str(n.shape, n.dtype)} = constant {what}")
        slot += 1
    if aliases:
        ns["stop_gradient"] = _engine.stop_gradient
    for n, k in aliases.items():
        names[n] = f"v{slot}"
        code.append(f"    v{slot} = stop_gradient(v{k})")
        text.append(f"%{slot} : {_shape_str(n.shape, n.dtype)} = detach %{k}")
        slot += 1
    grad_on = grad_mode.enabled
    for n in interior:
        s = slot
        slot += 1
        names[n] = f"v{s}"
        ins = [names[i] for i in n.inputs]
        ns[f"op{s}"], ns[f"at{s}"], ns[f"sh{s}"] = n.op, n.attrs, n.shape
        ns[f"dt{s}"], ns[f"dv{s}"], ns[f"loc{s}"] = n.dtype, n.device, n.loc
        args = "".join(f"{x}, " for x in ins)
        code.append(f"    v{s} = make_node(op{s}, ({args}), at{s}, sh{s}, dt{s}, dv{s})")
        code.append(f"    v{s}.loc = loc{s}")
        # make_node decides the gradient flag from the inputs and grad mode; a node recorded
        # under no_grad (or enable_grad) inside the function keeps what it had.
        would = grad_on and n.dtype.is_floating_point and any(i.ag is not None for i in n.inputs)
        if n.ag is None and would:
            code.append(f"    v{s}.ag = None")
        elif n.ag is True and not would:
            code.append(f"    v{s}.ag = True")
        attrs = ", ".join(f"{k}={v!r}" for k, v in n.params.items())
        refs = ", ".join("%" + nm[1:] for nm in ins)
        text.append(
            f"%{s} : {_shape_str(n.shape, n.dtype)} = {n.op.name}"
            f"{'[' + attrs + ']' if attrs else ''} {refs}  # {format_loc(n.loc)}"
        )
    outs, refs_out = [], []
    for t in leaves:
        k = tensor_pos.get(id(t))
        if k is not None:
            outs.append(f"ts[{k}]")
            refs_out.append(f"%{k}")
        else:
            nm = names[t._node]
            outs.append(f"wrap({nm})")
            refs_out.append("%" + nm[1:])
    code.append(f"    return [{', '.join(outs)}]")
    text.append("return " + ", ".join(refs_out))
    src = "\n".join(code) + "\n"
    filename = f"{_REPLAY_FILE} of {name} #{next(_graph_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(builtins.compile(src, filename, "exec"), ns)
    inputs = [(labels[k], n.shape, n.dtype, n.ag is not None) for k, n in enumerate(in_nodes)]
    graph = TracedGraph(name, inputs, text, len(interior), len(leaves), src, ns["replay"])
    return graph, spec


_graph_counter = iter(range(1, 1 << 62))
_CONSTANT_TYPES = (
    type(None), bool, int, float, complex, str, bytes, DType, Device, slice, type(Ellipsis)
)  # fmt: skip


def _out_spec(out: Any, leaves: list[Tensor], index: dict[int, int]) -> Any:
    """The output tree: tensors become ("T", leaf index); the rest must be plain constants."""
    if isinstance(out, Tensor):
        k = index.get(id(out))
        if k is None:
            k = index[id(out)] = len(leaves)
            leaves.append(out)
        return (_TENSOR, k)
    tp = type(out)
    if isinstance(out, (SymInt, SymFloat, SymBool)):
        raise _NotReplayable("returns a symbolic size")
    if isinstance(out, _CONSTANT_TYPES):
        return ("C", out)
    if isinstance(out, (tuple, list)):
        return (tp, [_out_spec(o, leaves, index) for o in out])
    if tp is dict:
        return (dict, list(out), [_out_spec(v, leaves, index) for v in out.values()])
    raise _NotReplayable(
        f"returns a {tp.__name__}, which may hold values computed from tensors "
        "(return tensors, numbers, or tuples/lists/dicts of them)"
    )


def _unflatten(spec: Any, flat: list[Any]) -> Any:
    tag = spec[0]
    if tag is _TENSOR:
        return flat[spec[1]]
    if tag == "C":
        return spec[1]
    if tag is dict:
        return dict(zip(spec[1], [_unflatten(s, flat) for s in spec[2]]))
    items = [_unflatten(s, flat) for s in spec[1]]
    if tag is list:
        return items
    if tag is tuple:
        return tuple(items)
    if hasattr(tag, "_fields"):  # a namedtuple
        return tag(*items)
    return tag(items)  # another tuple subclass (lazytorch.Size)


def _fast_unflatten(spec: Any) -> Callable[[list[Any]], Any]:
    """The unflatten of the common trees without the recursion."""
    if spec[0] is _TENSOR:
        k = spec[1]
        return lambda flat: flat[k]
    if spec[0] is tuple and all(s[0] is _TENSOR for s in spec[1]):
        ks = [s[1] for s in spec[1]]
        if ks == list(range(len(ks))):
            return tuple
    return functools.partial(_unflatten, spec)
