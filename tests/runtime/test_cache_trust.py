"""The disk cache executes only what it verified: attacks and accidents from issue 18.

Each test damages a real cache the way a user or an archive could — an edited manifest,
an entry filed under another program's key, a zip bomb, a read-only directory, a stuck
lock holder, a file where a directory belongs — and then runs the program in a *new
process* (the process that trusts the disk), checking that it computes the right values,
that the bad entry was refused and rebuilt (warned and counted), and that ``lazytorch
cache verify`` names it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tarfile
import tracemalloc
from collections.abc import Callable

import pytest

from lazytorch.cli import main
from lazytorch.runtime import cache_archive
from lazytorch.runtime.disk_cache import (
    CacheDirError,
    CacheLockTimeout,
    DiskCache,
    lock_timeout,
    seal_of,
)

TIMEOUT = 180
# Two programs: one with buffer inputs, a 32 KiB arena and two scalar inputs (2.5 and 5.0
# become scalar parameters), and a small one. Each prints its value on its own line.
SCRIPT = """\
import numpy as np
import lazytorch as lt
x = lt.from_numpy(np.arange(4096, dtype=np.float32).reshape(64, 64) / 4096)
w = lt.from_numpy(np.ones((64, 64), dtype=np.float32) / 64)
y = ((x @ w).softmax(1) * 2.5 + 5.0) @ w
print(repr(y.sum().item()))
print(repr((lt.arange(6.0) * 3).sum().item()))
c = lt.metrics.counters()
print("compiles", c["compiles"], "cache_hits_disk", c["cache_hits_disk"],
      "cache_corrupt", c.get("cache_corrupt", 0))
"""


def run(
    script: pathlib.Path,
    cache_dir: pathlib.Path,
    *,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run `script` in a fresh process on `cache_dir` (the cpp backend)."""
    full = {
        **os.environ,
        "LAZYTORCH_CACHE_DIR": str(cache_dir),
        "LAZYTORCH_BACKEND": "cpp",
        **(env or {}),
    }
    res = subprocess.run(
        [*prefix, sys.executable, str(script)],
        env=full,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if check:
        assert res.returncode == 0, res.stderr
        assert "lazytorch bug" not in res.stderr
    return res


def values(res: subprocess.CompletedProcess[str]) -> tuple[list[str], dict[str, int]]:
    lines = res.stdout.splitlines()
    words = lines[-1].split()
    return lines[:-1], {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("script") / "prog.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture(scope="module")
def populated(
    script: pathlib.Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[pathlib.Path, list[str]]:
    """A cache holding the script's two programs, and the values they print."""
    root = tmp_path_factory.mktemp("populated") / "cache"
    printed, counts = values(run(script, root))
    assert counts == {"compiles": 2, "cache_hits_disk": 0, "cache_corrupt": 0}
    return root, printed


@pytest.fixture
def cache_dir(populated: tuple[pathlib.Path, list[str]], tmp_path: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(shutil.copytree(populated[0], tmp_path / "cache", symlinks=True))


@pytest.fixture
def expected(populated: tuple[pathlib.Path, list[str]]) -> list[str]:
    return populated[1]


def big_entry(root: pathlib.Path) -> pathlib.Path:
    """The entry of the program with buffer inputs, scalars and an arena."""
    (entry,) = [e for e in DiskCache(root).entries() if e.meta["manifest"]["arena"] > 0]
    return entry.path


def edit_manifest(entry: pathlib.Path, change: Callable[[dict], None], *, reseal: bool) -> None:
    meta = json.loads((entry / "meta.json").read_text())
    change(meta["manifest"])
    if reseal:  # as someone who knows the format would: the seal then matches again
        meta["seal"] = seal_of(entry.name, meta)
    (entry / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))


def _swap_scalars(m: dict) -> None:
    m["params"][2], m["params"][3] = m["params"][3], m["params"][2]


def _set_shape(m: dict) -> None:
    m["out_specs"][0][1] = [2]


def _set_dtype(m: dict) -> None:
    m["out_specs"][0][0] = "float64"


def _zero_arena(m: dict) -> None:
    m["arena"] = 0


def _int_slot(m: dict) -> None:
    m["int_slots"][0] = True  # 2.5 would be passed as the integer 2


TAMPER = {
    "swap-scalars": _swap_scalars,
    "output-shape": _set_shape,
    "output-dtype": _set_dtype,
    "arena-zero": _zero_arena,
    "int-slot": _int_slot,
}


@pytest.mark.parametrize("change", TAMPER.values(), ids=TAMPER.keys())
def test_edited_manifest_is_refused_reported_and_rebuilt(
    capsys, script, cache_dir, expected, change
):
    entry = big_entry(cache_dir)
    edit_manifest(entry, change, reseal=False)

    capsys.readouterr()
    assert main(["cache", "verify", "--cache-dir", str(cache_dir)]) == 1
    out = capsys.readouterr().out
    assert f"corrupt  {entry.name}  meta.json does not match its seal" in out

    res = run(script, cache_dir)
    printed, counts = values(res)
    assert printed == expected
    assert counts == {"compiles": 1, "cache_hits_disk": 1, "cache_corrupt": 1}
    assert f"entry {entry.name}" in res.stderr and "does not match its seal" in res.stderr
    assert main(["cache", "verify", "--cache-dir", str(cache_dir)]) == 0  # rebuilt


RESEALED = {k: TAMPER[k] for k in ("swap-scalars", "output-shape", "output-dtype", "int-slot")}


@pytest.mark.parametrize("change", RESEALED.values(), ids=RESEALED.keys())
def test_manifest_that_does_not_fit_the_program_is_refused_even_when_sealed(
    script, cache_dir, expected, change
):
    """The seal is no secret; what the program determines is also checked against it."""
    entry = big_entry(cache_dir)
    edit_manifest(entry, change, reseal=True)
    res = run(script, cache_dir)
    printed, counts = values(res)
    assert printed == expected
    assert counts == {"compiles": 1, "cache_hits_disk": 1, "cache_corrupt": 1}
    assert "does not fit the program being run" in res.stderr


def test_entry_moved_to_another_key_is_refused(script, cache_dir, expected):
    small, big = sorted(DiskCache(cache_dir).entries(), key=lambda e: e.meta["manifest"]["arena"])
    shutil.rmtree(small.path)
    shutil.copytree(big.path, small.path)  # the big program's entry under the small one's key
    capsys_status = main(["cache", "verify", "--cache-dir", str(cache_dir)])
    assert capsys_status == 1
    res = run(script, cache_dir)
    printed, counts = values(res)
    assert printed == expected
    assert counts == {"compiles": 1, "cache_hits_disk": 1, "cache_corrupt": 1}
    assert f"entry {small.key}" in res.stderr


# -- import ----------------------------------------------------------------------------------
@pytest.fixture
def archive(capsys, cache_dir: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "programs.tar.gz"
    assert main(["cache", "export", str(path), "--cache-dir", str(cache_dir)]) == 0
    capsys.readouterr()
    return path


def rekey(src: pathlib.Path, dst: pathlib.Path, old: str, new: str, *, reseal: bool) -> None:
    """Copy the archive with a copy of `old`'s entry filed under `new` (whose own entry is
    dropped)."""

    def add(tout: tarfile.TarFile, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tout.addfile(info, io.BytesIO(data))

    with tarfile.open(src) as tin, tarfile.open(dst, "w:gz") as tout:
        for m in tin.getmembers():
            key, _, name = m.name.partition("/")
            if key == new:
                continue
            f = tin.extractfile(m)
            assert f is not None
            data = f.read()
            add(tout, m.name, data)
            if key == old:
                if name == "meta.json" and reseal:
                    meta = json.loads(data)
                    meta["seal"] = seal_of(new, meta)
                    data = json.dumps(meta).encode()
                add(tout, f"{new}/{name}", data)


@pytest.mark.parametrize(
    ("reseal", "reason"),
    [
        (False, "meta.json does not match its seal"),
        (True, "filed under another program's key"),
    ],
    ids=["as-is", "resealed"],
)
def test_import_refuses_an_entry_filed_under_another_programs_key(
    capsys, script, cache_dir, expected, archive, tmp_path, reseal, reason
):
    small, big = sorted(DiskCache(cache_dir).entries(), key=lambda e: e.meta["manifest"]["arena"])
    evil = tmp_path / "evil.tar.gz"
    rekey(archive, evil, small.key, big.key, reseal=reseal)  # small's program as big's
    new = tmp_path / "new"
    capsys.readouterr()
    assert main(["cache", "import", str(evil), "--cache-dir", str(new)]) == 1
    out = capsys.readouterr().out
    assert "imported 1, already present 0, refused 1" in out
    assert reason in out and f"  {big.key[:16]}" in out
    assert [e.key for e in DiskCache(new).entries()] == [small.key]
    printed, counts = values(run(script, new))
    assert printed == expected
    assert counts["compiles"] == 1 and counts["cache_hits_disk"] == 1


def test_import_refuses_an_entry_without_its_key_source(capsys, cache_dir, archive, tmp_path):
    key = DiskCache(cache_dir).entries()[0].key
    old = tmp_path / "old.tar.gz"
    with tarfile.open(archive) as tin, tarfile.open(old, "w:gz") as tout:
        for m in tin.getmembers():
            if m.name == f"{key}/key.txt":
                continue
            data = tin.extractfile(m).read()  # type: ignore[union-attr]
            if m.name == f"{key}/meta.json":
                meta = json.loads(data)
                del meta["files"]["key.txt"]
                meta["seal"] = seal_of(key, meta)
                data = json.dumps(meta).encode()
            info = tarfile.TarInfo(m.name)
            info.size = len(data)
            tout.addfile(info, io.BytesIO(data))
    status = main(["cache", "import", str(old), "--cache-dir", str(tmp_path / "new")])
    out = capsys.readouterr().out
    assert status == 1 and "does not record the program it was built for (key.txt)" in out


def _gz_tar(path: pathlib.Path, members: list[tuple[bytes, int]]) -> None:
    """A gzip-compressed tar of (header, size) members whose contents are zeros."""
    zeros = bytes(1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as f:
        for header, size in members:
            f.write(header)
            left = size + (-size % 512)
            while left:
                n = min(left, len(zeros))
                f.write(zeros[:n])
                left -= n
        f.write(bytes(1024))


def _header(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info.tobuf(tarfile.USTAR_FORMAT)


def _manifest_member() -> list[tuple[bytes, int]]:
    # zeros are not JSON, but the bombs below are refused before it would matter
    return [(_header("lazytorch-cache.json", 2), 2)]


def _import_peak(capsys, path: pathlib.Path, root: pathlib.Path) -> tuple[int, str, int]:
    """(exit status, stderr, peak bytes traced) of importing `path`."""
    capsys.readouterr()
    tracemalloc.start()
    try:
        status = main(["cache", "import", str(path), "--cache-dir", str(root)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return status, capsys.readouterr().err, peak


KEY = "ab" * 32


def test_import_of_a_zip_bomb_is_refused_with_bounded_memory(capsys, tmp_path, monkeypatch):
    """Members each under the per-file cap, together over the per-entry cap: refused after
    streaming at most the cap to the staging directory, never holding it in memory. (The
    caps are lowered so the test is quick; the real ones only scale the numbers.)"""
    monkeypatch.setattr(cache_archive, "MAX_FILE_BYTES", 40 << 20)
    monkeypatch.setattr(cache_archive, "MAX_ENTRY_BYTES", 64 << 20)
    bomb = tmp_path / "bomb.tar.gz"
    names = ("a.so", "b.so", "c.so")
    _gz_tar(bomb, [(_header(f"{KEY}/{n}", 30 << 20), 30 << 20) for n in names])
    assert bomb.stat().st_size < (1 << 20)  # 90 MiB of zeros in well under a megabyte
    status, err, peak = _import_peak(capsys, bomb, tmp_path / "c")
    assert status == 2
    assert f"the files of entry {KEY[:16]} add up to over 64 MiB (at member '{KEY}/c.so')" in err
    assert peak < 8 << 20, f"import held {peak >> 20} MiB"
    assert DiskCache(tmp_path / "c").entries() == []
    assert os.listdir(tmp_path / "c" / "v1" / "tmp") == []  # the staging directory is gone


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([(_header(f"{KEY}/program.so", 3 << 30), 0)], "is 3221225472 bytes, over 256 MiB"),
        ([(_header("pax", 200 << 20, tarfile.XHDTYPE), 200 << 20)], "extended tar header of"),
        ([(_header("long", 200 << 20, tarfile.GNUTYPE_LONGNAME), 200 << 20)], "extended tar"),
        ([(_header(f"{KEY}/meta.json", 100 << 20), 100 << 20)], "over 1 MiB"),
    ],
    ids=["declared-3GiB", "pax-header", "gnu-long-name", "huge-meta"],
)
def test_import_refuses_oversized_members_before_reading_them(capsys, tmp_path, members, message):
    bomb = tmp_path / "bomb.tar.gz"
    _gz_tar(bomb, _manifest_member() + members)
    status, err, peak = _import_peak(capsys, bomb, tmp_path / "c")
    assert status == 2 and message in err
    assert peak < 8 << 20, f"import held {peak >> 20} MiB"


# -- read-only caches ------------------------------------------------------------------------
def read_only_prefix(path: pathlib.Path) -> tuple[str, ...]:
    """A command prefix that runs a process seeing `path` read-only (and nothing else
    changed), or skips: a read-only mount in a private mount namespace when root (root
    writes through any mode bits), else the directory tree's write bits removed."""
    if os.geteuid() != 0:
        for d, _, files in os.walk(path):
            for name in files:
                os.chmod(os.path.join(d, name), 0o400)
            os.chmod(d, 0o500)
        return ()
    mount = f'mount --bind -o ro {path} {path} && exec "$@"'
    prefix = ("unshare", "-m", "sh", "-c", mount, "sh")
    probe = subprocess.run([*prefix, "touch", str(path / "probe")], capture_output=True)
    if probe.returncode == 0 or shutil.which("unshare") is None:
        pytest.skip("cannot make a read-only mount here (needs unshare and mount)")
    return prefix


def test_read_only_cache_is_served(script, cache_dir, expected, tmp_path):
    small, _ = sorted(DiskCache(cache_dir).entries(), key=lambda e: e.meta["manifest"]["arena"])
    shutil.rmtree(small.path)  # a miss: the small program is not in the baked cache
    before = sorted(str(p.relative_to(cache_dir)) for p in cache_dir.rglob("*"))
    prefix = read_only_prefix(cache_dir)
    res = run(script, cache_dir, prefix=prefix)
    printed, counts = values(res)
    assert printed == expected
    assert counts == {"compiles": 1, "cache_hits_disk": 1, "cache_corrupt": 0}
    said = [line for line in res.stderr.splitlines() if "read-only" in line]
    assert len(said) == 1 and str(cache_dir) in said[0], res.stderr
    assert "Warning" not in res.stderr and "Traceback" not in res.stderr
    assert sorted(str(p.relative_to(cache_dir)) for p in cache_dir.rglob("*")) == before


def test_read_only_cache_with_a_bad_entry_recompiles_without_writing(script, cache_dir, expected):
    entry = big_entry(cache_dir)
    edit_manifest(entry, _swap_scalars, reseal=False)
    prefix = read_only_prefix(cache_dir)
    res = run(script, cache_dir, prefix=prefix)
    printed, counts = values(res)
    assert printed == expected
    assert counts == {"compiles": 1, "cache_hits_disk": 1, "cache_corrupt": 1}
    assert "left it (the cache is read-only)" in res.stderr


def test_cli_on_a_read_only_cache(cache_dir, archive):
    prefix = read_only_prefix(cache_dir)

    def cli_run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "lazytorch", "cache", *argv],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    res = cli_run("verify", "--cache-dir", str(cache_dir))
    assert res.returncode == 0 and "2 entries verified, all intact" in res.stdout, res.stderr
    for argv in (("clear",), ("import", str(archive))):
        res = cli_run(*argv, "--cache-dir", str(cache_dir))
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert "lazytorch cache: error: cannot" in res.stderr and "read-only" in res.stderr
    assert len(DiskCache(cache_dir).entries()) == 2


def test_missing_cache_under_a_read_only_parent_names_the_variable(script, tmp_path):
    parent = tmp_path / "image"
    parent.mkdir()
    prefix = read_only_prefix(parent)
    res = run(script, parent / "cache", prefix=prefix, check=False)
    assert res.returncode != 0 and "lazytorch bug" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert "CacheDirError" in last and str(parent / "cache") in last
    assert "LAZYTORCH_CACHE_DIR" in last and "Fix:" in last


# -- locks -----------------------------------------------------------------------------------
HUNG_CXX = """#!/bin/sh
# A compiler that hangs on compiling a program (anything else, such as --version or a
# probe of a flag, goes to g++): the process holding the cache lock never finishes.
case "$*" in
  *.cpp*) echo started > "$MARKER"; exec sleep 600 ;;
esac
exec g++ "$@"
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="the hung compiler wraps g++")
def test_a_stuck_lock_holder_is_reported_and_the_waiter_compiles(script, tmp_path, expected):
    cache = tmp_path / "cache"
    cxx = tmp_path / "hung-g++"
    cxx.write_text(HUNG_CXX)
    cxx.chmod(0o755)
    marker = tmp_path / "compiling"
    env = {
        **os.environ,
        "LAZYTORCH_CACHE_DIR": str(cache),
        "LAZYTORCH_BACKEND": "cpp",
        "LAZYTORCH_CXX": str(cxx),
        "MARKER": str(marker),
    }
    holder = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the hung "compiler" goes with it
    )
    try:
        for _ in range(TIMEOUT * 10):
            if marker.exists() or holder.poll() is not None:
                break
            subprocess.run(["sleep", "0.1"])
        assert marker.exists(), "the holder never reached its compile"
        res = run(script, cache, env={"LAZYTORCH_CACHE_LOCK_TIMEOUT": "1"})
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(30)
    printed, counts = values(res)
    assert printed == expected
    assert counts["compiles"] == 2
    (lock,) = [p for p in (cache / "locks").iterdir() if p.read_text() == f"{holder.pid}\n"]
    assert f"lazytorch cache lock {lock} has been held by process {holder.pid}" in res.stderr
    assert "LAZYTORCH_CACHE_LOCK_TIMEOUT" in res.stderr
    assert "Compiling the program here instead of waiting for it" in res.stderr


def test_lock_times_out_naming_the_file_and_holder(tmp_path):
    cache = DiskCache(tmp_path / "c")
    with cache.lock(KEY):
        with pytest.raises(CacheLockTimeout) as info:
            with cache.lock(KEY, timeout=0.05):
                pass
    path = tmp_path / "c" / "locks" / f"{KEY}.lock"
    assert info.value.path == path
    assert str(path) in str(info.value) and f"process {os.getpid()}" in str(info.value)
    with cache.lock(KEY, timeout=0.05):  # released: taken at once
        pass


# -- the directory tree ----------------------------------------------------------------------
@pytest.mark.parametrize("sub", ["locks", "v1/tmp"])
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_file_in_place_of_a_scratch_directory_is_replaced(tmp_path, sub, kind):
    root = tmp_path / "c"
    DiskCache(root)
    target = root / sub
    shutil.rmtree(target)
    if kind == "file":
        target.write_text("junk")
    else:
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    with pytest.warns(RuntimeWarning, match=f"{target} was a (file|symbolic link), not a dir"):
        cache = DiskCache(root)
    assert target.is_dir() and not target.is_symlink()
    with cache.lock(KEY):
        cache.store(KEY, {"a.so": b"x"}, {})
    assert cache.lookup(KEY) is not None
    assert not (tmp_path / "elsewhere").exists() or os.listdir(tmp_path / "elsewhere") == []


def test_file_in_place_of_locks_after_opening_is_replaced(tmp_path):
    cache = DiskCache(tmp_path / "c")
    shutil.rmtree(tmp_path / "c" / "locks")
    (tmp_path / "c" / "locks").write_text("junk")
    with pytest.warns(RuntimeWarning, match="was a file"), cache.lock(KEY):
        pass


def test_file_in_place_of_the_entries_tree_is_named(tmp_path):
    root = tmp_path / "c"
    DiskCache(root)
    shutil.rmtree(root / "v1")
    (root / "v1").write_text("junk")
    with pytest.raises(CacheDirError, match=f"{root / 'v1'} is not a directory"):
        DiskCache(root)


def test_scratch_directories_replaced_by_files_in_a_real_run(script, cache_dir, expected):
    for sub in ("locks", "v1/tmp"):
        shutil.rmtree(cache_dir / sub)
        (cache_dir / sub).write_text("junk")
    res = run(script, cache_dir)
    printed, counts = values(res)
    assert printed == expected and counts["cache_hits_disk"] == 2
    assert (cache_dir / "locks").is_dir() and (cache_dir / "v1" / "tmp").is_dir()


@pytest.mark.parametrize("sub", ["v1", "v1/tmp", "locks", "v1/ab"])
def test_world_writable_subdirectory_is_refused(tmp_path, sub):
    root = tmp_path / "c"
    cache = DiskCache(root)
    cache.store(KEY, {"a.so": b"x"}, {})
    os.chmod(root / sub, 0o777)
    with pytest.raises(CacheDirError, match=f"{root / sub} is world-writable") as info:
        DiskCache(root)
    assert f"chmod 700 {root / sub}" in str(info.value)


@pytest.mark.parametrize("what", ["entry", "file"])
def test_world_writable_entry_is_not_loaded(tmp_path, what):
    cache = DiskCache(tmp_path / "c")
    entry = cache.store(KEY, {"a.so": b"x"}, {})
    os.chmod(
        entry.path if what == "entry" else entry.path / "a.so", 0o666 | 0o111 * (what == "entry")
    )
    with pytest.warns(RuntimeWarning, match="world-writable"):
        assert cache.lookup(KEY) is None
    assert not entry.path.exists()


# -- LAZYTORCH_CACHE_DIR ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["file", "under-a-file", "unknown-user"])
def test_bad_cache_dir_variable_is_named_with_the_fix(script, tmp_path, kind):
    (tmp_path / "afile").write_text("x")
    value = {
        "file": str(tmp_path / "afile"),
        "under-a-file": str(tmp_path / "afile" / "cache"),
        "unknown-user": "~no-such-user-lazytorch/cache",
    }[kind]
    res = run(script, pathlib.Path(value), check=False)
    assert res.returncode != 0 and "lazytorch bug" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("lazytorch.runtime.cache_dirs.CacheDirError: ")
    assert f"LAZYTORCH_CACHE_DIR={value!r}" in last and "Fix:" in last


def test_relative_cache_dir_variable_warns_with_the_absolute_path(script, tmp_path, expected):
    work = tmp_path / "work"
    work.mkdir()
    res = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "LAZYTORCH_CACHE_DIR": "rel/cache", "LAZYTORCH_BACKEND": "cpp"},
        cwd=work,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[:2] == expected
    assert "LAZYTORCH_CACHE_DIR='rel/cache' is a relative path" in res.stderr
    assert str(work / "rel" / "cache") in res.stderr and "absolute path" in res.stderr


@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan", "inf"])
def test_bad_lock_timeout_variable_raises_naming_it(monkeypatch, value):
    monkeypatch.setenv("LAZYTORCH_CACHE_LOCK_TIMEOUT", value)
    with pytest.raises(ValueError, match=f"LAZYTORCH_CACHE_LOCK_TIMEOUT must be .*, got {value!r}"):
        lock_timeout()
    monkeypatch.setenv("LAZYTORCH_CACHE_LOCK_TIMEOUT", " ")
    assert lock_timeout() == 300.0
    monkeypatch.setenv("LAZYTORCH_CACHE_LOCK_TIMEOUT", "2.5")
    assert lock_timeout() == 2.5


def test_export_skips_an_entry_with_an_edited_manifest(capsys, cache_dir, tmp_path):
    entry = big_entry(cache_dir)
    edit_manifest(entry, _zero_arena, reseal=False)
    archive = tmp_path / "a.tar.gz"
    capsys.readouterr()
    assert main(["cache", "export", str(archive), "--cache-dir", str(cache_dir)]) == 0
    out, err = capsys.readouterr()
    assert "exported 1 entry" in out and "skipped 1 corrupt" in out
    assert f"skipped corrupt entry {entry.name}: meta.json does not match its seal" in err
    with tarfile.open(archive) as tar:
        assert not [n for n in tar.getnames() if n.startswith(entry.name)]


def test_the_cache_key_covers_every_file_that_shapes_generated_code():
    # the primitives' cost/compare facts steer fusion and lowering: a change to them must
    # not load a program the previous definitions generated
    from lazytorch.codegen import compiler

    names = {(f.parent.name, f.name) for f in compiler._generator_files()}
    for want in [
        ("codegen", "cpp_ops.py"),
        ("codegen", "triton_ops.py"),
        ("scheduler", "fusion.py"),
        ("ir", "primitives.py"),
        ("prims", "elementwise.py"),
        ("prims", "reduce.py"),
        ("runtime", "cpp_backend.py"),
    ]:
        assert want in names, want
