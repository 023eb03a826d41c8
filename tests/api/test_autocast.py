"""``autocast`` against torch's: the op policies (tables and results), the state API, nesting,
where casts happen, and what they cost.

The tables are checked against the installed torch's own dispatcher (which ops have an
``AutocastCPU``/``AutocastCUDA`` kernel); every CPU-listed op lazytorch has runs under
``autocast("cpu")`` next to torch's, through `check` (dtype and values, lazy and sync). The
CUDA lists cannot run against torch here (torch is a CPU build): they are checked by
running the CUDA table on CPU tensors and comparing with the op on float32 inputs.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check
from lazytorch.ops import autocast as ac
from lazytorch.ops.autocast_policy import LACKING, POLICIES, PUBLIC, RESOLVERS

F = lt.nn.functional
# the autocast dtypes tested against torch
LOW = ["float16", "bfloat16"]


# -- the tables are torch's ------------------------------------------------------------------------
def _torch_listed(key: str) -> set[str]:
    """The aten ops (overloads folded) with a kernel for dispatch key `key` in this torch."""
    names = set()
    for s in torch._C._jit_get_all_schemas():
        name = str(s.name) + (f".{s.overload_name}" if s.overload_name else "")
        try:
            if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
                names.add(name.removeprefix("aten::").split(".")[0])
        except RuntimeError:  # a schema without a registered operator
            pass
    return names


# ops in our table torch reaches through a decomposition, not a listing of their own
DECOMPOSED = {"cuda": {"cross_entropy_loss"}, "cpu": set()}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_policy_tables_list_exactly_torchs_ops(device):
    listed = _torch_listed({"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}[device])
    ours = set(POLICIES[device]) - DECOMPOSED[device]
    assert sorted(ours - listed) == [] and sorted(listed - ours) == []


def test_every_listed_op_is_followed_by_a_public_name_or_named_lacking():
    followed = {op for names in PUBLIC.values() for op in names.values()}
    for name, (_, choices) in RESOLVERS.items():
        followed = (followed - {name}) | set(choices)
    listed = set(POLICIES["cpu"]) | set(POLICIES["cuda"])
    assert sorted(listed - followed - LACKING) == []
    assert sorted(LACKING & followed) == []
    assert sorted(LACKING - listed) == []


def test_every_public_name_is_bound_to_its_autocast_wrapper():
    spaces = {
        "torch": vars(lt),
        "Tensor": vars(lt.Tensor),
        "F": vars(F),
        "linalg": vars(lt.linalg),
    }
    for space, names in PUBLIC.items():
        for name, op in names.items():  # (op: an aten op, or a RESOLVERS choice)
            assert name in spaces[space], f"{space}.{name} is listed but lazytorch lacks it"
            assert getattr(spaces[space][name], "autocast_op", None) == op, f"{space}.{name}"
    assert lt.matmul is lt.Tensor.matmul is lt.linalg.matmul  # one wrapper per op function
    assert not hasattr(lt.Tensor.add, "autocast_op")  # unlisted ops are not wrapped
    assert not hasattr(lt.Tensor.exp_, "autocast_op")  # nor in-place variants


# -- CPU policies against torch ----------------------------------------------------------------------
def _cases(d: str) -> dict[str, tuple]:
    """name -> (fn(t, *inputs), inputs): every CPU-listed op lazytorch has; `d` is the
    dtype of the floating inputs (each input drawn with its own seed: the same values
    whichever test runs first)."""
    seeds = itertools.count()

    def a(*shape: int, **kw: object) -> np.ndarray:
        return arr(*shape, seed=next(seeds), **kw)  # type: ignore[arg-type]

    def whole(*shape: int, dtype: str = "float32") -> np.ndarray:
        """Integers in [-2, 2]: products and sums exact in the low dtypes, so a result
        shows the cast policy and not the kernel's rounding order."""
        return np.round(a(*shape, dtype="float64")).astype(dtype)

    x34, x45, x35 = a(3, 4, dtype=d), a(4, 5, dtype=d), a(3, 5, dtype=d)
    b234, b245, b235 = a(2, 3, 4, dtype=d), a(2, 4, 5, dtype=d), a(2, 3, 5, dtype=d)
    prob = a(3, 4, dtype=d, low=0.05, high=0.95)
    target = np.array([1, 0, 3], dtype=np.int64)
    vol = a(1, 2, 4, 4, 4, dtype=d)
    return {
        # lower_precision_fp
        "matmul": (lambda t, a, b: t.matmul(a, b), x34, x45),
        "Tensor.matmul": (lambda t, a, b: a.matmul(b), x34, x45),
        "operator @": (lambda t, a, b: a @ b, x34, x45),
        "linalg.matmul": (lambda t, a, b: t.linalg.matmul(a, b), x34, x45),
        "mm": (lambda t, a, b: t.mm(a, b), x34, x45),
        "bmm": (lambda t, a, b: a.bmm(b), b234, b245),
        "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b, alpha=0.5), b235, b234, b245),
        "addmm": (lambda t, c, a, b: c.addmm(a, b, beta=2.0), x35, x34, x45),
        "linear": (lambda t, x, w, b: t.nn.functional.linear(x, w, b), x34, x45.T.copy(), a(5)),
        "conv1d": (
            lambda t, x, w: t.nn.functional.conv1d(x, w),
            a(1, 2, 8, dtype=d),
            a(3, 2, 3),
        ),
        "conv2d": (
            lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, padding=1),
            a(1, 2, 5, 5, dtype=d),
            a(3, 2, 3, 3),
            a(3),
        ),
        "conv3d": (lambda t, x, w: t.nn.functional.conv3d(x, w), vol, a(2, 2, 2, 2, 2)),
        "conv_transpose1d": (
            lambda t, x, w: t.nn.functional.conv_transpose1d(x, w, stride=2),
            whole(1, 2, 5, dtype=d),
            whole(2, 3, 3),
        ),
        "conv_transpose2d": (
            lambda t, x, w: t.nn.functional.conv_transpose2d(x, w),
            whole(1, 2, 4, 4, dtype=d),
            whole(2, 3, 2, 2),
        ),
        "conv_transpose3d": (
            lambda t, x, w: t.nn.functional.conv_transpose3d(x, w),
            whole(1, 2, 3, 3, 3, dtype=d),
            whole(2, 2, 2, 2, 2),
        ),
        "scaled_dot_product_attention": (
            lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True
            ),
            a(1, 2, 4, 8, dtype=d),
            a(1, 2, 4, 8),
            a(1, 2, 4, 8),
        ),
        # fp32
        "prod": (lambda t, x: t.prod(x, 1), a(3, 4, dtype=d, low=0.5, high=1.5)),
        "Tensor.prod": (lambda t, x: x.prod(), a(2, 3, dtype=d, low=0.5, high=1.5)),
        "quantile": (lambda t, x: t.quantile(x, 0.3, dim=1), x34),
        "cdist": (lambda t, a, b: t.cdist(a, b), x34, a(2, 4, dtype=d)),
        "trace": (lambda t, x: x.trace(), a(4, 4, dtype=d)),
        "mse_loss": (lambda t, a, b: t.nn.functional.mse_loss(a, b), x34, a(3, 4)),
        "l1_loss": (lambda t, a, b: t.nn.functional.l1_loss(a, b), x34, a(3, 4)),
        "smooth_l1_loss": (lambda t, a, b: t.nn.functional.smooth_l1_loss(a, b), x34, a(3, 4)),
        "nll_loss": (lambda t, x, y: t.nn.functional.nll_loss(x, y), x34, target),
        "cross_entropy": (lambda t, x, y: t.nn.functional.cross_entropy(x, y), x34, target),
        "binary_cross_entropy": (
            lambda t, p, y: t.nn.functional.binary_cross_entropy(p, y),
            prob,
            a(3, 4, low=0, high=1),
        ),
        "binary_cross_entropy_with_logits": (
            lambda t, x, y: t.nn.functional.binary_cross_entropy_with_logits(x, y),
            x34,
            a(3, 4, low=0, high=1),
        ),
        "avg_pool3d": (lambda t, x: t.nn.functional.avg_pool3d(x, 2), vol),
        "max_pool3d": (lambda t, x: t.nn.functional.max_pool3d(x, 2), vol),
        "adaptive_avg_pool3d": (lambda t, x: t.nn.functional.adaptive_avg_pool3d(x, 2), vol),
        "adaptive_max_pool3d": (lambda t, x: t.nn.functional.adaptive_max_pool3d(x, 2), vol),
        "grid_sample": (
            lambda t, x, g: t.nn.functional.grid_sample(x, g, align_corners=False),
            a(1, 2, 4, 4, dtype=d),
            a(1, 3, 3, 2, low=-1, high=1),
        ),
        # fp32 through a choice of aten op by the arguments
        "pad_reflect": (
            lambda t, x: t.nn.functional.pad(x, (1, 2), mode="reflect"),
            a(1, 2, 5, dtype=d),
        ),
        "pad_replicate": (
            lambda t, x: t.nn.functional.pad(x, (1, 1, 2, 0), mode="replicate"),
            a(1, 2, 4, 4, dtype=d),
        ),
        "pad_constant_not_listed": (
            lambda t, x: t.nn.functional.pad(x, (1, 1)),
            a(2, 3, dtype=d),
        ),
        "interpolate_area_3d": (
            lambda t, x: t.nn.functional.interpolate(x, size=(3, 3, 3), mode="area"),
            vol,
        ),
        "interpolate_nearest_not_on_cpu": (
            lambda t, x: t.nn.functional.interpolate(x, scale_factor=2),
            a(1, 2, 3, dtype=d),
        ),
        "max_pool3d_with_indices_not_listed": (
            lambda t, x: t.nn.functional.max_pool3d(x, 2, return_indices=True),
            vol,
        ),
        # promote
        "cat": (lambda t, a, b: t.cat([a, b]), x34, a(2, 4)),
        "cat_low": (lambda t, a, b: t.cat([a.half(), b.half()], 1), x34, x35),
        "concat": (lambda t, a, b: t.concat([a, b]), x34, a(2, 4, dtype="float16")),
        "stack": (lambda t, a, b: t.stack([a, b]), x34, a(3, 4)),
        "index_copy": (
            lambda t, x, s: x.index_copy(0, t.tensor([2, 0]), s),
            x34,
            a(2, 4),
        ),
    }


CASE_NAMES = sorted(_cases("float32"))


@pytest.mark.parametrize("low", LOW)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", CASE_NAMES)
def test_cpu_policy_matches_torch(name, dtype, low):
    fn, *inputs = _cases(dtype)[name]

    def under_autocast(t, *xs):
        with t.autocast("cpu", dtype=getattr(t, low)):
            return fn(t, *xs)

    check(under_autocast, *inputs)


UNLISTED_ON_CPU = {
    "add": lambda t, a, b: a + b,
    "exp": lambda t, a, b: a.exp(),
    "softmax": lambda t, a, b: t.softmax(a, -1),
    "log_softmax": lambda t, a, b: a.log_softmax(-1),
    "sum": lambda t, a, b: a.sum(),
    "relu_of_mm": lambda t, a, b: t.relu(a @ b.T) * 2,
    "pow": lambda t, a, b: a**2,
    "layer_norm": lambda t, a, b: t.nn.functional.layer_norm(a, (4,)),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", sorted(UNLISTED_ON_CPU))
def test_ops_torch_does_not_list_for_the_cpu_keep_their_dtypes(name, dtype):
    fn = UNLISTED_ON_CPU[name]

    def under_autocast(t, a, b):
        with t.autocast("cpu", dtype=t.float16):
            return fn(t, a, b)

    check(under_autocast, arr(3, 4, dtype=dtype), arr(3, 4, dtype=dtype))


def test_float64_integer_and_low_dtype_inputs_are_left_as_they_are():
    def f(t, a64, i, a16, b16):
        with t.autocast("cpu", dtype=t.float16):
            return t.matmul(a64, a64.T), t.cat([i, i]), t.matmul(a16, b16), t.stack([a64, a64])

    check(
        f,
        arr(3, 3, dtype="float64"),
        arr(2, 3, dtype="int64"),
        arr(2, 3, dtype="float16"),
        arr(3, 2, dtype="float16"),
    )
    a16 = lt.from_numpy(arr(2, 3, dtype="float16"))
    with lt.autocast("cpu", dtype=lt.float16):
        y = a16 @ a16.T
    assert y._node.inputs[0].op.name != "cast"  # a tensor already in the low dtype: no cast


def test_mixed_float32_and_float16_operands_meet_in_the_low_dtype():
    # outside autocast torch refuses a float16 @ float32 product; inside, both are cast
    def f(t, a, b):
        with t.autocast("cpu", dtype=t.float16):
            return a @ b, t.nn.functional.mse_loss(a @ b, t.zeros(3, 5))

    check(f, arr(3, 4, dtype="float16"), arr(4, 5))


# -- gradients ---------------------------------------------------------------------------------------
def _linear_grads(lib):
    rng = np.random.default_rng(3)
    w = lib.nn.Parameter(lib.from_numpy(rng.standard_normal((4, 3)).astype(np.float32)))
    b = lib.nn.Parameter(lib.from_numpy(rng.standard_normal(4).astype(np.float32)))
    x = lib.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
    with lib.autocast("cpu", dtype=lib.float16):
        y = lib.nn.functional.linear(x, w, b).relu()
        loss = lib.nn.functional.cross_entropy(y, lib.tensor([0, 1, 2, 3, 0]))
    loss.backward()
    return y.dtype, loss.dtype, w.grad, b.grad


def test_gradients_reach_float32_parameters_in_float32_like_torch():
    ours, theirs = _linear_grads(lt), _linear_grads(torch)
    assert [str(d).split(".")[1] for d in ours[:2]] == [str(d).split(".")[1] for d in theirs[:2]]
    for g, w in zip(ours[2:], theirs[2:]):
        assert g.dtype is lt.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-3, atol=2e-3)


# -- the state API, nesting, decorator ---------------------------------------------------------------
def test_state_functions_match_torchs():
    for lib in (lt, torch):
        assert lib.is_autocast_enabled("cpu") is False and lib.is_autocast_enabled() is False
        assert str(lib.get_autocast_dtype("cpu")).endswith("bfloat16")
        assert str(lib.get_autocast_dtype("cuda")).endswith("float16")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert str(lib.get_autocast_gpu_dtype()).endswith("float16")
            assert lib.is_autocast_cpu_enabled() is False
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled("cuda")
            assert lib.get_autocast_dtype("cpu") is lib.float16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert lib.get_autocast_dtype("cpu") is lib.get_autocast_dtype("cpu")
            assert lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled("cpu")
        assert str(lib.get_autocast_dtype("cpu")).endswith("bfloat16")
        assert lib.amp.is_autocast_available("cpu") and not lib.amp.is_autocast_available("meta")


def test_nesting_disabled_blocks_and_decorator_run_ops_as_torch():
    def f(t, a, b):
        out = []

        @t.autocast("cpu", dtype=t.float16)
        def decorated(x, y):
            return x @ y

        with t.autocast("cpu", dtype=t.float16):
            out.append(a @ b)
            with t.autocast("cpu", enabled=False):
                out.append(a @ b)
                out.append(decorated(a, b))
            out.append(a @ b)
        out.append(a @ b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's deprecation of the spelling
            with t.cpu.amp.autocast(dtype=t.float16):
                out.append(a @ b)
        return out

    check(f, arr(3, 4), arr(4, 5))


def test_autocast_arguments_are_checked_as_torch():
    for lib in (lt, torch):
        with pytest.raises(ValueError, match="device_type"):
            lib.autocast(0)
        with pytest.raises(RuntimeError):  # torch: "unsupported scalarType"
            lib.autocast("meta")
        with pytest.raises(TypeError, match="requires a callable"):
            lib.autocast("cpu")(3)
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float32):
                assert not lib.is_autocast_enabled("cpu")
        if not lib.cuda.is_available():
            with pytest.warns(UserWarning, match="Disabling autocast"):
                with lib.autocast("cuda"):
                    assert not lib.is_autocast_enabled("cuda")
    with pytest.raises(RuntimeError, match="unsupported device type"):
        lt.is_autocast_enabled("foo")


def test_a_tensor_of_another_device_type_is_untouched():
    # cuda autocast on, CPU tensors: torch leaves them alone (set directly: no GPU here)
    for lib in (lt, torch):
        lib.set_autocast_enabled("cuda", True)
        try:
            a = lib.ones(2, 2)
            assert (a @ a).dtype is lib.float32 and a.exp().dtype is lib.float32
        finally:
            lib.set_autocast_enabled("cuda", False)


def test_autocast_state_is_per_thread():
    import threading

    seen = []
    with lt.autocast("cpu", dtype=lt.float16):
        t = threading.Thread(target=lambda: seen.append((lt.ones(2, 2) @ lt.ones(2, 2)).dtype))
        t.start()
        t.join()
    assert seen == [lt.float32] and ac.enabled_anywhere == 0


def test_custom_fwd_casts_inputs_and_runs_forward_without_autocast():
    def run(lib):
        class Mul(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a @ b  # autocast is off in here: a float32 product

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g @ b.T, a.T @ g

        a = lib.ones(2, 3, dtype=lib.float16, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            y = Mul.apply(a, lib.ones(3, 2))
        y.sum().backward()
        return y.dtype, a.grad.dtype

    assert [str(d) for d in run(lt)] == [str(d).replace("torch", "lazytorch") for d in run(torch)]


# -- the CUDA lists, run on CPU tensors ---------------------------------------------------------------
@pytest.fixture
def cuda_table_on_cpu(monkeypatch):
    """Autocast on CPU tensors with torch's CUDA table (torch here cannot run CUDA autocast)."""
    monkeypatch.setitem(POLICIES, "cpu", POLICIES["cuda"])


CUDA_CASES = {  # name -> (fn, dtype of the result from float16 inputs)
    "softmax": (lambda t, a, b: t.softmax(a, -1), "float32"),
    "Tensor.log_softmax": (lambda t, a, b: a.log_softmax(-1), "float32"),
    "F.softmin": (lambda t, a, b: t.nn.functional.softmin(a, -1), "float32"),
    "softmax_dtype_given": (lambda t, a, b: a.softmax(-1, dtype=t.float16), "float16"),
    "sum": (lambda t, a, b: a.sum(1), "float32"),
    "cumsum": (lambda t, a, b: a.cumsum(0), "float32"),
    "exp": (lambda t, a, b: a.exp(), "float32"),
    "log": (lambda t, a, b: t.log(a.abs() + 1), "float32"),
    "pow": (lambda t, a, b: a**2, "float32"),
    "rpow": (lambda t, a, b: 2**a, "float32"),
    "norm": (lambda t, a, b: a.norm(), "float32"),
    "vector_norm": (lambda t, a, b: t.linalg.vector_norm(a), "float32"),
    "layer_norm": (lambda t, a, b: t.nn.functional.layer_norm(a, (4,)), "float32"),
    "matmul": (lambda t, a, b: a @ b.T, "float16"),
    "addcmul_promotes": (lambda t, a, b: t.addcmul(a, b.float(), b), "float32"),
    "addcmul_low": (lambda t, a, b: t.addcmul(a, b, b), "float16"),
    "cat_not_listed": (lambda t, a, b: t.cat([a, b.float()]), "float32"),
    "mean_not_listed": (lambda t, a, b: a.mean(), "float16"),
    "gelu_not_listed": (lambda t, a, b: t.nn.functional.gelu(a), "float16"),
}


@pytest.mark.parametrize("name", sorted(CUDA_CASES))
def test_cuda_policies(cuda_table_on_cpu, name):
    fn, want = CUDA_CASES[name]
    a = lt.from_numpy(arr(3, 4, dtype="float16", low=0.5, high=1.5))
    b = lt.from_numpy(arr(3, 4, dtype="float16", low=0.5, high=1.5))
    with lt.autocast("cpu", dtype=lt.float16):
        got = fn(lt, a, b)
    assert got.dtype.name == want
    # the value: the op on the inputs in the dtype the policy ran it in
    ta, tb = (torch.from_numpy(x.numpy().copy()) for x in (a, b))
    if want == "float32" and name not in ("cat_not_listed", "addcmul_promotes"):
        ta, tb = ta.float(), tb.float()
    np.testing.assert_allclose(
        got.float().numpy(), fn(torch, ta, tb).float().numpy(), rtol=2e-3, atol=2e-3
    )


def test_binary_cross_entropy_is_banned_under_cuda_autocast(cuda_table_on_cpu):
    p = lt.full((2,), 0.5)
    with lt.autocast("cpu", dtype=lt.float16):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, p)


# -- where the cast happens --------------------------------------------------------------------------
def _casts(t: lt.Tensor) -> int:
    """The cast nodes recorded for `t` (its pending graph)."""
    seen, todo, n = set(), [t._node], 0
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        n += node.op.name == "cast"
        todo.extend(node.inputs)
    return n


def test_a_composite_casts_once_at_the_public_surface(cuda_table_on_cpu):
    # F.cross_entropy is listed (fp32); inside it lazytorch calls log_softmax and sums, also
    # listed on CUDA: they must not cast again. One cast: the float16 logits to float32.
    x, y = lt.from_numpy(arr(3, 4, dtype="float16")), lt.tensor([0, 1, 2])
    with lt.autocast("cpu", dtype=lt.float16):
        loss = F.cross_entropy(x, y)
        plain = F.gelu(x, approximate="tanh")  # not listed: its inner pow and tanh stay as is
    x32 = lt.from_numpy(x.numpy().astype(np.float32))
    assert loss.dtype is lt.float32 and _casts(loss) == _casts(F.cross_entropy(x32, y)) + 1
    assert plain.dtype is lt.float16 and _casts(plain) == _casts(F.gelu(x, approximate="tanh"))


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_is_autocast_as_torchs_python_is(need_weights):
    # torch's F.multi_head_attention_forward is Python calling linear, baddbmm, softmax and
    # scaled_dot_product_attention, each autocast; lazytorch's marks itself the user's side
    from benchmarks.models import copy_weights

    torch.manual_seed(0)
    tm, lm = torch.nn.MultiheadAttention(8, 2), lt.nn.MultiheadAttention(8, 2)
    copy_weights(tm, lm, lt)
    x = arr(4, 2, 8)
    mask = np.triu(np.full((4, 4), -np.inf, dtype=np.float32), 1)
    outs = []
    for lib, m in ((torch, tm), (lt, lm)):
        t, am = lib.from_numpy(x.copy()), lib.from_numpy(mask.copy())
        with lib.autocast("cpu", dtype=lib.bfloat16):
            outs.append(m(t, t, t, attn_mask=am, need_weights=need_weights))
    (want, want_w), (got, got_w) = outs
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] == "bfloat16"
    np.testing.assert_allclose(
        got.detach().float().numpy(), want.detach().float().numpy(), rtol=2e-2, atol=2e-2
    )
    if need_weights:
        assert str(got_w.dtype).split(".")[1] == str(want_w.dtype).split(".")[1]


def test_nn_modules_are_the_users_side():
    # torch's nn.Linear is Python calling F.linear, which autocast sees: so is ours
    lin = lt.nn.Linear(3, 2)
    with lt.autocast("cpu", dtype=lt.float16):
        assert lin(lt.ones(4, 3)).dtype is lt.float16
        assert lt.nn.MSELoss()(lin(lt.ones(4, 3)), lt.zeros(4, 2)).dtype is lt.float32


def test_casts_fuse_into_their_neighbours():
    """A cast is a recorded op the scheduler fuses: of computed values into the kernel that
    makes or reads them. Only a leaf (a parameter, the data) that a matmul reads in the low
    dtype costs a kernel of its own — one pass, as torch's cast of a weight."""
    rng = np.random.default_rng(0)
    x, w1, w2 = (
        lt.from_numpy(rng.standard_normal(s).astype(np.float32))
        for s in ((8, 16), (32, 16), (4, 32))
    )
    b1, target = lt.zeros(32), lt.zeros(8, 4)
    lt.materialize(x, w1, w2, b1, target)

    def step():
        h = F.relu(F.linear(x, w1, b1))
        return F.mse_loss(F.linear(h, w2), target)

    plain = lt.debug.schedule(step()).kernels
    with lt.autocast("cpu", dtype=lt.float16):
        y = step()
    amp = lt.debug.schedule(y).kernels
    alone = [k for k in amp if getattr(k, "fused", None) == ["cast"]]
    # the three leaves a matmul reads in float16: x, w1, w2 (h's cast is in its producer)
    assert len(alone) == 3
    assert len(amp) == len(plain) + len(alone)
