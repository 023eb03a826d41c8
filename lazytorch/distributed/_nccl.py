"""The NCCL engine: collectives of ``cuda`` tensors, GPU to GPU, over nccl4py.

An engine computes collective nodes for `lazytorch.runtime.collectives` (the contract is
there and in `lazytorch.ir.prims.collective`): ``run(node, value)`` gets the node and its
input's `DeviceBuffer` and returns a new buffer of the node's shape and dtype on the same
device. This one calls NCCL through ``nccl4py``'s low-level bindings
(``nccl.bindings.nccl``, one Python function per C function), with device pointers: no
value passes through the host.

**Creating it** (`NcclEngine.create`, collective over the MPI communicator of the group):

1. every rank tells the others which GPU it drives (its 16-byte device UUID, gathered
   over MPI); two ranks on one GPU raise a RuntimeError on every rank, before NCCL, which
   would hang or fail obscurely;
2. rank 0 makes NCCL's 128-byte unique id (``ncclGetUniqueId``) and broadcasts it over
   MPI (``mpi_comm.bcast``);
3. every rank calls ``ncclCommInitRank(world, id, rank)`` with its device's context
   current. Group rank r is NCCL rank r, so ``src``/``root`` attrs are NCCL roots as they are.

**Running a collective.** The output is allocated by the device's caching allocator
(`lazytorch.runtime.cuda_memory`) and every call is queued on the device's default stream
(`lazytorch.runtime.cuda_driver.DEFAULT_STREAM`), where Triton launches lazytorch's kernels
and the copies run: the collective starts after the kernels that computed its input and
ends before any kernel or copy that reads its result, with no synchronization on the host
(reading a value, ``.item()``, waits for it as for a kernel). Counts are in elements:

====================  ===========================================================
all_reduce            ``ncclAllReduce(in, out, n_in, dtype, op)``
broadcast             ``ncclBroadcast(in, out, n_in, dtype, src)``
all_gather            ``ncclAllGather(in, out, n_in, dtype)``: out is rank-major
reduce_scatter        ``ncclReduceScatter(in, out, n_out, dtype, op)``
gather_to_rank        grouped send/recv (NCCL's documented gather): every rank sends
                      its input to ``root``; ``root`` receives block r from rank r.
                      The other ranks' results are zeros (``cuMemsetD8Async``), as
                      the MPI engine's are.
scatter_from_rank     grouped send/recv (NCCL's documented scatter): ``src`` sends
                      block r of its input to rank r; every rank receives its block.
====================  ===========================================================

The two rooted ones use ``ncclGroupStart``/``ncclSend``/``ncclRecv``/``ncclGroupEnd``
rather than ``ncclGather``/``ncclScatter``, which only recent NCCL releases have.

**Types** (`NCCL_DTYPES`): float16, bfloat16, float32, float64, int8, uint8, int32, int64
go as they are; bool is NCCL's uint8 (lazytorch stores bools as bytes 0/1), with ``sum``
and ``max`` computed as max (any) and ``product`` and ``min`` as min (all), as torch does;
``avg`` of bools and an int16 tensor (NCCL has no int16) raise a TypeError.

``avg`` of integers is NCCL's: the sum divided by the group size, truncated toward zero.

nccl4py is imported by `NcclEngine.create` (a process group's setup on cuda), never by
``import lazytorch``; without it, `create` raises a RuntimeError saying how to install it.

>>> from lazytorch.distributed._nccl import NCCL_DTYPES, NCCL_OPS
>>> NCCL_DTYPES["bool"], NCCL_OPS["product"]
('Uint8', 'Prod')
"""

from __future__ import annotations

import socket
import uuid
from typing import Any

from lazytorch.ir.node import Node
from lazytorch.runtime import cuda_driver, cuda_memory

__all__ = ["NCCL_DTYPES", "NCCL_OPS", "NcclEngine"]

INSTALL = 'pip install "lazytorch[cuda]"'

# lazytorch dtype name -> NCCL data type (the member of nccl4py's DataType enum)
NCCL_DTYPES = {
    "float16": "Float16",
    "bfloat16": "Bfloat16",
    "float32": "Float32",
    "float64": "Float64",
    "int8": "Int8",
    "uint8": "Uint8",
    "int32": "Int32",
    "int64": "Int64",
    "bool": "Uint8",  # bytes 0/1; the reduce op is mapped by BOOL_OPS
}

# reduce op attr -> NCCL reduce op (the member of nccl4py's RedOp enum)
NCCL_OPS = {"sum": "Sum", "avg": "Avg", "max": "Max", "min": "Min", "product": "Prod"}

# on bools: any (max) for sum and max, all (min) for product and min; avg has no meaning
BOOL_OPS = {"sum": "max", "max": "max", "product": "min", "min": "min"}

# the NCCL result of a communicator with no error, and of one whose call is still running
_NCCL_SUCCESS, _NCCL_IN_PROGRESS = 0, 7


def load_nccl() -> Any:
    """``nccl.bindings.nccl`` with its library loaded; RuntimeError saying how to install."""
    try:
        from nccl.bindings import nccl  # lazy: optional dependency (cuda collectives only)
    except ImportError as e:
        raise RuntimeError(
            f"collectives of cuda tensors need nccl4py and the NCCL library: {INSTALL} ({e})"
        ) from e
    try:
        nccl.get_version()  # loads libnccl.so.2 (from the nvidia-nccl wheel)
    except Exception as e:
        raise RuntimeError(
            f"nccl4py could not load the NCCL library: {INSTALL} ({type(e).__name__}: {e})"
        ) from e
    return nccl


def _nelements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _shared_gpus(seen: list[tuple[bytes, str, int]]) -> str | None:
    """Which ranks share a GPU, from every rank's (device uuid, host, index); None if none."""
    ranks_of: dict[bytes, list[int]] = {}
    for rank, (device_uuid, _, _) in enumerate(seen):
        ranks_of.setdefault(device_uuid, []).append(rank)
    shared = [ranks for ranks in ranks_of.values() if len(ranks) > 1]
    if not shared:
        return None
    ranks = shared[0]
    names = ", ".join(f"{r} (cuda:{seen[r][2]} on {seen[r][1]})" for r in ranks)
    return f"ranks {names} use one GPU (GPU-{uuid.UUID(bytes=seen[ranks[0]][0])})"


class NcclEngine:
    """Collectives of one process group's cuda tensors over an NCCL communicator.

    Made by `create` (collective: every rank of the group calls it); `run` computes one
    collective node (module docstring), `close` destroys the communicator.

    >>> NcclEngine(nccl=None, comm="a communicator", index=1, rank=1, world=2)
    NcclEngine(rank 1 of 2 on cuda:1, open)
    """

    __slots__ = ("comm", "index", "nccl", "rank", "world")

    def __init__(self, nccl: Any, comm: Any, index: int, rank: int, world: int) -> None:
        self.nccl = nccl  # the nccl4py bindings module
        self.comm = comm  # the NCCL communicator handle (None once closed)
        self.index = index  # the cuda device index
        self.rank = rank
        self.world = world

    @classmethod
    def create(cls, mpi_comm: Any, device: Any) -> NcclEngine:
        """The engine of the group whose MPI communicator is `mpi_comm`, on cuda `device`.

        Collective: every rank of `mpi_comm` calls it, each with its own GPU (an index,
        ``"cuda:1"`` or a device). RuntimeError when nccl4py is missing, CUDA is not
        available, or two ranks use one GPU.
        """
        nccl = load_nccl()
        rt = cuda_memory.runtime()
        rt.require("the NCCL engine")
        index = rt.index(device)
        rank, world = int(mpi_comm.Get_rank()), int(mpi_comm.Get_size())
        rt.driver.set_device(index)  # NCCL binds the communicator to the current device

        me = (bytes(rt.driver.device_uuid(index)), socket.gethostname(), index)
        shared = _shared_gpus(mpi_comm.allgather(me))
        if shared is not None:
            raise RuntimeError(
                f"NCCL needs one GPU per rank, but {shared}: give each rank its own device "
                "(lazytorch.cuda.set_device(local_rank), or CUDA_VISIBLE_DEVICES per rank)"
            )

        uid = bytes(nccl.get_unique_id()) if rank == 0 else None
        uid = mpi_comm.bcast(uid, root=0)
        if not isinstance(uid, bytes) or len(uid) != 128:
            raise RuntimeError(f"rank {rank} received a malformed NCCL unique id: {uid!r:.60}")
        comm = nccl.comm_init_rank(world, nccl.UniqueId.from_buffer(uid), rank)
        return cls(nccl, comm, index, rank, world)

    # -- running one collective ----------------------------------------------------------------
    def run(self, node: Node, value: Any) -> Any:
        """The result of collective `node` (a new buffer on this engine's device) whose
        input's buffer on this device is `value`."""
        name, params = node.op.name, node.params
        what = f"{name} #{params['seq']} on group {params['group']}"
        issue = _ISSUE.get(name)
        if issue is None:
            raise NotImplementedError(f"no NCCL lowering for '{name}'")
        if self.comm is None:
            raise RuntimeError(f"{what}: the NCCL communicator of this group was destroyed")
        if params["world"] != self.world:
            raise RuntimeError(
                f"{what} was recorded for {params['world']} ranks; this NCCL communicator "
                f"has {self.world}"
            )
        if not hasattr(value, "data_ptr") or value.device != self.index:
            where = f"cuda:{value.device}" if hasattr(value, "data_ptr") else "the host"
            raise RuntimeError(
                f"{what}: the NCCL engine runs on cuda:{self.index}, its input is on {where}"
            )
        dtype = self._dtype(node, what)
        # the op's code for the reductions, the root rank for the rooted ones
        attr = self._op(node, what) if "op" in params else params.get("src", params.get("root"))
        rt = cuda_memory.runtime()
        out_shape = node.op.shape_rule((value,), *node.attrs)  # the contract, on the buffer
        out = rt.empty(out_shape, node.dtype.np, self.index)
        n_in = _nelements(value.shape)
        if n_in == 0:  # every rank has these shapes: none calls NCCL
            return out
        rt.driver.set_device(self.index)
        try:
            issue(self, value, out, n_in, dtype, attr)
        except self.nccl.NCCLError as e:
            raise RuntimeError(f"{what}: NCCL failed: {e}") from e
        err = int(self.nccl.comm_get_async_error(self.comm))
        if err not in (_NCCL_SUCCESS, _NCCL_IN_PROGRESS):
            raise RuntimeError(f"{what}: NCCL failed: {self.nccl.get_error_string(err)}")
        return out

    def _dtype(self, node: Node, what: str) -> int:
        name = NCCL_DTYPES.get(node.dtype.name)
        if name is None:
            raise TypeError(
                f"{what}: NCCL has no {node.dtype.name} type; it takes {', '.join(NCCL_DTYPES)}"
            )
        return int(getattr(self.nccl.DataType, name))

    def _op(self, node: Node, what: str) -> int:
        op = node.params["op"]
        if node.dtype.name == "bool":
            if op not in BOOL_OPS:
                raise TypeError(f"{what}: cannot use ReduceOp.{op.upper()} with boolean inputs")
            op = BOOL_OPS[op]
        return int(getattr(self.nccl.RedOp, NCCL_OPS[op]))

    # -- the communicator ----------------------------------------------------------------------
    def close(self) -> None:
        """Finish the communicator's pending collectives and free it (``ncclCommFinalize``
        then ``ncclCommDestroy``, NCCL's order); once: later calls do nothing."""
        if self.comm is not None:
            comm, self.comm = self.comm, None
            self.nccl.comm_finalize(comm)
            self.nccl.comm_destroy(comm)

    def abort(self) -> None:
        """Abort the communicator's pending work and free it (``ncclCommAbort``), for a
        rank that gives up on a hung peer."""
        if self.comm is not None:
            comm, self.comm = self.comm, None
            self.nccl.comm_abort(comm)

    def __repr__(self) -> str:
        state = "closed" if self.comm is None else "open"
        return f"NcclEngine(rank {self.rank} of {self.world} on cuda:{self.index}, {state})"


# -- one function per collective: queue its NCCL calls on the default stream ----------------
# Each takes the engine, the input and output buffers, the input's element count, the NCCL
# data type and the collective's attr (the reduce op's code, or the root rank; None).
STREAM = cuda_driver.DEFAULT_STREAM


def _all_reduce(e: NcclEngine, x: Any, out: Any, n: int, dt: int, op: int) -> None:
    e.nccl.all_reduce(x.data_ptr(), out.data_ptr(), n, dt, op, e.comm, STREAM)


def _broadcast(e: NcclEngine, x: Any, out: Any, n: int, dt: int, src: int) -> None:
    e.nccl.broadcast(x.data_ptr(), out.data_ptr(), n, dt, src, e.comm, STREAM)


def _all_gather(e: NcclEngine, x: Any, out: Any, n: int, dt: int, _: None) -> None:
    e.nccl.all_gather(x.data_ptr(), out.data_ptr(), n, dt, e.comm, STREAM)


def _reduce_scatter(e: NcclEngine, x: Any, out: Any, n: int, dt: int, op: int) -> None:
    # NCCL counts the elements each rank receives
    e.nccl.reduce_scatter(x.data_ptr(), out.data_ptr(), n // e.world, dt, op, e.comm, STREAM)


def _gather_to_rank(e: NcclEngine, x: Any, out: Any, n: int, dt: int, root: int) -> None:
    nccl = e.nccl
    if e.rank != root:  # the result is meaningful on root only: zeros elsewhere
        cuda_memory.runtime().driver.memset_async(out.data_ptr(), 0, out.nbytes)
    nccl.group_start()
    try:
        if e.rank == root:
            for r in range(e.world):  # block r of the output from rank r (root included)
                nccl.recv(out.data_ptr() + r * x.nbytes, n, dt, r, e.comm, STREAM)
        nccl.send(x.data_ptr(), n, dt, root, e.comm, STREAM)
    finally:
        nccl.group_end()


def _scatter_from_rank(e: NcclEngine, x: Any, out: Any, n: int, dt: int, src: int) -> None:
    nccl, n_out = e.nccl, n // e.world
    nccl.group_start()
    try:
        if e.rank == src:
            for r in range(e.world):  # block r of the input to rank r (src included)
                nccl.send(x.data_ptr() + r * out.nbytes, n_out, dt, r, e.comm, STREAM)
        nccl.recv(out.data_ptr(), n_out, dt, src, e.comm, STREAM)
    finally:
        nccl.group_end()


_ISSUE = {
    "all_reduce": _all_reduce,
    "broadcast": _broadcast,
    "all_gather": _all_gather,
    "reduce_scatter": _reduce_scatter,
    "gather_to_rank": _gather_to_rank,
    "scatter_from_rank": _scatter_from_rank,
}
