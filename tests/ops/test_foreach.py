"""torch._foreach_* against torch: every name torch has is here (or listed as missing with
why), each form of the second operand, the in-place forms updating the list they return."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.ops.foreach import _BINARY, _UNARY

# torch's foreach names lazytorch does not provide, with why
MISSING = {
    "_foreach_mm": "a private matmul over lists, not called by the optimizers or libraries",
    "_foreach_powsum": "a private fused reduction of torch's own fused optimizers",
}

RNG = np.random.default_rng(7)
SHAPES = [(3,), (2, 4), ()]


def _lists(positive: bool = False) -> list[np.ndarray]:
    return [
        (RNG.uniform(0.2, 0.9, s) if positive else RNG.standard_normal(s)).astype(np.float32)
        for s in SHAPES
    ]


def _both(arrays):
    return [torch.tensor(a) for a in arrays], [lt.tensor(a) for a in arrays]


def _same(ours, theirs):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=2e-6, atol=1e-6)


def test_every_torch_foreach_name_exists():
    names = {n for n in dir(torch) if n.startswith("_foreach_")}
    assert names - set(MISSING) <= {n for n in dir(lt) if n.startswith("_foreach_")}
    assert not set(MISSING) & {n for n in dir(lt) if n.startswith("_foreach_")}


@pytest.mark.parametrize("name", _UNARY)
def test_unary(name):
    positive = name in ("acos", "asin", "log", "log10", "log1p", "log2", "rsqrt", "sqrt", "lgamma")
    arrays = _lists(positive)
    theirs, ours = _both(arrays)
    _same(getattr(lt, f"_foreach_{name}")(ours), getattr(torch, f"_foreach_{name}")(theirs))
    back = getattr(lt, f"_foreach_{name}_")(ours)
    getattr(torch, f"_foreach_{name}_")(theirs)
    assert back is not None and all(b is o for b, o in zip(back, ours))
    _same(ours, theirs)


@pytest.mark.parametrize("name", _BINARY)
@pytest.mark.parametrize("form", ["number", "numbers", "tensors", "tensor"])
def test_binary(name, form):
    base = _lists(positive=name == "pow")
    other_arrays = _lists(positive=True)
    if form == "number":
        t_other = l_other = 1.5
    elif form == "numbers":
        t_other = l_other = [0.5, 2.0, 3.0]
    elif form == "tensors":
        t_other, l_other = _both(other_arrays)
    else:
        t_other, l_other = torch.tensor(1.25), lt.tensor(1.25)
    theirs, ours = _both(base)
    _same(
        getattr(lt, f"_foreach_{name}")(ours, l_other),
        getattr(torch, f"_foreach_{name}")(theirs, t_other),
    )
    getattr(lt, f"_foreach_{name}_")(ours, l_other)
    getattr(torch, f"_foreach_{name}_")(theirs, t_other)
    _same(ours, theirs)


def test_add_and_sub_with_alpha_and_pow_of_a_number():
    theirs, ours = _both(_lists())
    t2, l2 = _both(_lists())
    _same(lt._foreach_add(ours, l2, alpha=-0.5), torch._foreach_add(theirs, t2, alpha=-0.5))
    _same(lt._foreach_sub_(ours, l2, alpha=2), torch._foreach_sub_(theirs, t2, alpha=2))
    _same(lt._foreach_pow(2.0, ours), torch._foreach_pow(2.0, theirs))


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name):
    (t0, l0), (t1, l1), (t2, l2) = (_both(_lists(positive=True)) for _ in range(3))
    _same(
        getattr(lt, f"_foreach_{name}")(l0, l1, l2, 0.5),
        getattr(torch, f"_foreach_{name}")(t0, t1, t2, 0.5),
    )
    _same(
        getattr(lt, f"_foreach_{name}")(l0, l1, l2, [0.5, 1.0, 2.0]),
        getattr(torch, f"_foreach_{name}")(t0, t1, t2, [0.5, 1.0, 2.0]),
    )
    getattr(lt, f"_foreach_{name}_")(l0, l1, l2, 0.25)
    getattr(torch, f"_foreach_{name}_")(t0, t1, t2, 0.25)
    _same(l0, t0)


def test_lerp_norm_max_clone_zero_copy():
    (t0, l0), (t1, l1) = _both(_lists()), _both(_lists())
    _same(lt._foreach_lerp(l0, l1, 0.3), torch._foreach_lerp(t0, t1, 0.3))
    _same(lt._foreach_lerp(l0, l1, l1), torch._foreach_lerp(t0, t1, t1))
    _same(lt._foreach_norm(l0), torch._foreach_norm(t0))
    _same(lt._foreach_norm(l0, 1), torch._foreach_norm(t0, 1))
    _same(lt._foreach_max(l0), torch._foreach_max(t0))
    clones = lt._foreach_clone(l0)
    assert all(c is not o for c, o in zip(clones, l0))
    lt._foreach_lerp_(l0, l1, 0.3)
    torch._foreach_lerp_(t0, t1, 0.3)
    _same(l0, t0)
    lt._foreach_copy_(l0, l1)
    _same(l0, t1)
    lt._foreach_zero_(l0)
    assert all(float(x.abs().sum()) == 0 for x in l0)
    _same(clones, [torch.tensor(a.numpy()) for a in clones])


def test_lists_of_different_lengths_are_refused():
    with pytest.raises(RuntimeError, match="same number of tensors"):
        lt._foreach_add([lt.ones(2)], [lt.ones(2), lt.ones(2)])
    with pytest.raises(TypeError, match="list of tensors"):
        lt._foreach_add(lt.ones(2), 1.0)


def test_foreach_updates_carry_gradients():
    w = [lt.ones(2, requires_grad=True), lt.ones(3, requires_grad=True)]
    out = lt._foreach_mul(w, [2.0, 3.0])
    sum(o.sum() for o in out).backward()
    assert w[0].grad.tolist() == [2.0, 2.0] and w[1].grad.tolist() == [3.0, 3.0, 3.0]
