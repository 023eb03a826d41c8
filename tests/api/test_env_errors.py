"""Every failure the user's environment causes names its cause and the fix.

One test per bad input: a bad ``LAZYTORCH_DUMP_DIR``, ``LAZYTORCH_RECORD``,
``LAZYTORCH_CXX``, ``LAZYTORCH_CXXFLAGS``, a full or unusable temporary directory, and
damaged checkpoints. Each checks the exception type, that the message names the variable
or file, and that it is not labelled a lazytorch bug (that label is kept for generated code
a working compiler rejects: the last compiler test).
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
import zipfile

import numpy as np
import pytest

import lazytorch as lt
from lazytorch._errors import SettingError
from lazytorch.codegen import compiler
from lazytorch.codegen.compiler import CompileError, CompilerMissing, ToolchainError
from lazytorch.runtime import backends, observe
from lazytorch.serialization import CheckpointError

BUG = "lazytorch bug"


def assert_names(err: BaseException, *needles: str) -> None:
    msg = str(err)
    for needle in needles:
        assert needle in msg, f"{needle!r} not in: {msg}"
    assert BUG not in msg
    assert "Fix:" in msg or "again" in msg  # says what to do


# -- helpers: paths that cannot be written, a full disk, fake compilers -----------------------
def _mount_tmpfs(path: os.PathLike[str], options: str) -> None:
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", os.fspath(path)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")


@pytest.fixture
def readonly_dir(tmp_path):
    """A directory nobody (root included) can write: mode 555, or a read-only tmpfs for root."""
    d = tmp_path / "readonly"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(stat.S_IRUSR | stat.S_IXUSR)
        yield d
        d.chmod(stat.S_IRWXU)
        return
    _mount_tmpfs(d, "size=64k,ro")
    try:
        yield d
    finally:
        subprocess.run(["umount", os.fspath(d)], check=True)


@pytest.fixture
def full_dir(tmp_path):
    """A directory on a 64 KiB filesystem that is already full (root only: a tmpfs)."""
    d = tmp_path / "full"
    d.mkdir()
    if os.geteuid() != 0:
        pytest.skip("making a full filesystem needs root (mount -t tmpfs)")
    _mount_tmpfs(d, "size=64k")
    try:
        fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            with pytest.raises(OSError) as full:
                while True:
                    os.write(fd, b"\0" * 4096)
            assert full.value.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield d
    finally:
        subprocess.run(["umount", os.fspath(d)], check=True)


def script(tmp_path, name: str, body: str) -> str:
    """An executable shell script standing in for a compiler."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return os.fspath(path)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "LAZYTORCH_BACKEND": "interpreter", **env},
        timeout=60,
    )


MATERIALIZE = "import lazytorch as lt; lt.materialize(lt.arange(3.0) * 2); print('ran')"


def raised(proc: subprocess.CompletedProcess[str], exc: type[BaseException]) -> str:
    """The message of the exception `proc` died of, which must be `exc`."""
    assert proc.returncode != 0, proc.stdout
    last = proc.stderr.strip().splitlines()
    heads = [i for i, line in enumerate(last) if line.startswith(("lazytorch.", exc.__name__))]
    assert heads, proc.stderr
    head = heads[0]
    name, _, first = last[head].partition(": ")
    assert name.rsplit(".", 1)[-1] == exc.__name__, proc.stderr
    return "\n".join([first, *last[head + 1 :]])


@pytest.fixture
def cpp(monkeypatch):
    """Materialize on the cpp backend with a toolchain read afresh from the environment
    (and no disk cache, so every program really goes through the compiler)."""
    monkeypatch.setenv("LAZYTORCH_DISK_CACHE", "0")

    def reset():
        compiler.toolchain.cache_clear()
        backends._instances.pop("cpp", None)

    reset()
    with lt.backend("cpp"):
        yield lambda: lt.materialize(lt.arange(4.0) * 3 + 1)
    monkeypatch.undo()
    reset()


# -- LAZYTORCH_DUMP_DIR ----------------------------------------------------------------------
def test_dump_dir_that_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("")
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_DUMP_DIR=str(f)), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_DUMP_DIR", str(f), "is a file, not a directory")


def test_dump_dir_under_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("")
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_DUMP_DIR=str(f / "sub" / "dumps")), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_DUMP_DIR", f"is under {f}, which is a file")


def test_dump_dir_that_cannot_be_written(readonly_dir):
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_DUMP_DIR=str(readonly_dir)), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_DUMP_DIR", str(readonly_dir), "is not writable")


def test_dump_dir_on_a_full_disk(full_dir):
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_DUMP_DIR=str(full_dir)), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_DUMP_DIR", "full disk")


def test_dump_dir_replaced_by_a_file_later_warns_and_stops_dumping(tmp_path):
    d = tmp_path / "dumps"
    observe.set_dump_dir(d)
    try:
        shutil.rmtree(d)
        d.write_text("")  # the directory became a file after it was checked
        with pytest.warns(RuntimeWarning, match="stopped writing program dumps") as w:
            assert (lt.arange(3.0) * 5).tolist() == [0.0, 5.0, 10.0]  # the program still runs
        assert_names(w[0].message, "set_dump_dir()", str(d), "which is a file", "set it again")
        assert observe.dump_dir is None
    finally:
        observe.set_dump_dir(None)


def test_set_dump_dir_names_the_path_not_the_variable(tmp_path):
    f = tmp_path / "afile"
    f.write_text("")
    with pytest.raises(SettingError) as err:
        observe.set_dump_dir(f)
    assert_names(err.value, "set_dump_dir()", str(f), "pass a directory")
    assert "LAZYTORCH_DUMP_DIR" not in str(err.value)
    assert observe.dump_dir is None


# -- LAZYTORCH_RECORD ------------------------------------------------------------------------
def test_record_file_that_is_a_directory(tmp_path):
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_RECORD=str(tmp_path)), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_RECORD", str(tmp_path), "is a directory")


def test_record_file_under_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("")
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_RECORD=str(f / "rec.jsonl")), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_RECORD", f"is under {f}, which is a file")


def test_record_file_in_a_directory_that_cannot_be_written(readonly_dir):
    path = readonly_dir / "rec.jsonl"
    msg = raised(run_python(MATERIALIZE, LAZYTORCH_RECORD=str(path)), SettingError)
    assert_names(SettingError(msg), "LAZYTORCH_RECORD", str(path), "is not writable")


def test_record_file_replaced_by_a_directory_later_warns_and_stops(tmp_path, cpp):
    path = tmp_path / "rec.jsonl"
    observe.set_record_file(path)
    try:
        path.unlink()
        path.mkdir()  # the file became a directory after it was checked
        with pytest.warns(RuntimeWarning, match="stopped writing the warm-up record") as w:
            cpp()
        assert_names(w[0].message, "set_record_file()", str(path), "is a directory")
        assert observe.record_file is None
    finally:
        observe.set_record_file(None)


# -- LAZYTORCH_CXX, LAZYTORCH_CXXFLAGS, a full TMPDIR ----------------------------------------
ANSWERS_VERSION = 'if [ "$1" = "--version" ]; then echo "fake-cc 1.0"; exit 0; fi\n'


def notes(tmp_path) -> str:
    path = tmp_path / "notes.txt"
    path.write_text("not a compiler\n")
    return str(path)


# id, the environment (made in tmp_path), the exception, what its message must name
TOOLCHAIN_CASES = [
    (
        "cxx-that-does-not-exist",
        lambda t: {"LAZYTORCH_CXX": str(t / "no-such-g++")},
        CompilerMissing,
        ["LAZYTORCH_CXX=", "no-such-g++", "does not exist"],
    ),
    (
        "cxx-not-executable",
        lambda t: {"LAZYTORCH_CXX": notes(t)},
        CompilerMissing,
        ["LAZYTORCH_CXX=", "notes.txt", "not executable"],
    ),
    (
        "cxx-a-directory",
        lambda t: {"LAZYTORCH_CXX": str(t)},
        CompilerMissing,
        ["LAZYTORCH_CXX=", "is a directory"],
    ),
    (
        "cxx-with-flags-in-it",
        lambda t: {"LAZYTORCH_CXX": "g++ -O2"},
        CompilerMissing,
        ["LAZYTORCH_CXX='g++ -O2'", "put flags in LAZYTORCH_CXXFLAGS"],
    ),
    (
        "cxx-a-program-but-not-a-compiler",  # exits 0 for everything, writes nothing
        lambda t: {"LAZYTORCH_CXX": script(t, "true-cc", "exit 0\n")},
        ToolchainError,
        ["LAZYTORCH_CXX=", "true-cc", "wrote no shared object"],
    ),
    (
        "cxx-fails-on-everything",
        lambda t: {"LAZYTORCH_CXX": script(t, "broken-cc", "echo broken-cc: no >&2\nexit 1\n")},
        CompilerMissing,
        ["LAZYTORCH_CXX=", "broken-cc", "--version` exited with status 1", "broken-cc: no"],
    ),
    (
        "cxx-fails-on-every-program",
        lambda t: {
            "LAZYTORCH_CXX": script(t, "half-cc", ANSWERS_VERSION + "echo ICE >&2\nexit 4\n")
        },
        ToolchainError,
        ["LAZYTORCH_CXX=", "half-cc", "even a trivial program", "ICE"],
    ),
    (
        "cxx-killed-by-a-signal",
        lambda t: {"LAZYTORCH_CXX": script(t, "oom-cc", ANSWERS_VERSION + "kill -9 $$\n")},
        ToolchainError,
        ["LAZYTORCH_CXX=", "oom-cc", "killed by signal 9"],
    ),
    (
        "cxxflags-the-compiler-rejects",
        lambda t: {"LAZYTORCH_CXXFLAGS": "-fno-such-lazytorch-flag"},
        ToolchainError,
        ["LAZYTORCH_CXXFLAGS='-fno-such-lazytorch-flag'", "without them"],
    ),
    (
        "cxxflags-with-an-unclosed-quote",
        lambda t: {"LAZYTORCH_CXXFLAGS": "-O2 '-DX=1"},
        ToolchainError,
        ["LAZYTORCH_CXXFLAGS=", "No closing quotation"],
    ),
    (
        "tmpdir-full-as-the-compiler-reports-it",  # what g++ says when TMPDIR fills up
        lambda t: {
            "TMPDIR": str(t),
            "LAZYTORCH_CXX": script(
                t,
                "full-cc",
                ANSWERS_VERSION + 'echo "cc1plus: error writing to $TMPDIR/cc1.s: '
                'No space left on device" >&2\nexit 1\n',
            ),
        },
        ToolchainError,
        ["TMPDIR='", "No space left on device", "set TMPDIR to a directory on a disk with room"],
    ),
]


@pytest.mark.parametrize(
    "env, exc, needles", [c[1:] for c in TOOLCHAIN_CASES], ids=[c[0] for c in TOOLCHAIN_CASES]
)
def test_bad_toolchain_setting(tmp_path, monkeypatch, cpp, env, exc, needles):
    for name, value in env(tmp_path).items():
        monkeypatch.setenv(name, value)
    with pytest.raises(exc) as err:
        cpp()
    assert_names(err.value, *needles)


def test_cxxflags_that_break_only_real_programs(tmp_path, monkeypatch):
    # Accepted on the trivial probe, rejected on this program: still the flags' fault.
    monkeypatch.setenv("LAZYTORCH_CXXFLAGS", "-Werror=unused-variable")
    compiler.toolchain.cache_clear()
    try:
        source = 'extern "C" int f(void) { int unused = 1; return 0; }\n'
        with pytest.raises(ToolchainError) as err:
            compiler.compile_shared(source, tmp_path / "f.so", blas=False)
    finally:
        monkeypatch.undo()
        compiler.toolchain.cache_clear()
    assert_names(err.value, "LAZYTORCH_CXXFLAGS='-Werror=unused-variable'", "unused")


@pytest.mark.parametrize("blas", ["openblas", "mkl"])
def test_cxxflags_come_last_whatever_the_blas(monkeypatch, blas):
    # `_failure` finds the flags without LAZYTORCH_CXXFLAGS by cutting them off the end;
    # a define added after them (MKL's, once) made it blame the compiler instead.
    monkeypatch.setenv("LAZYTORCH_CXXFLAGS", "-DLAZYTORCH_TEST_FLAG")
    monkeypatch.setattr(compiler, "blas_choice", lambda: blas)
    compiler.toolchain.cache_clear()
    try:
        tc = compiler.toolchain()
    finally:
        monkeypatch.undo()
        compiler.toolchain.cache_clear()
    assert tc.extra == ("-DLAZYTORCH_TEST_FLAG",)
    assert tc.flags[-1] == "-DLAZYTORCH_TEST_FLAG"
    assert ("-DLT_BLAS_MKL" in tc.flags) == (blas == "mkl")


def test_generated_code_the_compiler_rejects_is_still_a_lazytorch_bug(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the source is kept
    compiler.toolchain.cache_clear()
    with pytest.raises(CompileError) as err:
        compiler.compile_shared("this is not C++;\n", tmp_path / "f.so", blas=False)
    assert not isinstance(err.value, ToolchainError)
    assert BUG in str(err.value)
    (kept,) = tmp_path.glob("lazytorch-failed-*.cpp")
    assert str(kept) in str(err.value) and kept.read_text() == "this is not C++;\n"


# -- the temporary directory -----------------------------------------------------------------
def test_full_tmpdir(full_dir, monkeypatch, cpp):
    monkeypatch.setenv("TMPDIR", str(full_dir))  # g++ writes its assembly there
    with pytest.raises(ToolchainError) as err:
        cpp()
    assert_names(err.value, f"TMPDIR={str(full_dir)!r}", "No space left on device")


def test_unwritable_tmpdir_falls_back_to_another_directory(readonly_dir, monkeypatch, cpp):
    # Python's tempfile and g++ both skip a TMPDIR they cannot write: nothing fails.
    monkeypatch.setenv("TMPDIR", str(readonly_dir))
    monkeypatch.setattr(tempfile, "tempdir", None)
    cpp()
    assert lt.metrics.counters()["compiles"] == 1  # g++ ran, with TMPDIR set


def test_temporary_directory_that_became_unwritable(readonly_dir, monkeypatch, cpp):
    # tempfile remembers its directory from the first use; later it may be read-only.
    monkeypatch.setattr(tempfile, "tempdir", str(readonly_dir))
    with pytest.raises(ToolchainError) as err:
        cpp()
    assert_names(err.value, f"temporary directory {readonly_dir}", "TMPDIR")


def test_os_errors_of_the_machine_are_classified():
    err = compiler.environment_error(OSError(errno.ENOSPC, "No space left on device", "/x.so"))
    assert isinstance(err, ToolchainError)
    assert_names(err, "/x.so", "TMPDIR")
    assert compiler.environment_error(OSError(errno.EACCES, "denied", "/etc/elsewhere")) is None


# -- lazytorch.load --------------------------------------------------------------------------
def checkpoint_with(tmp_path, tensor_npy: bytes | None, shape: list[int], dtype="float32"):
    """A checkpoint file whose tensor 0 has this manifest entry and these .npy bytes."""
    manifest = {
        "format": "lazytorch.save",
        "version": 1,
        "tensors": [{"dtype": dtype, "shape": shape}],
        "root": {"tensor": 0},
    }
    path = tmp_path / "model.lt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("lazytorch/manifest.json", json.dumps(manifest))
        if tensor_npy is not None:
            zf.writestr("lazytorch/tensors/0.npy", tensor_npy)
    return path


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def test_load_npy_header_claiming_2_to_the_40_elements(tmp_path):
    data = npy_header("<f4", (2**40,)) + b"\0" * 64
    path = checkpoint_with(tmp_path, data, [2**40])
    with pytest.raises(CheckpointError) as err:  # not a MemoryError: nothing is allocated
        lt.load(path)
    assert_names(err.value, str(path), "lazytorch/tensors/0.npy", "4398046511104")


def test_load_npy_header_with_a_wrong_dtype(tmp_path):
    path = checkpoint_with(tmp_path, npy_header("<i4", (2,)) + b"\0" * 8, [2])
    with pytest.raises(CheckpointError) as err:
        lt.load(path)
    assert_names(err.value, str(path), "tensors/0.npy holds int32[2]", "float32[2]")


def test_load_npy_with_too_few_values(tmp_path):
    path = checkpoint_with(tmp_path, npy_header("<f4", (4,)) + b"\0" * 8, [4])
    with pytest.raises(CheckpointError) as err:
        lt.load(path)
    assert_names(err.value, str(path), "8 bytes of values", "needs 16")


def test_load_truncated_file(tmp_path):
    path = tmp_path / "model.lt"
    lt.save({"w": lt.ones(64, 64)}, path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(CheckpointError) as err:
        lt.load(path)
    assert_names(err.value, str(path), "truncated or damaged")


def test_load_zip_missing_a_tensor(tmp_path):
    path = checkpoint_with(tmp_path, None, [2])
    with pytest.raises(CheckpointError) as err:
        lt.load(path)
    assert_names(err.value, str(path), "lazytorch/tensors/0.npy is missing")


def test_load_from_an_open_file_names_it(tmp_path):
    path = checkpoint_with(tmp_path, None, [2])
    with open(path, "rb") as f, pytest.raises(CheckpointError) as err:
        lt.load(f)
    assert_names(err.value, str(path))


def test_a_good_checkpoint_still_loads_its_values():
    buf = io.BytesIO()
    lt.save({"w": lt.arange(6.0).reshape(2, 3), "i": lt.tensor([1, 2], dtype=lt.int16)}, buf)
    buf.seek(0)
    got = lt.load(buf)
    np.testing.assert_array_equal(got["w"].numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert got["i"].tolist() == [1, 2] and got["i"].dtype == lt.int16
