"""Every docstring example in the library runs and prints what it claims."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lazytorch as lt


def modules() -> list[str]:
    names = ["lazytorch"]
    for info in pkgutil.walk_packages(lt.__path__, "lazytorch."):
        if info.name.endswith("._C"):
            continue
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", modules())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
