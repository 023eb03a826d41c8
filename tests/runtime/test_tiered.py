"""Tiered execution (lazytorch.runtime.tiered) and what an implicit cut keeps
(lazytorch.runtime.held_with): a first-seen program runs on the interpreter and compiles in
the background from its second run; an implicit cut computes the live tensors that share
its work."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import lazytorch as lt
from lazytorch import _config
from lazytorch.runtime import executor, tiered


@pytest.fixture
def tiering(monkeypatch, tmp_path):
    monkeypatch.setattr(_config.DEFAULTS, "tiered", True)
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))  # nothing on disk yet
    assert _config.backend_name() == "auto"
    yield
    assert tiered.drain(timeout=120)


def _count(name):
    return lt.metrics.counters().get(name, 0)


def _step(x, w):
    return ((x @ w).tanh() * 3).sum(dim=1)


def test_first_runs_use_the_interpreter_then_the_compiled_program(tiering):
    rng = np.random.default_rng(0)
    x, w = lt.tensor(rng.standard_normal((8, 5))), lt.tensor(rng.standard_normal((5, 4)))
    want = np.tanh(x.numpy() @ w.numpy()).__mul__(3).sum(axis=1)
    got = _step(x, w).numpy()  # 1st sighting: interpreter, no compile started
    assert _count("tier0_runs") == 1 and _count("background_compiles") == 0
    assert _count("programs_built") == 0
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(_step(x, w).numpy(), want, rtol=1e-12)  # 2nd: compile starts
    assert _count("background_compiles") == 1 and _count("tier0_runs") == 2
    assert tiered.drain(timeout=120)
    np.testing.assert_allclose(_step(x, w).numpy(), want, rtol=1e-12)  # 3rd: switched
    assert _count("tier_switches") == 1 and _count("programs_built") == 1
    assert _count("tier0_runs") == 2
    entry = executor._programs.get(next(k for k in executor._programs if k[-1] is not None))
    assert not isinstance(entry, tiered.Tiered)
    np.testing.assert_allclose(_step(x, w).numpy(), want, rtol=1e-12)  # 4th: a memory hit
    assert _count("cache_hits_memory") == 1 and _count("tier0_runs") == 2


def test_a_background_compile_explains_its_recompile_by_what_changed(tiering, caplog):
    # The compiled program of a site that built another before is a recompile; its reason
    # is what differs from that program (not the mode that compiled it).
    caplog.set_level(logging.INFO, logger="lazytorch.recompiles")
    x = lt.arange(6.0)
    for f in (lt.exp, lt.exp, lt.exp, lt.sin, lt.sin, lt.sin):  # the third installs
        assert tiered.drain(timeout=120)
        lt.materialize(f(x) * 2)  # one site: the same line each time
    assert _count("programs_built") == 2
    msgs = [r.getMessage() for r in caplog.records if r.name == "lazytorch.recompiles"]
    assert msgs and not any(m.endswith(": tiered") for m in msgs), msgs
    assert any("is sin, was exp" in m for m in msgs), msgs


def test_a_background_compile_that_falls_back_to_the_interpreter_is_installed(tiering, monkeypatch):
    # the cpp backend hands some programs to the interpreter (symbolic sizes, an op with no
    # rule for an empty operand): the tier switch installs that executable like any other
    from lazytorch.runtime.backends import get_backend

    interpreter = get_backend("interpreter")
    monkeypatch.setattr(
        type(get_backend("cpp")), "compile", lambda self, p, o=None: interpreter.compile(p, o)
    )
    x = lt.arange(6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "could not be compiled in the background"
        for _ in range(2):
            assert (x.exp() + 1).sum().item() == pytest.approx(
                float(np.exp(np.arange(6)).sum() + 6)
            )
        assert tiered.drain(timeout=120)
        (x.exp() + 1).sum().item()
    assert _count("tier_switches") == 1 and _count("programs_built") == 1


def test_a_program_seen_once_is_never_compiled(tiering):
    (lt.arange(7.0) * 2).sum().item()
    assert _count("tier0_runs") == 1
    assert _count("background_compiles") == 0 and tiered.pending_compiles() == 0


def test_a_program_in_the_disk_cache_is_loaded_not_interpreted(tiering):
    x = lt.arange(6.0).reshape(2, 3)
    lt.materialize(x)
    lt.metrics.reset()
    with lt.backend("cpp"):  # an explicit backend compiles at once (and stores on disk)
        (x.exp() + 1).sum().item()
    assert _count("tier0_runs") == 0 and _count("programs_built") == 1
    lt.runtime.clear_cache()  # as a new process: only the disk cache remains
    (x.exp() + 1).sum().item()
    assert _count("tier0_runs") == 0 and _count("cache_hits_disk") == 1


def test_deterministic_mode_compiles_at_once(tiering):
    with lt.deterministic_algorithms(True):
        (lt.arange(5.0) + 1).sum().item()
    assert _count("tier0_runs") == 0 and _count("programs_built") == 1


def test_a_failed_background_compile_stays_on_the_interpreter_and_warns_once(tiering, monkeypatch):
    def broken(backend, program, options):
        raise RuntimeError("no compiler today")

    monkeypatch.setattr(executor, "_compiled", broken)
    x = lt.arange(4.0)
    lt.materialize(x)
    lt.metrics.reset()
    values = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            values.append((x * x).sum().item())
        assert tiered.drain(timeout=60)
        for _ in range(3):
            values.append((x * x).sum().item())
    assert values == [14.0] * 5
    msgs = [str(w.message) for w in caught if "background" in str(w.message)]
    assert len(msgs) == 1 and "no compiler today" in msgs[0]
    assert _count("tier0_runs") == 5 and _count("programs_built") == 0


def test_stopping_compilers_kills_running_ones(monkeypatch):
    from lazytorch.codegen import compiler

    monkeypatch.setattr(compiler, "_stopped", False)
    proc = compiler._spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        compiler.stop_running_compilers()
        res = compiler._wait(proc)
        assert res.returncode != 0 and not compiler._running
        with pytest.raises(compiler.ToolchainError, match="exiting"):
            compiler._spawn([sys.executable, "-c", "pass"])
    finally:
        compiler._stopped = False
        proc.kill()


def test_exit_does_not_wait_for_a_background_compile(tmp_path):
    # A program big enough to take a while to compile is cut twice (so its compile starts),
    # then the script ends: it must exit at once, leaving no compiler process behind.
    # The reporting hook is registered before lazytorch's own (atexit runs last-in first-out),
    # so it sees the compiler processes after lazytorch stopped them; the parent then checks
    # that none of them is still alive.
    code = textwrap.dedent(
        """
        import atexit, os
        def report():
            from lazytorch.codegen import compiler
            print("stopped:", compiler._stopped, flush=True)
            print("pids:", *[p.pid for p in list(compiler._running)], flush=True)
        atexit.register(report)
        import lazytorch as lt
        x = lt.randn(64, 64)
        lt.materialize(x)
        open(os.environ["SLOW_CXX_MARK"], "w").close()  # compiles from here on are slow
        for _ in range(2):
            y = x
            for i in range(150):
                y = (y * 1.0001 + i).tanh() if i % 2 else y.exp().log1p()
            y.sum().item()
        assert lt.metrics.counters()["background_compiles"] == 1
        import time
        from lazytorch.codegen import compiler
        end = time.monotonic() + 90
        pids = os.environ["SLOW_CXX_PIDS"]
        while time.monotonic() < end:  # the compiler has started, and its child
            if compiler._running and os.path.exists(pids) and open(pids).read().strip():
                break
            time.sleep(0.001)
        print("started:", len(compiler._running), flush=True)
        """
    )
    env = {
        **os.environ,
        "LAZYTORCH_TIERED": "1",
        "LAZYTORCH_CACHE_DIR": str(tmp_path / "cache"),
        "LAZYTORCH_COMPILE_WORKER": "0",  # compiled in this process (the child: below)
        **_slow_compiler(tmp_path),
    }
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert "stopped: True" in r.stdout, r.stdout
    assert "started: 1" in r.stdout, r.stdout  # else the test would prove nothing
    pids = [int(p) for p in r.stdout.split("pids:")[1].split()]
    # The driver and what it runs (cc1plus, as; here the wrapper's sleep) must all be gone,
    # not the driver alone.
    pids += [int(p) for p in open(env["SLOW_CXX_PIDS"]).read().split()]
    alive = _outliving(pids)
    assert not alive, f"compiler processes outlived the script: {alive}"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_ctrl_c_during_a_compile_stops_the_compiler_and_what_it_runs(tmp_path):
    # A compile in the foreground (no tiering), interrupted as Ctrl-C does: the script
    # stops with KeyboardInterrupt at once, and no compiler process, nor a child of one
    # (cc1plus; here the wrapper's sleep), is left running.
    code = textwrap.dedent(
        """
        import os
        import lazytorch as lt
        x = lt.randn(64, 64)
        lt.materialize(x)
        open(os.environ["SLOW_CXX_MARK"], "w").close()  # compiles from here on are slow
        print((x.exp() * 2).sum().item())
        """
    )
    env = {
        **os.environ,
        "LAZYTORCH_TIERED": "0",
        "LAZYTORCH_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONFAULTHANDLER": "1",  # a script still running at the timeout shows its stacks
        **_slow_compiler(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Python makes SIGINT a KeyboardInterrupt only where it is not ignored, and a
        # background job (`.ci/run &`, nohup) starts with it ignored: the script then sat in
        # its compile through the Ctrl-C (its stacks, dumped at the timeout, showed it)
        preexec_fn=_default_sigint,
    )
    pids_file = Path(env["SLOW_CXX_PIDS"])
    end = time.monotonic() + 60
    while time.monotonic() < end and not (pids_file.exists() and pids_file.read_text()):
        time.sleep(0.01)
    assert pids_file.exists(), "no compile started"  # else the test would prove nothing
    # The compile is under way; let the script's Popen return (an interrupt inside Popen
    # itself, microseconds after the exec, leaves no process object to stop: a moment no
    # Ctrl-C by hand hits, which a loaded machine made this test hit once in ~200 runs).
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)  # the sleep alone would take 60 s
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler dumps every thread's stack
        try:
            err = proc.communicate(timeout=10)[1]
        finally:
            proc.kill()
        raise AssertionError(
            f"the script did not stop within 20 s of Ctrl-C:\n{err[-6000:]}"
        ) from None
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in err, err
    alive = _outliving([int(p) for p in pids_file.read_text().split()])
    assert not alive, f"a compiler's child outlived the Ctrl-C: {err}"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _slow_compiler(tmp_path) -> dict[str, str]:
    """Environment for a script whose compiles become slow once it has built its runtime.

    The compiler is a wrapper that waits a minute before compiling once the script has
    created the file ``SLOW_CXX_MARK`` names, so a test that waits for a compile to be
    running sees it however fast the real compiler is (a warm ccache) and however late
    the compile starts on a loaded machine.
    """
    cxx = shutil.which("g++") or shutil.which("c++")
    assert cxx is not None
    mark, slow = tmp_path / "slow-from-now", tmp_path / "slow-cxx"
    # The sleep is the compiler's child, as cc1plus is g++'s: its pid goes to SLOW_CXX_PIDS.
    pids = tmp_path / "slow-pids"
    slow.write_text(
        f'#!/bin/sh\ncase "$*" in *--version*) ;; *)\n'  # the probe of the compiler is quick
        f'if [ -e "{mark}" ]; then sleep 60 & echo $! >> "{pids}"; wait; fi;;\nesac\n'
        f'exec "{cxx}" "$@"\n'
    )
    slow.chmod(0o755)
    return {"LAZYTORCH_CXX": str(slow), "SLOW_CXX_MARK": str(mark), "SLOW_CXX_PIDS": str(pids)}


def _group(pgid: int) -> list[int]:
    """The living processes of process group `pgid`."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d))
    return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_exit_stops_the_compile_child_and_its_compilers(tmp_path):
    # As above, with the compile in the child process (lazytorch.runtime.compile_worker):
    # the script waits until the child runs a compiler, then ends; the child's process
    # group (the child and its compilers) must be gone at once.
    code = textwrap.dedent(
        """
        import os, time
        import lazytorch as lt
        from lazytorch.runtime import compile_worker
        x = lt.randn(64, 64)
        lt.materialize(x)
        open(os.environ["SLOW_CXX_MARK"], "w").close()  # compiles from here on are slow
        for _ in range(2):
            y = x
            for i in range(150):
                y = (y * 1.0001 + i).tanh() if i % 2 else y.exp().log1p()
            y.sum().item()
        assert lt.metrics.counters()["background_compiles"] == 1
        end = time.monotonic() + 90
        while compile_worker._proc is None and time.monotonic() < end:
            time.sleep(0.001)
        pgid = compile_worker._proc.pid
        def group():
            out = []
            for d in os.listdir("/proc"):
                if d.isdigit():
                    try:
                        with open(f"/proc/{d}/stat") as f:
                            if int(f.read().rsplit(")", 1)[1].split()[2]) == pgid:
                                out.append(d)
                    except (FileNotFoundError, ProcessLookupError):
                        pass
            return out
        # the child runs the (slow) compile: its sleep has started. (Not "the group has
        # two processes": the child's quick probes of the compiler, `--version` and its
        # flags, made that true for a moment, and the group was one again when printed.)
        pids = os.environ["SLOW_CXX_PIDS"]
        while time.monotonic() < end:
            if os.path.exists(pids) and open(pids).read().strip():
                break
            time.sleep(0.005)
        print("group:", pgid, len(group()), flush=True)
        """
    )
    env = {
        **os.environ,
        "LAZYTORCH_TIERED": "1",
        "LAZYTORCH_CACHE_DIR": str(tmp_path / "cache"),
        **_slow_compiler(tmp_path),
    }
    env.pop("LAZYTORCH_COMPILE_WORKER", None)
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    pgid, size = (int(v) for v in r.stdout.split("group:")[1].split())
    assert size >= 2, r.stdout  # else the test would prove nothing
    deadline = time.monotonic() + 1.0
    while _group(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group(pgid), f"the compile child's processes outlived the script: {_group(pgid)}"


def test_a_background_compile_in_the_child_is_what_the_interpreter_computes(tiering):
    from lazytorch.runtime import compile_worker

    rng = np.random.default_rng(3)
    x, w = lt.tensor(rng.standard_normal((8, 5))), lt.tensor(rng.standard_normal((5, 4)))
    want = _step(x, w).numpy()  # 1st sighting: the interpreter
    before = _count("compiles")
    _step(x, w).numpy()  # 2nd: the background compile starts, in the child
    assert tiered.drain(timeout=120)
    assert compile_worker._proc is not None and compile_worker._proc.poll() is None
    assert _count("compiles") == before + 1  # the child's compile, counted here
    np.testing.assert_allclose(_step(x, w).numpy(), want, rtol=1e-12)  # the compiled program
    assert _count("tier_switches") == 1


def _outliving(pids: list[int]) -> list[int]:
    """Those of `pids` still running after a second (SIGKILL is at once; a compile, or the
    slow compiler's sleep, takes longer)."""
    deadline = time.monotonic() + 1.0
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        time.sleep(0.05)
    return [p for p in alive if _alive(p)]


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- what an implicit cut keeps ----------------------------------------------------------------------
@pytest.fixture
def programs(monkeypatch):
    """The programs cut, as lists of op names."""
    seen: list[list[str]] = []
    real = executor.run

    def spy(roots, cause="", loc=None):
        seen.append([i.op.name for i in executor.build_program(list(roots)).instrs])
        return real(roots, cause, loc)

    monkeypatch.setattr(executor, "run", spy)
    return seen


def test_sibling_reads_compute_the_shared_gemm_once(programs):
    x, w = lt.randn(32, 16), lt.randn(16, 8)
    lt.materialize(x, w)
    programs.clear()
    h = (x @ w).relu()
    s, m, mx = h.sum().item(), h.mean().item(), h.max().item()
    hn = np.maximum(x.numpy() @ w.numpy(), 0)
    np.testing.assert_allclose([s, m, mx], [hn.sum(), hn.mean(), hn.max()], rtol=1e-5)
    gemms = [p.count("matmul") for p in programs]
    assert sum(gemms) == 1, programs
    assert _count("held_materialized") == 1  # h, computed with the first .item()


def test_reading_each_element_of_a_cheap_pending_tensor_computes_it_once(programs):
    # nanoGPT-lecture's get_batch: ix = randint(...); stack([data[i:i + 8] for i in ix]).
    # ix is cheap to recompute, but each element read would be a program of its own
    # recomputing it, with the element's offset in its key (a new program per element).
    ix = lt.randint(0, 100, (16,)) + 1
    values = [int(i) for i in ix]
    assert len(programs) == 1, [len(p) for p in programs]
    assert "rand" in programs[0]
    assert values == ix.tolist()
    assert _count("held_materialized") == 1


def test_testing_each_element_of_a_fresh_weight_draws_it_once(programs):
    # d2l's parameter-management notebook: a weight initialized in place, then each of its
    # elements compared (`if w.data[i][j] <= 5`). The comparison reads a part of the live
    # weight, so the weight is computed with the first read; each later read is its element,
    # not a new draw (before: 45 programs, each drawing the weight anew).
    w = lt.empty(5, 9)
    lt.nn.init.uniform_(w, -10, 10)
    small = [bool(w.data[i][j] <= 5) for i in range(5) for j in range(9)]
    draws = [p for p in programs if "rand" in p]
    assert len(draws) == 1, [len(p) for p in programs]
    assert small == [v <= 5 for v in w.numpy().ravel().tolist()]
    assert _count("held_materialized") == 1
    # a pending constant beside the element does not end the chain
    v = lt.rand(6) * 2
    assert float(v[2] * lt.full((), 3.0)) == pytest.approx(3 * v.numpy()[2])
    assert _count("held_materialized") == 2
    # an elementwise op over a whole tensor (no part read) does not hold its input
    x = lt.rand(4) * 2
    assert bool((x * 3 > -1).all())
    assert x._node.buffer is None


def test_sampling_from_an_untrained_model_draws_its_weights_once(monkeypatch):
    # llm.c's train_gpt2.py samples from the model before its first step: every token is a
    # cut (multinomial checks its weights eagerly) reading the weights, still pending as
    # their initial draws. A large draw is worth holding, so the first cut computes the
    # weights and the later ones read them (before: each token redrew 7M numbers, 0.3 s a
    # token on the interpreter). A small draw is still recomputed where it is read.
    draws: list[list[int]] = []  # per program, the sizes of its random draws
    real = executor.run

    def spy(roots, cause="", loc=None):
        instrs = executor.build_program(list(roots)).instrs
        draws.append(sorted(int(np.prod(i.shape)) for i in instrs if i.op.name == "rand"))
        return real(roots, cause, loc)

    monkeypatch.setattr(executor, "run", spy)
    lt.manual_seed(0)
    model = lt.nn.Sequential(lt.nn.Embedding(50, 96), lt.nn.Linear(96, 50))
    small = lt.rand(4) * 2
    idx = lt.tensor([[3]])
    with lt.no_grad():
        for _ in range(3):
            logits = model(idx)[:, -1, :] + small.sum()
            nxt = lt.multinomial(logits.softmax(-1), 1)
            idx = lt.cat([idx, nxt], 1)
    # first token: the small draw, the bias, multinomial's uniforms, then the weight and the
    # embedding (4,800 each); later tokens redraw only what is small
    assert draws == [[4, 50, 50, 4800, 4800], [4, 50, 50], [4, 50, 50]], draws
    assert model[0].weight._node.buffer is not None
    assert model[1].weight._node.buffer is not None
    assert small._node.buffer is None
    assert idx.shape == (1, 4)
    # the held weights are the draws every program saw: recomputing from them agrees
    e, w, b = (p.detach().numpy() for p in model.parameters())
    ref = e[3] @ w.T + b + small.sum().item()
    with lt.no_grad():
        np.testing.assert_allclose(
            model(lt.tensor([[3]]))[0, -1].numpy() + small.sum().item(), ref, rtol=1e-5, atol=1e-6
        )


def test_reading_every_grad_runs_forward_and_backward_once(programs):
    model = lt.nn.Sequential(lt.nn.Linear(6, 5), lt.nn.Tanh(), lt.nn.Linear(5, 2))
    lt.materialize(*model.parameters())
    programs.clear()
    model(lt.ones(3, 6)).square().sum().backward()
    grads = [p.grad.numpy() for p in model.parameters()]
    assert len(programs) == 1, [len(p) for p in programs]
    assert [g.shape for g in grads] == [(5, 6), (5,), (2, 5), (2,)]


def test_pending_updates_are_computed_with_the_loss(programs):
    # The tensor tutorial's loop: .item() on the loss, then parameters updated in place.
    x = lt.linspace(-1.0, 1.0, 50)
    y = x.sin()
    a, b = lt.zeros(()), lt.zeros(())
    for _ in range(6):
        pred = a + b * x
        loss = (pred - y).pow(2).sum().item()
        g = 2.0 * (pred - y)
        a -= 1e-2 * g.sum()
        b -= 1e-2 * (g * x).sum()
    sizes = [len(p) for p in programs]
    assert len(set(sizes[2:])) == 1, sizes  # the same program every step: it does not grow
    assert loss < 15  # and it trains (the first loss is ~16)


def test_a_disjoint_live_tensor_stays_pending():
    x = lt.arange(4.0) * 2  # pending, shares nothing with the cut below
    lt.materialize(x)
    other = x + 1
    (lt.ones(3) * 5).sum().item()
    assert other._node.buffer is None
    small = x * 3  # elementwise on a small computed value: held (one small store), so the
    mine = (x * 3).cumsum(0)  # next program reads it rather than inlining how it was made
    (mine + small).sum().item()  # `mine` is inside this cut's graph: computed with it
    assert mine._node.buffer is not None and other._node.buffer is None
    assert small._node.buffer is not None
    big = lt.arange(70_000.0)  # a large one stays fused into its readers, not stored
    lt.materialize(big)
    cheap = big * 3
    (cheap + 1).sum().item()
    assert cheap._node.buffer is None


def test_a_sequence_grown_token_by_token_cuts_one_program_shape(programs):
    # sampling: `idx = torch.cat([idx, nxt], 1)` after each token's cut. The small pending
    # sequence is held at each cut, so every token's program reads it as one input (before:
    # each program inlined the cats of all earlier tokens, one input longer each time, and
    # no two tokens shared a program shape: none was ever compiled over symbolic sizes)
    lt.manual_seed(0)
    emb = lt.randn(20, 8)
    idx = lt.tensor([[1]])
    for _ in range(6):
        probs = emb[idx[0]].sum(0).softmax(-1)[None]
        nxt = lt.multinomial(probs, 1)
        idx = lt.cat([idx, nxt], 1)
    sizes = [len(p) for p in programs]
    assert len(set(sizes[1:])) == 1, sizes
    assert idx.shape == (1, 7)


def test_explicit_materialize_computes_only_what_it_is_given():
    x = lt.arange(4.0) + 0
    h = x * 2
    s = h.sum()
    lt.materialize(s)
    assert h._node.buffer is None and x._node.buffer is None


def test_sizes_that_keep_changing_compile_one_program_over_symbolic_sizes(tiering):
    # The second size starts one compile over symbolic sizes, in the background: it and
    # every size after it run on the interpreter until it is ready (a token-by-token
    # sampling loop does not stop for seconds), then every later size runs that program.
    rng = np.random.default_rng(1)
    w = lt.tensor(rng.standard_normal((8, 4)))

    def run(n):
        x = rng.standard_normal((n, 8))
        got = (lt.tensor(x) @ w).relu().sum().item()
        np.testing.assert_allclose(got, np.maximum(x @ w.numpy(), 0).sum(), rtol=1e-10)

    for n in range(1, 9):
        run(n)
    assert _count("tier0_runs") == 8  # (unless the compile was done before size 8's cut)
    assert _count("background_compiles") == 1
    assert tiered.drain(timeout=120)
    for n in range(9, 17):
        run(n)
    assert _count("tier0_runs") == 8
    assert _count("dynamic_programs") == 1 and _count("compiles") == 1
    assert _count("dynamic_hits") == 8


def test_sizes_waiting_for_the_symbolic_compile_skip_the_disk_lookup(tiering, monkeypatch):
    # While the program over symbolic sizes compiles, each later size runs on the
    # interpreter without asking the disk cache for its exact program (the lookup writes
    # the program's whole canonical text: ~7 ms a token of a 330-node program). Only the
    # first sighting and the first variant look; the values are the same.
    import threading

    from lazytorch.runtime.backends import get_backend

    backend = get_backend("cpp")
    looked, release = [], threading.Event()
    is_cached, compile_dynamic = type(backend).is_cached, type(backend).compile_dynamic

    def counted(self, *a, **k):
        looked.append(1)
        return is_cached(self, *a, **k)

    def held(self, *a, **k):
        assert release.wait(60)
        return compile_dynamic(self, *a, **k)

    monkeypatch.setattr(type(backend), "is_cached", counted)
    monkeypatch.setattr(type(backend), "compile_dynamic", held)
    monkeypatch.setenv("LAZYTORCH_COMPILE_WORKER", "0")
    rng = np.random.default_rng(1)
    w = lt.tensor(rng.standard_normal((8, 4)))

    def run(n):
        x = rng.standard_normal((n, 8))
        got = (lt.tensor(x) @ w).relu().sum().item()
        np.testing.assert_allclose(got, np.maximum(x @ w.numpy(), 0).sum(), rtol=1e-10)

    try:
        for n in range(2, 10):
            run(n)
        assert _count("tier0_runs") == 8 and _count("background_compiles") == 1
        assert len(looked) == 2, looked  # sizes 2 and 3; not 4..9, whose compile is running
    finally:
        release.set()
    assert tiered.drain(timeout=120)
    for n in range(10, 13):
        run(n)
    assert _count("dynamic_hits") == 3 and _count("compiles") == 1


def test_a_size_variant_that_does_not_generalize_runs_on_the_interpreter(tiering):
    # A window that slides along a long sequence (the word-language model's get_batch):
    # each step's program differs from the last by a slice offset, which no symbolic
    # program takes as an argument. Compiling it in the foreground cost a compile per step
    # (85 s for a 1 s script); as a first sighting it runs on the interpreter.
    rng = np.random.default_rng(2)
    source = lt.tensor(rng.standard_normal(275 * 4)).reshape(275, 4)
    lt.materialize(source)
    w = lt.tensor(rng.standard_normal((4, 3)))
    for i in range(0, 120, 10):
        got = (source[i : i + 10] @ w).tanh().sum().item()
        want = np.tanh(source.numpy()[i : i + 10] @ w.numpy()).sum()
        np.testing.assert_allclose(got, want, rtol=1e-10)
    assert _count("compiles") == 0
    assert _count("tier0_runs") == 12
