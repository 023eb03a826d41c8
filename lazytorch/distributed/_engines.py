"""The communication engines: one process (the reference) and MPI (mpi4py) on the CPU.

Each engine computes one collective node from its input's buffer (the contract is in
`lazytorch.runtime.collectives`): it returns a new array, never the input's. MPI has no
16-bit float types, so float16 and bfloat16 are exchanged in float32 and rounded once at
the end (a sum of two bfloat16 values rounds once, as torch's reduction does in float32);
a bool tensor is reduced with logical or (sum, max) and logical and (product, min), as
torch's backends do.
"""

from __future__ import annotations

import functools
from typing import Any

from lazytorch import _native
from lazytorch._settings import env_value
from lazytorch.ir._lazynp import np
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import reference

__all__ = ["LocalEngine", "MpiEngine", "describe"]


def describe(node: Node) -> str:
    """``all_reduce #3 (sum) on group 0 of float32[1024]`` — for errors and timeouts."""
    p = node.params
    extra = next((f" ({k}={p[k]!r})" for k in ("op", "src", "root") if k in p), "")
    shape = list(node.inputs[0].shape) if node.inputs else list(node.shape)
    return f"{node.op.name} #{p['seq']}{extra} on group {p['group']} of {node.dtype.short}{shape}"


class LocalEngine:
    """A group of one rank: each collective is its one-rank reference (a copy)."""

    def run(self, node: Node, value: Any) -> Any:
        ref = reference(node.op, [node.inputs[0].dtype], node.dtype)
        out = ref(value, **node.params)
        return out if out.flags.c_contiguous else out.copy()


class MpiEngine:
    """Collectives over an mpi4py communicator, each armed with the group's watchdog."""

    def __init__(self, comm: Any, timeout: float, watchdog: Any, rank: int) -> None:
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        self.timeout = timeout
        self.watchdog = watchdog
        self.global_rank = rank
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.debug = env_value("LAZYTORCH_DISTRIBUTED_DEBUG")
        self._ops = {
            "sum": MPI.SUM,
            "avg": MPI.SUM,
            "max": MPI.MAX,
            "min": MPI.MIN,
            "product": MPI.PROD,
        }
        self._bool_ops = {"sum": MPI.LOR, "max": MPI.LOR, "min": MPI.LAND, "product": MPI.LAND}
        # Results go into blocks of the native output pool where it is built: a fresh large
        # allocation page-faults on first write, which cost more than the exchange itself
        # (4 MiB: 1.8 ms into a new array, 0.6 ms into a reused one; benchmarks/distributed.py).
        native = _native.load(warn=False)
        pooled = getattr(native, "empty", None)
        self._empty = pooled if pooled is not None else _np_empty

    # -- one collective -----------------------------------------------------------------

    def run(self, node: Node, value: Any) -> Any:
        if self.debug:
            self._check_same(node, describe(node))
        self.watchdog.arm(self.timeout, functools.partial(describe, node))
        try:
            # (not ascontiguousarray: it turns a 0-d value into 1-d)
            x = value if value.flags.c_contiguous else value.copy()
            return self._exchange(node, x)
        finally:
            self.watchdog.disarm()

    def _exchange(self, node: Node, x: Any) -> Any:
        name = node.op.name
        p = node.params
        dtype: DType = node.dtype
        out_np = dtype.np
        if dtype.is_low_float:
            x = x.astype(np.float32)
        comm = self.comm
        empty = self._empty
        if name == "all_reduce":
            out = empty(x.dtype, x.shape)
            comm.Allreduce(x, out, op=self._op(p["op"], dtype, name))
            if p["op"] == "avg":
                out = _average(out, self.size)
        elif name == "broadcast":
            out = empty(x.dtype, x.shape)
            if self.rank == p["src"]:
                out[...] = x
            comm.Bcast(out, root=p["src"])
        elif name == "all_gather":
            out = empty(x.dtype, (self.size, *x.shape))
            comm.Allgather(x, out)
        elif name == "gather_to_rank":
            root = p["root"]
            out = np.zeros((self.size, *x.shape), x.dtype)
            comm.Gather(x, out if self.rank == root else None, root=root)
        elif name == "reduce_scatter":
            out = empty(x.dtype, (x.shape[0] // self.size, *x.shape[1:]))
            comm.Reduce_scatter_block(x, out, op=self._op(p["op"], dtype, name))
            if p["op"] == "avg":
                out = _average(out, self.size)
        elif name == "scatter_from_rank":
            src = p["src"]
            out = empty(x.dtype, x.shape[1:])
            comm.Scatter(x if self.rank == src else None, out, root=src)
        else:  # a primitive of category collective this engine does not know
            raise NotImplementedError(f"the MPI engine cannot run {name}")
        out = np.asarray(out)  # (arithmetic on a 0-d array gives a NumPy scalar)
        return out.astype(out_np, copy=False) if out.dtype != out_np else out

    def _op(self, op: str, dtype: DType, name: str) -> Any:
        if dtype.name == "bool":
            if op == "avg":
                raise RuntimeError(f"{name}: ReduceOp.AVG is not supported for bool tensors")
            return self._bool_ops[op]
        return self._ops[op]

    # -- debug: every rank issues the same collective ----------------------------------

    def _check_same(self, node: Node, what: str) -> None:
        p = node.params
        mine = (
            p["seq"],
            node.op.name,
            tuple(node.inputs[0].shape),
            node.dtype.name,
            p.get("op", p.get("src", p.get("root"))),
        )
        self.watchdog.arm(self.timeout, f"the LAZYTORCH_DISTRIBUTED_DEBUG check of {what}")
        try:
            theirs = self.comm.allgather((mine, what))
        finally:
            self.watchdog.disarm()
        for r, (desc, their_what) in enumerate(theirs):
            if desc != mine:
                raise RuntimeError(
                    "LAZYTORCH_DISTRIBUTED_DEBUG: ranks issued different collectives: "
                    f"rank {self.rank} issued {what}, but rank {r} issued {their_what}"
                )

    # -- Python objects (all_gather_object, broadcast_object_list, DDP's checks) --------

    def allgather_object(self, obj: Any, what: str) -> list[Any]:
        self.watchdog.arm(self.timeout, what)
        try:
            return self.comm.allgather(obj)
        finally:
            self.watchdog.disarm()

    def bcast_object(self, obj: Any, src: int, what: str) -> Any:
        self.watchdog.arm(self.timeout, what)
        try:
            return self.comm.bcast(obj, root=src)
        finally:
            self.watchdog.disarm()

    def barrier(self, what: str) -> None:
        self.watchdog.arm(self.timeout, what)
        try:
            self.comm.Barrier()
        finally:
            self.watchdog.disarm()


def _np_empty(dtype: Any, shape: Any) -> Any:
    return np.empty(shape, dtype)


def _average(out: Any, n: int) -> Any:
    if out.dtype.kind == "f":
        return out / out.dtype.type(n)
    # integers: NCCL's ncclAvg divides and truncates toward zero
    return (np.sign(out) * (np.abs(out) // n)).astype(out.dtype)
