"""The cuda device without a GPU: a fake driver backed by host memory, Triton's interpreter.

`FakeDriver` has the functions of `lazytorch.runtime.cuda_driver` (the driver interface)
and keeps each allocation as a NumPy byte array whose address is the "device pointer".
``lazytorch.cuda._use_driver(fake)`` plugs it in, so everything above the driver runs as on
a GPU: device buffers, the caching allocator, the ``triton-cuda`` backend taking and
returning buffers, copies to and from the host. Only the kernel argument differs: Triton's
interpreter (``TRITON_INTERPRET=1``) needs torch CPU tensors, so the fake's ``kernel_arg``
hands it one over the buffer's memory, where the real driver hands the DeviceBuffer itself.

The real driver layer's CUresult checking is tested against a stub ``cuda.bindings.driver``.
A run on a real GPU is not part of this file.
"""

from __future__ import annotations

import collections
import ctypes
import enum
import gc
import os
import pickle
import re
import subprocess
import sys
import types

os.environ.setdefault("TRITON_INTERPRET", "1")  # must be set before triton is imported

import numpy as np
import pytest

pytest.importorskip("triton")  # only where triton is not installed (it is a test extra)
pytest.importorskip("torch")
import torch

import lazytorch as lt
from lazytorch.runtime import cuda_driver, cuda_memory
from lazytorch.runtime.cuda_memory import DeviceBuffer
from lazytorch.runtime.triton_backend import ERR_SLOTS

F = lt.nn.functional
pytestmark = pytest.mark.usefixtures("quiet_interpreter")


class FakeDriver:
    """`lazytorch.runtime.cuda_driver`'s interface over host memory (one NumPy byte array
    per allocation, its address the device pointer); counts what it was asked to do."""

    def __init__(
        self, devices: int = 1, fail_init: Exception | None = None, limit: int | None = None
    ) -> None:
        self.devices = devices
        self.fail_init = fail_init
        self.limit = limit  # bytes a device has (None: no limit)
        self.memory: dict[int, np.ndarray] = {}  # address -> the allocation's bytes
        self.device_of: dict[int, int] = {}  # address -> the device it was allocated on
        self.current: int | None = None
        self.calls: collections.Counter[str] = collections.Counter()

    def init(self) -> None:
        if self.fail_init is not None:
            raise self.fail_init

    def device_count(self) -> int:
        return self.devices

    def set_device(self, index: int) -> None:
        assert 0 <= index < self.devices
        self.current = index

    def alloc(self, nbytes: int) -> int:
        assert nbytes > 0 and self.current is not None
        used = sum(m.size for a, m in self.memory.items() if self.device_of[a] == self.current)
        if self.limit is not None and used + nbytes > self.limit:
            raise RuntimeError(f"cuMemAlloc({nbytes}): CUDA_ERROR_OUT_OF_MEMORY")
        mem = np.full(nbytes, 0xAB, np.uint8)  # not zeros: unwritten reads show up
        addr = mem.ctypes.data
        self.memory[addr] = mem
        self.device_of[addr] = self.current
        self.calls["alloc"] += 1
        return addr

    def free(self, ptr: int) -> None:
        del self.memory[ptr]
        self.calls["free"] += 1

    def _check(self, ptr: int, nbytes: int) -> None:
        assert ptr in self.memory and nbytes <= self.memory[ptr].size, (ptr, nbytes)

    def copy_htod(self, dst: int, src: int, nbytes: int) -> None:
        self._check(dst, nbytes)
        ctypes.memmove(dst, src, nbytes)

    def copy_dtoh(self, dst: int, src: int, nbytes: int) -> None:
        self._check(src, nbytes)
        ctypes.memmove(dst, src, nbytes)

    def copy_dtod(self, dst: int, src: int, nbytes: int) -> None:
        self._check(dst, nbytes)
        self._check(src, nbytes)
        ctypes.memmove(dst, src, nbytes)

    def synchronize(self) -> None:
        self.calls["synchronize"] += 1

    def kernel_arg(self, buf: DeviceBuffer) -> torch.Tensor:
        """What Triton's interpreter takes as a pointer: a torch CPU tensor over the memory."""
        # a kernel launches in the current context: it must be the buffer's device's
        assert self.current == buf.device == self.device_of[buf.data_ptr()], (self.current, buf)
        mem = self.memory[buf.data_ptr()]
        return torch.from_numpy(mem[: buf.nbytes].view(buf.dtype).reshape(buf.shape))


@pytest.fixture
def fake():
    driver = FakeDriver()
    lt.cuda._use_driver(driver)
    assert lt.cuda.is_available(), lt.cuda.unavailable_reason()
    yield driver
    lt.runtime.forget_live()
    lt.cuda._use_driver(None)  # the real driver again (unavailable on this machine)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- buffers and copies --------------------------------------------------------------------------
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64]
DTYPES += [np.bool_]
SHAPES = [(), (0,), (3, 0), (7,), (2, 3, 4)]


def sample(shape, dtype):
    a = np.random.default_rng(1).integers(-100, 100, size=shape)
    return (a > 0) if dtype is np.bool_ else a.astype(dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_upload_and_download_round_trip(fake, dtype, shape):
    a = sample(shape, dtype)
    for t in (lt.tensor(a, device="cuda"), lt.tensor(a).to("cuda"), lt.tensor(a).cuda()):
        buf = t._node.buffer
        assert isinstance(buf, DeviceBuffer) and t.device == lt.device("cuda", 0)
        assert buf.shape == shape and buf.dtype == np.dtype(dtype) and buf.nbytes == a.nbytes
        back = t.cpu()
        assert back.device == lt.device("cpu") and isinstance(back._node.buffer, np.ndarray)
        for got in (back.numpy(), t.numpy(), np.asarray(t)):
            assert got.dtype == a.dtype and got.shape == a.shape
            np.testing.assert_array_equal(got, a)


def test_device_buffer_is_a_triton_pointer_argument(fake):
    x = lt.tensor(np.array([[True, False, True]]), device="cuda")
    buf = x._node.buffer
    # Triton types a pointer from str(arg.dtype).split(".")[-1]: "bool" is its *u1 (bytes)
    assert str(buf.dtype) == "bool" and buf.nbytes == 3 and buf.data_ptr() in fake.memory
    assert fake.memory[buf.data_ptr()][:3].tolist() == [1, 0, 1]  # one byte each, as torch
    names = {str(lt.tensor(sample((2,), d), device="cuda")._node.buffer.dtype) for d in DTYPES}
    assert names == set("float32 float64 float16 int8 uint8 int16 int32 int64 bool".split())
    view = buf.reshape((3,))
    assert view.data_ptr() == buf.data_ptr() and view.shape == (3,)
    assert lt.tensor(np.zeros(0), device="cuda")._node.buffer.data_ptr() == 0
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(buf)
    assert "bool[1, 3] on cuda:0, 3 bytes" in repr(buf)


def test_reading_values_copies_to_the_host(fake):
    x = lt.tensor([[1.5, -2.0], [3.0, 4.0]], device="cuda")
    y = x * 2
    assert repr(y) == "tensor([[ 3., -4.],\n        [ 6.,  8.]], device='cuda:0')"
    before = lt.metrics.counters()["cuda_d2h_copies"]
    assert y.sum().item() == 13.0
    assert y.tolist() == [[3.0, -4.0], [6.0, 8.0]]
    assert float(y[1, 1]) == 8.0 and bool(y[0, 0] > 0)
    assert y.cpu().numpy().tolist() == [[3.0, -4.0], [6.0, 8.0]]
    assert lt.metrics.counters()["cuda_d2h_copies"] >= before + 4  # one per read at least
    w = lt.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert repr(w * 1) == "tensor([1., 2.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(lt.tensor([1, 2], dtype=lt.int32, device="cuda")).endswith(
        "device='cuda:0', dtype=lazytorch.int32)"
    )


# -- programs on the device ----------------------------------------------------------------------
def both(fn, *arrays):
    """fn on cpu tensors (the default backend) and on cuda tensors, as host arrays."""
    want = fn(*[lt.tensor(a) for a in arrays])
    got = fn(*[lt.tensor(a, device="cuda") for a in arrays])
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        assert g.device == lt.device("cuda", 0) and w.device == lt.device("cpu")
        lt.materialize(g)
        assert isinstance(g._node.buffer, DeviceBuffer)
    return [w.numpy() for w in want], [g.cpu().numpy() for g in got]


CASES = {
    "pointwise": (lambda a: (a * 2 + 1).exp() - a.abs(), (rand(4, 5),)),
    "broadcast": (lambda a, b: a * b - b, (rand(4, 5), rand(5, seed=1))),
    "reduction": (lambda a: (a.sum(1), a.amax(0), a.mean()), (rand(6, 7),)),
    "softmax": (lambda a: F.softmax(a, 1), (rand(3, 9),)),
    "matmul": (lambda a, b: F.relu(a @ b), (rand(5, 7), rand(7, 3, seed=1))),
    "cumsum": (lambda a: a.cumsum(1), (rand(3, 10),)),
    "compare_bool": (lambda a: ((a > 0) & (a < 1), (a > 0).sum()), (rand(4, 6),)),
    "ints": (lambda a: (a.long() * 3) // 2 + a.int(), (rand(4, 6) * 10,)),
    "float64": (lambda a: (a.double() * a.double()).sum(0), (rand(3, 4),)),
    "views": (lambda a: a.t()[1:, ::2].contiguous() + 1, (rand(5, 6),)),
    "gather": (lambda a: a[lt.tensor([2, 0, 1], device=a.device)], (rand(3, 4),)),
    "zero_d": (lambda a: a * a.sum(), (np.array(3.0, np.float32),)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_programs_on_cuda_equal_the_cpu_backend(fake, case):
    fn, arrays = CASES[case]
    want, got = both(fn, *arrays)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert lt.metrics.counters()["kernels_launched"] >= 1  # it ran through Triton


def test_values_stay_on_the_device_between_materializations(fake):
    x = lt.tensor(rand(64, 64), device="cuda")  # 16 KiB
    lt.metrics.reset()
    y = (x * 2 + 1).relu()
    lt.materialize(y)
    y_buf = y._node.buffer
    z = (y * y).sum(1)
    lt.materialize(z)
    assert isinstance(z._node.buffer, DeviceBuffer)
    c = lt.metrics.counters()
    runs = c["materializations"]
    assert runs == 2 and y._node.buffer is y_buf  # y's memory was read in place
    # No value moves. The first program reads its Python scalars (2 and 1) from one small
    # array; neither can report an error, so nothing is read back (no synchronization).
    assert c.get("cuda_d2h_copies", 0) == 0
    assert c["cuda_h2d_copies"] == 1 and c["cuda_h2d_bytes"] <= 16
    # A gather can fail: its program zeroes the error flag and reads it back after the run.
    lt.metrics.reset()
    lt.materialize(y[lt.tensor(np.array([3, 1]), device="cuda")])
    c = lt.metrics.counters()
    assert c["cuda_d2h_copies"] == 1 and c["cuda_d2h_bytes"] == ERR_SLOTS * 8
    np.testing.assert_allclose(
        z.cpu().numpy(), (np.maximum(rand(64, 64) * 2 + 1, 0) ** 2).sum(1), rtol=1e-5
    )


def test_empty_values_run_on_the_interpreter_with_device_buffers(fake):
    x = lt.tensor(rand(2, 3), device="cuda")
    e = lt.zeros(0, 3, device="cuda")
    s = (e * 2).sum(0)  # an empty value: the program goes to the reference interpreter
    c = lt.cat([x, e * 3])
    lt.materialize(s, c)
    for t in (s, c):
        assert isinstance(t._node.buffer, DeviceBuffer)
    assert s.cpu().tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(c.cpu().numpy(), rand(2, 3))
    assert (c + 1).cpu().shape == (2, 3)  # the interpreter's output feeds a Triton program


def test_what_triton_does_not_lower_runs_on_the_cpu_and_comes_back(fake):
    x = rand(3, 5).astype(np.float64)
    t = lt.tensor(x, device="cuda")
    lt.metrics.reset()
    order = t.argsort(1)  # 64-bit keys: not lowered to Triton yet, so the cpp backend runs it
    lt.materialize(order)
    assert isinstance(order._node.buffer, DeviceBuffer)
    assert lt.metrics.counters()["triton_fallbacks"] == 1
    np.testing.assert_array_equal(order.cpu().numpy(), np.argsort(x, axis=1, kind="stable"))


def test_topk_and_kthvalue_of_cuda_tensors_stay_on_triton(fake):
    """torch's CPU selection orders (the cpp backend's) are for CPU tensors: on cuda,
    topk and kthvalue take the stable order a Triton argsort gives, not a trip to the host."""
    x = rand(4, 40)
    t = lt.tensor(x, device="cuda")
    lt.metrics.reset()
    top, kth = t.topk(5, 1), t.kthvalue(3, 1)
    lt.materialize(top.indices, kth.indices)
    assert lt.metrics.counters().get("triton_fallbacks", 0) == 0
    want = np.argsort(-x, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(top.indices.cpu().numpy(), want)
    np.testing.assert_array_equal(kth.indices.cpu().numpy(), np.argsort(x, 1, kind="stable")[:, 2])


def test_compiled_functions_and_modules_run_on_cuda_tensors(fake):
    @lt.compile
    def f(x, w):
        return F.relu(x @ w + 1).sum(1)

    x, w = rand(4, 8), rand(8, 3, seed=1)
    want = np.maximum(x @ w + 1, 0).sum(1)
    xc, wc = lt.tensor(x, device="cuda"), lt.tensor(w, device="cuda")
    for _ in range(2):  # the second call replays the trace
        y = f(xc, wc)
        assert y.device.type == "cuda"
        np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-5)
        assert isinstance(y._node.buffer, DeviceBuffer)
    m = lt.nn.Linear(8, 3).cuda()
    out = lt.compile(m)(xc)
    assert out.device.type == "cuda" and out.cpu().shape == (4, 3)


# -- devices -------------------------------------------------------------------------------------
def test_cuda_without_an_index_is_the_current_device_and_mixes_with_cuda_0(fake):
    a, b = lt.ones(2, device="cuda"), lt.ones(2, device="cuda:0")
    assert a.device == b.device == lt.device("cuda", 0)
    assert (a + b).cpu().tolist() == [2.0, 2.0]
    m = lt.nn.Linear(2, 3).cuda()  # a model moved with .cuda(), data with .to("cuda:0")
    assert m.weight.device == lt.device("cuda", 0)
    assert m(lt.ones(4, 2).to("cuda:0")).cpu().shape == (4, 3)
    with lt.device("cuda"):
        assert lt.zeros(1).device == lt.device("cuda", 0)


def test_mixing_devices_is_an_error_naming_the_op_and_devices(fake):
    a, b = lt.ones(3), lt.ones(3, device="cuda")
    same = "expected all tensors to be on the same device, found"
    with pytest.raises(RuntimeError, match=rf"add\(\): {same} cpu and cuda:0 "):
        a + b
    with pytest.raises(RuntimeError, match=rf"mul\(\): {same} cuda:0 and cpu "):
        b * a
    with pytest.raises(RuntimeError, match=rf"(matmul|mm|dot)\(\): {same}"):
        lt.ones(2, 3, device="cuda") @ lt.ones(3, 2)
    with pytest.raises(RuntimeError, match=rf"cat\(\): {same}"):
        lt.cat([a, b])
    # as in torch, a 0-d tensor may come from the cpu: its value is uploaded
    r = b * lt.tensor(2.5)
    assert r.device == lt.device("cuda", 0) and r.cpu().tolist() == [2.5, 2.5, 2.5]


def test_one_materialization_over_both_devices_runs_each_where_it_lives(fake):
    a = lt.ones(3) * 2
    b = lt.ones(3, device="cuda") * 3
    lt.materialize(a, b)
    assert isinstance(a._node.buffer, np.ndarray) and isinstance(b._node.buffer, DeviceBuffer)
    assert a.tolist() == [2.0] * 3 and b.tolist() == [3.0] * 3
    # a 0-d cuda tensor in a cpu program is read back to the host
    s = lt.tensor(4.0, device="cuda") * 1
    assert (lt.arange(3.0) * s).tolist() == [0.0, 4.0, 8.0]


def test_indexed_devices_keep_their_memory_apart():
    driver = FakeDriver(devices=2)
    lt.cuda._use_driver(driver)
    try:
        assert lt.cuda.device_count() == 2
        x = lt.tensor([0.0, 1.0, 2.0, 3.0], device="cuda:1")
        y = x * 2  # runs inside lazytorch.cuda.device(1): its memory is on device 1
        lt.materialize(y)
        for t in (x, y):
            assert t._node.buffer.device == 1 and driver.device_of[t._node.buffer.data_ptr()] == 1
        z = y.to("cuda:0")
        assert z._node.buffer.device == 0 and z.tolist() == [0.0, 2.0, 4.0, 6.0]
        for _ in range(2):  # reading device 1 leaves its context current; cached blocks
            assert (z * 2).tolist() == [0.0, 4.0, 8.0, 12.0]  # make no driver call: the
            assert (x + 1).tolist() == [1.0, 2.0, 3.0, 4.0]  # launch must switch back
        assert lt.cuda.current_device() == 0
        with lt.cuda.device(1):
            assert lt.cuda.current_device() == 1
            # "cuda" is the current device, as in torch
            assert lt.ones(2, device="cuda").device == lt.device("cuda", 1)
            assert lt.ones(2).to("cuda").device == lt.device("cuda", 1)
        with pytest.raises(RuntimeError, match=r"lazytorch\.cuda has 2 devices"):
            lt.ones(1, device="cuda:2")
    finally:
        lt.runtime.forget_live()
        lt.cuda._use_driver(None)


# -- training ------------------------------------------------------------------------------------
def make_mlp(device):
    lt.manual_seed(0)
    model = lt.nn.Sequential(lt.nn.Linear(6, 16), lt.nn.ReLU(), lt.nn.Linear(16, 3))
    return model.to(device)


def train(device, steps=3):
    model = make_mlp(device)
    opt = lt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = lt.tensor(rand(8, 6), device=device)
    target = lt.tensor(np.arange(8) % 3, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], model


def test_mlp_forward_backward_and_sgd_step_match_the_cpu(fake):
    want_losses, want_params, _ = train("cpu")
    got_losses, got_params, model = train("cuda")
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    for w, g in zip(want_params, got_params):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    for p in model.parameters():
        assert p.device == lt.device("cuda", 0) and isinstance(p._node.buffer, DeviceBuffer)
        assert p.grad.device == lt.device("cuda", 0)


def _compiled_step_run(compiled, steps=6):
    """`steps` AdamW steps of the MLP on cuda, as a compiled step or not, the learning rate
    decaying after the recorded calls: losses and parameters on the host."""
    model = make_mlp("cuda")
    opt = lt.optim.AdamW(model.parameters(), lr=0.05)
    x = lt.tensor(rand(8, 6), device="cuda")
    target = lt.tensor(np.arange(8) % 3, device="cuda")

    def step():
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    run = lt.compile(step) if compiled else step
    losses = []
    for i in range(steps):
        if i >= 3:
            opt.param_groups[0]["lr"] = 0.05 * 0.5 ** (i - 2)
        losses.append(run().detach().cpu().numpy())
    return run, losses, [p.detach().cpu().numpy() for p in model.parameters()]


def test_a_compiled_training_step_replays_its_programs_on_cuda(fake):
    """Whole-step capture on the cuda device: from the fourth call the step replays its
    Triton programs (no recording), bit for bit the uncompiled step, parameters and
    losses staying device buffers."""
    start = lt.metrics.counters()["nodes_recorded"]
    _, want_losses, want_params = _compiled_step_run(False)
    recorded = (lt.metrics.counters()["nodes_recorded"] - start) / 6
    run, got_losses, got_params = _compiled_step_run(True)
    assert run.stats["hits"] == 3, run.explain()  # calls 4-6: after first, trace, confirm
    np.testing.assert_array_equal(np.array(got_losses), np.array(want_losses))
    for g, w in zip(got_params, want_params):
        np.testing.assert_array_equal(g, w)
    before = lt.metrics.counters()["nodes_recorded"]
    run()
    # A replay records no op: its only nodes hold the new values of the 4 parameters, their
    # 2 x 4 Adam moments and the loss (an uncompiled step records hundreds).
    assert lt.metrics.counters()["nodes_recorded"] - before == 3 * 4 + 1
    assert recorded > 100


def test_a_training_step_reuses_the_memory_of_the_step_before(fake):
    model = make_mlp("cuda")
    opt = lt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = lt.tensor(rand(8, 6), device="cuda")
    target = lt.tensor(np.arange(8) % 3, device="cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        return loss.item()

    # The first two steps allocate: what lives across steps (parameters, momentum) is held
    # twice while a step computes the next values from the old; step 2 adds momentum.
    for _ in range(2):
        step()
    held = lt.cuda.memory_allocated()
    for _ in range(2):
        lt.metrics.reset()
        step()
        c = lt.metrics.counters()
        assert c.get("cuda_malloc_calls", 0) == 0 and c["cuda_cache_reuses"] > 0, c
        assert lt.cuda.memory_allocated() == held  # steady state: no growth


def test_buffers_are_freed_when_garbage_collected(fake):
    # a first run compiles; its executable keeps the device copy of its scalar slots (the
    # 2: one 512-byte block) for the next run, so the base is taken after it
    lt.materialize(lt.ones(1000, device="cuda") * 2)
    gc.collect()
    base = lt.cuda.memory_allocated()
    x = lt.ones(1000, device="cuda") * 2
    lt.materialize(x)
    assert lt.cuda.memory_allocated() == base + 4096  # 4000 bytes in a 512-byte size class
    reserved = lt.cuda.memory_reserved()
    del x
    gc.collect()
    assert lt.cuda.memory_allocated() == base
    assert lt.cuda.memory_reserved() == reserved  # kept for reuse
    lt.metrics.reset()
    y = lt.ones(1000, device="cuda") * 3
    lt.materialize(y)
    assert lt.metrics.counters().get("cuda_malloc_calls", 0) == 0
    del y
    gc.collect()
    lt.cuda.empty_cache()
    assert lt.cuda.memory_reserved() == lt.cuda.memory_allocated() == base
    assert fake.calls["free"] > 0 and fake.calls["synchronize"] > 0
    lt.cuda.synchronize()


def test_peak_memory_stats(fake):
    lt.cuda.reset_peak_memory_stats()
    base = lt.cuda.memory_allocated()
    assert lt.cuda.max_memory_allocated() == base
    x = lt.tensor(np.ones(1024, np.float32), device="cuda")  # 4 KiB
    y = lt.tensor(np.ones(2048, np.float32), device="cuda")  # 8 KiB
    assert lt.cuda.max_memory_allocated() == base + 12288
    assert lt.cuda.max_memory_reserved() >= lt.cuda.max_memory_allocated()
    del x, y
    gc.collect()
    assert lt.cuda.memory_allocated() == base
    assert lt.cuda.max_memory_allocated() == base + 12288  # the peak stays
    lt.cuda.reset_peak_memory_stats()
    assert lt.cuda.max_memory_allocated() == base
    assert lt.cuda.max_memory_reserved() == lt.cuda.memory_reserved()
    z = lt.tensor(np.ones(1024, np.float32), device="cuda")  # reuses the cached block
    assert lt.cuda.max_memory_allocated() == base + 4096
    assert lt.cuda.max_memory_allocated("cuda:0") == base + 4096
    del z


def test_peak_memory_stats_without_cuda():
    assert lt.cuda.max_memory_allocated() == 0 and lt.cuda.max_memory_reserved() == 0
    with pytest.raises(RuntimeError, match="reset_peak_memory_stats"):
        lt.cuda.reset_peak_memory_stats()


def test_out_of_memory_frees_the_cache_and_tries_again():
    driver = FakeDriver(limit=8192)
    lt.cuda._use_driver(driver)
    try:
        x = lt.tensor(np.ones(1024, np.float32), device="cuda")  # 4 KiB
        del x
        gc.collect()
        assert lt.cuda.memory_reserved() == 4096 and lt.cuda.memory_allocated() == 0
        # 5 KiB: fits only once the cached 4 KiB block is given back
        y = lt.tensor(np.ones(1280, np.float32), device="cuda")
        assert lt.cuda.memory_reserved() == lt.cuda.memory_allocated() == 5120
        assert driver.calls["free"] == 1 and y.sum().item() == 1280.0
        with pytest.raises(RuntimeError, match=r"cuMemAlloc\(4096\): CUDA_ERROR_OUT_OF_MEMORY"):
            lt.tensor(np.ones(1024, np.float32), device="cuda")  # the cache cannot make room
    finally:
        lt.runtime.forget_live()
        lt.cuda._use_driver(None)


def test_save_and_pickle_a_cuda_tensor(fake, tmp_path):
    t = lt.tensor(rand(3, 4), device="cuda") + 1
    path = tmp_path / "t.pt"
    lt.save({"t": t}, path)
    loaded = lt.load(path)["t"]  # where it was saved, as torch.load puts it
    assert loaded.device == lt.device("cuda", 0)
    np.testing.assert_array_equal(loaded.cpu().numpy(), rand(3, 4) + 1)
    loaded = lt.load(path, map_location="cpu")["t"]
    assert loaded.device == lt.device("cpu")
    np.testing.assert_array_equal(loaded.numpy(), rand(3, 4) + 1)
    back = pickle.loads(pickle.dumps(t))
    assert back.device == lt.device("cuda", 0) and isinstance(back._node.buffer, DeviceBuffer)
    np.testing.assert_array_equal(back.cpu().numpy(), rand(3, 4) + 1)


# -- availability --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "failure, reason",
    [
        (ImportError("No module named 'cuda'"), r"cuda-bindings is not installed: pip install"),
        (RuntimeError("cuInit: CUDA_ERROR_NO_DEVICE"), r"no CUDA device \(cuInit: CUDA_"),
        (RuntimeError("libcuda could not be loaded: x"), r"no NVIDIA driver \(libcuda could"),
        (RuntimeError("cuInit: CUDA_ERROR_UNKNOWN"), r"no NVIDIA driver \(cuInit: CUDA_ERROR_"),
    ],
)
def test_a_driver_that_cannot_start_makes_cuda_unavailable(failure, reason):
    lt.cuda._use_driver(FakeDriver(fail_init=failure))
    try:
        assert not lt.cuda.is_available() and lt.cuda.device_count() == 0
        assert lt.cuda.memory_allocated() == 0
        assert re.match(reason, lt.cuda.unavailable_reason())
        with pytest.raises(RuntimeError, match=r"lazytorch\.cuda\.is_available\(\) is False \("):
            lt.ones(2, device="cuda")
        with pytest.raises(RuntimeError, match="CUDA is not available: " + reason):
            lt.cuda.synchronize()
    finally:
        lt.cuda._use_driver(None)


def test_no_device_or_no_triton_makes_cuda_unavailable(monkeypatch):
    lt.cuda._use_driver(FakeDriver(devices=0))
    try:
        assert lt.cuda.unavailable_reason() == "no CUDA device (cuDeviceGetCount: 0)"
        monkeypatch.setattr(cuda_memory, "_triton_installed", lambda: False)
        lt.cuda._use_driver(FakeDriver())
        assert lt.cuda.unavailable_reason().startswith("triton is not installed")
    finally:
        lt.cuda._use_driver(None)


def test_without_cuda_bindings_the_reason_says_how_to_install(monkeypatch):
    monkeypatch.setattr(cuda_driver, "_bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # import cuda.bindings fails
    lt.cuda._use_driver(None)
    try:
        assert not lt.cuda.is_available()
        assert lt.cuda.unavailable_reason() == (
            "cuda-bindings is not installed: pip install 'lazytorch[cuda]'"
        )
    finally:
        monkeypatch.undo()
        lt.cuda._use_driver(None)


def test_the_cuda_layer_never_imports_torch():
    code = (
        "import sys, lazytorch\n"
        "from lazytorch.runtime import cuda_driver, cuda_memory\n"
        "lazytorch.cuda.is_available(); lazytorch.cuda.memory_allocated()\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- the real driver layer's CUresult checking, against a stub cuda.bindings.driver --------------
class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NO_DEVICE = 100


class CUdeviceptr(int):
    pass


def stub_bindings(**overrides):
    ok = CUresult.CUDA_SUCCESS
    calls = []

    def record(name, *result):
        def fn(*args):
            calls.append((name, args))
            return result

        return fn

    drv = types.SimpleNamespace(
        CUresult=CUresult,
        CUdeviceptr=CUdeviceptr,
        cuGetErrorName=lambda err: (ok, CUresult(err).name.encode()),
        cuInit=record("cuInit", ok),
        cuDeviceGetCount=record("cuDeviceGetCount", ok, 2),
        cuDeviceGet=record("cuDeviceGet", ok, 7),
        cuDevicePrimaryCtxRetain=record("cuDevicePrimaryCtxRetain", ok, "ctx"),
        cuCtxSetCurrent=record("cuCtxSetCurrent", ok),
        cuMemAlloc=record("cuMemAlloc", ok, CUdeviceptr(0x1000)),
        cuMemFree=record("cuMemFree", ok),
        cuMemcpyHtoD=record("cuMemcpyHtoD", ok),
        cuMemcpyDtoH=record("cuMemcpyDtoH", ok),
        cuMemcpyDtoD=record("cuMemcpyDtoD", ok),
        cuCtxSynchronize=record("cuCtxSynchronize", ok),
    )
    for name, fn in overrides.items():
        setattr(drv, name, fn)
    return drv, calls


@pytest.fixture
def stub(monkeypatch):
    def install(**overrides):
        drv, calls = stub_bindings(**overrides)
        monkeypatch.setattr(cuda_driver, "_bindings", drv)
        monkeypatch.setattr(cuda_driver, "_contexts", {})
        return calls

    return install


def test_driver_calls_return_the_values_of_successful_results(stub):
    calls = stub()
    cuda_driver.init()
    assert cuda_driver.device_count() == 2
    cuda_driver.set_device(1)
    cuda_driver.set_device(1)  # the primary context is retained once
    assert cuda_driver.alloc(512) == 0x1000
    cuda_driver.copy_htod(0x1000, 0x2000, 512)
    cuda_driver.copy_dtoh(0x2000, 0x1000, 512)
    cuda_driver.copy_dtod(0x1000, 0x1200, 512)
    cuda_driver.free(0x1000)
    cuda_driver.synchronize()
    names = [name for name, _ in calls]
    assert names.count("cuDevicePrimaryCtxRetain") == 1 and names.count("cuCtxSetCurrent") == 2
    htod = dict(calls)["cuMemcpyHtoD"]
    assert htod == (0x1000, 0x2000, 512) and isinstance(htod[0], CUdeviceptr)
    assert dict(calls)["cuMemcpyDtoH"] == (0x2000, 0x1000, 512)


@pytest.mark.parametrize(
    "call, binding, run",
    [
        ("cuMemAlloc(1024)", "cuMemAlloc", lambda: cuda_driver.alloc(1024)),
        ("cuMemcpyHtoD(8)", "cuMemcpyHtoD", lambda: cuda_driver.copy_htod(1, 2, 8)),
        ("cuMemcpyDtoH(8)", "cuMemcpyDtoH", lambda: cuda_driver.copy_dtoh(1, 2, 8)),
        ("cuMemFree", "cuMemFree", lambda: cuda_driver.free(1)),
        ("cuCtxSynchronize", "cuCtxSynchronize", cuda_driver.synchronize),
        ("cuInit", "cuInit", cuda_driver.init),
        ("cuDeviceGet(3)", "cuDeviceGet", lambda: cuda_driver.set_device(3)),
    ],
)
def test_a_failed_call_raises_naming_the_call_and_the_error(stub, call, binding, run):
    stub(**{binding: lambda *args: (CUresult.CUDA_ERROR_OUT_OF_MEMORY,)})
    with pytest.raises(RuntimeError, match=f"^{re.escape(call)}: CUDA_ERROR_OUT_OF_MEMORY$"):
        run()


def test_error_names_fall_back_to_the_enum_and_a_missing_library_is_named(stub):
    stub(
        cuGetErrorName=lambda err: (CUresult.CUDA_ERROR_INVALID_VALUE, None),
        cuInit=lambda flags: (CUresult.CUDA_ERROR_NO_DEVICE,),
    )
    with pytest.raises(RuntimeError, match=r"^cuInit: CUDA_ERROR_NO_DEVICE$"):
        cuda_driver.init()

    def missing(flags):
        raise OSError("libcuda.so.1: cannot open shared object file")

    stub(cuInit=missing)
    with pytest.raises(RuntimeError, match=r"libcuda could not be loaded: libcuda\.so\.1"):
        cuda_driver.init()


def test_the_runtime_over_the_stub_driver_reports_the_failing_call(stub):
    """The real driver module under the memory layer: an out-of-memory allocation that
    survives emptying the cache reaches the user as the driver's error."""
    stub(cuMemAlloc=lambda n: (CUresult.CUDA_ERROR_OUT_OF_MEMORY, None))
    rt = cuda_memory.CudaRuntime(cuda_driver)
    assert rt.unavailable_reason() is None or "triton" in rt.unavailable_reason()
    with pytest.raises(RuntimeError, match=r"cuMemAlloc\(512\): CUDA_ERROR_OUT_OF_MEMORY"):
        rt.empty((4,), np.float32, 0)


def test_scalar_slots_upload_once_while_their_values_repeat(fake):
    x = lt.tensor(rand(64), device="cuda")
    lt.materialize(x * 2.5 + 1)  # compiles; uploads the slots
    lt.metrics.reset()
    for _ in range(3):
        lt.materialize(x * 2.5 + 1)
    assert lt.metrics.counters().get("cuda_h2d_copies", 0) == 0
    y = x * 3.5 + 1  # the same program, other values: one upload of the new slots
    lt.metrics.reset()
    np.testing.assert_allclose(y.cpu().numpy(), rand(64) * 3.5 + 1, rtol=1e-6)
    assert lt.metrics.counters()["cuda_h2d_copies"] == 1


def test_the_error_slots_are_zeroed_again_after_a_reported_error(fake):
    a = lt.tensor(np.arange(6), device="cuda")

    def quotient(d):
        return (a // lt.tensor(np.array(d), device="cuda")).cpu().numpy()

    np.testing.assert_array_equal(quotient([1, 2, 3, 1, 2, 3]), np.arange(6) // [1, 2, 3, 1, 2, 3])
    with pytest.raises(RuntimeError, match="division by zero"):
        quotient([1, 2, 0, 1, 2, 3])
    # the error array was written: a run reusing it would report the old error
    np.testing.assert_array_equal(quotient([3, 2, 1, 3, 2, 1]), np.arange(6) // [3, 2, 1, 3, 2, 1])


@pytest.mark.parametrize("changing", [True, False])
def test_a_compiled_step_never_replays_a_stale_device_constant(fake, changing):
    """A tensor the step makes on the device from host data is a constant of the plan,
    compared by its contents: data that changes every call is never baked in (the
    capture stops), data that stays the same replays."""
    model = make_mlp("cuda")
    opt = lt.optim.SGD(model.parameters(), lr=0.1)
    feed = {"x": rand(8, 6)}

    def step():
        x = lt.tensor(feed["x"], device="cuda")  # uploaded inside the step
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    run = lt.compile(step)
    for i in range(6):
        if changing:
            feed["x"] = rand(8, 6, seed=i + 1)
        run()
    params = [p.detach().cpu().numpy() for p in model.parameters()]
    # the same six steps uncompiled, on a fresh model with the same initial weights
    model2 = make_mlp("cuda")
    opt2 = lt.optim.SGD(model2.parameters(), lr=0.1)
    x2 = rand(8, 6)
    for i in range(6):
        if changing:
            x2 = rand(8, 6, seed=i + 1)
        loss = model2(lt.tensor(x2, device="cuda")).square().mean()
        loss.backward()
        opt2.step()
        opt2.zero_grad()
    for g, w in zip(params, [p.detach().cpu().numpy() for p in model2.parameters()]):
        np.testing.assert_array_equal(g, w)
    assert (run.stats["hits"] == 0) == changing, run.explain()
