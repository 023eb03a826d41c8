"""torch.utils.tensorboard: lazytorch's SummaryWriter writes the events torch's writes.

Each test makes the same calls on both writers (lazytorch tensors on ours, torch tensors of
the same values on torch's, or the same NumPy arrays and numbers on both), with a fixed
``walltime``, then reads both logs back: with TensorBoard's ``EventAccumulator`` (tags,
steps, values) and record by record (the ``Event`` protos must be equal, byte for byte
apart from the file's creation time). The ``tensorboard`` package is in the ``test``
extras, so these run in CI.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import (
    EventAccumulator,
)
from tensorboard.backend.event_processing.event_file_loader import (
    EventFileLoader,
)
from torch.utils.tensorboard import SummaryWriter as TorchWriter

from lazytorch.utils.tensorboard import SummaryWriter as LazyWriter

WALL = 1_700_000_000.0


def _events(log_dir: str) -> dict[str, list[bytes]]:
    """Every run directory under ``log_dir`` -> its events (serialized, minus the header)."""
    runs: dict[str, list[bytes]] = {}
    for root, _dirs, files in os.walk(log_dir):
        for name in sorted(files):
            if "tfevents" not in name:
                continue
            rel = os.path.relpath(root, log_dir)
            events = list(EventFileLoader(os.path.join(root, name)).Load())
            assert events[0].HasField("file_version")
            runs.setdefault(rel, []).extend(e.SerializeToString() for e in events[1:])
    return runs


def _both(tmp_path, calls, *, flush_only: bool = False) -> tuple[str, str]:
    """Run ``calls(writer, lib)`` on both writers; return their log directories."""
    dirs = []
    for name, writer_cls, lib in (("torch", TorchWriter, torch), ("lazy", LazyWriter, lt)):
        log_dir = str(tmp_path / name)
        writer = writer_cls(log_dir)
        calls(writer, lib)
        if flush_only:
            writer.flush()
        else:
            writer.close()
        dirs.append(log_dir)
    return dirs[0], dirs[1]


def _same_events(tmp_path, calls) -> tuple[str, str]:
    torch_dir, lazy_dir = _both(tmp_path, calls)
    expected, got = _events(torch_dir), _events(lazy_dir)
    assert sorted(got) == sorted(expected)
    for run in expected:
        assert got[run] == expected[run], run
    return torch_dir, lazy_dir


def _tensor(lib, array: np.ndarray):
    return lib.tensor(array)


def test_scalars_read_back_equal(tmp_path):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(6).astype(np.float32)

    def calls(w, lib):
        for step, v in enumerate(values):
            w.add_scalar("loss/train", _tensor(lib, v), step, walltime=WALL)  # 0-d tensor
            w.add_scalar("loss/numpy", v, step, walltime=WALL)  # numpy scalar
            w.add_scalar("acc", float(step) / 7, global_step=step, walltime=WALL)
            w.add_scalar("int", step * 3, step, walltime=WALL)
            w.add_scalar("one", _tensor(lib, np.array([v])), step, walltime=WALL)  # shape (1,)
        w.add_scalar("new", _tensor(lib, values[0]), 9, walltime=WALL, new_style=True)
        w.add_scalar("dbl", 0.1, 9, walltime=WALL, new_style=True, double_precision=True)
        w.add_scalar("nostep", 2.5, walltime=WALL)

    torch_dir, lazy_dir = _same_events(tmp_path, calls)
    ta, la = EventAccumulator(torch_dir), EventAccumulator(lazy_dir)
    ta.Reload()
    la.Reload()
    assert la.Tags()["scalars"] == ta.Tags()["scalars"]
    for tag in ta.Tags()["scalars"]:
        assert [(e.step, e.value) for e in la.Scalars(tag)] == [
            (e.step, e.value) for e in ta.Scalars(tag)
        ]
    assert [e.value for e in la.Scalars("loss/train")] == pytest.approx(values.tolist())


def test_lazy_loss_from_training_step(tmp_path):
    # a loss still lazy when logged: the call reads its value
    x = (np.arange(12, dtype=np.float32) / 4 - 1).reshape(4, 3)  # exact sums: same loss bits

    def calls(w, lib):
        t = lib.tensor(x, requires_grad=True)
        loss = (t * t).mean() * 2 + 1
        loss.backward()
        w.add_scalar("loss", loss, 0, walltime=WALL)
        w.add_histogram("grad", t.grad, 0, walltime=WALL)

    _same_events(tmp_path, calls)


def test_add_scalars_writes_one_run_per_series(tmp_path):
    def calls(w, lib):
        for step in range(3):
            w.add_scalars(
                "run/14h",
                {"xsinx": step * np.sin(step / 5), "tanx": _tensor(lib, np.float32(step) / 3)},
                step,
                walltime=WALL,
            )

    torch_dir, lazy_dir = _same_events(tmp_path, calls)
    runs = sorted(n for n in os.listdir(torch_dir) if "tfevents" not in n)
    assert sorted(n for n in os.listdir(lazy_dir) if "tfevents" not in n) == runs
    assert "run_14h_xsinx" in os.listdir(lazy_dir)


@pytest.mark.parametrize("bins", ["tensorflow", "auto", 7, "fd"])
def test_histograms(tmp_path, bins):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((50, 3)).astype(np.float32)

    def calls(w, lib):
        w.add_histogram("weights", _tensor(lib, data), 0, bins=bins, walltime=WALL)
        w.add_histogram("np", data * 3 + 1, 1, bins=bins, walltime=WALL)
        w.add_histogram("ints", _tensor(lib, np.arange(20).reshape(4, 5)), 2, walltime=WALL)
        w.add_histogram("zero-d", _tensor(lib, np.float32(1.5)), 3, walltime=WALL)
        w.add_histogram("merged", data, 4, bins=bins, max_bins=3, walltime=WALL)
        w.add_histogram("f64", _tensor(lib, data.astype(np.float64)), 5, walltime=WALL)

    _torch_dir, lazy_dir = _same_events(tmp_path, calls)
    la = EventAccumulator(lazy_dir)
    la.Reload()
    hist = la.Histograms("weights")[0].histogram_value
    assert hist.num == data.size and hist.min == pytest.approx(float(data.min()))


def test_histogram_raw_and_empty_errors(tmp_path):
    def calls(w, lib):
        w.add_histogram_raw("raw", 0.0, 3.0, 4, 6.0, 14.0, [1.0, 2.0, 3.0], [1, 1, 2], 0, WALL)

    _same_events(tmp_path, calls)
    w = LazyWriter(str(tmp_path / "err"))
    with pytest.raises(ValueError, match="The input has no element"):
        w.add_histogram("empty", lt.zeros(0), 0)
    with pytest.raises(ValueError, match="len\\(bucket_limits\\)"):
        w.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0], [1, 2])
    w.close()


def test_images(tmp_path):
    rng = np.random.default_rng(2)
    chw = rng.random((3, 6, 5)).astype(np.float32)
    batch = rng.random((10, 1, 4, 3)).astype(np.float32)
    hwc_u8 = (rng.random((5, 4, 3)) * 255).astype(np.uint8)

    def calls(w, lib):
        w.add_image("chw", _tensor(lib, chw), 0, walltime=WALL)
        w.add_image("hw", _tensor(lib, chw[0] * 2 - 0.5), 1, walltime=WALL, dataformats="HW")
        w.add_image("hwc_u8", _tensor(lib, hwc_u8), 2, walltime=WALL, dataformats="HWC")
        w.add_image("np1", chw[:1], 3, walltime=WALL)
        w.add_images("batch", _tensor(lib, batch), 4, walltime=WALL)
        w.add_images("nhwc", batch.transpose(0, 2, 3, 1), 5, walltime=WALL, dataformats="NHWC")
        w.add_image("f64", _tensor(lib, chw.astype(np.float64)), 6, walltime=WALL)

    _torch_dir, lazy_dir = _same_events(tmp_path, calls)
    la = EventAccumulator(lazy_dir)
    la.Reload()
    img = la.Images("batch")[0]
    assert (img.height, img.width) == (8, 24)  # ten 4x3 images, eight per row


def test_text_and_hparams(tmp_path):
    def calls(w, lib):
        w.add_text("notes", "epoch 1: **ok**", 0, walltime=WALL)
        w.add_text("notes", "üñí", 1, walltime=WALL)
        w.add_hparams(
            {"lr": 0.1, "bsize": 4, "opt": "sgd", "nesterov": True, "t": _tensor(lib, [0.5])},
            {"hparam/accuracy": 0.9, "hparam/loss": _tensor(lib, np.float32(0.25))},
            hparam_domain_discrete={"opt": ["sgd", "adam"], "bsize": [4, 8]},
            run_name="trial",
            global_step=3,
        )

    torch_dir, lazy_dir = _both(tmp_path, calls)
    # the hparams run's events carry time.time(): compare everything but wall_time
    expected, got = _strip_times(_events(torch_dir)), _strip_times(_events(lazy_dir))
    assert got == expected
    assert "trial" in got
    la = EventAccumulator(os.path.join(lazy_dir, "trial"))
    la.Reload()
    assert la.Scalars("hparam/loss")[0].value == 0.25
    assert la.Scalars("hparam/loss")[0].step == 3


def _strip_times(runs: dict[str, list[bytes]]) -> dict[str, list[bytes]]:
    from tensorboard.compat.proto.event_pb2 import Event

    out = {}
    for run, events in runs.items():
        stripped = []
        for raw in events:
            e = Event.FromString(raw)
            e.wall_time = 0
            stripped.append(e.SerializeToString())
        out[run] = stripped
    return out


def test_hparams_errors(tmp_path):
    w = LazyWriter(str(tmp_path / "err"))
    with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
        w.add_hparams([1], {})
    with pytest.raises(ValueError, match="value should be one of int, float, str, bool"):
        w.add_hparams({"a": [1]}, {})
    with pytest.raises(TypeError, match=r"hparam_domain_discrete\[a\]"):
        w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": ["x"]})
    w.close()


def test_tensor_pr_curve_audio_custom_scalars(tmp_path):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 40)
    preds = rng.random(40).astype(np.float32)
    snd = (rng.random((1, 64)) * 2 - 1).astype(np.float32)

    def calls(w, lib):
        w.add_tensor("f32", _tensor(lib, preds[:6].reshape(2, 3)), 0, walltime=WALL)
        w.add_tensor("i64", _tensor(lib, labels[:5]), 0, walltime=WALL)
        w.add_tensor("b", _tensor(lib, labels[:4] > 0), 0, walltime=WALL)
        w.add_tensor("h", _tensor(lib, preds[:3]).to(lib.float16), 0, walltime=WALL)
        w.add_pr_curve("pr", _tensor(lib, labels), _tensor(lib, preds), 1, walltime=WALL)
        w.add_pr_curve("pr_np", labels, preds, 2, num_thresholds=20, walltime=WALL)
        w.add_audio("snd", _tensor(lib, snd), 3, sample_rate=8000, walltime=WALL)
        w.add_custom_scalars_multilinechart(["loss/a", "loss/b"])
        w.add_custom_scalars_marginchart(["m", "lo", "hi"], category="c", title="t")

    torch_dir, lazy_dir = _both(tmp_path, calls)
    # custom scalars carry time.time()
    assert _strip_times(_events(lazy_dir)) == _strip_times(_events(torch_dir))


def test_embedding_files_equal(tmp_path):
    rng = np.random.default_rng(4)
    mat = rng.standard_normal((6, 3)).astype(np.float32)
    imgs = rng.random((6, 3, 4, 5)).astype(np.float32)

    def calls(w, lib):
        w.add_embedding(_tensor(lib, mat), metadata=list("abcdef"), label_img=_tensor(lib, imgs))
        w.add_embedding(
            mat * 2,
            metadata=[[i, str(i * i)] for i in range(6)],
            metadata_header=["i", "sq"],
            global_step=7,
            tag="a/b",
        )

    torch_dir, lazy_dir = _both(tmp_path, calls)
    files = []
    for root, _d, names in os.walk(torch_dir):
        files += [os.path.relpath(os.path.join(root, n), torch_dir) for n in names]
    files = [f for f in files if "tfevents" not in f]
    assert len(files) == 6, files
    for rel in files:
        with (
            open(os.path.join(torch_dir, rel), "rb") as a,
            open(os.path.join(lazy_dir, rel), "rb") as b,
        ):
            assert b.read() == a.read(), rel


def test_flush_context_manager_purge_and_reopen(tmp_path):
    def calls(w, lib):
        w.add_scalar("a", 1.0, 0, walltime=WALL)

    torch_dir, lazy_dir = _both(tmp_path, calls, flush_only=True)
    assert _events(lazy_dir) == _events(torch_dir)  # flush alone writes the pending events

    for name, cls in (("pt", TorchWriter), ("pl", LazyWriter)):
        with cls(str(tmp_path / name), purge_step=5, filename_suffix=".x") as w:
            w.add_scalar("a", 2.0, 6, walltime=WALL)
        w.close()  # a second close does nothing
        w.add_scalar("a", 3.0, 7, walltime=WALL)  # reopens a new event file
        w.close()
    expected = _strip_times(_events(str(tmp_path / "pt")))
    assert _strip_times(_events(str(tmp_path / "pl"))) == expected
    assert all(n.endswith(".x") for n in os.listdir(tmp_path / "pl"))


def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = LazyWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_lr0.1")
    assert os.path.isdir(w.get_logdir())
    w.close()


def test_graph_warns_and_unbuilt_raise(tmp_path):
    w = LazyWriter(str(tmp_path / "g"))
    model = lt.nn.Linear(2, 1)
    with pytest.warns(UserWarning, match="add_graph: lazytorch has no torch.jit.trace"):
        w.add_graph(model, lt.zeros(1, 2))
    with pytest.raises(NotImplementedError, match="add_video"):
        w.add_video("v", lt.zeros(1, 2, 3, 4, 4))
    with pytest.raises(NotImplementedError, match="add_mesh"):
        w.add_mesh("m", lt.zeros(1, 3, 3))
    with pytest.raises(NotImplementedError, match="add_image_with_boxes"):
        w.add_image_with_boxes("i", lt.zeros(3, 4, 4), lt.zeros(1, 4))
    with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
        w.add_scalar("bad", [1.0])
    with pytest.raises(AssertionError, match="Tensor should contain one element"):
        w.add_scalar("bad", lt.zeros(2))
    w.close()


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def calls(w, lib):
        fig = plt.figure(figsize=(1, 1), dpi=20)
        plt.plot([0, 1], [1, 0])
        w.add_figure("fig", fig, 0, walltime=WALL)
        figs = [plt.figure(figsize=(1, 1), dpi=10) for _ in range(2)]
        w.add_figure("figs", figs, 1, walltime=WALL)

    _same_events(tmp_path, calls)


def test_signatures_match_torch():
    for name, member in inspect.getmembers(TorchWriter, inspect.isfunction):
        if name.startswith("_") and name != "__init__":
            continue
        ours = getattr(LazyWriter, name)
        assert (
            inspect.signature(ours).parameters.keys() == inspect.signature(member).parameters.keys()
        ), name
        for (pn, p), (_qn, q) in zip(
            inspect.signature(ours).parameters.items(),
            inspect.signature(member).parameters.items(),
            strict=True,
        ):
            assert (p.default, p.kind) == (q.default, q.kind), (name, pn)


def test_import_without_tensorboard_raises_as_torch():
    code = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "try:\n    import {mod}\nexcept ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    outs = []
    for mod in ("torch.utils.tensorboard", "lazytorch.utils.tensorboard"):
        result = subprocess.run(
            [sys.executable, "-c", code.format(mod=mod)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        outs.append(result.stdout.strip())
    assert outs[1] == outs[0]
    assert outs[0].startswith("ModuleNotFoundError")


def test_as_torch_script(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.tensorboard import SummaryWriter\n"
        "w = SummaryWriter('logs')\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "loss = (x * 2).sum()\n"
        "loss.backward()\n"
        "w.add_scalar('loss', loss.item(), 0)\n"
        "w.add_histogram('g', x.grad, 0)\n"
        "w.close()\n"
        "print(type(w).__module__)\n"
    )
    with warnings.catch_warnings():
        result = subprocess.run(
            [sys.executable, "-m", "lazytorch", "run", "--as-torch", str(script)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    assert result.returncode == 0, result.stderr
    assert "lazytorch.utils.tensorboard" in result.stdout
    acc = EventAccumulator(str(tmp_path / "logs"))
    acc.Reload()
    assert acc.Scalars("loss")[0].value == 6.0
