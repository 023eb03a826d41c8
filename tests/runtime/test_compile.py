"""lazytorch.compile: the API surface, trace replay (values against torch, laziness,
autograd), and every case that must fall back to running the function."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch._compile import CompiledFunction, CompileOptions, TracedGraph


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def pair(*shapes, seed=0, requires_grad=False):
    """The same random arrays as lazytorch and torch tensors."""
    arrs = arrays(*shapes, seed=seed)
    ours = [lt.tensor(a, requires_grad=requires_grad) for a in arrs]
    theirs = [torch.tensor(a, requires_grad=requires_grad) for a in arrs]
    return ours, theirs


def close(a, b, tol=1e-5):
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    np.testing.assert_allclose(a.detach().numpy(), b, rtol=tol, atol=tol)


# -- the API ------------------------------------------------------------------------------------
def test_import_does_not_load_compile_and_names_resolve():
    code = (
        "import sys, lazytorch as lt\n"
        "assert 'lazytorch._compile' not in sys.modules\n"
        "assert callable(lt.compile) and lt.CompileMode.DEFAULT == 'default'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert "compile" in lt.__all__ and "CompileMode" in lt.__all__


def test_decorator_forms_and_direct_call():
    @lt.compile
    def f(x):
        return x + 1

    @lt.compile(mode="max-autotune", fullgraph=True)
    def g(x):
        return x * 2

    h = lt.compile(lambda x: x - 1)
    x = lt.ones(3)
    for fn, want in ((f, 2.0), (g, 2.0), (h, 0.0)):
        assert isinstance(fn, CompiledFunction)
        assert fn(x).tolist() == [want] * 3
        assert fn(x).tolist() == [want] * 3
        assert fn.stats["traces"] == 1 and fn.stats["hits"] == 1
    assert f.__name__ == "f" and f.__wrapped__ is not None
    assert g.mode is lt.CompileMode.MAX_AUTOTUNE


def test_compiles_a_module_and_a_decorated_method():
    net = lt.nn.Sequential(lt.nn.Linear(4, 3), lt.nn.Tanh(), lt.nn.Linear(3, 2))
    c = lt.compile(net)
    x = lt.randn(5, 4)
    close(c(x), net(x).detach().numpy())
    close(c(x), net(x).detach().numpy())
    assert c.stats["hits"] == 1 and c.module is net
    assert list(c.parameters()) == list(net.parameters())  # attributes reach the module
    step = lt.compile(lambda x: c(x) * 2)  # a compiled module inside: its parameters are inputs
    step(x)
    close(step(x), net(x).detach().numpy() * 2)
    assert step.stats["hits"] == 1

    class Scale:
        def __init__(self, k):
            self.k = k

        @lt.compile
        def apply(self, x):
            return x * self.k

    a, b = Scale(2.0), Scale(3.0)
    assert a.apply(lt.ones(2)).tolist() == [2.0, 2.0]
    assert b.apply(lt.ones(2)).tolist() == [3.0, 3.0]  # another instance: another signature
    assert a.apply(lt.ones(2)).tolist() == [2.0, 2.0]
    assert Scale.apply.stats["traces"] == 2 and Scale.apply.stats["hits"] == 1


def test_mode_enum_strings_and_typo():
    assert lt.CompileMode("default") is lt.CompileMode.DEFAULT
    assert lt.CompileMode("REDUCE_OVERHEAD") is lt.CompileMode.REDUCE_OVERHEAD
    assert lt.compile(lambda x: x, mode=lt.CompileMode.MAX_AUTOTUNE).mode.value == "max-autotune"
    assert lt.compile(lambda x: x, mode=None).mode is lt.CompileMode.DEFAULT
    with pytest.raises(ValueError) as e:
        lt.compile(lambda x: x, mode="reduce-overhed")
    msg = str(e.value)
    assert "did you mean 'reduce-overhead'" in msg
    assert "default, reduce-overhead, max-autotune" in msg


def test_options_are_validated():
    with pytest.raises(
        ValueError, match=r"'cache_size_limt' \(did you mean 'cache_size_limit'\?\)"
    ):
        lt.compile(lambda x: x, options={"cache_size_limt": 3})
    with pytest.raises(ValueError, match="valid options: cache_size_limit, deterministic"):
        lt.compile(lambda x: x, options={"zzz": 1})
    with pytest.raises(ValueError, match=r"pass it as compile\(\.\.\., backend=\.\.\.\)"):
        lt.compile(lambda x: x, options={"backend": "cpp"})
    with pytest.raises(TypeError, match="'cache_size_limit' expects int, got str"):
        lt.compile(lambda x: x, options={"cache_size_limit": "8"})
    with pytest.raises(TypeError, match="'cache_size_limit' expects int, got bool"):
        lt.compile(lambda x: x, options={"cache_size_limit": True})
    with pytest.raises(TypeError, match="'trace_cache' expects bool, got int"):
        lt.compile(lambda x: x, options={"trace_cache": 1})
    with pytest.raises(TypeError, match="'deterministic' expects bool or None, got str"):
        lt.compile(lambda x: x, options={"deterministic": "yes"})
    with pytest.raises(ValueError, match="at least 1"):
        lt.compile(lambda x: x, options={"cache_size_limit": 0})
    with pytest.raises(TypeError, match="options must be a dict"):
        lt.compile(lambda x: x, options=[("trace_cache", False)])
    c = lt.compile(lambda x: x, options=CompileOptions(trace_cache=False))
    c(lt.ones(1))
    c(lt.ones(1))
    assert c.stats["traces"] == 0 and c.stats["reasons"] == {"trace_cache=False": 2}
    with pytest.raises(TypeError, match="fullgraph must be a bool"):
        lt.compile(lambda x: x, fullgraph="yes")


def test_backend_strings():
    with pytest.raises(
        NotImplementedError,
        match=r"not a compile strategy: programs on a cuda device already run as Triton",
    ):
        lt.compile(lambda x: x, backend="triton")
    with pytest.raises(ValueError, match=r"did you mean 'interpreter'\?"):
        lt.compile(lambda x: x, backend="interpeter")
    seen = []

    def f(x):
        seen.append(lt.get_backend())
        return (x * 3).sum()

    c = lt.compile(f, backend="interpreter", options={"materialize_outputs": True})
    y = c(lt.ones(4))
    assert seen == ["interpreter"] and y.is_materialized and y.item() == 12.0
    y = c(lt.ones(4))  # replayed, materialized by the interpreter before returning
    assert y.is_materialized and y.item() == 12.0 and c.stats["hits"] == 1
    assert lt.compile(f, backend="cpp").backend.name == "cpp"


def test_callable_backend_gets_the_traced_graph_once_per_signature():
    graphs = []

    def backend(graph):
        assert isinstance(graph, TracedGraph)
        graphs.append(graph)

        def run(*tensors):
            run.calls += 1
            return graph.replay(*tensors)

        run.calls = 0
        backend.run = run
        return run

    c = lt.compile(lambda x, y: (x @ y).relu(), backend=backend)
    (x, y), (tx, ty) = pair((3, 4), (4, 2))
    close(c(x, y), (tx @ ty).relu())
    assert backend.run.calls == 0  # the first call is the trace
    close(c(x, y), (tx @ ty).relu())
    assert len(graphs) == 1 and backend.run.calls == 1
    g = graphs[0]
    assert g.num_outputs == 1 and len(g) == 2 and [i[0] for i in g.inputs] == ["arg 0", "arg 1"]
    assert "matmul %0, %1" in str(g) and "make_node" in g.code
    with pytest.raises(TypeError, match="must return a callable"):
        lt.compile(lambda x: x + 1, backend=lambda g: None)(lt.ones(1))


def test_disable_returns_the_function_itself():
    def f(x):
        return x

    assert lt.compile(f, disable=True) is f
    assert lt.compile(disable=True)(f) is f
    net = lt.nn.Linear(2, 2)
    assert lt.compile(net, disable=True) is net


def test_fullgraph_implicit_materialization_names_the_line():
    def f(x):
        s = x.sum().item()  # the offending line
        return x * s

    line = f.__code__.co_firstlineno + 1
    c = lt.compile(f, fullgraph=True)
    with pytest.raises(lt.ImplicitMaterializationError, match=rf"test_compile.py:{line}"):
        c(lt.ones(2) + 1)
    # Reading an already computed input is refused too (its value would be baked in).
    x = lt.ones(2)
    lt.materialize(x)

    def g(x):
        return x * sum(x.tolist())  # reads a computed value

    line = g.__code__.co_firstlineno + 1
    with pytest.raises(
        lt.ImplicitMaterializationError, match=rf"tolist\(\) at .*:{line} .*fullgraph"
    ):
        lt.compile(g, fullgraph=True)(x)
    # Without fullgraph the same function runs, uncompiled.
    c = lt.compile(f)
    assert c(lt.ones(2)).tolist() == [2.0, 2.0]
    assert "reads a tensor's value: item()" in c.explain()


# -- replay -------------------------------------------------------------------------------------
CASES = {
    "mlp": (
        lambda m, x, w1, b1, w2: m.relu(x @ w1 + b1) @ w2,
        [(8, 16), (16, 32), (32,), (32, 4)],
    ),
    "softmax_layernorm": (
        lambda m, x, w: m.nn.functional.layer_norm(
            m.softmax(x * 2, dim=-1) + w, (6,), weight=w, bias=None
        ),
        [(4, 6), (6,)],
    ),
    "reductions_views": (
        lambda m, x, y: (x.transpose(0, 1)[1:, :] * y.unsqueeze(1)).sum(0) - x.mean(),
        [(3, 5), (4,)],
    ),
    "attention": (
        lambda m, q, k: (
            m.softmax(
                (q @ k.transpose(-2, -1)).masked_fill(
                    m.tril(m.ones(5, 5, dtype=m.bool)).logical_not(), float("-inf")
                ),
                dim=-1,
            )
            @ k
        ),
        [(2, 5, 4), (2, 5, 4)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_matches_torch_on_new_inputs(name):
    fn, shapes = CASES[name]
    c = lt.compile(lambda *a: fn(lt, *a))
    for seed in range(3):
        ours, theirs = pair(*shapes, seed=seed)
        close(c(*ours), fn(torch, *theirs), tol=1e-4)
    assert c.stats == {
        "calls": 3,
        "traces": 1,
        "hits": 2,
        "fallbacks": 0,
        "cache_entries": 1,
        "reasons": {},
    }


def test_pytrees_kwargs_and_constant_outputs():
    Pair = namedtuple("Pair", "a b")

    @lt.compile
    def f(xs, d, *, scale, tag="t"):
        s = xs[0] + xs[1]
        return {"sum": s * scale, "parts": Pair(d["p"] - 1, (s, tag)), "n": xs[0].shape[0]}

    for seed in range(2):
        (a, b, p), (ta, tb, tp) = pair((3,), (3,), (2,), seed=seed)
        out = f([a, b], {"p": p}, scale=2.0)
        close(out["sum"], (ta + tb) * 2)
        assert isinstance(out["parts"], Pair) and out["parts"].b[1] == "t" and out["n"] == 3
        close(out["parts"].a, tp - 1)
        close(out["parts"].b[0], ta + tb)
    assert f.stats["hits"] == 1
    f([a, b], {"p": p}, scale=3.0)  # another value of a non-tensor argument: a new trace
    f([a, b], {"p": p}, scale=2.0, tag="u")
    f((a, b), {"p": p}, scale=2.0)  # a tuple, not a list
    assert f.stats["traces"] == 4


def test_outputs_stay_lazy_and_fuse_with_the_caller():
    c = lt.compile(lambda x, w: (x @ w).relu())
    (x, w), (tx, tw) = pair((4, 3), (3, 3))
    c(x, w)
    lt.materialize(x, w)
    y = c(x, w)  # replayed
    assert not y.is_materialized
    lt.metrics.reset()
    z = (y * 2 + 1).sum(dim=1)
    close(z, ((tx @ tw).relu() * 2 + 1).sum(dim=1))
    assert lt.metrics.counters()["materializations"] == 1  # one program: replay + caller's ops


def test_second_call_does_not_run_the_python():
    calls = []

    @lt.compile
    def f(x):
        calls.append(1)  # a Python side effect: runs only when tracing (as in torch.compile)
        return x.exp()

    for _ in range(5):
        f(lt.ones(2))
    assert len(calls) == 1
    f(lt.ones(3))  # a new shape: traced again
    f(lt.ones(3, dtype=lt.float64))  # a new dtype
    f(lt.ones(3, requires_grad=True))  # requires_grad is part of the signature
    with lt.no_grad():
        f(lt.ones(3))  # so is grad mode
    assert len(calls) == 5 and f.stats["traces"] == 5


def test_aliased_arguments_are_part_of_the_signature():
    c = lt.compile(lambda a, b: a * 10 + b)
    x, y = lt.tensor([1.0]), lt.tensor([2.0])
    assert c(x, x).tolist() == [11.0]
    assert c(x, y).tolist() == [12.0]  # not the (x, x) graph replayed
    assert c(y, x).tolist() == [21.0]
    assert c.stats["traces"] == 2


def test_returned_input_is_the_same_object():
    c = lt.compile(lambda x, y: (x, x + y))
    x, y = lt.ones(2), lt.ones(2)
    c(x, y)
    a, b = c(x, y)
    assert a is x and b.tolist() == [2.0, 2.0] and c.stats["hits"] == 1


class DuckModule:
    """Module-like without lazytorch.nn: parameters(), buffers(), __call__."""

    def __init__(self):
        self.w = lt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        self.shift = lt.tensor([0.5, -0.5])
        self.traces = 0

    def parameters(self):
        return iter([self.w])

    def buffers(self):
        return iter([self.shift])

    def __call__(self, x):
        self.traces += 1
        return x @ self.w + self.shift


def test_parameter_updates_between_calls_are_seen():
    m = DuckModule()
    c = lt.compile(m)
    x = lt.tensor([[1.0, 1.0]])
    assert c(x).tolist() == [[4.5, 5.5]]
    with lt.no_grad():
        m.w.sub_(lt.ones(2, 2))
    m.shift = lt.tensor([0.0, 0.0])  # rebinding a buffer: read afresh too
    assert c(x).tolist() == [[2.0, 4.0]]
    assert m.traces == 1 and c.stats["hits"] == 1


W = lt.tensor([2.0, 3.0])


def test_closure_and_global_tensors_are_inputs():
    global W
    bias = lt.tensor([1.0, 1.0])

    @lt.compile
    def f(x):
        return x * W + bias

    assert f(lt.ones(2)).tolist() == [3.0, 4.0]
    W = lt.tensor([5.0, 6.0])
    bias = lt.tensor([0.0, 0.0])  # read by f through its closure
    assert f(lt.ones(2)).tolist() == [5.0, 6.0]
    assert f.stats["hits"] == 1


def test_gradients_through_the_compiled_function():
    net = lt.nn.Sequential(lt.nn.Linear(3, 4), lt.nn.GELU(), lt.nn.Linear(4, 1))
    c = lt.compile(net)
    (x,), (tx,) = pair((5, 3), requires_grad=True)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.Linear(4, 1))
    with torch.no_grad():
        for p, tp in zip(net.parameters(), tnet.parameters()):
            tp.copy_(torch.from_numpy(p.detach().numpy().copy()))
    c(x)  # trace
    (c(x) ** 2).sum().backward()  # replay, then backward through it
    (tnet(tx) ** 2).sum().backward()
    assert c.stats["hits"] == 1
    close(x.grad, tx.grad, tol=1e-4)
    for p, tp in zip(net.parameters(), tnet.parameters()):
        close(p.grad, tp.grad, tol=1e-4)


def test_no_grad_and_detach_inside_are_replayed():
    @lt.compile
    def f(x, w):
        with lt.no_grad():
            scale = w.sum()  # no gradient through this
        return (x * w).sum() * scale + (w.detach() * x).sum()

    (x, w), (tx, tw) = pair((3,), (3,), requires_grad=True)
    lt.materialize(w)
    f(x, w)
    f(x, w).backward()
    with torch.no_grad():
        tscale = tw.sum()
    ((tx * tw).sum() * tscale + (tw.detach() * tx).sum()).backward()
    assert f.stats["hits"] == 1
    close(x.grad, tx.grad)
    close(w.grad, tw.grad)


def test_nested_compiled_functions():
    inner = lt.compile(lambda x: x * 2)
    outer = lt.compile(lambda x: inner(x) + 1)
    for _ in range(3):
        assert outer(lt.ones(2)).tolist() == [3.0, 3.0]
    assert outer.stats["hits"] == 2 and inner.stats["traces"] == 1


# -- what falls back ----------------------------------------------------------------------------
def _runs_every_time(fn, make_args, reason, compare=True):
    """fn compiled runs its Python on every call, for `reason`, with fn's results."""
    calls = []

    def counted(*a):
        calls.append(1)
        return fn(*a)

    c = lt.compile(counted)
    outs = [c(*make_args()) for _ in range(3)]
    want = [fn(*make_args()) for _ in range(3)]
    assert len(calls) == 3, c.explain()
    assert c.stats["traces"] == 1 and c.stats["fallbacks"] == 3 and c.stats["hits"] == 0
    (got_reason,) = c.stats["reasons"]
    assert reason in got_reason, got_reason
    assert reason in c.explain()
    if compare:
        for a, b in zip(outs, want):
            np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()))
    return outs


def _captured_as_step(fn, make_args, calls_made=4):
    """fn compiled is captured as a whole step (lazytorch._compile.step): its Python runs on
    the first two calls (trace, then the confirming second recording) and is replayed after;
    the outputs equal fn's own on the same arguments."""
    calls = []

    def counted(*a):
        calls.append(1)
        return fn(*a)

    c = lt.compile(counted)
    outs = [c(*make_args()) for _ in range(calls_made)]
    assert len(calls) == 2, c.explain()
    assert c.stats["hits"] == calls_made - 2 and c.stats["fallbacks"] == 0, c.explain()
    assert "as a whole step" in c.explain()
    return c, outs


def test_materializing_inside_falls_back():
    _runs_every_time(
        lambda x: x * (x.sum().item() > 0), lambda: (lt.tensor([1.0, -3.0]),), "item()"
    )


def test_materializing_inside_is_captured_as_a_step():
    # A cut inside cannot be a node template; the programs it runs can be replayed.
    _, outs = _captured_as_step(lambda x: lt.materialize(x + 1) or x, lambda: (lt.ones(2) * 2,))
    assert [o.tolist() for o in outs] == [[2.0, 2.0]] * 4


def test_value_dependent_results_stay_correct():
    c = lt.compile(lambda x: x * 2 if x.sum().item() > 0 else x * -1)
    assert c(lt.tensor([1.0])).tolist() == [2.0]
    assert c(lt.tensor([-1.0])).tolist() == [1.0]  # not the first trace replayed


def test_in_place_writes_to_outside_tensors_are_captured_as_a_step():
    def f(x, buf):
        buf.add_(1)  # a side effect on an argument
        return x + buf

    buf = lt.zeros(2)
    _, outs = _captured_as_step(f, lambda: (lt.ones(2), buf))
    # Each replay read buf's value then and wrote the new one: 1, 2, 3, 4.
    assert [o.tolist() for o in outs] == [[k + 1.0, k + 1.0] for k in (1, 2, 3, 4)]
    assert buf.tolist() == [4.0, 4.0]
    # A view of an argument written in place: the argument holds the write afterwards.
    args = []

    def fresh():
        args.append(lt.ones(2))
        return (args[-1],)

    _, outs = _captured_as_step(lambda x: x[0].fill_(0) + 1, fresh)
    assert [o.tolist() for o in outs] == [1.0] * 4
    assert [a.tolist() for a in args] == [[0.0, 1.0]] * 4
    # Without step capture they run the function every time.
    c = lt.compile(f, options={"step_capture": False})
    for _ in range(3):
        c(lt.ones(2), buf)
    assert c.stats["hits"] == 0 and buf.tolist() == [7.0, 7.0]
    assert "writes in place" in c.explain()

    # In-place on a tensor created inside is fine.
    c = lt.compile(lambda x: x.clone().mul_(2).add_(1))
    c(lt.ones(2))
    assert c(lt.ones(2)).tolist() == [3.0, 3.0] and c.stats["hits"] == 1


def test_module_buffer_update_falls_back():
    class Counter(DuckModule):
        def __call__(self, x):
            self.shift.add_(1)
            return x @ self.w + self.shift

    m = Counter()
    c = lt.compile(m)
    c(lt.ones(1, 2))
    out = c(lt.ones(1, 2))
    assert out.tolist() == [[6.5, 7.5]] and c.stats["hits"] == 0  # shift went up twice
    assert "writes in place" in c.explain()


def test_random_views_and_objects_fall_back():
    def bw(x):
        (x * x).sum().backward()
        return x.grad * 1

    xs = []

    def leaf():
        xs.append(lt.tensor([1.0, 2.0], requires_grad=True))
        return (xs[-1],)

    _, outs = _captured_as_step(bw, leaf)  # a whole step: gradients are program outputs
    assert [o.tolist() for o in outs] == [[2.0, 4.0]] * 4
    assert [x.grad.tolist() for x in xs] == [[2.0, 4.0]] * 4
    outs = _runs_every_time(
        lambda x: x + lt.rand(2), lambda: (lt.zeros(2),), "draws random numbers", compare=False
    )
    assert outs[0].tolist() != outs[1].tolist()  # fresh numbers on each call
    _runs_every_time(lambda x: x.T, lambda: (lt.ones(2, 3),), "view of a tensor")
    _runs_every_time(lambda x: {x}, lambda: (lt.ones(2),), "returns a set", compare=False)

    class Holder:
        t = lt.ones(2)

    holder = Holder()
    _runs_every_time(lambda x: x + holder.t, lambda: (lt.ones(2),), "not an argument")


def test_unhashable_arguments_call_through():
    c = lt.compile(lambda x, arr: x + float(arr.sum()))
    arr = np.ones(3)
    assert c(lt.zeros(1), arr).tolist() == [3.0]
    assert c.stats["reasons"] == {"an argument of unhashable type ndarray": 1}


def test_cache_size_limit_warns_once_then_calls_through():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    c = lt.compile(f, options={"cache_size_limit": 2})
    c(lt.ones(1))
    c(lt.ones(2))
    with pytest.warns(RuntimeWarning, match=r"cache_size_limit.*f32\[2\] -> f32\[3\]"):
        c(lt.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c(lt.ones(4)).tolist() == [2.0] * 4  # no second warning
        c(lt.ones(1))  # a cached signature still replays
    assert c.stats["hits"] == 1 and len(calls) == 4
    assert c.stats["reasons"] == {"cache_size_limit (2) reached": 2}
    c.reset()
    assert c.stats["cache_entries"] == 0


def test_hooks_are_off_outside_traces():
    from lazytorch import runtime
    from lazytorch.autograd import engine
    from lazytorch.ops import views

    c = lt.compile(lambda x: x + 1)
    c(lt.ones(1))
    with pytest.raises(ZeroDivisionError):
        lt.compile(lambda x: 1 / 0)(lt.ones(1))
    assert runtime._compile_trace is None and views._compile_trace is None
    assert engine._compile_trace is None


def test_train_and_eval_are_separate_signatures():
    net = lt.nn.Sequential(lt.nn.Linear(3, 3), lt.nn.Dropout(0.5))
    c = lt.compile(net, dynamic=True)
    assert c.dynamic is True  # stored; behaves like None for now
    x = lt.ones(2, 3)
    c(x)
    c(x)
    assert c.stats["hits"] == 0 and "draws random numbers" in c.explain()  # dropout, training
    net.eval()
    close(c(x), net(x).detach().numpy())
    close(c(x), net(x).detach().numpy())
    assert c.stats["traces"] == 2 and c.stats["hits"] == 1
