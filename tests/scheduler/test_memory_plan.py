"""The memory plan never overwrites a value that is still to be read.

Two wrong answers motivated the checker (`lazytorch.scheduler.plan_check`): a two-pass
reduction kernel took over, in its first pass, the block of a temporary its second pass
reads again. It showed as wrong gradients of a five-line program and as a conv/BN training
step whose weights drifted from torch's. Both are regression tests here; so is the proof
that the checker rejects the plans the old in-place rule made, and that it rejects every
hand-made overlap of two live temporaries.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.ir.program import Program, canonicalize, capture
from lazytorch.scheduler import memory
from lazytorch.scheduler import schedule as make_schedule
from lazytorch.scheduler.kernel import Extern, Kernel
from lazytorch.scheduler.plan_check import PlanAliasError, check_plan


def _old_inplace_ok(step, dead, new) -> bool:
    """The in-place rule before the fix: it let a store of pass 1 overwrite a buffer that
    pass 2 reads again (it compared the passes of reductions, not of the reads)."""
    if not isinstance(step, Kernel) or step.kind not in ("pointwise", "reduction"):
        return False
    if dead.nbytes != new.nbytes or dead.shape != new.shape:
        return False
    stores = [s for s in step.stores if s.buffer == new.id]
    loads = [v for v in step.values if v.op == "load" and v.attr[0] == dead.id]
    if len(stores) != 1 or not loads:
        return False
    st = stores[0]
    if step.inner and not st.inner:
        return False
    return all(v.attr[1] == st.index for v in loads) and all(
        r.pass_no >= st.pass_no for r in step.reductions
    )


def _sched(*tensors, **kw):
    cap = capture([t._node for t in tensors if t._node.buffer is None])
    return make_schedule(canonicalize(Program.from_capture(cap)), **kw)


# -- the five-line autograd program -----------------------------------------------------------


def _five_lines(lib, a):
    x = lib.from_numpy(a.copy()).requires_grad_()
    v1 = (x * x)[1::3]
    (v1.abs().sum() + lib.logaddexp(x[-1], x).sum() + v1.sum()).backward()
    return x


A = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


@pytest.mark.backends("cpp", "interpreter")
def test_five_line_gradient_matches_torch(backend, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_BACKEND", backend)
    x = _five_lines(lt, A)
    want = _five_lines(torch, A).grad.numpy()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def test_five_line_plan_rejected_under_old_rule(monkeypatch):
    x = _five_lines(lt, A)
    check_plan(_sched(x.grad))  # today's plan is safe
    monkeypatch.setattr(memory, "_inplace_ok", _old_inplace_ok)
    # (the buffer numbers depend on the program's inputs: x[-1] of the computed x is its
    # own input since it is read when indexed) the buffer overwritten is the one pass 2 reads
    overwrote = r"writes b\d+:.*? over (b\d+):.*pass 2 reads \1:.* after pass 1 overwrote it"
    with pytest.raises(PlanAliasError, match=overwrote):
        check_plan(_sched(x.grad))


def test_verify_mode_checks_every_plan(monkeypatch):
    """Under LAZYTORCH_VERIFY=1 (the test suite's default) a bad plan never runs."""
    monkeypatch.setenv("LAZYTORCH_VERIFY", "1")
    monkeypatch.setenv("LAZYTORCH_BACKEND", "cpp")
    monkeypatch.setenv("LAZYTORCH_DISK_CACHE", "0")  # an earlier test compiled this program
    monkeypatch.setattr(memory, "_inplace_ok", _old_inplace_ok)
    x = _five_lines(lt, A)
    with pytest.raises(PlanAliasError):
        x.grad.numpy()


# -- the conv/BN training step ------------------------------------------------------------------


def _conv_step(lib, momentum: float, steps: int):
    """conv-BN-ReLU, a residual conv-BN, mean, linear, cross_entropy; SGD steps with no
    gradient read before the update (the fused forward+backward+update program)."""
    rng = np.random.default_rng(0)
    g = np.random.default_rng(1)
    conv = lib.nn.Conv2d(3, 4, 3, padding=1)
    bn = lib.nn.BatchNorm2d(4)
    conv2 = lib.nn.Conv2d(4, 4, 3, padding=1, bias=False)
    bn2 = lib.nn.BatchNorm2d(4)
    lin = lib.nn.Linear(4, 5)
    mods = [conv, bn, conv2, bn2, lin]
    with lib.no_grad():
        for p in (conv.weight, conv2.weight, lin.weight):
            p.copy_(lib.from_numpy(g.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))
        conv.bias.zero_()
        lin.bias.zero_()
    params = [p for m in mods for p in m.parameters()]
    opt = lib.optim.SGD(params, lr=0.05, momentum=momentum)
    for _ in range(steps):
        x = lib.from_numpy(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
        y = lib.from_numpy(rng.integers(0, 5, 4))
        h = lib.relu(bn(conv(x)))
        h = lib.relu(bn2(conv2(h)) + h)
        loss = lib.nn.functional.cross_entropy(lin(h.mean((2, 3))), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy().copy() for p in params], loss


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_conv_bn_training_step_matches_torch(momentum):
    got, loss = _conv_step(lt, momentum, 2)
    want, want_loss = _conv_step(torch, momentum, 2)
    for g, w in zip(got, want):
        # the drift this guards against was 3e-3 on weights of 0.1
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-6)
    assert abs(loss.item() - want_loss.item()) < 1e-5


# -- the checker itself -------------------------------------------------------------------------


def _programs():
    """Programs whose plans have temporaries, in-place reuse, multi-pass kernels, externs."""
    rng = np.random.default_rng(3)
    x = lt.from_numpy(rng.standard_normal((6, 5)).astype(np.float32))
    w = lt.from_numpy(rng.standard_normal((5, 5)).astype(np.float32))
    yield "softmax-chain", ((x.exp() * 2).softmax(1) + 1).log_softmax(1).sum(0)
    yield "matmul-chain", ((x @ w).relu() @ w).tanh() @ w
    yield "layer-norm", lt.nn.functional.layer_norm((x * 3).exp(), (5,)).sum(1)
    xg = lt.from_numpy(rng.standard_normal((6, 5)).astype(np.float32)).requires_grad_()
    loss = (lt.nn.functional.layer_norm(xg @ w, (5,)).relu().softmax(1) * xg).sum()
    loss.backward()
    yield "backward", xg.grad
    yield "five-lines", _five_lines(lt, A).grad
    # a cat of pieces of one shape is one kernel storing each piece (scheduler.concat)
    img = lt.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    filt = lt.from_numpy(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    yield "conv-taps", lt.nn.functional.conv2d(img.exp(), filt, padding=1).relu().sum(1)
    parts = [(x * i).exp().sum(1, keepdim=True) for i in range(12)]
    yield "cat-of-reductions", (lt.cat(parts, 1) * 2).softmax(1)
    # bf16 autocast: the linear's output stored narrow, its float32 product never kept
    wb = lt.from_numpy(rng.standard_normal((8, 5)).astype(np.float32)).requires_grad_()
    bb = lt.from_numpy(rng.standard_normal(8).astype(np.float32))
    with lt.autocast("cpu", dtype=lt.bfloat16):
        hb = lt.nn.functional.gelu(lt.nn.functional.linear(x, wb, bb)) @ wb
        lb = hb.float().square().sum()
    lb.backward()
    yield "bf16-gelu-backward", wb.grad


@pytest.mark.parametrize(
    "name,value", list(_programs()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_plans_of_real_programs_pass(name, value):
    check_plan(_sched(value))
    check_plan(_sched(value, fuse_epilogues=True))


def _live(sched):
    first, last = {}, {}
    for i, s in enumerate(sched.steps):
        for b in (*s.writes, *s.reads):
            if sched.buffers[b].kind == "temp":
                last[b] = i
                if b in s.writes:
                    first.setdefault(b, i)
    return first, last


def test_every_overlap_of_live_temporaries_is_rejected():
    """Move each temporary onto each other one that is alive when it is written: the
    checker must reject every such plan (and there must be such pairs to try)."""
    tried = 0
    for (_, value), epi in itertools.product(_programs(), (False, True)):
        sched = _sched(value, fuse_epilogues=epi)
        first, last = _live(sched)
        for b, fb in first.items():
            for a in first:
                if a == b or not first[a] < fb <= last[a]:
                    continue
                if fb == last[a] and sched.buffers[a].nbytes == sched.buffers[b].nbytes:
                    continue  # possibly a legal element-wise reuse; covered below
                saved = sched.buffers[b].offset, sched.arena_bytes
                sched.buffers[b].offset = sched.buffers[a].offset
                sched.arena_bytes = 1 << 40
                with pytest.raises(PlanAliasError):
                    check_plan(sched)
                sched.buffers[b].offset, sched.arena_bytes = saved
                tried += 1
        check_plan(sched)  # restored: safe again
    assert tried > 0


def test_rejects_out_of_arena_and_missing_offset():
    x = lt.from_numpy(np.ones((4, 4), np.float32))
    sched = _sched((x.exp() @ x).exp().sum())
    temp = next(b for b in sched.buffers if b.kind == "temp")
    temp.offset = sched.arena_bytes
    with pytest.raises(PlanAliasError, match="outside the arena"):
        check_plan(sched)
    temp.offset = None
    with pytest.raises(PlanAliasError, match="no arena offset"):
        check_plan(sched)


def test_rejects_a_write_to_a_program_input():
    x = lt.from_numpy(np.ones((4, 4), np.float32))
    sched = _sched(x.exp() + 1)
    k = sched.steps[0]
    inp = next(b for b in sched.buffers if b.kind == "input")
    k.stores[0].buffer = inp.id
    with pytest.raises(PlanAliasError, match="writes program input"):
        check_plan(sched)


def test_elementwise_reuse_is_accepted():
    """A pointwise chain between GEMMs reuses blocks in place, and the checker accepts it
    (the late re-read it must reject is the five-line program above)."""
    x = lt.from_numpy(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))
    w = lt.from_numpy(np.eye(64, dtype=np.float32))
    # (unfused: as an epilogue the chain would run inside the first GEMM's step)
    sched = _sched(((x @ w).exp() + 1) @ w, fuse_epilogues=False)
    assert any(b.inplace_of is not None for b in sched.buffers), "no in-place reuse planned"
    check_plan(sched)


def test_extern_epilogue_may_not_write_over_its_operands():
    rng = np.random.default_rng(0)
    a = lt.from_numpy(rng.standard_normal((8, 8)).astype(np.float32))
    b = lt.from_numpy(rng.standard_normal((8, 8)).astype(np.float32))
    sched = _sched(((a.exp() @ b) + 1).relu() @ b, fuse_epilogues=True)
    ext = next(s for s in sched.steps if isinstance(s, Extern))
    assert ext.epilogue is not None
    check_plan(sched)
    operand = next(r for r in ext.reads if sched.buffers[r].kind == "temp")
    written = next(w for w in ext.writes if sched.buffers[w].kind == "temp")
    sched.buffers[written].offset = sched.buffers[operand].offset
    with pytest.raises(PlanAliasError, match="extern call"):
        check_plan(sched)


def test_symbolic_plans_are_checked_with_their_slack():
    x = lt.from_numpy(np.ones((7, 5), np.float32))
    sched = _sched((x.exp() @ x.T).exp().sum(), symbolic=True)
    check_plan(sched)
    temps = [b for b in sched.buffers if b.kind == "temp" and b.offset is not None]
    last = max(temps, key=lambda b: b.offset)
    last.offset += 1  # its slack now reaches past the arena's end
    with pytest.raises(PlanAliasError, match="outside the arena"):
        check_plan(sched)
