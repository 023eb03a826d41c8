"""torch's per-distribution modules exist here with the same classes: scripts import
``torch.distributions.binomial.Binomial`` or ``from torch.distributions.normal import
Normal`` (S4's DropoutNd does the first)."""

from __future__ import annotations

import importlib
import pkgutil

import torch.distributions as td

import lazytorch.distributions as ld

# torch classes lazytorch does not have (their modules are absent too, and a use names them)
ABSENT = {
    "GeneralizedPareto",
    "LKJCholesky",
    "LogitRelaxedBernoulli",
    "ExpRelaxedCategorical",
    "Wishart",
    "positive_semidefinite",
}


def test_every_torch_distribution_module_path_reaches_the_same_class():
    checked = 0
    for info in pkgutil.iter_modules(td.__path__):
        theirs = importlib.import_module(f"torch.distributions.{info.name}")
        names = [n for n in getattr(theirs, "__all__", []) if n not in ABSENT]
        if not names:
            continue
        ours = importlib.import_module(f"lazytorch.distributions.{info.name}")
        assert getattr(ld, info.name) is ours  # attribute access, as torch's package allows
        for name in names:
            got = getattr(ours, name)
            if getattr(td, name, None) is getattr(theirs, name):  # re-exported by the package
                assert got is getattr(ld, name), f"{info.name}.{name}"
            checked += 1
    assert checked >= 40


def test_a_missing_distribution_is_named_at_its_use():
    assert not hasattr(ld, "Wishart")
