"""The conv2d primitive: the direct C++ kernel (codegen/include/lazytorch_conv.h), the
reference, and its gradients (another conv2d for the input, im2col for the weight), against
torch on every backend.

The kernel's corners are what these shapes reach: output widths that are not a multiple of
the vector (a partial last vector, stored element by element), output channels that are not
a multiple of the register block (a block padded with zero weights, whose extra rows must
never be stored), column strides (the input split into phase planes), dilation, asymmetric
and zero padding, and a kernel wider than the 64 taps kept on the stack.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import check, check_grad
from lazytorch.debug import program
from lazytorch.scheduler import schedule
from lazytorch.scheduler.kernel import Extern

F = lt.nn.functional
# every case on both backends: the C++ kernel is what this file tests
pytestmark = pytest.mark.backends("interpreter", "cpp")


def _r(*shape: int, seed: int = 0, dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES = [
    # (N, C, H, W), (O, kH, kW), stride, padding, dilation
    ((2, 3, 9, 9), (4, 3, 3), 1, 1, 1),
    ((2, 16, 32, 32), (16, 3, 3), 1, 1, 1),  # the ResNet block's layer: whole vectors
    ((3, 5, 17, 19), (9, 3, 3), 2, 1, 1),  # strided, ragged width, 9 channels (block + 1)
    ((2, 2, 11, 13), (3, 2, 5), (2, 3), (0, 2), (2, 1)),
    ((1, 1, 5, 5), (1, 1, 1), 1, 0, 1),
    ((2, 3, 20, 70), (17, 3, 3), 1, 2, 2),  # 70 wide: two chunks of vectors and a tail
    ((1, 2, 9, 9), (2, 9, 9), 1, 4, 1),
    ((2, 16, 16, 16), (32, 1, 1), 2, 0, 1),  # the 1x1 shortcut of a ResNet
    ((1, 3, 8, 8), (5, 3, 3), 3, (1, 0), 1),  # padding past what the last output reads
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation", CASES)
def test_conv2d_matches_torch_with_gradients(xs, ws, stride, padding, dilation):
    x = _r(*xs, seed=1)
    w = _r(ws[0], xs[1], *ws[1:], seed=2)
    b = _r(ws[0], seed=3)

    def fn(lib, x, w, b):
        return lib.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation)

    check(fn, x, w, b, atol=2e-5, rtol=2e-5)
    # a weight gradient sums N*Ho*Wo products: on the 2x16x32x32 case torch's own float32
    # result is 1.2e-4 off float64 (ours 2.6e-5), so the comparison with torch allows that
    check_grad(fn, x, w, b, atol=3e-4, rtol=1e-4)


def test_conv2d_float64_second_order_and_sync_mode():
    x, w = _r(2, 3, 7, 6, dtype=np.float64), _r(4, 3, 3, 2, seed=1, dtype=np.float64)

    def fn(lib, x, w):
        return lib.nn.functional.conv2d(x, w, stride=(2, 1), padding=1) ** 2

    check(fn, x, w)
    check_grad(fn, x, w, second_order=True, modes=("lazy", "sync"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_conv2d_of_16_bit_floats_computes_in_float32(dtype):
    # (tests/ops/test_bfloat16.py checks the single rounding bit for bit)
    x, w, b = _r(2, 3, 8, 8), _r(4, 3, 3, 3, seed=1), _r(4, seed=2)

    def fn(lib, x, w, b):
        d = getattr(lib, dtype)
        return lib.nn.functional.conv2d(x.to(d), w.to(d), b.to(d), padding=1).float()

    check(fn, x, w, b, atol=2e-2, rtol=2e-2)


def test_conv1d_runs_as_conv2d_and_a_kernel_wider_than_64_taps():
    x, w = _r(2, 3, 100), _r(4, 3, 70, seed=1)

    def fn(lib, x, w):
        return lib.nn.functional.conv1d(x, w, padding=3, stride=2)

    check(fn, x, w, atol=1e-4, rtol=1e-4)
    check_grad(fn, x, w, atol=1e-4, rtol=1e-4)


def test_non_contiguous_input_and_empty_batch():
    x = _r(3, 2, 8, 9)

    def fn(lib, x, w):
        # a permuted view is stored contiguous before the kernel reads it
        return lib.nn.functional.conv2d(x.permute(1, 0, 2, 3), w, padding=1)

    check(fn, x, _r(4, 3, 3, 3, seed=1), atol=2e-5, rtol=2e-5)
    check(lambda lib, x, w: lib.nn.functional.conv2d(x, w), _r(0, 3, 5, 5), _r(2, 3, 3, 3))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 2),
    c=st.integers(1, 4),
    o=st.integers(1, 10),
    h=st.integers(1, 12),
    w=st.integers(1, 40),
    kh=st.integers(1, 4),
    kw=st.integers(1, 4),
    sh=st.integers(1, 3),
    sw=st.integers(1, 3),
    ph=st.integers(0, 2),
    pw=st.integers(0, 2),
    dh=st.integers(1, 2),
    dw=st.integers(1, 2),
)
def test_conv2d_shapes_against_torch(n, c, o, h, w, kh, kw, sh, sw, ph, pw, dh, dw):
    x, wt = _r(n, c, h, w, seed=h * 41 + w), _r(o, c, kh, kw, seed=kh * 7 + kw)

    def fn(lib, x, wt):
        return lib.nn.functional.conv2d(x, wt, stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw))

    check(fn, x, wt, atol=2e-5, rtol=2e-5, modes=("lazy",))  # torch refusing: so do we
    if (h + 2 * ph - dh * (kh - 1)) >= 1 and (w + 2 * pw - dw * (kw - 1)) >= 1:
        check_grad(fn, x, wt, atol=5e-5, rtol=5e-5)


def test_forward_convolution_is_one_extern_call():
    # an un-fusing or im2col-restoring change fails here: the forward of conv + BN-style
    # affine + ReLU is the conv extern and one pointwise kernel, with no window copies
    x, w = lt.tensor(_r(2, 3, 8, 8)), lt.tensor(_r(4, 3, 3, 3, seed=1))
    s = schedule(program(F.relu(F.conv2d(x, w, padding=1) * 2.0 + 1.0)))
    steps = [(type(st).__name__, st.kind) for st in s.steps]
    assert steps == [("Extern", "conv"), ("Kernel", "pointwise")], steps


def test_conv_output_never_shares_its_input_memory():
    # the planner may hand a dying buffer's block to the next step's output in pointwise
    # kernels only; an extern reads its input while it stores, so a conv whose input dies
    # at it (relu(x) here) must write elsewhere. LAZYTORCH_VERIFY's plan check fails on an
    # overlap, and the values below would be wrong.
    x, w = _r(2, 4, 10, 10), _r(4, 4, 3, 3, seed=1)

    def fn(lib, x, w):
        y = lib.nn.functional.conv2d(lib.relu(x), w, padding=1)
        return lib.nn.functional.conv2d(lib.relu(y), w, padding=1)

    check(fn, x, w, atol=1e-4, rtol=1e-4)
    s = schedule(program(fn(lt, lt.tensor(x), lt.tensor(w))))
    convs = [st for st in s.steps if isinstance(st, Extern) and st.kind == "conv"]
    assert len(convs) == 2
    for e in convs:
        for b in e.inputs:
            src, out = s.buffers[b], s.buffers[e.output]
            if src.offset is not None and out.offset is not None:
                lo, hi = src.offset, src.offset + src.nbytes
                assert out.offset >= hi or out.offset + out.nbytes <= lo


def test_backward_is_two_convolution_externs_and_no_gemm():
    # the input's gradient is a conv2d, the weight's a conv2d_wgrad: no im2col product left
    x = lt.tensor(_r(2, 3, 8, 8)).requires_grad_()
    w = lt.tensor(_r(4, 3, 3, 3, seed=1)).requires_grad_()
    loss = F.conv2d(x, w, padding=1, stride=2).square().sum()
    gx, gw = lt.autograd.grad(loss, [x, w])
    s = schedule(program(gx, gw))
    kinds = sorted(st.kind for st in s.steps if isinstance(st, Extern))
    assert kinds == ["conv", "conv", "conv_wgrad"], kinds  # (the forward's, dx's, dw's)


def test_batch_sizes_that_vary_share_one_program_and_stay_right():
    # a program over a symbolic batch (generalized after two sizes) passes its sizes to the
    # kernel at run time
    import torch

    w = _r(4, 3, 3, 3, seed=1)
    with lt.backend("cpp"):
        for n in (2, 3, 5, 7):
            x = _r(n, 3, 9, 9, seed=n)
            got = F.conv2d(lt.tensor(x), lt.tensor(w), padding=1).numpy()
            want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
            np.testing.assert_allclose(got, want.numpy(), rtol=2e-5, atol=2e-5)
