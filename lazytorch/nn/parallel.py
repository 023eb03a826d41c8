"""``torch.nn.parallel``: ``DataParallel`` on one process is the module itself.

lazytorch runs one program per process on one device, so ``DataParallel(model)`` calls
`model` directly (torch does the same when it sees one device) and keeps it as
``.module``, so state_dict keys carry torch's ``module.`` prefix. Training across processes
is ``DistributedDataParallel`` (one process per rank, on lazytorch.distributed).

>>> import lazytorch
>>> m = lazytorch.nn.parallel.DataParallel(lazytorch.nn.Linear(2, 1))
>>> list(m.state_dict())
['module.weight', 'module.bias']
"""

from __future__ import annotations

import contextlib
import hashlib
import weakref
from collections.abc import Iterator
from typing import Any

from lazytorch import distributed as dist
from lazytorch.autograd import engine
from lazytorch.autograd.grad_mode import is_grad_enabled, no_grad
from lazytorch.ir.dtypes import int32
from lazytorch.nn.modules.module import Module
from lazytorch.ops._core import reshape_node, wrap
from lazytorch.ops.creation import tensor, zeros_like
from lazytorch.ops.shape import cat, slice_node
from lazytorch.runtime import collectives

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Any = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: Any = None,
) -> Any:
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))


# torch's first bucket: small, so the gradients of the last layers start their exchange early
FIRST_BUCKET_BYTES = 1024 * 1024


class DistributedDataParallel(Module):
    """Data-parallel training across processes: each rank runs `module` on its own batch,
    and after each ``backward()`` the gradients are averaged across the ranks.

    At construction, rank 0's parameters and buffers are broadcast to every rank, and the
    ranks check that they hold the same model (names, shapes, dtypes; the first difference
    is named). Gradients are exchanged in buckets laid out from parameter metadata only:
    reverse registration order, one dtype and device per bucket, the first bucket at most
    1 MiB and the others `bucket_cap_mb` — so the layout, and the numbers, are the same on
    every run. Each bucket is divided by the world size, then summed across ranks (torch's
    order). Inside ``with ddp.no_sync():`` gradients accumulate locally; the first backward
    after it averages the accumulated sums.

    `find_unused_parameters=True` lets a forward leave parameters without a gradient:
    they count as zeros on that rank, and a parameter no rank used keeps its ``.grad``.
    Without it, such a parameter is an error naming it. `gradient_as_bucket_view` and
    `static_graph` are accepted and change nothing (gradients are lazy values here).

    >>> import lazytorch, lazytorch.distributed as dist
    >>> dist.init_process_group()
    >>> model = lazytorch.nn.parallel.DistributedDataParallel(lazytorch.nn.Linear(2, 1))
    >>> model(lazytorch.ones(3, 2)).sum().backward()
    >>> model.module.weight.grad.shape
    lazytorch.Size([1, 2])
    >>> dist.destroy_process_group()
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self.module = module
        self.process_group = pg = dist._group(process_group)
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        cap = 25 if bucket_cap_mb is None else bucket_cap_mb
        if not cap > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got {cap}")
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not self._named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        self._root = dist.get_global_rank(pg, 0)
        _check_same_model(pg, module)
        for t in [p for _, p in module.named_parameters()] + [b for _, b in module.named_buffers()]:
            dist.broadcast(t, src=self._root, group=pg)
        collectives.resolve()
        self._buckets = _bucket_layout(
            [p for _, p in reversed(self._named)], [FIRST_BUCKET_BYTES, self.bucket_bytes_cap]
        )
        self._expect_sync = False
        self._grads_at_forward: dict[int, Any] = {}
        engine.post_backward.append(weakref.WeakMethod(self._after_backward))

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        pg = self.process_group
        if self.broadcast_buffers and self.require_forward_param_sync and pg.size() > 1:
            for _, b in self.module.named_buffers():
                dist.broadcast(b, src=self._root, group=pg)
        self._expect_sync = is_grad_enabled() and self.require_backward_grad_sync
        if self._expect_sync:
            self._grads_at_forward = {
                id(p): (p.grad._node if p.grad is not None else None) for _, p in self._named
            }
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside this block, backward accumulates gradients on each rank without
        averaging; the first synchronized backward after it averages the sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _after_backward(self) -> None:
        if not self._expect_sync:
            return
        self._expect_sync = False
        before = self._grads_at_forward
        used = [
            p.grad is not None and p.grad._node is not before.get(id(p)) for _, p in self._named
        ]
        if not all(used) and not self.find_unused_parameters:
            names = [n for (n, _), u in zip(self._named, used) if not u]
            raise RuntimeError(
                "DistributedDataParallel: parameters received no gradient in this backward: "
                f"{', '.join(names)}. Pass find_unused_parameters=True to "
                "DistributedDataParallel if the forward does not use every parameter."
            )
        if self.process_group.size() == 1:
            return  # the average over one rank is the gradient itself (exact): no exchange
        self._reduce(used)

    def _reduce(self, used: list[bool]) -> None:
        pg = self.process_group
        by_param = {id(p): u for (_, p), u in zip(self._named, used)}
        if not all(used):  # which parameters some rank used: a small exchange, read here
            flags = tensor([1 if u else 0 for u in used], dtype=int32)
            dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=pg)
            anywhere = {id(p): bool(f) for (_, p), f in zip(self._named, flags.tolist())}
        else:
            anywhere = by_param
        world = pg.size()
        with no_grad():
            for bucket in self._buckets:
                parts = []
                for p in bucket:
                    g = p.grad if by_param[id(p)] else zeros_like(p)
                    parts.append(g.reshape(-1))
                flat = (cat(parts) if len(parts) > 1 else parts[0]) / world
                dist.all_reduce(flat, group=pg)
                node = flat._node
                offset = 0
                for p in bucket:
                    n = p.numel()
                    if anywhere[id(p)]:
                        piece = slice_node(node, 0, offset, offset + n)
                        p.grad = wrap(reshape_node(piece, tuple(p.shape)))
                    offset += n


def _bucket_layout(params: list[Any], caps: list[int]) -> list[list[Any]]:
    """Buckets of `params` (already in reverse registration order): one dtype and device
    each, closed when they reach their cap (the first cap for a key's first bucket)."""
    open_: dict[Any, tuple[list[Any], int]] = {}
    count: dict[Any, int] = {}
    out: list[list[Any]] = []
    for p in params:
        key = (p.dtype, p.device)
        bucket, size = open_.get(key, ([], 0))
        bucket.append(p)
        size += p.numel() * p.element_size()
        cap = caps[min(count.get(key, 0), len(caps) - 1)]
        if size >= cap:
            out.append(bucket)
            count[key] = count.get(key, 0) + 1
            open_.pop(key, None)
        else:
            open_[key] = (bucket, size)
    out.extend(b for b, _ in open_.values())
    return out


def _check_same_model(pg: Any, module: Module) -> None:
    """Every rank holds parameters and buffers of the same names, shapes and dtypes."""
    mine = [
        (kind, n, tuple(t.shape), str(t.dtype))
        for kind, items in (
            ("parameter", module.named_parameters()),
            ("buffer", module.named_buffers()),
        )
        for n, t in items
    ]
    digest = hashlib.sha256(repr(mine).encode()).hexdigest()
    digests: list[Any] = [None] * pg.size()
    dist.all_gather_object(digests, digest, group=pg)
    if len(set(digests)) == 1:
        return
    everyone: list[Any] = [None] * pg.size()
    dist.all_gather_object(everyone, mine, group=pg)
    ref = everyone[0]
    for r, theirs in enumerate(everyone):
        if theirs == ref:
            continue
        for i in range(max(len(ref), len(theirs))):
            a = ref[i] if i < len(ref) else None
            b = theirs[i] if i < len(theirs) else None
            if a != b:

                def show(x: Any) -> str:
                    return "nothing" if x is None else f"{x[0]} {x[1]!r} {x[3]}{list(x[2])}"

                raise RuntimeError(
                    "DistributedDataParallel: the model differs across ranks: at position "
                    f"{i}, rank 0 has {show(a)} but rank {r} has {show(b)}"
                )
