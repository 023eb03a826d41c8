"""The ``meta`` device against torch: tensors with shapes and dtypes but no values.

Ops on meta tensors give meta tensors of torch's shapes (a module built under
``with device("meta")`` included); reading values raises torch's errors; ``copy_`` into a
meta tensor does nothing; ``Module.to_empty`` and ``load_state_dict(assign=True)`` give a
meta-built module storage. A meta tensor is never computed, however large.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt


def _both(fn: Any) -> tuple[Any, Any]:
    return fn(torch), fn(lt)


def _net(lib: Any) -> Any:
    return lib.nn.Sequential(
        lib.nn.Conv2d(3, 6, 5),
        lib.nn.ReLU(),
        lib.nn.MaxPool2d(2, 2),
        lib.nn.Flatten(),
        lib.nn.Linear(6 * 14 * 14, 10),
        lib.nn.LayerNorm(10),
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.empty(2, 3, device="meta"),
        lambda t: t.rand(2, 3, 10, 10, device="meta"),
        lambda t: t.zeros(4, dtype=t.int64, device="meta") + 1,
        lambda t: t.ones(3, 4, device="meta") @ t.ones(4, 5, device="meta"),
        lambda t: t.nn.Conv2d(3, 5, 2, device="meta")(
            t.rand(2**10, 3, 2**16, 2**16, device="meta")
        ),
        lambda t: t.empty((), device="meta").sum(),
        lambda t: t.ones(8, device="meta").view(2, 4).t()[1:],
        lambda t: t.ones(2, 3).to("meta"),
    ],
)
def test_meta_ops_give_torchs_shapes_dtypes_and_repr(fn: Any) -> None:
    a, b = _both(fn)
    assert b.device.type == "meta" and b.is_meta and a.is_meta
    assert tuple(b.shape) == tuple(a.shape)
    assert str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1]
    if a.grad_fn is None:  # torch's grad_fn names differ from lazytorch's
        assert repr(b) == repr(a).replace("torch.", "lazytorch.")


def test_module_built_under_the_meta_device_context() -> None:
    shapes = []
    for lib in (torch, lt):
        with lib.device("meta"):
            net = _net(lib)
            x = lib.randn(64, 3, 32, 32)
        seen: list[tuple[int, ...]] = []
        for m in net:
            m.register_forward_hook(lambda mod, i, o, s=seen: s.append(tuple(o.shape)))
        out = net(x)
        out.sum().backward()
        assert all(p.is_meta and p.grad.is_meta for p in net.parameters())
        shapes.append(seen)
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize(
    ("read", "error"),
    [
        (lambda x: x[0].item(), RuntimeError),
        (lambda x: bool(x[0]), RuntimeError),
        (lambda x: x.numpy(), TypeError),
        (lambda x: x.tolist(), NotImplementedError),
        (lambda x: x.to("cpu"), NotImplementedError),
        (lambda x: x.cpu(), NotImplementedError),
        (lambda x, t=None: np.asarray(x), (TypeError, NotImplementedError)),
    ],
)
def test_reading_values_raises_torchs_errors(read: Any, error: Any) -> None:
    for lib in (torch, lt):
        with pytest.raises(error):
            read(lib.ones(2, device="meta"))


def test_copy_into_meta_does_nothing_and_copy_out_raises() -> None:
    for lib in (torch, lt):
        m = lib.empty(2, 3, device="meta")
        assert m.copy_(lib.ones(2, 3)) is m and m.is_meta
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            lib.ones(2, 3).copy_(lib.empty(2, 3, device="meta"))


def test_to_empty_and_assign_give_a_meta_module_storage() -> None:
    torch.manual_seed(0)
    state = {k: v.numpy() for k, v in _net(torch).state_dict().items()}
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    outs = []
    for lib in (torch, lt):
        with lib.device("meta"):
            empty = _net(lib)
        assert all(p.device.type == "cpu" for p in empty.to_empty(device="cpu").parameters())
        with lib.device("meta"):
            net = _net(lib)
        sd = {k: lib.tensor(v) for k, v in state.items()}
        with pytest.warns(UserWarning, match="is a no-op"):
            net.load_state_dict(sd)  # into meta parameters: nothing is copied
        assert all(p.is_meta for p in net.parameters())
        net.load_state_dict(sd, assign=True)
        assert all(p.device.type == "cpu" for p in net.parameters())
        outs.append(net(lib.tensor(x)).detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)


def test_a_huge_meta_tensor_is_never_computed() -> None:
    big = lt.rand(2**20, 2**20, device="meta") * 2 + 1  # 4 TiB if it were computed
    small = lt.ones(3) * 2
    lt.materialize()  # every live pending tensor: the meta one is skipped
    assert small.tolist() == [2.0, 2.0, 2.0]
    assert big.is_meta and tuple(big.shape) == (2**20, 2**20)
