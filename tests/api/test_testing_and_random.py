"""torch.testing.assert_close and torch.random as scripts use them: the same verdicts and
messages as torch's, and fork_rng leaving the generator where it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

PAIRS = [
    ([1.0, 2.0], [1.0, 2.0 + 1e-7], {}),
    ([1.0, 2.0, 3.0], [1.1, 2.0, 3.5], {}),
    ([1.0], [1.1], {"rtol": 0.2, "atol": 0.0}),
    ([1, 2], [1, 3], {}),
    ([True, False], [True, True], {}),
    ([float("nan"), 1.0], [float("nan"), 1.0], {}),
    ([float("nan"), 1.0], [float("nan"), 1.0], {"equal_nan": True}),
    (2.0, 1.0, {}),
]


def _verdict(lib, a, e, kwargs):
    def mk(v):
        return lib.tensor(v)

    try:
        lib.testing.assert_close(mk(a), mk(e), **kwargs)
    except AssertionError as err:
        return str(err).replace("torch.", "").replace("lazytorch.", "")
    return None


@pytest.mark.parametrize("a, e, kwargs", PAIRS)
def test_assert_close_gives_torchs_verdict_and_message(a, e, kwargs):
    assert _verdict(lt, a, e, kwargs) == _verdict(torch, a, e, kwargs)


def test_assert_close_on_containers_numbers_and_mismatched_metadata():
    lt.testing.assert_close({"a": [lt.ones(2), 3]}, {"a": [lt.ones(2), 3]})
    lt.testing.assert_close(1.0, 1.0 + 1e-9)
    for actual, expected, match in [
        (lt.ones(2), lt.ones(3), "'shape' do not match"),
        (lt.ones(2), lt.ones(2, dtype=lt.float64), "'dtype' do not match"),
        (1, 1.0, r"\(d\)types do not match"),
        ([lt.ones(1)], [lt.ones(1), lt.ones(1)], "length of the sequences"),
        (1.0, 1.1, "Scalars are not close"),
    ]:
        with pytest.raises(AssertionError, match=match):
            lt.testing.assert_close(actual, expected)
    lt.testing.assert_close(lt.ones(2), lt.ones(2, dtype=lt.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="custom"):
        lt.testing.assert_close(lt.zeros(1), lt.ones(1), msg="custom")
    with pytest.raises(ValueError, match="'rtol' and 'atol'"):
        lt.testing.assert_close(lt.zeros(1), lt.zeros(1), rtol=0.1)


def test_fork_rng_restores_the_default_generator():
    lt.random.manual_seed(3)
    with lt.random.fork_rng():
        inside = lt.rand(4).numpy()
    after = lt.rand(4).numpy()
    assert np.array_equal(inside, after)
    with lt.random.fork_rng(enabled=False):
        lt.rand(4)
    assert not np.array_equal(lt.rand(4).numpy(), after)
    assert lt.random.initial_seed() == 3
    assert lt.random.default_generator is lt.default_generator


def test_as_torch_imports_testing_and_random():
    import subprocess
    import sys

    code = (
        "import lazytorch; lazytorch.install_as_torch()\n"
        "import torch, torch.testing, torch.random\n"
        "from torch.testing import assert_close\n"
        "assert_close(torch.ones(2), torch.ones(2))\n"
        "torch.random.manual_seed(0)\n"
        "print(torch.testing.__name__, torch.random.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["lazytorch.testing", "lazytorch.random"]
