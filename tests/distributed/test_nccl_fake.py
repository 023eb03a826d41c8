"""The NCCL engine (lazytorch.distributed._nccl) without a GPU: a fake nccl4py and a fake driver.

`FakeNccl` stands in for ``nccl.bindings.nccl`` (injected in ``sys.modules``, where the
engine imports it): it records every call with its arguments (pointers, counts, NCCL data
type and reduce op codes, roots and peers, communicator, stream) and, once every simulated
rank has issued a collective, computes it on the fake device memory as NCCL would (matching
grouped sends with receives in order). `FakeDriver` is `lazytorch.runtime.cuda_driver`'s
interface over host memory, one simulated GPU per rank, each with its own UUID. Ranks are
threads only while they create their engines (the MPI exchange of device UUIDs and of the
unique id); after that each rank's collectives are issued in turn and then `flush`ed.

So the checks are of two kinds: the calls (what the engine asked NCCL, exactly), and the
values (the results against NumPy, which shows that the pointer offsets and counts of the
gather/scatter blocks are right).

One test runs the engine for real on a GPU at world size 1, against NumPy; it is skipped
without a GPU, and ``LAZYTORCH_TEST_GPU=1`` turns that skip into a failure, as in tests/gpu.
"""

from __future__ import annotations

import collections
import ctypes
import enum
import os
import sys
import threading
import types

import ml_dtypes
import numpy as np
import pytest

import lazytorch as lt
from lazytorch.distributed._nccl import NcclEngine
from lazytorch.ir.primitives import get, make_node
from lazytorch.runtime import collectives, cuda_driver, cuda_memory
from lazytorch.runtime.cuda_memory import DeviceBuffer

ON_GPU = os.environ.get("LAZYTORCH_TEST_GPU") == "1"


# -- the fake nccl4py ----------------------------------------------------------------------------
class DataType(enum.IntEnum):  # ncclDataType_t, as nccl.h numbers it
    Int8 = 0
    Uint8 = 1
    Int32 = 2
    Uint32 = 3
    Int64 = 4
    Uint64 = 5
    Float16 = 6
    Float32 = 7
    Float64 = 8
    Bfloat16 = 9


class RedOp(enum.IntEnum):  # ncclRedOp_t
    Sum = 0
    Prod = 1
    Max = 2
    Min = 3
    Avg = 4


NP_OF = {
    DataType.Int8: np.int8,
    DataType.Uint8: np.uint8,
    DataType.Int32: np.int32,
    DataType.Int64: np.int64,
    DataType.Float16: np.float16,
    DataType.Float32: np.float32,
    DataType.Float64: np.float64,
    DataType.Bfloat16: ml_dtypes.bfloat16,
}

Call = collections.namedtuple(
    "Call", "fn rank send recv count dtype op root comm stream", defaults=(None,) * 8
)


class NCCLError(Exception):
    pass


class UniqueId:
    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    @classmethod
    def from_buffer(cls, raw):
        assert len(raw) == 128
        return cls(bytes(raw))

    def __bytes__(self):
        return self.raw


class FakeNccl(types.ModuleType):
    """``nccl.bindings.nccl``'s functions the engine uses; computes on the fake memory."""

    DataType = DataType
    RedOp = RedOp
    NCCLError = NCCLError
    UniqueId = UniqueId

    def __init__(self) -> None:
        super().__init__("nccl.bindings.nccl")
        self.calls: list[Call] = []
        self.unique_ids = 0
        self.inits: list[tuple[int, bytes, int]] = []  # (nranks, id, rank) per comm_init_rank
        self.destroyed: list[str] = []
        self.async_error = 0
        self._grouped: list[Call] | None = None  # calls between group_start and group_end
        self._lock = threading.Lock()

    # setup
    def get_version(self):
        return 23203

    def get_unique_id(self):
        self.unique_ids += 1
        return UniqueId(bytes([self.unique_ids]) * 128)  # a new one each call

    def comm_init_rank(self, nranks, comm_id, rank):
        assert isinstance(comm_id, UniqueId)
        with self._lock:
            self.inits.append((nranks, bytes(comm_id), rank))
        return f"comm{rank}"

    def comm_finalize(self, comm):
        self.destroyed.append(f"finalize {comm}")

    def comm_destroy(self, comm):
        self.destroyed.append(comm)

    def comm_abort(self, comm):
        self.destroyed.append(f"abort {comm}")

    def comm_get_async_error(self, comm):
        return self.async_error

    def get_error_string(self, result):
        return f"error {result}"

    # collectives (nccl4py's argument order)
    def _record(self, call):
        assert isinstance(call.send, int) and isinstance(call.recv, int), call
        rank = int(call.comm.removeprefix("comm"))
        call = call._replace(rank=rank)
        (self._grouped if self._grouped is not None else self.calls).append(call)

    def all_reduce(self, sendbuff, recvbuff, count, datatype, op, comm, stream):
        self._record(
            Call("all_reduce", 0, sendbuff, recvbuff, count, datatype, op, None, comm, stream)
        )

    def broadcast(self, sendbuff, recvbuff, count, datatype, root, comm, stream):
        self._record(
            Call("broadcast", 0, sendbuff, recvbuff, count, datatype, None, root, comm, stream)
        )

    def all_gather(self, sendbuff, recvbuff, sendcount, datatype, comm, stream):
        self._record(
            Call("all_gather", 0, sendbuff, recvbuff, sendcount, datatype, None, None, comm, stream)
        )

    def reduce_scatter(self, sendbuff, recvbuff, recvcount, datatype, op, comm, stream):
        self._record(
            Call(
                "reduce_scatter", 0, sendbuff, recvbuff, recvcount, datatype, op, None, comm, stream
            )
        )

    def send(self, sendbuff, count, datatype, peer, comm, stream):
        self._record(Call("send", 0, sendbuff, 0, count, datatype, None, peer, comm, stream))

    def recv(self, recvbuff, count, datatype, peer, comm, stream):
        self._record(Call("recv", 0, 0, recvbuff, count, datatype, None, peer, comm, stream))

    def group_start(self):
        assert self._grouped is None, "groups are not nested by the engine"
        self._grouped = []

    def group_end(self):
        grouped, self._grouped = self._grouped, None
        rank = grouped[0].rank if grouped else None
        self.calls.append(Call("group", rank, 0, 0, len(grouped), comm=grouped))

    # what NCCL would have computed, once every rank issued its calls
    def flush(self, world):
        """Run the recorded calls: the k-th collective of each rank together."""
        by_rank = collections.defaultdict(list)
        for c in self.calls:
            by_rank[c.rank].append(c)
        assert not by_rank or sorted(by_rank) == list(range(world)), by_rank.keys()
        for step in zip(*(by_rank[r] for r in range(world))):
            fns = {c.fn for c in step}
            assert len(fns) == 1, step
            if step[0].fn == "group":
                _match_sends_and_recvs([g for c in step for g in c.comm])
            else:
                _compute(step, world)
        self.calls.clear()


def _view(ptr, count, dtype):
    dt = np.dtype(NP_OF[DataType(dtype)])
    raw = (ctypes.c_char * (count * dt.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dt)


def _compute(step, world):
    first = step[0]
    for c in step:  # every rank agrees on the call
        assert (c.count, c.dtype, c.op, c.root) == (first.count, first.dtype, first.op, first.root)
    n, dt = first.count, first.dtype
    if first.fn in ("all_reduce", "reduce_scatter"):
        total = n * (world if first.fn == "reduce_scatter" else 1)
        ins = np.stack([_view(c.send, total, dt).astype(np.float64) for c in step])
        red = {
            RedOp.Sum: ins.sum(0),
            RedOp.Prod: ins.prod(0),
            RedOp.Max: ins.max(0),
            RedOp.Min: ins.min(0),
            RedOp.Avg: ins.sum(0) / world,
        }[RedOp(first.op)]
        for c in step:
            lo = c.rank * n if first.fn == "reduce_scatter" else 0
            _view(c.recv, n, dt)[:] = red[lo : lo + n].astype(NP_OF[DataType(dt)])
    elif first.fn == "broadcast":
        src = _view(step[first.root].send, n, dt).copy()
        for c in step:
            _view(c.recv, n, dt)[:] = src
    elif first.fn == "all_gather":
        stacked = np.concatenate([_view(c.send, n, dt) for c in step])
        for c in step:
            _view(c.recv, n * world, dt)[:] = stacked
    else:
        raise AssertionError(first)


def _match_sends_and_recvs(calls):
    """Pair each send r -> p with the next receive by p from r, in issue order."""
    sends = collections.defaultdict(collections.deque)
    recvs = collections.defaultdict(collections.deque)
    for c in calls:
        if c.fn == "send":
            sends[(c.rank, c.root)].append(c)
        else:
            assert c.fn == "recv", c
            recvs[(c.root, c.rank)].append(c)
    assert sends.keys() == recvs.keys(), (sends.keys(), recvs.keys())
    for pair in sends:
        assert len(sends[pair]) == len(recvs[pair]), pair
        for s, r in zip(sends[pair], recvs[pair]):
            assert (s.count, s.dtype) == (r.count, r.dtype), (s, r)
            _view(r.recv, r.count, r.dtype)[:] = _view(s.send, s.count, s.dtype)


# -- the fake driver: host memory, one simulated GPU per rank ------------------------------------
class FakeDriver:
    """`lazytorch.runtime.cuda_driver`'s interface over host memory (as tests/gpu's)."""

    def __init__(self, devices, uuids=None):
        self.devices = devices
        self.uuids = uuids or [bytes([i + 1]) * 16 for i in range(devices)]
        self.memory = {}  # address -> its bytes
        self.memsets = []  # (ptr, byte, nbytes)
        self.current = None

    def init(self):
        pass

    def device_count(self):
        return self.devices

    def set_device(self, index):
        assert 0 <= index < self.devices
        self.current = index

    def alloc(self, nbytes):
        mem = np.full(nbytes, 0xAB, np.uint8)  # not zeros: an unwritten result shows
        self.memory[mem.ctypes.data] = mem
        return mem.ctypes.data

    def free(self, ptr):
        del self.memory[ptr]

    def copy_htod(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)

    def copy_dtoh(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)

    def copy_dtod(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)

    def synchronize(self):
        pass

    def kernel_arg(self, buf):
        return buf

    def memset_async(self, ptr, byte, nbytes):
        self.memsets.append((ptr, byte, nbytes))
        ctypes.memset(ptr, byte, nbytes)

    def device_uuid(self, index):
        return self.uuids[index]


class FakeMpi:
    """An MPI communicator of `world` ranks that are threads of this process (create only)."""

    def __init__(self, world):
        self.world = world
        self.barrier = threading.Barrier(world, timeout=10)
        self.slots = [None] * world
        self.bcasts = []  # (rank, what it passed, root)

    def for_rank(self, rank):
        """Rank `rank`'s communicator (mpi4py's method names)."""
        return types.SimpleNamespace(
            Get_rank=lambda: rank,
            Get_size=lambda: self.world,
            allgather=lambda obj: self._allgather(rank, obj),
            bcast=lambda obj, root=0: self._bcast(rank, obj, root),
        )

    def _allgather(self, rank, obj):
        self.slots[rank] = obj
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        return got

    def _bcast(self, rank, obj, root):
        self.bcasts.append((rank, obj, root))
        return self._allgather(rank, obj)[root]


@pytest.fixture
def fake(monkeypatch):
    """Install a fake nccl4py; yields it. `setup(world)` installs a fake driver too."""
    nccl = FakeNccl()
    package = types.ModuleType("nccl.bindings")
    package.nccl = nccl
    monkeypatch.setitem(sys.modules, "nccl", types.ModuleType("nccl"))
    monkeypatch.setitem(sys.modules, "nccl.bindings", package)
    monkeypatch.setitem(sys.modules, "nccl.bindings.nccl", nccl)
    monkeypatch.setattr(cuda_memory, "_triton_installed", lambda: True)  # no kernel runs here
    yield nccl
    lt.runtime.forget_live()
    lt.cuda._use_driver(None)  # the real driver again


def setup(world, uuids=None):
    """A fake driver with `world` GPUs and the engines of `world` ranks (one GPU each)."""
    driver = FakeDriver(world, uuids)
    lt.cuda._use_driver(driver)
    mpi = FakeMpi(world)
    engines, errors = [None] * world, [None] * world

    def create(rank):
        try:
            engines[rank] = NcclEngine.create(mpi.for_rank(rank), f"cuda:{rank}")
        except Exception as e:
            errors[rank] = e

    threads = [threading.Thread(target=create, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    return driver, mpi, engines, errors


def collective(name, x, device, attrs):
    """Collective `name` (attrs after group 0, seq 1) of host array `x` uploaded to cuda
    `device`: the node and its input's device buffer."""
    leaf = lt.tensor(x, device=f"cuda:{device}")._node
    prim = get(name)
    attrs = (0, 1, *attrs)
    shape = prim.shape_rule((leaf,), *attrs)
    return make_node(prim, (leaf,), attrs, tuple(shape), leaf.dtype, leaf.device), leaf.buffer


def run_all(nccl, engines, name, inputs, attrs):
    """Each rank runs collective `name` on its input (host arrays), then NCCL "runs" them:
    the results on the host, the input and output buffers, and the calls made."""
    world = len(engines)
    outs, ins = [], []
    for rank, (engine, x) in enumerate(zip(engines, inputs)):
        node, buf = collective(name, x, rank, (world, *attrs))
        ins.append(buf)
        outs.append(engine.run(node, buf))
    calls = list(nccl.calls)
    nccl.flush(world)
    return [o.to_host() for o in outs], ins, outs, calls


def ranks_inputs(world, shape, dtype, seed=0):
    g = np.random.default_rng(seed)
    if dtype == "bool":
        return [g.integers(0, 2, shape).astype(bool) for _ in range(world)]
    if np.dtype(dtype).kind in "iu":
        return [
            g.integers(-5 if dtype != "uint8" else 0, 6, shape).astype(dtype) for _ in range(world)
        ]
    return [g.integers(-8, 9, shape).astype(dtype) / 4 for _ in range(world)]  # exact sums


# -- creating the engine ---------------------------------------------------------------------------
def test_create_broadcasts_rank_0s_unique_id_and_inits_every_rank(fake):
    _, mpi, engines, errors = setup(3)
    assert errors == [None] * 3 and all(isinstance(e, NcclEngine) for e in engines)
    assert fake.unique_ids == 1  # rank 0 only
    id0 = b"\x01" * 128  # the id rank 0 made
    assert sorted(mpi.bcasts, key=lambda b: b[0]) == [(0, id0, 0), (1, None, 0), (2, None, 0)]
    assert sorted(fake.inits) == [(3, id0, 0), (3, id0, 1), (3, id0, 2)]  # (nranks, id, rank)
    assert [(e.rank, e.world, e.index) for e in engines] == [(0, 3, 0), (1, 3, 1), (2, 3, 2)]
    assert repr(engines[1]) == "NcclEngine(rank 1 of 3 on cuda:1, open)"
    engines[1].close()
    engines[1].close()  # once
    engines[2].abort()
    assert fake.destroyed == ["finalize comm1", "comm1", "abort comm2"] and "closed" in repr(
        engines[1]
    )


def test_two_ranks_on_one_gpu_are_refused_before_nccl(fake):
    same = b"\x42" * 16
    _, _, engines, errors = setup(3, uuids=[b"\x01" * 16, same, same])
    assert engines == [None] * 3  # every rank refuses, so none waits for the others
    for e in errors:
        assert isinstance(e, RuntimeError)
        assert "NCCL needs one GPU per rank" in str(e)
        assert "ranks 1 (cuda:1 on" in str(e) and ", 2 (cuda:2 on" in str(e)
        assert "GPU-42424242-4242-4242-4242-424242424242" in str(e)
    assert fake.unique_ids == 0 and fake.inits == []


def test_a_missing_nccl4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nccl", None)  # import nccl fails
    with pytest.raises(RuntimeError, match=r'need nccl4py .*pip install "lazytorch\[cuda\]"'):
        NcclEngine.create(FakeMpi(1).for_rank(0), "cuda")


def test_a_missing_nccl_library_says_how_to_install(fake, monkeypatch):
    def no_library():
        raise RuntimeError('Failure finding "libnccl.so.2"')

    monkeypatch.setattr(fake, "get_version", no_library)
    with pytest.raises(
        RuntimeError, match=r"could not load the NCCL library: pip install .*libnccl"
    ):
        NcclEngine.create(FakeMpi(1).for_rank(0), "cuda")


def test_nccl4py_is_imported_only_by_a_cuda_collective():
    import subprocess

    code = (
        "import sys, lazytorch, lazytorch.distributed._nccl\n"
        "assert 'nccl' not in sys.modules and 'cuda.bindings' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- the calls -------------------------------------------------------------------------------------
def test_all_reduce_calls_nccl_with_new_output_pointer_counts_codes_and_the_stream(fake):
    driver, _, engines, _ = setup(2)
    inputs = ranks_inputs(2, (3, 5), "float32")
    before = set(driver.memory)
    got, ins, outs, calls = run_all(fake, engines, "all_reduce", inputs, ("sum",))
    assert len(calls) == 2
    for rank, c in enumerate(calls):
        assert c.fn == "all_reduce" and c.rank == rank and c.comm == f"comm{rank}"
        assert c.send == ins[rank].data_ptr() and c.recv == outs[rank].data_ptr()
        assert c.send != c.recv and c.recv not in before  # a fresh buffer, not the input's
        assert (c.count, c.dtype, c.op, c.stream) == (15, 7, 0, 0)  # elements; ncclFloat32, ncclSum
        assert c.stream == cuda_driver.DEFAULT_STREAM
        assert outs[rank].shape == (3, 5) and outs[rank].nbytes == 60
        assert outs[rank].dtype == np.float32 and outs[rank].device == rank
    for g in got:
        np.testing.assert_array_equal(g, inputs[0] + inputs[1])


# dtype -> (ncclDataType_t code as nccl.h numbers it)
DTYPE_CODES = {
    "float16": 6,
    "bfloat16": 9,
    "float32": 7,
    "float64": 8,
    "int8": 0,
    "uint8": 1,
    "int32": 2,
    "int64": 4,
    "bool": 1,
}
OP_CODES = {"sum": 0, "product": 1, "max": 2, "min": 3, "avg": 4}


@pytest.mark.parametrize("dtype", list(DTYPE_CODES))
def test_every_dtype_has_its_nccl_code(fake, dtype):
    _, _, engines, _ = setup(2)
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    inputs = [x.astype(np_dtype) for x in ranks_inputs(2, (4,), dtype, seed=3)]
    got, _, outs, calls = run_all(fake, engines, "all_reduce", inputs, ("max",))
    assert {c.dtype for c in calls} == {DTYPE_CODES[dtype]} and {c.count for c in calls} == {4}
    assert all(
        o.dtype == np.dtype(np_dtype) and o.nbytes == 4 * np.dtype(np_dtype).itemsize for o in outs
    )
    want = np.maximum(inputs[0], inputs[1])
    for g in got:
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("op", list(OP_CODES))
def test_every_reduce_op_has_its_nccl_code(fake, op):
    _, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (2, 3), "float64", seed=5)
    got, _, _, calls = run_all(fake, engines, "all_reduce", inputs, (op,))
    assert {c.op for c in calls} == {OP_CODES[op]}
    stack = np.stack(inputs)
    want = {
        "sum": stack.sum(0),
        "product": stack.prod(0),
        "max": stack.max(0),
        "min": stack.min(0),
        "avg": stack.mean(0),
    }[op]
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-15)


@pytest.mark.parametrize(
    "op, nccl_op, want",
    [("sum", 2, np.any), ("max", 2, np.any), ("product", 3, np.all), ("min", 3, np.all)],
)
def test_bools_reduce_as_uint8_with_max_or_min(fake, op, nccl_op, want):
    _, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (16,), "bool", seed=2)
    got, _, outs, calls = run_all(fake, engines, "all_reduce", inputs, (op,))
    assert {(c.dtype, c.op) for c in calls} == {(1, nccl_op)}  # ncclUint8, ncclMax / ncclMin
    for g, o in zip(got, outs):
        assert o.dtype == np.bool_
        np.testing.assert_array_equal(g, want(np.stack(inputs), axis=0))


def test_avg_of_bools_and_int16_are_refused_before_any_call(fake):
    _, _, engines, _ = setup(1)
    node, buf = collective("all_reduce", np.ones(3, bool), 0, (1, "avg"))
    with pytest.raises(
        TypeError, match=r"all_reduce #1 on group 0: cannot use ReduceOp.AVG with boolean"
    ):
        engines[0].run(node, buf)
    node, buf = collective("all_reduce", np.ones(3, np.int16), 0, (1, "sum"))
    with pytest.raises(TypeError, match=r"all_reduce #1 on group 0: NCCL has no int16 type"):
        engines[0].run(node, buf)
    assert fake.calls == []


def test_broadcast_sends_src_as_the_root(fake):
    _, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (2, 2), "int64", seed=1)
    got, ins, outs, calls = run_all(fake, engines, "broadcast", inputs, (2,))
    assert [(c.fn, c.root, c.count, c.dtype, c.stream) for c in calls] == [
        ("broadcast", 2, 4, 4, 0)
    ] * 3
    assert all(
        c.send == i.data_ptr() and c.recv == o.data_ptr() for c, i, o in zip(calls, ins, outs)
    )
    for g in got:
        np.testing.assert_array_equal(g, inputs[2])


def test_all_gather_counts_the_input_and_stacks_rank_major(fake):
    _, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (2, 3), "float16", seed=4)
    got, _, outs, calls = run_all(fake, engines, "all_gather", inputs, ())
    assert {(c.fn, c.count, c.dtype) for c in calls} == {("all_gather", 6, 6)}  # sendcount
    assert all(o.shape == (3, 2, 3) and o.nbytes == 36 for o in outs)
    for g in got:
        np.testing.assert_array_equal(g, np.stack(inputs))


def test_reduce_scatter_counts_what_each_rank_receives(fake):
    _, _, engines, _ = setup(2)
    inputs = ranks_inputs(2, (4, 3), "int32", seed=6)
    got, _, outs, calls = run_all(fake, engines, "reduce_scatter", inputs, ("sum",))
    assert {(c.fn, c.count, c.dtype, c.op) for c in calls} == {("reduce_scatter", 6, 2, 0)}
    total = inputs[0] + inputs[1]
    for rank, (g, o) in enumerate(zip(got, outs)):
        assert o.shape == (2, 3)
        np.testing.assert_array_equal(g, total[2 * rank : 2 * rank + 2])


def test_gather_to_rank_is_grouped_send_recv_and_zeros_off_root(fake):
    driver, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (2, 5), "float32", seed=7)
    got, ins, outs, calls = run_all(fake, engines, "gather_to_rank", inputs, (1,))
    assert [c.fn for c in calls] == ["group"] * 3
    for rank, group in enumerate(c.comm for c in calls):
        sends = [(g.send, g.root, g.count, g.dtype, g.stream) for g in group if g.fn == "send"]
        recvs = [(g.recv, g.root, g.count, g.dtype, g.stream) for g in group if g.fn == "recv"]
        assert sends == [(ins[rank].data_ptr(), 1, 10, 7, 0)]  # every rank sends to root
        if rank == 1:  # root receives block r from rank r, itself included
            base = outs[1].data_ptr()
            assert recvs == [(base + 40 * r, r, 10, 7, 0) for r in range(3)]
        else:
            assert recvs == []
    np.testing.assert_array_equal(got[1], np.stack(inputs))
    for rank in (0, 2):
        np.testing.assert_array_equal(got[rank], np.zeros((3, 2, 5), np.float32))
    assert sorted(driver.memsets) == sorted((outs[r].data_ptr(), 0, 120) for r in (0, 2))


def test_scatter_from_rank_sends_block_r_to_rank_r(fake):
    driver, _, engines, _ = setup(3)
    inputs = ranks_inputs(3, (3, 2, 2), "float32", seed=8)
    got, ins, outs, calls = run_all(fake, engines, "scatter_from_rank", inputs, (0,))
    for rank, group in enumerate(c.comm for c in calls):
        sends = [(g.send, g.root, g.count) for g in group if g.fn == "send"]
        recvs = [(g.recv, g.root, g.count) for g in group if g.fn == "recv"]
        assert recvs == [(outs[rank].data_ptr(), 0, 4)]
        want = [(ins[0].data_ptr() + 16 * r, r, 4) for r in range(3)] if rank == 0 else []
        assert sends == want
        np.testing.assert_array_equal(got[rank], inputs[0][rank])
    assert driver.memsets == []


def test_one_rank_results_match_the_reference(fake):
    """World 1: every collective equals its primitive's reference (a group of one rank)."""
    _, _, engines, _ = setup(1)
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    for name, attrs in [
        ("all_reduce", ("sum",)),
        ("broadcast", (0,)),
        ("all_gather", ()),
        ("gather_to_rank", (0,)),
        ("reduce_scatter", ("avg",)),
        ("scatter_from_rank", (0,)),
    ]:
        got, _, _, _ = run_all(fake, engines, name, [x], attrs)
        want = get(name).ref(x, 0, 1, 1, *attrs)
        assert got[0].shape == want.shape, name
        np.testing.assert_array_equal(got[0], want, err_msg=name)


def test_empty_tensors_call_nothing(fake):
    _, _, engines, _ = setup(2)
    _, _, outs, calls = run_all(fake, engines, "all_gather", [np.zeros((0, 3), np.float32)] * 2, ())
    assert calls == [] and [o.shape for o in outs] == [(2, 0, 3)] * 2


def test_the_runtime_runs_a_pending_cuda_collective_through_the_engine(fake, monkeypatch):
    _, _, engines, _ = setup(1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    node, buf = collective("all_reduce", x, 0, (1, "sum"))
    monkeypatch.setitem(collectives.ENGINES, 0, engines[0])
    lt.runtime.pending_collectives.append(node)
    lt.runtime.materialize_nodes([node], cause="test")  # any cut runs the pending collective
    assert lt.runtime.pending_collectives == [] and node.op.name == "buffer"
    assert isinstance(node.buffer, DeviceBuffer) and node.buffer.data_ptr() != buf.data_ptr()
    assert [c.fn for c in fake.calls] == ["all_reduce"]
    fake.flush(1)
    np.testing.assert_array_equal(node.buffer.to_host(), x)
    assert lt.metrics.counters()["collective_bytes"] == 24


# -- errors ----------------------------------------------------------------------------------------
def test_errors_name_the_collective(fake):
    _, _, engines, _ = setup(1)
    node, buf = collective("all_reduce", np.ones(3, np.float32), 0, (1, "sum"))
    with pytest.raises(
        RuntimeError, match=r"all_reduce #1 on group 0: .* on cuda:0, its input is on the host"
    ):
        engines[0].run(node, np.ones(3, np.float32))
    bad, _ = collective("all_reduce", np.ones(3, np.float32), 0, (2, "sum"))
    with pytest.raises(RuntimeError, match="recorded for 2 ranks; this NCCL communicator has 1"):
        engines[0].run(bad, buf)

    def fails(*args):
        raise NCCLError("UnhandledCudaError (1): unhandled cuda error")

    fake.all_reduce = fails
    with pytest.raises(RuntimeError, match="all_reduce #1 on group 0: NCCL failed: Unhandled"):
        engines[0].run(node, buf)
    del fake.all_reduce
    fake.async_error = 6
    with pytest.raises(RuntimeError, match="all_reduce #1 on group 0: NCCL failed: error 6"):
        engines[0].run(node, buf)
    fake.async_error = 0
    engines[0].close()
    with pytest.raises(RuntimeError, match="communicator of this group was destroyed"):
        engines[0].run(node, buf)


def test_a_failed_send_still_ends_the_group(fake):
    _, _, engines, _ = setup(1)
    node, buf = collective("gather_to_rank", np.ones(3, np.float32), 0, (1, 0))

    def fails(*args):
        raise NCCLError("InvalidArgument (4)")

    fake.send = fails
    with pytest.raises(RuntimeError, match="gather_to_rank #1 on group 0: NCCL failed"):
        engines[0].run(node, buf)
    assert fake._grouped is None and fake.calls[-1].fn == "group"


USED = [
    "get_version",
    "get_unique_id",
    "comm_init_rank",
    "comm_finalize",
    "comm_destroy",
    "comm_abort",
    "comm_get_async_error",
    "get_error_string",
    "all_reduce",
    "broadcast",
    "all_gather",
    "reduce_scatter",
    "send",
    "recv",
    "group_start",
    "group_end",
]


def test_the_fake_has_the_real_nccl4py_signatures_and_codes():
    """Where nccl4py is installed: each function the engine calls takes the fake's
    parameters in the fake's order (nccl4py's docstrings carry the Cython signature), and the
    enums number data types and reduce ops as the fake does."""
    import inspect

    real = pytest.importorskip("nccl.bindings.nccl")
    for name in USED:
        head = getattr(real, name).__doc__.splitlines()[0]  # "all_reduce(intptr_t sendbuff, ...)"
        inside = head[head.index("(") + 1 : head.index(")")]
        params = [p.split()[-1] for p in inside.split(",") if p.strip()]
        fake_params = list(inspect.signature(getattr(FakeNccl, name)).parameters)[1:]
        assert params == fake_params, (name, head)
    for fake_enum, real_enum in ((DataType, real.DataType), (RedOp, real.RedOp)):
        for member in fake_enum:
            assert int(getattr(real_enum, member.name)) == member.value, member
    assert issubclass(real.NCCLError, Exception)
    assert bytes(real.UniqueId.from_buffer(b"\x01" * 128)) == b"\x01" * 128


# -- the driver calls the engine adds (against a stub cuda.bindings.driver) -----------------------
def test_driver_memset_and_device_uuid_call_the_bindings(monkeypatch):
    calls = []
    uuid = types.SimpleNamespace(bytes=b"\x07" * 16)

    def record(name, *result):
        def fn(*args):
            calls.append((name, args))
            return (0, *result)

        return fn

    stub = types.SimpleNamespace(
        CUdeviceptr=int,
        cuMemsetD8Async=record("cuMemsetD8Async"),
        cuDeviceGet=record("cuDeviceGet", 5),
        cuDeviceGetUuid_v2=record("cuDeviceGetUuid_v2", uuid),
        cuDeviceGetUuid=record("cuDeviceGetUuid", None),
    )
    monkeypatch.setattr(cuda_driver, "_bindings", stub)
    cuda_driver.memset_async(0x1000, 0, 64)
    assert cuda_driver.device_uuid(1) == b"\x07" * 16
    assert calls == [
        ("cuMemsetD8Async", (0x1000, 0, 64, 0)),  # on the default stream
        ("cuDeviceGet", (1,)),
        ("cuDeviceGetUuid_v2", (5,)),  # the MIG-aware call where there is one
    ]


# -- a real GPU ------------------------------------------------------------------------------------
class OneRank:
    """An MPI communicator of one rank (world size 1 needs no MPI)."""

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def allgather(self, obj):
        return [obj]

    def bcast(self, obj, root=0):
        return obj


def _real_gpu():
    lt.cuda._use_driver(None)
    if not lt.cuda.is_available():
        if ON_GPU:
            raise RuntimeError(f"LAZYTORCH_TEST_GPU=1 but no GPU: {lt.cuda.unavailable_reason()}")
        pytest.skip(f"no GPU: {lt.cuda.unavailable_reason()}")
    if not ON_GPU:
        pytest.importorskip("nccl.bindings.nccl")  # LAZYTORCH_TEST_GPU=1: a missing one fails


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
def test_all_reduce_at_world_size_1_on_a_real_gpu(dtype):
    _real_gpu()
    engine = NcclEngine.create(OneRank(), "cuda:0")
    try:
        rt = cuda_memory.runtime()
        np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
        x = ranks_inputs(1, (1000, 37), dtype, seed=9)[0].astype(np_dtype)
        for op in ("sum", "max", "min", "product") + (("avg",) if dtype != "bool" else ()):
            node, buf = collective("all_reduce", x, 0, (1, op))
            out = engine.run(node, buf)
            assert out.data_ptr() != buf.data_ptr() and out.shape == x.shape
            np.testing.assert_array_equal(out.to_host(), x)  # one rank: its own values
        for name, attrs in [
            ("broadcast", (0,)),
            ("all_gather", ()),
            ("gather_to_rank", (0,)),
            ("reduce_scatter", ("sum",)),
            ("scatter_from_rank", (0,)),
        ]:
            node, buf = collective(name, x[None], 0, (1, *attrs))
            got = engine.run(node, buf).to_host()
            np.testing.assert_array_equal(
                got, get(name).ref(x[None], 0, 1, 1, *attrs), err_msg=name
            )
        zeros = rt.upload(x)  # the driver's memset on the default stream, in order
        cuda_driver.memset_async(zeros.data_ptr(), 0, zeros.nbytes)
        np.testing.assert_array_equal(zeros.to_host(), np.zeros_like(x))
        assert len(cuda_driver.device_uuid(0)) == 16
    finally:
        engine.close()
