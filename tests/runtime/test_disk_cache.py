"""The on-disk program cache: atomic entries, verified loads, locks, directory safety.

Concurrency tests use real processes (multiprocessing with the spawn start method, so a
worker shares nothing with the test process but the directory) and prove ordering with
timestamps the processes record, not with sleeps alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import pathlib
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator

import pytest

from lazytorch.runtime.disk_cache import (
    CacheDirError,
    CacheEntry,
    DiskCache,
    default_cache_dir,
    seal_of,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
KEY = "0123456789abcdef" * 4
FILES = {"prog.so": b"\x7fELF" + bytes(range(256)) * 40, "prog.cpp": b"int main() {}\n"}
META = {"backend": "cpp", "flags": ["-O2", "-fPIC"]}
SPAWN = multiprocessing.get_context("spawn")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another uid")


def key(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()


@pytest.fixture
def root(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "cache"


@pytest.fixture
def cache(root: pathlib.Path) -> DiskCache:
    return DiskCache(root)


@contextlib.contextmanager
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def tmp_leftovers(cache: DiskCache) -> list[str]:
    return os.listdir(cache.root / "v1" / "tmp")


def entry_dir(cache: DiskCache, k: str) -> pathlib.Path:
    return cache.root / "v1" / k[:2] / k


def mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def join_all(procs: list[multiprocessing.process.BaseProcess], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
    assert not alive, f"{len(alive)} worker(s) hung"
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]


# -- round trip, layout, permissions -------------------------------------------------------
def test_store_lookup_roundtrip(cache):
    with no_warnings():
        stored = cache.store(KEY, FILES, META)
        found = cache.lookup(KEY)
    assert isinstance(found, CacheEntry)
    assert found.key == stored.key == KEY
    assert found.path == stored.path == cache.root / "v1" / KEY[:2] / KEY
    assert found.meta == stored.meta
    assert found.meta["backend"] == "cpp" and found.meta["flags"] == ["-O2", "-fPIC"]
    assert found.meta["format"] == 1 and isinstance(found.meta["created"], float)
    assert found.meta["files"] == {n: hashlib.sha256(d).hexdigest() for n, d in FILES.items()}
    for name, data in FILES.items():
        assert found.file(name).read_bytes() == data
    with pytest.raises(KeyError, match="nope"):
        found.file("nope")
    assert sorted(os.listdir(found.path)) == ["meta.json", "prog.cpp", "prog.so"]
    assert tmp_leftovers(cache) == []


def test_lookup_of_absent_key_is_silent(cache):
    with no_warnings():
        assert cache.lookup(KEY) is None
    assert cache.entries() == [] and cache.verify() == []


def test_store_accepts_bytes_like_contents(cache):
    e = cache.store(KEY, {"a": bytearray(b"xy"), "b": memoryview(b"z")}, {})
    assert [e.file(n).read_bytes() for n in "ab"] == [b"xy", b"z"]


@pytest.mark.parametrize("mask", [0o000, 0o022, 0o277])
def test_created_dirs_are_0700_and_files_0600_whatever_the_umask(tmp_path, mask):
    root = tmp_path / "a" / "b" / "cache"
    with umask(mask):
        cache = DiskCache(root)
        entry = cache.store(KEY, FILES, META)
        with cache.lock(KEY):
            pass
    for d in (tmp_path / "a", tmp_path / "a" / "b", root, root / "v1", root / "v1" / "tmp"):
        assert mode(d) == 0o700, d
    assert mode(root / "locks") == 0o700
    assert mode(entry.path) == mode(entry.path.parent) == 0o700
    for name in [*FILES, "meta.json"]:
        assert mode(entry.path / name) == 0o600, name
    assert mode(root / "locks" / f"{KEY}.lock") & 0o077 == 0


def test_existing_parent_modes_are_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    DiskCache(shared / "cache")
    assert mode(shared) == 0o755 and mode(shared / "cache") == 0o700


@pytest.mark.parametrize(
    ("files", "meta"),
    [
        ({}, {}),
        ({"a": b""}, {"nested": {"list": [1, 2.5, None, True], "str": "ünïcode ✓"}}),
        ({f"f{i}": os.urandom(i * 997) for i in range(6)}, {"": "empty key", "n": -1}),
        ({"big.so": os.urandom(3 << 20)}, {"tuple": (1, 2)}),
    ],
    ids=["nothing", "empty-file", "several", "big"],
)
def test_roundtrip_shapes(cache, files, meta):
    stored = cache.store(KEY, files, meta)
    with no_warnings():
        found = cache.lookup(KEY)
    assert found.meta == stored.meta
    reserved = ("files", "created", "format", "seal")
    user_meta = {k: v for k, v in found.meta.items() if k not in reserved}
    assert user_meta == json.loads(json.dumps(meta))  # as JSON reads it back: tuples -> lists
    assert {n: found.file(n).read_bytes() for n in found.meta["files"]} == files


def _lookup_in_child(root: pathlib.Path, k: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(
        """
        import sys, warnings
        warnings.simplefilter("error")
        from lazytorch.runtime.disk_cache import DiskCache
        e = DiskCache(sys.argv[1]).lookup(sys.argv[2])
        print("none" if e is None else e.file("prog.so").read_bytes().hex() + " " + e.meta["backend"])
        """
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", code, str(root), k],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_lookup_in_a_new_process_finds_the_entry(cache):
    cache.store(KEY, FILES, META)
    result = _lookup_in_child(cache.root, KEY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [FILES["prog.so"].hex(), "cpp"]
    assert _lookup_in_child(cache.root, key(7)).stdout.strip() == "none"


# -- damaged entries ---------------------------------------------------------------------
def _rewrite(path: pathlib.Path, data: bytes) -> None:
    path.write_bytes(data)


def _flip_byte(e: pathlib.Path) -> None:
    data = bytearray((e / "prog.so").read_bytes())
    data[len(data) // 2] ^= 0x01
    _rewrite(e / "prog.so", bytes(data))


def _edit_meta(**changes: object) -> Callable[[pathlib.Path], None]:
    def edit(e: pathlib.Path) -> None:
        meta = json.loads((e / "meta.json").read_text())
        meta.update(changes)
        (e / "meta.json").write_text(json.dumps(meta))

    return edit


def _symlink_file(e: pathlib.Path) -> None:
    # Same contents, so only the refusal to follow links can catch it.
    target = e.parent / "elsewhere.so"
    target.write_bytes((e / "prog.so").read_bytes())
    (e / "prog.so").unlink()
    (e / "prog.so").symlink_to(target)


def _move_from(other: str) -> Callable[[pathlib.Path], None]:
    """Replace the entry by another key's entry (same files, its own meta.json)."""

    def move(e: pathlib.Path) -> None:
        cache = DiskCache(e.parents[2])
        theirs = cache.store(other, FILES, {"backend": "someone else's"})
        for p in e.iterdir():
            p.unlink()
        for p in theirs.path.iterdir():
            (e / p.name).write_bytes(p.read_bytes())
            os.chmod(e / p.name, 0o600)
        cache.remove(other)

    return move


def _replace_with_file(e: pathlib.Path) -> None:
    for p in e.iterdir():
        p.unlink()
    e.rmdir()
    e.write_bytes(b"junk")


DAMAGE = {
    "flipped-byte": (_flip_byte, r"checksum mismatch for 'prog.so'"),
    "truncated": (
        lambda e: _rewrite(e / "prog.so", (e / "prog.so").read_bytes()[:100]),
        r"checksum mismatch for 'prog.so' \(truncated",
    ),
    "emptied": (lambda e: _rewrite(e / "prog.cpp", b""), r"checksum mismatch for 'prog.cpp'"),
    "missing-file": (lambda e: (e / "prog.so").unlink(), r"file 'prog.so' is missing"),
    "missing-meta": (lambda e: (e / "meta.json").unlink(), r"meta.json is missing"),
    "meta-not-json": (lambda e: _rewrite(e / "meta.json", b"{not json"), r"not valid JSON"),
    "meta-truncated": (
        lambda e: _rewrite(e / "meta.json", (e / "meta.json").read_bytes()[:30]),
        r"not valid JSON",
    ),
    "meta-not-utf8": (lambda e: _rewrite(e / "meta.json", b"\xff\xfe"), r"not valid JSON"),
    "meta-not-object": (lambda e: _rewrite(e / "meta.json", b"[1, 2]"), r"not a JSON object"),
    "format-mismatch": (_edit_meta(format=2), r"format version 2 in meta.json, expected 1"),
    "format-missing": (_edit_meta(format=None), r"format version None"),
    "format-bool": (_edit_meta(format=True), r"format version True"),
    "files-not-object": (_edit_meta(files=["prog.so"]), r"no 'files' object"),
    "files-bad-name": (_edit_meta(files={"../x": "0" * 64}), r"invalid file name '../x'"),
    "files-bad-digest": (_edit_meta(files={"prog.so": "xyz"}), r"invalid checksum for 'prog.so'"),
    "created-missing": (_edit_meta(created="yesterday"), r"no 'created' time"),
    "meta-edited": (_edit_meta(backend="other"), r"meta.json does not match its seal"),
    "meta-nan": (_edit_meta(backend=float("nan")), r"not valid JSON \(NaN is not JSON"),
    "seal-missing": (_edit_meta(seal=None), r"meta.json has no seal"),
    "moved-from-another-key": (_move_from(key(1)), r"meta.json does not match its seal"),
    "entry-world-writable": (lambda e: os.chmod(e, 0o777), r"its directory is world-writable"),
    "file-world-writable": (
        lambda e: os.chmod(e / "prog.so", 0o606),
        r"file 'prog.so' is world-writable",
    ),
    "symlinked-file": (_symlink_file, r"cannot read 'prog.so'"),
    "entry-is-a-file": (_replace_with_file, r"not a readable directory"),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_damaged_entry_is_dropped_with_a_warning_and_can_be_restored(cache, damage):
    hurt, reason = damage
    e = cache.store(KEY, FILES, META)
    hurt(e.path)
    with pytest.warns(
        RuntimeWarning, match=rf"entry {KEY} at .* is invalid \(.*{reason}"
    ) as record:
        assert cache.lookup(KEY) is None
    assert len(record) == 1 and "recompiled" in str(record[0].message)
    assert record[0].filename == __file__  # blames the caller of lookup()
    assert not os.path.lexists(e.path)
    assert tmp_leftovers(cache) == []
    with no_warnings():
        assert cache.lookup(KEY) is None  # dropped once, silent after
        cache.store(KEY, FILES, {"backend": "again"})
        again = cache.lookup(KEY)
    assert (
        again.meta["backend"] == "again" and again.file("prog.so").read_bytes() == FILES["prog.so"]
    )


def test_unreachable_entry_warns_instead_of_crashing(cache):
    prefix = cache.root / "v1" / KEY[:2]
    prefix.write_bytes(b"not a directory")
    with pytest.warns(RuntimeWarning, match=rf"cannot access entry {KEY}"):
        assert cache.lookup(KEY) is None
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        cache.store(KEY, FILES, META)
    assert tmp_leftovers(cache) == []
    prefix.unlink()
    cache.store(KEY, FILES, META)
    assert cache.lookup(KEY) is not None


def test_store_replaces_a_damaged_entry(cache):
    e = cache.store(KEY, FILES, META)
    _flip_byte(e.path)
    with pytest.warns(RuntimeWarning, match="checksum mismatch"):
        new = cache.store(KEY, {"prog.so": b"fresh"}, {"backend": "new"})
    assert new.meta["backend"] == "new"
    with no_warnings():
        assert cache.lookup(KEY).file("prog.so").read_bytes() == b"fresh"
    assert tmp_leftovers(cache) == []


def test_store_keeps_an_existing_valid_entry(cache):
    first = cache.store(KEY, FILES, META)
    with no_warnings():
        second = cache.store(KEY, {"prog.so": b"other"}, {"backend": "other"})
    assert second.meta == first.meta
    assert cache.lookup(KEY).file("prog.so").read_bytes() == FILES["prog.so"]
    assert tmp_leftovers(cache) == []


def test_verify_reports_without_deleting(cache):
    keys = [key(i) for i in range(3)]
    for k in keys:
        cache.store(k, FILES, META)
    _flip_byte(entry_dir(cache, keys[0]))
    (entry_dir(cache, keys[2]) / "meta.json").write_text("{")
    damaged = (entry_dir(cache, keys[0]) / "prog.so").read_bytes()
    with no_warnings():
        report = cache.verify()
    assert [k for k, _ in report] == sorted([keys[0], keys[2]])
    reasons = dict(report)
    assert "checksum mismatch for 'prog.so'" in reasons[keys[0]]
    assert "not valid JSON" in reasons[keys[2]]
    assert all(entry_dir(cache, k).is_dir() for k in keys)
    assert (entry_dir(cache, keys[0]) / "prog.so").read_bytes() == damaged
    # entries() does not hash, so it lists the flipped entry but not the unreadable one.
    assert [e.key for e in cache.entries()] == sorted(keys[:2])
    with pytest.warns(RuntimeWarning):
        assert cache.lookup(keys[0]) is None
    assert [k for k, _ in cache.verify()] == [keys[2]]


def test_partial_temp_dirs_are_invisible_and_stale_ones_cleaned(cache):
    tmp = cache.root / "v1" / "tmp"
    old, fresh = tmp / f"store-{KEY[:16]}-old", tmp / f"store-{KEY[:16]}-fresh"
    for d in (old, fresh):  # what a writer killed mid-store leaves: files, no meta.json
        d.mkdir()
        (d / "prog.so").write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    with no_warnings():
        assert cache.lookup(KEY) is None
    assert cache.entries() == [] and cache.verify() == [] and cache.size_bytes() == 0
    DiskCache(cache.root)
    assert sorted(os.listdir(tmp)) == [fresh.name]


_CRASH_WRITER = """
import sys, hashlib
from lazytorch.runtime.disk_cache import DiskCache
cache = DiskCache(sys.argv[1])
print("ready", flush=True)
for i in range(10**6):
    k = hashlib.sha256(f"{sys.argv[2]}-{i}".encode()).hexdigest()
    cache.store(k, {"a.so": bytes([i % 251]) * 300_000, "b.cpp": b"x" * (i % 5000)}, {"i": i})
"""


def test_writer_killed_mid_store_never_leaves_a_visible_partial_entry(cache):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    for run, delay in enumerate([0.15, 0.3, 0.45]):
        proc = subprocess.Popen(
            [sys.executable, "-c", _CRASH_WRITER, str(cache.root), str(run)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    with no_warnings():
        assert cache.verify() == []
        entries = cache.entries()
        assert len(entries) > 3, "the writer never got going; the test proves nothing"
        for e in entries:
            assert (
                cache.lookup(e.key).file("a.so").read_bytes()
                == bytes([e.meta["i"] % 251]) * 300_000
            )
    key_dirs = [d for p in (cache.root / "v1").iterdir() if p.name != "tmp" for d in p.iterdir()]
    assert len(key_dirs) == len(entries)


# -- concurrency -------------------------------------------------------------------------
def _payload(writer: int) -> bytes:
    return bytes([writer]) * (1 << 20) + hashlib.sha256(bytes([writer])).digest()


def _store_worker(root: str, k: str, writer: int, barrier, results) -> None:
    try:
        with no_warnings():
            cache = DiskCache(root)
            data = _payload(writer)
            barrier.wait(timeout=30)
            entry = cache.store(
                k, {"prog.so": data, "small.txt": b"%d" % writer}, {"writer": writer}
            )
            got = entry.file("prog.so").read_bytes()
        results.put(("ok", writer, entry.meta["writer"], hashlib.sha256(got).hexdigest()))
    except BaseException:
        results.put(("error", writer, traceback.format_exc(), None))


def test_concurrent_writers_of_one_key_leave_exactly_one_valid_entry(cache):
    n = 8
    barrier, results = SPAWN.Barrier(n), SPAWN.Queue()
    procs = [
        SPAWN.Process(target=_store_worker, args=(str(cache.root), KEY, w, barrier, results))
        for w in range(n)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in range(n)]
    join_all(procs)
    errors = [o[2] for o in outcomes if o[0] != "ok"]
    assert not errors, "\n".join(errors)
    winners = {o[2] for o in outcomes}
    assert len(winners) == 1, f"writers saw different entries: {winners}"  # losers get the winner's
    (winner,) = winners
    assert {o[3] for o in outcomes} == {hashlib.sha256(_payload(winner)).hexdigest()}
    with no_warnings():
        entry = cache.lookup(KEY)
    assert entry.meta["writer"] == winner
    assert entry.file("prog.so").read_bytes() == _payload(winner)
    assert entry.file("small.txt").read_bytes() == b"%d" % winner
    assert os.listdir(entry.path.parent) == [KEY]
    assert tmp_leftovers(cache) == []
    assert cache.verify() == [] and [e.key for e in cache.entries()] == [KEY]


def _write_json(path: pathlib.Path, obj: object) -> None:
    """Atomically, so the reader polling for the file never sees half of it."""
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def _waiting_worker(root: str, k: str, out: str) -> None:
    cache = DiskCache(root)
    _write_json(pathlib.Path(out) / "requested.json", time.monotonic())
    with cache.lock(k):
        acquired = time.monotonic()
    _write_json(pathlib.Path(out) / "acquired.json", acquired)


def test_lock_makes_a_second_process_wait(cache, tmp_path):
    # CLOCK_MONOTONIC is system-wide on Linux, so timestamps compare across processes.
    with cache.lock(KEY):
        proc = SPAWN.Process(target=_waiting_worker, args=(str(cache.root), KEY, str(tmp_path)))
        proc.start()
        deadline = time.monotonic() + 30
        while not (tmp_path / "requested.json").exists():
            assert time.monotonic() < deadline, "worker never started"
            time.sleep(0.01)
        time.sleep(0.3)  # give it time to block in flock(); the assertions don't depend on it
        assert not (tmp_path / "acquired.json").exists()
        released = time.monotonic()
    join_all([proc])
    requested = json.loads((tmp_path / "requested.json").read_text())
    acquired = json.loads((tmp_path / "acquired.json").read_text())
    assert requested < released <= acquired


def _compile_once_worker(root: str, k: str, barrier, results) -> None:
    try:
        cache = DiskCache(root)
        barrier.wait(timeout=30)
        with cache.lock(k):
            start = time.monotonic()
            entry = cache.lookup(k)
            compiled = entry is None
            if compiled:
                time.sleep(0.2)  # "compiling": any overlap with another holder would show
                entry = cache.store(k, {"prog.so": b"built by %d" % os.getpid()}, {})
            content = entry.file("prog.so").read_bytes()
            end = time.monotonic()
        results.put(("ok", start, end, compiled, content))
    except BaseException:
        results.put(("error", traceback.format_exc(), None, None, None))


def test_lock_serializes_lookup_or_compile_across_processes(cache):
    n = 4
    barrier, results = SPAWN.Barrier(n), SPAWN.Queue()
    procs = [
        SPAWN.Process(target=_compile_once_worker, args=(str(cache.root), KEY, barrier, results))
        for _ in range(n)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in range(n)]
    join_all(procs)
    assert all(o[0] == "ok" for o in outcomes), [o[1] for o in outcomes if o[0] != "ok"]
    spans = sorted((o[1], o[2]) for o in outcomes)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start, f"critical sections overlap: {spans}"
    assert sum(o[3] for o in outcomes) == 1, "compiled more than once"
    assert len({o[4] for o in outcomes}) == 1
    # The first holder compiled; every later one found its entry instead.
    assert next(o for o in outcomes if o[3])[1] == spans[0][0]


def test_lock_excludes_threads_and_survives_its_file_being_unlinked(cache):
    path = cache.root / "locks" / f"{KEY}.lock"
    waiting, acquired, done = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:
        waiting.set()
        with cache.lock(KEY):
            acquired.set()
            done.wait(30)

    t = threading.Thread(target=other)
    with cache.lock(KEY):
        t.start()
        waiting.wait(30)
        time.sleep(0.1)  # let it block on the current lock file
        assert not acquired.is_set()
        path.unlink()  # what clear() does to an idle lock file, while holding it
    assert acquired.wait(30)
    # The waiter must now hold the lock on the file at the path, not on the unlinked one.
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
        done.set()
        t.join(30)


# -- the cache directory -----------------------------------------------------------------
@pytest.mark.parametrize("bad_mode", [0o777, 0o1777, 0o703])
def test_world_writable_directory_is_refused(root, bad_mode):
    root.mkdir()
    os.chmod(root, bad_mode)
    with pytest.raises(CacheDirError, match="world-writable") as info:
        DiskCache(root)
    assert str(root) in str(info.value) and f"chmod 700 {root}" in str(info.value)
    assert not (root / "v1").exists()  # refused before anything was written


def test_world_writable_subdirectory_is_refused(root):
    DiskCache(root)
    os.chmod(root / "v1", 0o777)
    with pytest.raises(CacheDirError, match=f"{root / 'v1'} is world-writable"):
        DiskCache(root)


@as_root
def test_directory_owned_by_another_user_is_refused(root):
    root.mkdir(mode=0o700)
    os.chown(root, 65534, 65534)
    with pytest.raises(CacheDirError, match="owned by uid 65534") as info:
        DiskCache(root)
    assert str(root) in str(info.value) and "LAZYTORCH_CACHE_DIR" in str(info.value)


@as_root
def test_entry_tree_owned_by_another_user_is_refused(root):
    DiskCache(root)
    os.chown(root / "locks", 65534, 65534)
    with pytest.raises(CacheDirError, match="locks is owned by uid 65534"):
        DiskCache(root)


def test_group_writable_directory_warns_but_works(root):
    root.mkdir()
    os.chmod(root, 0o770)
    with pytest.warns(RuntimeWarning, match="group-writable") as record:
        cache = DiskCache(root)
    assert record[0].filename == __file__
    cache.store(KEY, FILES, META)
    assert cache.lookup(KEY) is not None


def test_unusable_paths_are_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheDirError, match="is not a directory"):
        DiskCache(tmp_path / "file")
    with pytest.raises(CacheDirError, match="cannot be created"):
        DiskCache(tmp_path / "file" / "cache")


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LAZYTORCH_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "lazytorch"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # the XDG spec says: ignore
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "lazytorch"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "lazytorch"
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", "")  # empty counts as unset
    assert default_cache_dir() == tmp_path / "xdg" / "lazytorch"
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", "~/lt")
    assert default_cache_dir() == tmp_path / "home" / "lt"
    cache = DiskCache()
    assert cache.root == tmp_path / "home" / "lt" and (cache.root / "v1").is_dir()


# -- validation ------------------------------------------------------------------------------
BAD_KEYS = [
    "",
    "abc123",
    "0123456789abcde",  # 15 digits
    "0" * 129,
    "0123456789ABCDEF",
    "0123456789abcdeg",
    "0123456789abcdef\n",
    "../../0123456789abcdef",
    "0123456789abcdef/x",
]


@pytest.mark.parametrize("bad", BAD_KEYS)
def test_invalid_keys_are_rejected(cache, bad):
    for call in (
        lambda: cache.lookup(bad),
        lambda: cache.store(bad, FILES, META),
        lambda: cache.lock(bad),
        lambda: cache.remove(bad),
    ):
        with pytest.raises(ValueError, match="16-128 lowercase hex"):
            call()
    assert os.listdir(cache.root / "v1") == ["tmp"] and tmp_leftovers(cache) == []


def test_non_string_key_is_a_type_error(cache):
    with pytest.raises(TypeError):
        cache.lookup(b"0123456789abcdef")


@pytest.mark.parametrize(
    ("files", "meta", "error", "match"),
    [
        ({"": b""}, {}, ValueError, "plain file name"),
        ({".": b""}, {}, ValueError, "plain file name"),
        ({"..": b""}, {}, ValueError, "plain file name"),
        ({"a/b": b""}, {}, ValueError, "plain file name"),
        ({"../x": b""}, {}, ValueError, "plain file name"),
        ({"/abs": b""}, {}, ValueError, "plain file name"),
        ({"a\0b": b""}, {}, ValueError, "plain file name"),
        ({"meta.json": b"{}"}, {}, ValueError, "plain file name"),
        ({1: b""}, {}, TypeError, "must be a str"),
        ({"a": "text"}, {}, TypeError, "must be bytes"),
        ([("a", b"")], {}, TypeError, "mapping of name to bytes"),
        ({"a": b""}, {"files": 1}, ValueError, "reserved"),
        ({"a": b""}, {"format": 2, "created": 0}, ValueError, "reserved"),
        ({"a": b""}, {"x": object()}, TypeError, "JSON-serializable"),
        ({"a": b""}, {"x": float("nan")}, ValueError, "JSON-serializable"),
        ({"a": b""}, ["not", "a", "dict"], TypeError, "must be a mapping"),
    ],
)
def test_invalid_store_arguments_touch_nothing(cache, files, meta, error, match):
    with pytest.raises(error, match=match):
        cache.store(KEY, files, meta)
    assert os.listdir(cache.root / "v1") == ["tmp"] and tmp_leftovers(cache) == []


def test_names_with_dots_are_fine(cache):
    e = cache.store(KEY, {"a..b": b"1", ".hidden": b"2", "lib.x.so": b"3"}, {})
    assert [e.file(n).read_bytes() for n in ("a..b", ".hidden", "lib.x.so")] == [b"1", b"2", b"3"]


# -- housekeeping ------------------------------------------------------------------------------
def test_remove_clear_and_size_bytes(cache):
    keys = [key(i) for i in range(3)]
    assert cache.size_bytes() == 0
    for i, k in enumerate(keys):
        cache.store(k, {"prog.so": b"x" * (1000 * (i + 1))}, {"i": i})
    meta_sizes = [(entry_dir(cache, k) / "meta.json").stat().st_size for k in keys]
    assert cache.size_bytes() == 6000 + sum(meta_sizes)
    assert [e.key for e in cache.entries()] == sorted(keys)

    assert cache.remove(keys[0]) is True
    assert cache.remove(keys[0]) is False
    assert cache.lookup(keys[0]) is None and not entry_dir(cache, keys[0]).exists()
    assert cache.size_bytes() == 5000 + sum(meta_sizes[1:])
    assert sorted(e.key for e in cache.entries()) == sorted(keys[1:])

    with cache.lock(keys[1]):
        pass
    with cache.lock(keys[2]):
        assert cache.clear() == 2
        # A held lock file survives clear(); an idle one is removed.
        assert os.listdir(cache.root / "locks") == [f"{keys[2]}.lock"]
    assert cache.clear() == 0 and os.listdir(cache.root / "locks") == []
    assert cache.size_bytes() == 0 and cache.entries() == [] and tmp_leftovers(cache) == []
    cache.store(keys[0], FILES, META)
    assert cache.lookup(keys[0]) is not None and cache.size_bytes() > 0


def test_clear_also_removes_damaged_entries(cache):
    cache.store(KEY, FILES, META)
    (entry_dir(cache, KEY) / "meta.json").write_text("{")
    with no_warnings():
        assert cache.clear() == 1
    assert not entry_dir(cache, KEY).exists()


# -- seals and key sources -----------------------------------------------------------------
def test_seal_covers_the_key_and_every_field(cache):
    e = cache.store(KEY, FILES, META)
    assert e.meta["seal"] == seal_of(KEY, e.meta) != seal_of(key(1), e.meta)
    edited = {**e.meta, "flags": ["-O3"]}
    assert seal_of(KEY, edited) != e.meta["seal"]


def test_key_file_must_hash_to_the_key(cache):
    source = b"lazytorch 0.1.0\0program text\0"
    k = hashlib.sha256(source).hexdigest()
    with no_warnings():
        e = cache.store(k, {"key.txt": source, "prog.so": b"x"}, {})
        assert cache.lookup(k).file("key.txt").read_bytes() == source
    assert e.meta["files"]["key.txt"] == k
    with pytest.raises(ValueError, match="hashes to another key"):
        cache.store(KEY, {"key.txt": source}, {})
    with pytest.raises(ValueError, match="hashes to another key"):  # streamed: checked after
        cache.store(KEY, {"key.txt": io.BytesIO(source)}, {})
    assert cache.lookup(KEY) is None and tmp_leftovers(cache) == []


def test_entry_whose_key_file_names_another_program_is_dropped(cache):
    source = b"lazytorch 0.1.0\0program text\0"
    other = hashlib.sha256(b"another program").hexdigest()
    e = cache.store(hashlib.sha256(source).hexdigest(), {"key.txt": source}, {})
    target = entry_dir(cache, other)
    target.parent.mkdir(exist_ok=True)
    os.rename(e.path, target)
    meta = json.loads((target / "meta.json").read_text())
    meta["seal"] = seal_of(other, meta)  # a seal recomputed for the new key
    (target / "meta.json").write_text(json.dumps(meta))
    assert [k for k, _ in cache.verify()] == [other]
    with pytest.warns(RuntimeWarning, match="key.txt names another program"):
        assert cache.lookup(other) is None


def test_store_streams_file_objects(cache, tmp_path):
    big = tmp_path / "big.so"
    big.write_bytes(os.urandom(3 << 20))
    with open(big, "rb") as f:
        e = cache.store(KEY, {"big.so": f, "small": b"s"}, {})
    assert e.meta["files"]["big.so"] == hashlib.sha256(big.read_bytes()).hexdigest()
    with no_warnings():
        assert cache.lookup(KEY).file("big.so").read_bytes() == big.read_bytes()


def test_reject_drops_an_entry_and_counts_it(cache):
    import lazytorch

    before = lazytorch.metrics.counters().get("cache_corrupt", 0)
    e = cache.store(KEY, FILES, META)
    with pytest.warns(RuntimeWarning, match=rf"entry {KEY} at .* does not fit; deleted it"):
        cache.reject(e, "does not fit")
    assert cache.lookup(KEY) is None
    assert lazytorch.metrics.counters()["cache_corrupt"] == before + 1
