"""Epilogue fusion: the pointwise kernel after a matmul runs inside the matmul's tiles.

``relu(x @ w.T + b)`` schedules as an extern matmul that stores ``x @ w.T``, then a
pointwise kernel that reads it back, adds the bias and applies relu. Fused, the pointwise
kernel runs on each block of the product right after the block is computed: in registers
(Triton, whose GEMM is generated code) or while the block is in the thread's cache (the C++
backend, which calls the library GEMM block by block: lazytorch_blas.h). The product is
never stored unless something else reads it, so it takes no memory in the plan, and it is
not read back from memory. ``schedule(prog, fuse_epilogues=False)`` gives the unfused
schedule (for comparisons).

A pointwise kernel ``K`` becomes the epilogue of matmul ``E`` (product buffer ``B``) when

* ``K`` is the first step that reads ``B``;
* ``K`` iterates the product's elements: its outer space has the product's number of
  elements (a reshape of it, as a batched product folded into rows), and it reads ``B``
  only at the element it computes (row-major position for position), so each tile of
  ``E`` computes ``K`` at exactly the tile's elements;
* each product matrix (the last two dims) has more than one element.

The fused step takes ``K``'s place in the schedule (``E`` moves later: its inputs were ready
before and no step in between reads ``B``), and stores ``B`` only if ``B`` is a program
output or a later step reads it too. ``LAZYTORCH_LOG=fusion`` says why a candidate was
refused.
"""

from __future__ import annotations

from collections.abc import Container

from lazytorch.scheduler.fusion import log
from lazytorch.scheduler.indexing import Var, const, ravel
from lazytorch.scheduler.kernel import Buffer, Extern, Kernel

__all__ = ["fuse_epilogues"]


def fuse_epilogues(
    steps: list[Kernel | Extern], buffers: list[Buffer], outputs: Container[int]
) -> list[Kernel | Extern]:
    """`steps` with each matmul's first reader fused into it where allowed (module doc);
    `outputs` are the program's output buffer ids."""
    readers: dict[int, list[int]] = {}
    for i, s in enumerate(steps):
        for b in s.reads:
            readers.setdefault(b, []).append(i)
    fused: list[Kernel | Extern | None] = list(steps)
    for i, e in enumerate(steps):
        if not isinstance(e, Extern) or e.kind != "matmul":
            continue
        users = readers.get(e.output, [])
        if not users:
            continue
        j = users[0]
        k = fused[j]
        why = _refusal(e, k, buffers[e.output])
        if why:
            log.debug("no epilogue for %s: %s", e.name, why)
            continue
        assert isinstance(k, Kernel)
        keep = e.output in outputs or len(users) > 1
        fused[i] = None
        fused[j] = Extern(
            e.name,
            e.kind,
            e.inputs,
            e.output,
            dict(e.attrs),
            [*e.locs, *k.locs],
            epilogue=k,
            store_output=keep,
        )
    return [s for s in fused if s is not None]


def _refusal(e: Extern, k: Kernel | Extern | None, product: Buffer) -> str:
    """Why kernel `k` cannot be `e`'s epilogue ('' if it can)."""
    if not isinstance(k, Kernel):
        what = "nothing" if k is None else f"{k.name} [{k.kind}]"
        return f"its first reader is {what}, not a pointwise kernel"
    if k.kind != "pointwise":
        return f"its first reader {k.name} is a {k.kind} kernel"
    if len(product.shape) < 2 or product.shape[-1] * product.shape[-2] <= 1:
        return "each product matrix is a single element"
    if _prod(k.outer) != product.numel:
        return f"{k.name} iterates {list(k.outer)}, not the product's {list(product.shape)}"
    # size-1 dims are 0 wherever they appear
    ones = {f"o{i}": const(0) for i, d in enumerate(k.outer) if d == 1}
    here = ravel([Var(f"o{i}", d) for i, d in enumerate(k.outer)], k.outer).substitute(ones)
    for v in k.values:
        if v.op == "load" and v.attr[0] == product.id and v.attr[1].substitute(ones) != here:
            return f"{k.name} reads the product at {v.attr[1]}, not at the element it computes"
    if any(s.mode != "set" for s in k.stores):
        return f"{k.name} accumulates into its output"
    return ""


def _prod(xs: tuple[int, ...]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n
