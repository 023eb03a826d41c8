"""Test-wide setup: verify the IR after every pass, start each test from clean state.

Layout: one directory per layer (tests/ir, tests/scheduler, tests/codegen, tests/ops, ...; see
docs/testing.md). This directory is put on sys.path, so ``import helpers`` (and ``samples``)
works from every test; test file names are unique across directories (pytest imports each
by its file name).

Backends. Tests run on the default backend (``cpp`` where a compiler exists). The op matrix
(tests/helpers.check) compares every case against torch once per backend: each such test is
collected as ``[interpreter]`` and ``[cpp]`` items, the cpp ones sampled per
``LAZYTORCH_TEST_CPP`` (``all``, ``sample`` = a fixed quarter, ``none``): see
tests/backend_matrix.py.

Compiled programs go to a per-session cache directory unless LAZYTORCH_CACHE_DIR is set
(set it to keep programs across runs: a rerun of ``all`` then takes a few minutes).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

os.environ.setdefault("LAZYTORCH_VERIFY", "1")
# Tests count compiles, kernels and cache hits of the program they cut, so they compile it
# at once; tests/runtime/test_tiered.py turns tiering on where it tests it. The real-world
# corpus's tests inherit this too (which tier answers a cut is then fixed, as a test's
# tolerance needs); `python -m benchmarks.realworld` runs the corpus tiered, as users do.
os.environ.setdefault("LAZYTORCH_TIERED", "0")
# The op matrix compiles many shapes from one helper line on purpose; a RecompileWarning
# there says nothing about the code under test (tests/runtime/test_observe.py sets its own limit).
os.environ.setdefault("LAZYTORCH_RECOMPILE_LIMIT", "0")
# Under pytest-xdist (pyproject.toml's addopts: ``-n logical``) each worker is a process whose
# kernels run under OpenMP, and NumPy and torch (the oracle) have thread pools of their own:
# N workers of N threads each on N cores spin-wait against each other. Each worker gets its
# share of the cores, but at least two threads, so that kernels still run split across threads
# as in one process on CI's two cores (on two cores, two threads per worker measured no
# clearly slower than one). Set before NumPy, torch or a kernel's OpenMP starts; tests that are
# about thread counts set their own.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault(
        "OMP_NUM_THREADS",
        str(
            max(2, len(os.sched_getaffinity(0)) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
            if hasattr(os, "sched_getaffinity")
            else 2
        ),
    )
    os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])
if not os.environ.get("LAZYTORCH_CACHE_DIR"):
    os.environ["LAZYTORCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazytorch-test-cache-")
    # Made here (the controller: xdist workers inherit the variable), so removed here when
    # the session's process exits; every run left its compiled programs behind before.
    atexit.register(shutil.rmtree, os.environ["LAZYTORCH_CACHE_DIR"], ignore_errors=True)
sys.path.insert(0, os.path.dirname(__file__))
# the repository root, for the models shared with the benchmarks (benchmarks/models.py)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import pytest

import lazytorch as lt

pytest_plugins = ("backend_matrix",)


@pytest.fixture(autouse=True)
def _fresh_state():
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
