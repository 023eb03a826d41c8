"""Loop layouts of C++ kernels: which kernels read their rows down columns, which scatters
split their columns between threads, which pointwise loops are cut at their range tests,
and that those kernels compute what torch does.

A reduction over a strided axis whose kept axis is contiguous (the weight and bias
gradients of a LayerNorm or Linear: sums of (rows, n) matrices over their rows) runs its
SIMD lanes across adjacent outputs (``o0_blk`` loops), so every load is a contiguous vector.
Operands the same for all outputs of a row (a row's mean and rstd) are computed once per
row and broadcast; an operand that walks along the row (a transposed read) keeps the row
layout.

Scatters likewise: an embedding gradient adds rows of the output gradient into rows of a
table chosen by an index, and threads that each own a block of the table's columns never
collide, so those kernels run in parallel without atomics (``o1_blk`` loops).

A ``cat`` or ``pad`` along the innermost axis tests the loop variable against constant
bounds to pick its piece; the loop is cut at those bounds so each sub-loop loads only its
own piece.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import BF16, TOL


@pytest.fixture
def cpp(tmp_path, monkeypatch):
    """The cpp backend with a private, empty disk cache."""
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with lt.backend("cpp"):
        yield


def kernel_sources(src: str) -> list[str]:
    """The generated kernel functions of a program's source, header comment included."""
    return [m.group(0) for m in re.finditer(r"^// k\d+ .*?^}$", src, re.M | re.S)]


def column_kernels(src: str) -> list[str]:
    return [k for k in kernel_sources(src) if "_blk" in k]


def lane_loop_at(kernel: str) -> int:
    """The line number of the column layout's SIMD loop over adjacent outputs."""
    lines = kernel.splitlines()
    return next(
        i for i, line in enumerate(lines) if re.search(r"for \(int lane = 0; lane < o\d+_n", line)
    )


def layer_norm_grads(t, x, g, mean, var):
    """LayerNorm backward's weight and bias gradients, with the row statistics as inputs:
    one kernel summing two products over the rows, with per-row operands."""
    rstd = t.rsqrt(var + 1e-5)  # computed per row
    xhat = (x - mean) * rstd
    return (g * xhat).sum(0), g.sum(0)


def _inputs(rows: int, cols: int, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, cols))
    g = rng.normal(size=(rows, cols))
    mean = x.mean(1, keepdims=True)
    var = x.var(1, keepdims=True)
    return [a.astype(dtype) for a in (x, g, mean, var)]


def _run(fn, arrays, backend):
    with lt.backend(backend):
        out = fn(lt, *(lt.tensor(a) for a in arrays))
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _torch(fn, arrays):
    def tensor(a):  # NumPy has no bfloat16 for torch: through float32, exactly
        wide = a.astype(np.float32) if a.dtype == BF16 else a
        return torch.from_numpy(wide).to(_TORCH[a.dtype])

    out = fn(torch, *(tensor(a) for a in arrays))
    return [
        o.float().numpy() if o.dtype == torch.bfloat16 else o.numpy()
        for o in (out if isinstance(out, tuple) else (out,))
    ]


_TORCH = {
    np.dtype("float32"): torch.float32,
    np.dtype("float64"): torch.float64,
    np.dtype("float16"): torch.float16,
    np.dtype(BF16): torch.bfloat16,
    np.dtype("int64"): torch.int64,
}


def _close(got, want, dtype, what="", absum=None):
    """`absum`: for a sum, the sum of its terms' magnitudes (per output). Two summation
    orders of n terms may differ by a few units of eps times it, however small the sum
    itself (cancellation), so it bounds the absolute difference of float32/float64 sums."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if dtype in ("float32", "float64"):
        rtol, atol = TOL[dtype]
        if absum is not None:
            atol = np.maximum(atol, 4 * np.finfo(dtype).eps * np.asarray(absum))
    else:  # one rounding to 16 bits of the float32 sum, as torch's
        rtol = atol = 2**-7 if dtype == "bfloat16" else 2**-9
        atol *= max(1.0, np.abs(want).max())
    bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))
    bad &= ~(np.isnan(got) & np.isnan(want))
    assert not bad.any(), (
        f"{what}: {int(bad.sum())} of {bad.size} differ beyond rtol={rtol}, atol={atol}: "
        f"got {got[bad][:5]}, want {want[bad][:5]}"
    )


# -- the layout decision ----------------------------------------------------------------------


def test_layer_norm_weight_and_bias_grads_read_down_columns(cpp):
    """(a): a multi-output column sum with per-row operands (mean, rstd) takes the column
    layout; the per-row rstd (a sqrt) is computed once per row, outside the lane loop."""
    x, g, mean, var = _inputs(1024, 128, np.float32)
    t = [lt.tensor(a) for a in (x, g, mean, var)]
    src = lt.debug.source(*layer_norm_grads(lt, *t))
    cols = column_kernels(src)
    assert len(cols) == 1, src
    kern = cols[0]
    assert kern.count("reduce_sum") == 2  # both gradients in one kernel
    lines = kern.splitlines()
    lane = lane_loop_at(kern)
    root = [i for i, line in enumerate(lines) if "sqrt" in line]
    assert root and all(i < lane for i in root), kern
    # blocked sums over the 1024 rows (COLUMN_BLOCK at a time) for accuracy
    assert "_b += 256" in kern
    for got, want in zip(
        _run(layer_norm_grads, [x, g, mean, var], "cpp"),
        _torch(layer_norm_grads, [x, g, mean, var]),
    ):
        _close(got, want, "float32")


def test_an_operand_walking_along_the_row_keeps_the_row_layout(cpp):
    """A transposed operand (contiguous along the reduced axis, strided across outputs)
    would be a gather in the column layout: the kernel stays in the row layout."""
    x, g, _, _ = _inputs(300, 40, np.float32)
    gt = np.ascontiguousarray(g.T)

    def fn(t, x, gt):
        return (x * gt.t()).sum(0)

    src = lt.debug.source(fn(lt, lt.tensor(x), lt.tensor(gt)))
    assert not column_kernels(src), src
    (got,) = _run(fn, [x, gt], "cpp")
    _close(got, (x * g).sum(0), "float32")


def test_layer_norm_training_step_grads_use_the_column_layout(cpp):
    """The real thing: nn.functional.layer_norm's backward; weight and bias gradients come
    from a column kernel, and all gradients equal torch's."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 50, 37)).astype(np.float32)
    w = rng.normal(size=37).astype(np.float32)
    b = rng.normal(size=37).astype(np.float32)
    gy = rng.normal(size=(4, 50, 37)).astype(np.float32)

    def grads(lib):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.layer_norm(xs[0], (37,), xs[1], xs[2])
        (y * lib.tensor(gy)).sum().backward()
        return [v.grad for v in xs]

    got = grads(lt)
    assert column_kernels(lt.debug.source(*got))
    for a, e, name in zip(got, grads(torch), ("x", "weight", "bias")):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_grads_match_torch(cpp, dim):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(70, 33)).astype(np.float32)
    gy = rng.normal(size=(70, 33)).astype(np.float32)

    def grad(lib):
        xt = lib.tensor(x, requires_grad=True)
        (lib.softmax(xt, dim) * lib.tensor(gy)).sum().backward()
        return xt.grad.numpy()

    np.testing.assert_allclose(grad(lt), grad(torch), rtol=1e-5, atol=1e-6)


# -- numerics on random shapes --------------------------------------------------------------------

REDUCE = {
    "sum": lambda t, v: v.sum(0),
    "amax": lambda t, v: v.amax(0),
    "amin": lambda t, v: v.amin(0),
}


@settings(max_examples=12, deadline=None)
@given(
    rows=st.sampled_from([1, 3, 255, 256, 257, 700]),
    cols=st.sampled_from([16, 17, 37, 130]),
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    strided=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_column_reductions_with_per_row_operands_match_torch_and_the_interpreter(
    rows, cols, dtype, strided, seed
):
    """sum/amax/amin over rows of an expression mixing per-row and per-element operands,
    on odd sizes (outputs not a multiple of the lane count, fewer and more rows than a
    block, one row), every float dtype, and a non-contiguous (sliced) input."""
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    x, g, mean, var = _inputs(rows, cols, npdtype, seed)
    if strided:  # every other row of a wider matrix, from column 1: strided rows, offset
        big = np.zeros((2 * rows, cols + 3), npdtype)
        big[::2, 1 : cols + 1] = x
        x = big

    def fn(t, x, g, mean, var):
        if strided:
            x = x[::2, 1 : cols + 1]
        v = g * ((x - mean) * t.rsqrt(var + 1e-5))
        return tuple(f(t, v) for f in REDUCE.values())

    arrays = [x, g, mean, var]
    with lt.backend("cpp"):
        src = lt.debug.source(*fn(lt, *(lt.tensor(a) for a in arrays)))
    assert column_kernels(src), src
    got = _run(fn, arrays, "cpp")
    ref = _run(fn, arrays, "interpreter")
    want = _torch(fn, arrays)
    x64, g64, mean64, var64 = (np.asarray(a, np.float64) for a in arrays)
    if strided:
        x64 = x64[::2, 1 : cols + 1]
    absum = np.abs(g64 * ((x64 - mean64) / np.sqrt(var64 + 1e-5))).sum(0)
    for name, a, r, w in zip(REDUCE, got, ref, want):
        bound = absum if name == "sum" else None  # max and min are exact
        _close(a, w, dtype, f"{name} vs torch", bound)
        _close(a, r, dtype, f"{name} vs the interpreter", bound)


# -- scatters split by columns --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize(("rows", "cols"), [(1024, 128), (300, 37), (50, 130), (7, 1)])
def test_embedding_gradient_threads_own_columns(cpp, dtype, rows, cols):
    """The gradient of an embedding lookup (index_add of rows into a small table: the rows
    collide) splits the table's columns between threads, without atomics, and adds in the
    serial order: float32 results equal NumPy's serial np.add.at bit for bit."""
    rng = np.random.default_rng(rows + cols)
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    idx = rng.integers(0, 5, size=rows)
    grad = rng.normal(size=(rows, cols)).astype(npdtype)

    def fn(t, grad, idx):
        return t.zeros(5, cols, dtype=grad.dtype).index_add(0, idx, grad)

    src = lt.debug.source(fn(lt, lt.tensor(grad), lt.tensor(idx)))
    scatter = [k for k in kernel_sources(src) if "[scatter" in k]
    assert scatter and "atomic" not in scatter[0], src
    if cols > 1:
        assert "o1_blk" in scatter[0], scatter[0]
    (got,) = _run(fn, [grad, idx], "cpp")
    if dtype == "float32":
        want = np.zeros((5, cols), np.float32)
        np.add.at(want, idx, grad)
        np.testing.assert_array_equal(got, want)
    want = _torch(fn, [grad, idx])[0]
    _close(got, want, dtype)


def test_embedding_backward_matches_torch(cpp):
    rng = np.random.default_rng(3)
    table = rng.normal(size=(65, 48)).astype(np.float32)
    idx = rng.integers(0, 65, size=(16, 64))
    gy = rng.normal(size=(16, 64, 48)).astype(np.float32)

    def grad(lib):
        w = lib.tensor(table, requires_grad=True)
        (lib.nn.functional.embedding(lib.tensor(idx), w) * lib.tensor(gy)).sum().backward()
        return w.grad

    got = grad(lt)
    assert "o1_blk" in lt.debug.source(got)
    np.testing.assert_allclose(got.numpy(), grad(torch).numpy(), rtol=1e-5, atol=1e-5)


def test_a_scatter_whose_columns_collide_keeps_its_loops(cpp):
    """scatter_add along the last dim: different columns of a row may hit the same target,
    so the kernel is not split by columns."""
    rng = np.random.default_rng(4)
    src_ = rng.normal(size=(40, 33)).astype(np.float32)
    idx = rng.integers(0, 6, size=(40, 33))

    def fn(t, s, i):
        return t.zeros(40, 6).scatter_add(1, i, s)

    src = lt.debug.source(fn(lt, lt.tensor(src_), lt.tensor(idx)))
    assert "_blk" not in src
    (got,) = _run(fn, [src_, idx], "cpp")
    np.testing.assert_allclose(got, _torch(fn, [src_, idx])[0], rtol=1e-5, atol=1e-5)


# -- pointwise loops cut at their range tests -------------------------------------------------


def test_cat_of_head_slices_loads_one_piece_per_sub_loop(cpp):
    """Attention's head merge in the backward (three (B, H, T, D) gradients concatenated
    along the last axis): three sub-loops, each with its range tests constant, and each
    split by the head size so that the piece it keeps is read D elements in a row, without
    a division (inner_split)."""
    rng = np.random.default_rng(5)
    parts = [rng.normal(size=(2, 4, 8, 32)).astype(np.float32) for _ in range(3)]

    def fn(t, *ps):
        return t.cat([p.transpose(1, 2).reshape(2, 8, 128) for p in ps], -1) * 2

    src = lt.debug.source(fn(lt, *(lt.tensor(p) for p in parts)))
    (kern,) = [k for k in kernel_sources(src) if "cat" in k.splitlines()[0]]
    assert kern.count("for (int64_t o2a = 0; o2a < 4; ++o2a)") == 3, kern
    assert kern.count("for (int64_t o2b = 0; o2b < 32; ++o2b)") == 3, kern
    for lo in (" + 128]", " + 256]", "]"):  # each piece's store, and its load in a row
        assert f"b3[o0*3072 + o1*384 + o2a*32 + o2b{lo} = " in kern, kern
    assert kern.count("[o0*1024 + o1*32 + o2a*256 + o2b]") == 3, kern
    assert ">= 128 &&" not in kern  # no test left to evaluate per element
    (got,) = _run(fn, parts, "cpp")
    np.testing.assert_array_equal(got, _torch(fn, parts)[0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_head_merge_reads_rows_without_divisions(dtype):
    """(B, H, T, D) -> (B, T, H*D), as attention's output: the innermost loop over H*D
    splits into heads and D consecutive elements, so no index divides (a bfloat16 read
    at divided indices is a gather of scalar loads: 8% of a bf16 GPT step)."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 4, 8, 32)).astype(np.float32)

    def fn(t, p):
        return (p.to(getattr(t, dtype)).transpose(1, 2).reshape(2, 8, 128) + 1).float()

    src = lt.debug.source(fn(lt, lt.tensor(x)))
    (kern,) = [k for k in kernel_sources(src) if "pointwise" in k.splitlines()[0]]
    assert "/ 32" not in kern and "% 32" not in kern and "floordiv" not in kern, kern
    assert "for (int64_t o2b = 0; o2b < 32; ++o2b)" in kern, kern
    (got,) = _run(fn, [x], "cpp")
    np.testing.assert_array_equal(got, _torch(fn, [x])[0])


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.sampled_from([1, 2, 3, 8, 9, 16, 24]), min_size=3, max_size=4),
    perm_seed=st.integers(0, 23),
    pieces=st.integers(1, 3),
    crop=st.sampled_from([0, 0, 8, 16, 5]),  # (a crop by 5 leaves no whole divisor)
    dtype=st.sampled_from(["float32", "bfloat16", "int64"]),
)
def test_permuted_merges_split_the_inner_loop_exactly(shape, perm_seed, pieces, crop, dtype):
    """Permute, merge the last two axes, concatenate a few and crop: whatever inner_split
    makes of the innermost loop (split or not, in range pieces or whole), equal to torch."""
    rng = np.random.default_rng(perm_seed)
    perm = list(rng.permutation(len(shape)))
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    parts = [(rng.normal(size=shape) * 8).astype(npdtype) for _ in range(pieces)]
    merged = [shape[i] for i in perm]
    merged = [*merged[:-2], merged[-2] * merged[-1]]

    def fn(t, *ps):
        y = t.cat([p.permute(*perm).reshape(*merged) for p in ps], -1)
        return y[..., crop:] * 3

    if merged[-1] * pieces <= crop:
        return
    with lt.backend("cpp"):
        (got,) = _run(fn, parts, "cpp")
    want = _torch(fn, parts)[0]
    np.testing.assert_array_equal(got, want)


@settings(max_examples=10, deadline=None)
@given(
    widths=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    pad=st.tuples(st.integers(-2, 5), st.integers(-2, 5)),
    rows=st.integers(1, 5),
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
)
def test_cat_and_pad_along_the_last_axis_match_torch(widths, pad, rows, dtype):
    """Pieces of odd widths (one element, fewer than a vector), a constant pad on both
    sides (negative: a crop), every float dtype: equal to torch exactly."""
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(sum(widths))
    parts = [rng.normal(size=(rows, 3, w)).astype(npdtype) for w in widths]
    if sum(widths) + pad[0] + pad[1] < 1:
        pad = (0, 0)

    def fn(t, *ps):
        y = t.cat([p.flip(1) if i % 2 else p for i, p in enumerate(ps)], -1)
        return t.nn.functional.pad(y + 1, pad, value=-3.0)

    with lt.backend("cpp"):
        (got,) = _run(fn, parts, "cpp")
    want = _torch(fn, parts)[0]
    np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))


# -- pointwise loops cut by residue classes ----------------------------------------------------


def test_an_interleave_is_one_loop_per_residue_without_divisions(cpp):
    """Three tensors interleaved along the last axis (stack, then merge) and cropped by 5:
    the innermost loop reads ``(o + 2) // 3`` where ``(o + 2) % 3`` picks the piece. Cut
    into three loops, one per residue class of o modulo 3 (strided_loops), each reads its
    own piece consecutively, with no division and no test left."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 64)).astype(np.float32)

    def fn(t, a):
        return (t.stack([a, a * 2, a + 1], -1).reshape(4, 192) + 1)[:, 5:]

    src = lt.debug.source(fn(lt, lt.tensor(x)))
    (kern,) = kernel_sources(src)
    assert kern.count("for (int64_t o1q = 0; o1q < ") == 3, kern
    assert "% 3" not in kern and "/ 3" not in kern and "clamp" not in kern, kern
    for start in ("", " + 1", " + 2"):  # the three residue classes' stores, 3 apart
        assert f"b1[o0*187 + o1q*3{start}] = " in kern, kern
    (got,) = _run(fn, [x], "cpp")
    np.testing.assert_array_equal(got, _torch(fn, [x])[0])


def test_a_strided_convolutions_input_gradient_is_cut_by_parity(cpp):
    """A stride-2 convolution's input gradient puts each window's gradient at every
    other pixel: read as ``(o - k) // 2`` where ``(o - k) % 2 == 0`` per tap, two divisions
    per element and a gather (8% of the ResNet-8 step). Its kernel is cut into the two
    parities of the column, each reading consecutive elements; the gradient equals torch's."""
    rng = np.random.default_rng(8)
    x_ = rng.normal(size=(2, 3, 32, 32)).astype(np.float32)
    w_ = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    g_ = rng.normal(size=(2, 4, 16, 16)).astype(np.float32)

    def grad(t, x, w, g):
        x.requires_grad_(True)
        y = t.nn.functional.conv2d(x, w, stride=2, padding=1)
        return t.autograd.grad(y, [x], g)[0]

    src = lt.debug.source(grad(lt, *(lt.tensor(a) for a in (x_, w_, g_))))
    cut = [k for k in kernel_sources(src) if "o3q" in k]
    assert cut, src
    for kern in cut:
        loops = re.findall(r"for \(int64_t o3q = 0; o3q < \d+; \+\+o3q\)", kern)
        assert len(loops) % 2 == 0, kern  # both parities of each cut piece
        assert not re.search(r"o3q[^\]\n]*\) [%/] 2", kern), kern  # nothing divides o3q
        # the row's parity and border tests are made once per row, before the SIMD loop
        # (inside it g++ would make masked loads of them and not vectorize), and the
        # kernel asks g++ to unswitch its loops on them
        assert 'optimize("unswitch-loops")' in kern.split("{", 1)[0], kern
        scopes = re.findall(r"\{\n((?:\s*const bool v\d+ = [^\n]*\n)+)\s*#pragma omp simd", kern)
        assert any("(o2 " in scope for scope in scopes), kern
        assert not any("o3" in scope for scope in scopes), kern
    (got,) = _run(grad, [x_, w_, g_], "cpp")
    np.testing.assert_allclose(got, _torch(grad, [x_, w_, g_])[0], rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(
    k=st.integers(2, 5),  # 5: over MAX_RESIDUES, left whole
    n=st.integers(1, 40),
    crop=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    pad=st.tuples(st.integers(0, 9), st.integers(0, 9)),
    dtype=st.sampled_from(["float32", "float64", "bfloat16", "int64"]),
)
def test_interleaves_cropped_and_padded_match_torch(k, n, crop, pad, dtype):
    """k tensors interleaved, cropped at both ends (residue classes starting anywhere),
    then padded (range pieces, each cut by residues where it is long enough): equal to
    torch, element for element, whatever the cut."""
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(k * 1000 + n)
    parts = [(rng.normal(size=(3, n)) * 8).astype(npdtype) for _ in range(k)]
    if k * n - crop[0] - crop[1] < 1:
        crop = (0, 0)

    def fn(t, *ps):
        y = t.stack([p * (i + 1) for i, p in enumerate(ps)], -1).reshape(3, k * n)
        y = y[:, crop[0] : k * n - crop[1]]
        return t.nn.functional.pad(y, pad, value=-1)

    with lt.backend("cpp"):
        (got,) = _run(fn, parts, "cpp")
    want = _torch(fn, parts)[0]
    np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))


# -- column reductions that store elements on the way -------------------------------------------


def relu_grad_and_bias_grad(t, pre, gout):
    """An MLP's backward through a ReLU: the output layer's bias gradient (a column sum of
    `gout`), the masked gradient (kept: it feeds the GEMMs) and its own column sum (the
    hidden bias gradient) — one kernel that stores each masked element as it sums."""
    gin = t.where(pre <= 0, t.zeros_like(gout), gout)
    return gout.sum(0), gin, gin.sum(0)


@settings(max_examples=12, deadline=None)
@given(
    rows=st.sampled_from([1, 3, 255, 256, 257, 700]),
    cols=st.sampled_from([16, 17, 37, 130]),
    dtype=st.sampled_from(["float32", "float64", "bfloat16"]),
    strided=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_column_reductions_storing_elements_match_torch_and_the_interpreter(
    rows, cols, dtype, strided, seed
):
    """The stored elements are written once each, by the lane of their column (bit for bit
    the interpreter's), and the sums match, on odd sizes, every float dtype and a sliced
    (strided, offset) input. Without the column layout for such kernels the sum would read
    its rows 'cols' elements apart (an MLP's bias gradients, 15% of its bf16 step)."""
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    pre = rng.normal(size=(rows, cols)).astype(npdtype)
    gout = rng.normal(size=(rows, cols)).astype(npdtype)
    if strided:
        big = np.zeros((2 * rows, cols + 3), npdtype)
        big[::2, 1 : cols + 1] = pre
        pre = big

    def fn(t, pre, gout):
        if strided:
            pre = pre[::2, 1 : cols + 1]
        return relu_grad_and_bias_grad(t, pre, gout)

    arrays = [pre, gout]
    with lt.backend("cpp"):
        src = lt.debug.source(*fn(lt, *(lt.tensor(a) for a in arrays)))
    cols_k = column_kernels(src)
    assert len(cols_k) == 1, src
    lines = cols_k[0].splitlines()
    lane = lane_loop_at(cols_k[0])
    lane_end = next(i for i in range(lane + 1, len(lines)) if lines[i].strip() == "}")
    # the masked element, stored by its lane at its (row, column), inside the lane loop
    # (one row: stored with the sums, after the loop)
    assert rows == 1 or any(
        re.search(r"b\d+\[o\d+[^\]]*\] = ", line) for line in lines[lane:lane_end]
    ), cols_k[0]
    got = _run(fn, arrays, "cpp")
    ref = _run(fn, arrays, "interpreter")
    want = _torch(fn, arrays)
    np.testing.assert_array_equal(got[1], ref[1])  # a pointwise value: exact
    p64 = np.asarray(arrays[0], np.float64)
    if strided:
        p64 = p64[::2, 1 : cols + 1]
    g64 = np.asarray(gout, np.float64)
    for i, absum in ((0, np.abs(g64).sum(0)), (2, np.abs(np.where(p64 <= 0, 0, g64)).sum(0))):
        _close(got[i], want[i], dtype, f"sum {i} vs torch", absum)
        _close(got[i], ref[i], dtype, f"sum {i} vs the interpreter", absum)
