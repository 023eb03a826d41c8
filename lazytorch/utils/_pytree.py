"""torch.utils._pytree: nested containers flattened to their leaves and rebuilt.

torch's module is private, but libraries use it (ema-pytorch, accelerate): ``tree_flatten``
gives a container's leaves, left to right, and a `TreeSpec` that ``tree_unflatten`` rebuilds
the same structure from; ``tree_map`` applies a function to every leaf. Lists, tuples,
named tuples, dicts (in insertion order), OrderedDict, defaultdict and deque are nodes;
anything else, None included, is a leaf; `register_pytree_node` adds a node type.

>>> from lazytorch.utils import _pytree as pytree
>>> leaves, spec = pytree.tree_flatten([1, (2, None), {"b": 3, "a": 4}])
>>> leaves
[1, 2, None, 3, 4]
>>> pytree.tree_unflatten([x * 10 for x in leaves if x is not None][:2] + [None, 30, 40], spec)
[10, (20, None), {'b': 30, 'a': 40}]
>>> pytree.tree_map(lambda x: x + 1, {"k": [1, 2]})
{'k': [2, 3]}
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = [
    "LeafSpec",
    "PyTree",
    "TreeSpec",
    "register_pytree_node",
    "tree_all",
    "tree_any",
    "tree_flatten",
    "tree_iter",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_structure",
    "tree_unflatten",
]

PyTree = Any


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable[[Any], tuple[list[Any], Any]]
    unflatten_fn: Callable[[Iterable[Any], Any], Any]


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable[[Any], tuple[list[Any], Any]],
    unflatten_fn: Callable[[Iterable[Any], Any], Any],
    **kwargs: Any,
) -> None:
    """Make `cls` a node: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x``. torch's serialization keywords are accepted
    (there is no TreeSpec serialization here)."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, lambda d: (list(d.values()), list(d)), lambda c, k: dict(zip(k, c)))
register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), list(d)),
    lambda c, k: collections.OrderedDict(zip(k, c)),
)
register_pytree_node(
    collections.defaultdict,
    lambda d: (list(d.values()), (d.default_factory, list(d))),
    lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
)
register_pytree_node(
    collections.deque,
    lambda d: (list(d), d.maxlen),
    lambda c, maxlen: collections.deque(c, maxlen=maxlen),
)
_NAMEDTUPLE = NodeDef(tuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c))


def _node_of(x: Any) -> NodeDef | None:
    if _is_namedtuple(x):
        return _NAMEDTUPLE
    return SUPPORTED_NODES.get(type(x))


class TreeSpec:
    """The structure of a flattened tree: the node's type, its context (dict keys, a named
    tuple's class) and its children's specs; a leaf's spec has no type."""

    def __init__(self, type: Any, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_nodes = 1 + sum(s.num_nodes for s in children_specs)
        self.num_leaves = sum(s.num_leaves for s in children_specs)
        self.num_children = len(children_specs)

    def is_leaf(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec) or self.is_leaf() != other.is_leaf():
            return False
        return (self.type, self.context, self.children_specs) == (
            other.type,
            other.context,
            other.children_specs,
        )

    def __hash__(self) -> int:
        return hash((self.type, self.num_nodes, self.num_leaves))

    def __repr__(self) -> str:
        name = (
            "namedtuple" if self.context is not None and self.type is tuple else self.type.__name__
        )
        kids = ", ".join(repr(s) for s in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{kids}])"

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_nodes = 1
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "*"


def _flatten(tree: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> TreeSpec:
    node = None if is_leaf is not None and is_leaf(tree) else _node_of(tree)
    if node is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = node.flatten_fn(tree)
    if node is _NAMEDTUPLE:
        return TreeSpec(tuple, context, [_flatten(c, leaves, is_leaf) for c in children])
    return TreeSpec(node.type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(
    tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """(the leaves left to right, the TreeSpec that `tree_unflatten` rebuilds from)."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, is_leaf)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The tree of `treespec`'s structure holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    it = iter(leaves)

    def build(spec: TreeSpec) -> Any:
        if spec.is_leaf():
            return next(it)
        children = [build(s) for s in spec.children_specs]
        if spec.type is tuple and spec.context is not None:  # a named tuple
            return _NAMEDTUPLE.unflatten_fn(children, spec.context)
        return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)

    return build(treespec)


def tree_leaves(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> Iterable[Any]:
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[Any], bool] | None = None,
) -> PyTree:
    """`tree`'s structure with ``func(leaf, *leaves of rests at the same place)``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        r_leaves, r_spec = tree_flatten(r, is_leaf)
        if r_spec != spec:
            raise ValueError(f"tree_map: the trees differ in structure ({spec} and {r_spec})")
        others.append(r_leaves)
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[Any], bool] | None = None,
) -> PyTree:
    """`func` called on every leaf for its effect; returns `tree`."""
    tree_map(func, tree, *rests, is_leaf=is_leaf)
    return tree


def tree_map_only(
    type_or_types: type | tuple[type, ...],
    func: Callable[[Any], Any],
    tree: PyTree,
    is_leaf: Callable[[Any], bool] | None = None,
) -> PyTree:
    """`func` applied to the leaves of the given type(s); the other leaves kept."""
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Any = None) -> bool:
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Any = None) -> bool:
    return any(pred(x) for x in tree_leaves(tree, is_leaf))
