"""The facade: what `import lazytorch` loads (and does not), the curated namespace, lazy
submodules, scoped switches, devices, grad-mode switches, and the native extension."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings

import pytest

import lazytorch as lt

HEAVY = ["numpy", "sympy", "networkx", "triton", "torch", "cachetools", "scipy"]


def test_import_loads_nothing_heavy():
    code = (
        "import sys, json, lazytorch\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_recording_needs_no_numpy_until_a_value_is_read():
    code = (
        "import sys, lazytorch as lt\n"
        "y = (lt.ones(3, 4) * 2).sum(0).reshape(2, 2)\n"
        "assert 'numpy' not in sys.modules\n"
        "assert y.tolist() == [[6.0, 6.0], [6.0, 6.0]]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_public_name_resolves():
    for name in lt.__all__:
        assert getattr(lt, name) is not None, name
    assert len(set(lt.__all__)) == len(lt.__all__)


def test_heavy_submodules_load_on_first_use():
    code = (
        "import sys, lazytorch as lt\n"
        "assert 'lazytorch.nn.functional' not in sys.modules\n"
        "lt.nn.functional.relu\n"
        "assert 'lazytorch.nn.functional' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lt.nope  # noqa: B018


def test_the_install_leaves_bytecode_for_the_core_modules():
    # setup.py byte-compiles an editable install (pip compiles a wheel's): without it, a
    # process under PYTHONDONTWRITEBYTECODE compiles every module from source again (the
    # import and the first materialization cost ~0.3 s more CPU). Reinstall after adding
    # a module: `pip install -e .`.
    import importlib.util

    import lazytorch.codegen.cpp
    import lazytorch.runtime.executor
    import lazytorch.scheduler.fusion

    for module in (
        lt,
        lazytorch.runtime.executor,
        lazytorch.scheduler.fusion,
        lazytorch.codegen.cpp,
    ):
        cached = importlib.util.cache_from_source(module.__file__)
        assert os.path.exists(cached), f"no bytecode for {module.__name__}: {cached}"


def test_import_time_is_recorded():
    assert 0 < lt.import_seconds < 10  # the benchmark reports it; no timing assert here


# -- devices and scoped defaults ----------------------------------------------------------------
def test_devices_are_interned_and_print_like_torch():
    assert lt.device("cpu") is lt.device("cpu")
    assert lt.device("cuda:1") is lt.device("cuda", 1)
    assert repr(lt.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert str(lt.device("cuda:0")) == "cuda:0"
    assert lt.device("cpu") != "cpu"  # as in torch
    for bad in ("cuda:x", "", "cu da"):
        with pytest.raises(ValueError):
            lt.device(bad)
    with pytest.raises(TypeError):
        lt.device(3.5)


def test_device_context_is_thread_local_and_nests():
    seen = {}
    with lt.device("cpu"):
        assert lt.get_default_device() is lt.device("cpu")
        with lt.device("cuda"):
            assert lt.get_default_device() is lt.device("cuda")
            t = threading.Thread(target=lambda: seen.setdefault("d", lt.get_default_device()))
            t.start()
            t.join()
        assert lt.get_default_device() is lt.device("cpu")
    assert seen["d"] is lt.device("cpu")  # the other thread kept the process default


def test_creating_on_an_unavailable_device_fails_clearly():
    with lt.device("cuda"), pytest.raises(RuntimeError, match="'cuda' is not available"):
        lt.ones(2)


def test_set_default_device():
    lt.set_default_device("cpu")
    try:
        assert lt.zeros(1).device is lt.device("cpu")
    finally:
        lt.set_default_device(None)


# -- grad mode (switches exist ahead of autograd) ------------------------------------------------
def test_grad_mode_switches():
    assert lt.is_grad_enabled()
    with lt.no_grad():
        assert not lt.is_grad_enabled()
        with lt.enable_grad():
            assert lt.is_grad_enabled()
    assert lt.is_grad_enabled()

    @lt.no_grad()
    def f():
        return lt.is_grad_enabled()

    assert f() is False and lt.is_grad_enabled()
    with lt.set_grad_enabled(False):
        assert not lt.is_grad_enabled()
    assert lt.is_grad_enabled()
    with lt.inference_mode():
        assert lt.is_inference_mode_enabled() and not lt.is_grad_enabled()
    assert not lt.is_inference_mode_enabled()


def test_autograd_front_doors_resolve():
    assert lt.zeros(2, requires_grad=True).requires_grad
    assert callable(lt.autograd.grad) and callable(lt.autograd.backward)
    assert callable(lt.func.grad) and callable(lt.func.vjp)


# -- the native extension -----------------------------------------------------------------------
def test_native_extension_is_built_and_loads():
    from lazytorch import _native

    mod = _native.load()
    assert mod is not None, "lazytorch._C did not build; reinstall with a C++ compiler"
    info = mod.build_info()
    assert info["cplusplus"] >= 201703


def test_mapped_subpackages_install_under_lazytorch():
    import lazytorch.codegen
    import lazytorch.scheduler

    assert lazytorch.scheduler.__name__ == "lazytorch.scheduler"
    assert lazytorch.codegen.__name__ == "lazytorch.codegen"


# -- what real scripts reach for after a bare ``import torch`` ---------------------------------
def test_distributed_and_multiprocessing_resolve_after_a_bare_import():
    # a training helper checks torch.distributed.rpc.api.RRef on every batch (rasbt's
    # helper_train.py); scripts call torch.multiprocessing.set_sharing_strategy at the top
    code = (
        "import lazytorch as torch\n"
        "x = torch.ones(2)\n"
        "print(torch.distributed.is_available(), isinstance(x, torch.distributed.rpc.api.RRef),\n"
        "      torch.distributed.rpc.is_available())\n"
        "torch.multiprocessing.set_sharing_strategy('file_system')\n"
        "print(torch.compiler.is_compiling(), torch.xpu.is_available())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "False", "False"]
    with pytest.raises(NotImplementedError, match="does not support RPC"):
        lt.distributed.rpc.init_rpc("worker0")


def test_compiler_disable_returns_the_function():
    def f(x):
        return x * 2

    assert lt.compiler.disable(f) is f
    assert lt.compiler.disable(recursive=False)(f) is f
    assert lt.compiler.disable(f, recursive=False) is f


def test_tensor_of_a_size_is_a_tensor_of_that_shape():
    import torch  # (the test oracle, a test dependency)

    for lib in (torch, lt):
        a = lib.zeros(4, 1, 3, 3)
        got = [tuple(lib.Tensor(s).shape) for s in (a.shape, a.shape[1:], lib.Size([]))]
        got.append(tuple(lib.Tensor([2, 3]).shape))  # a list is data
        assert got == [(4, 1, 3, 3), (1, 3, 3), (), (2,)]
        assert lib.Tensor(a.shape).dtype == lib.float32


def test_cuda_device_with_a_negative_index_is_a_no_op():
    with lt.cuda.device(-1):  # (SimCLR's ``with torch.cuda.device(args.gpu_index)`` on CPU)
        assert lt.ones(2).sum().item() == 2.0


@pytest.mark.parametrize("t", ["torch.DoubleTensor", "BFloat16Tensor", "FloatTensor"])
def test_set_default_tensor_type_sets_the_default_dtype(t):
    import torch  # (the test oracle, a test dependency)

    got = []
    for lib in (torch, lt):
        before = lib.get_default_dtype()
        arg = t if t.startswith("torch.") else getattr(lib, t)
        try:
            if lib is lt:
                with pytest.warns(UserWarning, match="deprecated"):
                    lib.set_default_tensor_type(arg)
            else:  # (torch warns once per process)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    lib.set_default_tensor_type(arg)
            got.append((str(lib.zeros(1).dtype), str(lib.nn.Linear(2, 2).weight.dtype)))
        finally:
            lib.set_default_dtype(before)
    assert [s.split(".")[1] for pair in got[1:] for s in pair] == [s.split(".")[1] for s in got[0]]


@pytest.mark.parametrize("t", ["LongTensor", "torch.IntTensor", "float64"])
def test_set_default_tensor_type_refuses_what_torch_refuses(t):
    arg = t if t.startswith("torch.") else getattr(lt, t)
    with pytest.warns(UserWarning), pytest.raises(TypeError, match="floating-point types"):
        lt.set_default_tensor_type(arg)
