"""Reverse mode as a transformation of the recorded graph.

There is no separate tape: every op already records a node, and a node's ``ag`` slot (see
`lazytorch.ir.node`) says whether gradient flows through it. ``backward`` walks the
gradient-carrying part of the graph from the outputs, newest node first (node ids are a
topological order), and applies each primitive's vjp rule (`lazytorch.autograd.rules`).
The rules record ordinary lazy nodes, so the backward graph is scheduled, fused and
compiled together with the forward graph and the optimizer update when the step is
materialized.

A tensor that requires grad as a *leaf* owns a `TensorMeta` (its ``.grad``, hooks). Its
node is a fresh alias whose ``ag`` is that meta, so gradient arriving at the node
accumulates into the tensor. An in-place update of such a tensor under ``no_grad`` (an
optimizer step) makes the new value a fresh alias carrying the same meta: the tensor stays
a leaf across steps, as in torch.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from lazytorch import metrics
from lazytorch.autograd import rules
from lazytorch.ir.node import Node, format_loc, grad_mode, stamp
from lazytorch.ir.primitives import PRIMITIVES, Primitive, make_node
from lazytorch.ops._core import cast, const_node, expand_node, wrap
from lazytorch.runtime import register
from lazytorch.runtime.host_views import is_external as _is_external
from lazytorch.tensor import Tensor

__all__ = [
    "FREED",
    "TensorMeta",
    "backward",
    "grad",
    "leaf_alias",
    "name_grad_fn",
    "run_backward",
    "stop_gradient",
]

_RESHAPE = PRIMITIVES["reshape"]
_BUFFER = PRIMITIVES["buffer"]
_SCALAR = PRIMITIVES["scalar"]
# lazytorch.compile hook: set (by lazytorch._compile) only while a compiled function is being
# traced, which cannot replay a backward pass (None otherwise: one global check).
_compile_trace: Any = None


class TensorMeta:
    """Autograd state a tensor owns: its accumulated ``.grad`` and its hooks."""

    __slots__ = (
        "__weakref__",
        "grad",
        "hooks",
        "is_leaf",
        "post_accumulate_hooks",
        "retains_grad",
        "sparse_rows",
        "tensor",
    )

    def __init__(self, tensor: Tensor, is_leaf: bool) -> None:
        self.tensor = weakref.ref(tensor)
        self.grad: Tensor | None = None
        self.hooks: dict[int, Callable[[Tensor], Any]] = {}
        # register_post_accumulate_grad_hook: called with the tensor after .grad is set
        self.post_accumulate_hooks: dict[int, Callable[[Tensor], Any]] = {}
        self.is_leaf = is_leaf
        self.retains_grad = False
        # The rows `.grad` has gradients in, where it is an embedding's sparse=True
        # gradient: a list of (indices, padding_idx) (`note_sparse_rows`); None: dense.
        self.sparse_rows: list[Any] | None = None

    def __repr__(self) -> str:
        return f"<TensorMeta leaf={self.is_leaf} retains_grad={self.retains_grad}>"


class _Freed:
    """The ``ag`` of a node whose history a backward pass released (retain_graph=False)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "FREED"


FREED = _Freed()

# Nodes a backward ran through and kept (their rule saved nothing): a compiled step that
# returns one replays it as released (`lazytorch._compile.step`), which a second backward
# through the whole graph would find anyway at the first node that saved values.
kept: weakref.WeakSet[Node] = weakref.WeakSet()

# Interior (non-leaf) tensors with hooks or retain_grad(), by the node they had then.
_interior: weakref.WeakKeyDictionary[Node, TensorMeta] = weakref.WeakKeyDictionary()


def _alias(n: Node) -> Node:
    """A new node with n's value: shares the buffer when n is computed, else a no-op
    reshape (folded into index arithmetic by the scheduler)."""
    if n.buffer is not None:
        # a Python-number input (``full((), 0.5)``) stays one: its value is no array
        op = n.op if n.op is _SCALAR else _BUFFER
        a = Node(
            op,
            (),
            (),
            n.shape,
            n.dtype,
            n.device,
            hash((op, n.dtype, n.shape, n.device)),
            n.loc,
            # memory NumPy code or another process writes (runtime.host_views.external) is
            # copied: the alias (a detach, a saved value) keeps the value it had
            n.buffer if op is _SCALAR or not _is_external(n.buffer) else n.buffer.copy(),
        )
    else:
        a = make_node(_RESHAPE, (n,), (n.shape,), n.shape, n.dtype, n.device)
        a.loc = n.loc
    return a


def stop_gradient(n: Node) -> Node:
    """n's value without its gradient (what ``detach()`` records)."""
    if n.ag is None:
        return n
    a = _alias(n)
    a.ag = None
    return a


# torch's backward-node names of ops recorded as several primitives: a grad_fn is named
# after the node's primitive, and ``x.sum(1)`` ends in a reshape, ``x.std()`` in a sqrt.
# Such an op names its result here (`name_grad_fn`) and `GradFn.name` reads it first. Weak
# keys: the name lives as long as the node (realizing a node keeps the same object).
_grad_fn_names: weakref.WeakKeyDictionary[Node, str] = weakref.WeakKeyDictionary()


def name_grad_fn(out: Tensor, name: str, input: Tensor) -> Tensor:
    """Give `out`, which an op recorded from `input`, torch's grad_fn `name` (such as
    ``SumBackward1``); returns `out`. Nothing to name where it carries no gradient, or
    where the op handed `input`'s own node back (a reduction over no dims)."""
    n = out._node
    a = n.ag
    if (a is True or type(a) is tuple) and n is not input._node:
        _grad_fn_names[n] = name
    return out


def leaf_alias(n: Node, meta: TensorMeta) -> Node:
    """n's value as the gradient leaf of the tensor owning `meta`."""
    a = _alias(n)
    a.ag = meta
    return a


def history(n: Node) -> tuple[Any, tuple[Node, ...], tuple[Any, ...]] | None:
    """What backward differentiates at n: (op, inputs, attrs); None at a leaf."""
    a = n.ag
    if a is True:
        return n.op, n.inputs, n.attrs
    if type(a) is tuple:
        return a
    if a is FREED:
        raise RuntimeError(
            "Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed). Saved intermediate values of the "
            "graph are freed when you call .backward() or autograd.grad(). Specify "
            "retain_graph=True if you need to backward through the graph a second time or "
            "if you need to access saved tensors after calling backward."
            + (f" (the node was recorded at {_fmt(n.loc)})" if n.loc else "")
        )
    return None


def _fmt(loc: Any) -> str:
    return format_loc(loc)


def _add(a: Node, b: Node) -> Node:
    return make_node(PRIMITIVES["add"], (a, b), (), a.shape, a.dtype, a.device)


def run_backward(
    roots: Sequence[Node],
    root_grads: Sequence[Node],
    *,
    targets: Sequence[Node] | None = None,
    retain_graph: bool = False,
    create_graph: bool = False,
) -> dict[int, Node]:
    """Propagate `root_grads` from `roots` back through the gradient-carrying graph.

    With `targets` None, gradients reaching leaf tensors accumulate into their ``.grad``
    (``Tensor.backward``); otherwise the gradient of each target node is returned by node
    id and nothing accumulates (``autograd.grad``). Returns the target gradients.
    """
    if _compile_trace is not None:  # a lazytorch.compile trace cannot replay a backward
        _compile_trace.backward()

    rules.install()
    _pending_rows.clear()  # (notes of an autograd.grad pass, which accumulates nothing)
    first_id = metrics._node_id_now()
    global _current_task, _next_task
    outer, _current_task = _current_task, _next_task
    _next_task += 1
    try:
        out = _run_backward(roots, root_grads, targets, retain_graph, create_graph)
        for callback in list(task_end):
            callback(_current_task)
        return out
    finally:
        _current_task = outer
        _backward_ids.append((first_id, metrics._node_id_now()))
        del _backward_ids[:-256]


# The backward pass ("graph task") running now, -1 outside one; each pass gets a new id.
_current_task = -1
_next_task = 0
# Called with the task id at the end of each backward pass, after its tensor hooks ran
# (torch.autograd.graph.register_multi_grad_hook completes its "all" mode here).
task_end: list[Callable[[int], None]] = []


def current_graph_task_id() -> int:
    """The id of the backward pass running now (torch._C._current_graph_task_id), or -1."""
    return _current_task


# Node id ranges recorded by recent backward passes: which nodes of a program are backward
# (the schedule printout reports what backward keeps from forward).
_backward_ids: list[tuple[int, int]] = []


def is_backward_node(n: Node) -> bool:
    """Whether a recent backward pass recorded n."""
    return any(lo <= n.id < hi for lo, hi in _backward_ids)


def _by_id(n: Node) -> int:
    return n.id


def _run_backward(
    roots: Sequence[Node],
    root_grads: Sequence[Node],
    targets: Sequence[Node] | None,
    retain_graph: bool,
    create_graph: bool,
) -> dict[int, Node]:
    # 1. The gradient-carrying subgraph below the roots, with each node's history.
    hist: dict[int, tuple[Any, tuple[Node, ...], tuple[Any, ...]] | None] = {}
    nodes: list[Node] = []
    stack = [r for r in roots if r.ag is not None]
    while stack:
        n = stack.pop()
        k = id(n)
        if k in hist:
            continue
        a = n.ag  # (history(n), its two common cases inline: this loop visits every node)
        h = (n.op, n.inputs, n.attrs) if a is True else a if type(a) is tuple else history(n)
        hist[k] = h
        nodes.append(n)
        if h is not None:
            for i in h[1]:
                if i.ag is not None and id(i) not in hist:
                    stack.append(i)
    nodes.sort(key=_by_id)
    # 2. Which nodes lead to something that receives a gradient.
    target_ids = None if targets is None else {id(t) for t in targets}
    leads: dict[int, bool] = {}
    for n in nodes:
        k = id(n)
        h = hist[k]
        if target_ids is not None and k in target_ids:
            hit = True
        elif h is None:
            hit = target_ids is None and isinstance(n.ag, TensorMeta)
        else:
            hit = False
            for i in h[1]:
                if leads.get(id(i), False):
                    hit = True
                    break
        leads[k] = hit
    # 3. Newest first: pop each node's summed gradient and pass it on through its rule.
    grads: dict[int, Node] = {}
    for r, g in zip(roots, root_grads):
        if r.ag is not None:
            grads[id(r)] = _add(grads[id(r)], g) if id(r) in grads else g
    out: dict[int, Node] = {}
    ran: list[Node] = []  # the nodes whose rule ran: what this backward may release
    prev = grad_mode.enabled
    grad_mode.enabled = create_graph
    try:
        for n in reversed(nodes):
            g = grads.pop(id(n), None)
            if g is None or not leads[id(n)]:
                continue
            if _interior:
                m = _interior.get(n)
                if m is not None:
                    g = _run_hooks(m, g, retain=targets is None)
            h = hist[id(n)]
            if target_ids is not None and id(n) in target_ids:
                if h is None and isinstance(n.ag, TensorMeta) and n.ag.hooks:
                    # a leaf's own hooks run for autograd.grad and backward(inputs=) too
                    g = _run_hooks(n.ag, g, retain=False)
                out[id(n)] = g
            if h is None:
                if target_ids is None:
                    _accumulate(n.ag, g)
                continue
            op, inputs, attrs = h
            needs = tuple([i.ag is not None and leads.get(id(i), False) for i in inputs])
            if True not in needs:
                continue
            ran.append(n)
            rule = op.vjp
            if rule is None:
                raise RuntimeError(
                    f"{op.name} is not differentiable (recorded at {_fmt(n.loc)}); detach() "
                    "its input or compute it under lazytorch.no_grad()"
                )
            try:
                cts = rule.fn(g, n, inputs, attrs, needs)
            except (RuntimeError, TypeError, ValueError) as e:
                raise type(e)(f"{e} (backward of {op.name} recorded at {_fmt(n.loc)})") from e
            for i, c, need in zip(inputs, cts, needs):
                if not need or c is None:
                    continue
                if c.loc is None:
                    stamp(c, n.loc)  # backward nodes point at the forward line they undo
                k = id(i)
                grads[k] = _add(grads[k], c) if k in grads else c
    finally:
        grad_mode.enabled = prev
    if not retain_graph:
        # Like torch, only what ran is released: ``autograd.grad(loss, [a])`` for a non-leaf
        # `a` leaves the graph below `a` to a later backward (MAML's inner loop).
        for n in reversed(ran):  # oldest first: a node's inputs are decided before it
            h = hist[id(n)]
            if h is not None:
                op = h[0]
                if (
                    type(op) is Primitive
                    and op.vjp is not None
                    and not op.vjp.saves
                    and all(i.ag is None or type(i.ag) is TensorMeta or i in kept for i in h[1])
                ):
                    # Like torch, a node whose backward read no forward value (a cast, a
                    # view, an add) keeps its history where it stands on leaves (or on
                    # such nodes): a second backward through it is allowed (a PINN's input
                    # ``tensor(X, requires_grad=True).float()``, differentiated in every
                    # closure call of LBFGS). Above a freed node it is freed too: kept, its
                    # history would hold the graph below it — in lazytorch the old values
                    # of the parameters, not only torch's small graph nodes — for as long
                    # as the script holds the result (a list of losses).
                    kept.add(n)
                    continue
                if op is not n.op and n not in _grad_fn_names:
                    # an op recorded over another primitive (an autograd.Function): its
                    # grad_fn keeps the name the released history gave it
                    _grad_fn_names[n] = GradFn(n).name()
                n.ag = FREED
    return out


def _run_hooks(m: TensorMeta, g: Node, retain: bool) -> Node:

    for hook in list(m.hooks.values()):
        r = hook(wrap(g))
        if r is not None:
            g = r._node
    if m.retains_grad and retain and not m.is_leaf:
        m.grad = wrap(g) if m.grad is None else wrap(_add(m.grad._node, g))
    return g


def _accumulate(meta: Any, g: Node) -> None:
    if not isinstance(meta, TensorMeta):
        return
    if meta.hooks:
        g = _run_hooks(meta, g, retain=False)

    fresh = meta.grad is None
    if fresh:
        meta.grad = wrap(g)
    else:
        meta.grad = wrap(_add(meta.grad._node, g))
    if _pending_rows or meta.sparse_rows is not None:
        _merge_sparse_rows(meta, g, fresh)
    if meta.post_accumulate_hooks:
        _run_post_accumulate_hooks(meta)


# -- sparse gradients (embedding's sparse=True) ------------------------------------------------
# torch gives an embedding looked up with sparse=True a sparse COO gradient: the rows the
# lookup touched, nothing else. lazytorch's gradient stays dense (the same values), and the
# leaf's meta keeps which rows the sparse gradient would hold, for the optimizers whose
# update differs on rows that have no entry (SparseAdam): the lookup's backward notes its
# indices here while the pass runs, and accumulating into `.grad` takes them over.
_pending_rows: dict[int, list[Any]] = {}


def note_sparse_rows(t: Tensor, rows: Any) -> None:
    """Note, during a backward pass, that the gradient reaching leaf `t` is sparse in the
    rows `rows` (an ``(indices, padding_idx)`` pair: the lookup's indices, lazy, and the
    index torch leaves out of a sparse gradient, or None)."""
    _pending_rows.setdefault(id(meta_of(t, create=True)), []).append(rows)


def _merge_sparse_rows(meta: TensorMeta, g: Node, fresh: bool) -> None:
    """`meta.grad` just took this pass's gradient `g`: keep its rows as torch's sparse sum
    would (a dense part anywhere makes the sum dense: None)."""
    pending = _pending_rows.pop(id(meta), None)
    if pending is not None and not _sum_of_lookups(g, len(pending)):
        pending = None  # another use of the weight added a dense part (weight tying)
    if fresh:
        meta.sparse_rows = pending
    elif meta.sparse_rows is not None:
        meta.sparse_rows = None if pending is None else meta.sparse_rows + pending


def _sum_of_lookups(g: Node, lookups: int) -> bool:
    """Whether gradient `g` is the sum of exactly `lookups` row lookups' gradients (each a
    scatter-add into zeros: index_select's rule) and nothing else."""
    stack, found = [g], 0
    while stack:
        n = stack.pop()
        if n.op.name == "add":
            stack.extend(n.inputs)
        elif n.op.name == "scatter" and n.attrs[-1] == "add" and _zeros(n.inputs[0]):
            found += 1
        else:
            return False
    return found == lookups


def _zeros(n: Node) -> bool:
    while n.op.name == "expand":
        n = n.inputs[0]
    return n.op.name == "const" and n.attrs[0] == 0


def zeroed_sparse_rows(t: Tensor) -> None:
    """`t.grad` was zeroed in place (``zero_grad(set_to_none=False)``): as torch's sparse
    gradient after ``zero_()``, it holds no rows until the next backward adds some."""
    m = getattr(t, "_meta", None)
    if m is not None and m.sparse_rows is not None:
        m.sparse_rows = []


def sparse_grad_rows(t: Tensor) -> list[Any] | None:
    """The rows of `t.grad` as a sparse gradient holds them (`note_sparse_rows`), or None
    where `t.grad` is dense (or None)."""
    m = getattr(t, "_meta", None)
    return None if m is None or m.grad is None else m.sparse_rows


def _run_post_accumulate_hooks(meta: TensorMeta) -> None:
    """Call each ``register_post_accumulate_grad_hook`` hook with the leaf tensor, after its
    ``.grad`` holds this backward's gradient (the hook may step an optimizer on it: its
    ``materialize()`` computes that gradient now, in the middle of the backward pass; the
    rest of the backward graph keeps the values it recorded, as torch's saved tensors)."""
    t = meta.tensor()
    if t is None:
        return
    for hook in list(meta.post_accumulate_hooks.values()):
        r = hook(t)
        if r is None:
            continue
        if isinstance(r, Tensor):
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


def _ones_like(n: Node) -> Node:

    return expand_node(const_node(1, n.dtype, n.device), n.shape)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()

    return (x,) if isinstance(x, Tensor) else tuple(x)


def _check_outputs(outs: Sequence[Tensor]) -> None:
    for i, t in enumerate(outs):
        if t._node.ag is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def _root_grads(outputs: Sequence[Tensor], grad_outputs: Sequence[Any], op: str) -> list[Node]:

    if grad_outputs and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{op}: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    out = []
    for i, t in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs else None
        n = t._node
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            out.append(_ones_like(n))
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"{op}: gradient must be a Tensor or None, got {type(g).__name__}")
        if tuple(g.shape) != tuple(n.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                f"output[{i}] has a shape of {list(n.shape)}."
            )
        out.append(cast(g._node, n.dtype))
    return out


# Called with no arguments after each ``backward()`` has accumulated its gradients into the
# leaves' ``.grad`` (DistributedDataParallel averages them across ranks here, as torch's
# reducer does from its autograd hooks). A hook is a weak reference's callable or a function.
post_backward: list[Any] = []


def _run_post_backward() -> None:
    for hook in list(post_backward):
        fn = hook() if isinstance(hook, weakref.WeakMethod) else hook
        if fn is None:
            post_backward.remove(hook)
        else:
            fn()


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of `tensors` into the ``.grad`` of the leaves they use.

    Nothing is computed here: the gradients are recorded as lazy nodes and computed with
    the next materialization (an optimizer step, or reading ``.grad``).

    >>> import lazytorch
    >>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> w.grad
    tensor([2., 4.])
    """
    outs = _as_tuple(tensors)
    gos = _as_tuple(grad_tensors)
    _check_outputs(outs)
    roots = [t._node for t in outs]
    gs = _root_grads(outs, gos, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    targets = None
    if inputs is not None:
        ins = _as_tuple(inputs)
        if not ins:
            raise RuntimeError("backward: inputs= must not be empty")
        res = run_backward(
            roots,
            gs,
            targets=[t._node for t in ins],
            retain_graph=retain_graph,
            create_graph=create_graph,
        )
        for t in ins:
            g = res.get(id(t._node))
            if g is not None:
                _accumulate_into(t, g)
    else:
        run_backward(
            roots, gs, targets=targets, retain_graph=retain_graph, create_graph=create_graph
        )
    if post_backward:
        _run_post_backward()


def _accumulate_into(t: Tensor, g: Node) -> None:
    m = meta_of(t, create=True)

    fresh = m.grad is None
    m.grad = wrap(g) if fresh else wrap(_add(m.grad._node, g))
    if _pending_rows or m.sparse_rows is not None:
        _merge_sparse_rows(m, g, fresh)
    if m.post_accumulate_hooks and is_grad_leaf(t):
        _run_post_accumulate_hooks(m)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated).

    With ``create_graph=True`` the gradients themselves carry gradient, for higher
    derivatives. ``only_inputs`` is deprecated and ignored, as in torch (``False`` warns);
    ``is_grads_batched=True`` is not supported.

    >>> import lazytorch
    >>> x = lazytorch.tensor(3.0, requires_grad=True)
    >>> (g,) = lazytorch.autograd.grad(x ** 3, x, create_graph=True)
    >>> (g2,) = lazytorch.autograd.grad(g, x)
    >>> g.item(), g2.item()
    (27.0, 18.0)
    """

    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now "
            "(defaults to True). To accumulate gradient for other "
            "parts of the graph, please use torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    if is_grads_batched:
        raise NotImplementedError(
            "torch.autograd.grad(is_grads_batched=True) is not supported by lazytorch: "
            "call grad once per row of grad_outputs (retain_graph=True) and stack the results"
        )
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    _check_outputs(outs)
    for t in ins:
        if t._node.ag is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    gs = _root_grads(outs, _as_tuple(grad_outputs), "grad")
    res = run_backward(
        [t._node for t in outs],
        gs,
        targets=[t._node for t in ins],
        retain_graph=retain_graph,
        create_graph=create_graph,
    )
    result: list[Tensor | None] = []
    for t in ins:
        g = res.get(id(t._node))
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                n = t._node
                result.append(wrap(expand_node(const_node(0, n.dtype, n.device), n.shape)))
            else:
                result.append(None)
        else:
            result.append(wrap(g))
    return tuple(result)


# -- the Tensor side --------------------------------------------------------------------------


def meta_of(t: Tensor, create: bool = False) -> TensorMeta:
    m = getattr(t, "_meta", None)
    if m is None and create:
        m = t._meta = TensorMeta(
            t, is_leaf=t._node.ag is None or isinstance(t._node.ag, TensorMeta)
        )
    return m  # type: ignore[return-value]


def is_grad_leaf(t: Tensor) -> bool:
    """Whether t is a leaf that requires grad (its node carries its meta)."""
    m = getattr(t, "_meta", None)
    return m is not None and t._node.ag is m


def set_requires_grad(t: Tensor, flag: bool) -> None:
    n = t._node
    a = n.ag
    if a is not None and not isinstance(a, TensorMeta):
        if flag:
            return  # a non-leaf already requires grad
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use "
            "var_no_grad = var.detach()."
        )
    if flag:
        if is_grad_leaf(t):
            return
        if not n.dtype.is_floating_point:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        m = getattr(t, "_meta", None)
        if m is None:
            m = t._meta = TensorMeta(t, is_leaf=True)
        m.is_leaf = True
        _unlink_view(t)
        t._node = leaf_alias(n, m)
        _track(t)
    elif a is not None:
        _unlink_view(t)
        t._node = stop_gradient(n)


def _unlink_view(t: Tensor) -> None:
    # A leaf's value is its own from now on: writes to its old base no longer reach it.
    if t._view is not None:
        root = t._view[0]
        if root._views is not None:
            root._views[:] = [r for r in root._views if r() is not t]
        t._view = None


def keep_leaf(t: Tensor, value: Node, detached: bool = False, through_view: bool = False) -> Node:
    """The node an in-place write to `t` rebinds it to, keeping a grad leaf a leaf.

    torch refuses in-place writes to a leaf that requires grad while grad mode is on; under
    ``no_grad`` (an optimizer step) the tensor stays the same leaf with a new value. A write
    through a detached alias (``p.data.add_(...)``, ``p.detach().mul_(...)``) is allowed in
    either mode, as in torch: autograd does not see it. `through_view`: the write reaches
    `t` through a view of it (torch's message then says so).
    """
    m = getattr(t, "_meta", None)
    if m is None or t._node.ag is not m:
        return value
    if grad_mode.enabled and not detached:
        raise RuntimeError(
            f"a {'view of a ' if through_view else ''}leaf Variable that requires grad is "
            "being used in an in-place operation."
        )
    return leaf_alias(value, m)


def _track(t: Tensor) -> None:
    # A parameter's new value is pending: materialize() with no arguments (an optimizer
    # step) must compute it. Tensors built outside the ops (nn.Parameter) are not tracked
    # yet, and a tracked tensor leaves the registry once its value is computed.
    register(t)


def register_interior(t: Tensor) -> TensorMeta:
    m = meta_of(t, create=True)
    m.is_leaf = False
    _interior[t._node] = m
    return m


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` unregisters the hook."""

    _next = 0

    def __init__(self, hooks: dict[int, Any], hook: Any) -> None:
        RemovableHandle._next += 1
        self.id = RemovableHandle._next
        self._hooks = hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _node_hook_refused(self: Any, fn: Any) -> Any:
    raise NotImplementedError(
        "lazytorch: hooks on grad_fn nodes (Node.register_hook/register_prehook) are not "
        "supported: a backward op is a lazy IR node, not a callable torch-style Node; use "
        "Tensor.register_hook on the tensor instead"
    )


class GradFn:
    """A read-only view of the op that gradient flows back through (torch's ``grad_fn``)."""

    __slots__ = ("_node",)

    def __init__(self, node: Node) -> None:
        self._node = node

    @staticmethod
    def of(n: Node) -> GradFn | None:
        a = n.ag
        if a is None or isinstance(a, TensorMeta):
            return None
        return GradFn(n)

    def name(self) -> str:
        a = self._node.ag
        # (a history a backward released keeps its name, as torch's nodes do: the node's
        # own primitive, or the name its op gave it)
        op = a[0] if type(a) is tuple else self._node.op
        named = _grad_fn_names.get(self._node)
        if named is not None:
            return named
        fn_class = getattr(op, "function_class", None)
        if fn_class is not None:  # an autograd.Function: torch names it after the class
            return fn_class.__name__ + "Backward"
        return "".join(w.capitalize() for w in op.name.split("_")) + "Backward0"

    @property
    def next_functions(self) -> tuple[tuple[GradFn | AccumulateGrad | None, int], ...]:
        """One ``(node, 0)`` pair per input of the op, as torch gives: the input's
        `GradFn` when it has a history, `AccumulateGrad` at a leaf that requires grad, None
        where no gradient flows. lazytorch records primitives, so the graph walked this way
        can be finer than torch's (one torch op may be several nodes here)."""
        a = self._node.ag
        if a is FREED:  # its inputs were released with the history
            return ()
        h = history(self._node)
        if h is None:
            return ()
        out: list[tuple[GradFn | AccumulateGrad | None, int]] = []
        for i in h[1]:
            ia = i.ag
            if ia is None:
                out.append((None, 0))
            elif isinstance(ia, TensorMeta):
                out.append((AccumulateGrad(ia), 0))
            else:
                out.append((GradFn(i), 0))
        return tuple(out)

    register_hook = register_prehook = _node_hook_refused

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("_saved_", "_raw_saved_")):
            raise NotImplementedError(
                f"grad_fn.{name}: lazytorch's backward ops keep no torch-style saved tensors "
                "(a backward reads the forward's lazy values directly), so there is none to "
                "return; keep a reference to the tensor you want to inspect instead"
            )
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradFn) and other._node is self._node

    def __hash__(self) -> int:
        return id(self._node)

    def __repr__(self) -> str:
        return f"<{self.name()} recorded at {_fmt(self._node.loc)}>"


class AccumulateGrad:
    """The node torch's ``next_functions`` gives for a leaf that requires grad: its
    ``variable`` is the leaf tensor."""

    __slots__ = ("_meta",)

    def __init__(self, meta: TensorMeta) -> None:
        self._meta = meta

    @property
    def variable(self) -> Tensor | None:
        return self._meta.tensor()

    next_functions: tuple[()] = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    register_hook = register_prehook = _node_hook_refused

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccumulateGrad) and other._meta is self._meta

    def __hash__(self) -> int:
        return id(self._meta)

    def __repr__(self) -> str:
        return "<AccumulateGrad>"
