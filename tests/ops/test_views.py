"""View write-through semantics against torch: every test runs the same sequence of views
and in-place writes on torch tensors and on lazytorch tensors (lazy and sync mode) and
compares every tensor involved afterwards — the base, the view written to, and other live
views of the same base."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import ALL, arr, check, check_grad, randn


def base(*shape: int, dtype: str = "float32") -> np.ndarray:
    return np.arange(float(np.prod(shape))).reshape(shape).astype(dtype)


# -- writing through one view ----------------------------------------------------------------
def test_write_through_select_changes_base():
    def fn(t, x):
        v = x[0]
        v.add_(1)
        return x, v

    check(fn, base(3, 4))


def test_base_write_changes_existing_view():
    def fn(t, x):
        v = x[1:]
        w = x.t()
        x.add_(1)
        x.mul_(2)
        return x, v, w

    check(fn, base(3, 4))


VIEWS = {
    "select": lambda t, x: x[1],
    "select_dim1": lambda t, x: x.select(1, -1),
    "slice": lambda t, x: x[1:3],
    "slice_step": lambda t, x: x[::2, 1::2],
    "slice_cols": lambda t, x: x[:, 1:3],
    "view": lambda t, x: x.view(2, 2, 6),
    "reshape": lambda t, x: x.reshape(-1),
    "permute": lambda t, x: x.permute(1, 0),
    "transpose": lambda t, x: x.transpose(0, 1),
    "T": lambda t, x: x.T,
    "mT": lambda t, x: x.mT,
    "unsqueeze": lambda t, x: x.unsqueeze(1),
    "squeeze": lambda t, x: x[:1].squeeze(0),
    "flatten": lambda t, x: x.flatten(),
    "unflatten": lambda t, x: x.unflatten(1, (2, 3)),
    "narrow": lambda t, x: x.narrow(1, 2, 3),
    "split": lambda t, x: x.split(2, dim=1)[1],
    "chunk": lambda t, x: x.chunk(3)[2],
    "unbind": lambda t, x: x.unbind(1)[4],
    "detach": lambda t, x: x.detach(),
    "data": lambda t, x: x.data,
    "view_as": lambda t, x: x.view_as(t.empty(6, 2)),
    "movedim": lambda t, x: x.movedim(0, 1),
    "none_ellipsis": lambda t, x: x[None, ..., 2],
    "diag_chain": lambda t, x: x.T[1:, ::2].reshape(-1),
    "expand_select": lambda t, x: x[:1].expand(3, 6)[2],  # no self-overlap: writable
}


@pytest.mark.parametrize("make", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("write", ["add_", "fill_", "setitem", "mul_", "zero_", "copy_"])
def test_write_through_view(make, write):
    def fn(t, x):
        v = make(t, x)
        other = x[1:, ::2]  # another live view of the base
        if write == "add_":
            v.add_(10)
        elif write == "fill_":
            v.fill_(-3)
        elif write == "setitem":
            v[...] = 7.0
        elif write == "mul_":
            v.mul_(v)
        elif write == "zero_":
            v.zero_()
        else:
            v.copy_(t.arange(float(v.numel())).reshape(v.shape) * -1)
        return x, v, other

    check(fn, base(3, 6))


VIEWS_3D = {
    "permute_201": lambda t, x: x.permute(2, 0, 1),
    "permute_120": lambda t, x: x.permute(1, 2, 0),
    "movedim": lambda t, x: x.movedim(0, -1),
    "movedim_multi": lambda t, x: x.movedim((0, 1), (2, 0)),
    "permute_slice": lambda t, x: x.permute(1, 2, 0)[1:, ::2, 0],
    "strided_3d": lambda t, x: x[::2, 1:, ::3],
    "select_middle": lambda t, x: x[:, 1],
    "flatten_inner": lambda t, x: x.flatten(1),
    "permute_unsqueeze_select": lambda t, x: x.permute(2, 0, 1).unsqueeze(1)[3, 0],
}


@pytest.mark.parametrize("make", VIEWS_3D.values(), ids=VIEWS_3D.keys())
def test_write_through_3d_view(make):
    def fn(t, x):
        v = make(t, x)
        other = x.permute(1, 2, 0)
        v.copy_(t.arange(float(v.numel())).reshape(v.shape) * -1)
        v.add_(0.5)
        x[0, 0, 0] = 100.0
        return x, v, other

    check(fn, base(2, 3, 4))


@pytest.mark.parametrize("make", VIEWS.values(), ids=VIEWS.keys())
def test_base_write_refreshes_view(make):
    def fn(t, x):
        v = make(t, x)
        x[0] = -1.0
        x.sub_(0.5)
        return x, v

    check(fn, base(3, 6))


def test_chain_of_views():
    def fn(t, x):
        v = x.T[1:, ::2].reshape(3, 2)  # (6,4) -> (5,2) -> viewable? no: a copy
        w = x.T[1:, ::2]
        w[0, 1] = 100.0
        u = w.unsqueeze(0)[0, 1:].t()
        u.add_(1)
        return x, v, w, u

    check(fn, base(4, 6))


def test_views_of_views_after_several_inplace_ops():
    def fn(t, x):
        a = x[1:]
        b = a[:, 1:]
        c = b.t()
        a.mul_(2)
        c[0].add_(100)
        x[:, 0] = -1.0
        b.sub_(c.t())
        d = c[::2]
        d.neg_()
        return x, a, b, c, d

    check(fn, base(4, 5))


def test_two_overlapping_views_both_updated():
    def fn(t, x):
        a = x[:3]
        b = x[1:]
        a.add_(10)
        b.mul_(-1)
        a[1, 1] = 0.0
        return x, a, b

    check(fn, base(4, 3))


def test_sibling_view_chains_see_each_other():
    def fn(t, x):
        r = x[1]  # a row
        c = x[:, 2]  # a column, crossing the row at x[1, 2]
        r.fill_(5)
        c.add_(1)
        rr = r[::2]
        rr.mul_(3)
        return x, r, c, rr

    check(fn, base(3, 4))


def test_inplace_on_view_of_lazy_result():
    def fn(t, x):
        y = x * 2  # not a leaf
        v = y[:, 1]
        v.add_(x[:, 0])  # reads the base of another tensor
        return x, y, v

    check(fn, base(3, 3))


def test_view_read_before_write_keeps_old_value():
    def fn(t, x):
        v = x[0]
        old = v.clone()
        snapshot = v + 0  # an expression of the view, computed from the old value
        x.add_(5)
        return x, v, old, snapshot

    check(fn, base(2, 3))


def test_write_view_with_value_from_same_base():
    # a non-overlapping read of the base is fine in torch too
    def fn(t, x):
        x[0] = x[2]
        x[:, 1].copy_(x[:, 0] * 2)
        x[1:2] += x[0:1]
        return x

    check(fn, base(3, 4))


@pytest.mark.parametrize("dtype", ALL)
def test_write_through_dtypes(dtype):
    def fn(t, x):
        v = x.t()[1]
        v.fill_(1)
        x[0, ::2] = 0
        return x, v

    check(fn, arr(3, 4, dtype=dtype))


def test_write_through_size0_and_size1():
    def fn(t, x):
        v = x[:, :0]
        v.add_(1)
        w = x[1:2]
        w.add_(1)
        s = x[1, 1:2]
        s.fill_(-1)
        return x, v, w, s

    check(fn, base(3, 2))


def test_write_through_0d():
    def fn(t, x):
        v = x[1, 2]  # 0-d view
        v.fill_(42)
        v.add_(1)
        u = x[0, 0]
        x.mul_(2)
        return x, v, u

    check(fn, base(2, 3))

    def fn0(t, x):
        d = x.detach()
        v = x[()]
        d.add_(3)
        v.mul_(2)
        return x, d, v

    check(fn0, randn())


def test_inplace_dtype_rules_through_views():
    def fn(t, x):
        v = x[0]
        v.add_(1.5)  # float into an int view: not allowed in place
        return x

    check(fn, arr(2, 3, dtype="int32"))


def test_inplace_shape_rules_through_views():
    def fn(t, x):
        v = x[0]
        v.add_(t.ones(2, 3))  # would grow the view
        return x

    check(fn, base(2, 3))


# -- reshape/contiguous: a copy when torch's strides do not allow a view --------------------------
RESHAPES = {
    "t_reshape": lambda t, x: x.t().reshape(-1),
    "t_flatten": lambda t, x: x.t().flatten(),
    "rows_step_reshape": lambda t, x: x[::2].reshape(-1),
    "cols_slice_reshape": lambda t, x: x[:, 1:3].reshape(-1),
    "cols_step_reshape": lambda t, x: x[:, ::2].reshape(-1),  # stride 2: still a view
    "rows_reshape": lambda t, x: x[1:].reshape(2, 2, 3),
    "permute_reshape": lambda t, x: x.reshape(2, 2, 4).permute(1, 0, 2).reshape(4, 4),
    "t_unsqueeze_reshape": lambda t, x: x.t().unsqueeze(0).reshape(4, 1, 4),  # a view
    "t_contiguous": lambda t, x: x.t().contiguous(),
    "cols_contiguous": lambda t, x: x[:, 1:3].contiguous(),
    "rows_contiguous": lambda t, x: x[1:3].contiguous(),  # already contiguous: itself
    "plain_contiguous": lambda t, x: x.contiguous(),
    "t_ravel": lambda t, x: x.t().ravel(),
    "ravel": lambda t, x: x.ravel(),
    "step_ravel": lambda t, x: x[0, ::2].ravel(),  # a view in reshape, a copy in ravel
    "reshape_as": lambda t, x: x.t().reshape_as(t.empty(16)),
    "flatten_same_dim": lambda t, x: x.t().flatten(1, 1),  # flatten of one dim: itself
    "expand_reshape": lambda t, x: x[:1].expand(2, 4, 4).reshape(8, 4),
}


@pytest.mark.parametrize("make", RESHAPES.values(), ids=RESHAPES.keys())
def test_reshape_is_view_only_when_torch_can_view(make):
    def fn(t, x):
        y = make(t, x)
        y.add_(100)  # reaches x only if y is a view of it
        return x, y

    check(fn, base(4, 4))


@pytest.mark.parametrize(
    "make",
    [
        lambda t, x: x.t().view(-1),
        lambda t, x: x[:, 1:3].view(8),
        lambda t, x: x[::2].view(-1),
        lambda t, x: x.t().view(2, 8),
        lambda t, x: x.reshape(2, 2, 4).permute(1, 0, 2).view(4, 4),
        lambda t, x: x[:1].expand(2, 4, 4).view(8, 4),
        lambda t, x: x.t().view(4, 2, 2),  # splitting a dim is always possible
        lambda t, x: x.t().unsqueeze(1).view(4, 4),
        lambda t, x: x[:, ::2].view(8),  # one chunk with stride 2
        lambda t, x: x.t().t().view(-1),
        lambda t, x: x.t().view_as(t.empty(16)),
    ],
)
def test_view_requires_compatible_strides(make):
    check(make, base(4, 4))


@pytest.mark.parametrize(
    "make",
    [
        lambda t, x: x,
        lambda t, x: x.t(),
        lambda t, x: x[1:],
        lambda t, x: x[:, 1:],
        lambda t, x: x[:, :1],
        lambda t, x: x[::2],
        lambda t, x: x[1],
        lambda t, x: x[:, 1],
        lambda t, x: x[:1].t(),  # a (4, 1) view: size-1 dims do not count
        lambda t, x: x[:1].expand(3, 4),
        lambda t, x: x.unsqueeze(1),
        lambda t, x: x.t().t(),
        lambda t, x: x[:, :0],
        lambda t, x: x.permute(1, 0).reshape(2, 8),  # a copy: contiguous
        lambda t, x: x.detach(),
    ],
)
def test_is_contiguous(make):
    check(lambda t, x: make(t, x).is_contiguous(), base(4, 4))


# -- expanded views: writing must not hit one element twice ------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda t, x: x.expand(3, 4),
        lambda t, x: x.expand(2, 3, 4)[0],
        lambda t, x: x.expand(3, 4)[:, 1],
        lambda t, x: x.expand(3, 4).t(),
        lambda t, x: x.broadcast_to((2, 4)),
        lambda t, x: x.expand_as(t.empty(2, 4)),
    ],
)
@pytest.mark.parametrize(
    "write",
    [
        lambda t, v: v.add_(1),
        lambda t, v: v.mul_(0),
        lambda t, v: v.__setitem__(Ellipsis, 5.0),
        lambda t, v: v.__setitem__(Ellipsis, t.tensor(5.0)),
        lambda t, v: v.__setitem__(0, 5.0),
        lambda t, v: v.copy_(t.arange(float(v.numel())).reshape(v.shape)),
        lambda t, v: v.scatter_(0, t.zeros((1,) * v.ndim, dtype=t.int64), 1.0),
        # torch allows writes of one value everywhere: every alias agrees
        lambda t, v: v.fill_(2),
        lambda t, v: v.zero_(),
    ],
)
def test_write_to_expanded_view(make, write):
    def fn(t, x):
        v = make(t, x)
        write(t, v)
        return x, v

    check(fn, base(1, 4))


def test_copy_scalar_tensor_into_expanded_view_raises():
    # torch's copy_ refuses a self-overlapping destination even for a 0-d source
    def fn(t, x):
        v = x.expand(3, 4)
        v.copy_(t.tensor(3.0))
        return x, v

    check(fn, base(1, 4))


@pytest.mark.parametrize(
    "make",
    [
        lambda t, x: x.expand(3, 4)[0],
        lambda t, x: x.expand(3, 4)[2, 1:],
        lambda t, x: x.unsqueeze(0).expand(2, 1, 4)[1, 0],
        lambda t, x: x.expand(3, 4)[1:2],
    ],
)
def test_write_to_non_overlapping_part_of_expanded_view(make):
    def fn(t, x):
        e = x.expand(3, 4)  # a live expanded view sees the write too
        v = make(t, x)
        v.add_(t.arange(float(v.numel())).reshape(v.shape))
        return x, v, e

    check(fn, base(1, 4))


def test_expanded_view_follows_base_writes():
    def fn(t, x):
        e = x.expand(2, 3, 4)
        x.add_(1)
        x[:, 0] = -1.0
        return x, e

    check(fn, base(1, 4))


# -- aliasing: detach, .data, clone ---------------------------------------------------------------
def test_detach_aliases():
    def fn(t, x):
        d = x.detach()
        d.add_(1)
        x.mul_(2)
        dd = d.detach()[1:]
        dd.fill_(0)
        return x, d, dd

    check(fn, base(3))


def test_data_getter_aliases():
    def fn(t, x):
        v = x[1:]
        x.data.add_(1)
        x.data[0] = 9.0
        return x, v

    check(fn, base(3))


def test_data_setter_same_shape_and_views():
    def fn(t, x):
        v = x[1:]
        x.data = t.ones(3) * 7
        x.add_(1)
        return x, v

    check(fn, base(3))


def test_data_setter_new_shape_and_dtype():
    def fn(t, x):
        x.data = t.ones(2, 2, dtype=t.int32)
        x.add_(1)
        return x

    check(fn, base(3))


def test_data_setter_on_a_view():
    def fn(t, x):
        v = x[0]
        v.data = t.full((4,), -2.0)
        return x, v

    check(fn, base(3, 4))


def test_clone_does_not_alias():
    def fn(t, x):
        c = x.clone()
        cv = x[0].clone()
        tc = t.clone(x.t())
        c.add_(1)
        cv.fill_(-1)
        tc.mul_(0)
        x[1] = 5.0
        return x, c, cv, tc

    check(fn, base(3, 3))


def test_non_view_ops_do_not_alias():
    # ops documented as copies: writes to the result never reach the input
    ops = [
        lambda t, x: x.flip(0),
        lambda t, x: x.roll(1),
        lambda t, x: x.repeat(1, 1),
        lambda t, x: x.tile((1,)),
        lambda t, x: t.cat([x]),
        lambda t, x: t.stack([x])[0],
        lambda t, x: x[t.tensor([0, 1])],
        lambda t, x: x[x > 2],
        lambda t, x: t.tril(x),
        lambda t, x: x.to(t.float64).to(t.float32),
        lambda t, x: x.gather(0, t.tensor([[0, 1, 2]])),
        lambda t, x: x.index_select(0, t.tensor([0])),
        lambda t, x: x.masked_fill(x > 100, 0),
        lambda t, x: x + 0,
    ]

    for op in ops:

        def fn(t, x, op=op):
            y = op(t, x)
            y.add_(100)
            return x, y

        check(fn, base(2, 3))


def test_to_same_dtype_aliases():
    def fn(t, x):
        y = x.to(t.float32)  # no conversion: the same tensor
        y.add_(1)
        return x, y

    check(fn, base(3))


def test_views_survive_garbage_collection_of_others():
    import gc

    def fn(t, x):
        keep = x[1]
        for _ in range(5):
            tmp = x[0]
            tmp.add_(1)
            del tmp
        gc.collect()
        x.mul_(2)
        return x, keep

    check(fn, base(2, 3))


@pytest.mark.parametrize(
    "idx",
    [
        lambda t: None,
        lambda t: (None, 1),
        lambda t: (Ellipsis, 1),
        lambda t: True,  # torch: a 0-d mask, so advanced indexing and a copy
        lambda t: (1, True),
        lambda t: (slice(None), False),
        lambda t: t.tensor([1]),
        lambda t: t.tensor(True),
        lambda t: [0, 1],
        lambda t: (slice(None), [2, 0]),
    ],
)
def test_getitem_view_or_copy(idx):
    def fn(t, x):
        v = x[idx(t)]
        v.add_(100)
        return x, v

    check(fn, base(2, 3))


def test_setitem_overlapping_read_and_write():
    # torch refuses to copy between partially overlapping views of one tensor;
    # disjoint parts are fine
    def ok(t, x):
        x[:2] = x[2:].clone()
        x[2:] = x[:2]
        return x

    check(ok, base(4))


# -- lazy: view writes stay lazy -----------------------------------------------------------------
def _view_writes_program(t, x):
    x = x * 1  # pending
    v = x.t()[1:, ::2]
    w = x[1]
    v.add_(1)
    w.fill_(0)
    x[2, 1:] = -1.0
    e = x[:1].expand(3, 4)[2]
    e.mul_(3)
    r = x.t().reshape(-1)  # a copy
    r.add_(1000)
    return x, v, w, e, r


def test_view_writes_do_not_materialize():
    outs = _view_writes_program(lt, lt.tensor(base(3, 4)))
    for o in outs:
        assert not o.is_materialized
    assert lt.metrics.counters()["materializations"] == 0
    check(_view_writes_program, base(3, 4))


# -- randomized sequences of views and in-place writes ---------------------------------------------
def _random_program(seed: int, steps: int = 12):
    """fn(t, x) applying the same random mix of views and writes under torch and lazytorch
    (every choice depends only on shapes, which both libraries agree on)."""
    import random

    def view_ops(v):
        ops = [lambda v: v.detach(), lambda v: v.unsqueeze(0), lambda v: v.reshape(-1)]
        if v.ndim >= 1 and v.shape[0] > 0:
            ops += [
                lambda v: v[v.shape[0] // 2],
                lambda v: v[1:],
                lambda v: v[::2],
                lambda v: v.narrow(0, 0, max(v.shape[0] - 1, 0)),
                lambda v: v.flip(0),  # a copy
            ]
        if v.ndim >= 2:
            ops += [
                lambda v: v.transpose(0, -1),
                lambda v: v.permute(*reversed(range(v.ndim))),
                lambda v: v[:, 1::2],
                lambda v: v.flatten(0, 1),
                lambda v: v.select(1, -1),
            ]
        if 1 in tuple(v.shape):
            ops.append(lambda v: v.squeeze())
        return ops

    def write_ops(t, v, k):
        return [
            lambda: v.add_(k),
            lambda: v.mul_(-1),
            lambda: v.fill_(k),
            lambda: v.__setitem__(Ellipsis, float(k)),
            lambda: v.copy_(t.arange(float(v.numel())).reshape(v.shape) + k),
            lambda: v.clamp_(min=float(k)),
            lambda: v.sub_(v.clone() * 0.5),
        ]

    def fn(t, x):
        rng = random.Random(seed)
        live = [x]
        for k in range(steps):
            v = rng.choice(live)
            if rng.random() < 0.5 and len(live) < 8:
                live.append(rng.choice(view_ops(v))(v))
            else:
                rng.choice(write_ops(t, v, k))()
        return tuple(live)

    return fn


@pytest.mark.parametrize("seed", range(30))
def test_random_views_and_writes(seed):
    check(_random_program(seed), base(3, 4, 2))


# -- in-place shape changes and the other state methods -------------------------------------
@pytest.mark.parametrize(
    "name, args",
    [
        ("unsqueeze_", (0,)),
        ("unsqueeze_", (-1,)),
        ("squeeze_", ()),
        ("squeeze_", (1,)),
        ("t_", ()),
        ("transpose_", (0, 1)),
        ("swapaxes_", (1, 0)),
        ("swapdims_", (0, 1)),
    ],
)
def test_inplace_shape_methods_match_torch_with_gradients(name, args):
    def fn(t, x):
        y = (x * 2).reshape(3, 1, 2) if name == "squeeze_" else x * 2
        if name in ("t_", "transpose_", "swapaxes_", "swapdims_"):
            y = y.reshape(3, 2)
        out = getattr(y, name)(*args)
        assert out is y
        return y * 1.5

    check(fn, randn(3, 2))
    check_grad(fn, randn(3, 2))


def test_inplace_shape_methods_keep_every_alias():
    def fn(t, x):
        base = x.clone()
        row = base[0]  # a view of base, alive across base.t_()
        base.t_()  # base: a transposed view of the same memory
        base[1, 0] = 100.0  # writes row 0, column 1 of the original: row sees it
        col = base[:, 1].clone()
        row.unsqueeze_(0)  # a view with one more step still writes through
        row[0, 2] = -7.0
        return base * 1, row * 1, col, x

    check(fn, randn(2, 3))


def test_inplace_shape_methods_refuse_grad_leaves():
    p = lt.nn.Parameter(lt.ones(2))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.unsqueeze_(0)
    with lt.no_grad():
        p.unsqueeze_(0)  # allowed under no_grad, as in torch; p stays a leaf
    assert tuple(p.shape) == (1, 2) and p.is_leaf and p.requires_grad
    (p * 3).sum().backward()
    assert p.grad.tolist() == [[3.0, 3.0]]


@pytest.mark.parametrize(
    "write",
    [
        lambda x: x.view(2, 3).add_(1),
        lambda x: x.view(6).mul_(2),
        lambda x: x[0].zero_(),
        lambda x: x.t().fill_(1.0),
        lambda x: x.__setitem__((0, 0), 1.0),
        lambda x: x.add_(1),
    ],
)
def test_in_place_writes_to_a_grad_leaf_are_refused_with_torchs_message(write):
    # through a view, torch says "a view of a leaf Variable ..."; on the leaf itself, "a leaf"
    msgs = []
    for lib in (torch, lt):
        with pytest.raises(RuntimeError) as err:
            write(lib.ones(2, 3, requires_grad=True))
        msgs.append(str(err.value))
    assert msgs[1] == msgs[0]


def test_detach_in_place_cuts_the_graph():
    x = lt.ones(2, requires_grad=True)
    h = x * 3
    assert h.detach_() is h
    assert not h.requires_grad and h.grad_fn is None and h.is_leaf
    assert h.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[0].detach_()


def test_sum_to_size_and_the_memory_state_methods():
    check(lambda t, x: x.sum_to_size(1, 3), randn(2, 3))
    check(lambda t, x: x.sum_to_size((3,)), randn(4, 2, 3))
    check(lambda t, x: x.sum_to_size(2, 1), randn(2, 3))
    check_grad(lambda t, x: x.sum_to_size(2, 1), randn(2, 3))
    check(lambda t, x: x.sum_to_size(3, 3), randn(2, 3))  # both raise
    x = lt.ones(2)
    assert x.pin_memory() is x and not x.is_pinned()
    assert x.share_memory_() is x and x.is_shared()  # (tests/api/test_multiprocessing.py)


def test_diagonal_is_a_view_that_writes_through() -> None:
    """x.diagonal() is a view in torch: in-place writes to it change x (they were lost)."""

    def fill(t: Any, x: Any) -> Any:
        y = x.clone()
        y.diagonal().fill_(2.0)
        y.diagonal(1).add_(1.0)
        y.diagonal(-1).mul_(0.0)
        return y

    check(fill, randn(3, 4))
    check(fill, randn(4, 3))

    def batched(t: Any, x: Any) -> Any:
        y = x.clone()
        d = y.diagonal(0, 1, 2)
        d.copy_(t.ones(d.shape))
        return y, d.is_contiguous()

    check(batched, randn(2, 3, 4))

    def with_grad(t: Any, x: Any) -> Any:
        x.requires_grad_()
        z = x * 2
        z.diagonal().add_(x.diagonal() ** 2)
        (g,) = t.autograd.grad((z * z).sum(), [x])
        return z, g

    check(with_grad, randn(3, 3))


# -- x.view(dtype): the same bits as another dtype ----------------------------------------------
_BY_SIZE = (("bool", "uint8", "int8"), ("int16", "float16", "bfloat16"), ("int32", "float32"))
_BY_SIZE += (("int64", "float64"),)
_SAME_SIZE = [(a, b) for g in _BY_SIZE for a in g for b in g if a != b]
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _patterns(src: str, dst: str) -> np.ndarray:
    """Bit patterns of `src`: random words plus signed zeros, infinities and subnormals where
    they are floats; 0/1 bytes where either side is bool (a bool holds no other byte)."""
    rng = np.random.default_rng(0)
    if "bool" in (src, dst):
        b = rng.integers(0, 2, 12).astype(np.uint8)
        return b.astype(bool) if src == "bool" else b.view(src)
    size = np.dtype(src).itemsize
    words = rng.integers(0, 2 ** (8 * size), 16, dtype=_UINT[size])
    return words.view(src)


@pytest.mark.backends("interpreter", "cpp")  # new kernels: every case on both
@pytest.mark.parametrize("src,dst", _SAME_SIZE)
def test_view_as_dtype_reads_the_same_bits(src, dst):
    if src == "bfloat16":  # NumPy has no bfloat16: made from float32 in both libraries
        x = randn(4, 4) * 1e3

        def fn(t, x):
            v = x.to(t.bfloat16).flip(0).view(getattr(t, dst))
            return v, v.flip(1)

        check(fn, x)
        return
    x = _patterns(src, dst)

    def fn(t, x):  # a flip first: the bitcast reads a computed value inside a kernel
        v = x.flip(0).view(getattr(t, dst))
        return v, v.flip(0)

    check(fn, x)


@pytest.mark.backends("interpreter", "cpp")  # new kernels: every case on both
def test_view_as_dtype_of_special_floats():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-45, 3.5, np.finfo(np.float32).max])

    def fn(t, x):
        f = x.to(t.float32) * 1
        return f.view(t.int32), f.to(t.bfloat16).view(t.int16), f.to(t.float16).view(t.int16)

    check(fn, x)


@pytest.mark.backends("interpreter", "cpp")  # new kernels: every case on both
def test_view_as_dtype_and_back_keeps_every_bit():
    # int16 -> bfloat16 -> int16 is exact for every pattern, NaNs included
    words = np.arange(-(2**15), 2**15, 7, dtype=np.int16)

    def fn(t, x):
        return (x * 1).view(t.bfloat16).view(t.int16), (x * 1).view(t.float16).view(t.int16)

    check(fn, words)


@pytest.mark.backends("interpreter", "cpp")  # new kernels: every case on both
def test_write_through_a_dtype_view_writes_the_bits():
    def fn(t, x):
        v = x.view(t.int32)
        v[1] = 0x40490FDB  # the bits of pi as a float32
        v.add_(1)  # the next float up, at every element
        return x, v

    check(fn, base(3, 2))

    def fn2(t, x):
        w = x.clone()
        w.view(t.int16).bitwise_xor_(-32768)  # flip the sign bits through the view
        return w

    check(fn2, randn(5).astype("float16"))


def test_view_as_dtype_carries_no_gradient():
    x = lt.randn(3, requires_grad=True)
    assert not x.view(lt.int32).requires_grad
    assert not x.view(lt.int32).view(lt.float32).requires_grad  # as torch: detached
    assert x.view(lt.float32).requires_grad  # the same dtype is a plain view


def test_view_as_dtype_of_another_size_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match=r"view\(\): viewing Float \(4 bytes\) as Short"):
        lt.ones(2, 4).view(lt.int16)
