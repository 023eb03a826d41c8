"""`import torch` resolved to lazytorch (install_as_torch, `lazytorch run --as-torch`), the
torch modules scripts import (jit, onnx, hub, nn.parallel, utils.data's layout), and the
errors a missing torch API raises at its use.

The hook refuses to install where the real torch is imported — which this test process
does as its oracle — so scripts run in subprocesses.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import subprocess
import sys
import textwrap
import urllib.request

import pytest
import torch

import lazytorch as lt
from lazytorch.utils import data as ltdata


def _run_as_torch(tmp_path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, "-m", "lazytorch", "run", "--as-torch", str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_torch_and_its_submodules_are_lazytorch_modules(tmp_path):
    r = _run_as_torch(
        tmp_path,
        """
        import sys
        import lazytorch
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torch.utils.data import DataLoader, TensorDataset
        from torch.utils.data.dataloader import default_collate
        from torch.utils.data.sampler import RandomSampler
        import torch.backends.cudnn as cudnn
        import torch.onnx, torch.jit, torch.hub, torch.nn.parallel
        assert torch is lazytorch and nn is lazytorch.nn and F is lazytorch.nn.functional
        assert optim is lazytorch.optim and DataLoader is lazytorch.utils.data.DataLoader
        assert sys.modules["torch.utils.data.dataloader"] is lazytorch.utils.data.dataloader
        # modules keep their own names (pickles and reprs name lazytorch)
        assert nn.__name__ == "lazytorch.nn" and nn.__spec__.name == "lazytorch.nn"
        x = torch.randn(4, 3)
        model = nn.Linear(3, 2)
        assert isinstance(model(x), torch.Tensor)
        loader = DataLoader(TensorDataset(x, torch.arange(4)), batch_size=2, num_workers=2,
                            pin_memory=True)
        print("batches", len(list(loader)), "args", sys.argv[1:])
        """,
        "--flag",
        "7",
    )
    assert r.returncode == 0, r.stderr
    assert "batches 2 args ['--flag', '7']" in r.stdout


def test_torch_fft_is_lazytorch_fft(tmp_path):
    r = _run_as_torch(
        tmp_path,
        """
        import lazytorch
        import torch
        import torch.fft
        from torch.fft import irfft, rfft
        assert torch.fft is lazytorch.fft and rfft is lazytorch.fft.rfft
        x = torch.arange(8.0)
        print("fft", torch.allclose(irfft(rfft(x), n=8), x, atol=1e-5), torch.fft.fft(x).dtype)
        """,
    )
    assert r.returncode == 0, r.stderr
    assert "fft True torch.complex64" in r.stdout  # (reprs name torch when installed)


def test_a_missing_module_imports_and_fails_at_its_use(tmp_path):
    r = _run_as_torch(
        tmp_path,
        """
        import torch
        import torch.fx as fx                      # only imported: the script runs on
        from torch._dynamo import config as _c     # nested missing modules import too
        from torch.fx import symbolic_trace        # a name from a missing module too
        print("imported")
        print("hasattr", hasattr(torch, "no_such_fn"), hasattr(fx, "Tracer"))
        try:
            torch.flipp
        except AttributeError as e:
            print("E1", type(e).__name__, e)
        try:
            torch.nn.functional.reluu
        except AttributeError as e:
            print("E2", type(e).__name__, e)
        try:
            symbolic_trace(torch.nn.Linear(2, 2))  # used: the same error, not "not callable"
        except AttributeError as e:
            print("E3", type(e).__name__, e)
        fx.Tracer()
        """,
    )
    assert r.returncode == 1
    assert "imported" in r.stdout and "hasattr False False" in r.stdout
    assert (
        "E1 MissingTorchAPI torch.flipp is not available in lazytorch; nearest: lazytorch.flip"
        in r.stdout
    )
    assert (
        "E2 MissingTorchAPI torch.nn.functional.reluu is not available in lazytorch; nearest: "
        "lazytorch.nn.functional.relu" in r.stdout
    )
    # the traceback points at the script's line that used it, naming the torch API
    assert (
        "E3 MissingTorchAPI torch.fx.symbolic_trace is not available in lazytorch "
        "(there is no lazytorch.fx module)" in r.stdout
    )
    assert "fx.Tracer()" in r.stderr
    assert (
        "MissingTorchAPI: torch.fx.Tracer is not available in lazytorch "
        "(there is no lazytorch.fx module)" in r.stderr
    )


def test_distributions_import_as_torch(tmp_path):
    r = _run_as_torch(
        tmp_path,
        """
        import torch
        import torch.distributions
        import torch.distributions.normal
        from torch.distributions import Categorical, kl_divergence
        from torch.distributions.normal import Normal
        import lazytorch
        assert torch.distributions is lazytorch.distributions
        torch.manual_seed(0)
        pi = Categorical(logits=torch.zeros(3))
        print("action", pi.sample().item() in (0, 1, 2))
        print("kl", round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item(), 4))
        try:
            torch.distributions.Normall
        except AttributeError as e:
            print("E", type(e).__name__, e)
        """,
    )
    assert r.returncode == 0, r.stderr
    assert "action True" in r.stdout and "kl 0.5" in r.stdout
    assert (
        "E MissingTorchAPI torch.distributions.Normall is not available in lazytorch; "
        "nearest: lazytorch.distributions.Normal" in r.stdout
    )


def test_install_refuses_when_real_torch_is_imported():
    assert "torch" in sys.modules  # the oracle
    with pytest.raises(RuntimeError, match="the real torch is already imported"):
        lt.install_as_torch()
    assert not lt._as_torch.is_installed()


def test_uninstall_restores_a_clean_import_state(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import sys, lazytorch
                lazytorch.install_as_torch()
                lazytorch.install_as_torch()              # idempotent
                import torch.nn, torch.fx
                assert torch.fx.__class__.__name__ == "_Placeholder"
                lazytorch.uninstall_as_torch()
                assert not any(n == "torch" or n.startswith("torch.") for n in sys.modules)
                assert not hasattr(lazytorch, "fx")        # the placeholder is unbound too
                assert lazytorch.nn.__name__ == "lazytorch.nn"
                print("ok")
                """
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_attribute_errors_suggest_the_nearest_name():
    with pytest.raises(AttributeError, match=r"no attribute 'flipp'; nearest: lazytorch.flip"):
        lt.flipp  # noqa: B018
    with pytest.raises(
        AttributeError, match=r"'lazytorch.optim' .* 'Adamm'; nearest: lazytorch.optim.Adam"
    ):
        lt.optim.Adamm  # noqa: B018
    with pytest.raises(AttributeError, match=r"no attribute .__wrapped__.$"):
        lt.__wrapped__  # noqa: B018


# -- jit / onnx / hub / nn.parallel ----------------------------------------------------------------
def test_jit_script_and_trace_return_what_they_get():
    m = lt.nn.Linear(3, 2)
    assert lt.jit.script(m) is m and lt.jit.trace(m, lt.zeros(1, 3)) is m
    f = lt.jit.ignore(lambda x: x)
    assert f(3) == 3 and lt.jit.unused(f) is f and lt.jit.export(f) is f
    assert lt.jit.is_scripting() is False and lt.jit.is_tracing() is False
    assert lt.jit.annotate(list, [1]) == [1]
    assert lt.jit.wait(lt.jit.fork(lambda a: a + 1, 1)) == 2
    with pytest.raises(NotImplementedError, match=r"torch.jit.save: .*lazytorch.save\(model"):
        lt.jit.save(m, "m.pt")
    assert not isinstance(m, lt.jit.ScriptModule)


def test_onnx_export_and_hub_model_code_raise_at_the_call():
    assert lt.onnx.is_in_onnx_export() is False
    with pytest.raises(
        NotImplementedError, match=r"torch.onnx.export: lazytorch cannot write ONNX"
    ):
        lt.onnx.export(lt.nn.Linear(2, 2), (lt.zeros(1, 2),), "m.onnx")
    with pytest.raises(NotImplementedError, match=r"torch.hub.load: .*load_state_dict_from_url"):
        lt.hub.load("pytorch/vision", "resnet18")


def test_hub_downloads_a_checkpoint_once_and_loads_it(tmp_path, monkeypatch):
    src = tmp_path / "weights-abc.pt"
    lt.save({"w": lt.arange(3.0)}, src)
    calls = []
    real_open = urllib.request.urlopen
    monkeypatch.setattr(urllib.request, "urlopen", lambda u: calls.append(u) or real_open(u))
    lt.hub.set_dir(tmp_path / "hub")
    try:
        for _ in range(2):
            sd = lt.hub.load_state_dict_from_url(src.as_uri(), weights_only=True)
            assert sd["w"].tolist() == [0.0, 1.0, 2.0]
        assert len(calls) == 1  # the second call reads the cached file
        assert os.path.exists(tmp_path / "hub" / "checkpoints" / "weights-abc.pt")
        with pytest.raises(RuntimeError, match="invalid hash value"):
            lt.hub.download_url_to_file(src.as_uri(), str(tmp_path / "x.pt"), hash_prefix="00ff")
        assert not os.path.exists(tmp_path / "x.pt")  # a failed download leaves nothing
    finally:
        lt.hub._hub_dir = None


def test_hub_tqdm_is_torchs_progress_bar(capsys):
    # `from torch.hub import tqdm`: tqdm's class when installed, else torch's byte counter
    import torch.hub

    assert lt.hub.tqdm.__name__ == torch.hub.tqdm.__name__
    if torch.hub.tqdm.__name__ == "tqdm":
        return
    for lib in (torch, lt):
        with lib.hub.tqdm(total=200, unit="B") as bar:
            bar.update(50)
            bar.update(100)
        assert bar.n == 150
        with pytest.raises(TypeError, match="not iterable"):
            iter(lib.hub.tqdm([1, 2]))
    err = capsys.readouterr().err
    assert err == "\r25.0%\r75.0%\n" * 2
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lt.hub.nope  # noqa: B018


def test_data_parallel_is_the_module_with_torchs_state_dict_keys():
    tm = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    lm = lt.nn.parallel.DataParallel(lt.nn.Linear(3, 2))
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict({k: lt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = torch.randn(4, 3)
    got = lm(lt.tensor(x.numpy())).detach().numpy()
    assert (abs(got - tm(x).detach().numpy()) < 1e-6).all()
    # torch's error before init_process_group (tests/distributed/test_ddp.py trains one)
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        lt.nn.parallel.DistributedDataParallel(lt.nn.Linear(3, 2))


# -- torch.utils.data's layout ---------------------------------------------------------------------
def test_data_modules_have_torchs_layout_and_dataloader_signature():
    from lazytorch.utils.data import _utils, dataloader, dataset, sampler

    assert dataloader.DataLoader is ltdata.DataLoader
    assert dataloader.default_collate is _utils.collate.default_collate
    assert dataset.TensorDataset is ltdata.TensorDataset and sampler.Sampler is ltdata.Sampler
    for name in torch.utils.data.__all__:
        if name in (
            "DFIterDataPipe",
            "IterDataPipe",
            "MapDataPipe",
            "DataChunk",
            "functional_datapipe",
            "guaranteed_datapipes_determinism",
            "non_deterministic",
            "runtime_validation",
            "runtime_validation_disabled",
            "argument_validation",
            "DistributedSampler",
            "get_worker_info",
            "_DatasetKind",
        ):
            continue
        assert hasattr(ltdata, name), name
    ours = list(inspect.signature(ltdata.DataLoader).parameters.values())
    theirs = list(inspect.signature(torch.utils.data.DataLoader).parameters.values())
    assert [(p.name, p.kind) for p in ours[: len(theirs)]] == [(p.name, p.kind) for p in theirs]
    assert ours[len(theirs)].name == "lazy_batches"  # our one keyword, after torch's


class _Count(torch.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class _LtCount(ltdata.IterableDataset):
    __init__, __iter__, __len__ = _Count.__init__, _Count.__iter__, _Count.__len__


@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_batches_as_torch(drop_last):
    want = [
        b.tolist()
        for b in torch.utils.data.DataLoader(_Count(7), batch_size=3, drop_last=drop_last)
    ]
    loader = ltdata.DataLoader(_LtCount(7), batch_size=3, drop_last=drop_last)
    assert [b.tolist() for b in loader] == want
    assert len(loader) == len(want)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        ltdata.DataLoader(_LtCount(3), shuffle=True)
    chained = list(ltdata.DataLoader(_LtCount(2) + _LtCount(2), batch_size=None))
    assert [int(x) for x in chained] == [0, 1, 0, 1]


def test_subset_and_weighted_samplers():
    g = lt.Generator().manual_seed(0)
    s = ltdata.SubsetRandomSampler([3, 5, 9], generator=g)
    assert sorted(s) == [3, 5, 9] and len(s) == 3
    w = ltdata.WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=400, generator=g)
    drawn = list(w)
    assert len(drawn) == 400 and 0 not in drawn
    assert 0.65 < drawn.count(2) / 400 < 0.85  # 3:1 odds; 400 draws put it within ±0.1
    no_rep = list(
        ltdata.WeightedRandomSampler([1.0, 1.0, 1.0, 0.0], 3, replacement=False, generator=g)
    )
    assert sorted(no_rep) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        ltdata.WeightedRandomSampler([1.0], 0)


@pytest.mark.parametrize(
    "weights, n, replacement",
    [([0.5, 0.25, 2.0, 1.0], 12, True), ([1.0, 1.0, 1.0, 0.0], 4, False), ([1.0, 3.0], 1, False)],
)
def test_weighted_sampler_is_one_multinomial_draw_as_in_torch(
    weights: list[float], n: int, replacement: bool
) -> None:
    # torch's WeightedRandomSampler yields torch.multinomial(weights, n, replacement): the
    # same draw in lazytorch gives its semantics (a zero weight fills up a draw without
    # replacement) and the one random call that a replay of torch's draws substitutes
    tg, g = torch.Generator().manual_seed(3), lt.Generator().manual_seed(3)
    want = list(torch.utils.data.WeightedRandomSampler(weights, n, replacement, generator=tg))
    tw = torch.tensor(weights, dtype=torch.float64)
    assert want == torch.multinomial(tw, n, replacement, generator=tg.manual_seed(3)).tolist()
    got = list(ltdata.WeightedRandomSampler(weights, n, replacement, generator=g))
    w = lt.tensor(weights, dtype=lt.float64)
    assert got == lt.multinomial(w, n, replacement, generator=g.manual_seed(3)).tolist()
    assert len(got) == len(want) == n
    if not replacement:  # each index at most once, zero weights drawn last, as torch does
        assert sorted(got) == sorted(want) and len(set(got)) == n
        zero = [i for i, x in enumerate(weights) if x == 0]
        assert got[n - len(zero) :] == want[n - len(zero) :] == zero


def test_weighted_sampler_checks_its_weights_as_torch_does() -> None:
    for weights in ([0.0, 0.0], [1.0, -1.0]):
        with pytest.raises(RuntimeError):
            list(torch.utils.data.WeightedRandomSampler(weights, 2))
        with pytest.raises(RuntimeError, match="multinomial"):
            list(ltdata.WeightedRandomSampler(weights, 2))


def test_stack_dataset_zips_samples():
    a, b = ltdata.TensorDataset(lt.arange(3)), [10, 11, 12]
    assert ltdata.StackDataset(a, b)[1][1] == 11
    assert set(ltdata.StackDataset(x=a, y=b)[2]) == {"x", "y"}
    with pytest.raises(ValueError, match="Size mismatch"):
        ltdata.StackDataset(a, [1])


# -- legacy names ------------------------------------------------------------------------------------
def test_legacy_tensor_types_construct_check_and_convert_as_torch():
    for name in (
        "FloatTensor",
        "DoubleTensor",
        "LongTensor",
        "IntTensor",
        "ByteTensor",
        "BoolTensor",
    ):
        ours, theirs = getattr(lt, name), getattr(torch, name)
        assert ours([1, 0]).tolist() == theirs([1, 0]).tolist()
        assert ours([1, 0]).dtype.name == str(theirs([1, 0]).dtype).split(".")[1]
        assert tuple(ours(2, 3).shape) == tuple(theirs(2, 3).shape) == (2, 3)
        assert tuple(ours(lt.Size([4])).shape) == (4,)
        assert isinstance(ours([1]), ours) and not isinstance(ours([1]), lt.cuda.FloatTensor)
        assert lt.arange(3).type(ours).type() == torch.arange(3).type(theirs).type()
    assert not isinstance(lt.zeros(1), lt.LongTensor)
    assert repr(lt.cuda.FloatTensor) == "<class 'torch.cuda.FloatTensor'>"


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_type_of_the_tensor_class_is_the_default_dtype(default):
    """CycleGAN's ``Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor`` then
    ``x.type(Tensor)``: torch converts to the default dtype (the default tensor type)."""
    saved = torch.get_default_dtype(), lt.get_default_dtype()
    try:
        torch.set_default_dtype(getattr(torch, default))
        lt.set_default_dtype(getattr(lt, default))
        for src in ("float16", "float64", "int64"):
            want = torch.arange(3).to(getattr(torch, src))
            got = lt.arange(3).to(getattr(lt, src))
            for arg, targ in ((lt.Tensor, torch.Tensor), ("torch.Tensor", "torch.Tensor")):
                assert got.type(arg).type() == want.type(targ).type()
                assert got.type(arg).dtype.name == default
        same = lt.arange(3).to(getattr(lt, default))
        assert same.type(lt.Tensor) is same  # no conversion: the tensor itself, as torch
    finally:
        torch.set_default_dtype(saved[0])
        lt.set_default_dtype(saved[1])
    with pytest.raises(ValueError, match="invalid type: 'Module'"):
        lt.zeros(1).type(lt.nn.Module)
    with pytest.raises(ValueError, match="invalid type: 'Module'"):
        torch.zeros(1).type(torch.nn.Module)


def test_bfloat16_is_a_dtype_scripts_can_pick():
    dtypes = {"bfloat16": lt.bfloat16, "float32": lt.float32}  # nanoGPT's table
    assert dtypes["bfloat16"].itemsize == 2 and dtypes["bfloat16"].is_floating_point
    for make in (
        lambda t: t.zeros(2, dtype=t.bfloat16),
        lambda t: t.ones(2).to(t.bfloat16) / 3,
        lambda t: t.tensor([1.0], dtype=t.bfloat16),
    ):
        got, want = make(lt), make(torch)
        assert got.dtype.name == "bfloat16" and got.tolist() == want.tolist()


def test_variable_is_a_tensor_alias_as_in_torch():
    tv = torch.autograd.Variable(torch.ones(3) * 2, requires_grad=True)
    lv = lt.autograd.Variable(lt.ones(3) * 2, requires_grad=True)
    (tv * tv).sum().backward()
    (lv * lv).sum().backward()
    assert lv.is_leaf and lv.grad.tolist() == tv.grad.tolist()
    assert isinstance(lt.zeros(1), lt.autograd.Variable)
    assert not lt.autograd.Variable(lt.ones(1)).requires_grad
    with pytest.raises(TypeError, match="has to be a tensor"):
        lt.autograd.Variable([1.0])


def test_reprs_name_torch_when_installed_as_torch(tmp_path):
    code = """
        import torch, torch.nn as nn
        x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
        print(x.shape, torch.float16, repr(torch.int64), torch.zeros(2, dtype=torch.int32))
        print(nn.Parameter(torch.zeros(1, dtype=torch.float64)))
        print(torch.typename(x), torch.Size([4]))
        """
    r = _run_as_torch(tmp_path, code)
    assert r.returncode == 0, r.stderr
    script = tmp_path / "script.py"
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert r.stdout == want.stdout
    assert "lazytorch" not in r.stdout
    # imported as itself, lazytorch names itself
    assert repr(lt.ones(2).shape) == "lazytorch.Size([2])"
    assert repr(lt.float32) == "lazytorch.float32"
    assert "dtype=lazytorch.float64" in repr(lt.zeros(1, dtype=lt.float64))


def test_suggestions_name_only_public_api(tmp_path):
    from lazytorch._as_torch import missing_message, public_names

    msg = missing_message("torch.combinationz", lt, "combinationz")
    assert "lazytorch.combinations" in msg
    for helper in ("annotations", "Any", "importlib", "math"):
        assert helper not in public_names(lt)
    assert "loss" not in public_names(lt.nn.functional)
    assert "annotations" not in missing_message("torch.anotations", lt, "anotations")
    assert "functional.loss" not in missing_message(
        "torch.nn.functional.los", lt.nn.functional, "los"
    )


def test_torch_version_names_no_cuda_toolkit_as_torchs_cpu_build():
    import torch

    # what scripts print at start-up; torch's CPU wheel (the oracle) reports the same
    assert lt.version.cuda is None and torch.version.cuda is None
    assert lt.version.hip is None and torch.version.hip is None
    assert lt.version.debug is False and torch.version.debug is False
    assert lt.version.__version__ == lt.__version__
    assert isinstance(lt.version.git_version, str)


def test_torch_version_is_the_api_version_lazytorch_follows(tmp_path):
    """Scripts test torch.__version__ to pick a code path: under --as-torch it is the torch
    release whose API lazytorch follows (the oracle's), lazytorch's own as its local part,
    ordered as a version against strings and tuples as torch's TorchVersion is."""
    r = _run_as_torch(
        tmp_path,
        """
        import torch, torch.version
        from packaging.version import Version
        v = torch.__version__
        assert v == torch.version.__version__ == "2.13.0+lazytorch.0.1.0", v
        assert v >= "2.0" and v > "2.9" and v < "2.13.1" and v >= (1, 13) and not v < (2,)
        assert Version(v) >= Version("2.0") and Version(v).local == "lazytorch.0.1.0"
        print("ok")
        """,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    assert lt.__version__ == "0.1.0"  # as itself, lazytorch reports its own version
    assert lt._version.TORCH_API == importlib.metadata.version("torch").split("+")[0]
