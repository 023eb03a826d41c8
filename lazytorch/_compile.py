"""`lazytorch.compile`: trace a function once per input signature, then replay its graph.

lazytorch already records every op lazily, and a materialization already finds its
compiled program by structure, so what is left to save is Python: every call of a model
re-runs its ``forward`` — argument checks, promotion, broadcasting, decompositions, one
user-line lookup per op — only to record the same graph again. A compiled function runs
the Python once per *signature* (the trace), keeps the nodes it recorded as a compact
template, and on a later call with the same signature *replays* the template on the new
inputs: one `make_node` per recorded node, no Python-level op logic. The outputs are
ordinary lazy tensors, so they fuse with what the caller does next, and autograd flows
through them.

>>> import lazytorch
>>> @lazytorch.compile
... def f(x, y):
...     return (x * y + 1).relu()
>>> a, b = lazytorch.ones(3), lazytorch.full((3,), 2.0)
>>> f(a, b)                       # traced: the Python body runs
tensor([3., 3., 3.])
>>> f(b, a)                       # same signature: the graph is replayed
tensor([3., 3., 3.])
>>> f.stats["traces"], f.stats["hits"]
(1, 1)

**Signature.** For each tensor of the arguments (nested in tuples, lists and dicts): shape,
dtype, device, whether it requires grad, and which earlier input it is the same value as;
every other argument by value (it must be hashable, else the call just runs the function);
grad mode and the default dtype/device; and the *free* tensors the function reads — the
parameters and buffers of a module (compiled directly, the ``self`` of a bound method, a
module argument, or a module in the function's closure or globals), and tensors held in
its closure cells or the globals it names. Free tensors are inputs of the replay, read
anew on every call, so a parameter updated by an optimizer step is seen by the next call.

**What runs only when tracing.** As with ``torch.compile`` and ``jax.jit``, Python side
effects in the function (printing, counting, appending to a list) happen only on the
calls that trace; a replay runs none of the function's Python.

**What is not replayed.** A trace whose recording cannot be replayed faithfully makes the
signature call the function every time instead (still correct), with the reason kept in
``explain()``: reading or materializing a value inside the function (``.item()``,
``print``, ``materialize``), writing in place to a tensor that existed before the call,
running ``backward``, drawing random numbers (a replay would repeat them), returning a
view of an input or an object of unknown type, reading a tensor that is not an input (an
attribute of an arbitrary object: pass it as an argument or register it as a buffer), and
symbolic (dynamic) shapes.
"""

from __future__ import annotations

import builtins
import contextlib
import difflib
import enum
import functools
import linecache
import threading
import types
import typing
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from lazytorch import _config, metrics
from lazytorch import runtime as _runtime
from lazytorch._errors import ImplicitMaterializationError
from lazytorch.autograd import engine as _engine
from lazytorch.ir import node as _node_mod
from lazytorch.ir.device import Device
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node, format_loc, grad_mode, user_loc
from lazytorch.ir.primitives import PRIMITIVES, make_node
from lazytorch.ir.symbolic import SymBool, SymFloat, SymInt
from lazytorch.ops import views as _views
from lazytorch.ops._core import wrap
from lazytorch.tensor import Tensor

__all__ = [
    "CompileMode",
    "CompileOptions",
    "CompiledFunction",
    "TracedGraph",
    "compile",
]

_BUFFER = PRIMITIVES["buffer"]
_RAND = PRIMITIVES["rand"]
_REPLAY_FILE = "<lazytorch.compile replay"
# Frames of generated replay code are ours: provenance lookups skip them.
_node_mod.internal_dirs.append(_REPLAY_FILE)


# -- mode and options -----------------------------------------------------------------------
class CompileMode(str, enum.Enum):
    """How hard compilation tries; torch's mode strings are accepted.

    On the CPU backends every mode currently does the same thing: trace replay *is* the
    overhead reduction, and autotuning belongs to the GPU backend, which is not built yet.

    >>> from lazytorch import CompileMode
    >>> CompileMode("reduce-overhead") is CompileMode.REDUCE_OVERHEAD
    True
    >>> CompileMode("max_autotune")
    <CompileMode.MAX_AUTOTUNE: 'max-autotune'>
    """

    DEFAULT = "default"
    REDUCE_OVERHEAD = "reduce-overhead"
    MAX_AUTOTUNE = "max-autotune"

    @classmethod
    def _missing_(cls, value: object) -> CompileMode:
        if isinstance(value, str):
            norm = value.strip().lower().replace("_", "-")
            for m in cls:
                if m.value == norm:
                    return m
        valid = [m.value for m in cls]
        close = difflib.get_close_matches(str(value), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown compile mode {value!r}{hint}; valid modes: {', '.join(valid)}")


@dataclass(frozen=True)
class CompileOptions:
    """The ``options=`` that `compile` honours; an unknown key or a wrong type is an error.

    * ``cache_size_limit`` — signatures traced per compiled function; past it a new
      signature warns once and calls the function uncompiled (torch's limit is 8 too).
    * ``trace_cache`` — False: never replay, always run the Python (the other options
      still apply).
    * ``materialize_outputs`` — compute the outputs before returning (a graph cut at the
      function boundary, on the compile's backend); default False keeps them lazy so they
      fuse with the caller.
    * ``deterministic`` — run the call (and its materializations) with deterministic
      algorithms on or off (`lazytorch.deterministic_algorithms`); None: as the caller.

    >>> from lazytorch._compile import CompileOptions
    >>> CompileOptions.from_dict({"cache_size_limit": 2}).cache_size_limit
    2
    >>> CompileOptions.from_dict({"cache_size_limt": 2})
    Traceback (most recent call last):
    ...
    ValueError: unknown compile option 'cache_size_limt' (did you mean 'cache_size_limit'?); valid options: cache_size_limit, deterministic, materialize_outputs, trace_cache
    """

    cache_size_limit: int = 8
    trace_cache: bool = True
    materialize_outputs: bool = False
    deterministic: bool | None = None

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in fields(self):
            value = getattr(self, f.name)
            expected = typing.get_args(hints[f.name]) or (hints[f.name],)
            if not any(_is_instance(value, t) for t in expected):
                names = " or ".join("None" if t is type(None) else t.__name__ for t in expected)
                raise TypeError(
                    f"compile option {f.name!r} expects {names}, got {type(value).__name__} "
                    f"({value!r})"
                )
        if self.cache_size_limit < 1:
            raise ValueError(
                f"compile option 'cache_size_limit' must be at least 1, got {self.cache_size_limit}"
            )

    @classmethod
    def from_dict(cls, options: Any) -> CompileOptions:
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {type(options).__name__}")
        valid = sorted(f.name for f in fields(cls))
        for key in options:
            if key not in valid:
                if key in ("backend", "mode", "fullgraph", "dynamic", "disable"):
                    hint = f" (pass it as compile(..., {key}=...))"
                else:
                    close = difflib.get_close_matches(str(key), valid, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"unknown compile option {key!r}{hint}; valid options: {', '.join(valid)}"
                )
        return cls(**options)


def _is_instance(value: Any, t: type) -> bool:
    if t is int:  # a bool is an int to Python, never to an option
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, t)


# -- backends (strategies) ------------------------------------------------------------------
Runner = Callable[[list[Tensor]], list[Any]]


class CompileBackend:
    """How a compiled function runs a traced graph (a strategy).

    ``prepare(graph)`` is called once per trace and returns what runs the graph on later
    calls: a function of the flat input tensors returning the flat outputs. ``scope()`` is
    entered around every call (trace or replay).
    """

    name = "auto"

    def prepare(self, graph: TracedGraph) -> Runner:
        return graph._replay

    def scope(self) -> contextlib.AbstractContextManager[Any] | None:
        return None


class LazyBackend(CompileBackend):
    """``auto``, ``cpp``, ``interpreter``: replay the graph lazily.

    The outputs are lazy, so they are computed by whatever backend is active where they are
    materialized; a named backend applies to materializations inside the call, and to the
    outputs with ``options={"materialize_outputs": True}``. ``auto`` inherits the caller's.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        if name != "auto":
            from lazytorch.runtime.backends import get_backend

            try:
                get_backend(name)
            except Exception as e:
                raise RuntimeError(
                    f"compile(backend={name!r}): the backend is not available on this machine: {e}"
                ) from e

    def scope(self) -> contextlib.AbstractContextManager[Any] | None:
        return None if self.name == "auto" else _config.backend(self.name)


class TritonBackend(CompileBackend):
    """The GPU backend: not built yet, so choosing it fails at ``compile()`` time."""

    name = "triton"

    def __init__(self) -> None:
        raise NotImplementedError(
            "compile(backend='triton'): the GPU (Triton) backend is not built on this "
            "machine — lazytorch has no Triton code generator yet; use backend='cpp' "
            "(compiled C++ on the CPU), 'interpreter' or 'auto'"
        )


class CallableBackend(CompileBackend):
    """A user strategy: ``backend(graph: TracedGraph) -> runner``, called once per trace.

    The runner is called on each later call with the flat input tensors (arguments, then
    free tensors, as ``graph.inputs`` lists them) and returns one tensor per tensor output
    (``graph.num_outputs``). ``graph.replay`` is such a runner.
    """

    def __init__(self, fn: Callable[[TracedGraph], Callable[..., Any]]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def prepare(self, graph: TracedGraph) -> Runner:
        runner = self.fn(graph)
        if not callable(runner):
            raise TypeError(
                f"compile backend {self.name!r} must return a callable that runs the graph, "
                f"got {type(runner).__name__}"
            )
        n, name = graph.num_outputs, self.name

        def run(ts: list[Tensor]) -> list[Any]:
            out = list(runner(*ts))
            if len(out) != n:
                raise RuntimeError(
                    f"compile backend {name!r}: its runner returned {len(out)} outputs, "
                    f"the graph has {n}"
                )
            return out

        return run


_BACKENDS: dict[str, Callable[[], CompileBackend]] = {
    "auto": lambda: LazyBackend("auto"),
    "cpp": lambda: LazyBackend("cpp"),
    "interpreter": lambda: LazyBackend("interpreter"),
    "triton": TritonBackend,
}


def _make_backend(backend: Any) -> CompileBackend:
    if isinstance(backend, CompileBackend):
        return backend
    if isinstance(backend, str):
        factory = _BACKENDS.get(backend.strip().lower())
        if factory is None:
            close = difflib.get_close_matches(backend, list(_BACKENDS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown compile backend {backend!r}{hint}; choose one of "
                f"{', '.join(_BACKENDS)}, or pass a callable"
            )
        return factory()
    if callable(backend):
        return CallableBackend(backend)
    raise TypeError(f"backend must be a name or a callable, got {type(backend).__name__}")


# -- the traced graph -----------------------------------------------------------------------
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


# -- tracing hooks: what views.assign, runtime and the autograd engine report ---------------
class _Trace:
    __slots__ = ("fullgraph", "input_nodes", "input_tensors", "reason", "start")

    def __init__(self, start: int, fullgraph: bool, tensors: list[Tensor]) -> None:
        self.start = start
        self.fullgraph = fullgraph
        self.input_tensors = {id(t) for t in tensors}
        self.input_nodes = {t._node for t in tensors}
        self.reason: str | None = None

    def writes_outside(self, root: Tensor) -> bool:
        """Whether an in-place write to `root` changes a tensor that outlives the call."""
        if id(root) in self.input_tensors:
            return True
        n = root._node
        # A tensor recorded before the call — unless it is a fresh alias of an input's
        # value made inside (clone() shares the node), which the caller cannot see.
        return n.id < self.start and n not in self.input_nodes

    def fail(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason


class _Hooks(threading.local):
    """Installed as ``_compile_trace`` in runtime, views and the engine while any thread
    traces; each thread hears only of its own traces (innermost and enclosing)."""

    stack: list[_Trace]

    def __init__(self) -> None:
        self.stack = []

    def _fail(self, reason: str) -> None:
        for t in self.stack:
            t.fail(reason)

    def value_read(self, t: Tensor, cause: str) -> None:
        if not self.stack:
            return
        loc = format_loc(user_loc())
        if t._node.buffer is not None and any(tr.fullgraph for tr in self.stack):
            # Strict mode lets reads of computed values through; fullgraph does not.
            raise ImplicitMaterializationError(
                f"{cause} at {loc} reads a tensor's value inside a function compiled with "
                "fullgraph=True (the value would be baked into the traced graph)"
            )
        self._fail(f"reads a tensor's value: {cause} at {loc}")

    def materialized(self, cause: str) -> None:
        if self.stack:
            self._fail(f"materializes ({cause}) at {format_loc(user_loc())}")

    def assigned(self, t: Tensor) -> None:
        if not self.stack:
            return
        root = t._view[0] if t._view is not None else t
        for tr in self.stack:
            if tr.writes_outside(root):
                tr.fail(
                    "writes in place to a tensor created before the call at "
                    f"{format_loc(user_loc())}"
                )

    def backward(self) -> None:
        if self.stack:
            self._fail(f"runs backward at {format_loc(user_loc())}")


_hooks = _Hooks()
_hook_lock = threading.Lock()
_tracing_threads = 0


def _install(on: bool) -> None:
    global _tracing_threads
    with _hook_lock:
        _tracing_threads += 1 if on else -1
        h = _hooks if _tracing_threads > 0 else None
        _runtime._compile_trace = h
        _views._compile_trace = h
        _engine._compile_trace = h


@contextlib.contextmanager
def _tracing(trace: _Trace) -> Iterator[None]:
    stack = _hooks.stack
    stack.append(trace)
    if len(stack) == 1:
        _install(True)
    try:
        yield
    finally:
        stack.pop()
        if not stack:
            _install(False)


# -- free tensors: module parameters, closure and global tensors ----------------------------
_MODULE, _OTHER = 1, 0
_kinds: dict[type, int] = {}


def _kind(tp: type) -> int:
    k = _kinds.get(tp)
    if k is None:
        k = _kinds[tp] = (
            _MODULE
            if callable(getattr(tp, "parameters", None))
            and callable(getattr(tp, "buffers", None))
            and not issubclass(tp, (type, types.ModuleType))
            else _OTHER
        )
    return k


def _is_module_like(obj: Any) -> bool:
    return _kind(type(obj)) == _MODULE and callable(obj)


def _as_module(v: Any) -> Any:
    """The module whose tensors a closure or global value holds: itself, or the module a
    compiled module wraps (its replays read the parameters too); else None."""
    tp = type(v)
    if tp is CompiledFunction:
        return v.module
    return v if _kind(tp) == _MODULE else None


def _code_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _code_names(c)
    return names


def _tree(obj: Any, tensors: list[Tensor], modules: list[Any]) -> Any:
    """An argument's part of the signature; its tensors are appended to `tensors`."""
    tp = type(obj)
    if tp is Tensor or isinstance(obj, Tensor):
        tensors.append(obj)
        return _TENSOR
    if tp is tuple or tp is list:
        return (tp, tuple([_tree(o, tensors, modules) for o in obj]))
    if tp is float:
        return (float, obj.hex())  # tells -0.0 from 0.0; NaN equals itself
    if tp is int or tp is bool or tp is str or obj is None:
        return (tp, obj)
    if tp is dict:
        return (dict, tuple(obj), tuple([_tree(v, tensors, modules) for v in obj.values()]))
    if isinstance(obj, tuple):  # namedtuple, Size
        return (tp, tuple([_tree(o, tensors, modules) for o in obj]))
    if isinstance(obj, (SymInt, SymFloat, SymBool)):
        raise _Uncacheable("a symbolic size argument (dynamic shapes are not cached yet)")
    if _kind(tp) == _MODULE:
        modules.append(obj)
        return (tp, id(obj))
    try:
        hash(obj)
    except TypeError:
        raise _Uncacheable(f"an argument of unhashable type {tp.__name__}") from None
    return (tp, obj)


def _module_tensors(m: Any, tensors: list[Tensor]) -> Any:
    """Append m's parameters, then its buffers; the module's part of the signature (its
    identity and each submodule's training flag, which forward may branch on)."""
    mods = getattr(m, "modules", None)
    if callable(mods) and hasattr(m, "_parameters") and hasattr(m, "_buffers"):
        # An nn.Module: one walk reads what parameters(), buffers() and the flags would
        # (three walks cost three times as much on every call).
        flags = []
        seen: set[int] = set()
        buffers: list[Tensor] = []
        for sm in mods():
            flags.append(sm.training)
            for v in sm._parameters.values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    tensors.append(v)
            for v in sm._buffers.values():
                if v is not None:
                    buffers.append(v)
        if buffers:
            seen.clear()
            for v in buffers:
                if id(v) not in seen:
                    seen.add(id(v))
                    tensors.append(v)
        return (id(m), tuple(flags))
    tensors.extend(m.parameters())
    tensors.extend(m.buffers())
    if callable(mods):
        return (id(m), tuple([getattr(s, "training", None) for s in mods()]))
    return (id(m), getattr(m, "training", None))


# -- the compiled function ------------------------------------------------------------------
class _Entry:
    __slots__ = ("graph", "reason", "run", "unflatten")

    def __init__(
        self,
        run: Runner | None,
        unflatten: Callable[[list[Any]], Any] | None,
        graph: TracedGraph | None,
        reason: str | None,
    ) -> None:
        self.run = run
        self.unflatten = unflatten
        self.graph = graph
        self.reason = reason


class CompiledFunction:
    """What `compile` returns: call it like the function (see the module docstring).

    ``stats`` counts calls, traces, replays (``hits``) and calls that ran the function
    (``fallbacks``, by reason); ``explain()`` describes each cached signature; ``graphs``
    lists the traced graphs; ``reset()`` forgets them.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        module: Any,
        fullgraph: bool,
        mode: CompileMode,
        backend: CompileBackend,
        dynamic: bool | None,
        options: CompileOptions,
    ) -> None:
        self._fn = fn
        self.module = self._orig_mod = module
        self.fullgraph = fullgraph
        self.mode = mode
        self.backend = backend
        self.dynamic = dynamic  # accepted and stored; dynamic shapes are a separate issue
        self.options = options
        self._cache: dict[Any, _Entry] = {}
        self._calls = self._hits = self._traces = self._fallbacks = 0
        self._reasons: Counter[str] = Counter()
        self._warned = False
        self._last_key: Any = None
        self._scoped = bool(
            fullgraph or backend.scope() is not None or options.deterministic is not None
        )
        # Where free tensors come from: fixed modules, closure cells, named globals.
        self._modules: tuple[Any, ...] = ()
        self._cells: tuple[Any, ...] = ()
        self._cell_names: tuple[str, ...] = ()
        self._global_names: tuple[str, ...] = ()
        self._globals: dict[str, Any] = {}
        if module is not None:
            self._modules = (module,)
            self.__name__ = self.__qualname__ = type(module).__name__
        else:
            functools.update_wrapper(self, fn)
            func = fn
            if isinstance(fn, types.MethodType):
                if _is_module_like(fn.__self__):
                    self._modules = (fn.__self__,)
                func = fn.__func__
            code = getattr(func, "__code__", None)
            if code is not None:
                self._globals = getattr(func, "__globals__", {})
                self._global_names = tuple(dict.fromkeys(_code_names(code)))
                self._cells = tuple(getattr(func, "__closure__", None) or ())
                self._cell_names = tuple(code.co_freevars)
        self._name: str = getattr(self, "__qualname__", getattr(fn, "__name__", repr(fn)))

    def __getattr__(self, name: str) -> Any:
        # A compiled module stands in for the module: compiled.parameters(), .eval(), ...
        module = self.__dict__.get("module")
        if module is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(module, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # A decorated method: bind like a function (the instance becomes an argument).
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<compiled {self._name} (mode={self.mode.value}, backend={self.backend.name})>"

    # -- the call ----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._calls += 1
        if not self.options.trace_cache:
            return self._call_through(args, kwargs, "trace_cache=False")
        try:
            key, tensors = self._signature(args, kwargs)
        except _Uncacheable as e:
            return self._call_through(args, kwargs, str(e))
        entry = self._cache.get(key)
        if entry is None:
            return self._trace(key, tensors, args, kwargs)
        if entry.run is None:
            return self._call_through(args, kwargs, entry.reason or "")
        self._hits += 1
        if self._scoped or self.options.materialize_outputs:
            with self._scope():
                flat = entry.run(tensors)
                if self.options.materialize_outputs:
                    _runtime.materialize(*[t for t in flat if isinstance(t, Tensor)])
            return entry.unflatten(flat)  # type: ignore[misc]
        return entry.unflatten(entry.run(tensors))  # type: ignore[misc]

    def _signature(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
        tensors: list[Tensor] = []
        modules: list[Any] = []
        if kwargs:
            tree: Any = (
                _tree(args, tensors, modules),
                tuple(kwargs),
                _tree(tuple(kwargs.values()), tensors, modules),
            )
        else:
            tree = _tree(args, tensors, modules)
        free: list[Any] = []
        for cell in self._cells:
            try:
                free.append(self._free(cell.cell_contents, tensors, modules))
            except ValueError:  # an empty cell
                free.append(None)
        g = self._globals
        for name in self._global_names:
            v = g.get(name)
            free.append(None if v is None else self._free(v, tensors, modules))
        for m in self._modules:
            free.append(_module_tensors(m, tensors))
        for m in modules:
            free.append(_module_tensors(m, tensors))
        metas = []
        first: dict[Node, int] = {}
        for i, t in enumerate(tensors):
            n = t._node
            metas.append((n.shape, n.dtype, n.device, n.ag is not None, first.setdefault(n, i)))
        key = (
            tree,
            tuple(free),
            tuple(metas),
            grad_mode.enabled,
            _config.get_default_dtype(),
            _config.get_default_device(),
        )
        return key, tensors

    @staticmethod
    def _free(v: Any, tensors: list[Tensor], modules: list[Any]) -> Any:
        if isinstance(v, Tensor):
            tensors.append(v)
            return _TENSOR
        m = _as_module(v)
        if m is not None:
            modules.append(m)
        return None

    def _scope(self) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        if self.fullgraph:
            stack.enter_context(_config.strict_mode(True))
        scope = self.backend.scope()
        if scope is not None:
            stack.enter_context(scope)
        if self.options.deterministic is not None:
            stack.enter_context(_config.deterministic_algorithms(self.options.deterministic))
        return stack

    def _invoke(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not (self._scoped or self.options.materialize_outputs):
            return self._fn(*args, **kwargs)
        with self._scope():
            out = self._fn(*args, **kwargs)
            if self.options.materialize_outputs:
                leaves: list[Tensor] = []
                _collect_tensors(out, leaves)
                _runtime.materialize(*leaves)
        return out

    def _call_through(self, args: tuple[Any, ...], kwargs: dict[str, Any], reason: str) -> Any:
        self._fallbacks += 1
        self._reasons[reason] += 1
        return self._invoke(args, kwargs)

    def _trace(self, key: Any, tensors: list[Tensor], args: Any, kwargs: Any) -> Any:
        if len(self._cache) >= self.options.cache_size_limit:
            reason = f"cache_size_limit ({self.options.cache_size_limit}) reached"
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"lazytorch.compile: {self._name} has traced {len(self._cache)} "
                    f"signatures, its cache_size_limit; new signatures now run the function "
                    f"uncompiled (last change: {_describe_change(self._last_key, key)}). "
                    "Raise options={'cache_size_limit': ...} if this is expected.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return self._call_through(args, kwargs, reason)
        if any(type(d) is not int for m in key[2] for d in m[0]):
            return self._call_through(args, kwargs, "symbolic (dynamic) shapes")
        self._traces += 1
        in_nodes = [t._node for t in tensors]
        trace = _Trace(metrics._node_id_now(), self.fullgraph, tensors)
        with _tracing(trace):
            out = self._fn_traced(args, kwargs)
        reason = trace.reason
        if reason is None and any(t._node is not n for t, n in zip(tensors, in_nodes)):
            reason = "rebinds an input tensor to a new value (an in-place write or out=)"
        entry: _Entry
        if reason is None:
            try:
                graph, spec = _capture(
                    self._name, out, tensors, self._labels(args, kwargs, tensors),
                    in_nodes, trace.start,
                )  # fmt: skip
                entry = _Entry(self.backend.prepare(graph), _fast_unflatten(spec), graph, None)
            except _NotReplayable as e:
                reason = str(e)
        if reason is not None:
            entry = _Entry(None, None, None, reason)
            self._fallbacks += 1  # this call ran the function, and so will the next ones
            self._reasons[reason] += 1
        self._cache[key] = entry
        self._last_key = key
        if self.options.materialize_outputs:
            leaves: list[Tensor] = []
            _collect_tensors(out, leaves)
            with self._scope():
                _runtime.materialize(*leaves)
        return out

    def _fn_traced(self, args: Any, kwargs: Any) -> Any:
        if not self._scoped:
            return self._fn(*args, **kwargs)
        with self._scope():
            return self._fn(*args, **kwargs)

    def _labels(self, args: Any, kwargs: Any, tensors: list[Tensor]) -> list[str]:
        """Names for the flat inputs (the slow path of _signature, for graph listings)."""
        labels: list[str] = []

        def walk(obj: Any, path: str) -> None:
            if isinstance(obj, Tensor):
                labels.append(path)
            elif isinstance(obj, (tuple, list)):
                for i, o in enumerate(obj):
                    walk(o, f"{path}[{i}]")
            elif type(obj) is dict:
                for k, v in obj.items():
                    walk(v, f"{path}[{k!r}]")

        for i, a in enumerate(args):
            walk(a, f"arg {i}")
        for k, v in kwargs.items():
            walk(v, k)
        # Free tensors, in _signature's order: closure cells, globals, then modules.
        for name, cell in zip(self._cell_names, self._cells):
            with contextlib.suppress(ValueError):
                if isinstance(cell.cell_contents, Tensor):
                    labels.append(name)
        for name in self._global_names:
            if isinstance(self._globals.get(name), Tensor):
                labels.append(name)
        modules = _arg_modules(args, kwargs)
        for v in [*_cell_values(self._cells), *map(self._globals.get, self._global_names)]:
            m = _as_module(v)
            if m is not None:
                modules.append(m)
        for m in (*self._modules, *modules):
            named = getattr(m, "named_parameters", None), getattr(m, "named_buffers", None)
            if all(callable(f) for f in named):
                labels += [n for f in named for n, _ in f()]  # type: ignore[misc]
        labels = labels[: len(tensors)]
        while len(labels) < len(tensors):
            labels.append(f"free {len(labels)}")
        return labels

    # -- inspection --------------------------------------------------------------------------
    @property
    def stats(self) -> dict[str, Any]:
        """Counters: calls, traces, hits (replays), fallbacks, cache_entries, reasons."""
        return {
            "calls": self._calls,
            "traces": self._traces,
            "hits": self._hits,
            "fallbacks": self._fallbacks,
            "cache_entries": len(self._cache),
            "reasons": dict(self._reasons),
        }

    @property
    def graphs(self) -> list[TracedGraph]:
        """The traced graphs, one per replayable signature."""
        return [e.graph for e in self._cache.values() if e.graph is not None]

    def explain(self) -> str:
        """What happened so far, readably: each signature replayed or why it is not.

        >>> import lazytorch
        >>> f = lazytorch.compile(lambda x: x * lazytorch.rand(3))
        >>> _ = f(lazytorch.ones(3)), f(lazytorch.ones(3))
        >>> print(f.explain())                    # doctest: +ELLIPSIS
        compiled <lambda>: 2 calls, 1 trace, 0 replays, 2 fallbacks
          signature 0: runs the function: draws random numbers at ... (a replay would repeat the same numbers)
          calls that ran the function, by reason:
            2 x draws random numbers at ...
        """
        s = self.stats
        lines = [
            f"compiled {self._name}: {s['calls']} call{'s' * (s['calls'] != 1)}, "
            f"{s['traces']} trace{'s' * (s['traces'] != 1)}, {s['hits']} replay"
            f"{'s' * (s['hits'] != 1)}, {s['fallbacks']} fallback{'s' * (s['fallbacks'] != 1)}"
        ]
        for i, e in enumerate(self._cache.values()):
            if e.graph is not None:
                ins = ", ".join(_shape_str(shape, d) for _, shape, d, _ in e.graph.inputs)
                lines.append(f"  signature {i}: replays {e.graph.num_nodes} nodes on ({ins})")
            else:
                lines.append(f"  signature {i}: runs the function: {e.reason}")
        calls_through = {r: c for r, c in self._reasons.items() if c}
        if self._fallbacks:
            lines.append("  calls that ran the function, by reason:")
            lines += [f"    {c} x {r}" for r, c in calls_through.items()]
        return "\n".join(lines)

    def reset(self) -> None:
        """Forget every traced signature and the counters."""
        self._cache.clear()
        self._calls = self._hits = self._traces = self._fallbacks = 0
        self._reasons.clear()
        self._warned = False


def _cell_values(cells: tuple[Any, ...]) -> list[Any]:
    out = []
    for c in cells:
        with contextlib.suppress(ValueError):
            out.append(c.cell_contents)
    return out


def _arg_modules(args: Any, kwargs: Any) -> list[Any]:
    modules: list[Any] = []
    with contextlib.suppress(_Uncacheable):
        _tree((args, tuple(kwargs.values())), [], modules)
    return modules


def _collect_tensors(out: Any, leaves: list[Tensor]) -> None:
    if isinstance(out, Tensor):
        leaves.append(out)
    elif isinstance(out, (tuple, list)):
        for o in out:
            _collect_tensors(o, leaves)
    elif type(out) is dict:
        for o in out.values():
            _collect_tensors(o, leaves)


def _describe_change(old: Any, new: Any) -> str:
    """What differs between two signatures, in a few words (for the cache-limit warning)."""
    if old is None:
        return "unknown"
    if old[3:] != new[3:]:
        return "grad mode or default dtype/device"
    om, nm = old[2], new[2]
    if len(om) != len(nm):
        return f"{len(om)} -> {len(nm)} input tensors"
    for i, (a, b) in enumerate(zip(om, nm)):
        if a != b:
            ga = "requires grad" if a[3] else ""
            gb = "requires grad" if b[3] else ""
            return (
                f"input tensor {i}: {_shape_str(a[0], a[1])} {ga} -> "
                f"{_shape_str(b[0], b[1])} {gb}".replace("  ", " ").strip()
            )
    if old[0] != new[0]:
        return "non-tensor arguments"
    return "free tensors or module state"


# -- the front door -------------------------------------------------------------------------
def compile(
    fn: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    mode: str | CompileMode | None = "default",
    backend: str | Callable[..., Any] = "auto",
    dynamic: bool | None = None,
    options: dict[str, Any] | CompileOptions | None = None,
    disable: bool = False,
) -> Any:
    """Compile `fn` (a function or a module): trace once per signature, then replay.

    Usable as ``@lazytorch.compile``, ``@lazytorch.compile(mode=...)`` or
    ``lazytorch.compile(fn)``; on a module (anything with ``parameters()``, ``buffers()``
    and ``__call__``) it returns a callable wrapping ``module.__call__`` whose parameters
    and buffers are read afresh on every call. See the module docstring for what a
    signature is and which functions cannot be replayed (they run uncompiled, correctly).

    * `fullgraph` — an implicit materialization inside the function (``.item()``,
      ``print``, ``bool``) raises `ImplicitMaterializationError` naming its line.
    * `mode` — a `CompileMode` or torch's strings; accepted, all alike on the CPU.
    * `backend` — ``"auto"``, ``"cpp"``, ``"interpreter"`` (checked now), ``"triton"``
      (not built: an error now), or a callable ``backend(graph: TracedGraph) -> runner``
      (see `CallableBackend`).
    * `dynamic` — stored; dynamic shapes are a separate issue, so True acts like None
      (a new shape is a new signature).
    * `options` — a dict checked against `CompileOptions`.
    * `disable` — return `fn` unchanged.

    >>> import lazytorch
    >>> calls = []
    >>> @lazytorch.compile(mode="reduce-overhead")
    ... def step(x):
    ...     calls.append(1)             # Python side effects run only when tracing
    ...     return x * 2 + 1
    >>> for _ in range(3):
    ...     y = step(lazytorch.ones(2))
    >>> y, len(calls)
    (tensor([3., 3.]), 1)
    """
    if disable:
        return (lambda f: f) if fn is None else fn
    if not isinstance(fullgraph, bool):
        raise TypeError(f"fullgraph must be a bool, got {type(fullgraph).__name__}")
    if dynamic is not None and not isinstance(dynamic, bool):
        raise TypeError(f"dynamic must be None or a bool, got {type(dynamic).__name__}")
    cmode = CompileMode.DEFAULT if mode is None else CompileMode(mode)
    opts = CompileOptions.from_dict(options)
    strategy = _make_backend(backend)

    def decorate(f: Callable[..., Any]) -> CompiledFunction:
        if isinstance(f, CompiledFunction):
            f = f._fn if f.module is None else f.module
        if not callable(f):
            raise TypeError(f"compile() expects a function or a module, got {type(f).__name__}")
        module = f if _is_module_like(f) else None
        return CompiledFunction(
            f.__call__ if module is not None else f,
            module=module,
            fullgraph=fullgraph,
            mode=cmode,
            backend=strategy,
            dynamic=dynamic,
            options=opts,
        )

    return decorate if fn is None else decorate(fn)
