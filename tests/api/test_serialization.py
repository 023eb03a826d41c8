"""lazytorch.save / lazytorch.load on their own: round trips (tensors, views sharing a root,
Parameters, plain Python objects), torch's archive layout, weights-only refusals, atomic
writes, refusing every damaged or foreign file with CheckpointError (never a crash or a
half-built object), and lazytorch's first format still loading. Files exchanged with real
torch are tests/api/test_torch_checkpoints.py."""

from __future__ import annotations

import argparse
import collections
import dataclasses
import io
import json
import math
import os
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import ALL, arr
from lazytorch import serialization
from lazytorch.serialization import CheckpointError


@pytest.fixture(autouse=True)
def _interpreter():
    # Only materializing the saved tensors runs programs; the interpreter skips compiles.
    with lt.backend("interpreter"):
        yield


def round_trip(obj, save_kwargs=None, **load_kwargs):
    buf = io.BytesIO()
    lt.save(obj, buf, **(save_kwargs or {}))
    buf.seek(0)
    return lt.load(buf, **load_kwargs)


def saved_bytes(obj) -> bytes:
    buf = io.BytesIO()
    lt.save(obj, buf)
    return buf.getvalue()


def assert_tensor_equal(t, expected: np.ndarray):
    assert isinstance(t, lt.Tensor) and t.is_materialized
    assert t.dtype.name == expected.dtype.name
    assert tuple(t.shape) == expected.shape
    np.testing.assert_array_equal(t.numpy(), expected)


def assert_same_tree(a, b):
    """Equal structure, exact container and scalar types, equal tensors (NaN == NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(b, lt.Tensor):
        assert_tensor_equal(a, np.asarray(b.numpy()))
    elif isinstance(b, dict):
        assert list(a) == list(b)
        for k in b:
            assert_same_tree(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_tree(x, y)
    elif isinstance(b, float) and math.isnan(b):
        assert math.isnan(a)
    else:
        assert a == b
        if isinstance(b, float):
            assert math.copysign(1, a) == math.copysign(1, b)


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def npy(a: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


def manifest(root, tensors=(), **overrides) -> bytes:
    m = {"format": "lazytorch.save", "version": 1, "tensors": tensors, "root": root}
    m.update(overrides)
    return json.dumps(m).encode()


def load_bytes(data: bytes, **load_kwargs):
    return lt.load(io.BytesIO(data), **load_kwargs)


# -- round trips -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips(dtype, shape):
    a = arr(*shape, dtype=dtype, low=-100, high=100)
    assert_tensor_equal(round_trip(lt.from_numpy(a)), a)


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x.T,
        lambda x: x[::2],
        lambda x: x[:, 1],
        lambda x: x[1:, 1:3],
        lambda x: x.permute(1, 0)[::2],
        lambda x: x.expand(2, 4, 5),
    ],
)
def test_views_save_their_values(view):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    expected = np.asarray(view(torch.from_numpy(a)).numpy())
    assert_tensor_equal(round_trip(view(lt.from_numpy(a))), expected)


def test_lazy_tensors_are_materialized_in_one_program():
    x = lt.arange(6.0)
    sd = {"a": x * 2, "b": (x + 1).sum(), "c": [x.exp()]}
    lt.metrics.reset()
    out = round_trip(sd)
    assert lt.metrics.counters()["materializations"] == 1
    assert out["b"].item() == 21.0


def test_state_dict_like_structures_round_trip():
    w = lt.from_numpy(arr(4, 3, seed=1))
    obj = {
        "model": OrderedDict(
            [("fc.weight", w), ("fc.bias", lt.zeros(4)), ("bn.num_batches", lt.tensor(7))]
        ),
        "optimizer": {
            "state": {0: {"step": 3, "exp_avg": lt.ones(4, 3)}, 1: {"step": 3}},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "name": None}],
        },
        "epoch": 12,
        "best": float("inf"),
        "worst": -math.inf,
        "loss": math.nan,
        "neg_zero": -0.0,
        "big": 2**100,
        "flags": [True, False],
        "text": "héllo ✓",
        (1, "tuple key"): (),
        None: [],
        2.5: {},
    }
    out = round_trip(obj)
    assert_same_tree(out, obj)
    assert type(out["model"]) is OrderedDict and type(out["optimizer"]) is dict


def test_shared_tensors_stay_shared_and_distinct_ones_stay_distinct():
    w = lt.arange(3.0)
    same_values = lt.arange(3.0)
    out = round_trip({"a": w, "b": [w, (w,)], "c": same_values})
    assert out["a"] is out["b"][0] is out["b"][1][0]
    assert out["c"] is not out["a"]
    zf = zipfile.ZipFile(io.BytesIO(saved_bytes({"a": w, "b": w})))
    assert sum(n.startswith("archive/data/") for n in zf.namelist()) == 1


def test_views_of_one_tensor_load_as_views_of_one_tensor():
    x = lt.arange(12.0).reshape(3, 4)
    out = round_trip({"x": x, "t": x.T, "row": x[1], "cols": x[:, ::2]})
    zf = zipfile.ZipFile(io.BytesIO(saved_bytes({"x": x, "t": x.T})))
    assert sum(n.startswith("archive/data/") for n in zf.namelist()) == 1
    out["x"].mul_(-1)
    assert out["t"].tolist() == (-x.T).tolist()
    assert out["row"].tolist() == [-4.0, -5.0, -6.0, -7.0]
    out["cols"].zero_()  # and a write through a view reaches the others
    assert out["row"].tolist() == [0.0, -5.0, 0.0, -7.0]
    alone = round_trip({"row": x[1]})["row"]
    assert alone._view is None and alone.tolist() == [4.0, 5.0, 6.0, 7.0]


def test_loaded_tensors_are_independent_of_each_other():
    out = round_trip([lt.ones(2), lt.ones(2)])
    out[0].add_(1)
    assert out[0].tolist() == [2.0, 2.0] and out[1].tolist() == [1.0, 1.0]


def test_paths_and_file_objects(tmp_path):
    obj = {"x": lt.arange(5), "y": [1.5, "s"]}
    for target in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        lt.save(obj, target)
        assert_same_tree(lt.load(target), obj)
    with open(tmp_path / "c.pt", "wb") as f:
        lt.save(obj, f)
    with open(tmp_path / "c.pt", "rb") as f:
        assert_same_tree(lt.load(f), obj)
    # The archive may start after other data, at the stream's current position.
    buf = io.BytesIO()
    buf.write(b"header")
    lt.save(obj, buf)
    buf.seek(6)
    assert_same_tree(lt.load(buf), obj)
    # A non-seekable stream is read whole first.
    r, w = os.pipe()
    with os.fdopen(w, "wb") as pw:
        pw.write(saved_bytes(obj))
    with os.fdopen(r, "rb", buffering=0) as pr:
        assert_same_tree(lt.load(pr), obj)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pt", "b.pt", "c.pt"]


def test_saving_is_deterministic_and_the_archive_is_torchs_layout():
    obj = {"w": lt.ones(2, 2, dtype=lt.float16), "b": lt.tensor([True, False])}
    data = saved_bytes(obj)
    assert data == saved_bytes(obj)
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.namelist() == [
        "archive/data.pkl",
        "archive/.format_version",
        "archive/.storage_alignment",
        "archive/byteorder",
        "archive/data/0",
        "archive/data/1",
        "archive/version",
        "archive/.data/serialization_id",
    ]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
    assert zf.read("archive/byteorder") == b"little" and zf.read("archive/version") == b"3\n"
    assert len(zf.read("archive/.data/serialization_id")) == 40
    assert zf.read("archive/data/0") == np.ones(4, np.float16).tobytes()
    assert zf.read("archive/data/1") == b"\x01\x00"
    for name in ("archive/data/0", "archive/data/1"):  # aligned, so torch can mmap them
        info = zf.getinfo(name)
        local_extra = int.from_bytes(
            data[info.header_offset + 28 : info.header_offset + 30], "little"
        )
        start = info.header_offset + 30 + len(info.filename) + local_extra
        assert start % 64 == 0
    # The pickle names torch's globals, and nothing of lazytorch's.
    pkl = zf.read("archive/data.pkl")
    assert b"torch._utils\n_rebuild_tensor_v2" in pkl and b"torch\nHalfStorage" in pkl
    assert b"lazytorch" not in pkl


def test_save_works_in_strict_mode():
    x = lt.arange(4.0) * 3
    with lt.strict_mode():
        out = round_trip({"x": x, "views": [x[::2], x.reshape(2, 2).T]})
    assert out["x"].tolist() == [0.0, 3.0, 6.0, 9.0]
    assert out["views"][1].tolist() == [[0.0, 6.0], [3.0, 9.0]]


def test_save_and_load_are_lazily_imported():
    code = (
        "import sys, lazytorch as lt\n"
        "assert 'lazytorch.serialization' not in sys.modules\n"
        "assert 'json' not in sys.modules\n"
        "from lazytorch import serialization\n"
        "assert lt.save is serialization.save and lt.load is serialization.load\n"
        "assert {'save', 'load'} <= set(lt.__all__) and 'save' in dir(lt)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- beyond tensors ----------------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class RunConfig:
    lr: float
    layers: list


def test_plain_python_objects_round_trip_with_weights_only_false():
    loop: list = [1]
    loop.append({"self": loop})
    obj = {
        "args": argparse.Namespace(lr=0.1, name="run"),
        "config": RunConfig(1e-3, [2, 3]),
        "point": Point(1, lt.ones(2)),
        "array": np.arange(6, dtype=np.int16).reshape(2, 3),
        "scalar": np.float64(2.5),
        "sets": ({1, 2}, frozenset("ab")),
        "bytes": (b"\x00\xff", bytearray(b"ba")),
        "complex": 1 + 2j,
        "loop": loop,
        "size": lt.Size([2, 3]),
        "dtype": lt.int8,
        "device": lt.device("cpu"),
    }
    out = round_trip(obj, weights_only=False)
    assert out["args"] == obj["args"] and out["config"] == obj["config"]
    assert type(out["point"]) is Point and out["point"].y.tolist() == [1.0, 1.0]
    np.testing.assert_array_equal(out["array"], obj["array"])
    assert out["array"].dtype == np.int16 and type(out["scalar"]) is np.float64
    assert out["sets"] == obj["sets"] and out["bytes"] == obj["bytes"]
    assert out["complex"] == 1 + 2j and out["loop"][1]["self"] is out["loop"]
    assert type(out["size"]) is lt.Size and out["size"] == (2, 3)
    assert out["dtype"] is lt.int8 and out["device"] == lt.device("cpu")


def test_weights_only_refuses_other_globals_unless_allowed():
    data = saved_bytes({"args": argparse.Namespace(lr=0.1), "w": lt.ones(1)})
    with pytest.raises(pickle.UnpicklingError) as info:
        load_bytes(data)
    message = str(info.value)
    assert "the global argparse.Namespace is not allowed" in message
    assert "lazytorch.serialization.add_safe_globals([Namespace])" in message
    assert "weights_only=False" in message
    with serialization.safe_globals([argparse.Namespace]):
        assert load_bytes(data)["args"].lr == 0.1
    with pytest.raises(pickle.UnpicklingError, match=r"argparse\.Namespace"):
        load_bytes(data)  # the context manager's allowance ended with it
    serialization.add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    try:
        assert load_bytes(data)["args"].lr == 0.1
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match=r"numpy\.\S+ is not allowed.*NumPy"):
        load_bytes(saved_bytes({"a": np.zeros(2)}))
    # What torch allows by default loads without asking.
    allowed = {"s": {1}, "b": b"x", "c": 1j, "od": OrderedDict(a=lt.Size([1])), "d": lt.bool}
    assert round_trip(allowed) == allowed


def test_parameters_and_requires_grad_round_trip():
    p = lt.nn.Parameter(lt.ones(2))
    frozen = lt.nn.Parameter(lt.zeros(1), requires_grad=False)
    leaf = lt.ones(3, requires_grad=True)
    out = round_trip({"p": p, "frozen": frozen, "leaf": leaf, "plain": lt.ones(1)})
    assert type(out["p"]) is lt.nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is lt.nn.Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is lt.Tensor and out["leaf"].requires_grad and out["leaf"].is_leaf
    assert not out["plain"].requires_grad


def test_the_legacy_format_round_trips():
    x = lt.arange(6.0).reshape(2, 3)
    obj = {"x": x, "t": x.T, "i": lt.tensor([1, 2], dtype=lt.uint8), "n": [None, 1.5]}
    out = round_trip(obj, save_kwargs={"_use_new_zipfile_serialization": False})
    assert_same_tree(out, obj)
    out["x"].zero_()
    assert out["t"].tolist() == [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]


# -- arguments ---------------------------------------------------------------------------------
def test_map_location_forms():
    data = saved_bytes([lt.ones(1)])
    maps = [None, "cpu", lt.device("cpu"), "cpu:0", {"cpu": "cpu"}, {"cuda:0": "cpu"}]
    maps += [lambda storage, loc: storage, lambda storage, loc: None]
    for loc in maps:
        assert lt.load(io.BytesIO(data), map_location=loc)[0].tolist() == [1.0]
    with pytest.raises(TypeError, match="map_location function must return the storage"):
        lt.load(io.BytesIO(data), map_location=lambda storage, loc: "cpu")
    if not lt.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA device"):
            lt.load(io.BytesIO(data), map_location="cuda:0")


def test_weights_only_none_means_true_and_other_arguments(tmp_path):
    data = saved_bytes({"args": argparse.Namespace()})
    with pytest.raises(pickle.UnpicklingError):
        lt.load(io.BytesIO(data), weights_only=None)
    with pytest.raises(ValueError, match="mmap=True"):
        lt.load(io.BytesIO(data), mmap=True)
    path = tmp_path / "m.pt"
    lt.save({"w": lt.arange(3)}, path)
    assert lt.load(path, mmap=True)["w"].tolist() == [0, 1, 2]
    assert lt.load(path, pickle_module=pickle, encoding="utf-8")["w"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="only protocol 2"):
        lt.save({}, io.BytesIO(), pickle_protocol=4)
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        lt.load(path, bogus=1)


# -- what save refuses -------------------------------------------------------------------------
def test_unpicklable_objects_are_refused_before_anything_is_written(tmp_path):
    target = tmp_path / "model.pt"
    with pytest.raises((pickle.PicklingError, AttributeError)):
        lt.save({"layer": {"fn": lambda x: x}, "w": lt.ones(2)}, target)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from lazytorch import _checkpoint_save

    target = tmp_path / "ckpt.pt"
    lt.save({"v": 1}, target)
    before = target.read_bytes()
    real_write = _checkpoint_save._write_member
    calls = []

    def failing_write(zf, name, data, start):
        calls.append(name)
        if name == "archive/data/1":  # the first storage is already in the archive
            raise OSError("disk full")
        real_write(zf, name, data, start)

    monkeypatch.setattr(_checkpoint_save, "_write_member", failing_write)
    with pytest.raises(OSError, match="disk full"):
        lt.save({"a": lt.ones(1000), "b": lt.ones(1000)}, target)
    assert "archive/data/0" in calls
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]


# -- what load refuses -------------------------------------------------------------------------
def example_checkpoint() -> tuple[dict, bytes]:
    obj = {"w": lt.arange(6.0).reshape(2, 3), "meta": [1, 2.5, "x"], "n": lt.tensor(3)}
    return obj, saved_bytes(obj)


def test_truncated_files_are_refused():
    _, data = example_checkpoint()
    cuts = sorted({*range(0, len(data), max(1, len(data) // 40)), len(data) - 1, 1, 2, 4})
    for cut in cuts:
        with pytest.raises(CheckpointError):
            load_bytes(data[:cut])


def test_any_flipped_byte_is_refused_or_harmless():
    # Bytes outside the CRC-checked data (timestamps, attributes, padding) may change
    # harmlessly; everything else must be refused, and nothing may load as another object.
    obj, data = example_checkpoint()
    refused = 0
    for i in range(len(data)):
        damaged = bytearray(data)
        damaged[i] ^= 0xFF
        try:
            out = load_bytes(bytes(damaged))
        except CheckpointError:
            refused += 1
        else:
            assert_same_tree(out, obj)
    assert refused > len(data) // 3


class _RunsCode:
    def __reduce__(self):
        return (os.getcwd, ())


def torch_zip(data_pkl: bytes, storages: dict[str, bytes] | None = None) -> bytes:
    members = {"archive/data.pkl": data_pkl}
    members.update({f"archive/data/{k}": v for k, v in (storages or {}).items()})
    return zip_bytes(members)


def test_globals_that_run_code_are_refused_and_not_run():
    data = torch_zip(pickle.dumps({"x": _RunsCode()}, protocol=2))
    name = f"{os.getcwd.__module__}.getcwd"
    with pytest.raises(pickle.UnpicklingError, match=f"the global {name} is not allowed"):
        load_bytes(data)
    assert load_bytes(data, weights_only=False) == {"x": os.getcwd()}


def test_tensors_must_fit_their_storage():
    good = torch_bytes_of({"w": torch.arange(6.0).reshape(2, 3)})
    zf = zipfile.ZipFile(io.BytesIO(good))
    pkl, storage = zf.read("archive/data.pkl"), zf.read("archive/data/0")
    shape = b"K\x00K\x02K\x03\x86"  # offset 0, size (2, 3): now offset 1
    assert pkl.count(shape) == 1
    cases = {
        "has 20 bytes where 6 float32 elements need 24": torch_zip(pkl, {"0": storage[:20]}),
        "storage archive/data/0 is missing": torch_zip(pkl),
        # size (2, 3) with strides (3, 1) over a storage said to hold 6 floats, but offset 1
        "reaches past its storage": torch_zip(
            pkl.replace(shape, b"K\x01" + shape[2:]), {"0": storage}
        ),
    }
    for message, data in cases.items():
        with pytest.raises(CheckpointError, match=message):
            load_bytes(data)


def torch_bytes_of(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


NOT_CHECKPOINTS = [
    (b"", "not a checkpoint"),
    (b"hello world, not a checkpoint", "not a checkpoint"),
    (zip_bytes({"weights.bin": b"\0" * 8}), "zip archive but not a checkpoint"),
    (pickle.dumps([1, 2], protocol=2), "a pickle, not a torch or lazytorch checkpoint"),
]


@pytest.mark.parametrize(("data", "message"), NOT_CHECKPOINTS, ids=[m for _, m in NOT_CHECKPOINTS])
def test_files_that_are_not_checkpoints_are_refused(data, message):
    with pytest.raises(CheckpointError, match=message):
        load_bytes(data)


# -- lazytorch's first format (a JSON manifest and .npy members) still loads -------------------
def v1_checkpoint() -> tuple[dict, bytes]:
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    root = {
        "dict": [
            [{"str": "w"}, {"tensor": 0}],
            [{"str": "meta"}, {"list": [{"int": 1}, {"float": "2.5"}, {"str": "x"}]}],
            [{"str": "n"}, {"tensor": 1}],
            [{"str": "od"}, {"ordered_dict": [[{"int": 1}, {"tuple": [{"none": None}]}]]}],
        ]
    }
    tensors = [{"dtype": "float32", "shape": [2, 3]}, {"dtype": "int64", "shape": []}]
    data = zip_bytes(
        {
            "lazytorch/manifest.json": manifest(root, tensors),
            "lazytorch/tensors/0.npy": npy(w),
            "lazytorch/tensors/1.npy": npy(np.array(3)),
        }
    )
    obj = {
        "w": lt.from_numpy(w),
        "meta": [1, 2.5, "x"],
        "n": lt.tensor(3),
        "od": OrderedDict([(1, (None,))]),
    }
    return obj, data


def test_first_format_checkpoints_still_load():
    obj, data = v1_checkpoint()
    assert_same_tree(load_bytes(data), obj)
    assert_same_tree(lt.load(io.BytesIO(data), weights_only=False), obj)


def test_first_format_flipped_manifest_bytes_are_refused():
    _, data = v1_checkpoint()
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("lazytorch/manifest.json")
    start = info.header_offset + 30 + len(info.filename)  # 30: the fixed local header
    assert data[start : start + 10] == b'{"format":'
    for i in range(start, start + info.file_size, 7):
        damaged = bytearray(data)
        damaged[i] ^= 0x20
        with pytest.raises(CheckpointError):
            load_bytes(bytes(damaged))


def test_big_endian_arrays_load_in_native_order():
    a = np.arange(6, dtype=">f4").reshape(2, 3)
    data = zip_bytes(
        {
            "lazytorch/manifest.json": manifest(
                {"tensor": 0}, [{"dtype": "float32", "shape": [2, 3]}]
            ),
            "lazytorch/tensors/0.npy": npy(a),
        }
    )
    assert_tensor_equal(load_bytes(data), a.astype("<f4"))


MALFORMED_V1 = [
    (zip_bytes({"lazytorch/manifest.json": b"\xff\xfe"}), "truncated or damaged"),
    (zip_bytes({"lazytorch/manifest.json": b"[1, 2"}), "truncated or damaged"),
    (zip_bytes({"lazytorch/manifest.json": b"[]"}), "does not name"),
    (zip_bytes({"lazytorch/manifest.json": manifest(None, format="other")}), "does not name"),
    (zip_bytes({"lazytorch/manifest.json": manifest(None, version="1")}), "version"),
    (zip_bytes({"lazytorch/manifest.json": manifest(None, version=2)}), "newer lazytorch"),
    (zip_bytes({"lazytorch/manifest.json": manifest(None, tensors={})}), "tensor table"),
    (
        zip_bytes(
            {
                "lazytorch/manifest.json": manifest(
                    {"none": None}, [{"dtype": "complex64", "shape": []}]
                )
            }
        ),
        "tensor 0",
    ),
    (
        zip_bytes(
            {
                "lazytorch/manifest.json": manifest(
                    {"none": None}, [{"dtype": "int8", "shape": [-1]}]
                )
            }
        ),
        "tensor 0",
    ),
    (
        zip_bytes(
            {"lazytorch/manifest.json": manifest({"none": None}, [{"dtype": "int8", "shape": [2]}])}
        ),
        "is missing",
    ),
    (
        zip_bytes({"lazytorch/manifest.json": manifest({"pickle": "x"})}),
        "unknown entry type 'pickle'",
    ),
    (zip_bytes({"lazytorch/manifest.json": manifest({"tensor": 0})}), "not in the table"),
    (zip_bytes({"lazytorch/manifest.json": manifest({"int": True})}), "expected int"),
    (zip_bytes({"lazytorch/manifest.json": manifest({"float": "1.2.3"})}), "not a float"),
    (zip_bytes({"lazytorch/manifest.json": manifest({"float": 1.5})}), "float's text"),
    (
        zip_bytes(
            {"lazytorch/manifest.json": manifest({"dict": [[{"list": []}, {"none": None}]]})}
        ),
        "dict key of type list",
    ),
    (zip_bytes({"lazytorch/manifest.json": manifest({"dict": [[{"str": "a"}]]})}), "pair"),
    (
        zip_bytes({"lazytorch/manifest.json": manifest({"list": [{"int": 1, "str": "a"}]})}),
        r"obj\[0\]: an entry is not a one-key",
    ),
    (zip_bytes({"lazytorch/manifest.json": manifest({"list": [1]})}), "one-key"),
    (zip_bytes({"lazytorch/manifest.json": b'{"format": NaN}'}), "truncated or damaged"),
    (zip_bytes({"lazytorch/manifest.json": manifest(None)}, zipfile.ZIP_DEFLATED), "bad zip entry"),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED_V1, ids=[m for _, m in MALFORMED_V1])
def test_first_format_malformed_archives_are_refused(data, message):
    with pytest.raises(CheckpointError, match=message):
        load_bytes(data)


@pytest.mark.parametrize(
    ("array", "entry"),
    [
        (np.zeros(3, np.float32), {"dtype": "float64", "shape": [3]}),
        (np.zeros(3, np.float32), {"dtype": "float32", "shape": [4]}),
        (np.zeros(3, np.uint16), {"dtype": "uint8", "shape": [3]}),
    ],
)
def test_first_format_tensor_data_must_match_the_manifest(array, entry):
    data = zip_bytes(
        {
            "lazytorch/manifest.json": manifest({"tensor": 0}, [entry]),
            "lazytorch/tensors/0.npy": npy(array),
        }
    )
    with pytest.raises(CheckpointError, match="does not match the manifest"):
        load_bytes(data)


def test_pickled_arrays_are_never_unpickled():
    data = zip_bytes(
        {
            "lazytorch/manifest.json": manifest({"tensor": 0}, [{"dtype": "int8", "shape": [1]}]),
            "lazytorch/tensors/0.npy": npy(np.array([object()]), allow_pickle=True),
        }
    )
    with pytest.raises(CheckpointError, match="allow_pickle=False"):
        load_bytes(data)


def test_checkpoint_error_is_a_value_error_and_missing_files_stay_os_errors(tmp_path):
    assert issubclass(CheckpointError, ValueError)
    with pytest.raises(FileNotFoundError):
        lt.load(tmp_path / "missing.pt")


def test_a_whole_model_round_trips_with_weights_only_false():
    model = lt.nn.Sequential(lt.nn.Linear(3, 4), lt.nn.Tanh(), lt.nn.Linear(4, 2))
    out = round_trip(model, weights_only=False)
    assert type(out) is lt.nn.Sequential and out is not model
    x = lt.from_numpy(arr(2, 3, seed=8))
    np.testing.assert_array_equal(out(x).detach().numpy(), model(x).detach().numpy())
    assert all(type(p) is lt.nn.Parameter for p in out.parameters())


def test_a_tensor_pickled_by_an_earlier_version_still_loads():
    """Pickles written before Tensor's methods moved to lazytorch.ops.methods name
    ``lazytorch.tensor._rebuild``; they load as tensors still."""
    tensor_module = sys.modules["lazytorch.tensor"]  # (lazytorch.tensor is the function)

    class Earlier:  # what Tensor.__reduce_ex__ returned then
        def __reduce__(self):
            return (tensor_module._rebuild, (np.arange(6.0).reshape(2, 3), "cpu"))

    data = pickle.dumps(Earlier())
    assert b"lazytorch.tensor" in data and b"_rebuild" in data
    t = pickle.loads(data)
    assert isinstance(t, lt.Tensor) and t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    # and a tensor pickled now round-trips
    assert pickle.loads(pickle.dumps(t)).tolist() == t.tolist()
