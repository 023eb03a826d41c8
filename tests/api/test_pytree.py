"""torch.utils._pytree against torch's: leaves, structure round trips, tree_map, node
registration; and the import forms real libraries use (``from torch.utils import _pytree``,
``from torch.distributed import nn``) under install_as_torch."""

from __future__ import annotations

import collections
import subprocess
import sys
import textwrap

import pytest
import torch.utils._pytree as theirs

from lazytorch.utils import _pytree as ours

Point = collections.namedtuple("Point", "x y")

TREES = [
    1,
    None,
    [1, (2, None), {"b": 3, "a": 4}],
    {"k": [1, 2], "z": ()},
    Point(1, [2, 3]),
    collections.OrderedDict([("b", 1), ("a", (2,))]),
    collections.defaultdict(list, {"a": [1], "b": 2}),
    collections.deque([1, [2]], maxlen=5),
    ([], {}, [[]]),
]


@pytest.mark.parametrize("tree", TREES, ids=lambda t: type(t).__name__)
def test_flatten_unflatten_and_map_as_torch(tree):
    leaves, spec = ours.tree_flatten(tree)
    assert leaves == theirs.tree_flatten(tree)[0]
    rebuilt = ours.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert spec.num_leaves == len(leaves)
    bump = lambda v: v if v is None else v + 1  # noqa: E731
    assert ours.tree_map(bump, tree) == theirs.tree_map(bump, tree)
    assert ours.tree_structure(tree) == spec


def test_map_over_several_trees_and_only_some_types():
    a, b = {"x": [1, 2]}, {"x": [10, 20]}
    assert ours.tree_map(lambda u, v: u + v, a, b) == {"x": [11, 22]}
    with pytest.raises(ValueError, match="differ in structure"):
        ours.tree_map(lambda u, v: u, a, {"x": [1]})
    assert ours.tree_map_only(int, str, [1, 2.0, (3,)]) == ["1", 2.0, ("3",)]
    assert ours.tree_all(lambda v: v > 0, [1, (2,)]) and not ours.tree_any(bool, [0, (0,)])


def test_is_leaf_and_registration():
    assert ours.tree_leaves([[1, 2], [3]], is_leaf=lambda t: t == [3]) == [1, 2, [3]]

    class Box:
        def __init__(self, v):
            self.v = v

    ours.register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(*c))
    try:
        leaves, spec = ours.tree_flatten([Box(5)])
        assert leaves == [5] and ours.tree_unflatten([6], spec)[0].v == 6
        with pytest.raises(ValueError, match="already registered"):
            ours.register_pytree_node(Box, None, None)
    finally:
        del ours.SUPPORTED_NODES[Box]


def test_unflatten_checks_the_leaf_count():
    _, spec = ours.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="holds 2 items"):
        ours.tree_unflatten([1], spec)


def test_import_forms_under_install_as_torch():
    code = textwrap.dedent(
        """
        import lazytorch
        lazytorch.install_as_torch()
        from torch.utils import _pytree
        from torch.utils._pytree import tree_flatten
        from torch.distributed import nn as distributed_nn
        assert tree_flatten([1, (2,)])[0] == [1, 2]
        try:
            distributed_nn.all_reduce
        except AttributeError as e:
            print(type(e).__name__, e)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "MissingTorchAPI torch.distributed.nn.all_reduce is not available" in out.stdout
