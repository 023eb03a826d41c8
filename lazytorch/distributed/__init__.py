"""``torch.distributed`` for lazytorch: process groups and collectives on MPI and NCCL.

The names and semantics are torch's. A collective is recorded like any op: it rebinds its
tensor (``all_reduce(t)`` makes ``t`` the reduced value) to a collective node of the IR,
and runs, in the order it was recorded, before the next program that reads anything
(`lazytorch.runtime.collectives`). The exchange is done by MPI (mpi4py with MPICH) for CPU
tensors and NCCL for cuda tensors; a world of one process needs neither.

Start N ranks with ``lazytorch run --nproc-per-node N script.py`` or
``mpiexec -n N python script.py``; rank and world size come from the launcher's environment.
Install the engines with ``pip install "lazytorch[distributed]"`` (docs/distributed.md).

>>> import lazytorch
>>> import lazytorch.distributed as dist
>>> dist.init_process_group()  # no launcher: a world of one process
>>> t = lazytorch.tensor([1.0, 2.0])
>>> dist.all_reduce(t)
>>> t, dist.get_rank(), dist.get_world_size()
(tensor([1., 2.]), 0, 1)
>>> dist.destroy_process_group()
"""

from __future__ import annotations

import datetime
import enum
import importlib.util
from collections.abc import Sequence
from typing import Any

from lazytorch import _config, runtime
from lazytorch._settings import env_value
from lazytorch.autograd.grad_mode import no_grad
from lazytorch.distributed import (
    _nccl,  # (imports nccl4py only when it makes an engine)
    rpc,  # noqa: F401  (torch.distributed.rpc: present, not supported)
)
from lazytorch.distributed._engines import LocalEngine, MpiEngine
from lazytorch.distributed._env import launcher_env
from lazytorch.distributed._faults import Watchdog, abort_job, install_excepthook
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node, stamp, user_loc
from lazytorch.ir.primitives import Primitive, get
from lazytorch.ops import views as V
from lazytorch.ops._core import reshape_node, wrap
from lazytorch.ops.creation import zeros
from lazytorch.ops.shape import stack
from lazytorch.runtime import collectives as _collectives
from lazytorch.tensor import Tensor

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "new_group",
    "reduce_scatter_tensor",
    "scatter",
]

_ALL_REDUCE = get("all_reduce")
_BROADCAST = get("broadcast")
_ALL_GATHER = get("all_gather")
_GATHER = get("gather_to_rank")
_REDUCE_SCATTER = get("reduce_scatter")
_SCATTER = get("scatter_from_rank")

DEFAULT_TIMEOUT_S = 1800.0  # torch's default for CPU backends: 30 minutes (_settings)
_INSTALL = 'pip install "lazytorch[distributed]" (mpi4py and MPICH)'


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter_tensor`` combine the ranks' values."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"


class Backend(str):
    """A backend name (``"mpi"``, ``"nccl"``), lower-cased as torch's ``Backend`` is."""

    MPI = "mpi"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise TypeError(f"Backend name must be a string, but got: {name!r}")
        value = name.lower()
        if value not in ("mpi", "nccl", "undefined"):
            raise ValueError(
                f"lazytorch.distributed: unknown backend {name!r}; lazytorch runs on 'mpi' "
                "(CPU tensors) and 'nccl' (cuda tensors), or None for both"
            )
        return super().__new__(cls, value)


class ProcessGroup:
    """A set of ranks that run collectives together (the world, or one from `new_group`).

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size;
    ``src``/``dst`` arguments of collectives are global ranks, as in torch.
    """

    def __init__(self, gid: int, ranks: list[int], my_rank: int, comm: Any, backend: str) -> None:
        self.gid = gid
        self.ranks = ranks
        self._rank = my_rank  # in the group; -1: not a member
        self.comm = comm  # an mpi4py communicator, or None (one process without MPI)
        self.backend = backend
        self.seq = 0
        self.cpu_engine: Any = None
        self.cuda_engine: Any = None

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return len(self.ranks)

    def run(self, node: Node, value: Any) -> Any:
        """The engine's result for collective `node` (`runtime.collectives.Engine`)."""
        if node.device is CPU:
            return self.cpu_engine.run(node, value)
        if self.cuda_engine is None:  # NCCL, bootstrapped over MPI (or alone: one process)
            self.cuda_engine = _nccl.NcclEngine.create(self.comm or _OneProcess(), node.device)
        return self.cuda_engine.run(node, value)

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.gid}: ranks {self.ranks}, backend {self.backend}>"


class _OneProcess:
    """What the NCCL bootstrap asks of an MPI communicator (mpi4py's method names), for a
    world of one process."""

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def allgather(self, obj: Any) -> list[Any]:
        return [obj]

    def bcast(self, obj: Any, root: int = 0) -> Any:
        return obj


class GroupMember:
    """torch's sentinels: ``GroupMember.WORLD`` (the default group once initialized) and
    ``GroupMember.NON_GROUP_MEMBER`` (what `new_group` gives a rank outside it)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


group = GroupMember  # torch.distributed.group.WORLD


class _State:
    def __init__(self) -> None:
        self.world: ProcessGroup | None = None
        self.groups: dict[int, ProcessGroup] = {}
        self.rank = 0
        self.world_size = 1
        self.timeout = DEFAULT_TIMEOUT_S
        self.watchdog: Any = None
        self.next_gid = 0


_state = _State()


class Work:
    """The handle of a collective started with ``async_op=True``: ``wait()`` runs it (and
    every collective recorded before it) and returns True."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self._nodes = list(nodes)

    def wait(self, timeout: Any = None) -> bool:
        _collectives.resolve()
        return True

    def is_completed(self) -> bool:
        return all(n.buffer is not None for n in self._nodes)

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self) -> None:
        return None

    def synchronize(self) -> None:
        self.wait()


# -- availability and initialization --------------------------------------------------------


def is_available() -> bool:
    """lazytorch.distributed is always importable; the engines are optional extras."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py (the CPU engine) can be imported."""
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available() -> bool:
    """Whether nccl4py (the cuda engine) can be imported."""
    return importlib.util.find_spec("nccl") is not None


def is_initialized() -> bool:
    """Whether `init_process_group` has run (and `destroy_process_group` not since)."""
    return _state.world is not None


def _seconds(timeout: Any) -> float:
    if timeout is None:
        value = float(env_value("LAZYTORCH_DISTRIBUTED_TIMEOUT"))
    elif isinstance(timeout, datetime.timedelta):
        value = timeout.total_seconds()
    else:
        value = float(timeout)
    if not value > 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {timeout!r}")
    return value


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | float | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Join the job's default process group (the world).

    Rank and world size come from the launcher's environment (``RANK``/``WORLD_SIZE``,
    MPICH's ``PMI_*``, Open MPI's ``OMPI_COMM_WORLD_*``) and are checked against MPI's.
    Without a launcher the world is this one process, and needs no MPI. `timeout` (a
    ``timedelta`` or seconds; default ``LAZYTORCH_DISTRIBUTED_TIMEOUT`` or 30 minutes)
    bounds every collective: one that runs longer aborts the job naming the rank, the
    collective and its sequence number. An uncaught exception on any rank aborts the job.

    >>> import lazytorch.distributed as dist
    >>> dist.init_process_group(backend=None)
    >>> dist.is_initialized(), dist.get_backend()
    (True, 'mpi')
    >>> dist.destroy_process_group()
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        backend = Backend(backend)
    if store is not None or (init_method not in (None, "env://")):
        raise ValueError(
            "init_process_group: lazytorch's ranks find each other through MPI; init_method "
            "and store are not used (start the ranks with `lazytorch run --nproc-per-node N` "
            "or mpiexec)"
        )
    env = launcher_env()
    expect_world = world_size if world_size > 0 else env.world_size
    expect_rank = rank if rank >= 0 else env.rank
    seconds = _seconds(timeout)
    comm = None
    if expect_world > 1 or backend is not None:
        try:
            from mpi4py import MPI
        except ImportError:
            raise RuntimeError(
                f"lazytorch.distributed: a world of {expect_world} process(es) on backend "
                f"{backend or 'mpi'} needs MPI: {_INSTALL}"
            ) from None
        comm = MPI.COMM_WORLD
        if comm.Get_size() != expect_world:
            raise RuntimeError(
                f"lazytorch.distributed: the environment says WORLD_SIZE={expect_world}, but "
                f"this process is in an MPI world of {comm.Get_size()}: start the ranks with "
                f"`lazytorch run --nproc-per-node {expect_world} script.py` or "
                f"`mpiexec -n {expect_world} python script.py`"
            )
        if comm.Get_rank() != expect_rank:
            raise RuntimeError(
                f"lazytorch.distributed: the environment says RANK={expect_rank}, but MPI "
                f"numbers this process {comm.Get_rank()}"
            )
    _state.rank, _state.world_size, _state.timeout = expect_rank, expect_world, seconds
    if comm is not None:
        abort = abort_job
        if comm.Get_size() > 1:
            install_excepthook(expect_rank, abort)
        _state.watchdog = Watchdog(expect_rank, abort)
    pg = _make_group(list(range(expect_world)), expect_rank, comm, backend or "mpi")
    _state.world = GroupMember.WORLD = pg


def _make_group(ranks: list[int], my_rank: int, comm: Any, backend: str) -> ProcessGroup:
    gid = _state.next_gid
    _state.next_gid += 1
    pg = ProcessGroup(gid, ranks, my_rank, comm, backend)
    if comm is not None:
        pg.cpu_engine = MpiEngine(comm, _state.timeout, _state.watchdog, _state.rank)
    else:
        pg.cpu_engine = LocalEngine()
    _state.groups[gid] = pg
    _collectives.ENGINES[gid] = pg
    return pg


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Run the pending collectives, then leave `group` (default: every group)."""
    _collectives.resolve()
    pgs = list(_state.groups.values()) if group is None else [group]
    for pg in pgs:
        _state.groups.pop(pg.gid, None)
        _collectives.ENGINES.pop(pg.gid, None)
        if pg.cuda_engine is not None:
            pg.cuda_engine.close()
            pg.cuda_engine = None
        if pg.comm is not None and pg is not _state.world:
            pg.comm.Free()
        pg.comm = None
    if group is None or group is _state.world:
        _state.world = GroupMember.WORLD = None
        _state.groups.clear()
        _state.next_gid = 0  # (collectives were run above: no node names a stale group)


def _world() -> ProcessGroup:
    if _state.world is None:
        raise RuntimeError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group."
        )
    return _state.world


def _group(group: Any) -> ProcessGroup:
    if group is None or group is GroupMember.WORLD:
        return _world()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError(f"rank {_state.rank} is not a member of this process group")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    _world()
    if group.gid not in _state.groups:
        raise RuntimeError(f"process group {group.gid} has been destroyed")
    return group


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: Any = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
) -> Any:
    """A group of `ranks` (global ranks; default all). Every rank of the world must call it,
    in the same order; a rank outside `ranks` gets ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    members = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is not in a world of {world.size()}")
    me = _state.rank
    comm = None
    if world.comm is not None:
        from mpi4py import MPI

        comm = world.comm.Split(0 if me in members else MPI.UNDEFINED, me)
        if comm == MPI.COMM_NULL:
            comm = None
    if me not in members:
        _state.next_gid += 1  # every rank numbers the groups alike
        return GroupMember.NON_GROUP_MEMBER
    return _make_group(
        members, members.index(me), comm, Backend(backend) if backend else world.backend
    )


# -- queries ---------------------------------------------------------------------------------


def get_rank(group: Any = None) -> int:
    """This process's rank in `group` (default: the world); -1 outside the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).rank()


def get_world_size(group: Any = None) -> int:
    """The number of ranks in `group` (default: the world)."""
    return _group(group).size()


def get_backend(group: Any = None) -> str:
    """The group's backend name: ``"mpi"`` (cuda tensors use NCCL there too) or ``"nccl"``."""
    return _group(group).backend


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of `group`, in group order."""
    return list(_group(group).ranks)


def get_group_rank(group: Any, global_rank: int) -> int:
    """The rank within `group` of global rank `global_rank`."""
    pg = _group(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


def get_global_rank(group: Any, group_rank: int) -> int:
    """The global rank of rank `group_rank` within `group`."""
    pg = _group(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"group rank {group_rank} is not part of group {pg}")
    return pg.ranks[group_rank]


# -- collectives -----------------------------------------------------------------------------


def _tensor(t: Any, op: str, name: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a lazytorch Tensor, got {type(t).__name__}")
    return t


def _record(pg: ProcessGroup, prim: Primitive, x: Node, attr: Any = None) -> Node:
    """Record collective `prim` on `pg` with `x` as input; it runs before the next cut."""
    pg.seq += 1
    attrs = (pg.gid, pg.seq, pg.size()) if attr is None else (pg.gid, pg.seq, pg.size(), attr)
    node = prim.bind((x,), attrs)
    stamp(node, user_loc(3))
    if runtime._compile_trace is not None:  # a compiled function cannot replay an exchange
        runtime._compile_trace.materialized(prim.name)
    pending = runtime.pending_collectives
    if x.buffer is not None and not pending:
        # Nothing recorded before it is waiting and its input is computed: run it now
        # (a broadcast of parameters, a gradient bucket read after a cut) — the same order,
        # and no walk of the graph at the next cut.
        _collectives._run_one(node)
    else:
        pending.append(node)
    return node


def _assign(t: Tensor, node: Node) -> None:
    with no_grad():
        V.assign(t, node)


def _done(nodes: Sequence[Node], async_op: bool) -> Work | None:
    if _config.sync_enabled():  # sync mode: run each op as it is recorded
        _collectives.resolve()
    return Work(nodes) if async_op else None


def _reduce_op(op: Any, fn: str) -> str:
    if isinstance(op, ReduceOp):
        return op.value
    if isinstance(op, str) and op.lower() in {o.value for o in ReduceOp}:
        return op.lower()
    raise ValueError(f"{fn}: op must be a ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), got {op!r}")


def _member(pg: ProcessGroup) -> bool:
    return pg.rank() >= 0


def _group_rank(
    pg: ProcessGroup, rank: int | None, group_rank: int | None, fn: str, arg: str
) -> int:
    if (rank is None) == (group_rank is None):
        if rank is None:
            raise ValueError(f"{fn}: pass {arg} (a global rank) or group_{arg}")
        raise ValueError(f"{fn}: pass only one of {arg} and group_{arg}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{fn}: group_{arg}={group_rank} is not in a group of {pg.size()}")
        return group_rank
    return get_group_rank(pg, rank)  # type: ignore[arg-type]


def all_reduce(
    tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce `tensor` across the group's ranks with `op`; every rank gets the result in
    `tensor` (in place: the tensor is rebound, views see it).

    >>> import lazytorch, lazytorch.distributed as dist
    >>> dist.init_process_group()
    >>> t = lazytorch.arange(3.0)
    >>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
    >>> t
    tensor([0., 1., 2.])
    >>> dist.destroy_process_group()
    """
    t = _tensor(tensor, "all_reduce")
    pg = _group(group)
    if not _member(pg):
        return None
    node = _record(pg, _ALL_REDUCE, t._node, _reduce_op(op, "all_reduce"))
    _assign(t, node)
    return _done([node], async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy rank `src`'s `tensor` into `tensor` on every rank of the group (in place)."""
    t = _tensor(tensor, "broadcast")
    pg = _group(group)
    if not _member(pg):
        return None
    root = _group_rank(pg, src, group_src, "broadcast", "src")
    node = _record(pg, _BROADCAST, t._node, root)
    _assign(t, node)
    return _done([node], async_op)


def all_gather(
    tensor_list: list[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Fill ``tensor_list[r]`` with rank r's `tensor`, on every rank (each in place)."""
    t = _tensor(tensor, "all_gather")
    pg = _group(group)
    if not _member(pg):
        return None
    _rank_list(tensor_list, t, pg, "all_gather", "tensor_list")
    node = _record(pg, _ALL_GATHER, t._node)
    _scatter_rows(tensor_list, node)
    return _done([node], async_op)


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Gather every rank's `input_tensor` into `output_tensor`: concatenated along dim 0
    (size ``world * n``), or stacked (shape ``(world, *input.shape)``)."""
    out = _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    x = _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _group(group)
    if not _member(pg):
        return None
    w = pg.size()
    stacked = (w, *x.shape)
    cat = (w * x.shape[0], *x.shape[1:]) if x.ndim else None
    if out.dtype != x.dtype or tuple(out.shape) not in (stacked, cat):
        raise ValueError(
            f"all_gather_into_tensor: output_tensor must be {x.dtype} of shape {list(cat or stacked)} "
            f"or {list(stacked)} for an input of {list(x.shape)} on {w} ranks, got "
            f"{out.dtype} {list(out.shape)}"
        )
    node = _record(pg, _ALL_GATHER, x._node)
    _assign(out, _reshaped(node, tuple(out.shape)))
    return _done([node], async_op)


def reduce_scatter_tensor(
    output: Tensor, input: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce `input` across ranks and give rank r block r of the result, in `output`.
    `input` is ``world`` blocks along dim 0 (or stacked: shape ``(world, *output.shape)``)."""
    out = _tensor(output, "reduce_scatter_tensor", "output")
    x = _tensor(input, "reduce_scatter_tensor", "input")
    pg = _group(group)
    if not _member(pg):
        return None
    w = pg.size()
    stacked = (w, *out.shape)
    cat = (w * out.shape[0], *out.shape[1:]) if out.ndim else None
    if out.dtype != x.dtype or tuple(x.shape) not in (stacked, cat):
        raise ValueError(
            f"reduce_scatter_tensor: input must be {out.dtype} of shape {list(cat or stacked)} "
            f"or {list(stacked)} for an output of {list(out.shape)} on {w} ranks, got "
            f"{x.dtype} {list(x.shape)}"
        )
    node = _record(pg, _REDUCE_SCATTER, x._node, _reduce_op(op, "reduce_scatter_tensor"))
    _assign(out, _reshaped(node, tuple(out.shape)))
    return _done([node], async_op)


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Fill ``gather_list[r]`` on rank `dst` with rank r's `tensor`; other ranks pass no
    list (torch's rule: `gather_list` on the destination only)."""
    t = _tensor(tensor, "gather")
    pg = _group(group)
    if not _member(pg):
        return None
    if dst is None and group_dst is None:
        dst = 0
    root = _group_rank(pg, dst, group_dst, "gather", "dst")
    if pg.rank() == root:
        _rank_list(gather_list, t, pg, "gather", "gather_list", "on the destination rank, ")
    elif gather_list:
        raise ValueError(
            "gather: Argument ``gather_list`` must NOT be specified on non-destination ranks."
        )
    node = _record(pg, _GATHER, t._node, root)
    if pg.rank() == root:
        _scatter_rows(gather_list, node)  # type: ignore[arg-type]
    return _done([node], async_op)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Give rank r ``scatter_list[r]`` of rank `src`, in `tensor` (in place); other ranks
    pass no list."""
    t = _tensor(tensor, "scatter")
    pg = _group(group)
    if not _member(pg):
        return None
    if src is None and group_src is None:
        src = 0
    root = _group_rank(pg, src, group_src, "scatter", "src")
    if pg.rank() == root:
        _rank_list(scatter_list, t, pg, "scatter", "scatter_list", "on the source rank, ")
        stacked = stack(scatter_list)._node
    else:
        if scatter_list:
            raise ValueError(
                "scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks."
            )
        stacked = zeros((pg.size(), *t.shape), dtype=t.dtype, device=t.device)._node
    node = _record(pg, _SCATTER, stacked, root)
    _assign(t, node)
    return _done([node], async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Run every pending collective, then wait until every rank of the group gets here."""
    pg = _group(group)
    _collectives.resolve()
    if _member(pg) and pg.comm is not None:
        pg.cpu_engine.barrier(f"barrier on group {pg.gid}")
    return Work([]) if async_op else None


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list[r]`` with rank r's picklable `obj`."""
    pg = _group(group)
    if not _member(pg):
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have {pg.size()} entries")
    _collectives.resolve()
    got = (
        [obj]
        if pg.comm is None
        else pg.cpu_engine.allgather_object(obj, f"all_gather_object on group {pg.gid}")
    )
    object_list[:] = got


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: Any = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Replace `object_list` on every rank with rank `src`'s (picklable objects)."""
    pg = _group(group)
    if not _member(pg):
        return
    if src is None and group_src is None:
        src = 0
    root = _group_rank(pg, src, group_src, "broadcast_object_list", "src")
    _collectives.resolve()
    if pg.comm is not None:
        object_list[:] = pg.cpu_engine.bcast_object(
            list(object_list), root, f"broadcast_object_list on group {pg.gid}"
        )


def _rank_list(
    tensors: Any, like: Tensor, pg: ProcessGroup, fn: str, name: str, where: str = ""
) -> None:
    """`tensors` must be a list of one tensor per rank, each of `like`'s shape and dtype."""
    if not isinstance(tensors, list) or len(tensors) != pg.size():
        size = f" of {len(tensors)}" if isinstance(tensors, (list, tuple)) else ""
        raise ValueError(
            f"{fn}: {where}{name} must be a list of {pg.size()} tensors (one per rank), "
            f"got {type(tensors).__name__}{size}"
        )
    for i, x in enumerate(tensors):
        _tensor(x, fn, f"{name}[{i}]")
        _same_meta(x, like, fn, f"{name}[{i}]")


def _same_meta(out: Tensor, like: Tensor, fn: str, name: str) -> None:
    if tuple(out.shape) != tuple(like.shape) or out.dtype != like.dtype:
        raise ValueError(
            f"{fn}: {name} is {out.dtype} {list(out.shape)}, but the input is "
            f"{like.dtype} {list(like.shape)}"
        )


def _reshaped(node: Node, shape: tuple[Any, ...]) -> Node:
    return node if tuple(node.shape) == shape else reshape_node(node, shape)


def _scatter_rows(outs: list[Tensor], node: Node) -> None:
    stacked = wrap(node)
    for i, out in enumerate(outs):
        _assign(out, stacked[i]._node)
