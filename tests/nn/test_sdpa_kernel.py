"""torch.nn.attention.SDPBackend / sdpa_kernel and torch.backends.cuda's attention switches."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.attention as TA

import lazytorch as lt
import lazytorch.backends.cuda as LC
import lazytorch.nn.attention as LA


def test_backend_values_and_signature():
    assert {k: int(v) for k, v in LA.SDPBackend.__members__.items()} == {
        k: int(v) for k, v in TA.SDPBackend.__members__.items()
    }
    assert list(inspect.signature(LA.sdpa_kernel).parameters) == list(
        inspect.signature(TA.sdpa_kernel).parameters
    )
    assert LC.SDPBackend is LA.SDPBackend


def _switches(backends):
    return (
        backends.math_sdp_enabled(),
        backends.flash_sdp_enabled(),
        backends.mem_efficient_sdp_enabled(),
        backends.cudnn_sdp_enabled(),
    )


@pytest.mark.parametrize(
    "chosen",
    [["MATH"], ["FLASH_ATTENTION"], ["MATH", "EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION", "MATH"]],
)
def test_sdpa_kernel_sets_and_restores_the_switches(chosen):
    with TA.sdpa_kernel([getattr(TA.SDPBackend, c) for c in chosen]):
        want = _switches(torch.backends.cuda)
    with LA.sdpa_kernel([getattr(LA.SDPBackend, c) for c in chosen]):
        got = _switches(LC)
        q = lt.ones(1, 2, 3, 4)
        # the result does not depend on the choice
        assert lt.nn.functional.scaled_dot_product_attention(q, q, q).sum().item() == 24.0
    assert got == want
    assert _switches(LC) == (True, True, True, True)
    with LA.sdpa_kernel(LA.SDPBackend.MATH):
        assert _switches(LC) == (True, False, False, False)
    with pytest.raises(AssertionError, match="SDPBackend"):
        with LA.sdpa_kernel("math"):
            pass
