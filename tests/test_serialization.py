"""lazytorch.save / lazytorch.load: round trips, sharing, atomic writes, and refusing every
damaged or foreign file with CheckpointError (never a crash or a half-built object)."""

from __future__ import annotations

import io
import json
import math
import os
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


def round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    lt.save(obj, buf)
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


def load_bytes(data: bytes):
    return lt.load(io.BytesIO(data))


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
    assert sum(n.endswith(".npy") for n in zf.namelist()) == 1


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


def test_saving_is_deterministic_and_the_archive_is_plain():
    obj = {"w": lt.ones(2, 2, dtype=lt.float16)}
    data = saved_bytes(obj)
    assert data == saved_bytes(obj)
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.namelist() == ["lazytorch/manifest.json", "lazytorch/tensors/0.npy"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
    m = json.loads(zf.read("lazytorch/manifest.json"))
    assert m["format"] == serialization.FORMAT and m["version"] == serialization.VERSION
    assert m["tensors"] == [{"dtype": "float16", "shape": [2, 2]}]
    loaded = np.load(io.BytesIO(zf.read("lazytorch/tensors/0.npy")), allow_pickle=False)
    assert loaded.dtype == np.float16 and loaded.shape == (2, 2)


def test_save_works_in_strict_mode():
    x = lt.arange(4.0) * 3
    with lt.strict_mode():
        out = round_trip({"x": x, "views": [x[::2], x.reshape(2, 2).T]})
    assert out["x"].tolist() == [0.0, 3.0, 6.0, 9.0]
    assert out["views"][1].tolist() == [[0.0, 6.0], [3.0, 9.0]]


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


# -- arguments ---------------------------------------------------------------------------------
def test_map_location_and_weights_only():
    data = saved_bytes([lt.ones(1)])
    for loc in (None, "cpu", lt.device("cpu"), "cpu:0"):
        assert load_bytes(data) and lt.load(io.BytesIO(data), map_location=loc)
    assert lt.load(io.BytesIO(data), weights_only=None)
    with pytest.raises(ValueError, match="only the CPU device"):
        lt.load(io.BytesIO(data), map_location="cuda:0")
    for loc in ({"cuda:0": "cpu"}, lambda storage, loc: storage):
        with pytest.raises(TypeError, match="map_location must be"):
            lt.load(io.BytesIO(data), map_location=loc)
    with pytest.raises(ValueError, match=r"weights_only=False\) is not supported.*never runs code"):
        lt.load(io.BytesIO(data), weights_only=False)


# -- what save refuses -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("obj", "type_name", "where"),
    [
        ({"layer": {"fn": lambda x: x}}, "function", "obj['layer']['fn']"),
        ([1, (2, np.float64(3.0))], "numpy.float64", "obj[1][1]"),
        ({"a": np.zeros(2)}, "numpy.ndarray", "obj['a']"),
        ({"s": {1, 2}}, "set", "obj['s']"),
        (OrderedDict(x=[lt.dtype]), "type", "obj['x'][0]"),
        (lt.Size([2]), "lazytorch.tensor.Size", "obj"),
    ],
)
def test_save_names_the_unsupported_type_and_where_it_is(obj, type_name, where, tmp_path):
    target = tmp_path / "model.pt"
    with pytest.raises(TypeError) as info:
        lt.save(obj, target)
    assert f"type {type_name} (at {where})" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_save_refuses_bad_keys_and_cycles():
    with pytest.raises(
        TypeError, match=r"dict key of type lazytorch.tensor.Tensor \(in obj\['a'\]\)"
    ):
        lt.save({"a": {lt.ones(1): 1}}, io.BytesIO())
    loop: list = [1]
    loop.append({"x": loop})
    with pytest.raises(ValueError, match=r"obj\[1\]\['x'\] contains itself"):
        lt.save(loop, io.BytesIO())


def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "ckpt.pt"
    lt.save({"v": 1}, target)
    before = target.read_bytes()
    real_save = np.save
    calls = []

    def failing_save(file, a, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the second tensor: the first is already in the archive
            file.write(b"partial")
            raise OSError("disk full")
        real_save(file, a, **kwargs)

    monkeypatch.setattr(serialization.np, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        lt.save({"a": lt.ones(1000), "b": lt.ones(1000)}, target)
    assert len(calls) == 2
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


def test_flipped_manifest_bytes_are_refused():
    _, data = example_checkpoint()
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("lazytorch/manifest.json")
    start = info.header_offset + 30 + len(info.filename)  # 30: the fixed local header
    assert data[start : start + 10] == b'{"format":'
    for i in range(start, start + info.file_size):
        damaged = bytearray(data)
        damaged[i] ^= 0x20
        with pytest.raises(CheckpointError):
            load_bytes(bytes(damaged))


def test_any_flipped_byte_is_refused_or_harmless():
    # Bytes outside the CRC-checked data (timestamps, attributes) may change harmlessly;
    # everything else must be refused, and nothing may load as a different object.
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
    assert refused > len(data) // 2


MALFORMED = [
    (b"", "not a zip archive"),
    (b"hello world, not a checkpoint", "not a zip archive"),
    (zip_bytes({"weights.bin": b"\0" * 8}), "not a lazytorch checkpoint"),
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


@pytest.mark.parametrize(("data", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_archives_are_refused(data, message):
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
def test_tensor_data_must_match_the_manifest(array, entry):
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


def test_pytorch_checkpoints_are_recognised(tmp_path):
    hint = (
        "this looks like a PyTorch checkpoint; lazytorch.load reads files written by lazytorch.save"
    )
    path = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(CheckpointError, match=hint):
        lt.load(path)
    legacy = io.BytesIO()
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match=hint):
        load_bytes(legacy.getvalue())


def test_checkpoint_error_is_a_value_error_and_missing_files_stay_os_errors(tmp_path):
    assert issubclass(CheckpointError, ValueError)
    with pytest.raises(FileNotFoundError):
        lt.load(tmp_path / "missing.pt")
