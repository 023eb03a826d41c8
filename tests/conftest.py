"""Test-wide setup: verify the IR after every pass, start each test from clean state.

Backends. Tests run on the default backend (``cpp`` where a compiler exists). The op matrix
(tests/helpers.check) compares every case against torch on the ``interpreter`` and, per
``LAZYTORCH_TEST_CPP``, on ``cpp`` too:

* ``all``    every case also on cpp (the whole matrix: ~40 min on 2 cores, one g++ per
             distinct program; run it before a release or after touching codegen)
* ``sample`` (default) a fixed quarter of the cases, chosen by a hash of the test id, so
             the default suite stays within CI's time budget
* ``none``   interpreter only

Compiled programs go to a per-session cache directory unless LAZYTORCH_CACHE_DIR is set
(set it to keep programs across runs: a rerun of ``all`` then takes a few minutes).
"""

from __future__ import annotations

import os
import sys
import tempfile
import zlib

os.environ.setdefault("LAZYTORCH_VERIFY", "1")
# Tests count compiles, kernels and cache hits of the program they cut, so they compile it
# at once; tests/runtime/test_tiered.py and the real-world corpus run with tiering on, as users do.
os.environ.setdefault("LAZYTORCH_TIERED", "0")
# The op matrix compiles many shapes from one helper line on purpose; a RecompileWarning
# there says nothing about the code under test (tests/runtime/test_observe.py sets its own limit).
os.environ.setdefault("LAZYTORCH_RECOMPILE_LIMIT", "0")
if not os.environ.get("LAZYTORCH_CACHE_DIR"):
    os.environ["LAZYTORCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazytorch-test-cache-")
sys.path.insert(0, os.path.dirname(__file__))
# the repository root, for the models shared with the benchmarks (benchmarks/models.py)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import pytest

import helpers
import lazytorch as lt

CPP_SHARE = os.environ.get("LAZYTORCH_TEST_CPP", "sample").strip().lower()
if CPP_SHARE not in ("all", "sample", "none"):
    raise ValueError(f"LAZYTORCH_TEST_CPP must be all, sample or none, got {CPP_SHARE!r}")


def _matrix_backends(nodeid: str) -> list[str]:
    if CPP_SHARE == "all" or (CPP_SHARE == "sample" and zlib.crc32(nodeid.encode()) % 4 == 0):
        return ["interpreter", "cpp"]
    return ["interpreter"]


@pytest.fixture(autouse=True)
def _fresh_state(request):
    helpers.BACKENDS[:] = _matrix_backends(request.node.nodeid)
    lt.manual_seed(0)
    lt.runtime.clear_cache()  # tests that count compiles must not see earlier programs
    lt.runtime.forget_live()  # materialize() must not pick up an earlier test's tensors
    lt.metrics.reset()
    yield
    lt.set_sync_mode(False)
    lt.set_strict_mode(False)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def quiet_interpreter():
    """Silence NumPy's RuntimeWarnings: Triton's interpreter (``TRITON_INTERPRET=1``)
    evaluates both sides of every ``tl.where`` (log(0), 0/0 ...)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
