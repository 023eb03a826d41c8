"""Folding moving offsets on the host at a missed cut (lazytorch.runtime.host_fold): values
equal to the reference, one compiled program where the offsets moved, nothing written in
place, and no fold where the rules say none."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch.runtime import host_fold


def _count(name):
    return lt.metrics.counters().get(name, 0)


def _one_hot(word, dtype=lt.float32):
    t = lt.zeros(len(word), 1, 26, dtype=dtype)
    for i, c in enumerate(word):
        # the char-RNN tutorials' lineToTensor; True, not 1: an int or float is written on
        # the host at once (indexing._host_write, tested below), a bool is recorded
        t[i][0][ord(c) - 97] = True
    return t


def _one_hot_np(word, dtype=np.float32):
    t = np.zeros((len(word), 1, 26), dtype=dtype)
    for i, c in enumerate(word):
        t[i, 0, ord(c) - 97] = 1
    return t


WORDS = ("cat", "dog", "emu", "fox", "gnu")


def test_one_hot_lines_share_one_program():
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((26, 4)).astype(np.float32)
    w = lt.tensor(w_np)
    lt.materialize(w)
    lt.metrics.reset()
    for word in WORDS:
        got = (_one_hot(word) @ w).tanh().sum().item()
        want = np.tanh(_one_hot_np(word) @ w_np).sum()
        assert got == pytest.approx(float(want), rel=1e-6)
    # without folding, every word's assignments put its letters in the key: 5 programs
    assert _count("programs_built") == 1
    assert _count("host_folds") == len(WORDS)


@pytest.mark.parametrize("dtype", ["float16", "int64", "bool"])
def test_folded_constants_keep_their_dtype(dtype):
    lt_dt, np_dt = getattr(lt, dtype), np.dtype(dtype)
    x = _one_hot("hello", lt_dt)
    y = (x.to(lt.float32) * 2).sum(0)  # a program around the constant
    lt.metrics.reset()
    got = y.numpy()
    assert _count("host_folds") == 1
    np.testing.assert_array_equal(got, (_one_hot_np("hello", np_dt).astype(np.float32) * 2).sum(0))
    assert x.dtype is lt_dt and x.numpy().dtype == np_dt


def test_a_pending_read_of_the_value_before_an_assignment_keeps_it():
    t = lt.zeros(3, 4)
    t[0, 1] = 7
    before = t * 2  # pending: reads t as it is now
    view = t[1]  # a view: sees the assignment below, as in torch
    t[1, 2] = 5
    t[2] = 9
    after = t + 1
    lt.metrics.reset()
    lt.materialize(before, after, view)
    assert _count("host_folds") == 0  # numbers into a small tensor: written on the host
    ref = np.zeros((3, 4), np.float32)
    ref[0, 1] = 7
    np.testing.assert_array_equal(before.numpy(), ref * 2)
    ref[1, 2] = 5
    ref[2] = 9
    np.testing.assert_array_equal(after.numpy(), ref + 1)
    np.testing.assert_array_equal(view.numpy(), ref[1])
    np.testing.assert_array_equal(t.numpy(), ref)
    t[0, 0] = -1  # writing after the fold changes t only
    np.testing.assert_array_equal(after.numpy(), ref + 1)
    assert t[0, 0].item() == -1


def test_moving_windows_of_a_computed_tensor_share_one_program():
    data_np = np.arange(200, dtype=np.float32).reshape(50, 4) / 100
    data = lt.tensor(data_np) * 1  # computed, as batchify's result is
    lt.materialize(data)
    w = lt.tensor(np.linspace(-1, 1, 4, dtype=np.float32))
    lt.materialize(w)
    lt.metrics.reset()
    for i in range(0, 40, 5):  # word_language_model's get_batch: source[i:i + bptt]
        got = (data[i : i + 5] * w).exp().sum().item()
        want = np.exp(data_np[i : i + 5] * w.numpy()).sum()
        assert got == pytest.approx(float(want), rel=1e-5)
    assert _count("programs_built") == 1
    assert _count("host_folds") == 8


def test_windows_that_do_not_move_are_folded_once_then_compiled_whole(monkeypatch):
    # a convolution's taps: the same slices of the input at every call. Folding them each
    # time copied every tap with NumPy on the host (a 16x32x32x32 conv: 22 ms, 6 ms whole)
    monkeypatch.setattr(host_fold, "COPIED_MIN", 1)  # (copies this small stay folded)
    data_np = np.arange(120, dtype=np.float32).reshape(6, 20) / 7
    data = lt.tensor(data_np)
    lt.materialize(data)
    lt.metrics.reset()
    for step in range(5):
        got = (data[:, 0:16] * 2 + data[:, 3:19]).numpy()
        np.testing.assert_allclose(got, data_np[:, 0:16] * 2 + data_np[:, 3:19], rtol=1e-6)
        if step == 0:
            assert _count("host_folds") == 2  # the first sighting folds its two windows
    assert _count("host_folds") == 2  # the key came back: compiled with its slices
    runs = _count("tier0_runs") + _count("programs_built") + _count("cache_hits_memory")
    assert runs == 5


def test_windows_that_come_back_each_epoch_still_share_one_program(monkeypatch):
    # windows over a small dataset: each offset comes back once an epoch, after the others;
    # that is movement, not a stable key (each would compile a program)
    monkeypatch.setattr(host_fold, "COPIED_MIN", 1)
    data_np = np.arange(120, dtype=np.float32).reshape(4, 30) / 50
    data = lt.tensor(data_np) * 1
    lt.materialize(data)
    lt.metrics.reset()
    starts = list(range(0, 25, 5))  # 5 windows, more than host_fold.STABLE_WITHIN
    assert len(starts) > host_fold.STABLE_WITHIN
    for _epoch in range(3):
        for i in starts:  # columns: each window is copied
            got = (data[:, i : i + 5] * 3).tanh().sum().item()
            want = np.tanh(data_np[:, i : i + 5] * 3).sum()
            assert got == pytest.approx(float(want), rel=1e-5)
    assert _count("host_folds") == 3 * len(starts)
    assert _count("programs_built") + _count("tier0_runs") <= 2


def test_a_convolution_input_is_not_copied_on_the_host_each_step(monkeypatch):
    monkeypatch.setattr(host_fold, "COPIED_MIN", 1)  # (a small input: small copies)
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w_np = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x, w = lt.tensor(x_np), lt.tensor(w_np)
    lt.materialize(x, w)
    lt.conv2d(x, w, padding=1).numpy()  # the first sighting folds its pad and taps
    lt.metrics.reset()
    for _ in range(4):
        y = lt.nn.functional.conv2d(x, w, padding=1).numpy()
    assert _count("host_folds") == 0  # never again: the program holds them
    import torch

    want = torch.nn.functional.conv2d(torch.from_numpy(x_np), torch.from_numpy(w_np), padding=1)
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-4, atol=1e-5)


def test_small_copies_and_views_stay_folded_on_a_stable_key():
    # a batch's columns (x[:, :-1]) at every step: copying 64 numbers costs less than a
    # compile, so the key stays folded (one program over the copied window)
    data_np = np.arange(64, dtype=np.float32).reshape(8, 8)
    data = lt.tensor(data_np)
    lt.materialize(data)
    lt.metrics.reset()
    for _ in range(6):
        got = (data[:, :-1] * 2).sum().item()
        assert got == float((data_np[:, :-1] * 2).sum())
    assert _count("host_folds") == 6


def test_a_strided_window_is_copied_and_equal():
    data_np = np.arange(60, dtype=np.float32).reshape(6, 10)
    data = lt.tensor(data_np)
    lt.materialize(data)
    lt.metrics.reset()
    for i in range(0, 8, 2):
        got = (data[:, i : i + 2].T * 3 + 1).numpy()
        np.testing.assert_array_equal(got, data_np[:, i : i + 2].T * 3 + 1)
    assert _count("programs_built") == 1 and _count("host_folds") == 4


def test_a_window_over_the_copy_limit_is_left_in_the_program(monkeypatch):
    monkeypatch.setattr(host_fold, "MAX_COPY", 4)
    data_np = np.arange(60, dtype=np.float32).reshape(6, 10)
    data = lt.tensor(data_np)
    lt.materialize(data)
    lt.metrics.reset()
    got = (data[:, 2:5] * 2).numpy()  # strided, 18 elements: over the limit
    np.testing.assert_array_equal(got, data_np[:, 2:5] * 2)
    assert _count("host_folds") == 0
    got = (data[2:5] * 2).numpy()  # rows of a contiguous buffer: a view, any size
    np.testing.assert_array_equal(got, data_np[2:5] * 2)
    assert _count("host_folds") == 1


def test_windows_of_a_parameter_stay_in_the_program_for_autograd():
    w = lt.tensor(np.arange(12, dtype=np.float32).reshape(6, 2), requires_grad=True)
    lt.metrics.reset()
    for i in range(3):
        loss = (w[i : i + 2] ** 2).sum()
        loss.backward()
    assert _count("host_folds") == 0
    want = np.zeros((6, 2), np.float32)
    for i in range(3):
        want[i : i + 2] += 2 * np.arange(12, dtype=np.float32).reshape(6, 2)[i : i + 2]
    np.testing.assert_array_equal(w.grad.numpy(), want)


def test_a_cached_program_is_run_without_looking_for_folds(monkeypatch):
    calls = []
    fold = host_fold.fold
    monkeypatch.setattr(host_fold, "fold", lambda *a: calls.append(1) or fold(*a))
    x = lt.tensor(np.arange(6, dtype=np.float32))
    lt.materialize(x)
    assert (x * 2).sum().item() == 30.0  # a miss: looked at, nothing to fold
    assert len(calls) == 1
    assert (x * 2).sum().item() == 30.0  # a hit: run as compiled
    assert len(calls) == 1


def test_the_interpreter_backend_does_not_fold():
    with lt.backend("interpreter"):
        lt.metrics.reset()
        assert (_one_hot("abc") * 2).sum().item() == 6.0
        assert _count("host_folds") == 0


def test_a_compiled_function_replays_its_constant_and_the_caller_folds_it():
    @lt.compile
    def f(x, word):
        return (x * _one_hot(word)).sum(2)

    rng = np.random.default_rng(1)
    for word in ("abc", "abc", "xyz", "xyz"):
        x_np = rng.standard_normal((3, 1, 26)).astype(np.float32)
        got = f(lt.tensor(x_np), word).numpy()
        np.testing.assert_allclose(got, (x_np * _one_hot_np(word)).sum(2), rtol=1e-6)
    assert f.stats["traces"] == 2 and f.stats["hits"] == 2


def test_no_fold_runs_inside_a_compile_trace(monkeypatch):
    seen = []
    foldable = __import__("lazytorch.runtime.executor", fromlist=["_foldable"])._foldable

    def spy(backend):
        answer = foldable(backend)
        seen.append((lt.runtime._compile_trace is not None, answer))
        return answer

    monkeypatch.setattr("lazytorch.runtime.executor._foldable", spy)

    @lt.compile
    def f(x):
        t = _one_hot("abc")
        return x * t.sum().item()  # a read inside the trace: a cut during tracing

    assert f(lt.ones(2)).tolist() == [3.0, 3.0]
    in_trace = [answer for tracing, answer in seen if tracing]
    assert in_trace and not any(in_trace)


@pytest.mark.parametrize("seed", range(4))
def test_folded_programs_compute_what_the_interpreter_computes(seed):
    rng = np.random.default_rng(seed)
    data_np = rng.standard_normal((12, 6)).astype(np.float32)

    def run():
        data = lt.tensor(data_np)
        lt.materialize(data)
        out = []
        for _ in range(3):
            i, j = int(rng.integers(0, 8)), int(rng.integers(0, 4))
            t = lt.zeros(4, 6)
            t[i % 4, j] = float(rng.standard_normal())
            t[(i + 1) % 4, j:] = 2.5
            out.append(((data[i : i + 4] + t).sigmoid() * data[i : i + 4, j : j + 2].sum()).numpy())
        return out

    state = rng.bit_generator.state
    folded = run()
    rng.bit_generator.state = state
    with lt.backend("interpreter"):
        reference = run()
    for a, b in zip(folded, reference):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def test_an_error_in_a_folded_constant_names_the_op_and_the_line():
    idx = lt.full((2,), 7, dtype=lt.int64)
    t = lt.zeros(4).gather(0, idx)  # out of range, built only from constants: folded
    with pytest.raises(
        RuntimeError, match=r"out of bounds.*\(in gather recorded at .*test_host_fold.py:\d+\)"
    ):
        (t * 2).numpy()


def test_numbers_written_into_small_tensors_record_nothing():
    # The char-RNN one-hot lines with numbers (what the tutorials write): each write is done
    # on the host, so the step's program reads the one-hot tensor as an input — no fold,
    # one program for all words of one length
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((26, 4)).astype(np.float32)
    w = lt.tensor(w_np)
    lt.materialize(w)
    lt.metrics.reset()
    for word in ("cat", "dog", "emu", "fox"):
        t = lt.zeros(len(word), 1, 26)
        for i, c in enumerate(word):
            t[i][0][ord(c) - 97] = 1
        got = (t @ w).tanh().sum().item()
        assert got == pytest.approx(float(np.tanh(_one_hot_np(word) @ w_np).sum()), rel=1e-6)
    assert _count("host_folds") == 0
    assert _count("programs_built") <= 1  # one length: one program


@pytest.mark.parametrize(
    "make, value, host",
    [
        (lambda: lt.zeros(2, 3), 5, True),
        (lambda: lt.full((2, 3), 2.5, dtype=lt.float64), -1.5, True),
        (lambda: lt.zeros(2, 3, dtype=lt.int64), 7, True),
        (lambda: lt.zeros(2, 3, dtype=lt.int64), 2.5, True),  # truncated, as torch
        (lambda: lt.zeros(2, 3, dtype=lt.int8), 300, True),  # out of range: torch's error
        (lambda: lt.zeros(2, 3, dtype=lt.bfloat16), 1.7, True),  # rounded to nearest even
        (lambda: lt.zeros(2, 3, requires_grad=True) * 1, 3.0, False),  # autograd: recorded
        (lambda: lt.zeros(100, 100) + 1, 1.0, False),  # over HOST_WRITE_MAX
    ],
)
def test_host_writes_match_torch_and_keep_earlier_readers(make, value, host):
    import torch

    t = make()
    # (tolist, not numpy(): numpy() shares t's memory, after which writes to t are eager)
    tt = torch.tensor(t.detach().float().tolist()).to(getattr(torch, str(t.dtype).split(".")[-1]))
    before = t * 1  # a pending reader of the value before the writes
    alias = t[1]  # a view: sees the writes, as in torch
    clone = t.clone()
    lt.metrics.reset()
    try:
        t[1, 2] = value
        t[0][1] = value
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="overflow"):
            tt[1, 2] = value
        assert "overflow" in str(e)
        return
    tt[1, 2] = value
    tt[0][1] = value
    assert (t._node.buffer is not None) == host  # written now, or recorded (no read yet)

    def read(x):  # (numpy() refuses a tensor that requires grad)
        return x.detach().float().numpy()

    assert read(t).tolist() == read(tt).tolist()
    assert read(alias).tolist() == read(tt[1]).tolist()
    assert (read(before) == read(make())).all()
    assert (read(clone) == read(make())).all()


def test_element_writes_through_data_into_a_parameter_are_host_writes():
    # d2l's loop over a weight's elements (``w.data[i][j] = 0`` where a test holds): once
    # the weight is computed, each write is done on the host; the weight stays the same leaf
    # requiring grad, a pending reader keeps the value before, and the gradient is torch's
    import torch

    w0 = np.arange(-6.0, 6.0, dtype=np.float32).reshape(3, 4)
    lw = lt.nn.Parameter(lt.tensor(w0))
    tw = torch.nn.Parameter(torch.tensor(w0))
    lt.materialize(lw)
    before = lw * 1
    lt.metrics.reset()
    for w in (lw, tw):
        for i in range(3):
            for j in range(4):
                if -2 <= w.data[i][j] <= 2:
                    w.data[i][j] = 0.0
    # the two comparisons' programs, each reused for every element (a recorded write made
    # the weight pending again, and every read a program with its offsets: 16 here)
    assert _count("programs_built") <= 2
    assert lw._node.buffer is not None
    assert lw.is_leaf and lw.requires_grad and lw.grad_fn is None
    np.testing.assert_array_equal(lw.detach().numpy(), tw.detach().numpy())
    np.testing.assert_array_equal(before.detach().numpy(), w0)
    (lw * lw).sum().backward()
    (tw * tw).sum().backward()
    np.testing.assert_array_equal(lw.grad.numpy(), tw.grad.numpy())
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        lw[0, 0] = 1.0  # not through .data: refused in grad mode, as torch


# -- host writes through views and basic indices, against torch -----------------------------
_VIEWS = {
    "t": lambda x: x.t() if x.ndim == 2 else x,
    "transpose": lambda x: x.transpose(0, -1),
    "row": lambda x: x[x.shape[0] - 1] if x.ndim > 1 and x.shape[0] else x,
    "step slice": lambda x: x[1::2],
    "flatten": lambda x: x.reshape(-1),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "narrow": lambda x: x.narrow(-1, 1, x.shape[-1] - 1) if x.shape[-1] > 1 else x,
    "expand": lambda x: x.unsqueeze(0).expand(2, *x.shape),
}


def _index_strategy(draw, ndim):
    items = []
    for _ in range(draw(st.integers(0, ndim))):
        items.append(
            draw(
                st.one_of(
                    st.integers(-5, 5),
                    st.builds(
                        slice,
                        st.none() | st.integers(-5, 5),
                        st.none() | st.integers(-5, 5),
                        st.none() | st.integers(-1, 3),
                    ),
                    st.sampled_from([None, Ellipsis]),
                )
            )
        )
    # (one ellipsis at most: torch reads a second one in a way of its own, lazytorch and
    # NumPy refuse it)
    while items.count(Ellipsis) > 1:
        items.remove(Ellipsis)
    return items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)


def _torch_write(x, idx, value):
    try:
        x[idx] = value
    except (IndexError, ValueError, RuntimeError) as e:
        return type(e)
    return None


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_host_writes_through_views_match_torch(data):
    """A number written through a chain of views and a basic index (the host path where
    the rules allow it, else the recorded one): the root, a live alias and an earlier reader
    equal torch's, and an index torch refuses raises the same error type."""
    import torch

    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dtype = data.draw(st.sampled_from(["float32", "int64", "float64"]))
    chain = data.draw(st.lists(st.sampled_from(sorted(_VIEWS)), max_size=3))
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    value = data.draw(st.sampled_from([7, -2.5, 0]))

    t_ref = torch.tensor(base)
    t = lt.tensor(base)
    if data.draw(st.booleans()):
        lt.materialize(t)  # a computed buffer, or a pending leaf
    alias_t, alias_r = t[0], t_ref[0]
    before = t * 1
    v, v_ref = t, t_ref
    for name in chain:
        if v_ref.ndim == 0:
            break
        v_ref, v = _VIEWS[name](v_ref), _VIEWS[name](v)
    idx = _index_strategy(data.draw, v_ref.ndim)
    err = _torch_write(v_ref, idx, value)
    if err is not None:
        with pytest.raises(err):
            v[idx] = value
    else:
        v[idx] = value
    assert t.numpy().tolist() == t_ref.numpy().tolist()
    assert v.numpy().tolist() == v_ref.numpy().tolist()
    assert alias_t.numpy().tolist() == alias_r.numpy().tolist()
    assert before.numpy().tolist() == base.tolist()


def test_host_writes_by_index_record_nothing():
    # x[i, j] = number and x[i][j] = number on a host value: done with NumPy, no node
    t = lt.zeros(3, 1, 5)
    lt.materialize(t)
    t[1, 0, 2] = 1
    t[2][0][-1] = 3.5
    t[0, :, 1:4:2] = -1
    assert t._node.buffer is not None and t._node.op.name == "buffer"
    assert t.numpy()[:, 0].tolist() == [
        [0.0, -1.0, 0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 3.5],
    ]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[3, 0, 0] = 1
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1] = 1


def test_a_number_written_at_a_full_index_with_numpy_ints_matches_torch():
    # TCN's adding problem: X_mask[i, 0, positions[0]] = 1 with positions from
    # np.random.choice (NumPy ints: not a basic index, so the index makes a 0-d view that is
    # then written on the host; NumPy's select of it gave a scalar copy, and the write failed)
    import torch

    pos = np.array([1, 4])
    t, t_ref = lt.zeros([3, 1, 5]), torch.zeros([3, 1, 5])
    for x in (t, t_ref):
        x[2, 0, pos[0]] = 1
        x[0, 0, pos[1]] = 2.5
        x[np.int64(1)][0][np.int64(3)] = -1
    assert t.numpy().tolist() == t_ref.numpy().tolist()
