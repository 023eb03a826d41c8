"""Every primitive, alone, on every backend: the sample table (tests/samples.py) against torch.

Each sample is recorded as one primitive applied to its inputs, computed on the case's
backend, and compared with torch's equivalent (dtype, shape, values within the dtype's
tolerance: tests/helpers.assert_same), or with the NumPy reference where torch has no
equivalent. The backends: the reference interpreter, cpp, and triton under Triton's
interpreter (``TRITON_INTERPRET=1``, on the CPU) where triton is installed. This is the slice
to run after touching a code generator::

    pytest tests/codegen/test_primitives.py -k cpp      # or -k triton

Every float32 sample runs in bfloat16 as well (`test_primitive_in_bfloat16`, interpreter and
cpp; the Triton backend's bfloat16 is tested with its lowering): against torch in bfloat16,
and on cpp bit for bit against the interpreter wherever both compute the same float32 value
and round it once (all but transcendental math and sums whose order differs).

The op matrix (tests/ops, tests/nn, ...) covers the public ops built on top, lazy and sync.
"""

from __future__ import annotations

import os

# must be chosen before triton is imported (as in test_triton_backend.py)
os.environ.setdefault(
    "TRITON_INTERPRET", "0" if os.environ.get("LAZYTORCH_TEST_GPU") == "1" else "1"
)

import numpy as np
import pytest

import lazytorch as lt
from helpers import BF16, TorchCPUCarrier, assert_same, to_torch
from lazytorch.ir import dtypes as dt
from lazytorch.ir.primitives import PRIMITIVES, get, reference
from lazytorch.ops._core import wrap
from lazytorch.runtime.backends import available_backends
from samples import SAMPLES, Sample, Scalar

# Collectives never reach a backend (the runtime cuts at them; the scheduler refuses one):
# their one-rank reference is checked through every backend in tests/distributed.
SAMPLES = [s for s in SAMPLES if get(s.prim).category != "collective"]

pytestmark = pytest.mark.backends("interpreter", "cpp", "triton")


@pytest.fixture(autouse=True)
def _triton_ready(backend: str, request: pytest.FixtureRequest) -> None:
    """For a triton case: triton registered, over Triton's interpreter."""
    if backend != "triton":
        return
    pytest.importorskip("triton")  # only where triton is not installed (it is a test extra)
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("triton on a GPU: tests/codegen/test_triton_backend.py compares it there")
    request.getfixturevalue("quiet_interpreter")
    if "triton" not in available_backends():
        from lazytorch.runtime import triton_backend

        triton_backend.register(TorchCPUCarrier())


def _record(sample: Sample) -> lt.Tensor:
    nodes = []
    for x in sample.inputs:
        if isinstance(x, Scalar):
            nodes.append(lt.tensor(x.value, dtype=x.dtype)._node)
        else:
            nodes.append(lt.from_numpy(np.array(x))._node)
    return wrap(PRIMITIVES[sample.prim].bind(tuple(nodes), sample.attrs))


def _want(sample: Sample, out: dt.DType) -> object:
    if sample.torch_fn is not None:
        return sample.torch_fn(*[to_torch(np.array(x)) for x in sample.inputs])
    p = PRIMITIVES[sample.prim]
    arrays = [
        np.asarray(x.value, dtype=x.dtype.np) if isinstance(x, Scalar) else x for x in sample.inputs
    ]
    ref = reference(p, [dt.from_numpy_dtype(a.dtype) for a in arrays], out)
    with np.errstate(all="ignore"):
        return to_torch(np.array(ref(*arrays, **dict(zip(p.attr_names, sample.attrs)))))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_primitive_computes_what_torch_does(sample: Sample, backend: str) -> None:
    with lt.backend(backend):
        got = _record(sample)
        got.numpy()  # computed on this backend, not later under another
    assert_same(got, _want(sample, got.dtype), what=f"[{backend}] {sample.id}")


# primitives whose 16-bit operands the facade widens to float32 (F.conv2d), refused by
# their dtype rule (tests/ops/test_conv2d_direct.py checks the 16-bit convolutions)
WIDENED_BY_CALLER = {"conv2d", "conv2d_wgrad"}


def _in_bfloat16(sample: Sample) -> Sample | None:
    """`sample` with its float32 inputs and dtype attrs in bfloat16 (None: it has none, or
    its primitive takes float32/float64 only)."""
    if sample.prim in WIDENED_BY_CALLER:
        return None
    inputs = [
        x.astype(BF16) if getattr(x, "dtype", None) == np.float32 else x for x in sample.inputs
    ]
    attrs = tuple(dt.bfloat16 if a is dt.float32 else a for a in sample.attrs)
    if sample.prim == "bitcast":  # to the integer of bfloat16's size
        attrs = (dt.int16,)
    if all(x is y for x, y in zip(inputs, sample.inputs)) and attrs == sample.attrs:
        return None
    # a dtype attr changed (cast to float32 becomes cast to bfloat16): the reference decides
    fn = sample.torch_fn if attrs == sample.attrs else None
    return Sample(sample.prim, inputs, attrs, fn, label=sample.label, grad=False)


BF16_SAMPLES = [s for s in map(_in_bfloat16, SAMPLES) if s is not None]
# where float32 math differs between lazytorch_math.h and NumPy, or the order of a sum does
NOT_BITWISE = {"exp", "log", "sin", "cos", "tanh", "atan", "log1p", "expm1", "sigmoid", "erf"}
NOT_BITWISE |= {"pow", "atan2", "reduce_sum", "reduce_prod", "cumsum", "matmul"}


@pytest.mark.parametrize("dtype", [dt.bfloat16, dt.float16])
def test_a_16_bit_product_kept_in_float32(dtype: dt.DType, backend: str) -> None:
    # matmul's out_dtype: 16-bit operands, their float32 sum stored unrounded
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-2, 2, size=s).astype(dtype.np) for s in ((2, 24, 40), (2, 40, 20)))
    with lt.backend(backend):
        nodes = (lt.from_numpy(a)._node, lt.from_numpy(b)._node)
        got = wrap(PRIMITIVES["matmul"].bind(nodes, (dt.float32,)))
        assert got.dtype is dt.float32
        g = got.numpy()
    want = (to_torch(a).float() @ to_torch(b).float()).numpy()
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-5)
    # not rounded to the operands' dtype: a rounded product would be 2**-9 off at best
    assert (g.astype(dtype.np).astype(np.float32) != g).any()


def test_a_product_kept_in_float32_needs_16_bit_operands() -> None:
    f = lt.ones(2, 2)._node
    with pytest.raises(TypeError, match="widens 16-bit float operands to float32 only"):
        PRIMITIVES["matmul"].bind((f, f), (dt.float32,))
    h = lt.ones(2, 2, dtype=lt.bfloat16)._node
    with pytest.raises(TypeError, match="widens 16-bit"):
        PRIMITIVES["matmul"].bind((h, h), (dt.float64,))


@pytest.mark.backends("interpreter", "cpp")
@pytest.mark.parametrize("sample", BF16_SAMPLES, ids=lambda s: s.id)
def test_primitive_in_bfloat16(sample: Sample, backend: str) -> None:
    with lt.backend(backend):
        got = _record(sample)
        got.numpy()
    assert_same(got, _want(sample, got.dtype), what=f"[{backend}] {sample.id} in bfloat16")
    if backend == "cpp" and sample.prim not in NOT_BITWISE:
        with lt.backend("interpreter"):
            want = _record(sample).numpy()
        g = got.numpy()
        assert g.tobytes() == want.tobytes(), f"{sample.id}: cpp {g} != interpreter {want}"
