"""Complex tensors (`lazytorch.ops.complex`, pairs of real parts) against torch's.

Each case runs the same function on torch and on lazytorch, in lazy and in sync mode, and
compares the complex values (as NumPy complex arrays), dtypes and shapes; gradients go
through real inputs and a real loss, as rotary embeddings use them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(7)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _values(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, (lt.Tensor, lt.ops.complex.ComplexTensor)):
        return x.detach().numpy()
    return np.asarray(x)


def _dtype_name(x):
    return str(x.dtype).split(".")[-1]


def check(fn, *arrays, rtol=2e-6, atol=1e-6):
    """fn(lib, *tensors) on torch and on lazytorch (lazy and sync): same dtype, shape,
    complexness and values."""
    want = fn(torch, *[torch.tensor(a) for a in arrays])
    for mode in ("lazy", "sync"):
        with lt.sync_mode(mode == "sync"):
            got = fn(lt, *[lt.tensor(a) for a in arrays])
        assert torch.is_complex(want) == lt.is_complex(got), mode
        assert _dtype_name(got) == _dtype_name(want), (mode, got.dtype, want.dtype)
        assert tuple(got.shape) == tuple(want.shape), (mode, got.shape, want.shape)
        np.testing.assert_allclose(_values(got), _values(want), rtol=rtol, atol=atol)


CASES = {
    "polar": (lambda t, r, a: t.polar(r.abs(), a), (3, 4), (3, 4)),
    "complex": (lambda t, a, b: t.complex(a, b), (3, 4), (4,)),
    "view_as_complex": (lambda t, x: t.view_as_complex(x), (3, 4, 2)),
    "view_as_real_of_a_product": (
        lambda t, x, y: t.view_as_real(t.view_as_complex(x) * t.view_as_complex(y)),
        (2, 3, 2),
        (3, 2),
    ),
    "mul_complex": (lambda t, a, b: t.complex(a, b) * t.complex(b, a), (5,), (5,)),
    "mul_real_tensor_left": (lambda t, a, b: a * t.complex(a, b), (5,), (5,)),
    "mul_real_tensor_right": (lambda t, a, b: t.complex(a, b) * b, (5,), (5,)),
    "mul_python_complex": (lambda t, a, b: t.complex(a, b) * (2 - 3j), (5,), (5,)),
    "real_tensor_times_1j": (lambda t, a: a * 1j, (5,)),
    "rsub_python_complex": (lambda t, a: (1 + 1j) - a, (5,)),
    "add_sub": (lambda t, a, b: t.complex(a, b) + t.complex(b, a) - 2.5, (5,), (5,)),
    "radd_number": (lambda t, a, b: 3 + t.complex(a, b), (5,), (5,)),
    "div_complex": (lambda t, a, b: t.complex(a, b) / t.complex(b, a), (6,), (6,)),
    "div_by_tiny_imag": (lambda t, a, b: t.complex(a, b) / t.complex(b, b * 1e-6), (6,), (6,)),
    "div_by_real": (lambda t, a, b: t.complex(a, b) / b, (6,), (6,)),
    "div_by_python_complex": (lambda t, a, b: t.complex(a, b) / (0.5 + 2j), (6,), (6,)),
    "rdiv_number": (lambda t, a, b: 1 / t.complex(a, b), (6,), (6,)),
    "neg_conj": (lambda t, a, b: -t.conj(t.complex(a, b)), (4,), (4,)),
    "abs": (lambda t, a, b: t.abs(t.complex(a, b)), (7,), (7,)),
    "angle": (lambda t, a, b: t.complex(a, b).angle(), (7,), (7,)),
    "exp": (lambda t, a, b: t.complex(a, b).exp(), (7,), (7,)),
    "real_imag": (lambda t, a, b: t.real(t.complex(a, b)) + t.complex(a, b).imag * 2, (7,), (7,)),
    "sum_dim": (lambda t, a, b: t.complex(a, b).sum(-1), (3, 4), (3, 4)),
    "sum_all": (lambda t, a, b: t.complex(a, b).sum(), (3, 4), (3, 4)),
    "mean_keepdim": (lambda t, a, b: t.complex(a, b).mean(0, keepdim=True), (3, 4), (3, 4)),
    "matmul": (lambda t, a, b: t.complex(a, b) @ t.complex(b.T, a.T), (3, 4), (3, 4)),
    "view_flatten": (lambda t, x: t.view_as_complex(x).view(2, 6).flatten(), (3, 4, 2)),
    "reshape_unsqueeze": (lambda t, x: t.view_as_complex(x).reshape(-1).unsqueeze(-1), (3, 4, 2)),
    "permute_transpose": (
        lambda t, x: t.view_as_complex(x).permute(2, 0, 1).transpose(-1, 0),
        (2, 3, 4, 2),
    ),
    "squeeze_expand": (lambda t, x: t.view_as_complex(x).squeeze(1).expand(4, 3), (3, 1, 2)),
    "getitem": (lambda t, x: t.view_as_complex(x)[1:, None, ..., ::2], (3, 4, 5, 2)),
    "getitem_int": (lambda t, x: t.view_as_complex(x)[-1], (3, 4, 2)),
    "cat": (
        lambda t, x, y: t.cat([t.view_as_complex(x), t.view_as_complex(y)], -1),
        (3, 2, 2),
        (3, 4, 2),
    ),
    "stack_with_real": (lambda t, x, y: t.stack([t.view_as_complex(x), y], -1), (3, 2), (3,)),
    "to_complex64": (lambda t, a: a.to(t.complex64) + 1j, (4,)),
    "float64_parts": (lambda t, a, b: t.polar(a.double(), b.double()), (4,), (4,)),
    "eq": (lambda t, x: t.view_as_complex(x) == t.view_as_complex(x).conj(), (4, 2)),
    # torch.exp as a function, and the rotary table some llama ports build as exp(i * freqs)
    "exp_function": (lambda t, a, b: t.exp(t.complex(a, b)), (7,), (7,)),
    "exp_of_1j_times_real": (lambda t, f: t.exp(1j * f), (3, 4)),
    "unbind": (lambda t, x: t.stack(t.view_as_complex(x).unbind(-1)[::-1]), (3, 4, 2)),
    "unbind_function": (lambda t, x: t.unbind(t.view_as_complex(x), 1)[2], (3, 4, 2)),
    "chunk": (lambda t, x: t.view_as_complex(x).chunk(2, dim=-1)[1], (3, 5, 2)),
    "split_sections": (lambda t, x: t.split(t.view_as_complex(x), [1, 3], 1)[1], (3, 4, 2)),
    "narrow_select": (
        lambda t, x: t.narrow(t.view_as_complex(x), 0, 1, 2).select(1, -1),
        (3, 4, 2),
    ),
    "index_select": (
        lambda t, x: t.index_select(t.view_as_complex(x), 1, t.tensor([3, 0, 3])),
        (3, 4, 2),
    ),
    "repeat": (lambda t, x: t.view_as_complex(x).repeat(2, 1, 3), (3, 4, 2)),
    "repeat_interleave_dim": (
        lambda t, x: t.view_as_complex(x).repeat_interleave(2, dim=0),
        (3, 4, 2),
    ),
    "repeat_interleave_flat": (lambda t, x: t.repeat_interleave(t.view_as_complex(x), 2), (3, 2)),
    # FNO's channel mixing of Fourier modes (compl_mul2d), and three operands
    "einsum": (
        lambda t, x, w: t.einsum("bixy,ioxy->boxy", t.view_as_complex(x), t.view_as_complex(w)),
        (2, 3, 4, 5, 2),
        (3, 2, 4, 5, 2),
    ),
    "einsum_three_operands": (
        lambda t, x, y: t.einsum(
            "ij,jk,k->i", t.view_as_complex(x), t.view_as_complex(y), t.view_as_complex(y)[0]
        ),
        (3, 4, 2),
        (4, 4, 2),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_op_matches_torch(name):
    fn, *shapes = CASES[name]
    arrays = [randn(*s) for s in shapes]
    if name == "eq":
        arrays[0][::2, 1] = 0  # real values: equal to their conjugates
    check(fn, *arrays)


def test_dtypes_and_metadata_are_torchs():
    z = lt.polar(lt.ones(2, 3), lt.zeros(2, 3))
    assert z.dtype is lt.complex64 is lt.cfloat and repr(z.dtype) == "lazytorch.complex64"
    assert lt.polar(lt.ones(2, dtype=lt.float64), lt.zeros(2, dtype=lt.float64)).dtype is lt.cdouble
    assert z.shape == (2, 3) and z.ndim == 2 and z.size(-1) == 3 and z.numel() == 6
    assert z.is_complex() and lt.is_complex(z) and not lt.is_complex(lt.ones(1))
    assert z.element_size() == 8 and len(z) == 2 and [w.shape for w in z] == [(3,), (3,)]
    assert isinstance(z.numpy(), np.ndarray) and z.numpy().dtype == np.complex64
    assert lt.complex(lt.tensor(1.0), lt.tensor(-2.0)).item() == 1 - 2j
    assert "1.0000+0.0000j" in repr(z)
    assert not lt.complex(lt.zeros(1), lt.zeros(1)) and lt.complex(lt.zeros(1), lt.ones(1))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(z)


def test_view_as_real_and_view_as_complex_are_views():
    x = lt.zeros(3, 2)
    z = lt.view_as_complex(x)
    x[1, 1] = 5.0  # a write to the pair shows in the complex tensor
    assert z.numpy()[1] == 5j
    lt.view_as_real(z)[0, 0] = 2.0  # and a write through view_as_real in the base
    assert x[0, 0].item() == 2.0
    z[2] = 1 + 3j  # a complex element written into the pair
    np.testing.assert_array_equal(x.numpy()[2], [1.0, 3.0])
    assert lt.view_as_real(z) is x


def _rotary(lib, xq, freqs, w):
    """llama's apply_rotary_emb on a projection of xq: a real loss through complex ops."""
    q = xq @ w
    freqs_cis = lib.polar(lib.ones_like(freqs), freqs)
    q_ = lib.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == q_.ndim - 1 else 1 for i, d in enumerate(q_.shape)]
    out = lib.view_as_real(q_ * freqs_cis.view(*shape)).flatten(2)
    return (out.type_as(q) ** 2).sum() + out.abs().mean()


@pytest.mark.parametrize("sync", [False, True])
def test_rotary_embedding_gradients_match_torch(sync):
    xq, w = randn(2, 5, 8), randn(8, 8)
    freqs = np.outer(np.arange(5), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8)).astype(np.float32)
    tx, tw = torch.tensor(xq, requires_grad=True), torch.tensor(w, requires_grad=True)
    tl = _rotary(torch, tx, torch.tensor(freqs), tw)
    tl.backward()
    with lt.sync_mode(sync):
        lx, lw = lt.tensor(xq, requires_grad=True), lt.tensor(w, requires_grad=True)
        ll = _rotary(lt, lx, lt.tensor(freqs), lw)
        ll.backward()
    np.testing.assert_allclose(ll.item(), tl.item(), rtol=1e-5)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)


def _rotary_exp(lib, x, freqs, w):
    """Rotary embeddings with the table as ``exp(1j * freqs)``, the query heads' complex
    values repeated for grouped keys (repeat_interleave) and a chunk of them kept."""
    q = lib.view_as_complex((x @ w).reshape(*x.shape[:-1], -1, 2))
    z = q * lib.exp(1j * freqs).index_select(0, lib.tensor([2, 0, 1, 3, 4]))
    z = lib.cat(z.repeat_interleave(2, dim=-1).chunk(2, dim=-1)[::-1], -1).narrow(1, 1, 3)
    return (lib.view_as_real(z) ** 2 * lib.arange(2.0)).sum() + z.unbind(0)[1].abs().mean()


def test_exp_repeat_interleave_chunk_gradients_match_torch():
    x, w = randn(2, 5, 8), randn(8, 8)
    freqs = np.outer(np.arange(5), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8)).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tl = _rotary_exp(torch, tx, torch.tensor(freqs), tw)
    tl.backward()
    lx, lw = lt.tensor(x, requires_grad=True), lt.tensor(w, requires_grad=True)
    ll = _rotary_exp(lt, lx, lt.tensor(freqs), lw)
    ll.backward()
    np.testing.assert_allclose(ll.item(), tl.item(), rtol=1e-5)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)


def _div_losses(lib, re, im, num):
    b = lib.complex(re, im)
    out = []
    for q in (1.0 / b, lib.complex(num, num * 0.5) / b, b.reciprocal()):
        out.append((q.real * 1.5 + q.imag * 0.25).sum())
    return sum(out)


@pytest.mark.parametrize("zero", ["imag", "real", "both_mixed"])
def test_complex_division_gradients_where_a_part_is_zero_are_torchs(zero):
    """Smith's division scales by the divisor's larger part; where the other part is 0 the
    gradient is finite (torch's), not NaN from dividing by the zero part and selecting after
    (S4D's kernel divides by A whose imaginary part starts at 0)."""
    rng = np.random.default_rng(4)
    re, im, num = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    if zero in ("imag", "both_mixed"):
        im[::2] = 0.0
    if zero in ("real", "both_mixed"):
        re[1::2] = 0.0
    grads = []
    for lib in (torch, lt):
        r, i, n = (lib.tensor(v, requires_grad=True) for v in (re, im, num))
        _div_losses(lib, r, i, n).backward()
        grads.append([g.grad.numpy() for g in (r, i, n)])
    for ours, theirs in zip(grads[1], grads[0]):
        assert np.isfinite(ours).all()
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_abs_and_norm_gradients_at_a_complex_zero_are_torchs():
    """d|z|/dz at z = 0 is torch's sgn(0) = 0, not the NaN a hypot's 0/0 would give (a
    gradient clipped by clip_grad_norm_ with one zero entry turned NaN)."""
    a = np.random.default_rng(0).standard_normal((3, 4, 2)).astype(np.float32)
    a[0, 0] = 0.0
    grads = []
    for lib in (torch, lt):
        x = lib.tensor(a, requires_grad=True)
        z = lib.view_as_complex(x)
        loss = z.abs().sum() + lib.linalg.vector_norm(z) + lib.linalg.vector_norm(z, 1, dim=1).sum()
        loss.backward()
        grads.append(x.grad.numpy())
    assert np.isfinite(grads[1]).all()
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_complex_parameters_load_state_dict_data_and_clip_grad_norm_as_torch():
    """A Fourier layer's complex weights: a state_dict round trip, ``.data`` (reads share
    the memory, writes reach the parameter) and clip_grad_norm_ over complex gradients."""
    a = np.random.default_rng(1).standard_normal((3, 4, 2)).astype(np.float32)
    got = []
    for lib in (torch, lt):
        src = lib.nn.Module()
        src.w = lib.nn.Parameter(lib.view_as_complex(lib.tensor(a)).clone())
        dst = lib.nn.Module()
        dst.w = lib.nn.Parameter(lib.zeros(3, 4, dtype=lib.cfloat))
        assert not dst.load_state_dict(src.state_dict()).missing_keys
        (dst.w * dst.w).abs().sum().backward()
        total = lib.nn.utils.clip_grad_norm_(dst.parameters(), 1.0)
        d = dst.w.data
        assert not d.requires_grad
        d.mul_(2.0)  # through .data: reaches the parameter
        got.append(
            (
                total.item(),
                lib.view_as_real(dst.w.grad).numpy(),
                lib.view_as_real(dst.w).detach().numpy(),
            )
        )
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-6)
    with pytest.raises(RuntimeError, match="size mismatch for w"):
        small = lt.nn.Module()
        small.w = lt.nn.Parameter(lt.zeros(2, dtype=lt.cfloat))
        small.load_state_dict({"w": lt.zeros(3, dtype=lt.cfloat)})


def test_grad_of_a_complex_leaf_is_torchs():
    """torch's convention for a real loss L of a complex leaf z: z.grad = dL/dre + i dL/dim."""
    a = randn(4, 2)
    tz = torch.view_as_complex(torch.tensor(a)).requires_grad_()
    (tz * (1 - 2j)).abs().sum().backward()
    lz = lt.view_as_complex(lt.tensor(a)).requires_grad_()
    (lz * (1 - 2j)).abs().sum().backward()
    assert lz.is_leaf and lz.grad.dtype is lt.complex64
    np.testing.assert_allclose(lz.grad.numpy(), tz.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_complex_tensor_moves_with_to_and_casts_to_real_with_torchs_warning():
    z = lt.complex(lt.ones(2), lt.full((2,), 2.0))
    assert z.to("cpu").dtype is lt.complex64 and z.to(lt.complex128).dtype is lt.complex128
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = z.to(lt.float32)
    np.testing.assert_array_equal(r.numpy(), [1.0, 1.0])


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        lt.view_as_complex(lt.zeros(3, 3))
    with pytest.raises(RuntimeError, match="only supported for float and double"):
        lt.view_as_complex(lt.zeros(3, 2, dtype=lt.int64))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        lt.view_as_real(lt.zeros(3, 2))
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float"):
        lt.polar(lt.ones(2), lt.ones(2, dtype=lt.float64))
    with pytest.raises(RuntimeError, match="Half, Float or Double"):
        lt.complex(lt.ones(2, dtype=lt.int64), lt.ones(2, dtype=lt.int64))
    with pytest.raises(NotImplementedError, match="complex tensors of float16 parts"):
        lt.polar(lt.ones(2, dtype=lt.float16), lt.ones(2, dtype=lt.float16))
    z = lt.view_as_complex(lt.zeros(3, 2))
    # a real op never takes the pair for a real tensor: it says what is supported
    with pytest.raises(NotImplementedError, match="sigmoid of a complex tensor is not supported"):
        lt.sigmoid(z)
    with pytest.raises(NotImplementedError, match=r"complex tensors .* do not support softmax"):
        z.softmax(0)
    with pytest.raises(RuntimeError, match="same dtype, but got: c10::complex<float> != float"):
        z @ lt.zeros(1, 2)  # torch does not promote a real matrix in a complex product
    with pytest.raises(RuntimeError, match="same dtype, but got: float != c10::complex<float>"):
        lt.zeros(2, 3) @ z
    with pytest.raises(RuntimeError, match="expected scalar type ComplexFloat but found Float"):
        lt.einsum("i,i->", z, lt.ones(3))
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        z.sum().backward()
    with pytest.raises(AttributeError):
        z.no_such_attribute  # noqa: B018


def test_pickle_of_complex_dtypes_keeps_the_singletons():
    import pickle

    assert pickle.loads(pickle.dumps(lt.complex64)) is lt.complex64


def test_a_module_holds_a_complex_buffer_and_moves_it():
    """llama-style models keep their rotary table as a (non-persistent) buffer."""
    m = lt.nn.Module()
    m.register_buffer("freqs_cis", lt.polar(lt.ones(4), lt.arange(4.0)), persistent=False)
    m.to("cpu").float()  # float() casts floating tensors only, as torch's
    assert m.freqs_cis.dtype is lt.complex64 and "freqs_cis" not in m.state_dict()
    with pytest.raises(TypeError, match=r"lazytorch\.Tensor or None expected"):
        m.freqs_cis = "not a tensor"


@pytest.mark.parametrize("op", ["iadd", "isub", "imul", "itruediv", "mul_", "copy_"])
def test_in_place_ops_write_through_the_views_as_torch(op):
    """``z *= w`` writes into z's memory: the real tensor z views sees it (rebinding z to a
    new tensor would leave the view's values silently stale)."""
    a, b = randn(3, 2), randn(3, 2)
    got = []
    for T in (torch, lt):
        x = T.tensor(a)
        z = T.view_as_complex(x)
        w = T.view_as_complex(T.tensor(b))
        if op == "iadd":
            z += w
        elif op == "isub":
            z -= 2.5
        elif op == "imul":
            z *= w
        elif op == "itruediv":
            z /= 1 - 2j
        elif op == "mul_":
            z.mul_(w)
        else:
            z.copy_(w[0])
        got.append(x.numpy())
        assert T.view_as_real(z) is x or T is torch
    np.testing.assert_allclose(got[1], got[0], rtol=2e-6, atol=1e-6)


def test_in_place_op_refuses_a_broadcast_larger_than_self():
    z = lt.view_as_complex(lt.zeros(3, 2))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        z *= lt.view_as_complex(lt.zeros(2, 3, 2))


def test_writes_through_real_imag_and_an_element_reach_the_pair_as_torch():
    got = []
    for T in (torch, lt):
        x = T.ones(3, 2)
        z = T.view_as_complex(x)
        z.real.mul_(3)
        z.imag[1] = 7
        z[2] *= 2j
        got.append(x.numpy().ravel())
    np.testing.assert_array_equal(got[1], got[0])
