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
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    ComplexBase,
    P,
    binary_node,
    broadcast_shapes,
    cast,
    const_like,
    const_node,
    device_of,
    expand_node,
    normalize_dim,
    normalize_dims,
    numel,
    reshape_node,
    result_type,
    tensor_arg,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import resolve_dtype
from lazytorch.ops.elementwise import _safe_sqrt, _zero_gradient, add, mul
from lazytorch.ops.reduction import _into_out, _sum_dtype, reduce_node, squeeze_unless_keepdim
from lazytorch.tensor import Tensor


def _mm_node(a: Node, b: Node, wide: bool = False) -> Node:
    """Batched matmul of equal-rank (>= 2) nodes with broadcastable batch dims; `wide`
    leaves a product of 16-bit floats unrounded in float32 (see `_wide_product`)."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], "matmul")
    a = expand_node(a, (*batch, *a.shape[-2:]))
    b = expand_node(b, (*batch, *b.shape[-2:]))
    shape = (*batch, a.shape[-2], b.shape[-1])
    if wide and a.dtype.is_low_float:
        return make_node(P.matmul, (a, b), (dt.float32,), shape, dt.float32, a.device)
    return make_node(P.matmul, (a, b), (), shape, a.dtype, a.device)


def _check_mm_dtypes(a: Tensor, b: Tensor, op: str) -> None:
    if a.dtype is not b.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}",
        )
    if a.dtype is dt.bool_:
        raise op_error(NotImplementedError, op, "\"addmm_impl_cpu_\" not implemented for 'Bool'")
    device_of(a, b, op=op)


# Set by `lazytorch.ops.sparse` (imported after this module): the sparse tensor type and
# the product that reads its COO structure instead of its dense value.
SPARSE: dict[str, Any] = {"type": None, "matmul": None}
# Set by `lazytorch.ops.decomp` (which imports this module): the singular values, for the
# nuclear and spectral matrix norms.
DECOMP: dict[str, Any] = {"svdvals": None}


@public(method=True)
def matmul(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Matrix product with torch's rules for 1-d operands and broadcast batch dims.

    >>> import lazytorch
    >>> (lazytorch.ones(2, 3) @ lazytorch.ones(3)).tolist()
    [3.0, 3.0]
    """
    return _matmul(input, other, out, False)


def _wide_product(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` (torch's rules), but a product of bfloat16/float16 operands stays in
    float32, unrounded, for a sum after it to round once: torch's addmm, baddbmm and linear
    add the bias inside the GEMM (``C = beta * C + alpha * A @ B`` in float32, rounded at
    the end), so rounding the product first differs from torch by one ulp on about a quarter
    of the outputs. Other dtypes: exactly `matmul`."""
    return _matmul(a, b, None, True)


def _matmul(input: Tensor, other: Tensor, out: Any, wide: bool) -> Tensor:
    a, b = tensor_arg(input, "matmul"), tensor_arg(other, "matmul", "other")
    sparse = SPARSE["type"]
    if (a.__class__ is sparse or b.__class__ is sparse) and out is None and a.ndim and b.ndim:
        return SPARSE["matmul"](a, b, "matmul")
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
    if a.ndim >= 3 and b.ndim == 2:
        # Fold the batch dims into the rows (as torch does): one GEMM instead of a batch of
        # small ones against the same matrix, and in backward one GEMM for b's gradient
        # instead of a batch of products summed over the batch.
        rows = reshape_node(na, (numel(na.shape[:-1]), k_a))
        r = _mm_node(rows, nb, wide)
        result = wrap(reshape_node(r, (*na.shape[:-1], nb.shape[-1])))
        if out is not None:
            return V.assign(out, result._node)
        return _named_product(result, a, b)
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        na = reshape_node(na, (1, na.shape[0]))
    if squeeze_b:
        nb = reshape_node(nb, (nb.shape[0], 1))
    rank = max(len(na.shape), len(nb.shape))
    na = reshape_node(na, (1,) * (rank - len(na.shape)) + tuple(na.shape))
    nb = reshape_node(nb, (1,) * (rank - len(nb.shape)) + tuple(nb.shape))
    r = _mm_node(na, nb, wide)
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
    return _named_product(result, a, b)


# torch's backward node of a product, by the operands' ranks (where it is one node: a
# 1-d by 2-d product, for one, ends in a squeeze there)
_PRODUCT_GRAD_FN = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}


def _named_product(result: Tensor, a: Tensor, b: Tensor) -> Tensor:
    name = _PRODUCT_GRAD_FN.get((a.ndim, b.ndim))
    if name is None and a.ndim >= 3 and b.ndim >= 2:
        name = "UnsafeViewBackward0"  # batch dims folded into rows, or a bmm, then unviewed
    if name is not None:
        name_grad_fn(result, name, a if a.requires_grad else b)
    return result


@public(method=True)
def mm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    _check_mm(input, mat2)
    return matmul(input, mat2, out=out)


@public(method=True)
def bmm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    _check_bmm(input, mat2)
    return matmul(input, mat2, out=out)


@public(method=True)
def mv(input: Tensor, vec: Tensor, *, out: Any = None) -> Tensor:
    if input.ndim != 2 or vec.ndim != 1:
        raise op_error(
            RuntimeError, "mv", "vector + matrix @ vector expected, got a matrix and a vector"
        )
    return _into_out(matmul(input, vec), out, "mv")


@public(method=True)
def dot(input: Tensor, tensor: Tensor, *, out: Any = None) -> Tensor:
    if input.ndim != 1 or tensor.ndim != 1:
        raise op_error(
            RuntimeError,
            "dot",
            f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors",
        )
    if input.shape[0] != tensor.shape[0]:
        raise op_error(
            RuntimeError,
            "dot",
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{tensor.shape[0]}] to have the same number of elements, but got {input.shape[0]} and {tensor.shape[0]} elements respectively",
        )
    return _into_out(matmul(input, tensor), out, "dot")


inner_product = dot


@public(torch=("outer", "ger"), method="outer")
def outer(input: Tensor, vec2: Tensor, *, out: Any = None) -> Tensor:
    for name, v in (("self", input), ("vec2", vec2)):
        if tensor_arg(v, "outer", name).ndim != 1:
            raise op_error(
                RuntimeError, "outer", f"outer: Expected 1-D argument {name}, but got {v.ndim}-D"
            )
    return mul(input.reshape(-1, 1), vec2.reshape(1, -1), out=out)  # type: ignore[attr-defined]


def _add_product(
    input: Tensor, prod: Tensor, beta: Any, alpha: Any, op: str, dtype: dt.DType | None = None
) -> Tensor:
    """beta * input + alpha * prod, with torch's addmm rules: `input` has the product's
    dtype and expands (one way) to its shape; beta=0 ignores input's values (even NaN).

    `dtype`: the operands' dtype where `prod` is a `_wide_product` (float32 for 16-bit
    operands): the sum is computed in float32 and rounded once to it, as torch's GEMM adds
    C in its epilogue.
    """
    input = tensor_arg(input, op)
    want = prod.dtype if dtype is None else dtype
    if input.dtype is not want:
        raise op_error(
            RuntimeError,
            op,
            f"self and mat2 must have the same dtype, but got {input.dtype.name} and {want.name}",
        )
    if input.ndim > prod.ndim or broadcast_shapes(input.shape, prod.shape, op) != prod.shape:
        raise op_error(
            RuntimeError,
            op,
            f"the bias of shape {list(input.shape)} does not expand to the product's shape "
            f"{list(prod.shape)}",
        )
    # The scalars take the tensors' dtype, as in torch (so a float alpha truncates for ints).
    beta, alpha = want.to_python(beta), want.to_python(alpha)
    if alpha != 1:
        prod = mul(prod, alpha)
    if beta != 0:
        c = wrap(cast(input._node, prod.dtype))
        prod = add(mul(c, beta) if beta != 1 else c, prod)
    return prod if prod.dtype is want else wrap(cast(prod._node, want))


def _check_mm(a: Tensor, b: Tensor) -> None:
    if a.ndim != 2 or b.ndim != 2:
        raise op_error(RuntimeError, "mm", f"self must be a matrix (got {a.ndim}D and {b.ndim}D)")


def _check_bmm(a: Tensor, b: Tensor) -> None:
    if a.ndim != 3 or b.ndim != 3:
        raise op_error(
            RuntimeError, "bmm", f"batch1 must be a 3D tensor (got {a.ndim}D and {b.ndim}D)"
        )
    if a.shape[0] != b.shape[0]:
        raise op_error(
            RuntimeError,
            "bmm",
            f"batch1 and batch2 must have same number of batches, got {a.shape[0]} and {b.shape[0]}",
        )


@public(method=True, inplace=True)
def addmm(
    input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    _check_mm(mat1, mat2)
    prod = _wide_product(mat1, mat2)
    return _into_out(_add_product(input, prod, beta, alpha, "addmm", mat1.dtype), out, "addmm")


@public(method=True, inplace=True)
def baddbmm(
    input: Tensor,
    batch1: Tensor,
    batch2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Any = None,
) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    _check_bmm(batch1, batch2)
    prod = _wide_product(batch1, batch2)
    return _into_out(
        _add_product(input, prod, beta, alpha, "baddbmm", batch1.dtype), out, "baddbmm"
    )


@public()
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract the last `dims` dims of `a` with the first of `b`, or the dims listed in
    ``dims = (dims_a, dims_b)``."""
    a, b = tensor_arg(a, "tensordot", "a"), tensor_arg(b, "tensordot", "b")
    if isinstance(dims, int):
        if dims < 0:
            raise op_error(
                RuntimeError, "tensordot", f"tensordot expects dims >= 0, but got dims={dims}"
            )
        if dims > a.ndim or dims > b.ndim:
            raise op_error(
                RuntimeError,
                "tensordot",
                f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}",
            )
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        # torch takes two lists of ints here, never two bare ints.
        for k, name in ((0, "dims_self"), (1, "dims_other")):
            if not isinstance(dims[k], (list, tuple)):
                raise op_error(
                    TypeError,
                    "tensordot",
                    f"tensordot(): argument '{name}' must be tuple of ints, not "
                    f"{type(dims[k]).__name__}",
                )
        if len(dims[0]) != len(dims[1]):
            raise op_error(
                RuntimeError, "tensordot", "both dimension lists should have same length"
            )
        da = [normalize_dim(d, a.ndim, "tensordot") for d in dims[0]]
        db = [normalize_dim(d, b.ndim, "tensordot") for d in dims[1]]
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise op_error(
                RuntimeError,
                "tensordot",
                f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                f"{i} and second has size {b.shape[j]} in dim {j}",
            )
        lb[j] = la[i]
    contracted = {la[i] for i in da}
    kept = [c for c in la if c not in contracted] + [c for c in lb if c not in contracted]
    return _into_out(
        einsum(f"{''.join(la)},{''.join(lb)}->{''.join(kept)}", a, b), out, "tensordot"
    )


# -- einsum -------------------------------------------------------------------------------
def _check_subscripts(eq: str) -> None:
    """Letters, commas, "..." and one "->": anything else is torch's RuntimeError."""
    i = 0
    while i < len(eq):
        if eq.startswith("...", i):
            i += 3
        elif eq.startswith("->", i) and "->" not in eq[:i]:
            i += 2
        elif eq[i] in string.ascii_letters or eq[i] == ",":
            i += 1
        else:
            raise op_error(
                RuntimeError,
                "einsum",
                f"einsum(): invalid subscript given at index {i} in the equation string, "
                "subscripts must be in [a-zA-Z]",
            )


def _parse_einsum(equation: str, operands: tuple[Tensor, ...]) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    _check_subscripts(eq)
    if "->" in eq:
        lhs, rhs = eq.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(operands):
        which = "more" if len(operands) > len(terms) else "fewer"
        raise op_error(
            RuntimeError,
            "einsum",
            f"einsum(): {which} operands were provided than specified in the equation",
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
        for c in set(t):
            first, *rest = (x.shape[i] for i, s in enumerate(t) if s == c)
            other = next((d for d in rest if d != first), first)
            if other != first:
                raise op_error(
                    RuntimeError,
                    "einsum",
                    f"subscript {c} is repeated for operand {len(out_terms)} but the "
                    f"sizes don't match, {other} != {first}",
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
        if rhs.count(c) > 1:
            raise op_error(
                RuntimeError,
                "einsum",
                f"einsum(): output subscript {c} appears more than once in the output",
            )
        if not any(c in t for t in out_terms):
            raise op_error(
                RuntimeError,
                "einsum",
                f"output subscript {c} does not appear in the equation for any input operand",
            )
    return out_terms, rhs


def _take_diagonals(n: Node, term: str) -> tuple[Node, str]:
    """A term with a repeated subscript (``ii->i``, ``bii->b``) reads the diagonal over the
    dims it names: each repeat becomes one dim, last, as torch.diagonal puts it (a view, so
    the gradient scatters back onto the diagonal)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        a = term.index(c)
        b = term.index(c, a + 1)
        n = S._Diagonal(a, b, 0).apply(n)
        term = "".join(s for i, s in enumerate(term) if i not in (a, b)) + c
    return n, term


def _sum_out(n: Node, term: str, keep: set[str]) -> tuple[Node, str]:
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if not axes:
        return n, term
    # A sum as torch.sum: integers and bools sum as int64 (torch's einsum does the same).
    r = reduce_node(P.reduce_sum, cast(n, _sum_dtype(n.dtype)), axes)
    r = squeeze_unless_keepdim(r, axes, False)
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
    if not contract:
        # Nothing summed (outer or Hadamard products): a broadcast multiply, which promotes
        # and takes bools, as torch's einsum does here.
        d = dt.promote_types(a.dtype, b.dtype)
        A = V.Permute(tuple(ta.index(c) for c in batch + left)).apply(cast(a, d))
        A = reshape_node(A, (*A.shape, *(1,) * len(right)))
        B = V.Permute(tuple(tb.index(c) for c in batch + right)).apply(cast(b, d))
        nb = len(batch)
        B = reshape_node(B, (*B.shape[:nb], *(1,) * len(left), *B.shape[nb:]))
        return binary_node(P.mul, A, B), "".join(batch + left + right)
    if a.dtype is not b.dtype:
        # Only after a sum-out promoted one side to int64; torch's bmm refuses this too.
        raise op_error(
            RuntimeError,
            "einsum",
            f"expected scalar type {a.dtype.name} but found {b.dtype.name}",
        )
    if a.dtype is dt.bool_:
        raise op_error(NotImplementedError, "einsum", "\"bmm\" not implemented for 'Bool'")

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


@public()
def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation: contractions, sums, transposes, ellipses, and repeated
    subscripts within an operand (its diagonal: ``"ii->"`` is the trace).

    >>> import lazytorch
    >>> a, b = lazytorch.ones(2, 3), lazytorch.ones(3, 4)
    >>> lazytorch.einsum("ij,jk->ik", a, b).shape
    lazytorch.Size([2, 4])
    >>> lazytorch.einsum("ii->i", lazytorch.arange(4).reshape(2, 2))
    tensor([0, 3])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for o in operands:
        if isinstance(o, ComplexBase):  # real einsums of the parts (lazytorch.ops.complex)
            return type(o)._einsum(equation, operands)
        tensor_arg(o, "einsum", "operands")
    if not operands:
        raise op_error(ValueError, "einsum", "einsum(): must provide at least one operand")
    terms, rhs = _parse_einsum(equation, operands)
    d = operands[0].dtype
    for o in operands[1:]:
        if o.dtype is not d:
            raise op_error(
                RuntimeError, "einsum", f"expected scalar type {d.name} but found {o.dtype.name}"
            )
    nodes = [o._node for o in operands]
    for i in range(len(nodes)):
        nodes[i], terms[i] = _take_diagonals(nodes[i], terms[i])
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
    n = tensor_arg(x, op)._node
    # torch checks the input's own dtype, then that `dtype` only widens it.
    if not n.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"{op}: Expected a floating point or complex tensor as input. Got {n.dtype.name.capitalize()}",
        )
    d = resolve_dtype(dtype, op)
    if d is not None:
        if not d.is_floating_point:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: dtype should be floating point or complex, but got {d.name.capitalize()}",
            )
        if dt.promote_types(n.dtype, d) is not d:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: the dtype of the input ({n.dtype.name}) should be convertible without "
                f"narrowing to the specified dtype ({d.name})",
            )
        n = cast(n, d)
    return n


def vector_norm(
    input: Tensor,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """The vector `ord`-norm over `dim` (all elements by default); of a complex tensor, the
    norm of its elements' absolute values (a real tensor, as torch's).

    >>> import lazytorch
    >>> lazytorch.linalg.vector_norm(lazytorch.tensor([3.0, -4.0]))
    tensor(5.)
    """
    if not isinstance(ord, (int, float)):
        raise op_error(
            TypeError,
            "linalg.vector_norm",
            f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}",
        )
    if isinstance(input, ComplexBase):  # clip_grad_norm_ over a Fourier layer's weights
        if dtype is not None:
            raise op_error(
                NotImplementedError,
                "linalg.vector_norm",
                "linalg.vector_norm of a complex tensor with a dtype is not supported",
            )
        return vector_norm(input.abs(), ord, dim, keepdim, out=out)  # type: ignore[attr-defined]
    n = _norm_input(input, "linalg.vector_norm", dtype)
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    axes = normalize_dims(dim, len(n.shape), "linalg.vector_norm")
    if not n.shape:
        axes = ()
    if (ord < 0 or ord == math.inf) and any(n.shape[i] == 0 for i in axes):
        # max/min (and the inf a negative power gives) have no identity over nothing.
        raise op_error(
            RuntimeError,
            "linalg.vector_norm",
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
            "operation does not have an identity",
        )
    out_dtype = n.dtype
    # float16 squares and powers overflow early: work in float32 and round once, as torch.
    if n.dtype.is_low_float:
        n = cast(n, dt.float32)
    a = unary_node(P.abs, n)

    def red(prim: Any, m: Node) -> Node:
        return squeeze_unless_keepdim(reduce_node(prim, m, axes), axes, keepdim) if axes else m

    if ord == math.inf:
        r = red(P.reduce_max, a)
    elif ord == -math.inf:
        r = red(P.reduce_min, a)
    elif ord == 0:
        # a count: torch's result still requires grad, with a zero gradient
        nonzero = cast(binary_node(P.ne, n, const_like(0, n), dt.bool_), n.dtype)
        r = red(P.reduce_sum, _zero_gradient(nonzero, n))
    elif ord == 1:
        r = red(P.reduce_sum, a)
    elif ord == 2:
        # torch's gradient is 0 at a zero norm (not sqrt's inf times 0)
        r = _safe_sqrt(red(P.reduce_sum, binary_node(P.mul, a, a)))
    elif n.ag is None:
        p = const_node(ord, n.dtype, n.device)
        s = red(P.reduce_sum, binary_node(P.pow, a, p))
        r = binary_node(P.pow, s, const_node(1.0 / ord, n.dtype, n.device))
    else:
        r = _p_norm_with_grad(a, float(ord), red)
    result = name_grad_fn(wrap(cast(r, out_dtype)), "LinalgVectorNormBackward0", input)
    return _into_out(result, out, "linalg.vector_norm")


def _p_norm_with_grad(a: Node, p: float, red: Any) -> Node:
    """(sum |x|**p)**(1/p) with torch's gradient: 0 at elements that are 0 (where |x|**p has
    an infinite slope for p < 1) and everywhere when the norm is 0 (its root's slope)."""
    zero = binary_node(P.eq, a, const_like(0, a), dt.bool_)
    at0 = const_like(0.0 if p > 0 else math.inf, a)  # 0 ** p
    powed = where_node(
        zero, at0, binary_node(P.pow, where_node(zero, const_like(1, a), a), const_like(p, a))
    )
    s = red(P.reduce_sum, powed)
    s0 = binary_node(P.eq, s, const_like(0, s), dt.bool_)
    root = binary_node(P.pow, where_node(s0, const_like(1, s), s), const_like(1.0 / p, s))
    return where_node(s0, const_like(0.0 if p > 0 else math.inf, s), root)


def matrix_norm(
    input: Tensor,
    ord: Any = "fro",
    dim: Any = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Frobenius, nuclear, 2, -2, 1, -1, inf or -inf matrix norm over the two dims in `dim`
    (nuclear and +-2 from the singular values, `linalg.svdvals`)."""
    n = _norm_input(input, "linalg.matrix_norm", dtype)
    if len(n.shape) < 2:
        raise op_error(
            RuntimeError,
            "linalg.matrix_norm",
            "The input tensor A must have at least 2 dimensions.",
        )
    if len(dim) != 2:
        raise op_error(
            RuntimeError,
            "linalg.matrix_norm",
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {len(dim)}",
        )
    r, c = (
        normalize_dims(dim[0], len(n.shape), "matrix_norm")[0],
        normalize_dims(dim[1], len(n.shape), "matrix_norm")[0],
    )
    if r == c:
        raise op_error(
            RuntimeError,
            "linalg.matrix_norm",
            f"linalg.matrix_norm: dims must be different. Got {(r, c)}",
        )
    if ord == "fro":
        return vector_norm(wrap(n), 2, (r, c), keepdim, out=out)
    if ord in ("nuc", 2, -2):
        # from the singular values (`linalg.svdvals`, a host decomposition whose gradient is
        # torch's): their sum, largest or smallest, as torch computes these norms
        moved = S.movedim(wrap(n), (r, c), (-2, -1))
        sv = DECOMP["svdvals"](moved)
        if ord == 2 and sv.shape[-1] == 0:
            reduce = R.sum  # torch: the spectral norm of an empty matrix is 0 (ord=-2 raises)
        else:
            reduce = R.sum if ord == "nuc" else R.amax if ord == 2 else R.amin
        res = reduce(sv, -1)
        if keepdim:
            for d in sorted((r, c)):
                res = S.unsqueeze(res, d)
        return _into_out(res, out, "linalg.matrix_norm")
    if ord not in (1, -1, math.inf, -math.inf):
        raise op_error(RuntimeError, "linalg.matrix_norm", f"Order {ord} not supported.")
    a = unary_node(P.abs, n)
    inner, outer = (r, c) if ord in (1, -1) else (c, r)
    s = reduce_node(P.reduce_sum, a, (inner,))
    if n.shape[outer] == 0:
        if ord < 0:
            # torch's amin over the column/row sums (inner dim dropped) has no identity.
            d = outer - (inner < outer)
            raise op_error(
                IndexError,
                "linalg.matrix_norm",
                f"amin(): Expected reduction dim {d} to have non-zero size.",
            )
        # The max of no sums of absolute values is 0, as in torch.
        shape = tuple(1 if i in (r, c) else size for i, size in enumerate(n.shape))
        zero = const_node(0, n.dtype, n.device)
        m = make_node(P.expand, (zero,), (shape,), shape, n.dtype, n.device)
    else:
        m = reduce_node(P.reduce_max if ord > 0 else P.reduce_min, s, (outer,))
    return _into_out(
        wrap(squeeze_unless_keepdim(m, tuple(sorted((r, c))), keepdim)), out, "linalg.matrix_norm"
    )


def linalg_norm(
    input: Tensor,
    ord: Any = None,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """torch.linalg.norm: a vector norm or a matrix norm depending on `dim` and `ord`."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise op_error(
            RuntimeError,
            "linalg.norm",
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}",
        )
    if dim is None and ord is not None:
        if input.ndim not in (1, 2):
            raise op_error(
                RuntimeError,
                "linalg.norm",
                f"If dim is not specified but ord is, the input must be 1D or 2D. Got {input.ndim}D.",
            )
        dim = tuple(range(-input.ndim, 0))
    if (dim is not None and len(dim) == 2) or isinstance(ord, str):
        # A pair of dims or a named (matrix-only) ord: a matrix norm.
        return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


@public()
def norm(
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    out: Any = None,
    dtype: Any = None,
) -> Tensor:
    """Vector p-norm over `dim` (torch.norm): p = 'fro', 2, 1, inf, -inf, 0, or any float;
    p='nuc': the nuclear norm of a matrix (over two dims)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        if dim is None and input.ndim != 2:
            raise op_error(
                RuntimeError,
                "norm",
                f"linalg.matrix_norm: dim must be a 2-tuple. Got {input.ndim} dims",
            )
        nuc_dim = (-2, -1) if dim is None else dim
        return matrix_norm(input, "nuc", nuc_dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, p, dim, keepdim, dtype=dtype, out=out)


@public()
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps))) along `dim`, as torch computes
    it: each norm is clamped on its own (not their product), so tiny vectors whose norms'
    product is below eps still get their true cosine, and the result stays in [-1, 1].
    Also ``lazytorch.nn.functional.cosine_similarity``."""
    d = result_type(x1, x2)
    if not d.is_floating_point:
        raise op_error(
            RuntimeError,
            "cosine_similarity",
            f"expected common dtype to be floating point, yet common dtype is {d.legacy_name}",
        )
    a, b = S.broadcast_tensors(x1.to(d), x2.to(d))  # type: ignore[attr-defined]
    na = E.clamp(vector_norm(a, 2, dim, keepdim=True), min=eps)
    nb = E.clamp(vector_norm(b, 2, dim, keepdim=True), min=eps)
    return R.sum((a / na) * (b / nb), dim)  # type: ignore[operator]
