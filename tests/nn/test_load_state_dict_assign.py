"""``Module.load_state_dict(assign=True)`` against torch: the module takes the checkpoint's
tensors (their dtype), as Parameters keeping each old parameter's ``requires_grad``;
buffers are replaced; shape mismatches and strict key checks raise as without `assign`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt


def _model(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


def _state(lib: Any, dtype: str) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    ref = _model(torch).state_dict()
    out: dict[str, Any] = {}
    for k, v in ref.items():
        a = rng.standard_normal(tuple(v.shape)).astype(np.float64)
        if v.dtype == torch.int64:
            out[k] = lib.tensor(7)
        else:
            out[k] = lib.tensor(a, dtype=getattr(lib, dtype))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_assign_takes_the_checkpoint_tensors(dtype: str) -> None:
    seen = {}
    for name, lib in (("torch", torch), ("lazytorch", lt)):
        m = _model(lib)
        m[0].weight.requires_grad_(False)
        old = m[2].weight
        sd = _state(lib, dtype)
        res = m.load_state_dict(sd, assign=True)
        assert list(res.missing_keys) == [] and list(res.unexpected_keys) == []
        assert m[2].weight is not old
        assert isinstance(m[2].weight, lib.nn.Parameter)
        seen[name] = {
            "requires_grad": [p.requires_grad for p in m.parameters()],
            "dtypes": [str(v.dtype).split(".")[-1] for v in m.state_dict().values()],
            "values": [np.asarray(v.detach().numpy()) for v in m.state_dict().values()],
            "out": m.eval()(lib.ones(2, 3, dtype=getattr(lib, dtype))).detach().numpy(),
        }
    t, lz = seen["torch"], seen["lazytorch"]
    assert t["requires_grad"] == lz["requires_grad"] == [False, True, True, True, True, True]
    assert t["dtypes"] == lz["dtypes"]
    for a, b in zip(t["values"], lz["values"], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(lz["out"], t["out"], rtol=1e-5, atol=1e-6)


def test_assign_still_checks_shapes_and_keys() -> None:
    for lib in (torch, lt):
        lin = lib.nn.Linear(2, 2)
        with pytest.raises(RuntimeError, match="size mismatch"):
            lin.load_state_dict({"weight": lib.ones(3, 2), "bias": lib.ones(2)}, assign=True)
        with pytest.raises(RuntimeError, match="Missing key"):
            lin.load_state_dict({"weight": lib.ones(2, 2)}, assign=True)
        res = lin.load_state_dict({"weight": lib.ones(2, 2)}, strict=False, assign=True)
        assert list(res.missing_keys) == ["bias"]
        assert float(lin.weight.detach().sum()) == 4.0
