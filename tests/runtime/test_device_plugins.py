"""Device modules and out-of-tree device backends (lazytorch._devices).

The plugin tests install a dummy distribution (a package plus its ``.dist-info`` with an
entry point in the ``lazytorch.backends`` group) into a temporary directory and run a
fresh Python on it, as a user who ``pip install``-ed a backend would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import lazytorch as lt
from lazytorch import _devices
from lazytorch.runtime.backends import get_backend, register_backend


def test_builtin_devices_register_like_plugins():
    assert lt.get_device_module() is lt.cpu
    assert lt.get_device_module("cpu") is lt.cpu
    assert lt.get_device_module(lt.device("cuda", 0)) is lt.cuda
    assert _devices.available_device_types()[:2] == ["cpu", "cuda"]
    assert lt.cpu.is_available() and not lt.cuda.is_available()
    assert lt.cuda.device_count() == 0


def test_cuda_asked_for_and_absent_is_a_clear_error():
    # the reason names what is missing on this machine: the bindings, the driver, a GPU
    # (tests/gpu/test_cuda_memory.py checks each reason with a fake driver)
    with pytest.raises(
        RuntimeError,
        match=r"ones\(\): device 'cuda' is not available: "
        r"lazytorch\.cuda\.is_available\(\) is False \((cuda-bindings is not installed: "
        r"pip install 'lazytorch\[cuda\]'|no NVIDIA driver \(|no CUDA device \()",
    ):
        lt.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="device 'cuda:1' is not available"):
        lt.arange(3.0).cuda(1)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        lt.cuda.synchronize()


def test_unknown_device_names_the_registered_ones_and_the_entry_point_group():
    with pytest.raises(RuntimeError) as e:
        lt.zeros(1, device="nosuchdev")
    assert "no device module is registered for 'nosuchdev' (registered: cpu, cuda" in str(e.value)
    assert "entry-point group 'lazytorch.backends'" in str(e.value)
    with pytest.raises(RuntimeError, match="no device module is registered for 'nosuchdev'"):
        lt.get_device_module("nosuchdev")


@pytest.mark.parametrize(
    "name, module, error, message",
    [
        ("cpu", types.ModuleType("x"), RuntimeError, "'cpu' is already registered"),
        ("ones", types.ModuleType("x"), RuntimeError, "would shadow lazytorch.ones"),
        ("not-a-name", types.ModuleType("x"), ValueError, "must be an identifier"),
    ],
)
def test_register_refuses_duplicates_and_bad_names(name, module, error, message):
    with pytest.raises(error, match=message):
        lt._register_device_module(name, module)


@pytest.fixture
def toy_device():
    """A device 'toydev' whose programs run on a backend that counts its compiles."""
    compiled: list[int] = []

    class ToyBackend:
        name = "toydev-backend"

        def compile(self, program, options=None):
            compiled.append(len(program.instrs))
            return get_backend("interpreter").compile(program, options)

    if "toydev-backend" not in _devices._modules:
        register_backend("toydev-backend", ToyBackend)
    module = types.ModuleType("toydev")
    module.BACKEND = "toydev-backend"
    module.is_available = lambda: True
    module.device_count = lambda: 2
    module.synchronize = lambda device=None: None
    lt._register_device_module("toydev", module)
    try:
        yield module, compiled
    finally:  # leave the process as it was for other tests
        _devices._modules.pop("toydev", None)
        vars(lt).pop("toydev", None)
        from lazytorch.runtime import backends

        backends._factories.pop("toydev-backend", None)
        backends._instances.pop("toydev-backend", None)


def test_programs_on_a_registered_device_run_on_its_backend(toy_device):
    module, compiled = toy_device
    assert lt.toydev is module and lt.get_device_module("toydev:1") is module
    x = lt.ones(3, device="toydev") * 2 + 1
    assert x.device == lt.device("toydev") and x.tolist() == [3.0, 3.0, 3.0]
    assert compiled == [len(lt.debug.program(lt.ones(3) * 2 + 1).instrs)]
    y = lt.arange(4.0).to("toydev:1")
    assert y.device == lt.device("toydev", 1) and (y * y).sum().item() == 14.0
    assert y.cpu().device == lt.device("cpu") and y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match=r"lazytorch\.toydev has 2 devices"):
        lt.ones(1, device="toydev:2")


PLUGIN = '''
"""A dummy lazytorch device backend: device 'toyplug', computed by the interpreter."""
import sys
import types

import lazytorch
from lazytorch.runtime.backends import get_backend, register_backend

LOADED = []


class Backend:
    name = "toyplug"

    def compile(self, program, options=None):
        LOADED.append("compile")
        return get_backend("interpreter").compile(program, options)


def register():
    LOADED.append("register")
    {failure}
    module = types.ModuleType("toyplug_device")
    module.BACKEND = "toyplug"
    module.is_available = lambda: True
    module.device_count = lambda: 1
    module.synchronize = lambda device=None: None
    register_backend("toyplug", Backend)
    lazytorch._register_device_module("toyplug", module)
'''


def _install_plugin(root: Path, failure: str = "") -> Path:
    site = root / "site"
    pkg = site / "toyplug"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(PLUGIN.format(failure=failure))
    info = site / "toyplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lazytorch.backends]\ntoyplug = toyplug:register\n")
    (info / "RECORD").write_text("")
    return site


def _python(site: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "LAZYTORCH_DEVICE_BACKEND_AUTOLOAD"}
    full.update(env, PYTHONPATH=os.pathsep.join([str(site), full.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plugin_is_discovered_lazily_on_first_use_of_its_device(tmp_path):
    site = _install_plugin(tmp_path)
    r = _python(
        site,
        """
        import sys
        import lazytorch as lt
        assert "toyplug" not in sys.modules, "loaded at import"
        x = lt.ones(2, device="toyplug") * 3
        import toyplug
        print(x.device, x.tolist(), toyplug.LOADED, lt.get_device_module("toyplug").BACKEND)
    """,
        LAZYTORCH_BACKEND="interpreter",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "toyplug [3.0, 3.0] ['register', 'compile'] toyplug"


def test_plugin_autoload_opt_out(tmp_path):
    site = _install_plugin(tmp_path)
    r = _python(
        site,
        """
        import sys
        import lazytorch as lt
        try:
            lt.ones(2, device="toyplug")
        except RuntimeError as e:
            print(e)
        print("toyplug" in sys.modules)
    """,
        LAZYTORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert r.returncode == 0, r.stderr
    assert "no device module is registered for 'toyplug'" in r.stdout
    assert "plugin discovery is off (LAZYTORCH_DEVICE_BACKEND_AUTOLOAD=0)" in r.stdout
    assert r.stdout.strip().endswith("False")


def test_a_failing_plugin_is_named_with_the_opt_out_and_counted(tmp_path):
    site = _install_plugin(tmp_path, failure='raise ImportError("libtoy.so: cannot open")')
    r = _python(
        site,
        """
        import lazytorch as lt
        for _ in range(2):  # the failure is remembered, not retried
            try:
                lt.ones(2, device="toyplug")
            except RuntimeError as e:
                print(e)
                print(type(e.__cause__).__name__)
        import toyplug
        print(toyplug.LOADED)
        print([l for l in lt.metrics.prometheus().splitlines()
               if l.startswith("lazytorch_device_backend_autoload_failures_total")])
    """,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (
        "failed to load the lazytorch device backend 'toyplug' (entry point "
        "'toyplug = toyplug:register' of toyplug): ImportError: libtoy.so: cannot open. Fix "
        "or uninstall toyplug, or set LAZYTORCH_DEVICE_BACKEND_AUTOLOAD=0 to start without "
        "out-of-tree device backends"
    )
    assert lines[1] == "ImportError"
    assert lines[2] == lines[0] and lines[3] == "ImportError"
    assert lines[4] == "['register']"
    assert lines[5] == "['lazytorch_device_backend_autoload_failures_total 1']"


def test_a_plugin_that_registers_nothing_is_an_error(tmp_path):
    site = _install_plugin(tmp_path, failure="return")
    r = _python(
        site,
        """
        import lazytorch as lt
        try:
            lt.get_device_module("toyplug")
        except RuntimeError as e:
            print(e)
    """,
    )
    assert "it ran but registered no device module 'toyplug'" in r.stdout, r.stdout + r.stderr
