"""Tensors print as torch prints them: line wrapping, summaries, widths and the keyword parts
(``dtype=``, ``grad_fn=``, ``size=``) that follow the values, with every print option."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import lazytorch as lt

SHAPES = [
    (),
    (0,),
    (3,),
    (8,),
    (9,),
    (26,),
    (2, 8),
    (2, 26),
    (3, 4, 5),
    (1001,),
    (40, 40),
    (3, 400),
    (400, 3),
    (2, 3, 200),
    (5, 0),
    (11, 11, 11),
]
KINDS = ["randn", "int64", "int32", "large", "small", "bool", "whole"]


def _array(shape: tuple[int, ...], kind: str) -> np.ndarray:
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    a = {
        "int64": lambda: (a * 100).astype(np.int64),
        "int32": lambda: (a * 100).astype(np.int32),
        "large": lambda: a * 1e5,
        "small": lambda: a * 1e-3,
        "bool": lambda: a > 0,
        "whole": lambda: np.round(a * 10),
    }.get(kind, lambda: a)()
    return np.asarray(a)


def _same(a: np.ndarray, grad: bool = False) -> None:
    t, lz = torch.from_numpy(a.copy()), lt.from_numpy(a.copy())
    if grad:
        t, lz = t.requires_grad_() * 1, lz.requires_grad_() * 1
    assert _unwrap_dtype(repr(lz)) == _unwrap_dtype(repr(t).replace("torch.", "lazytorch.")), (
        a.shape
    )


def _unwrap_dtype(text: str) -> str:
    # "dtype=lazytorch.int32" is 4 columns longer than torch's, so it may wrap where torch's
    # does not: compare it as if on one line
    return re.sub(r",\n *dtype=", ", dtype=", text)


@pytest.mark.parametrize("kind", KINDS)
def test_repr_matches_torch(kind: str) -> None:
    for shape in SHAPES:
        a = _array(shape, kind)
        _same(a)
        if a.dtype == np.float32:
            _same(a, grad=True)  # grad_fn=<...> wraps to its own line past 80 columns


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"linewidth": 120},
        {"linewidth": 30},
        {"edgeitems": 1, "threshold": 10},
        {"edgeitems": 0, "threshold": 5},
        {"profile": "full"},
    ],
)
def test_repr_matches_torch_under_print_options(options: dict[str, int | str]) -> None:
    torch.set_printoptions(**options)
    lt.set_printoptions(**options)
    try:
        for shape in SHAPES[:9]:
            for kind in ("randn", "int64", "bool", "large"):
                _same(_array(shape, kind))
    finally:
        torch.set_printoptions(profile="default")
        lt.set_printoptions(profile="default")
