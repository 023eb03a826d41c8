"""Whole-step capture: `lazytorch.compile` of a training step replays its programs.

Every test compares the compiled step with the same function run uncompiled (same seed,
same data), bit for bit: a replay runs the very programs the uncompiled step runs, on the
same values, so any difference is a wrong binding, a stale constant or an alias.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
import lazytorch.nn as nn


def _mlp(seed=0, opt="adamw", **kw):
    lt.manual_seed(seed)
    m = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 3))
    if opt == "adamw":
        o = lt.optim.AdamW(m.parameters(), lr=kw.pop("lr", 1e-2), weight_decay=0.1, **kw)
    else:
        o = lt.optim.SGD(m.parameters(), lr=kw.pop("lr", 0.05), momentum=0.9, **kw)
    return m, o


def _data(n=4, seed=1):
    rng = np.random.default_rng(seed)
    return [
        (
            lt.tensor(rng.normal(size=(8, 6)).astype(np.float32)),
            lt.tensor(rng.normal(size=(8, 3)).astype(np.float32)),
        )
        for _ in range(n)
    ]


def _snapshot(m, o):
    params = [p.detach().numpy().copy() for p in m.parameters()]
    state = []
    for st in o.state.values():
        for k, v in sorted(st.items()):
            state.append((k, v.numpy().copy() if isinstance(v, lt.Tensor) else v))
    return params, state


def _same(a, b):
    (pa, sa), (pb, sb) = a, b
    assert len(pa) == len(pb) and len(sa) == len(sb)
    for x, y in zip(pa, pb):
        np.testing.assert_array_equal(x, y)
    for (ka, x), (kb, y) in zip(sa, sb):
        assert ka == kb
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _train(m, o, step, data, steps):
    losses = []
    for i in range(steps):
        x, y = data[i % len(data)]
        losses.append(step(x, y).item())
    return losses


def _training(compiled, opt="adamw"):
    """(model, optimizer, step): the step compiled or not."""
    m, o = _mlp(opt=opt)
    step = _make_step(m, o)
    return m, o, (lt.compile(step) if compiled else step)


def _make_step(m, o):
    def train_step(x, y):
        o.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        o.step()
        return loss

    return train_step


@pytest.mark.parametrize("opt", ["adamw", "sgd"])
def test_a_training_step_replays_and_matches_the_uncompiled_step(opt):
    data = _data()
    m1, o1 = _mlp(opt=opt)
    compiled = lt.compile(_make_step(m1, o1))
    got = _train(m1, o1, compiled, data, 9)
    m2, o2 = _mlp(opt=opt)
    want = _train(m2, o2, _make_step(m2, o2), data, 9)
    assert got == want
    _same(_snapshot(m1, o1), _snapshot(m2, o2))
    s = compiled.stats
    # The optimizer's first step (state created) and the steady step are two signatures;
    # the steady one is recorded twice (trace, confirmation), then replayed. SGD's second
    # step is a third: its momentum buffers still share their values with the gradients
    # (clone() of the first step), so the tensors alias differently.
    extra = opt == "sgd"
    assert s["traces"] == 2 + extra and s["hits"] == 6 - extra, compiled.explain()
    assert "replays 1 program as a whole step" in compiled.explain()
    if opt == "adamw":
        assert [st["step"] for st in o1.state.values()] == [9.0] * 4


def test_adam_matches_torch_through_replays():
    lt.manual_seed(0)
    m = nn.Linear(5, 2)
    tm = torch.nn.Linear(5, 2)
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(m.weight.detach().numpy().copy()))
        tm.bias.copy_(torch.from_numpy(m.bias.detach().numpy().copy()))
    o = lt.optim.Adam(m.parameters(), lr=0.05)
    to = torch.optim.Adam(tm.parameters(), lr=0.05)
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=(7, 5)).astype(np.float32) for _ in range(8)]

    @lt.compile
    def step(x):
        o.zero_grad()
        loss = m(x).square().sum()
        loss.backward()
        o.step()
        return loss

    for x in xs:
        got = step(lt.tensor(x)).item()
        to.zero_grad()
        loss = tm(torch.from_numpy(x)).square().sum()
        loss.backward()
        to.step()
        assert got == pytest.approx(loss.item(), rel=1e-5)
    np.testing.assert_allclose(
        m.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    assert step.stats["hits"] == 5


def test_outputs_and_parameters_of_each_replay_stay_distinct():
    """A replay's results are new buffers: values kept from earlier steps do not change."""
    data = _data()
    runs = []
    for compiled in (True, False):
        m, _, step = _training(compiled)
        kept = []
        for i in range(7):
            loss = step(*data[i % 4])
            w = m[0].weight
            # detach() shares the parameter's storage (as in torch: it sees later steps);
            # detach().clone() is a snapshot of this step.
            kept.append((loss, w.detach().clone(), w.grad, w.detach()))
        runs.append([[t.detach().numpy().copy() for t in row] for row in kept])
    for row_c, row_e in zip(*runs):
        for a, b in zip(row_c, row_e):
            np.testing.assert_array_equal(a, b)
    # ... the snapshots differ from step to step (the test would pass on one value), and
    # every detached alias shows the last value.
    assert not np.array_equal(runs[0][3][1], runs[0][4][1])
    for row in runs[0]:
        np.testing.assert_array_equal(row[3], runs[0][-1][1])


def test_a_changed_hyperparameter_retraces_and_is_used():
    data = _data()
    results = []
    for compiled in (True, False):
        m, o, step = _training(compiled, opt="sgd")
        losses = []
        for i in range(10):
            if i == 6:
                for g in o.param_groups:
                    g["lr"] = 0.2  # read anew by a replay (SGD's provider)
                    g["momentum"] = 0.5  # guarded: a new signature
            losses.append(step(*data[i % 4]).item())
        results.append((losses, _snapshot(m, o)))
        if compiled:  # SGD: three signatures before the change (see above), one after
            assert step.stats["traces"] == 4 and step.stats["hits"] == 4, step.explain()
    assert results[0][0] == results[1][0]
    _same(results[0][1], results[1][1])


def test_a_scheduler_stepped_inside_the_function_is_not_replayed():
    data = _data()
    results = []
    for compiled in (True, False):
        m, o = _mlp()
        sched = lt.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5)
        inner = _make_step(m, o)

        def step(x, y):
            loss = inner(x, y)  # noqa: B023 (called in this iteration)
            sched.step()  # noqa: B023
            return loss

        step = lt.compile(step) if compiled else step
        results.append(_train(m, o, step, data, 6))
        if compiled:
            assert step.stats["hits"] == 0
            assert "changes the numbers, modules or optimizer state" in step.explain()
    assert results[0] == results[1]


def test_a_number_that_changes_without_a_guard_is_caught_by_the_second_recording():
    class Counter:
        k = 0.0

    class Holder:
        def __init__(self):
            self.counter = Counter()

    holder = Holder()
    w = lt.ones(3)

    def f(x):
        holder.counter.k += 1.0  # two objects deep: not part of the signature
        w.add_(x * holder.counter.k)
        return w.sum() * 1

    c = lt.compile(f)
    outs = [c(lt.ones(3)).item() for _ in range(5)]
    assert outs == [6.0, 12.0, 21.0, 33.0, 48.0]  # w += k for k = 1..5
    assert c.stats["hits"] == 0
    assert "two calls recorded different programs or constants" in c.explain()


def test_a_global_number_is_part_of_the_signature():
    global SCALE
    w = lt.zeros(2)

    def f(x):
        w.add_(x * SCALE)
        return w * 1

    c = lt.compile(f)
    SCALE = 1.0
    for _ in range(4):
        c(lt.ones(2))
    SCALE = 10.0
    for _ in range(4):
        out = c(lt.ones(2))
    assert out.tolist() == [44.0, 44.0]
    assert c.stats["traces"] == 2 and c.stats["hits"] == 4, c.explain()


SCALE = 1.0


def test_gradients_accumulate_across_replays():
    """No zero_grad in the step: each replay reads the .grad the last one wrote."""
    data = _data()
    grads = []
    for compiled in (True, False):
        m, _ = _mlp()
        model = m

        def accumulate(x, y):
            loss = ((model(x) - y) ** 2).mean()  # noqa: B023 (called in this iteration)
            loss.backward()
            return loss

        f = lt.compile(accumulate) if compiled else accumulate
        for i in range(6):
            f(*data[i % 4])
        grads.append([p.grad.numpy().copy() for p in m.parameters()])
        if compiled:
            # first call: no .grad yet; then the steady signature, recorded twice
            assert f.stats["traces"] == 2 and f.stats["hits"] == 3, f.explain()
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_a_live_view_of_a_parameter_follows_the_replays():
    m, o = _mlp(opt="sgd")
    row = m[0].weight[0]  # a view held across steps
    step = lt.compile(_make_step(m, o))
    for x, y in _data(6):
        step(x, y)
        np.testing.assert_array_equal(row.detach().numpy(), m[0].weight.detach().numpy()[0])
    assert step.stats["hits"] == 2  # SGD: three signatures, then replays


def test_random_draws_and_foreign_tensors_are_not_captured():
    lt.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5))
    o = lt.optim.SGD(m.parameters(), lr=0.1)
    step = lt.compile(_make_step(m, o))
    for x, _ in _data():
        step(x, lt.zeros(8, 6))
    assert step.stats["hits"] == 0 and "draws random numbers" in step.explain()

    class Holder:  # not a module: its tensor is no input the signature knows of
        t = lt.ones(8, 3)

    holder = Holder()
    m2, o2 = _mlp(opt="sgd")

    def f(x, y):
        return _make_step(m2, o2)(x, y + holder.t)

    c = lt.compile(f)
    for x, y in _data():
        c(x, y)
    assert c.stats["hits"] == 0 and "not an argument" in c.explain()


def test_step_capture_can_be_turned_off():
    m, o = _mlp()
    step = lt.compile(_make_step(m, o), options={"step_capture": False})
    _train(m, o, step, _data(), 5)
    assert step.stats["hits"] == 0 and "runs backward" in step.explain()


def test_autocast_is_part_of_the_signature():
    data = _data()
    results = []
    for compiled in (True, False):
        m, o, step = _training(compiled)
        losses = []
        for i in range(8):
            if i % 4 < 2:
                losses.append(step(*data[i % 4]).item())
            else:
                with lt.autocast("cpu", dtype=lt.bfloat16):
                    losses.append(step(*data[i % 4]).item())
        results.append((losses, _snapshot(m, o)))
    assert results[0][0] == results[1][0]
    _same(results[0][1], results[1][1])


def test_a_step_called_inside_another_trace_runs_its_python():
    """The outer trace must see the inner step's programs, so the inner one is not replayed
    there; the outer function is itself captured, with the inner step's work in it."""
    data = _data()
    results = []
    for compiled in (True, False):
        m, o = _mlp()
        inner = _make_step(m, o)
        inner = lt.compile(inner) if compiled else inner
        for i in range(4):  # the inner step alone: traced, confirmed, replayed
            inner(*data[i])

        def outer(x, y):
            loss = inner(x, y)  # noqa: B023 (called in this iteration)
            with lt.no_grad():  # (a result with gradient history is not replayed)
                return loss * 2

        outer = lt.compile(outer) if compiled else outer
        losses = [outer(*data[i % 4]).item() for i in range(5)]
        results.append((losses, _snapshot(m, o)))
        if compiled:
            assert outer.stats["hits"] == 3, outer.explain()
    assert results[0][0] == results[1][0]
    _same(results[0][1], results[1][1])


def _counter_run(holder_kind, compiled):
    """A step that halves w on every fourth call, decided by a counter in an object or a
    dict that the loop advances: calls 1 and 2 (trace and confirmation) take the same
    branch, call 3 the other one."""

    class Counter:
        n = 0

    counter = Counter() if holder_kind == "object" else {"n": 0}
    w = lt.ones(3)

    def read():
        return counter.n if holder_kind == "object" else counter["n"]

    def step(x):
        w.add_(x)
        if read() == 3:
            w.mul_(0.5)
        return w.sum() * 1

    step = lt.compile(step) if compiled else step
    out = []
    for i in range(1, 17):
        if holder_kind == "object":
            counter.n = i % 4
        else:
            counter["n"] = i % 4
        out.append(step(lt.ones(3)).item())
    if compiled:
        assert step.stats["hits"] > 0, step.explain()
    return out


@pytest.mark.parametrize("holder_kind", ["object", "dict"])
def test_a_branch_on_an_object_or_dict_counter_is_guarded(holder_kind):
    """Each call's counter value is part of the signature (the helper `read` in the step's
    closure reaches it), so a replay never repeats the branch another call took."""
    assert _counter_run(holder_kind, True) == _counter_run(holder_kind, False)


backward = 0  # a module-level number named like an attribute the step uses (loss.backward)


def test_an_attribute_name_is_not_taken_for_a_global_it_reads():
    """Only the globals the bytecode loads are part of the signature: `loss.backward()` in
    the step does not make the module-level number `backward` one (it changes every call)."""
    global backward
    m, o = _mlp()
    step = lt.compile(_make_step(m, o))
    for i, (x, y) in enumerate(_data(6)):
        backward = i
        step(x, y)
    assert step.stats["hits"] == 3, step.explain()


@pytest.mark.parametrize("opt", ["adamw", "sgd"])
def test_a_per_step_learning_rate_schedule(opt):
    """nanoGPT sets every group's lr before each step. The optimizers' providers read lr
    anew at each replay (no new signature). The lr is constant over the recorded calls and
    changes after: a number the replay kept from the recording would now be stale, and the
    results would differ."""
    data = _data()
    results = []
    for compiled in (True, False):
        m, o, step = _training(compiled, opt=opt)
        losses = []
        for i in range(10):
            lr = 0.01 if i < 4 else 0.01 * 0.5 * (1 + np.cos(np.pi * i / 10))
            for g in o.param_groups:
                g["lr"] = float(lr)
            losses.append(step(*data[i % 4]).item())
        results.append((losses, _snapshot(m, o)))
        if compiled:  # (SGD's second step is a signature of its own: see above)
            extra = opt == "sgd"
            assert step.stats["traces"] == 2 + extra, step.explain()
            assert step.stats["hits"] == 7 - extra, step.explain()
    assert results[0][0] == results[1][0]
    _same(results[0][1], results[1][1])


def test_a_provided_number_that_loses_its_tag_stops_the_capture():
    """An optimizer whose provided number reaches the program only through a float derived
    from it (the tag lost) must not be replayed: the derived number would be baked in."""
    from lazytorch import runtime
    from lazytorch.ops._core import HostScalar

    class Lossy(lt.optim.SGD):
        _host_hyper = ("lr",)

        def _step_group(self, group):
            def scalars():
                return [group["lr"]]

            hooks = runtime._compile_trace
            k = hooks.host_provider(scalars) if hooks is not None else None
            lr = scalars()[0]
            lr = HostScalar(lr, (k, 0, 0)) if k is not None else lr
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad * (lr * 1.0), alpha=-1)  # lr * 1.0: a new float, untagged

    data = _data()
    results = []
    for compiled in (True, False):
        m, _ = _mlp(opt="sgd")
        o = Lossy(m.parameters(), lr=0.1)
        step = _make_step(m, o)
        step = lt.compile(step) if compiled else step
        losses = []
        for i in range(8):
            for g in o.param_groups:
                g["lr"] = 0.1 if i < 4 else 0.05
            losses.append(step(*data[i % 4]).item())
        results.append(losses)
        if compiled:
            assert step.stats["hits"] == 0
            assert "did not reach the program as an input" in step.explain()
    assert results[0] == results[1]


# Optimizers whose every step-dependent number comes from a provider (replayed), and those
# whose numbers change each step without one (the second recording refuses them).
_REPLAYED = ["SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Adagrad", "Adamax", "Rprop"]
_NOT_REPLAYED = ["NAdam", "RAdam", "ASGD"]


@pytest.mark.parametrize("name", _REPLAYED + _NOT_REPLAYED)
def test_every_optimizer_compiled_step_matches_the_uncompiled_one(name):
    """lr constant over the recorded calls, then decaying (Rprop's lr only seeds its step
    sizes: guarded, so it holds lr constant to be replayed)."""
    data = _data()
    results = []
    for compiled in (True, False):
        lt.manual_seed(0)
        m = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 3))
        o = getattr(lt.optim, name)(m.parameters(), lr=0.01)
        step = _make_step(m, o)
        step = lt.compile(step) if compiled else step
        losses = []
        for i in range(9):
            if i >= 4 and name != "Rprop":
                for g in o.param_groups:
                    g["lr"] *= 0.5
            losses.append(step(*data[i % 4]).item())
        results.append((losses, _snapshot(m, o)))
        if compiled:
            hits = step.stats["hits"]
            assert (hits == 6) if name in _REPLAYED else (hits == 0), step.explain()
    assert results[0][0] == results[1][0]
    _same(results[0][1], results[1][1])
