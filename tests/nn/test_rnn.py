"""nn.RNN, nn.LSTM, nn.GRU, their cells and nn.utils.rnn against torch.

Each module is built on both sides from the same constructor, torch's weights are copied
into lazytorch with ``load_state_dict``, and both run on the same inputs. Compared: every
output (hidden states included), then the gradients of the inputs, of h0/c0 and of every
parameter, from one backward of the outputs projected on fixed random cotangents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
GRAD_TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}
L, N, IN, HID = 4, 3, 3, 4  # sequence length, batch, input size, hidden size


@pytest.fixture(autouse=True)
def _interpreter():
    # Many small distinct programs: the NumPy interpreter runs them without a compile each.
    with lt.backend("interpreter"):
        yield


def pair(name: str, *args: Any, dtype: str = "float64", **kwargs: Any) -> tuple[Any, Any]:
    """torch's module and lazytorch's, with torch's (random) weights in both."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(lt.nn, name)(*args, **kwargs).to(getattr(lt, dtype))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: lt.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def tensors_of(out: Any) -> list[Any]:
    """The tensors in a (nested) result; a PackedSequence contributes its data."""
    if isinstance(out, (torch.nn.utils.rnn.PackedSequence, lt.nn.utils.rnn.PackedSequence)):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors_of(o)]
    return [out]


def run(lib: Any, module: Any, call: Callable[..., Any], arrays: dict[str, np.ndarray]) -> Any:
    """`call(lib, module, **tensors)` on fresh leaves that require grad; then one backward
    of the outputs times fixed cotangents. Returns (outputs, input leaves)."""
    leaves = {k: lib.tensor(a.copy(), requires_grad=True) for k, a in arrays.items()}
    outs = tensors_of(call(lib, module, **leaves))
    loss = 0
    for k, o in enumerate(outs):
        if o.dtype.is_floating_point:
            ct = np.random.default_rng(100 + k).uniform(0.5, 1.5, size=tuple(o.shape))
            loss = loss + (o * lib.tensor(ct.astype(arrays[next(iter(arrays))].dtype))).sum()
    loss.backward()
    return outs, leaves


def compare(
    name: str,
    ctor_args: tuple[Any, ...],
    call: Callable[..., Any],
    arrays: dict[str, np.ndarray],
    dtype: str = "float64",
    **kwargs: Any,
) -> None:
    """Outputs and the gradients of every input and parameter equal torch's."""
    theirs, ours = pair(name, *ctor_args, dtype=dtype, **kwargs)
    want, t_leaves = run(torch, theirs, call, arrays)
    got, l_leaves = run(lt, ours, call, arrays)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert tuple(g.shape) == tuple(w.shape), f"output {k}: {g.shape} vs {w.shape}"
        assert g.dtype.name == str(w.dtype).removeprefix("torch."), f"output {k} dtype"
        np.testing.assert_allclose(
            g.detach().numpy(), w.detach().numpy(), **TOL[dtype], err_msg=f"output {k}"
        )
    grads = [(f"grad of {k}", l_leaves[k].grad, t.grad) for k, t in t_leaves.items()]
    grads += [
        (f"grad of {pname}", lp.grad, tp.grad)
        for (pname, tp), lp in zip(theirs.named_parameters(), ours.parameters(), strict=True)
    ]
    for what, g, w in grads:
        assert w is not None and g is not None, what
        np.testing.assert_allclose(g.numpy(), w.numpy(), **GRAD_TOL[dtype], err_msg=what)


def rand(*shape: int, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(dtype)


def states(name: str, layers: int, batch: tuple[int, ...], sizes: tuple[int, int] = (HID, HID)):
    """h0 (and c0 for LSTM) arrays: (layers, *batch, size)."""
    out = {"h0": rand(layers, *batch, sizes[0], seed=1)}
    if name == "LSTM":
        out["c0"] = rand(layers, *batch, sizes[1], seed=2)
    return out


def hidden_arg(name: str, h0: Any = None, c0: Any = None) -> Any:
    if h0 is None:
        return None
    return (h0, c0) if name == "LSTM" else h0


# -- the module matrix ------------------------------------------------------------------------------
@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2], ids=["1layer", "2layers"])
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_module_matches_torch(name, num_layers, bidirectional, batch_first, with_h0):
    layers = num_layers * (2 if bidirectional else 1)
    arrays = {"x": rand(N, L, IN) if batch_first else rand(L, N, IN)}
    if with_h0:
        arrays |= states(name, layers, (N,))

    def call(lib, m, x, h0=None, c0=None):
        return m(x, hidden_arg(name, h0, c0))

    kwargs = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    compare(name, (IN, HID), call, arrays, **kwargs)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_float32(name):
    arrays = {"x": rand(L, N, IN, dtype="float32")}
    arrays |= {k: a.astype("float32") for k, a in states(name, 4, (N,)).items()}

    def call(lib, m, x, h0, c0=None):
        return m(x, hidden_arg(name, h0, c0))

    compare(name, (IN, HID), call, arrays, "float32", num_layers=2, bidirectional=True)


@pytest.mark.parametrize("bias", [True, False])
def test_rnn_relu_without_bias(bias):
    compare(
        "RNN",
        (IN, HID, 2, "relu", bias),  # nonlinearity is RNN's fourth positional argument
        lambda lib, m, x: m(x),
        {"x": rand(L, N, IN)},
    )


@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_lstm_projection(bidirectional, with_h0):
    layers = 2 * (2 if bidirectional else 1)
    arrays = {"x": rand(N, L, IN)}
    if with_h0:
        arrays |= states("LSTM", layers, (N,), sizes=(2, HID))

    def call(lib, m, x, h0=None, c0=None):
        return m(x, hidden_arg("LSTM", h0, c0))

    kwargs = dict(num_layers=2, bidirectional=bidirectional, proj_size=2, batch_first=True)
    compare("LSTM", (IN, HID), call, arrays, **kwargs)


@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name, with_h0):
    arrays = {"x": rand(L, IN)}
    if with_h0:
        arrays |= states(name, 2, ())

    def call(lib, m, x, h0=None, c0=None):
        return m(x, hidden_arg(name, h0, c0))

    compare(name, (IN, HID), call, arrays, bidirectional=True)


def test_size_one_sequence_and_batch():
    compare("GRU", (IN, HID), lambda lib, m, x: m(x), {"x": rand(1, 1, IN)}, num_layers=2)


def test_dropout_between_layers():
    # p=1 drops all of layer 0's output in training: deterministic, so comparable with torch
    compare(
        "LSTM", (IN, HID), lambda lib, m, x: m(x), {"x": rand(L, N, IN)}, num_layers=2, dropout=1.0
    )
    # in eval mode dropout is off
    theirs, ours = pair("GRU", IN, HID, num_layers=2, dropout=0.5)
    x = rand(L, N, IN)
    want = theirs.eval()(torch.tensor(x))[0].detach().numpy()
    np.testing.assert_allclose(
        ours.eval()(lt.tensor(x))[0].detach().numpy(), want, **TOL["float64"]
    )
    # in training it drops: some of layer 1's input is zeroed, so the output moves
    got = ours.train()(lt.tensor(x))[0].detach().numpy()
    assert not np.allclose(got, want)
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last"):
        lt.nn.RNN(IN, HID, dropout=0.5)


# -- packed sequences through the modules -----------------------------------------------------------
LENGTHS = [2, 4, 1, 4]  # unsorted, with a tie


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("LSTM", dict(num_layers=2, bidirectional=True)),
        ("LSTM", dict(proj_size=2, bidirectional=True, batch_first=True)),
        ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
        ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ],
    ids=["lstm", "lstm_proj", "gru", "rnn_relu"],
)
@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
def test_pack_module_pad_round_trip(name, kwargs, with_h0):
    """pack_padded_sequence(enforce_sorted=False) -> module -> pad_packed_sequence."""
    batch_first = kwargs.get("batch_first", False)
    layers = kwargs.get("num_layers", 1) * 2
    h_size = kwargs.get("proj_size", HID)
    arrays = {"x": rand(4, 5, IN) if batch_first else rand(5, 4, IN)}
    if with_h0:
        arrays |= states(name, layers, (4,), sizes=(h_size, HID))

    def call(lib, m, x, h0=None, c0=None):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_padded_sequence(x, LENGTHS, batch_first, enforce_sorted=False)
        out, hidden = m(packed, hidden_arg(name, h0, c0))
        assert isinstance(out, rnn.PackedSequence)
        padded, lengths = rnn.pad_packed_sequence(out, batch_first, total_length=6)
        return padded, lengths, hidden, out.batch_sizes

    compare(name, (IN, HID), call, arrays, **kwargs)


def test_packed_sorted_batch_through_lstm():
    def call(lib, m, x):
        seqs = [x[:3], x[3:5], x[5:]]
        out, (h, c) = m(lib.nn.utils.rnn.pack_sequence(seqs))
        return lib.nn.utils.rnn.unpack_sequence(out), h, c

    compare("LSTM", (IN, HID), call, {"x": rand(6, IN)}, num_layers=2)


# -- cells ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("name", ["RNNCell", "RNNCell_relu", "LSTMCell", "GRUCell"])
def test_cell_matches_torch(name, batched, with_h0, bias):
    batch = (N,) if batched else ()
    arrays = {"x": rand(*batch, IN)}
    if with_h0:
        arrays["h0"] = rand(*batch, HID, seed=1)
        if name == "LSTMCell":
            arrays["c0"] = rand(*batch, HID, seed=2)

    def call(lib, m, x, h0=None, c0=None):
        hx = h0 if c0 is None else (h0, c0)
        for _ in range(2):  # two steps, the second from the first's state
            hx = m(x, hx)
        return hx

    if name == "RNNCell_relu":
        compare("RNNCell", (IN, HID, bias, "relu"), call, arrays)
    else:
        compare(name, (IN, HID, bias), call, arrays)


# -- nn.utils.rnn against torch ---------------------------------------------------------------------
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(batch_first, padding_side):
    a, b, c = rand(3, 2), rand(5, 2, seed=1), rand(1, 2, seed=2)
    f = lambda t, a, b, c: t.nn.utils.rnn.pad_sequence(  # noqa: E731
        [a, b, c], batch_first, -1.5, padding_side
    )
    check(f, a, b, c)
    check_grad(f, a, b, c)


def test_pad_sequence_scalars_ints_and_dtypes():
    check(lambda t, a, b: t.nn.utils.rnn.pad_sequence([a, b], padding_value=2.7), rand(3), rand(1))
    ints = np.arange(5, dtype=np.int64)
    check(lambda t, a: t.nn.utils.rnn.pad_sequence([a[:2], a], True, 2.7), ints)
    # the result takes the first sequence's dtype
    check(
        lambda t, a, b: t.nn.utils.rnn.pad_sequence([a, b]),
        rand(2, 3),
        rand(3, 3, dtype="float32"),
    )


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[4, 4, 2, 1], [2, 4, 1, 4], [3]], ids=str)
def test_pack_padded_sequence(lengths, batch_first):
    x = rand(4, len(lengths), 2) if not batch_first else rand(len(lengths), 4, 2)
    sorted_ = lengths == sorted(lengths, reverse=True)

    def pack(t, x):
        p = t.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted=sorted_)
        return tuple(p)  # data, batch_sizes, sorted_indices, unsorted_indices

    check(pack, x)
    check_grad(lambda t, x: pack(t, x)[0], x)

    def round_trip(t, x):
        p = t.nn.utils.rnn.pack_padded_sequence(x, t.tensor(lengths), batch_first, False)
        return t.nn.utils.rnn.pad_packed_sequence(p, batch_first, 9.0, total_length=5)

    check(round_trip, x)
    check_grad(lambda t, x: round_trip(t, x)[0], x)


def test_pack_sequence_and_unpack_sequence():
    a, b, c = rand(2), rand(4, seed=1), rand(1, seed=2)
    check(lambda t, a, b, c: tuple(t.nn.utils.rnn.pack_sequence([a, b, c], False)), a, b, c)
    check(
        lambda t, a, b, c: t.nn.utils.rnn.unpack_sequence(t.nn.utils.rnn.pack_sequence([b, a, c])),
        a,
        b,
        c,
    )
    check_grad(
        lambda t, a, b, c: t.nn.utils.rnn.unpack_sequence(
            t.nn.utils.rnn.pack_sequence([a, b, c], enforce_sorted=False)
        ),
        a,
        b,
        c,
    )


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    x = rand(3, 4, 2)
    f = lambda t, x: t.nn.utils.rnn.unpad_sequence(  # noqa: E731
        x.clone(), t.tensor([3, 1, 2] if batch_first else [2, 4, 1]), batch_first
    )
    check(f, x if batch_first else x.transpose(1, 0, 2).copy())


def test_packed_sequence_is_torchs_namedtuple():
    p = lt.nn.utils.rnn.pack_sequence([lt.ones(2, 3), lt.ones(3, 3)], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert batch_sizes.dtype == lt.int64 and sorted_indices.tolist() == [1, 0]
    assert unsorted_indices.tolist() == [1, 0]
    q = p.double()
    assert q.data.dtype == lt.float64 and q.batch_sizes is p.batch_sizes
    assert p.float() is p and p.to("cpu") is p and not p.is_cuda
    # built from (data, batch_sizes) and a sorted_indices: the inverse is computed
    r = lt.nn.utils.rnn.PackedSequence((data, batch_sizes), sorted_indices=lt.tensor([2, 0, 1]))
    assert r.unsorted_indices.tolist() == [1, 2, 0]
    assert repr(lt.nn.utils.rnn.pack_sequence([lt.tensor([1, 2]), lt.tensor([3])])) == (
        "PackedSequence(data=tensor([1, 3, 2]), batch_sizes=tensor([2, 1]), "
        "sorted_indices=None, unsorted_indices=None)"
    )


# -- errors: torch's exception types ----------------------------------------------------------------
def _module(name: str, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """The module built for `t` (torch or lazytorch), same constructor."""
    return lambda t: getattr(t.nn, name)(*args, **kwargs).double()


MODULE_ERRORS = {
    "input_rank": (_module("LSTM", 3, 4), lambda m, t: m(t.zeros(2, 3, 3, 1, dtype=t.float64))),
    "rnn_rank": (_module("RNN", 3, 4), lambda m, t: m(t.zeros(3, dtype=t.float64))),
    "input_size": (_module("GRU", 3, 4), lambda m, t: m(t.zeros(5, 2, 4, dtype=t.float64))),
    "dtype": (_module("GRU", 3, 4), lambda m, t: m(t.zeros(5, 2, 3))),
    "hidden_size": (
        _module("GRU", 3, 4, 2),
        lambda m, t: m(t.zeros(5, 2, 3, dtype=t.float64), t.zeros(1, 2, 4, dtype=t.float64)),
    ),
    "hidden_rank": (
        _module("RNN", 3, 4),
        lambda m, t: m(t.zeros(5, 2, 3, dtype=t.float64), t.zeros(2, 4, dtype=t.float64)),
    ),
    "cell_state_size": (
        _module("LSTM", 3, 4),
        lambda m, t: m(
            t.zeros(5, 2, 3, dtype=t.float64),
            (t.zeros(1, 2, 4, dtype=t.float64), t.zeros(1, 3, 4, dtype=t.float64)),
        ),
    ),
    "cell_state_rank": (
        _module("LSTM", 3, 4),
        lambda m, t: m(
            t.zeros(5, 3, dtype=t.float64),
            (t.zeros(1, 4, dtype=t.float64), t.zeros(1, 1, 4, dtype=t.float64)),
        ),
    ),
    "empty_sequence": (_module("LSTM", 3, 4), lambda m, t: m(t.zeros(0, 2, 3, dtype=t.float64))),
    "packed_hidden_batch": (
        _module("GRU", 3, 4),
        lambda m, t: m(
            t.nn.utils.rnn.pack_sequence([t.zeros(3, 3, dtype=t.float64)] * 2),
            t.zeros(1, 3, 4, dtype=t.float64),
        ),
    ),
    "cell_input_size": (_module("RNNCell", 3, 4), lambda m, t: m(t.zeros(2, 5, dtype=t.float64))),
    "cell_batch": (
        _module("GRUCell", 3, 4),
        lambda m, t: m(t.zeros(2, 3, dtype=t.float64), t.zeros(1, 4, dtype=t.float64)),
    ),
    "cell_hidden_size": (
        _module("LSTMCell", 3, 4),
        lambda m, t: m(
            t.zeros(2, 3, dtype=t.float64),
            (t.zeros(2, 4, dtype=t.float64), t.zeros(2, 5, dtype=t.float64)),
        ),
    ),
    "cell_rank": (_module("LSTMCell", 3, 4), lambda m, t: m(t.zeros(1, 2, 3, dtype=t.float64))),
    "cell_nonlinearity": (
        _module("RNNCell", 3, 4, nonlinearity="gelu"),
        lambda m, t: m(t.zeros(2, 3, dtype=t.float64)),
    ),
}


@pytest.mark.parametrize("case", MODULE_ERRORS)
def test_forward_errors_match_torch(case):
    build, call = MODULE_ERRORS[case]
    check_raises(lambda t: call(build(t), t))


CONSTRUCTOR_ERRORS = {
    "gru_proj": lambda t: t.nn.GRU(3, 4, proj_size=2),
    "proj_too_big": lambda t: t.nn.LSTM(3, 4, proj_size=4),
    "dropout_range": lambda t: t.nn.LSTM(3, 4, dropout=1.5),
    "nonlinearity": lambda t: t.nn.RNN(3, 4, nonlinearity="gelu"),
    "hidden_type": lambda t: t.nn.RNN(3, 4.0),
    "hidden_zero": lambda t: t.nn.RNN(3, 0),
    "layers_zero": lambda t: t.nn.GRU(3, 4, 0),
    "bias_type": lambda t: t.nn.GRU(3, 4, bias=1),
}


@pytest.mark.parametrize("case", CONSTRUCTOR_ERRORS)
def test_constructor_errors_match_torch(case):
    check_raises(CONSTRUCTOR_ERRORS[case])


UTILS_ERRORS = {
    "unsorted_enforced": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.zeros(4, 2), [1, 3]),
    "zero_length": lambda t: t.nn.utils.rnn.pack_padded_sequence(
        t.zeros(4, 2), [3, 0], False, False
    ),
    "lengths_count": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.zeros(4, 2), [3, 2, 1]),
    "empty_pad": lambda t: t.nn.utils.rnn.pad_sequence([]),
    "padding_side": lambda t: t.nn.utils.rnn.pad_sequence([t.zeros(2)], padding_side="middle"),
    "trailing_dims": lambda t: t.nn.utils.rnn.pad_sequence([t.zeros(2, 3), t.zeros(3, 2)]),
    "total_length": lambda t: t.nn.utils.rnn.pad_packed_sequence(
        t.nn.utils.rnn.pack_sequence([t.zeros(3)]), total_length=2
    ),
}


@pytest.mark.parametrize("case", UTILS_ERRORS)
def test_utils_errors_match_torch(case):
    check_raises(UTILS_ERRORS[case])


# -- the module API ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("RNN", dict(num_layers=2, nonlinearity="relu", bias=False, bidirectional=True)),
        ("LSTM", dict(num_layers=2, proj_size=2, bidirectional=True, batch_first=True)),
        ("LSTM", dict(proj_size=3, bias=False)),
        ("GRU", dict(num_layers=3, dropout=0.25)),
        ("RNNCell", dict(bias=False, nonlinearity="relu")),
        ("LSTMCell", dict()),
        ("GRUCell", dict(bias=False)),
    ],
)
def test_parameters_state_dict_and_repr_match_torch(name, kwargs):
    theirs = getattr(torch.nn, name)(5, 4, **kwargs)
    ours = getattr(lt.nn, name)(5, 4, **kwargs)
    assert repr(ours) == repr(theirs)
    t_state, l_state = theirs.state_dict(), ours.state_dict()
    assert list(l_state) == list(t_state)
    for k in t_state:
        assert tuple(l_state[k].shape) == tuple(t_state[k].shape), k
        # torch's init: U(-1/sqrt(hidden), 1/sqrt(hidden)) for every weight and bias
        values = l_state[k].numpy()
        assert np.abs(values).max() <= 0.5 and values.std() > 0.1, k
    if not name.endswith("Cell"):
        assert ours._all_weights == theirs._all_weights
        assert [[tuple(p.shape) for p in ps] for ps in ours.all_weights] == [
            [tuple(p.shape) for p in ps] for ps in theirs.all_weights
        ]
        ours.flatten_parameters()  # accepted, nothing to do


def test_one_input_matmul_per_layer_and_direction():
    """The input projection covers the whole sequence: per layer and direction one matmul
    for the input and one per step for the recurrence."""
    m = lt.nn.LSTM(IN, HID, num_layers=2, bidirectional=True)
    lt.materialize(*m.parameters())
    out, _ = m(lt.randn(6, N, IN))
    ops = [str(i.op) for i in lt.debug.program(out).instrs]
    assert ops.count("matmul") == 2 * 2 * (1 + 6)


@pytest.mark.parametrize("mode", ["sync", "cpp"])
def test_packed_lstm_in_sync_mode_and_compiled(mode):
    """The same packed run, op by op (sync) and through the C++ backend."""
    theirs, ours = pair("LSTM", IN, HID, bidirectional=True)
    x = rand(5, 4, IN)

    def call(lib, m, x):
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, LENGTHS, enforce_sorted=False)
        out, (h, c) = m(packed)
        return lib.nn.utils.rnn.pad_packed_sequence(out)[0], h, c

    want, t_leaves = run(torch, theirs, call, {"x": x})
    with lt.sync_mode(mode == "sync"), lt.backend("cpp" if mode == "cpp" else "interpreter"):
        got, l_leaves = run(lt, ours, call, {"x": x})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), **TOL["float64"])
        np.testing.assert_allclose(
            l_leaves["x"].grad.numpy(), t_leaves["x"].grad.numpy(), **GRAD_TOL["float64"]
        )
        np.testing.assert_allclose(
            ours.weight_hh_l0_reverse.grad.numpy(),
            theirs.weight_hh_l0_reverse.grad.numpy(),
            **GRAD_TOL["float64"],
        )
