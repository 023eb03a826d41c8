"""Tensors sharing memory with NumPy arrays (`lazytorch.ops.numpy_bridge`), against torch.

Each scenario runs the same code on torch and on lazytorch and returns what a user would
print — NumPy arrays and tensor values — at each point; both lists must be equal. The rules
of the module docstring each have a scenario here that fails if the rule breaks (an alias
where torch has none, or a write that does not reach the other side).
"""

from __future__ import annotations

import operator
import re

import numpy as np
import pytest
import torch

import lazytorch


def _vals(*xs):
    return [np.array(x.detach().numpy() if hasattr(x, "detach") else x, copy=True) for x in xs]


def tensor_write_reaches_array(T):
    t = T.ones(5)
    n = t.numpy()
    t.add_(1)
    out = _vals(n)  # read with no cut in between
    t[2] = 7
    return out + _vals(n, t)


def array_write_reaches_tensor(T):
    a = np.ones(5)
    t = T.from_numpy(a)
    np.add(a, 1, out=a)
    out = _vals(t)
    a[0] = -3
    return out + _vals(t, t * 2)


def view_write_reaches_array(T):
    t = T.rand(2, 3) if T is torch else T.from_numpy(RAND.copy())
    n = t.numpy()
    t[1, 1] = 17
    out = _vals(n)
    t[0].mul_(2)
    t.t()[2, 0] = -1
    return out + _vals(n, t)


def numpy_of_a_view_shares(T):
    base = T.arange(12.0).reshape(3, 4)
    row = base[1].numpy()
    row[0] = 50
    col = base.t()[2].numpy()  # strided
    col[2] = 60
    base.add_(1)
    return _vals(base, row, col)


def detach_numpy_shares_with_parameter(T):
    w = T.nn.Parameter(T.arange(4.0))
    n = w.detach().numpy()
    opt = T.optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    out = _vals(n, w)
    n[0] = 9  # NumPy writes into the parameter
    return out + _vals(w, w * 1)


def pending_reader_keeps_value_before_write(T):
    a = np.arange(4.0)
    t = T.from_numpy(a)
    y = t * 2  # pending in lazytorch, computed in torch
    c = t.clone()
    t.add_(1)
    out = _vals(y, c, a)
    a[3] = 100  # a clone does not alias the array
    return out + _vals(c, t, y)


def copy_from_shared_is_a_copy(T):
    a = np.zeros(3, dtype=np.float32)
    t = T.from_numpy(a)
    u = T.empty(3)
    u.copy_(t)
    a[1] = 5
    return _vals(u, t)


def as_tensor_shares_when_nothing_changes(T):
    a = np.arange(3, dtype=np.int64)
    same = T.as_tensor(a)
    cast = T.as_tensor(a, dtype=T.float32)
    a[0] = 42
    return _vals(same, cast)


def non_contiguous_array_is_read_then(T):
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = T.from_numpy(np.ascontiguousarray(a)) if T is lazytorch else T.from_numpy(a.copy())
    return _vals(t)


def training_a_from_numpy_weight(T):
    w_np = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    w = T.from_numpy(w_np).requires_grad_()
    x = T.from_numpy(np.ones((4, 3), dtype=np.float32))
    losses = []
    for _ in range(3):
        loss = (x @ w.t()).pow(2).mean()
        loss.backward()
        with T.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
        losses.append(np.array(w_np, copy=True))  # the user's array follows the weight
    return losses + _vals(w)


RAND = np.random.default_rng(0).random((2, 3)).astype(np.float32)


def asarray_shares_what_it_can(T):
    a = np.arange(4.0)
    t = T.asarray(a)  # shared
    c = T.asarray(a, copy=True)
    f = T.asarray(a, dtype=T.float32)  # another dtype: a copy
    same = T.asarray(t) is t
    a[0] = -1
    t.mul_(2)
    return [np.array(same), *_vals(a, t, c, f, T.asarray([1, 2.5]), T.asarray(3))]


def frombuffer_shares_the_buffer(T):
    b = bytearray(np.arange(6, dtype=np.float32).tobytes())
    t = T.frombuffer(b, dtype=T.float32)
    part = T.frombuffer(b, dtype=T.int32, count=2, offset=8)
    t[1] = 7  # reaches the bytearray (the tensor's own array is not held by the caller)
    out = _vals(np.frombuffer(b, dtype=np.float32), part)
    b[0:4] = np.float32(-2).tobytes()  # and the bytearray's writes reach the tensor
    t.add_(1)
    return out + _vals(t, np.frombuffer(b, dtype=np.float32))


SCENARIOS = [
    asarray_shares_what_it_can,
    frombuffer_shares_the_buffer,
    tensor_write_reaches_array,
    array_write_reaches_tensor,
    view_write_reaches_array,
    numpy_of_a_view_shares,
    detach_numpy_shares_with_parameter,
    pending_reader_keeps_value_before_write,
    copy_from_shared_is_a_copy,
    as_tensor_shares_when_nothing_changes,
    non_contiguous_array_is_read_then,
    training_a_from_numpy_weight,
]


@pytest.mark.parametrize("sync", [False, True], ids=["lazy", "sync"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_numpy_bridge_matches_torch(scenario, sync) -> None:
    if scenario is view_write_reaches_array:
        torch_out = scenario(_FixedRandTorch)
    else:
        torch_out = scenario(torch)
    with lazytorch.sync_mode(sync):
        ours = scenario(lazytorch)
    assert len(ours) == len(torch_out)
    for i, (a, b) in enumerate(zip(torch_out, ours)):
        np.testing.assert_allclose(b, a, rtol=1e-6, err_msg=f"value {i}")


class _FixedRandTorch:
    """torch with ``rand`` giving the scenario's fixed values (shared draws)."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def rand(*shape):
        return torch.from_numpy(RAND.copy())


_FixedRandTorch = _FixedRandTorch()


def test_np_asarray_of_a_tensor_is_read_only() -> None:
    # NumPy functions read lazytorch's value without a copy; a write through np.asarray
    # would change a value other tensors share, so it raises instead
    t = lazytorch.arange(3.0)
    c = t.clone()
    a = np.asarray(t)
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 1
    assert c.tolist() == [0.0, 1.0, 2.0]


def test_dropped_numpy_result_lets_updates_be_lazy() -> None:
    from lazytorch.ops import numpy_bridge

    t = lazytorch.zeros(3)
    t.numpy()  # result dropped at once
    t.add_(1)
    assert id(t) not in numpy_bridge._tensors  # untracked at the write: nothing to keep
    assert t._node.buffer is None  # the update stays pending
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_an_optimizer_runs_the_same_after_its_parameters_were_exported() -> None:
    # LBFGS keeps copies of the parameters (same_value: a node alias) and writes them back
    # with copy_; once w.detach().numpy() shares w's memory, those aliases once shared the
    # array and followed every later write (the trajectory went elsewhere). Exporting must
    # change nothing about the values computed.
    def run(export: bool) -> list[float]:
        w = lazytorch.tensor([[-1.2, 1.0], [0.5, -0.3]], dtype=lazytorch.float64)
        w.requires_grad_()
        opt = lazytorch.optim.LBFGS([w], line_search_fn="strong_wolfe", history_size=5)
        held = []

        def closure():
            opt.zero_grad()
            x, y = w[:, 0], w[:, 1]
            loss = ((1 - x) ** 2 + 100 * (y - x * x) ** 2).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
            if export:
                held.append(w.detach().numpy())  # the arrays stay alive: kept in step
        assert not export or np.array_equal(held[-1], w.detach().numpy())
        return w.detach().reshape(-1).tolist()

    with lazytorch.backend("interpreter"):  # (the values are the point, not the compiler)
        assert run(True) == run(False)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.asarray(T.ones(2), dtype=T.float64, copy=False),
        lambda T: T.asarray([1, 2], copy=False),
        lambda T: T.asarray(np.zeros(2), dtype=T.float32, copy=False),
        lambda T: T.frombuffer(bytearray(16), dtype=T.int32, count=5),
        lambda T: T.frombuffer(bytearray(16), dtype=T.int32, offset=16),
        lambda T: T.frombuffer(bytearray(16), dtype=T.int32, count=0),
        lambda T: T.frombuffer(bytearray(0), dtype=T.float32),
        lambda T: T.frombuffer(bytearray(6), dtype=T.float32),
        lambda T: T.frombuffer([1, 2], dtype=T.float32),
    ],
)
def test_asarray_and_frombuffer_refuse_as_torch(call) -> None:
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(lazytorch)
    assert str(theirs.value).split(" (")[0] in str(ours.value) or theirs.type is TypeError


def test_asarray_copy_false_of_a_strided_array_refuses() -> None:
    # torch aliases a strided array; lazytorch shares only dense ones, so it says so rather
    # than hand back a copy the caller believes is shared
    with pytest.raises(ValueError, match="C-contiguous"):
        lazytorch.asarray(np.zeros(6)[::2], copy=False)
    assert lazytorch.asarray(np.arange(6.0)[::2]).tolist() == [0.0, 2.0, 4.0]


def test_frombuffer_of_read_only_bytes_warns_and_reads() -> None:
    with pytest.warns(UserWarning, match="not writable"):
        t = lazytorch.frombuffer(b"\x00\x00\x80\x3f\x00\x00\x00\x40", dtype=lazytorch.float32)
    assert t.tolist() == [1.0, 2.0]
    t.add_(1)  # a copy: bytes cannot change
    assert t.tolist() == [2.0, 3.0]


def test_asarray_requires_grad_sets_it_on_the_tensor_returned() -> None:
    t = lazytorch.ones(2)
    assert lazytorch.asarray(t, requires_grad=True) is t and t.requires_grad
    leaf = lazytorch.asarray([1.0, 2.0], requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf


# An operator between a tensor and a NumPy array (minimalRL's vtrace.py multiplies a tensor
# by ``(td_target - v).numpy()``): torch's operators return NotImplemented, NumPy computes
# the reflected operator on the tensor's values and wraps the result back into a tensor.
_ARRAY_OPERANDS = [
    np.full((2, 1), 2.0, dtype=np.float32),
    np.array([[0.5], [3.0]]),  # float64: NumPy's promotion, a float64 tensor
    np.array([1, 3]),  # int64, broadcast to (2, 2)
    np.array(4),  # 0-d
]
_TENSOR_OPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "ge", "ne", "eq"]


def _apply(T, op, a, reverse):
    t = T.tensor([[1.5], [-2.0]])
    f = getattr(operator, op)
    try:
        r = f(a, t) if reverse else f(t, a)
    except TypeError as e:
        return type(e)
    return r


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("op", _TENSOR_OPS)
@pytest.mark.parametrize("k", range(len(_ARRAY_OPERANDS)))
def test_tensor_operator_with_an_ndarray_matches_torch(op, k, reverse) -> None:
    a = _ARRAY_OPERANDS[k]
    want, got = (_apply(T, op, a, reverse) for T in (torch, lazytorch))
    if isinstance(want, type):  # torch raises (an array first; ordering comparisons)
        assert got is want, got
        return
    if not isinstance(want, torch.Tensor):  # ``!=``: Python's identity fallback, as torch
        assert type(got) is type(want) and got == want
        return
    assert type(got) is lazytorch.Tensor, type(got)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_rtruediv_with_an_ndarray_matches_torch() -> None:
    a = np.array([[3.0], [1.0]], dtype=np.float32)
    want = torch.tensor([[1.5], [-2.0]]).__rtruediv__(a)
    got = lazytorch.tensor([[1.5], [-2.0]]).__rtruediv__(a)
    assert type(got) is lazytorch.Tensor and got.dtype == lazytorch.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_ndarray_first_operator_raises_as_torch() -> None:
    a = np.ones((2, 1), dtype=np.float32)
    for T in (torch, lazytorch):
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*"):
            a * T.ones(2, 1)


def test_numpy_ufunc_of_a_tensor_is_a_tensor_as_torch() -> None:
    for T in (torch, lazytorch):
        t = T.tensor([0.5, -1.0])
        s, g = np.sin(t), np.greater(t, 0)
        assert isinstance(s, T.Tensor) and isinstance(g, T.Tensor)
        assert str(g.dtype).endswith("uint8")  # torch's __array_wrap__: Booleans as uint8
        np.testing.assert_allclose(s.numpy(), np.sin([0.5, -1.0]).astype(np.float32))
        assert g.tolist() == [1, 0]


# A NumPy scalar beside a tensor is the Python number it holds, as in torch (minimalRL's
# vtrace.py adds ``gamma * cs[i][0] * x``, an np.float32, to a 0-d tensor).
_NUMPY_SCALARS = [np.float32(1.5), np.float16(-2.5), np.int64(3), np.int32(-2), np.bool_(True)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv"])
@pytest.mark.parametrize("k", range(len(_NUMPY_SCALARS)))
def test_numpy_scalar_operand_matches_torch(k, op, dtype) -> None:
    x = _NUMPY_SCALARS[k]
    f = getattr(operator, op)
    if op == "sub" and isinstance(x, np.bool_):  # torch refuses Boolean subtraction
        return
    for reverse in (False, True):
        out = []
        for T in (torch, lazytorch):
            t = T.tensor([2.0, -3.0, 0.5]).to(getattr(T, dtype))
            out.append(f(x, t) if reverse else f(t, x))
        want, got = out
        assert type(got) is lazytorch.Tensor, type(got)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- numpy() of a tensor that requires grad -------------------------------------------------
NUMPY_READS = {
    "numpy()": lambda lib, t: t.numpy(),
    "np.asarray": lambda lib, t: np.asarray(t),
    "np.asarray(dtype)": lambda lib, t: np.asarray(t, dtype=np.float64),
    "np.array": lambda lib, t: np.array(t),
    "result numpy()": lambda lib, t: (t * 2).numpy(),
    "numpy(force=True)": lambda lib, t: t.numpy(force=True),
    "detach().numpy()": lambda lib, t: t.detach().numpy(),
    "no_grad numpy()": lambda lib, t: _under(lib.no_grad(), t.numpy),
    "no_grad np.asarray": lambda lib, t: _under(lib.no_grad(), lambda: np.asarray(t)),
    "inference_mode numpy()": lambda lib, t: _under(lib.inference_mode(), t.numpy),
    "tolist()": lambda lib, t: t.tolist(),
    "item()": lambda lib, t: t.sum().item(),
}


def _under(mode, read):
    with mode:
        return read()


@pytest.mark.parametrize("read", list(NUMPY_READS))
def test_numpy_of_a_tensor_requiring_grad_as_torch(read):
    # torch refuses numpy() (and NumPy's conversion, which calls it) while grad mode is on,
    # so that an array never escapes autograd silently; force=True, detach(), no_grad and
    # tolist()/item() are fine.
    fn = NUMPY_READS[read]
    values = [1.0, 2.0, 3.0]
    try:
        want = fn(torch, torch.tensor(values, requires_grad=True))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=r"numpy\(\): " + re.escape(str(e))):
            fn(lazytorch, lazytorch.tensor(values, requires_grad=True))
        return
    got = fn(lazytorch, lazytorch.tensor(values, requires_grad=True))
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)


def test_numpy_force_of_a_tensor_requiring_grad_shares_memory_as_torch():
    t = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    a = t.numpy(force=True)
    a[0] = 5.0
    assert t.tolist() == [5.0, 2.0]


def test_numpy_of_a_meta_tensor_requiring_grad_names_the_device_first():
    for lib in (torch, lazytorch):
        t = lib.ones(2, device="meta", requires_grad=True)
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            t.numpy()


def test_numpy_of_a_complex_tensor_requiring_grad_is_refused():
    re_ = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    z = lazytorch.complex(re_, re_ * 2)
    for read in (z.numpy, lambda: np.asarray(z)):
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires"):
            read()
    np.testing.assert_array_equal(z.detach().numpy(), [1 + 2j, 2 + 4j])
    np.testing.assert_array_equal(z.numpy(force=True), [1 + 2j, 2 + 4j])


_NOT_COMPARED = {
    "None": None,
    "str": "abc",
    "function": len,
    "list": [1, 2, 3],
    "tuple": (1, 2, 3),
    "object": object(),
    "dtype": "float32",  # (replaced by each library's own dtype below)
}


@pytest.mark.parametrize("name", list(_NOT_COMPARED))
def test_equality_with_what_torch_does_not_compare_is_identity(name):
    # torch's == and != return NotImplemented for such operands: Python compares
    # identities, so ``t == None`` is False and ``t in [None, t]`` works (llama's
    # ``next_token == tokenizer.eos_id`` compared with a method)
    got = []
    for lib in (torch, lazytorch):
        t = lib.tensor([1, 2, 3])
        o = lib.float32 if name == "dtype" else _NOT_COMPARED[name]
        got.append((t == o, t != o, o == t, o != t, t in [o, t], o in [t]))
    assert got[1] == got[0]


@pytest.mark.parametrize("other", [2 + 0j, 2 + 1j, np.int64(2), np.float32(2.0)])
def test_equality_with_complex_and_numpy_scalars_is_elementwise(other):
    want = [
        (torch.tensor([1, 2, 3]) == other).tolist(),
        (torch.tensor([1, 2, 3]) != other).tolist(),
    ]
    t = lazytorch.tensor([1, 2, 3])
    assert [(t == other).tolist(), (t != other).tolist()] == want
