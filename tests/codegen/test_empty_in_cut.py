"""Size-0 values in a cut on the cpp backend: compiled beside the real work, never diverting
it to the reference interpreter, with torch's results for every op over empty operands.

The table (`CASES`) mixes one size-0 op into a cut that also computes a softmax; each case
must match torch, give the same bits in lazy and sync mode, and run nothing on the
interpreter (the ``interpreter_fallbacks`` metric).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import lazytorch as lt
import lazytorch.nn.functional as LF
from helpers import assert_same
from lazytorch.runtime.empty_values import strip_empty
from lazytorch.runtime.executor import build_program


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    """The cpp backend with a private, empty disk cache (so compiles can be counted)."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        yield


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _bits(t: lt.Tensor) -> np.ndarray:
    """The bytes of `t`'s values, every NaN as +NaN. A NaN's sign says only whether a 0/0
    was folded at compile time (+NaN; a sum of nothing becomes a literal 0, so the mean of
    nothing can fold) or computed by x86 at run time (-NaN); torch leaves it unspecified."""
    a = np.ascontiguousarray(t.numpy()).reshape(-1)
    if a.dtype.kind != "f":
        return a
    return np.where(np.isnan(a), np.nan, a).astype(a.dtype).view(np.uint8)


def _softmax_beside_empty(x: lt.Tensor) -> tuple[lt.Tensor, lt.Tensor]:
    return LF.softmax(x * 1.5, dim=1), lt.zeros(0, 3) + 1


def test_softmax_beside_an_empty_tensor_is_one_compiled_program(cpp):
    xa = _data(512, 1000)
    y, z = _softmax_beside_empty(lt.tensor(xa))
    lt.materialize(y, z)
    c = lt.metrics.counters()
    assert (c["programs_built"], c["compiles"], c["interpreter_fallbacks"]) == (1, 1, 0)
    assert c["kernels_launched"] >= 1  # the softmax ran compiled
    assert (tuple(z.shape), z.dtype) == ((0, 3), lt.float32)
    want = torch.softmax(torch.from_numpy(xa) * 1.5, dim=1).numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-7)
    # What was compiled is the softmax alone: its cut finds the same program on disk.
    alone = LF.softmax(lt.tensor(xa) * 1.5, dim=1)
    lt.materialize(alone)
    c = lt.metrics.counters()
    assert (c["compiles"], c["cache_hits_disk"], c["interpreter_fallbacks"]) == (1, 1, 0)
    np.testing.assert_array_equal(_bits(alone), _bits(y))


def test_softmax_beside_an_empty_tensor_is_bitwise_sync_mode(cpp):
    xa = _data(512, 1000, seed=3)
    y, z = _softmax_beside_empty(lt.tensor(xa))
    lt.materialize()  # every live pending tensor: both, as an auto cut takes them
    with lt.sync_mode():
        ys, zs = _softmax_beside_empty(lt.tensor(xa))
    np.testing.assert_array_equal(_bits(y), _bits(ys))
    assert tuple(zs.shape) == tuple(z.shape) == (0, 3)
    assert lt.metrics.counters()["interpreter_fallbacks"] == 0


def test_the_disk_key_of_a_cut_with_empty_values_is_that_of_its_compiled_part(cpp):
    from lazytorch.runtime.backends import get_backend

    y, z = _softmax_beside_empty(lt.tensor(_data(8, 10)))
    both, alone = build_program([y._node, z._node]), build_program([y._node])
    backend, options = get_backend("cpp"), {"deterministic": False}
    assert backend.key(both, options) == backend.key(alone, options)  # what warm-up looks up
    lt.materialize(y, z)
    assert backend.disk.lookup(backend.key(both, options)) is not None


def test_a_cut_of_only_empty_values_compiles_nothing(cpp):
    a, b = lt.zeros(0, 3) + 1, lt.arange(0) * 2
    lt.materialize(a, b)
    c = lt.metrics.counters()
    assert (c["compiles"], c["kernels_launched"], c["interpreter_fallbacks"]) == (0, 0, 0)
    assert (tuple(a.shape), a.dtype) == ((0, 3), lt.float32)
    assert (tuple(b.shape), b.dtype) == ((0,), lt.int64)


def test_an_error_in_the_compiled_part_names_its_op_and_line(cpp):
    x = lt.tensor(np.arange(6).reshape(2, 3))
    e = lt.zeros(0, 3) + 1
    y = x[lt.tensor(np.array([0, 5]))]  # the failing line
    line = y._node.loc[1]
    with pytest.raises(IndexError, match=rf"out of bounds.*in gather recorded at .*:{line}\)"):
        lt.materialize(e, y)
    assert lt.metrics.counters()["interpreter_fallbacks"] == 0


def test_strip_empty_rewrites_reductions_of_nothing_and_drops_empty_values():
    y = lt.ones(2, 3).sum(0)
    e = lt.zeros(0, 3)
    split = strip_empty(build_program([y._node, e.sum(0)._node, (e + 1)._node]))
    assert split.program.ops() == [
        *("const", "expand", "reduce_sum", "reshape"),  # y
        *("const", "expand", "reshape"),  # the sum of nothing: 0s
    ]
    assert split.params == []  # the scalar 1 of e + 1 is not read
    assert split.outputs == [0, 1, ((0, 3), np.dtype("float32"))]


def _idx(lib, *shape):
    return lib.zeros(*shape, dtype=lib.int64)


def _setitem_empty(lib, x, w):
    y = x.clone()
    y[lib.tensor([], dtype=lib.int64)] = 5.0
    return y


def _fn(lib):
    return LF if lib is lt else TF


# name -> fn(lib, x, w) with x: (n, 3), w: (3, 5); each result involves a size-0 value.
CASES = {
    "add": lambda lib, x, w: lib.zeros(0, 3) + 1,
    "sum_dim": lambda lib, x, w: lib.zeros(0, 3).sum(0),
    "sum_all": lambda lib, x, w: x[:0].sum(),
    "sum_int": lambda lib, x, w: lib.zeros(0, 3, dtype=lib.int32).sum(0),
    "sum_bool": lambda lib, x, w: (x[:0] > 0).sum(0),
    "prod_dim": lambda lib, x, w: x[:0].prod(0),
    "prod_all": lambda lib, x, w: x[:0].prod(),
    "prod_int": lambda lib, x, w: _idx(lib, 0, 3).prod(0),
    "mean": lambda lib, x, w: x[:0].mean(0),
    "var": lambda lib, x, w: x[:0].var(0),
    "any": lambda lib, x, w: (x[:0] > 0).any(0),
    "all": lambda lib, x, w: (x[:0] > 0).all(0),
    "logsumexp": lambda lib, x, w: lib.logsumexp(x[:0], 0),
    "norm": lambda lib, x, w: lib.linalg.vector_norm(x[:0], dim=0),
    "amax_other_dim": lambda lib, x, w: x[:0].amax(1),
    "softmax_of_empty": lambda lib, x, w: lib.softmax(x[:0], 1),
    "layer_norm_of_empty": lambda lib, x, w: _fn(lib).layer_norm(x[:0], (3,)),
    "cross_entropy_of_empty": lambda lib, x, w: _fn(lib).cross_entropy(x[:0], _idx(lib, 0)),
    "cat_end": lambda lib, x, w: lib.cat([x, lib.zeros(0, 3)]),
    "cat_middle": lambda lib, x, w: lib.cat([x, x[:0], x * 2], 0),
    "cat_legacy_1d": lambda lib, x, w: lib.cat([x, lib.zeros(0)]),
    "cat_all_empty": lambda lib, x, w: lib.cat([x[:0], x[:0]]),
    "cat_dim1": lambda lib, x, w: lib.cat([x[:, :0], x], 1),
    "stack_empty": lambda lib, x, w: lib.stack([x[:0], x[:0]]),
    "matmul_k0": lambda lib, x, w: x[:, :0] @ w[:0],
    "matmul_m0": lambda lib, x, w: x[:0] @ w,
    "matmul_int_k0": lambda lib, x, w: (x[:, :0] > 0).long() @ (w[:0] > 0).long(),
    "bmm_batch0": lambda lib, x, w: lib.bmm(lib.zeros(0, 2, 3), lib.zeros(0, 3, 4)),
    "mv_k0": lambda lib, x, w: lib.mv(x[:, :0], w[:0, 0]),
    "dot_0": lambda lib, x, w: lib.dot(x[0, :0], x[1, :0]),
    "linear_k0": lambda lib, x, w: _fn(lib).linear(x[:, :0], lib.zeros(5, 0), w[0]),
    "index_empty": lambda lib, x, w: x[lib.tensor([], dtype=lib.int64)],
    "index_select": lambda lib, x, w: x.index_select(0, _idx(lib, 0)),
    "gather_empty_index": lambda lib, x, w: x.gather(1, _idx(lib, x.shape[0], 0)),
    "scatter_empty_index": lambda lib, x, w: x.scatter(1, _idx(lib, x.shape[0], 0), x[:, :0]),
    "scatter_add_empty": lambda lib, x, w: x.scatter_add(0, _idx(lib, 0, 3), x[:0]),
    "index_put_empty": lambda lib, x, w: x.clone().index_put_((_idx(lib, 0),), x[:0]),
    "setitem_empty_index": _setitem_empty,
    "embedding_empty": lambda lib, x, w: _fn(lib).embedding(_idx(lib, 0), x),
    "pad_empty": lambda lib, x, w: _fn(lib).pad(lib.zeros(0, 3), (1, 1, 1, 1), value=2.0),
    "pad_empty_dim": lambda lib, x, w: _fn(lib).pad(x[:, :0], (2, 1), value=-1.0),
    "slice_exp": lambda lib, x, w: x[:, 2:2].exp(),
    "cumsum": lambda lib, x, w: x[:0].cumsum(0),
    "sort": lambda lib, x, w: lib.sort(x[:0], 1)[0],
    "argsort": lambda lib, x, w: lib.argsort(x[:, :0], 1),
    "topk_0": lambda lib, x, w: lib.topk(x, 0, 1)[0],
    "arange_0": lambda lib, x, w: lib.arange(0),
    "reshape": lambda lib, x, w: x[:0].reshape(3, 0, 2),
    "expand_to_0": lambda lib, x, w: x[:1].expand(0, 3),
    "where": lambda lib, x, w: lib.where(x[:0] > 0, x[:0], 1.0),
    "flip": lambda lib, x, w: x[:0].flip(0),
    "permute": lambda lib, x, w: x[:0].permute(1, 0),
    "repeat_0": lambda lib, x, w: x.repeat(0, 1),
    "tril": lambda lib, x, w: lib.tril(x[:0]),
    "sum_of_nothing_feeds_work": lambda lib, x, w: lib.zeros(0, 3).sum(0) + x[0],
    "prod_of_nothing_feeds_work": lambda lib, x, w: x[:0].prod(0) * x,
    "mean_of_nothing_feeds_work": lambda lib, x, w: x[:0].mean() + x.sum(),
    "matmul_k0_feeds_work": lambda lib, x, w: (x[:, :0] @ w[:0]).exp() + x.sum(),
    "cat_feeds_work": lambda lib, x, w: lib.cat([x[:0], x]).sum(0),
}


def _cut(lib, case, xa, wa, sync=False):
    """(softmax beside, the case's result): one cut in lazy mode, op by op in sync mode."""
    x, w = lib.tensor(xa), lib.tensor(wa)
    if lib is torch:
        return torch.softmax(x * 1.5, 1), CASES[case](torch, x, w)
    with lt.sync_mode(sync):
        big = LF.softmax(x * 1.5, dim=1)
        out = CASES[case](lt, x, w)
    lt.materialize(big, out)
    return big, out


@pytest.mark.parametrize("case", list(CASES))
def test_empty_op_beside_work_matches_torch_and_sync_mode(cpp, case):
    wa = _data(3, 5, seed=1)
    # The second size compiles over a symbolic size (dynamic shapes) where it generalizes.
    for n in (4, 7):
        xa = _data(n, 3, seed=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about var of nothing
            want = _cut(torch, case, xa, wa)
        got = _cut(lt, case, xa, wa)
        assert_same(got, want, what=f"{case} (n={n})")
        sync = _cut(lt, case, xa, wa, sync=True)
        for g, s in zip(got, sync):
            np.testing.assert_array_equal(_bits(g), _bits(s), err_msg=f"{case}: lazy != sync")
    assert lt.metrics.counters()["interpreter_fallbacks"] == 0


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x[:0].max(0)[0],
        lambda lib, x: x[:0].amin(0),
        lambda lib, x: x[:0].argmax(0),
        lambda lib, x: x[:0].min(),
    ],
    ids=["max_dim", "amin", "argmax", "min_all"],
)
def test_extremes_of_nothing_raise_like_torch(cpp, fn):
    xa = _data(4, 3)
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.from_numpy(xa))
    with pytest.raises(type(theirs.value)):
        x = lt.tensor(xa)
        lt.materialize(LF.softmax(x, 1), fn(lt, x))


def test_an_op_without_a_rule_runs_on_the_interpreter_and_is_counted(cpp):
    # gather from an empty dim at a non-empty index: an error the interpreter reports
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(0, 3).gather(0, torch.zeros(2, 3, dtype=torch.int64))
    x = lt.tensor(_data(4, 3))
    # (the index from data: built only from constants, the gather would be computed on the
    # host before the program, lazytorch.runtime.host_fold)
    idx = lt.tensor(np.zeros((2, 3), np.int64))
    with pytest.raises(type(theirs.value), match="out of bounds"):
        lt.materialize(LF.softmax(x, 1), lt.zeros(0, 3).gather(0, idx))
    assert lt.metrics.counters()["interpreter_fallbacks"] == 1
