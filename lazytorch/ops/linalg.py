"""Matrix products (matmul/mm/bmm/mv/dot/outer/addmm/baddbmm/tensordot), einsum, norms.

Everything reduces to the one batched ``matmul`` primitive: torch's rank rules (1-d operands
get a temporary unit dim, batch dims broadcast) are applied here with reshapes and expands,
and einsum rewrites each contraction into permute -> reshape -> matmul -> reshape.
"""

from __future__ import annotations

import math
import string
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    P,
    broadcast_shapes,
    cast,
    const_node,
    device_of,
    expand_node,
    normalize_dims,
    numel,
    reshape_node,
    wrap,
)
from lazytorch.ops.elementwise import _tensor_arg, lit, node1, node2
from lazytorch.ops.reduction import _finish, reduce_node
from lazytorch.tensor import Tensor


def _mm_node(a: Node, b: Node) -> Node:
    """Batched matmul of equal-rank (>= 2) nodes with broadcastable batch dims."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], "matmul")
    a = expand_node(a, (*batch, *a.shape[-2:]))
    b = expand_node(b, (*batch, *b.shape[-2:]))
    shape = (*batch, a.shape[-2], b.shape[-1])
    return make_node(P.matmul, (a, b), (), shape, a.dtype, a.device)


def _check_mm_dtypes(a: Tensor, b: Tensor, op: str) -> None:
    if a.dtype is not b.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}",
        )
    if a.dtype is dt.bool_:
        raise op_error(RuntimeError, op, "\"addmm_impl_cpu_\" not implemented for 'Bool'")
    device_of(a, b, op=op)


def matmul(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Matrix product with torch's rules for 1-d operands and broadcast batch dims.

    >>> import lazytorch
    >>> (lazytorch.ones(2, 3) @ lazytorch.ones(3)).tolist()
    [3.0, 3.0]
    """
    a, b = _tensor_arg(input, "matmul"), _tensor_arg(other, "matmul", "other")
    if a.ndim == 0 or b.ndim == 0:
        raise op_error(
            RuntimeError,
            "matmul",
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D",
        )
    _check_mm_dtypes(a, b, "matmul")
    na, nb = a._node, b._node
    k_a = na.shape[-1]
    k_b = nb.shape[0] if b.ndim == 1 else nb.shape[-2]
    if k_a != k_b:
        if a.ndim <= 2 and b.ndim <= 2:
            ra = "x".join(str(d) for d in (na.shape if a.ndim == 2 else (1, na.shape[0])))
            rb = "x".join(str(d) for d in (nb.shape if b.ndim == 2 else (nb.shape[0], 1)))
            raise op_error(
                RuntimeError, "matmul", f"mat1 and mat2 shapes cannot be multiplied ({ra} and {rb})"
            )
        raise op_error(
            RuntimeError,
            "matmul",
            f"Expected size for first two dimensions of batch2 tensor to match: inner dimensions {k_a} and {k_b} differ",
        )
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        na = reshape_node(na, (1, na.shape[0]))
    if squeeze_b:
        nb = reshape_node(nb, (nb.shape[0], 1))
    rank = max(len(na.shape), len(nb.shape))
    na = reshape_node(na, (1,) * (rank - len(na.shape)) + tuple(na.shape))
    nb = reshape_node(nb, (1,) * (rank - len(nb.shape)) + tuple(nb.shape))
    r = _mm_node(na, nb)
    shape = list(r.shape)
    if squeeze_b:
        shape.pop(-1)
    if squeeze_a:
        shape.pop(-2 if not squeeze_b else -1)
    # Drop the leading unit dims added for rank matching that were not batch dims.
    out_rank = max(a.ndim, b.ndim) - (1 if squeeze_a else 0) - (1 if squeeze_b else 0)
    if squeeze_a and squeeze_b:
        out_rank = 0
    shape = shape[len(shape) - out_rank :] if out_rank else []
    result = wrap(reshape_node(r, tuple(shape)))
    if out is not None:
        return V.assign(out, result._node)
    return result


def mm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    if input.ndim != 2 or mat2.ndim != 2:
        raise op_error(
            RuntimeError, "mm", f"self must be a matrix (got {input.ndim}D and {mat2.ndim}D)"
        )
    return matmul(input, mat2, out=out)


def bmm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    if input.ndim != 3 or mat2.ndim != 3:
        raise op_error(
            RuntimeError, "bmm", f"batch1 must be a 3D tensor (got {input.ndim}D and {mat2.ndim}D)"
        )
    if input.shape[0] != mat2.shape[0]:
        raise op_error(
            RuntimeError,
            "bmm",
            f"batch1 and batch2 must have same number of batches, got {input.shape[0]} and {mat2.shape[0]}",
        )
    return matmul(input, mat2, out=out)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input.ndim != 2 or vec.ndim != 1:
        raise op_error(
            RuntimeError, "mv", "vector + matrix @ vector expected, got a matrix and a vector"
        )
    return matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim != 1 or other.ndim != 1:
        raise op_error(
            RuntimeError,
            "dot",
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors",
        )
    if input.shape[0] != other.shape[0]:
        raise op_error(
            RuntimeError,
            "dot",
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} and {other.shape[0]} elements respectively",
        )
    return matmul(input, other)


inner_product = dot


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    from lazytorch.ops.elementwise import mul

    return mul(input.reshape(-1, 1), vec2.reshape(1, -1))  # type: ignore[attr-defined]


ger = outer


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    from lazytorch.ops.elementwise import add, mul

    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = mul(prod, alpha)
    if beta == 0:
        return prod
    return add(mul(input, beta) if beta != 1 else input, prod)


def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    from lazytorch.ops.elementwise import add, mul

    prod = bmm(batch1, batch2)
    if alpha != 1:
        prod = mul(prod, alpha)
    if beta == 0:
        return prod
    return add(mul(input, beta) if beta != 1 else input, prod)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    if isinstance(dims, int):
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = (
            ([dims[0]] if isinstance(dims[0], int) else list(dims[0])),
            ([dims[1]] if isinstance(dims[1], int) else list(dims[1])),
        )
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):
        lb[j % b.ndim] = la[i % a.ndim]
    contracted = {la[i % a.ndim] for i in da}
    out = [c for c in la if c not in contracted] + [c for c in lb if c not in contracted]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


# -- einsum -------------------------------------------------------------------------------
def _parse_einsum(equation: str, operands: tuple[Tensor, ...]) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise op_error(
            ValueError,
            "einsum",
            f"{len(terms)} operand terms in {equation!r} but {len(operands)} operands given",
        )
    used = set(eq) - set(".,->")
    spare = [c for c in string.ascii_letters if c not in used]
    ell_rank = 0
    for t, x in zip(terms, operands):
        if "..." in t:
            ell_rank = max(ell_rank, x.ndim - (len(t) - 3))
    ell = "".join(spare[:ell_rank])
    out_terms = []
    for t, x in zip(terms, operands):
        if "..." in t:
            k = x.ndim - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k :] if k else "")
        if len(t) != x.ndim:
            raise op_error(
                RuntimeError,
                "einsum",
                f"the number of subscripts in {t!r} does not match the operand's {x.ndim} dimensions",
            )
        if len(set(t)) != len(t):
            raise op_error(
                NotImplementedError,
                "einsum",
                f"repeated subscripts (diagonals) in {t!r} are not supported",
            )
        out_terms.append(t)
    if explicit:
        rhs = rhs.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in out_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    for c in rhs:
        if not any(c in t for t in out_terms):
            raise op_error(
                RuntimeError,
                "einsum",
                f"output subscript {c} does not appear in the equation for any input operand",
            )
    return out_terms, rhs


def _sum_out(n: Node, term: str, keep: set[str]) -> tuple[Node, str]:
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if not axes:
        return n, term
    r = reduce_node(P.reduce_sum, n, axes)
    r = _finish(r, axes, False)
    return r, "".join(c for c in term if c in keep)


def _contract(a: Node, ta: str, b: Node, tb: str, keep: set[str]) -> tuple[Node, str]:
    sizes = {c: d for c, d in zip(ta, a.shape)}
    for c, d in zip(tb, b.shape):
        if c in sizes and sizes[c] != d and d != 1 and sizes[c] != 1:
            raise op_error(
                RuntimeError,
                "einsum",
                f"operands do not broadcast: subscript {c} has sizes {sizes[c]} and {d}",
            )
        sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    batch = [c for c in ta if c in tb and c in keep]
    contract = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def arrange(n: Node, t: str, order: list[str]) -> Node:
        perm = tuple(t.index(c) for c in order)
        n = V.Permute(perm).apply(n)
        want = tuple(sizes[c] for c in order)
        return expand_node(n, want) if tuple(n.shape) != want else n

    A = arrange(a, ta, batch + left + contract)
    B = arrange(b, tb, batch + contract + right)
    nb_, nl, nc, nr = (numel([sizes[c] for c in g]) for g in (batch, left, contract, right))
    A = reshape_node(A, (nb_, nl, nc))
    B = reshape_node(B, (nb_, nc, nr))
    r = make_node(P.matmul, (A, B), (), (nb_, nl, nr), A.dtype, A.device)
    out_term = "".join(batch + left + right)
    return reshape_node(r, tuple(sizes[c] for c in out_term)), out_term


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation for the common contraction forms (no repeated subscripts).

    >>> import lazytorch
    >>> a, b = lazytorch.ones(2, 3), lazytorch.ones(3, 4)
    >>> lazytorch.einsum("ij,jk->ik", a, b).shape
    lazytorch.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for o in operands:
        _tensor_arg(o, "einsum", "operands")
    if not operands:
        raise op_error(RuntimeError, "einsum", "einsum(): must provide at least one operand")
    terms, rhs = _parse_einsum(equation, operands)
    d = operands[0].dtype
    for o in operands[1:]:
        if o.dtype is not d:
            raise op_error(
                RuntimeError, "einsum", f"expected scalar type {d.name} but found {o.dtype.name}"
            )
    nodes = [o._node for o in operands]
    # Sum out subscripts that appear in a single operand and not in the output.
    for i in range(len(nodes)):
        others = set(rhs).union(*[set(t) for j, t in enumerate(terms) if j != i])
        nodes[i], terms[i] = _sum_out(nodes[i], terms[i], others)
    cur, term = nodes[0], terms[0]
    for i in range(1, len(nodes)):
        later = set(rhs).union(*[set(t) for t in terms[i + 1 :]])
        cur, term = _contract(cur, term, nodes[i], terms[i], later)
    cur, term = _sum_out(cur, term, set(rhs))
    perm = tuple(term.index(c) for c in rhs)
    return wrap(V.Permute(perm).apply(cur) if perm != tuple(range(len(perm))) else cur)


# -- norms ----------------------------------------------------------------------------------
def _norm_input(x: Tensor, op: str, dtype: Any) -> Node:
    n = _tensor_arg(x, op)._node
    if dtype is not None:
        n = cast(n, dtype)
    if not n.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"{op}: Expected a floating point or complex tensor as input. Got {n.dtype.name.capitalize()}",
        )
    return n


def vector_norm(
    x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The vector `ord`-norm over `dim` (all elements by default)."""
    n = _norm_input(x, "linalg.vector_norm", dtype)
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    axes = normalize_dims(dim, len(n.shape), "linalg.vector_norm")
    if not n.shape:
        axes = ()
    a = node1(P.abs, n)

    def red(prim: Any, m: Node) -> Node:
        return _finish(reduce_node(prim, m, axes), axes, keepdim) if axes else m

    if ord == math.inf:
        return wrap(red(P.reduce_max, a))
    if ord == -math.inf:
        return wrap(red(P.reduce_min, a))
    if ord == 0:
        return wrap(red(P.reduce_sum, cast(node2(P.ne, n, lit(0, n), dt.bool_), n.dtype)))
    if ord == 1:
        return wrap(red(P.reduce_sum, a))
    if ord == 2:
        return wrap(node1(P.sqrt, red(P.reduce_sum, node2(P.mul, a, a))))
    if not isinstance(ord, (int, float)):
        raise op_error(RuntimeError, "linalg.vector_norm", f"unsupported ord {ord!r}")
    p = const_node(ord, n.dtype, n.device)
    s = red(P.reduce_sum, node2(P.pow, a, p))
    return wrap(node2(P.pow, s, const_node(1.0 / ord, n.dtype, n.device)))


def matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """Frobenius, 1, -1, inf or -inf matrix norm over the two dims in `dim`."""
    n = _norm_input(A, "linalg.matrix_norm", dtype)
    if len(n.shape) < 2:
        raise op_error(
            RuntimeError,
            "linalg.matrix_norm",
            "The input tensor A must have at least 2 dimensions.",
        )
    r, c = (
        normalize_dims(dim[0], len(n.shape), "matrix_norm")[0],
        normalize_dims(dim[1], len(n.shape), "matrix_norm")[0],
    )
    if ord == "fro":
        return vector_norm(wrap(n), 2, (r, c), keepdim)
    if ord in ("nuc", 2, -2):
        raise op_error(
            NotImplementedError,
            "linalg.matrix_norm",
            f"ord={ord!r} needs an SVD, which lazytorch does not provide",
        )
    if ord not in (1, -1, math.inf, -math.inf):
        raise op_error(RuntimeError, "linalg.matrix_norm", f"Order {ord} not supported.")
    a = node1(P.abs, n)
    inner, outer = (r, c) if ord in (1, -1) else (c, r)
    s = reduce_node(P.reduce_sum, a, (inner,))
    m = reduce_node(P.reduce_max if ord > 0 else P.reduce_min, s, (outer,))
    return wrap(_finish(m, tuple(sorted((r, c))), keepdim))


def norm(
    A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """torch.linalg.norm: a vector norm or a matrix norm depending on `dim` and `ord`."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise op_error(
                RuntimeError,
                "linalg.norm",
                f"If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.",
            )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
