"""lazytorch.nn modules against torch.nn.

The layer table drives the parity tests: each case builds the module on both sides from
the same constructor (written once as ``ctor(t)`` with ``t`` torch or lazytorch), copies
torch's weights into lazytorch with ``load_state_dict``, runs both on the same inputs and
compares outputs, the gradients of every parameter and float input, and the state after
the forward (BatchNorm's running statistics). Adding a layer to the table tests it.

The module API itself (registration, iteration, state_dict, repr, hooks, modes, dtype
conversion, clip_grad) has its own tests below the table.
"""

from __future__ import annotations

import copy
import math
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt

TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
GRAD_TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


@pytest.fixture(autouse=True)
def _interpreter():
    # Many small distinct programs: the NumPy interpreter runs them without a compile each.
    with lt.backend("interpreter"):
        yield


def lt_from_torch(x: torch.Tensor) -> lt.Tensor:
    return lt.tensor(x.detach().numpy().copy())


def load_torch_weights(ours: lt.nn.Module, theirs: torch.nn.Module) -> None:
    ours.load_state_dict({k: lt_from_torch(v) for k, v in theirs.state_dict().items()})


# -- the layer table ---------------------------------------------------------------------------
@dataclass
class Case:
    """A module and its inputs. Inputs are specs: ("f", shape) floats that get gradients,
    ("i", shape, high) int64 in [0, high), ("p", shape) probabilities, ("b", shape) 0/1
    floats, ("n", shape) floats without gradients (targets)."""

    ctor: Callable[[Any], Any]
    inputs: list[tuple[Any, ...]]
    modes: tuple[str, ...] = ("train",)
    steps: int = 1
    grad: bool = True
    # float64 tolerance where torch itself computes in float32 (e.g. hardsigmoid's
    # backward multiplies by the float constant 1.0f / 6)
    tol64: dict[str, float] = field(default_factory=dict)


IMG = ("f", (2, 4, 7, 7))
# torch's float64 kernels for these use float32 constants (1.0f / 6 in the backward)
F32_KERNELS = {"hardsigmoid": dict(rtol=1e-7), "hardswish": dict(rtol=1e-7)}

CASES: dict[str, Case] = {
    # linear family
    "linear": Case(lambda t: t.nn.Linear(5, 4), [("f", (3, 5))]),
    "linear_nobias_3d": Case(lambda t: t.nn.Linear(5, 4, bias=False), [("f", (2, 3, 5))]),
    "bilinear": Case(lambda t: t.nn.Bilinear(3, 4, 2), [("f", (5, 3)), ("f", (5, 4))]),
    "identity": Case(lambda t: t.nn.Identity(), [("f", (3, 2))]),
    # embeddings
    "embedding": Case(lambda t: t.nn.Embedding(10, 4), [("i", (3, 5), 10)]),
    "embedding_max_norm": Case(
        lambda t: t.nn.Embedding(6, 4, max_norm=1.5, norm_type=1.0), [("i", (3, 4), 6)], steps=2
    ),
    "embedding_padding": Case(lambda t: t.nn.Embedding(10, 4, padding_idx=1), [("i", (4, 6), 3)]),
    # normalization
    "layer_norm": Case(lambda t: t.nn.LayerNorm(6), [("f", (3, 6))]),
    "layer_norm_2d_noaffine": Case(
        lambda t: t.nn.LayerNorm((3, 6), elementwise_affine=False), [("f", (2, 3, 6))]
    ),
    "layer_norm_nobias": Case(lambda t: t.nn.LayerNorm(6, bias=False), [("f", (4, 6))]),
    "batch_norm1d": Case(lambda t: t.nn.BatchNorm1d(4), [("f", (8, 4))], ("train", "eval"), 2),
    "batch_norm1d_3d": Case(lambda t: t.nn.BatchNorm1d(4), [("f", (5, 4, 3))], ("train", "eval")),
    "batch_norm1d_cumulative": Case(
        lambda t: t.nn.BatchNorm1d(4, momentum=None), [("f", (6, 4))], ("train", "eval"), 3
    ),
    "batch_norm1d_no_stats": Case(
        lambda t: t.nn.BatchNorm1d(4, track_running_stats=False, affine=False),
        [("f", (6, 4))],
        ("train", "eval"),
    ),
    "batch_norm2d": Case(lambda t: t.nn.BatchNorm2d(4), [IMG], ("train", "eval"), 2),
    "batch_norm2d_momentum": Case(
        lambda t: t.nn.BatchNorm2d(4, momentum=0.3, eps=1e-3), [IMG], ("train", "eval"), 2
    ),
    # dropout: identity with p=0 or in eval (random masks are tested statistically below)
    "dropout_p0": Case(lambda t: t.nn.Dropout(0.0), [("f", (4, 5))]),
    "dropout_eval": Case(lambda t: t.nn.Dropout(0.5), [("f", (4, 5))], ("eval",)),
    # convolution
    "conv2d": Case(lambda t: t.nn.Conv2d(4, 6, 3), [IMG]),
    "conv2d_stride_pad": Case(lambda t: t.nn.Conv2d(4, 6, 3, stride=2, padding=1), [IMG]),
    "conv2d_groups_dilation": Case(
        lambda t: t.nn.Conv2d(4, 6, (3, 2), padding=(2, 1), dilation=2, groups=2), [IMG]
    ),
    "conv2d_depthwise_nobias": Case(lambda t: t.nn.Conv2d(4, 4, 3, groups=4, bias=False), [IMG]),
    "conv2d_same": Case(lambda t: t.nn.Conv2d(4, 5, 4, padding="same"), [IMG]),
    "conv2d_valid": Case(lambda t: t.nn.Conv2d(4, 5, 2, padding="valid"), [IMG]),
    "conv2d_reflect": Case(
        lambda t: t.nn.Conv2d(4, 3, 3, padding=1, padding_mode="reflect"), [IMG]
    ),
    "conv2d_circular": Case(
        lambda t: t.nn.Conv2d(4, 3, 3, padding=2, padding_mode="circular"), [IMG]
    ),
    "conv2d_unbatched": Case(lambda t: t.nn.Conv2d(4, 2, 3), [("f", (4, 6, 6))]),
    # pooling
    "max_pool2d": Case(lambda t: t.nn.MaxPool2d(2), [IMG]),
    "max_pool2d_pad_ceil": Case(lambda t: t.nn.MaxPool2d(3, 2, 1, ceil_mode=True), [IMG]),
    "avg_pool2d": Case(lambda t: t.nn.AvgPool2d(2), [IMG]),
    "avg_pool2d_pad": Case(lambda t: t.nn.AvgPool2d(3, 1, 1, count_include_pad=False), [IMG]),
    # shape
    "flatten": Case(lambda t: t.nn.Flatten(), [IMG]),
    "flatten_0_2": Case(lambda t: t.nn.Flatten(0, 2), [IMG]),
    "unflatten": Case(lambda t: t.nn.Unflatten(1, (2, 3)), [("f", (4, 6))]),
    # activations
    **{
        f"act_{name}": Case(ctor, [("f", (4, 5))], tol64=F32_KERNELS.get(name, {}))
        for name, ctor in {
            "relu": lambda t: t.nn.ReLU(),
            "relu6": lambda t: t.nn.ReLU6(),
            "gelu": lambda t: t.nn.GELU(),
            "gelu_tanh": lambda t: t.nn.GELU("tanh"),
            "silu": lambda t: t.nn.SiLU(),
            "tanh": lambda t: t.nn.Tanh(),
            "sigmoid": lambda t: t.nn.Sigmoid(),
            "softmax": lambda t: t.nn.Softmax(dim=1),
            "softmax_dim0": lambda t: t.nn.Softmax(0),
            "log_softmax": lambda t: t.nn.LogSoftmax(dim=1),
            "softmin": lambda t: t.nn.Softmin(dim=-1),
            "leaky_relu": lambda t: t.nn.LeakyReLU(0.2),
            "elu": lambda t: t.nn.ELU(0.7),
            "celu": lambda t: t.nn.CELU(1.5),
            "selu": lambda t: t.nn.SELU(),
            "softplus": lambda t: t.nn.Softplus(beta=2.0, threshold=3.0),
            "hardtanh": lambda t: t.nn.Hardtanh(-0.5, 0.5),
            "mish": lambda t: t.nn.Mish(),
            "hardswish": lambda t: t.nn.Hardswish(),
            "hardsigmoid": lambda t: t.nn.Hardsigmoid(),
            "softsign": lambda t: t.nn.Softsign(),
            "logsigmoid": lambda t: t.nn.LogSigmoid(),
        }.items()
    },
    # a small model through containers
    "sequential_mlp": Case(
        lambda t: t.nn.Sequential(
            t.nn.Linear(6, 8), t.nn.LayerNorm(8), t.nn.GELU(), t.nn.Dropout(0.0), t.nn.Linear(8, 3)
        ),
        [("f", (5, 6))],
    ),
    "sequential_cnn": Case(
        lambda t: t.nn.Sequential(
            t.nn.Conv2d(4, 6, 3, padding=1),
            t.nn.BatchNorm2d(6),
            t.nn.ReLU(),
            t.nn.MaxPool2d(2),
            t.nn.Flatten(),
            t.nn.Linear(6 * 3 * 3, 5),
        ),
        [IMG],
        ("train", "eval"),
        2,
    ),
    # losses
    "cross_entropy": Case(lambda t: t.nn.CrossEntropyLoss(), [("f", (6, 5)), ("i", (6,), 5)]),
    "cross_entropy_options": Case(
        lambda t: t.nn.CrossEntropyLoss(
            weight=t.tensor([1.0, 2.0, 0.5, 1.5, 1.0]), ignore_index=2, label_smoothing=0.1
        ),
        [("f", (8, 5)), ("i", (8,), 5)],
    ),
    "cross_entropy_sum_spatial": Case(
        lambda t: t.nn.CrossEntropyLoss(reduction="sum"), [("f", (2, 4, 3, 3)), ("i", (2, 3, 3), 4)]
    ),
    "cross_entropy_none": Case(
        lambda t: t.nn.CrossEntropyLoss(reduction="none"), [("f", (6, 5)), ("i", (6,), 5)]
    ),
    "cross_entropy_probs": Case(
        lambda t: t.nn.CrossEntropyLoss(label_smoothing=0.2), [("f", (6, 5)), ("p", (6, 5))]
    ),
    "nll": Case(lambda t: t.nn.NLLLoss(), [("f", (6, 5)), ("i", (6,), 5)]),
    "nll_weight_ignore": Case(
        lambda t: t.nn.NLLLoss(weight=t.tensor([1.0, 0.5, 2.0]), ignore_index=0),
        [("f", (7, 3)), ("i", (7,), 3)],
    ),
    "mse": Case(lambda t: t.nn.MSELoss(), [("f", (4, 5)), ("n", (4, 5))]),
    "mse_sum": Case(lambda t: t.nn.MSELoss(reduction="sum"), [("f", (4, 5)), ("n", (4, 5))]),
    "l1": Case(lambda t: t.nn.L1Loss(), [("f", (4, 5)), ("n", (4, 5))]),
    "smooth_l1": Case(lambda t: t.nn.SmoothL1Loss(beta=0.5), [("f", (4, 5)), ("n", (4, 5))]),
    "bce": Case(lambda t: t.nn.BCELoss(), [("p", (4, 5)), ("b", (4, 5))], grad=True),
    "bce_with_logits": Case(lambda t: t.nn.BCEWithLogitsLoss(), [("f", (4, 5)), ("b", (4, 5))]),
    "bce_with_logits_pos_weight": Case(
        lambda t: t.nn.BCEWithLogitsLoss(
            pos_weight=t.tensor([1.0, 2.0, 3.0, 0.5, 1.0]), reduction="none"
        ),
        [("f", (4, 5)), ("b", (4, 5))],
    ),
}


def make_inputs(case: Case, dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for spec in case.inputs:
        kind, shape = spec[0], spec[1]
        if kind in ("f", "n"):
            out.append(rng.standard_normal(shape).astype(dtype))
        elif kind == "i":
            out.append(rng.integers(0, spec[2], size=shape).astype(np.int64))
        elif kind == "p":
            p = rng.uniform(0.05, 0.95, size=shape)
            out.append(p.astype(dtype))
        elif kind == "b":
            out.append((rng.random(shape) < 0.5).astype(dtype))
    return out


def build(case: Case, dtype: str) -> tuple[Any, Any]:
    """The torch and lazytorch modules of `case`, in `dtype`, with torch's weights."""
    torch.manual_seed(0)
    theirs = case.ctor(torch)
    ours = case.ctor(lt)
    if dtype == "float64":
        theirs, ours = theirs.double(), ours.double()
    load_torch_weights(ours, theirs)
    return theirs, ours


def assert_close(ours: Any, theirs: torch.Tensor, tol: dict[str, float], what: str) -> None:
    assert ours is not None, f"{what}: lazytorch has no value (torch has one)"
    a = np.asarray(ours.detach().numpy())
    b = theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    assert str(a.dtype) == str(b.dtype), f"{what}: dtype {a.dtype} != {b.dtype}"
    np.testing.assert_allclose(a, b, err_msg=what, **tol)


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's, about its own copy
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_torch(name: str, dtype: str) -> None:
    case = CASES[name]
    extra = case.tol64 if dtype == "float64" else {}
    tol = {**TOL[dtype], **extra}
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    theirs, ours = build(case, dtype)
    for mode in case.modes:
        theirs.train(mode == "train")
        ours.train(mode == "train")
        for step in range(case.steps):
            arrays = make_inputs(case, dtype, rng)
            t_in = [torch.from_numpy(a.copy()) for a in arrays]
            l_in = [lt.tensor(a.copy()) for a in arrays]
            grads_in = [spec[0] in ("f", "p") and case.grad for spec in case.inputs]
            for t, x, g in zip(t_in, l_in, grads_in):
                if g:
                    t.requires_grad_()
                    x.requires_grad_()
            t_out = theirs(*t_in)
            l_out = ours(*l_in)
            where = f"{name} {mode} step {step}"
            assert_close(l_out, t_out, tol, f"{where}: output")
            if case.grad and t_out.requires_grad:
                r = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
                (t_out * torch.from_numpy(r)).sum().backward()
                (l_out * lt.tensor(r)).sum().backward()
                gtol = {**GRAD_TOL[dtype], **extra}
                for (pname, tp), (_, lp) in zip(
                    theirs.named_parameters(), ours.named_parameters(), strict=True
                ):
                    if tp.grad is not None:
                        assert_close(lp.grad, tp.grad, gtol, f"{where}: grad of {pname}")
                for i, (t, x, g) in enumerate(zip(t_in, l_in, grads_in)):
                    if g:
                        assert_close(x.grad, t.grad, gtol, f"{where}: grad of input {i}")
                theirs.zero_grad()
                ours.zero_grad()
            # state after the step: BatchNorm's running statistics and batch count
            t_state, l_state = theirs.state_dict(), ours.state_dict()
            assert list(l_state) == list(t_state)
            for k in t_state:
                assert_close(l_state[k], t_state[k], tol, f"{where}: state {k}")


def test_embedding_padding_row_gets_no_gradient() -> None:
    emb = lt.nn.Embedding(5, 3, padding_idx=2)
    assert emb.weight[2].tolist() == [0.0, 0.0, 0.0]
    emb(lt.tensor([[2, 1], [2, 2]])).sum().backward()
    g = emb.weight.grad.numpy()
    np.testing.assert_array_equal(g[2], 0.0)
    np.testing.assert_array_equal(g[1], 1.0)


def test_dropout_train_drops_and_scales() -> None:
    drop = lt.nn.Dropout(0.25)
    y = drop(lt.ones(100_000)).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((y == 0).mean() - 0.25) < 0.01
    assert drop.eval()(lt.ones(10)).tolist() == [1.0] * 10
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        lt.nn.Dropout(1.5)


def test_batch_norm_running_stats_are_lazy_and_not_grad() -> None:
    bn = lt.nn.BatchNorm1d(3)
    x = lt.randn(4, 3, requires_grad=True)
    bn(x).sum().backward()
    assert not bn.running_mean.requires_grad
    assert not bn.running_var.requires_grad
    assert bn.num_batches_tracked.item() == 1
    assert bn.weight.grad is not None and x.grad is not None


def test_batch_norm_input_dim_errors() -> None:
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        lt.nn.BatchNorm2d(3)(lt.zeros(2, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        lt.nn.BatchNorm1d(3)(lt.zeros(2, 3, 1, 1))


def test_conv_constructor_errors_match_torch() -> None:
    for kwargs in (
        dict(groups=3),
        dict(padding="same", stride=2),
        dict(padding="full"),
        dict(padding_mode="mirror"),
    ):
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(4, 6, 3, **kwargs)
        with pytest.raises(ValueError) as ours:
            lt.nn.Conv2d(4, 6, 3, **kwargs)
        assert _sorted_sets(str(ours.value)) == _sorted_sets(str(theirs.value))


def _sorted_sets(msg: str) -> str:
    # set-valued parts of a message print in hash order
    return re.sub(r"\{([^}]*)\}", lambda m: str(sorted(m.group(1).split(", "))), msg)


# -- default initialization: the bounds torch's formulas give ----------------------------------
@pytest.mark.parametrize(
    "ctor, bounds",
    [
        (lambda t: t.nn.Linear(50, 30), {"weight": 1 / math.sqrt(50), "bias": 1 / math.sqrt(50)}),
        (
            lambda t: t.nn.Conv2d(4, 8, 3, groups=2),
            {"weight": 1 / math.sqrt(18), "bias": 1 / math.sqrt(18)},
        ),
        (lambda t: t.nn.Bilinear(9, 4, 7), {"weight": 1 / 3, "bias": 1 / 3}),
    ],
)
def test_default_init_bounds(ctor: Callable[[Any], Any], bounds: dict[str, float]) -> None:
    m = ctor(lt)
    for name, p in m.named_parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= bounds[name]
        if v.size >= 100:  # actually spread over the interval
            assert np.abs(v).max() > 0.9 * bounds[name]
        assert p.requires_grad and p.is_leaf and isinstance(p, lt.nn.Parameter)


def test_default_init_of_norms_and_embedding() -> None:
    ln, bn = lt.nn.LayerNorm(5), lt.nn.BatchNorm2d(5)
    for m in (ln, bn):
        assert m.weight.tolist() == [1.0] * 5 and m.bias.tolist() == [0.0] * 5
    assert bn.running_mean.tolist() == [0.0] * 5 and bn.running_var.tolist() == [1.0] * 5
    assert bn.num_batches_tracked.dtype is lt.int64 and bn.num_batches_tracked.item() == 0
    w = lt.nn.Embedding(400, 50).weight.detach().numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


# -- Parameter ---------------------------------------------------------------------------------
def test_parameter_basics() -> None:
    p = lt.nn.Parameter(lt.tensor([1.0, 2.0]))
    assert isinstance(p, lt.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert type(p * 2) is lt.Tensor and type(p.detach()) is lt.Tensor
    frozen = lt.nn.Parameter(lt.ones(2), requires_grad=False)
    assert not frozen.requires_grad
    assert lt.nn.Parameter().shape == (0,)
    # the parameter takes the value, not the history
    x = lt.ones(2, requires_grad=True)
    q = lt.nn.Parameter(x * 3)
    assert q.is_leaf and q.grad_fn is None and q.tolist() == [3.0, 3.0]
    # in place under no_grad keeps it the same leaf
    with lt.no_grad():
        p.mul_(2)
    assert p.is_leaf and p.requires_grad and type(p) is lt.nn.Parameter
    assert p.tolist() == [2.0, 4.0]
    d = copy.deepcopy(p)
    assert type(d) is lt.nn.Parameter and d is not p and d.tolist() == [2.0, 4.0]


# -- Module: registration and iteration ----------------------------------------------------------
def block_class(t: Any) -> type:
    """The same custom module class written against torch or lazytorch."""

    class Block(t.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = t.nn.Conv2d(2, 4, 3, padding=1)
            self.bn = t.nn.BatchNorm2d(4)
            self.register_buffer("scale", t.ones(4))
            self.register_buffer("cache", t.zeros(1), persistent=False)
            self.head = t.nn.Sequential(t.nn.Flatten(), t.nn.Linear(4 * 5 * 5, 3))

        def forward(self, x: Any) -> Any:
            return self.head(self.bn(self.conv(x)) * self.scale.reshape(1, 4, 1, 1))

    return Block


def make_pair() -> tuple[Any, Any]:
    """The same nested model in torch and lazytorch (torch's weights copied over)."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(
        OrderedDict(
            [
                ("stem", block_class(torch)()),
                ("drop", torch.nn.Dropout(0.1)),
                ("heads", torch.nn.ModuleList([torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)])),
                ("norm", torch.nn.LayerNorm(2)),
            ]
        )
    )
    ours = lt.nn.Sequential(
        OrderedDict(
            [
                ("stem", block_class(lt)()),
                ("drop", lt.nn.Dropout(0.1)),
                ("heads", lt.nn.ModuleList([lt.nn.Linear(3, 2), lt.nn.Linear(3, 2)])),
                ("norm", lt.nn.LayerNorm(2)),
            ]
        )
    )
    load_torch_weights(ours, theirs)
    return theirs, ours


def test_state_dict_keys_order_and_shapes_match_torch() -> None:
    theirs, ours = make_pair()
    t_sd, l_sd = theirs.state_dict(), ours.state_dict()
    assert isinstance(l_sd, OrderedDict)
    assert list(l_sd) == list(t_sd)
    assert [tuple(v.shape) for v in l_sd.values()] == [tuple(v.shape) for v in t_sd.values()]
    assert [str(v.dtype).split(".")[1] for v in l_sd.values()] == [
        str(v.dtype).split(".")[1] for v in t_sd.values()
    ]
    assert all(not v.requires_grad for v in l_sd.values())
    # values are detached aliases, as in torch: they see later in-place updates
    with lt.no_grad():
        ours.norm.weight.fill_(3.0)
    assert l_sd["norm.weight"].tolist() == [3.0, 3.0]
    kept = ours.state_dict(keep_vars=True)
    assert kept["stem.conv.weight"] is ours.stem.conv.weight
    assert list(ours.state_dict(prefix="model.")) == list(theirs.state_dict(prefix="model."))


def test_named_members_match_torch() -> None:
    theirs, ours = make_pair()
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        t_names = [n for n, _ in getattr(theirs, method)()]
        l_names = [n for n, _ in getattr(ours, method)()]
        assert l_names == t_names, method
    assert [n for n, _ in ours.named_parameters(prefix="m", recurse=False)] == []
    assert [n for n, _ in ours.stem.named_buffers(recurse=False)] == ["scale", "cache"]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert len(list(ours.children())) == 4


def test_repr_matches_torch() -> None:
    theirs, ours = make_pair()
    assert repr(ours) == repr(theirs)
    for ctor in [
        lambda t: t.nn.Conv2d(4, 8, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False),
        lambda t: t.nn.Conv2d(3, 3, 3, padding="same", padding_mode="reflect"),
        lambda t: t.nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0),
        lambda t: t.nn.LayerNorm((3, 4), elementwise_affine=False),
        lambda t: t.nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False),
        lambda t: t.nn.MaxPool2d(3, 2, 1, ceil_mode=True),
        lambda t: t.nn.AvgPool2d(3, 1, 1, count_include_pad=False),
        lambda t: t.nn.Dropout(0.2, inplace=True),
        lambda t: t.nn.ReLU(inplace=True),
        lambda t: t.nn.LeakyReLU(0.2, inplace=True),
        lambda t: t.nn.Hardtanh(-2.0, 2.0),
        lambda t: t.nn.Softplus(),
        lambda t: t.nn.GELU("tanh"),
        lambda t: t.nn.Softmax(),
        lambda t: t.nn.Unflatten(1, (2, 3)),
        lambda t: t.nn.Flatten(0, 2),
        lambda t: t.nn.Bilinear(2, 3, 4, bias=False),
        lambda t: t.nn.CrossEntropyLoss(label_smoothing=0.1),
        lambda t: t.nn.ModuleList([t.nn.Linear(2, 2), t.nn.Linear(2, 2), t.nn.ReLU()]),
        lambda t: t.nn.ModuleList(),
        lambda t: t.nn.ModuleDict({"a": t.nn.Tanh(), "b": t.nn.Sequential(t.nn.ReLU())}),
    ]:
        assert repr(ctor(lt)) == repr(ctor(torch))


def test_parameter_containers_repr() -> None:
    ours = lt.nn.ParameterList([lt.zeros(2, 3), lt.nn.Parameter(lt.zeros(4))])
    theirs = torch.nn.ParameterList([torch.zeros(2, 3), torch.nn.Parameter(torch.zeros(4))])
    assert repr(ours) == repr(theirs).replace("torch.", "lazytorch.")
    ours_d = lt.nn.ParameterDict({"b": lt.zeros(2), "a": lt.ones(1)})
    theirs_d = torch.nn.ParameterDict({"b": torch.zeros(2), "a": torch.ones(1)})
    assert list(ours_d) == list(theirs_d) == ["a", "b"]
    assert repr(ours_d) == repr(theirs_d).replace("torch.", "lazytorch.")
    assert [n for n, _ in ours_d.named_parameters()] == ["a", "b"]


def test_setattr_registration_rules() -> None:
    m = lt.nn.Module()
    m.w = lt.nn.Parameter(lt.ones(2))
    m.sub = lt.nn.Linear(2, 2)
    m.plain = lt.ones(2)  # a plain tensor is just an attribute
    m.register_buffer("buf", lt.zeros(2))
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert list(m._buffers) == ["buf"] and "plain" in m.__dict__
    m.buf = lt.ones(2)  # assigning to a buffer name keeps it a buffer
    assert m._buffers["buf"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match=r"cannot assign 'lazytorch\.FloatTensor' as parameter 'w'"):
        m.w = lt.ones(2)
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", lt.zeros(1))
    with pytest.raises(KeyError, match="parameter name can"):
        m.register_parameter("a.b", None)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("bad", _non_leaf_param())
    m.w = None
    assert m.w is None and [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    del m.sub, m.buf, m.plain
    assert not m._modules and not m._buffers and not hasattr(m, "plain")
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nothing'"):
        _ = m.nothing
    m2 = lt.nn.Linear(2, 2)
    assert {"weight", "bias", "in_features", "forward"} <= set(dir(m2))


def _non_leaf_param() -> lt.nn.Parameter:
    # The constructor always makes a leaf; rebind one to a computed value, the case torch
    # refuses to register.
    p = lt.nn.Parameter(lt.ones(2))
    p._node = (lt.ones(2, requires_grad=True) * 2)._node
    return p


def test_shared_parameters_are_listed_once() -> None:
    lin = lt.nn.Linear(3, 3)
    net = lt.nn.Sequential(lin, lt.nn.ReLU(), lin)
    assert len(list(net.parameters())) == 2
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4
    assert len(list(net.modules())) == 3
    tied = lt.nn.Module()
    tied.a = lt.nn.Linear(2, 2)
    tied.b = lt.nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert len(list(tied.parameters())) == 3
    assert list(tied.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_train_eval_propagate() -> None:
    _, ours = make_pair()
    assert all(m.training for m in ours.modules())
    assert ours.eval() is ours
    assert not any(m.training for m in ours.modules())
    ours.stem.train()
    assert ours.stem.bn.training and not ours.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")


def test_forward_matches_torch_in_both_modes() -> None:
    theirs, ours = make_pair()
    x = np.random.default_rng(3).standard_normal((4, 2, 5, 5)).astype("float32")

    def run(m: Any, t: Any) -> Any:
        h = m.stem(t.tensor(x))
        return m.norm(m.heads[0](m.drop(h)) + m.heads[1](h))

    theirs.drop.p = ours.drop.p = 0.0
    for mode in (True, False, True):
        theirs.train(mode)
        ours.train(mode)
        assert_close(run(ours, lt), run(theirs, torch), TOL["float32"], f"train={mode}")
    assert_close(ours.stem.bn.running_var, theirs.stem.bn.running_var, TOL["float32"], "rv")


# -- state_dict loading ---------------------------------------------------------------------------
def test_load_state_dict_copies_in_place() -> None:
    src, dst = lt.nn.Linear(3, 2), lt.nn.Linear(3, 2)
    w = dst.weight
    assert repr(dst.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    assert dst.weight is w and w.is_leaf and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), src.weight.detach().numpy())
    dst(lt.ones(1, 3)).sum().backward()  # still a working leaf
    assert w.grad is not None


def test_load_state_dict_strict_errors_match_torch() -> None:
    theirs, ours = make_pair()
    bad = {k: v for k, v in theirs.state_dict().items() if "heads.1" not in k}
    bad["stem.extra"] = torch.zeros(1)
    bad["nothing.weight"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as t_err:
        theirs.load_state_dict(bad)
    with pytest.raises(RuntimeError) as l_err:
        ours.load_state_dict({k: lt_from_torch(v) for k, v in bad.items()})
    assert str(l_err.value) == str(t_err.value)
    # non-strict: reports the same keys instead of raising
    t_res = theirs.load_state_dict(bad, strict=False)
    l_res = ours.load_state_dict({k: lt_from_torch(v) for k, v in bad.items()}, strict=False)
    assert l_res.missing_keys == t_res.missing_keys
    assert l_res.unexpected_keys == t_res.unexpected_keys
    assert l_res == t_res


def test_load_state_dict_shape_mismatch_matches_torch() -> None:
    theirs, ours = make_pair()
    bad = dict(theirs.state_dict())
    bad["norm.weight"] = torch.zeros(3)
    bad["stem.conv.bias"] = torch.zeros(2, 2)
    with pytest.raises(RuntimeError) as t_err:
        theirs.load_state_dict(bad, strict=False)
    with pytest.raises(RuntimeError) as l_err:
        ours.load_state_dict({k: lt_from_torch(v) for k, v in bad.items()}, strict=False)
    assert str(l_err.value) == str(t_err.value).replace("torch.Size", "lazytorch.Size")


def test_load_state_dict_keeps_optimizer_view_and_dtype() -> None:
    m = lt.nn.BatchNorm1d(2).double()
    params = list(m.parameters())
    m.load_state_dict(
        {
            "weight": lt.tensor([2.0, 3.0]),  # float32 into float64: converted, as torch
            "bias": lt.tensor([0.5, 0.5]),
            "running_mean": lt.tensor([1.0, 1.0]),
            "running_var": lt.tensor([4.0, 4.0]),
            "num_batches_tracked": lt.tensor(7),
        }
    )
    assert all(a is b for a, b in zip(m.parameters(), params, strict=True))
    assert m.weight.dtype is lt.float64 and m.weight.tolist() == [2.0, 3.0]
    assert m.num_batches_tracked.item() == 7
    # a checkpoint without num_batches_tracked (old torch) loads when it has no metadata
    m.load_state_dict({"weight": lt.ones(2), "bias": lt.zeros(2), "running_mean": lt.zeros(2),
                       "running_var": lt.ones(2)})  # fmt: skip


# -- conversions, grads, hooks ---------------------------------------------------------------------
def test_to_double_half_keep_parameter_objects() -> None:
    m = lt.nn.Sequential(lt.nn.Linear(2, 2), lt.nn.BatchNorm1d(2))
    params = list(m.parameters())
    m(lt.randn(3, 2)).sum().backward()
    assert m.double() is m
    assert all(a is b for a, b in zip(m.parameters(), params))
    assert all(p.dtype is lt.float64 and p.is_leaf and p.requires_grad for p in params)
    assert all(p.grad.dtype is lt.float64 for p in params)
    assert m[1].running_mean.dtype is lt.float64
    assert m[1].num_batches_tracked.dtype is lt.int64  # integer buffers keep their dtype
    m.half()
    assert m[0].weight.dtype is lt.float16
    m.to(lt.float32)
    assert m[0].weight.dtype is lt.float32
    m.to("cpu").cpu().float()
    m.zero_grad()
    m(lt.randn(3, 2)).sum().backward()  # still trains after the conversions
    assert params[0].grad.dtype is lt.float32
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(lt.int64)


def test_zero_grad_and_requires_grad() -> None:
    m = lt.nn.Linear(2, 2)
    m(lt.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    assert not m(lt.ones(1, 2)).requires_grad


def test_forward_hooks() -> None:
    lin = lt.nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre") or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append("post") or out + 1)
    h3 = lin.register_forward_hook(lambda m, a, out: calls.append("first"), prepend=True)
    out = lin(lt.ones(1, 2))
    assert calls == ["pre", "first", "post"]
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1, rtol=1e-6)
    for h in (h1, h2, h3):
        h.remove()
    assert not lin._forward_hooks and not lin._forward_pre_hooks
    h = lin.register_forward_pre_hook(lambda m, args, kwargs: (args, {}), with_kwargs=True)
    assert lin(lt.ones(1, 2)).shape == (1, 2)
    h.remove()
    assert not lin._forward_pre_hooks_with_kwargs


def test_apply_get_submodule_and_getters() -> None:
    _, ours = make_pair()
    seen = []
    ours.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Sequential" and seen.count("Linear") == 3
    assert ours.get_submodule("stem.head.1") is ours.stem.head[1]
    assert ours.get_parameter("heads.0.weight") is ours.heads[0].weight
    assert ours.get_buffer("stem.bn.running_mean") is ours.stem.bn.running_mean
    with pytest.raises(AttributeError, match="Block has no attribute `nope`"):
        ours.get_submodule("stem.nope")
    ours.set_submodule("stem.head.1", lt.nn.Identity())
    assert isinstance(ours.stem.head[1], lt.nn.Identity)


def test_sequential_and_module_list_api() -> None:
    a, b, c = lt.nn.ReLU(), lt.nn.Tanh(), lt.nn.Sigmoid()
    seq = lt.nn.Sequential(a, b)
    seq.append(c)
    assert len(seq) == 3 and list(seq) == [a, b, c] and seq[-1] is c
    assert isinstance(seq[1:], lt.nn.Sequential) and list(seq[1:]) == [b, c]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[0] is b
    seq.insert(0, a)
    assert list(seq) == [a, b, c]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]
    assert len(seq + lt.nn.Sequential(a)) == 4
    ml = lt.nn.ModuleList([a])
    ml.extend([b, c])
    ml.insert(1, c)
    assert list(ml) == [a, c, b, c] and len(ml) == 4 and ml.index(b) == 2
    assert isinstance(ml[1:3], lt.nn.ModuleList) and len(ml[1:3]) == 2
    ml[0] = b
    assert ml[0] is b
    with pytest.raises(TypeError, match=r"ModuleList\.extend should be called with an iterable"):
        ml.extend(a)
    md = lt.nn.ModuleDict([("x", a), ("y", b)])
    md["z"] = c
    assert list(md.keys()) == ["x", "y", "z"] and md.pop("y") is b and len(md) == 2


def test_clip_grad_norm_matches_torch() -> None:
    rng = np.random.default_rng(7)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    for norm_type in (2.0, float("inf"), 1.0, "inf"):
        for max_norm in (0.5, 100.0):
            grads = [rng.standard_normal(s).astype("float32") * 3 for s in shapes]
            t_params = [torch.nn.Parameter(torch.zeros(s)) for s in shapes]
            l_params = [lt.nn.Parameter(lt.zeros(s)) for s in shapes]
            for tp, lp, g in zip(t_params, l_params, grads):
                tp.grad = torch.from_numpy(g.copy())
                lp.grad = lt.tensor(g.copy())
            t_total = torch.nn.utils.clip_grad_norm_(t_params, max_norm, norm_type)
            l_total = lt.nn.utils.clip_grad_norm_(l_params, max_norm, norm_type)
            assert not l_total.is_materialized  # nothing read inside
            assert_close(l_total, t_total, TOL["float32"], f"total {norm_type}")
            for tp, lp in zip(t_params, l_params):
                assert_close(lp.grad, tp.grad, TOL["float32"], f"clipped {norm_type}")


def test_clip_grad_norm_edge_cases() -> None:
    p = lt.nn.Parameter(lt.ones(2))
    assert lt.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0  # no grads: norm 0
    p.grad = lt.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        lt.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    q = lt.nn.Parameter(lt.zeros(3))
    q.grad = lt.tensor([-3.0, 0.2, 3.0])
    tq = torch.nn.Parameter(torch.zeros(3))
    tq.grad = torch.tensor([-3.0, 0.2, 3.0])
    lt.nn.utils.clip_grad_value_([q], 0.5)
    torch.nn.utils.clip_grad_value_([tq], 0.5)
    assert_close(q.grad, tq.grad, TOL["float32"], "clip value")


def test_parameters_vector_round_trip() -> None:
    m = lt.nn.Linear(3, 2)
    vec = lt.nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    lt.nn.utils.vector_to_parameters(vec * 2, m.parameters())
    np.testing.assert_allclose(
        lt.nn.utils.parameters_to_vector(m.parameters()).detach().numpy(), vec.detach().numpy() * 2
    )
    assert m.weight.is_leaf and m.weight.requires_grad


def test_training_step_end_to_end() -> None:
    """A few SGD steps written by hand track torch's (same weights, same data)."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    ours = lt.nn.Sequential(lt.nn.Linear(4, 8), lt.nn.ReLU(), lt.nn.Linear(8, 3))
    load_torch_weights(ours, theirs)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((6, 4)).astype("float32")
        y = rng.integers(0, 3, 6)
        losses = []
        for m, t in ((theirs, torch), (ours, lt)):
            m.zero_grad()
            loss = t.nn.CrossEntropyLoss()(m(t.tensor(x)), t.tensor(y))
            loss.backward()
            t.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            with t.no_grad():
                for p in m.parameters():
                    p.sub_(0.1 * p.grad)
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5)
    for (name, tp), lp in zip(theirs.named_parameters(), ours.parameters()):
        assert_close(lp, tp, TOL["float32"], name)


def test_module_forward_required() -> None:
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        lt.nn.Module()(lt.ones(1))
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        lt.nn.Module(3)
