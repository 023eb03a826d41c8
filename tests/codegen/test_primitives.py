"""Every primitive, alone, on every backend: the sample table (tests/samples.py) against torch.

Each sample is recorded as one primitive applied to its inputs, computed on the case's
backend, and compared with torch's equivalent (dtype, shape, values within the dtype's
tolerance: tests/helpers.assert_same), or with the NumPy reference where torch has no
equivalent. The backends: the reference interpreter, cpp, and triton under Triton's
interpreter (``TRITON_INTERPRET=1``, on the CPU) where triton is installed. This is the slice
to run after touching a code generator::

    pytest tests/codegen/test_primitives.py -k cpp      # or -k triton

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
import torch

import lazytorch as lt
from helpers import TorchCPUCarrier, assert_same
from lazytorch.ir.primitives import PRIMITIVES
from lazytorch.ops._core import wrap
from lazytorch.runtime.backends import available_backends
from samples import SAMPLES, Sample, Scalar

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


def _want(sample: Sample) -> object:
    if sample.torch_fn is not None:
        return sample.torch_fn(*[torch.from_numpy(np.array(x)) for x in sample.inputs])
    p = PRIMITIVES[sample.prim]
    arrays = [
        np.asarray(x.value, dtype=x.dtype.np) if isinstance(x, Scalar) else x for x in sample.inputs
    ]
    with np.errstate(all="ignore"):
        out = p.ref(*arrays, **dict(zip(p.attr_names, sample.attrs)))
    return torch.from_numpy(np.array(out))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_primitive_computes_what_torch_does(sample: Sample, backend: str) -> None:
    with lt.backend(backend):
        got = _record(sample)
        got.numpy()  # computed on this backend, not later under another
    assert_same(got, _want(sample), what=f"[{backend}] {sample.id}")
