"""Checkpoints both ways with real torch: files lazytorch.save writes load in torch.load
(weights_only=True included), and files torch.save writes load in lazytorch.load, values,
dtypes, strides, storage sharing and devices included; a pretrained model and its Adam
state carry over and give torch's outputs."""

from __future__ import annotations

import argparse
import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import ALL, BACKENDS, arr, to_lt, to_torch
from lazytorch.serialization import CheckpointError


@pytest.fixture(autouse=True)
def _interpreter():
    # Materializing saved tensors and the small models run programs; no compiles needed.
    with lt.backend("interpreter"):
        yield


def lt_to_torch_bytes(obj, **save_kwargs) -> io.BytesIO:
    buf = io.BytesIO()
    lt.save(obj, buf, **save_kwargs)
    buf.seek(0)
    return buf


def torch_bytes(obj, **save_kwargs) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf, **save_kwargs)
    buf.seek(0)
    return buf


def assert_same(lt_t, torch_t):
    assert isinstance(lt_t, lt.Tensor) and isinstance(torch_t, torch.Tensor)
    assert lt_t.dtype.name == str(torch_t.dtype).removeprefix("torch.")
    assert tuple(lt_t.shape) == tuple(torch_t.shape)
    np.testing.assert_array_equal(lt_t.numpy(), torch_t.numpy())


VIEWS = {
    "whole": lambda x: x,
    "transpose": lambda x: x.T,
    "column": lambda x: x[:, 1],
    "block": lambda x: x[1:, 1:3],
    "strided": lambda x: x[::2, 1::2],
    "row_expand": lambda x: x[0].expand(3, 5),
    "unsqueeze": lambda x: x[2:3].unsqueeze(0),
    "reshape_of_slice": lambda x: x[1:3].reshape(2, 5, 1),
}


# -- lazytorch.save -> torch.load --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (2, 3, 4)])
def test_torch_loads_every_dtype_and_shape(dtype, shape):
    a = arr(*shape, dtype=dtype, low=-100, high=100)
    out = torch.load(lt_to_torch_bytes({"t": lt.from_numpy(a)}), weights_only=True)
    assert_same(lt.from_numpy(a), out["t"])


def test_torch_loads_views_with_their_sharing():
    x = lt.arange(20.0).reshape(4, 5)
    obj = {name: view(x) for name, view in VIEWS.items()}
    out = torch.load(lt_to_torch_bytes(obj), weights_only=True)
    expected = torch.arange(20.0).reshape(4, 5)
    for name, view in VIEWS.items():
        assert_same(obj[name], view(expected))
        assert out[name].stride() == view(expected).stride(), name
        assert out[name].storage_offset() == view(expected).storage_offset(), name
    # One storage, as torch writes views of one tensor.
    assert len({t.untyped_storage().data_ptr() for t in out.values()}) == 1
    out["whole"].mul_(-1)
    assert out["block"][0, 0].item() == -6.0


def test_a_view_saved_alone_is_stored_compactly():
    x = lt.arange(1000.0).reshape(100, 10)
    data = lt_to_torch_bytes({"row": x[3]}).getvalue()
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.getinfo("archive/data/0").file_size == 10 * 4  # torch would write all 1000
    assert torch.load(io.BytesIO(data))["row"].tolist() == [float(v) for v in range(30, 40)]


def test_torch_loads_parameters_state_dicts_and_plain_values():
    model = lt.nn.Sequential(lt.nn.Linear(3, 4), lt.nn.BatchNorm1d(4))
    obj = {
        "state": model.state_dict(),
        "param": model[0].weight,
        "size": lt.Size([2, 3]),
        "dtype": lt.float16,
        "device": lt.device("cpu"),
        "set": {1, 2},
        "bytes": b"\x00\xff",
        "nested": [(1, 2.5, None, True, "s")],
    }
    out = torch.load(lt_to_torch_bytes(obj), weights_only=True)
    assert type(out["state"]) is OrderedDict and list(out["state"]) == list(obj["state"])
    for k, v in obj["state"].items():
        assert_same(v, out["state"][k])
    assert out["state"]["1.num_batches_tracked"].dtype == torch.int64
    assert isinstance(out["param"], torch.nn.Parameter) and out["param"].requires_grad
    assert out["size"] == torch.Size([2, 3]) and out["dtype"] is torch.float16
    assert out["device"] == torch.device("cpu")
    assert out["set"] == {1, 2} and out["bytes"] == b"\x00\xff"
    assert out["nested"] == [(1, 2.5, None, True, "s")]


def test_torch_loads_the_legacy_format_and_memory_maps_the_zip(tmp_path):
    obj = {"w": lt.arange(6.0).reshape(2, 3), "i": lt.tensor([1, 2], dtype=lt.int16)}
    legacy = torch.load(lt_to_torch_bytes(obj, _use_new_zipfile_serialization=False))
    assert legacy["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert legacy["i"].dtype == torch.int16
    # Each storage's bytes start on a 64-byte boundary, which torch's mmap requires.
    path = tmp_path / "ckpt.pt"
    lt.save(obj, path)
    mapped = torch.load(path, mmap=True, weights_only=True)
    assert mapped["i"].tolist() == [1, 2]


# -- torch.save -> lazytorch.load --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (2, 3, 4)])
def test_every_dtype_and_shape_loads_from_torch(dtype, shape):
    t = to_torch(arr(*shape, dtype=dtype, low=-100, high=100))
    out = lt.load(torch_bytes({"t": t}))
    assert_same(out["t"], t)
    assert out["t"].is_materialized


def test_non_contiguous_and_shared_torch_tensors_load_as_views():
    x = torch.arange(20.0).reshape(4, 5)
    obj = {name: view(x) for name, view in VIEWS.items()}
    obj["rows_of_7"] = x.as_strided((3, 2), (1, 7), 2)  # rows of 7 over the flat storage
    obj["windows"] = x.as_strided((3, 3), (1, 1), 4)  # overlapping: no lazytorch view
    out = lt.load(torch_bytes(obj))
    for name, t in obj.items():
        assert_same(out[name], t)
    # Writes through the base reach the views that lazytorch can express, as in torch.
    out["whole"].add_(100)
    x.add_(100)
    for name in [*VIEWS, "rows_of_7"]:
        assert_same(out[name], obj[name])
    assert out["windows"].tolist() == obj["windows"].sub(100).tolist()  # a copy


def test_torch_views_saved_alone_keep_their_values():
    x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    for view in (x.permute(2, 0, 1), x[:, 1], x[..., ::3], x[1].T, x[:1, :, 2:].expand(3, 3, 2)):
        out = lt.load(torch_bytes([view]))[0]
        assert_same(out, view)
        assert out._view is None  # nothing else read that storage: no root kept


def test_a_torch_state_dict_loads_into_a_lazytorch_cnn():
    torch.manual_seed(0)

    def cnn(nn):
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 4, 3),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(4 * 2 * 2, 5),
        )

    reference = cnn(torch.nn)
    with torch.no_grad():  # trained-looking batch-norm statistics, not the defaults
        for m in reference.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
                m.num_batches_tracked.fill_(7)
    reference.eval()
    model = cnn(lt.nn)
    model.load_state_dict(lt.load(torch_bytes(reference.state_dict())))
    model.eval()
    x = arr(2, 3, 8, 8, seed=3)
    for backend in BACKENDS:
        with lt.backend(backend):
            got = model(to_lt(x)).detach().numpy()
        np.testing.assert_allclose(
            got, reference(to_torch(x)).detach().numpy(), rtol=1e-5, atol=1e-5
        )
    assert model[1].num_batches_tracked.item() == 7


def test_a_torch_state_dict_loads_into_a_lazytorch_transformer_encoder():
    torch.manual_seed(1)

    def encoder(nn):
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    reference = encoder(torch.nn).eval()
    model = encoder(lt.nn)
    model.load_state_dict(lt.load(torch_bytes(reference.state_dict())))
    model.eval()
    x = arr(2, 5, 8, seed=4)
    got = model(to_lt(x)).detach().numpy()
    np.testing.assert_allclose(got, reference(to_torch(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_a_torch_adam_state_continues_training_in_lazytorch():
    torch.manual_seed(2)
    x, y = arr(6, 3, seed=5), arr(6, 2, seed=6)

    def loss_of(model, lib, to):
        return ((model(to(x)) - to(y)) ** 2).mean()

    reference = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(reference.parameters(), lr=0.05, weight_decay=0.01)
    for _ in range(2):
        opt.zero_grad()
        loss_of(reference, torch, to_torch).backward()
        opt.step()
    ckpt = lt.load(torch_bytes({"model": reference.state_dict(), "opt": opt.state_dict()}))
    assert isinstance(ckpt["opt"]["state"][0]["step"], lt.Tensor)  # torch keeps step as a tensor
    model = lt.nn.Linear(3, 2)
    model.load_state_dict(ckpt["model"])
    lt_opt = lt.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
    lt_opt.load_state_dict(ckpt["opt"])
    for _ in range(2):
        opt.zero_grad()
        loss_of(reference, torch, to_torch).backward()
        opt.step()
        lt_opt.zero_grad()
        loss_of(model, lt, to_lt).backward()
        lt_opt.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_parameters_sizes_dtypes_and_devices_load_as_lazytorch_ones():
    obj = {
        "p": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "g": torch.ones(3, requires_grad=True),
        "size": torch.Size([1, 2]),
        "dtypes": [torch.float32, torch.int64, torch.bool],
        "device": torch.device("cpu"),
        "od": OrderedDict(a=1),
        "set": {3},
        "bytes": b"xy",
    }
    out = lt.load(torch_bytes(obj))
    assert isinstance(out["p"], lt.nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], lt.nn.Parameter) and not out["frozen"].requires_grad
    assert out["g"].requires_grad and out["g"].is_leaf
    assert type(out["size"]) is lt.Size and out["size"] == (1, 2)
    assert out["dtypes"] == [lt.float32, lt.int64, lt.bool]
    assert out["device"] == lt.device("cpu")
    assert type(out["od"]) is OrderedDict and out["set"] == {3} and out["bytes"] == b"xy"


def test_torch_legacy_format_loads():
    x = torch.arange(12.0).reshape(3, 4)
    obj = {"x": x, "t": x.T, "i": torch.tensor([1, -2], dtype=torch.int8)}
    out = lt.load(torch_bytes(obj, _use_new_zipfile_serialization=False))
    for k, t in obj.items():
        assert_same(out[k], t)
    out["x"].zero_()
    assert out["t"].sum().item() == 0.0


def test_complex_tensors_and_parameters_load_from_torch_and_torch_loads_ours():
    """A Fourier layer's complex weights both ways: torch's ComplexFloatStorage /
    ComplexDoubleStorage (a transposed view included) load as lazytorch's complex tensors and
    parameters, weights-only; what lazytorch saves torch loads with the same values."""
    a = np.random.default_rng(3).standard_normal((3, 4, 2)).astype(np.float32)
    tw = torch.nn.Parameter(torch.view_as_complex(torch.tensor(a)))
    theirs = {
        "w": tw,
        "t": tw.detach().T,
        "d": tw.detach().to(torch.complex128),
        "r": torch.ones(2),
    }
    got = lt.load(torch_bytes(theirs))
    assert isinstance(got["w"], lt.nn.Parameter) and got["w"].requires_grad
    assert got["d"].dtype is lt.complex128
    for key in ("w", "t", "d"):
        np.testing.assert_array_equal(got[key].detach().numpy(), theirs[key].detach().numpy())
    model = lt.nn.Module()
    model.w = lt.nn.Parameter(lt.zeros(3, 4, dtype=lt.cfloat))
    model.load_state_dict({"w": got["w"]})
    np.testing.assert_array_equal(model.w.detach().numpy(), tw.detach().numpy())

    lw = lt.nn.Parameter(lt.view_as_complex(lt.tensor(a)))
    ours = {"sd": OrderedDict(w=lw), "z": lt.view_as_complex(lt.tensor(a)) * 2}
    back = torch.load(lt_to_torch_bytes(ours))  # weights_only, torch's default
    assert back["sd"]["w"].dtype == torch.complex64
    np.testing.assert_array_equal(back["sd"]["w"].detach().numpy(), tw.detach().numpy())
    np.testing.assert_array_equal(back["z"].numpy(), 2 * tw.detach().numpy())
    again = lt.load(lt_to_torch_bytes(ours))
    np.testing.assert_array_equal(again["z"].numpy(), back["z"].numpy())


def test_complex32_tensors_are_refused():
    with pytest.raises((CheckpointError, pickle.UnpicklingError)):
        lt.load(torch_bytes({"w": torch.ones(2, dtype=torch.complex32)}))


def test_bfloat16_tensors_load_and_save_bit_exactly():
    w = torch.randn(3, 5).bfloat16()
    got = lt.load(torch_bytes({"w": w, "v": w[:, 1:3]}))
    assert got["w"].dtype is lt.bfloat16 and got["v"].dtype is lt.bfloat16
    bits = got["w"].numpy().view("uint16")
    assert (bits == w.view(torch.int16).numpy().view("uint16")).all()
    assert got["v"].float().tolist() == w[:, 1:3].float().tolist()
    buf = io.BytesIO()
    lt.save({"w": got["w"]}, buf)
    assert torch.equal(torch.load(io.BytesIO(buf.getvalue()))["w"], w)


def with_location(data: bytes, location: str) -> bytes:
    """A torch zip whose storages claim to have been saved on `location`."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            member = src.read(info)
            if info.filename.endswith("data.pkl"):
                old = pickle.BINUNICODE + (3).to_bytes(4, "little") + b"cpu"
                new = pickle.BINUNICODE + len(location).to_bytes(4, "little") + location.encode()
                assert old in member
                member = member.replace(old, new)
            dst.writestr(info, member)
    return out.getvalue()


def test_map_location_moves_cuda_storages_to_the_cpu():
    data = with_location(torch_bytes({"w": torch.arange(3.0)}).getvalue(), "cuda:0")
    maps = ["cpu", lt.device("cpu"), torch.device("cpu"), {"cuda:0": "cpu"}]
    maps += [lambda storage, loc: storage, lambda storage, loc: storage.cpu()]
    for map_location in maps:
        out = lt.load(io.BytesIO(data), map_location=map_location)
        assert out["w"].device == lt.device("cpu") and out["w"].tolist() == [0.0, 1.0, 2.0]
    seen = []
    lt.load(io.BytesIO(data), map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cuda:0"]
    if not lt.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"CUDA device but lazytorch\.cuda\.is_available"):
            lt.load(io.BytesIO(data))


def test_a_mixed_training_checkpoint_needs_weights_only_false():
    model = torch.nn.Linear(2, 2)
    obj = {
        "epoch": 3,
        "args": argparse.Namespace(lr=0.1, name="run"),
        "state": model.state_dict(),
        "arr": np.arange(3),
    }
    data = torch_bytes(obj).getvalue()
    with pytest.raises(pickle.UnpicklingError, match=r"argparse\.Namespace is not allowed") as info:
        lt.load(io.BytesIO(data))
    assert "add_safe_globals([Namespace])" in str(info.value)
    assert "weights_only=False" in str(info.value)
    out = lt.load(io.BytesIO(data), weights_only=False)
    assert out["epoch"] == 3 and out["args"] == obj["args"]
    np.testing.assert_array_equal(out["arr"], np.arange(3))
    assert_same(out["state"]["weight"], model.weight.detach())
    # And NumPy alone is refused by name, as torch refuses it.
    with pytest.raises(pickle.UnpicklingError, match=r"numpy\.\S+ is not allowed.*NumPy arrays"):
        lt.load(torch_bytes({"arr": np.arange(3)}))


def test_the_same_mixed_checkpoint_saved_by_lazytorch_loads_in_torch():
    model = lt.nn.Linear(2, 2)
    obj = {
        "epoch": 3,
        "args": argparse.Namespace(lr=0.1),
        "state": model.state_dict(),
        "arr": np.arange(3),
    }
    out = torch.load(lt_to_torch_bytes(obj), weights_only=False)
    assert out["epoch"] == 3 and out["args"] == obj["args"]
    np.testing.assert_array_equal(out["arr"], np.arange(3))
    assert_same(model.state_dict()["weight"], out["state"]["weight"])


def test_torchscript_archives_are_named():
    # torch.jit.save's layout: the pickle of constants and the model's code beside data.pkl.
    data = torch_bytes({"w": torch.ones(1)}).getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in ("archive/data.pkl", "archive/constants.pkl", "archive/code/__torch__.py"):
            zf.writestr(name, zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl"))
    with pytest.raises(CheckpointError, match="TorchScript archive"):
        lt.load(io.BytesIO(out.getvalue()))


def test_a_whole_torch_model_pickle_loads_with_weights_only_false():
    torch.manual_seed(3)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    data = torch_bytes(reference).getvalue()
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.container\.Sequential"):
        lt.load(io.BytesIO(data))
    model = lt.load(io.BytesIO(data), weights_only=False)  # torch.nn.* -> lazytorch.nn.*
    assert type(model) is lt.nn.Sequential and type(model[0]) is lt.nn.Linear
    x = arr(2, 3, seed=7)
    np.testing.assert_allclose(
        model(to_lt(x)).detach().numpy(), reference(to_torch(x)).detach().numpy(), rtol=1e-6
    )
