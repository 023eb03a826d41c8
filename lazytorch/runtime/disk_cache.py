"""The on-disk cache of compiled programs, shared by processes and surviving crashes.

Compiling a program to a C++ shared object takes seconds; this cache lets a new process
load the result instead. Entries are shared objects that get loaded into the process, so
the directory is treated as code: it must be private to the user, and nothing in it is
trusted until its checksums match.

Layout (``root`` is `default_cache_dir()` unless given)::

    root/
      v1/                   entries in format 1 (a new format gets a new tree)
        ab/                 first two hex digits of the key (keeps directories small)
          ab12…ef/          one entry: the stored files plus meta.json
            program.so
            key.txt         optional: the bytes whose SHA-256 is the key (`KEY_FILE`)
            meta.json       the caller's metadata plus {"files": {name: sha256},
                            "created": unix time, "format": 1, "seal": sha256}
        tmp/                entries being written, and entries being deleted
      locks/
        ab12…ef.lock        flock(2) target for `DiskCache.lock` (holds the holder's pid)
      compilers.json        not an entry: what `lazytorch.codegen.compiler` asked the
                            compiler (its version, whether it takes -mno-avx512fp16),
                            keyed by the binary's path, size and mtime (replaced atomically)

Guarantees:

* **Atomic entries.** `DiskCache.store` writes a complete entry (files fsynced, then
  meta.json, then the directory) in a fresh directory under ``v1/tmp/`` and renames it into
  place; deleting renames the entry into ``v1/tmp/`` before removing it. A reader therefore
  sees a key's entry complete or not at all — also after a crash, which at worst leaves a
  directory in ``v1/tmp/`` (removed by a later `DiskCache` once it is an hour old).
* **First writer wins.** ``rename(2)`` of a directory onto a non-empty one fails, so when
  several processes store the same key at once exactly one entry lands; the others discard
  theirs and return the winner's (keys name the program, so the contents are equivalent).
* **Verified loads.** `DiskCache.lookup` checks every file's SHA-256 against meta.json, and
  meta.json against its *seal*: a SHA-256 over the key and the rest of meta.json. An edited
  meta.json (a changed parameter, shape or size: what the caller trusts to call the code)
  or an entry moved or copied to another key therefore fails like a damaged file. When the
  entry has `KEY_FILE`, its checksum must be the key itself, so the entry names the
  program it was built for. A failing entry — or one whose directory or files another user
  could write — is dropped with a `RuntimeWarning` naming the key and the reason, counted
  in the ``cache_corrupt`` metric, and the caller recompiles. `DiskCache.verify` reports
  the same entries without deleting them.
* **Per-key locks.** ``with cache.lock(key):`` excludes other processes (and threads) using
  the same key, so concurrent workers compile a program once instead of each compiling it.
  A holder that stops (hung, stopped, or its lock inherited by a stuck child) makes a
  waiter give up after `lock_timeout()` seconds with `CacheLockTimeout`, which names the
  lock file and the holder's pid; the lock only saves work, so the waiter compiles itself.
* **Private directory.** A cache root — or ``v1/``, ``v1/tmp/``, ``locks/`` or a key-prefix
  directory — owned by another user or writable by others is refused with `CacheDirError`
  (anyone who can write there can plant code this process would load); a group-writable
  root is accepted with a warning. Directories are created 0o700 and files 0o600 whatever
  the umask. A regular file or symlink found where ``tmp/`` or ``locks/`` belongs (their
  contents are disposable) is replaced by a directory, with a warning. Errors about the
  directory name ``LAZYTORCH_CACHE_DIR`` when the path came from it.
* **Read-only caches are served.** A root (or ``v1/``) that this process cannot write — a
  baked container image, a read-only mount — opens read-only with one log line on
  ``lazytorch.cache`` (once per process and directory): lookups work, `DiskCache.lock` does nothing, and `store`, `remove`
  and `clear` raise `OSError` (``EROFS``), so callers compile misses without storing them.

The checks do not defend against the user's own account (which can write the files at any
time, including between `lookup` and loading, and can recompute a seal), and do not
inspect the root's parent directories. POSIX only (``fcntl``), as is loading shared
objects.

Example:

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     cache = DiskCache(d)
...     key = "0123456789abcdef"
...     with cache.lock(key):
...         entry = cache.lookup(key) or cache.store(key, {"k.so": b"\\x7fELF"}, {"cc": "g++"})
...     print(cache.lookup(key).file("k.so").read_bytes(), entry.meta["cc"])
b'\\x7fELF' g++
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import pathlib
import re
import stat
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lazytorch import metrics
from lazytorch._settings import SETTINGS, env_value
from lazytorch.runtime.cache_dirs import (
    DIR_MODE,
    ENV_DIR,
    FILE_MODE,
    PREFIX_RE,
    CacheDirError,
    check_dir,
    check_prefix_dirs,
    default_cache_dir,
    ensure_scratch_dir,
    fsync_dir,
    is_env_dir,
    listdir,
    make_private_dirs,
    remove_tree,
    same_file,
    warn,
    writable,
    write_private,
)

__all__ = [
    "KEY_FILE",
    "CacheDirError",
    "CacheEntry",
    "CacheLockTimeout",
    "DiskCache",
    "default_cache_dir",
    "lock_timeout",
    "seal_of",
]

log = logging.getLogger("lazytorch.cache")  # LAZYTORCH_LOG=cache

FORMAT = 1
"""Entry format version: the ``format`` field of meta.json and the ``v1`` directory."""

META_NAME = "meta.json"
KEY_FILE = "key.txt"
"""An entry's optional key source: the bytes whose SHA-256 (hex) is the entry's key."""
ENV_LOCK_TIMEOUT = "LAZYTORCH_CACHE_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT: float = SETTINGS[ENV_LOCK_TIMEOUT].default
"""Seconds a waiter waits for a per-key lock; longer than any sane compile of one program."""
STALE_TMP_SECONDS = 3600.0
"""Age after which a directory in ``v1/tmp/`` is assumed to be left by a dead process."""

_KEY_RE = re.compile(r"[0-9a-f]{16,128}")
_SHA256_RE = re.compile(r"[0-9a-f]{64}")
_RESERVED_META = ("files", "created", "format", "seal")
_CHUNK = 1 << 20
# A concurrent process can replace or delete an entry between two of our steps; each such
# race costs one retry, so a handful of attempts only runs out under pathological churn.
_ATTEMPTS = 5


_said_read_only: set[pathlib.Path] = set()  # roots whose read-only log line was written


class CacheLockTimeout(TimeoutError):
    """A per-key lock stayed held past the timeout; ``path`` is the lock file."""

    def __init__(self, message: str, path: pathlib.Path) -> None:
        super().__init__(message)
        self.path = path


def lock_timeout() -> float:
    """Seconds `DiskCache.lock` waits: ``LAZYTORCH_CACHE_LOCK_TIMEOUT``, else 300.

    A value that is not a positive number raises `ValueError` naming the variable.
    """
    return env_value(ENV_LOCK_TIMEOUT)


def seal_of(key: str, meta: Mapping[str, Any]) -> str:
    """The seal of an entry's meta.json: SHA-256 over the key and every other field.

    The fields are hashed as canonical JSON (sorted keys, no spaces), so the seal does not
    depend on meta.json's formatting, only on what it says.
    """
    body = {k: v for k, v in meta.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(f"lazytorch cache entry {key}\0{text}".encode()).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """One stored entry: its key, its directory and its metadata.

    ``meta`` is the metadata given to `DiskCache.store` as it reads back from JSON (tuples
    become lists), plus ``files`` (name -> SHA-256 hex), ``created``, ``format`` and
    ``seal`` (`seal_of` the key and the rest).
    """

    key: str
    path: pathlib.Path
    meta: dict[str, Any]

    def file(self, name: str) -> pathlib.Path:
        """The path of stored file `name`; `KeyError` if the entry has no such file."""
        if name not in self.meta["files"]:
            raise KeyError(f"cache entry {self.key} has no file {name!r}")
        return self.path / name


class _Corrupt(Exception):
    """An entry failed a check; the message is the reason shown to the user."""


class DiskCache:
    """A directory of compiled programs keyed by hex digests; see the module docstring."""

    root: pathlib.Path
    read_only: bool
    """True when this process cannot write the cache: lookups only (see the module doc)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        """Open (creating if needed) the cache at `root`, or `default_cache_dir()`.

        Raises `CacheDirError` if the directory cannot be created or is unsafe: not a
        directory, owned by another user, or world-writable. A directory this process
        cannot write opens read-only (`read_only`). Temporary directories that dead
        processes left over an hour ago are removed.
        """
        path = pathlib.Path(default_cache_dir() if root is None else root).expanduser()
        self.root = path.absolute()
        from_env = root is None or is_env_dir(self.root)
        self._entries = self.root / f"v{FORMAT}"
        self._tmp = self._entries / "tmp"
        self._locks = self.root / "locks"
        try:
            self.read_only = self._open_tree()
        except CacheDirError as exc:
            if not from_env or not env_value(ENV_DIR):
                raise
            raise CacheDirError(
                f"{exc} (the directory comes from {ENV_DIR}={env_value(ENV_DIR)!r})"
            ) from exc.__cause__
        if self.read_only and self.root not in _said_read_only:
            _said_read_only.add(self.root)
            log.warning(
                "lazytorch cache %s is read-only for this process: using its entries, "
                "compiling programs it lacks without storing them",
                self.root,
            )
        if not self.read_only:
            self._clean_stale_tmp()

    def _open_tree(self) -> bool:
        """Create and check the directories; True if the cache can only be read."""
        make_private_dirs(self.root)
        check_dir(self.root)
        check_prefix_dirs(self._entries)
        if not writable(self.root) or (
            os.path.isdir(self._entries) and not writable(self._entries)
        ):
            for sub in (self._entries, self._tmp, self._locks):
                if os.path.isdir(sub):
                    check_dir(sub)
            return True
        make_private_dirs(self._entries)
        check_dir(self._entries)
        for sub in (self._tmp, self._locks):
            ensure_scratch_dir(sub)
        return False

    def __repr__(self) -> str:
        return f"DiskCache({str(self.root)!r})"

    # -- reading ---------------------------------------------------------------------------
    def lookup(self, key: str) -> CacheEntry | None:
        """The verified entry for `key`, or None if there is none.

        Every stored file is hashed and compared with meta.json, and meta.json with its seal
        for `key`. A damaged entry is deleted (left in place when the cache is read-only)
        with a `RuntimeWarning` naming the key and the reason, and None is returned so the
        caller recompiles: a bad cache must cost time, never correctness or a crash.
        """
        path = self._entry_path(key)
        for _ in range(_ATTEMPTS):
            try:
                ident = os.lstat(path)
            except FileNotFoundError:
                return None
            except OSError as exc:  # e.g. a prefix directory made unreadable or a file
                warnings.warn(
                    f"lazytorch disk cache: cannot access entry {key} at {path} ({exc.strerror}); "
                    "it will be recompiled",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return None
            try:
                meta = _read_entry(path, ident, key, verify=True)
            except _Corrupt as exc:
                reason = str(exc)
            else:
                return CacheEntry(key, path, meta)
            if self._drop(key, path, ident, f"is invalid ({reason})"):
                return None
            # removed or replaced concurrently: look at what is there now
        return None

    def reject(self, entry: CacheEntry, reason: str) -> None:
        """Drop `entry`, which its caller found unusable (say, metadata that does not fit
        the program it is for), as `lookup` drops a corrupt one: deleted unless the cache is
        read-only, counted in ``cache_corrupt``, with a `RuntimeWarning` saying `reason`."""
        self._drop(entry.key, entry.path, None, reason)

    def _drop(
        self, key: str, path: pathlib.Path, ident: os.stat_result | None, reason: str
    ) -> bool:
        """Delete, count and warn about a bad entry; False if it was replaced meanwhile."""
        if self.read_only:
            fate = "left it (the cache is read-only)"
        else:
            try:
                if not self._discard(path, ident) and ident is not None:
                    return False
                fate = "deleted it"
            except OSError as exc:
                fate = f"could not delete it ({exc})"
        metrics.increment("cache_corrupt")
        message = (
            f"lazytorch disk cache: entry {key} at {path} {reason}; {fate}, it will be recompiled"
        )
        log.info("%s", message)
        warn(message)
        return True

    def entries(self) -> list[CacheEntry]:
        """Every entry whose meta.json reads as valid, sorted by key (files not hashed)."""
        found = []
        for key, path in self._key_dirs():
            try:
                meta = _read_entry(path, None, key, verify=False)
            except _Corrupt:
                continue
            found.append(CacheEntry(key, path, meta))
        return found

    def verify(self) -> list[tuple[str, str]]:
        """``(key, reason)`` for every entry that `lookup` would drop; deletes nothing.

        For diagnostics (``what is wrong with my cache?``), so it leaves the evidence.
        """
        bad = []
        for key, path in self._key_dirs():
            try:
                _read_entry(path, None, key, verify=True)
            except _Corrupt as exc:
                bad.append((key, str(exc)))
        return bad

    def size_bytes(self) -> int:
        """Total size of the entries' files, meta.json included (temporaries and locks not)."""
        total = 0
        for _, path in self._key_dirs():
            with contextlib.suppress(OSError), os.scandir(path) as it:
                for item in it:
                    with contextlib.suppress(OSError):
                        if item.is_file(follow_symlinks=False):
                            total += item.stat(follow_symlinks=False).st_size
        return total

    # -- writing ---------------------------------------------------------------------------
    def store(self, key: str, files: Mapping[str, bytes], meta: Mapping[str, Any]) -> CacheEntry:
        """Store `files` (plain name -> contents) under `key`, atomically; return the entry.

        If a valid entry for `key` already exists (another process stored it first), it is
        kept and returned and ours is discarded. An invalid existing entry is replaced.
        A file's contents are bytes, or a binary file object that is read to its end in
        chunks (so an entry larger than memory can be stored). `KEY_FILE`, if given, must
        hash to `key`. Validation errors (`ValueError`, `TypeError`) come before anything
        touches the disk; a filesystem error (`OSError`, e.g. a full disk, or ``EROFS`` for
        a read-only cache) propagates and leaves nothing behind under the key.
        """
        path = self._entry_path(key)
        payload = _check_files(files)
        _meta_bytes(key, meta, {})  # validates the metadata before anything is written
        if isinstance(payload.get(KEY_FILE), bytes):
            _check_key_source(key, payload[KEY_FILE])
        self._check_writable(key)
        ensure_scratch_dir(self._tmp)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"store-{key[:16]}-", dir=self._tmp))
        try:
            os.chmod(tmp, DIR_MODE)  # mkdtemp's 0o700 is subject to the umask
            digests = {name: write_private(tmp / name, data) for name, data in payload.items()}
            if KEY_FILE in digests and digests[KEY_FILE] != key:  # streamed: known only now
                raise ValueError(f"the {KEY_FILE} given for cache key {key} hashes to another key")
            meta_bytes = _meta_bytes(key, meta, digests)
            # meta.json last: a directory with a valid meta.json has all its files.
            write_private(tmp / META_NAME, meta_bytes)
            fsync_dir(tmp)
            make_private_dirs(path.parent)
            if not path.parent.is_dir():  # only if someone put a file there
                raise NotADirectoryError(
                    errno.ENOTDIR, f"lazytorch disk cache: {path.parent} is not a directory"
                )
            check_dir(path.parent)
            for _ in range(_ATTEMPTS):
                try:
                    os.rename(tmp, path)  # fails if `path` is a non-empty directory
                except OSError as exc:
                    # Something is at `path`: an entry (ENOTEMPTY or EEXIST, depending on
                    # the filesystem) or a stray file (ENOTDIR), which `lookup` drops.
                    if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                        raise
                else:
                    fsync_dir(path.parent)
                    return CacheEntry(key, path, json.loads(meta_bytes))
                existing = self.lookup(key)  # drops (and warns about) an invalid entry
                if existing is not None:
                    return existing
            raise OSError(
                errno.EBUSY,
                f"lazytorch disk cache: could not store entry {key}: {path} stayed occupied "
                "by something that is not a valid entry",
            )
        finally:
            if os.path.lexists(tmp):
                remove_tree(tmp)

    def remove(self, key: str) -> bool:
        """Delete the entry for `key`; True if there was one."""
        path = self._entry_path(key)
        self._check_writable(key)
        return self._discard(path, None)

    def clear(self) -> int:
        """Delete every entry and every lock file not in use; returns the number of entries.

        Temporary directories are left alone (they may belong to a store in progress).
        """
        self._check_writable(None)
        count = sum(self._discard(path, None) for _, path in self._key_dirs())
        self._clean_locks()
        return count

    @contextlib.contextmanager
    def scratch_dir(self) -> Iterator[pathlib.Path]:
        """A new private directory inside the cache (so on its filesystem) for the ``with``
        block, removed after it; `OSError` (``EROFS``) if the cache is read-only."""
        self._check_writable(None)
        ensure_scratch_dir(self._tmp)
        path = pathlib.Path(tempfile.mkdtemp(prefix="scratch-", dir=self._tmp))
        try:
            os.chmod(path, DIR_MODE)
            yield path
        finally:
            remove_tree(path)

    def lock(
        self, key: str, timeout: float | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Hold an exclusive lock on `key` across processes and threads for a ``with`` block.

        Meant for "look up, else compile and store" so that concurrent workers compile a
        program once; the second waits, then finds the entry. The lock is ``flock(2)`` on
        ``root/locks/<key>.lock``, released by the kernel if the holder dies; the holder
        writes its pid there. Waiting longer than `timeout` seconds (default
        `lock_timeout()`) raises `CacheLockTimeout` naming the lock file and its holder.
        It is not reentrant: taking the same key again inside the block waits for the
        timeout. On a read-only cache it does nothing (nobody can store an entry). The key
        is validated here, not when the block is entered.
        """
        path = self._locks / f"{_check_key(key)}.lock"
        if self.read_only:
            return contextlib.nullcontext()
        return self._locked(path, lock_timeout() if timeout is None else timeout)

    @contextlib.contextmanager
    def _locked(self, path: pathlib.Path, timeout: float) -> Iterator[None]:
        ensure_scratch_dir(self._locks)
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        message = _lock_timeout_message(path, fd, timeout)
                        raise CacheLockTimeout(message, path) from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.1)
                else:
                    # `clear` may have unlinked the file while we waited on it; a lock on an
                    # unlinked file excludes nobody, so then take the lock on the new file.
                    if same_file(os.fstat(fd), path):
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                        break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        try:
            yield
        finally:
            os.close(fd)  # releases the flock

    # -- internals -------------------------------------------------------------------------
    def _entry_path(self, key: str) -> pathlib.Path:
        _check_key(key)
        return self._entries / key[:2] / key

    def _key_dirs(self) -> list[tuple[str, pathlib.Path]]:
        """(key, path) of every entry-named directory entry, sorted by key."""
        found = []
        for prefix in listdir(self._entries):
            if not PREFIX_RE.fullmatch(prefix):
                continue  # tmp/ and anything foreign
            for name in listdir(self._entries / prefix):
                if _KEY_RE.fullmatch(name) and name.startswith(prefix):
                    found.append((name, self._entries / prefix / name))
        return sorted(found)

    def _discard(self, path: pathlib.Path, ident: os.stat_result | None) -> bool:
        """Delete the entry at `path` without ever exposing it half-deleted.

        The entry is renamed into tmp/ first, then removed. With `ident`, only the entry
        that was examined is deleted: if `path` now holds another one (a concurrent store
        replaced it), that one is put back, and False is returned, as it is when `path`
        no longer exists.
        """
        ensure_scratch_dir(self._tmp)
        trash = self._tmp / f"trash-{path.name[:16]}-{uuid.uuid4().hex}"
        try:
            os.rename(path, trash)
        except FileNotFoundError:
            return False
        if ident is not None and not same_file(ident, trash):
            try:
                os.rename(trash, path)
            except OSError:
                remove_tree(trash)  # the key got yet another entry meanwhile
            return False
        remove_tree(trash)
        return True

    def _check_writable(self, key: str | None) -> None:
        if self.read_only:
            what = f"change entry {key}" if key is not None else "change it"
            raise OSError(errno.EROFS, f"lazytorch cache {self.root} is read-only: cannot {what}")

    def _clean_stale_tmp(self) -> None:
        cutoff = time.time() - STALE_TMP_SECONDS
        for name in listdir(self._tmp):
            path = self._tmp / name
            with contextlib.suppress(OSError):
                if os.lstat(path).st_mtime < cutoff:
                    remove_tree(path)

    def _clean_locks(self) -> None:
        """Unlink lock files nobody holds (they would otherwise pile up, one per key ever).

        Safe with `lock`: we unlink only while holding the flock, and a waiter that then
        gets the unlinked file notices and retries on the path's new file.
        """
        for name in listdir(self._locks):
            path = self._locks / name
            try:
                fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if same_file(os.fstat(fd), path):
                    os.unlink(path)
            except OSError:
                pass  # held by someone (BlockingIOError), or already gone
            finally:
                os.close(fd)


# -- validation --------------------------------------------------------------------------------
def _check_key(key: str) -> str:
    """Keys become path components, so only hex digests are allowed."""
    if not isinstance(key, str):
        raise TypeError(f"cache key must be a str, got {type(key).__name__}")
    if not _KEY_RE.fullmatch(key):
        raise ValueError(f"cache key must be 16-128 lowercase hex digits, got {key!r}")
    return key


def _check_name(name: str) -> None:
    """File names become path components inside the entry; meta.json is the cache's own."""
    if not isinstance(name, str):
        raise TypeError(f"cache file name must be a str, got {type(name).__name__}")
    bad = (
        name in ("", ".", "..", META_NAME)
        or "/" in name
        or "\0" in name
        or (os.altsep is not None and os.altsep in name)
    )
    if bad:
        raise ValueError(
            f"cache file name must be a plain file name other than {META_NAME!r}, got {name!r}"
        )


def _check_files(files: Mapping[str, Any]) -> dict[str, Any]:
    """Checked names; contents as bytes, or the file objects given (read when stored)."""
    if not isinstance(files, Mapping):
        raise TypeError(
            f"cache files must be a mapping of name to bytes, got {type(files).__name__}"
        )
    payload: dict[str, Any] = {}
    for name, data in files.items():
        _check_name(name)
        if isinstance(data, (bytes, bytearray, memoryview)):
            payload[name] = bytes(data)
        elif callable(getattr(data, "read", None)):
            payload[name] = data
        else:
            raise TypeError(
                f"contents of cache file {name!r} must be bytes or a binary file, "
                f"got {type(data).__name__}"
            )
    return payload


def _check_key_source(key: str, source: bytes) -> None:
    if hashlib.sha256(source).hexdigest() != key:
        raise ValueError(f"the {KEY_FILE} given for cache key {key} hashes to another key")


def _meta_bytes(key: str, meta: Mapping[str, Any], digests: dict[str, str]) -> bytes:
    """meta.json's contents: the caller's metadata plus what the cache checks on load."""
    if not isinstance(meta, Mapping):
        raise TypeError(f"cache metadata must be a mapping, got {type(meta).__name__}")
    clash = [k for k in _RESERVED_META if k in meta]
    if clash:
        raise ValueError(f"cache metadata must not set the reserved key(s) {clash}")
    full = dict(meta)
    full["files"] = dict(digests)
    full["created"] = time.time()
    full["format"] = FORMAT
    try:
        # Sealed as it reads back (tuples become lists, int keys strings).
        full = json.loads(json.dumps(full, allow_nan=False))
        full["seal"] = seal_of(key, full)
        text = json.dumps(full, sort_keys=True, indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:  # unserializable type; NaN or a cycle
        raise type(exc)(f"cache metadata must be JSON-serializable: {exc}") from None
    return text.encode()


def _read_entry(
    path: pathlib.Path, ident: os.stat_result | None, key: str, *, verify: bool
) -> dict:
    """The entry's metadata, after checking it (and with `verify`, its seal for `key`, its
    directory's and files' owner and modes, and every file's hash).

    Everything is read through one directory descriptor, so a concurrent rename of the
    entry cannot mix files from two entries. Raises `_Corrupt` with the reason.
    """
    try:
        dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _Corrupt("entry vanished while being read") from None
    except OSError as exc:
        raise _Corrupt(f"not a readable directory ({exc.strerror})") from None
    try:
        st = os.fstat(dfd)
        if ident is not None and not same_file(ident, st):
            raise _Corrupt("entry replaced while being read")
        meta = _read_meta(dfd)
        if verify:
            _check_private(st, "its directory")
            if meta.get("seal") is None:
                raise _Corrupt(f"{META_NAME} has no seal (written by an older lazytorch)")
            if meta["seal"] != seal_of(key, meta):
                raise _Corrupt(
                    f"{META_NAME} does not match its seal: it was edited, or the entry was "
                    "filed under another key"
                )
            if KEY_FILE in meta["files"] and meta["files"][KEY_FILE] != key:
                raise _Corrupt(f"{KEY_FILE} names another program (it hashes to another key)")
            for name, digest in meta["files"].items():
                actual = _hash_file(dfd, name)
                if actual != digest:
                    raise _Corrupt(f"checksum mismatch for {name!r} (truncated or modified)")
        return meta
    finally:
        os.close(dfd)


def _check_private(st: os.stat_result, what: str) -> None:
    """_Corrupt if another user could have written what `st` describes."""
    if st.st_uid != os.geteuid():
        raise _Corrupt(f"{what} is owned by uid {st.st_uid}, not by you")
    if st.st_mode & stat.S_IWOTH:
        raise _Corrupt(f"{what} is world-writable (mode {stat.S_IMODE(st.st_mode):#o})")


def _read_meta(dfd: int) -> dict:
    try:
        raw = _read_file(dfd, META_NAME)
    except FileNotFoundError:
        raise _Corrupt(f"{META_NAME} is missing") from None
    except OSError as exc:
        raise _Corrupt(f"cannot read {META_NAME} ({exc.strerror})") from None
    try:
        meta = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _Corrupt(f"{META_NAME} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise _Corrupt(f"{META_NAME} is not a JSON object")
    fmt = meta.get("format")
    if type(fmt) is not int or fmt != FORMAT:  # type(): JSON true must not pass as 1
        raise _Corrupt(f"format version {fmt!r} in {META_NAME}, expected {FORMAT}")
    files = meta.get("files")
    if not isinstance(files, dict):
        raise _Corrupt(f"{META_NAME} has no 'files' object")
    for name, digest in files.items():
        try:
            _check_name(name)
        except ValueError:
            raise _Corrupt(f"{META_NAME} lists an invalid file name {name!r}") from None
        if not isinstance(digest, str) or not _SHA256_RE.fullmatch(digest):
            raise _Corrupt(f"{META_NAME} has an invalid checksum for {name!r}")
    if not isinstance(meta.get("created"), (int, float)):
        raise _Corrupt(f"{META_NAME} has no 'created' time")
    return meta


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # what Python's json accepts beyond the standard


def _open_regular(dfd: int, name: str) -> int:
    """Open `name` in the directory for reading, refusing symlinks and special files."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dfd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return fd


def _read_file(dfd: int, name: str) -> bytes:
    with open(_open_regular(dfd, name), "rb") as f:
        return f.read()


def _hash_file(dfd: int, name: str) -> str:
    try:
        with open(_open_regular(dfd, name), "rb") as f:
            _check_private(os.fstat(f.fileno()), f"file {name!r}")
            h = hashlib.sha256()
            while chunk := f.read(_CHUNK):
                h.update(chunk)
            return h.hexdigest()
    except FileNotFoundError:
        raise _Corrupt(f"file {name!r} is missing") from None
    except OSError as exc:
        raise _Corrupt(f"cannot read {name!r} ({exc.strerror})") from None


def _lock_timeout_message(path: pathlib.Path, fd: int, timeout: float) -> str:
    """Who holds the lock at `path` (open as `fd`), for the timeout's message."""
    try:
        holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        holder = ""
    who = f"process {holder}" if holder.isdigit() else "another process"
    if holder.isdigit():
        try:
            os.kill(int(holder), 0)
        except ProcessLookupError:
            who += " (no longer running here: the lock is held by a process it left behind)"
        except OSError:
            pass
    return (
        f"lazytorch cache lock {path} has been held by {who} for over {timeout:g} s "
        f"(stopped or hung?); set {ENV_LOCK_TIMEOUT} to wait longer"
    )
