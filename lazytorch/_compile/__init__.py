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

import contextlib
import functools
import types
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from lazytorch import _config, metrics
from lazytorch import runtime as _runtime
from lazytorch._compile import free as _free
from lazytorch._compile import step as _step
from lazytorch._compile.backends import CompileBackend, Runner, _make_backend
from lazytorch._compile.free import _as_module, _code_names, _is_module_like, _module_tensors, _tree
from lazytorch._compile.graph import (
    TracedGraph,
    _capture,
    _fast_unflatten,
    _NotReplayable,
    _out_spec,
    _shape_str,
    _Uncacheable,
)
from lazytorch._compile.hooks import _hooks, _Trace, _tracing
from lazytorch._compile.options import CompileMode, CompileOptions
from lazytorch._shapes import mark_dynamic, mark_static
from lazytorch.ir.node import Node, grad_mode
from lazytorch.ops import autocast as _autocast
from lazytorch.tensor import Tensor

__all__ = [
    "CompileMode",
    "CompileOptions",
    "CompiledFunction",
    "TracedGraph",
    "compile",
]


# -- the compiled function ------------------------------------------------------------------
class _Entry:
    __slots__ = ("confirmed", "graph", "reason", "run", "step", "unflatten")

    def __init__(
        self,
        run: Runner | None,
        unflatten: Callable[[list[Any]], Any] | None,
        graph: TracedGraph | None,
        reason: str | None,
        step: _step.StepPlan | None = None,
    ) -> None:
        self.run = run
        self.unflatten = unflatten
        self.graph = graph
        self.reason = reason
        # A whole-step capture (lazytorch._compile.step): replayed once a second call has
        # recorded the same plan (`confirmed`).
        self.step = step
        self.confirmed = False


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
        self.dynamic = dynamic  # True/False: mark the tensor arguments' dims (see _mark_inputs)
        self.options = options
        self._cache: dict[Any, _Entry] = {}
        self._calls = self._hits = self._traces = self._fallbacks = 0
        self._reasons: Counter[str] = Counter()
        self._warned = False
        self._last_key: Any = None
        self._scoped = bool(
            fullgraph
            or backend.scope() is not None
            or options.deterministic is not None
            or self.mode is CompileMode.MAX_AUTOTUNE
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
        if self.dynamic is not None:
            _mark_inputs(args, kwargs, self.dynamic)
        if not self.options.trace_cache:
            return self._call_through(args, kwargs, "trace_cache=False")
        try:
            key, tensors = self._signature(args, kwargs)
        except _Uncacheable as e:
            return self._call_through(args, kwargs, str(e))
        entry = self._cache.get(key)
        if entry is None:
            return self._trace(key, tensors, args, kwargs)
        if entry.step is not None:
            if _hooks.stack:
                # Inside another trace: that one must see the programs run, so run the Python.
                return self._invoke(args, kwargs)
            if not entry.confirmed:
                return self._trace(key, tensors, args, kwargs, entry)
            self._hits += 1
            if self._scoped:
                with self._scope():
                    return entry.unflatten(_step.replay(entry.step, tensors))  # type: ignore[misc]
            return entry.unflatten(_step.replay(entry.step, tensors))  # type: ignore[misc]
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
                free.append(_free.free_value(cell.cell_contents, tensors, modules))
            except ValueError:  # an empty cell
                free.append(None)
        g = self._globals
        for name in self._global_names:
            v = g.get(name)
            free.append(None if v is None else _free.free_value(v, tensors, modules))
        for m in self._modules:
            free.append(_module_tensors(m, tensors))
        for m in modules:
            free.append(_module_tensors(m, tensors))
        # The gradients of the leaves among them: a training step reads and writes them.
        grads = []
        for i in range(len(tensors)):
            meta = getattr(tensors[i], "_meta", None)
            if meta is not None and meta.grad is not None:
                grads.append(i)
                tensors.append(meta.grad)
        metas = []
        first: dict[Node, int] = {}
        for i, t in enumerate(tensors):
            n = t._node
            metas.append((n.shape, n.dtype, n.device, n.ag is not None, first.setdefault(n, i)))
        key = (
            tree,
            tuple(free),
            tuple(metas),
            tuple(grads),
            grad_mode.enabled,
            _config.get_default_dtype(),
            _config.get_default_device(),
            # autocast changes what the ops record (a replay would keep the other choice)
            _autocast.enabled_anywhere
            and (tuple(_autocast.state.enabled.items()), tuple(_autocast.state.dtype.items())),
        )
        return key, tensors

    def _scope(self) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        if self.fullgraph:
            stack.enter_context(_config.strict_mode(True))
        scope = self.backend.scope()
        if scope is not None:
            stack.enter_context(scope)
        if self.options.deterministic is not None:
            stack.enter_context(_config.deterministic_algorithms(self.options.deterministic))
        if self.mode is CompileMode.MAX_AUTOTUNE:
            # Programs cut inside the call may tune their kernels' block sizes (the triton
            # backend: lazytorch.runtime.triton_backend.Tuner).
            stack.enter_context(_config.max_autotune(True))
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

    def _trace(
        self,
        key: Any,
        tensors: list[Tensor],
        args: Any,
        kwargs: Any,
        confirming: _Entry | None = None,
    ) -> Any:
        """Run the function recording it: as a node template (`_capture`), else as a whole
        step (`lazytorch._compile.step`); `confirming` is a step entry traced once already,
        whose plan this second recording must reproduce before it is replayed."""
        if confirming is None:
            if len(self._cache) >= self.options.cache_size_limit:
                reason = f"cache_size_limit ({self.options.cache_size_limit}) reached"
                if not self._warned:
                    self._warned = True
                    warnings.warn(
                        f"lazytorch.compile: {self._name} has traced {len(self._cache)} "
                        f"signatures, its cache_size_limit; new signatures now run the "
                        f"function uncompiled (last change: "
                        f"{_describe_change(self._last_key, key)}). "
                        "Raise options={'cache_size_limit': ...} if this is expected.",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                return self._call_through(args, kwargs, reason)
            if any(type(d) is not int for m in key[2] for d in m[0]):
                return self._call_through(args, kwargs, "symbolic (dynamic) shapes")
            self._traces += 1
        rec = None
        if self.options.step_capture and not _hooks.stack:
            # A step's programs must read values, not compute what was pending before the
            # call: the tracked tensors (its inputs), and anything else live that a cut
            # inside (opt.step's materialize()) would sweep in (the batch the loop sliced).
            _runtime.materialize()
            rec = _step.StepRecorder(metrics._node_id_now())
            rec.note_versions(tensors)
        in_nodes = [t._node for t in tensors]
        trace = _Trace(metrics._node_id_now(), self.fullgraph, tensors, rec)
        leaves: list[Tensor] = []
        with _tracing(trace), rec if rec is not None else contextlib.nullcontext():
            out = self._fn_traced(args, kwargs)
            reason = trace.reason
            if reason is None and any(t._node is not n for t, n in zip(tensors, in_nodes)):
                reason = "rebinds an input tensor to a new value (an in-place write or out=)"
            if rec is not None and reason is not None and rec.reason is None:
                # The end of a step: what it leaves pending runs now, as one more program.
                _collect_tensors(out, leaves)
                ends = [t for t in (*tensors, *leaves) if t._node.buffer is None]
                for t in tensors:
                    g = getattr(t, "_meta", None)
                    g = g.grad if g is not None else None
                    if g is not None and g._node.buffer is None:
                        ends.append(g)
                if ends:
                    with self._scope():
                        _runtime.materialize(*ends)
        if confirming is not None:
            return self._confirm(confirming, key, rec, reason, tensors, in_nodes, out, args, kwargs)
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
            plan, why = self._step_plan(rec, key, tensors, in_nodes, out, args, kwargs)
            if plan is not None:
                spec = _out_spec(out, [], {})
                entry = _Entry(None, _fast_unflatten(spec), None, None, plan)
            else:
                if why is not None:
                    reason = f"{reason}; as a whole step: {why}"
                entry = _Entry(None, None, None, reason)
                self._fallbacks += 1  # this call ran the function, and so will the next ones
                self._reasons[reason] += 1
        self._cache[key] = entry
        self._last_key = key
        if self.options.materialize_outputs and not leaves:
            _collect_tensors(out, leaves)
            with self._scope():
                _runtime.materialize(*leaves)
        return out

    def _step_plan(
        self,
        rec: _step.StepRecorder | None,
        key: Any,
        tensors: list[Tensor],
        in_nodes: list[Node],
        out: Any,
        args: Any,
        kwargs: Any,
    ) -> tuple[_step.StepPlan | None, str | None]:
        """The whole-step plan of a traced call, or (None, why not); (None, None) when no
        step capture listened."""
        if rec is None or (rec.reason is None and not rec.cuts):
            return None, None  # no step: the graph's reason is the whole story
        try:
            after, _ = self._signature(args, kwargs)
        except _Uncacheable as e:
            return None, str(e)
        if (after[0], after[1], after[4:]) != (key[0], key[1], key[4:]):
            if _creates_optimizer_state(key[1], after[1]):
                return None, (
                    "this call creates optimizer state (an optimizer's first step); the "
                    "steady step is a signature of its own"
                )
            what = (
                "the arguments"
                if after[0] != key[0]
                else "grad mode or default dtype/device"
                if after[4:] != key[4:]
                else "the numbers, modules or optimizer state and settings it reads (an "
                "LR scheduler stepped inside the function?)"
            )
            return None, f"the call changes {what}, which a replay would not"
        leaves: list[Tensor] = []
        try:
            _out_spec(out, leaves, {})
        except _NotReplayable as e:
            return None, str(e)
        try:
            plan = _step.build_plan(
                rec, tensors, in_nodes, leaves, self._labels(args, kwargs, tensors)
            )
        except ValueError as e:
            return None, str(e)
        return plan, None

    def _confirm(
        self,
        entry: _Entry,
        key: Any,
        rec: _step.StepRecorder | None,
        reason: str | None,
        tensors: list[Tensor],
        in_nodes: list[Node],
        out: Any,
        args: Any,
        kwargs: Any,
    ) -> Any:
        """The second recording of a step signature: replay it from now on if it made the
        same plan as the first (every constant equal), else run the function from now on."""
        plan, why = self._step_plan(rec, key, tensors, in_nodes, out, args, kwargs)
        if plan is not None and entry.step is not None:
            if plan.signature() == entry.step.signature():
                entry.step = plan  # its providers are bound to this call's objects
                entry.confirmed = True
                return out
            why = (
                "two calls recorded different programs or constants (a number that changes "
                "from call to call, such as a step count read as a Python number)"
            )
        entry.step = None
        entry.unflatten = None
        entry.reason = f"{reason or 'runs as a whole step'}; as a whole step: {why}"
        self._fallbacks += 1
        self._reasons[entry.reason] += 1
        return out

    def _fn_traced(self, args: Any, kwargs: Any) -> Any:
        if not self._scoped:
            return self._fn(*args, **kwargs)
        with self._scope():
            return self._fn(*args, **kwargs)

    def _labels(self, args: Any, kwargs: Any, tensors: list[Tensor]) -> list[str]:
        """Names for the flat inputs (the slow path of _signature, for graph listings and
        messages): each tensor by where the function reaches it, found by identity."""
        names: dict[int, str] = {}

        def name(t: Any, label: str) -> None:
            if isinstance(t, Tensor):
                names.setdefault(id(t), label)

        def walk(obj: Any, path: str) -> None:
            if isinstance(obj, Tensor):
                name(obj, path)
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
        free = [(n, c) for n, c in zip(self._cell_names, _cell_values(self._cells))]
        free += [(n, self._globals.get(n)) for n in self._global_names]
        modules = [("", m) for m in self._modules]  # the compiled module: its own names
        modules += [(f"arg module {i}", m) for i, m in enumerate(_arg_modules(args, kwargs))]
        optimizers = []
        for n, v in free:
            name(v, n)
            m = _as_module(v)
            if m is not None:
                modules.append((n, m))
            elif _free._is_optimizer(v):
                optimizers.append((n, v))
        params: dict[int, str] = {}
        for mname, m in modules:
            named = getattr(m, "named_parameters", None), getattr(m, "named_buffers", None)
            if all(callable(f) for f in named):
                for f in named:
                    for n, t in f():  # type: ignore[misc]
                        full = f"{mname}.{n}" if mname else n
                        name(t, full)
                        params.setdefault(id(t), full)
        for oname, opt in optimizers:
            k = 0
            for g in opt.param_groups:
                for p in g["params"]:
                    pname = params.get(id(p), f"{oname} parameter {k}")
                    name(p, pname)
                    for key, v in opt.state.get(p, {}).items():
                        name(v, f"{oname}.state[{pname}][{key!r}]")
                    k += 1
        for t in tensors:
            meta = getattr(t, "_meta", None)
            if meta is not None and meta.grad is not None and id(t) in names:
                name(meta.grad, f"{names[id(t)]}.grad")
        return [names.get(id(t), f"free tensor {i}") for i, t in enumerate(tensors)]

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
            elif e.step is not None:
                n = e.step.num_programs
                what = f"{n} program{'s' * (n != 1)} as a whole step"
                lines.append(
                    f"  signature {i}: replays {what}"
                    if e.confirmed
                    else f"  signature {i}: captured {what}; replayed once a second call "
                    "records the same plan"
                )
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


def _creates_optimizer_state(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    """Whether the free-value parts of two signatures differ only by optimizer state made
    (a parameter's state None before, filled after) — an optimizer's first step."""
    if len(before) != len(after):
        return False
    made = False
    for b, a in zip(before, after):
        if b == a:
            continue
        if not (type(b) is tuple and b[:1] == ("optimizer",) and a[:3] == b[:3]):
            return False
        for sb, sa in zip(b[3], a[3]):
            if sb != sa and sb is not None:
                return False
        made = True
    return made


def _describe_change(old: Any, new: Any) -> str:
    """What differs between two signatures, in a few words (for the cache-limit warning)."""
    if old is None:
        return "unknown"
    if old[3] != new[3]:
        return "which parameters have a .grad"
    if old[4:] != new[4:]:
        return "grad mode, autocast or default dtype/device"
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


_free.compiled_type = CompiledFunction


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
    * `mode` — a `CompileMode` or torch's strings. ``max-autotune`` lets programs cut inside
      the call tune their Triton kernels' block sizes; on the cpp backend modes are alike.
    * `backend` — ``"auto"``, ``"cpp"``, ``"interpreter"`` (checked now), ``"triton"``
      (not built: an error now), or a callable ``backend(graph: TracedGraph) -> runner``
      (see `CallableBackend`).
    * `dynamic` — True: every dim of size >= 2 of each tensor argument is marked dynamic
      (`lazytorch.mark_dynamic`), so the first program compiled is already over symbolic
      sizes; False: marked static (a new size compiles a new program); None: sizes become
      symbolic when they change (the default everywhere)
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


def _mark_inputs(args: tuple[Any, ...], kwargs: dict[str, Any], dynamic: bool) -> None:
    """`compile(dynamic=True|False)`: mark every dim of the tensor arguments."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            for d, n in enumerate(a.shape):
                if not dynamic:
                    mark_static(a, d)
                elif n >= 2:
                    mark_dynamic(a, d)
