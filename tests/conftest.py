"""Test-wide setup: verify the IR after every pass, start each test from clean state."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("LAZYTORCH_VERIFY", "1")
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np
import pytest

import lazytorch as lt


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
