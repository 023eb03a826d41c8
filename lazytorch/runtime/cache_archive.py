"""The archives of ``lazytorch cache export``: their format, the writer, and a reader that
takes one pass with bounded memory.

An archive is a tar file, usually gzip-compressed, holding ``KEY/NAME`` regular files (the
cache entries' files, meta.json last, exactly as `lazytorch.runtime.disk_cache` stores
them) and `ARCHIVE_MANIFEST` (the writer's lazytorch version, compiler, ISA, toolchain
fingerprint, and the keys). `write_archive` writes the intact entries of a cache;
`check_entry` is what an archived entry must satisfy before it is stored again.
`read_archive` streams an archive:
every member's header is checked before its contents are read — type, name, duplicates, a
size cap per file, per entry and in all — and contents go to files in a staging directory
(hashed on the way), never into memory; only meta.json and the manifest, both small and
capped, are held. So a hostile archive (a zip bomb: gigabytes of zeros in a few
megabytes) is refused as soon as a declared size passes a cap, having used a few
megabytes of memory.

The tar headers are parsed here rather than by `tarfile`, which reads a pax or GNU
extended header whole into memory whatever size it declares. Accepted: ustar/GNU/pax
headers of regular files, with pax and GNU long-name records up to `MAX_EXTENDED_BYTES`.

Example:

>>> import io, tarfile, tempfile
>>> buf = io.BytesIO()
>>> with tarfile.open(fileobj=buf, mode="w:gz") as tar:
...     info = tarfile.TarInfo("ab" * 8 + "/program.so"); info.size = 3
...     tar.addfile(info, io.BytesIO(b"elf"))
>>> with tempfile.TemporaryDirectory() as stage:
...     archive = read_archive(io.BytesIO(buf.getvalue()), pathlib.Path(stage))
...     print(archive.entries["ab" * 8].files["program.so"].size, archive.manifest)
3 None
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import pathlib
import re
import stat
import tarfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

# The entry layout is the disk cache's: its file names, format number, reserved metadata
# fields, key and checksum spellings, and seal.
from lazytorch.runtime import disk_cache as _layout
from lazytorch.runtime.disk_cache import KEY_FILE, META_NAME, CacheEntry, seal_of

ENTRY_FORMAT = _layout.FORMAT
_KEY_RE = _layout._KEY_RE
_SHA256_RE = _layout._SHA256_RE
_RESERVED_META = _layout._RESERVED_META

__all__ = [
    "ARCHIVE_FORMAT",
    "ARCHIVE_MANIFEST",
    "ArchiveError",
    "ArchivedEntry",
    "NotAnArchive",
    "StagedFile",
    "WrittenArchive",
    "caller_meta",
    "check_entry",
    "entry_files",
    "read_archive",
    "write_archive",
]

ARCHIVE_FORMAT = 1
"""Version of the export archive's layout (the ``format`` of lazytorch-cache.json)."""
ARCHIVE_MANIFEST = "lazytorch-cache.json"

# Bounds on what an archive may hold. Compiled programs are kilobytes to tens of
# megabytes; the caps are far above that and far below what would hurt a machine.
MAX_MEMBERS = 100_000
MAX_FILE_BYTES = 256 << 20
MAX_ENTRY_BYTES = 512 << 20
MAX_META_BYTES = 1 << 20
MAX_MANIFEST_BYTES = 16 << 20
MAX_EXTENDED_BYTES = 64 << 10
MAX_TOTAL_BYTES = 16 << 30
HEAD_BYTES = 1024
"""How much of each file is kept in memory (`StagedFile.head`), e.g. a key source's fields."""

# Plain file names only: no separators, no leading dot (so no "." or ".."), no oddities.
_FILE_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_MEMBER_RE = re.compile(rf"({_KEY_RE.pattern})/({_FILE_NAME_RE.pattern})")
_BLOCK = 512
_CHUNK = 1 << 20
# tar type flags: what each is, for the refusal of anything but a regular file.
_KINDS = {
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a device or special file",
    b"4": "a device or special file",
    b"5": "a directory",
    b"6": "a device or special file",
    b"7": "a contiguous file (unsupported)",
}
_REGULAR = (b"0", b"\0")
# Decompression errors, and what a truncated stream raises.
_STREAM_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, OSError)


class ArchiveError(ValueError):
    """The archive is refused as a whole; the message names the member and the reason."""


class NotAnArchive(ArchiveError):
    """The file is not a tar archive (compressed or not), or it is truncated or damaged."""


@dataclass
class StagedFile:
    """One archived file, copied to `path`: its size, SHA-256 and first `HEAD_BYTES`."""

    path: pathlib.Path
    size: int
    sha256: str
    head: bytes


@dataclass
class ArchivedEntry:
    """The members of one key: its meta.json's bytes (None if absent) and its other files."""

    meta: bytes | None = None
    files: dict[str, StagedFile] = field(default_factory=dict)
    size: int = 0


@dataclass
class Archive:
    """What `read_archive` found: the manifest's bytes (None if absent) and the entries,
    keys in archive order."""

    manifest: bytes | None
    entries: dict[str, ArchivedEntry]


# -- writing -------------------------------------------------------------------------------
@dataclass
class WrittenArchive:
    """What `write_archive` wrote: the keys, the entries skipped (key, why) and the bytes
    of the files, uncompressed."""

    keys: list[str]
    skipped: list[tuple[str, str]]
    total: int


def write_archive(
    raw: IO[bytes], entries: Iterable[CacheEntry], origin: Mapping[str, Any], now: float
) -> WrittenArchive:
    """Write every intact entry of `entries`, then `ARCHIVE_MANIFEST`, to `raw` as a
    gzip-compressed tar; a corrupt or unreadable entry is skipped with the reason.

    `origin` holds the manifest's ``lazytorch``, ``compiler``, ``isa`` and ``toolchain``
    fields (those of the machine writing it); `now` is the manifest's ``created`` time.

    >>> import io, json, tempfile
    >>> from lazytorch.runtime.disk_cache import DiskCache
    >>> with tempfile.TemporaryDirectory() as d:
    ...     cache = DiskCache(pathlib.Path(d) / "cache")
    ...     _ = cache.store("ab" * 8, {"program.so": b"elf"}, {"compiler": "g++"})
    ...     buf = io.BytesIO()
    ...     written = write_archive(buf, cache.entries(), {"lazytorch": "0.1.0"}, 0.0)
    ...     _ = buf.seek(0)
    ...     archive = read_archive(buf, pathlib.Path(d))
    ...     entry = archive.entries["ab" * 8]
    ...     meta, problem = check_entry("ab" * 8, entry)
    >>> written.keys == ["ab" * 8], json.loads(archive.manifest)["lazytorch"]
    (True, '0.1.0')
    >>> problem  # intact, but no key.txt: its key cannot be checked
    'it does not record the program it was built for (key.txt), so its key cannot be checked (written by an older lazytorch)'
    >>> caller_meta(json.loads(entry.meta))
    {'compiler': 'g++'}
    """
    keys: list[str] = []
    skipped: list[tuple[str, str]] = []
    total = 0
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for entry in entries:
            try:
                files = entry_files(entry)
            except (OSError, ValueError) as e:
                skipped.append((entry.key, str(e)))
                continue
            created = entry.meta.get("created")
            mtime = float(created) if isinstance(created, (int, float)) and created else now
            # meta.json last, as in the cache: files come before what vouches for them.
            for name in sorted(files, key=lambda n: (n == META_NAME, n)):
                _add_file(tar, f"{entry.key}/{name}", files[name], mtime)
                total += len(files[name])
            keys.append(entry.key)
        manifest = {"format": ARCHIVE_FORMAT, **origin, "created": now, "keys": keys}
        _add_file(tar, ARCHIVE_MANIFEST, json.dumps(manifest, indent=1).encode(), now)
    return WrittenArchive(keys, skipped, total)


def entry_files(entry: CacheEntry) -> dict[str, bytes]:
    """meta.json and the entry's files as they are now, checked against meta.json's hashes.

    Reading first and hashing what was read means the archive holds exactly the bytes
    that were verified, even if the entry changes meanwhile. Raises ValueError (corrupt)
    or OSError (unreadable) with the reason.
    """
    raw = _read_regular(entry.path / META_NAME, MAX_META_BYTES)
    meta = json.loads(raw)
    if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict):
        raise ValueError(f"{META_NAME} has no 'files' object")
    if meta.get("seal") != seal_of(entry.key, meta):
        raise ValueError(f"{META_NAME} does not match its seal (edited, or under another key)")
    out = {META_NAME: raw}
    for name, digest in meta["files"].items():
        if not isinstance(name, str) or not _FILE_NAME_RE.fullmatch(name):
            raise ValueError(f"{META_NAME} lists an invalid file name {name!r}")
        data = _read_regular(entry.path / name, MAX_FILE_BYTES)
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"checksum mismatch for {name!r} (truncated or modified)")
        out[name] = data
    return out


def _read_regular(path: pathlib.Path, limit: int) -> bytes:
    """Read a regular file without following a symlink (an entry's files must be its own)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path} is larger than {limit / (1 << 20):.1f} MiB")
    return data


def _add_file(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    """Add a private regular file (owner and group left out: they mean nothing elsewhere)."""
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(mtime)
    tar.addfile(info, io.BytesIO(data))


# -- checking an archived entry -------------------------------------------------------------
def check_entry(key: str, entry: ArchivedEntry) -> tuple[dict[str, Any] | None, str | None]:
    """An archived entry's metadata if it is intact and filed under its own key, else None
    and why not."""
    if entry.meta is None:
        return None, f"damaged: no {META_NAME}"
    try:
        meta = json.loads(entry.meta)
    except (ValueError, UnicodeDecodeError) as e:
        return None, f"damaged: {META_NAME} is not valid JSON ({e})"
    if not isinstance(meta, dict):
        return None, f"damaged: {META_NAME} is not a JSON object"
    fmt = meta.get("format")
    if type(fmt) is not int or fmt != ENTRY_FORMAT:
        return None, f"entry format {fmt!r}, this lazytorch reads format {ENTRY_FORMAT}"
    listed = meta.get("files")
    if not isinstance(listed, dict) or not all(
        isinstance(n, str) and isinstance(d, str) and _SHA256_RE.fullmatch(d)
        for n, d in listed.items()
    ):
        return None, f"damaged: {META_NAME} has no valid 'files' checksums"
    if set(listed) != set(entry.files):
        missing = sorted(set(listed) - set(entry.files))
        extra = sorted(set(entry.files) - set(listed))
        what = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unlisted {', '.join(extra)}" if extra else "",
            )
            if part
        )
        return None, f"damaged: files do not match {META_NAME} ({what})"
    for name, digest in listed.items():
        if entry.files[name].sha256 != digest:
            return None, f"damaged: checksum mismatch for {name!r}"
    if meta.get("seal") != seal_of(key, meta):
        return None, (
            f"damaged: {META_NAME} does not match its seal (edited, or filed under another key)"
        )
    if KEY_FILE not in entry.files:
        return None, (
            f"it does not record the program it was built for ({KEY_FILE}), so its key cannot "
            "be checked (written by an older lazytorch)"
        )
    if entry.files[KEY_FILE].sha256 != key:
        return None, (
            f"filed under another program's key: its {KEY_FILE} (the program it was built "
            "for) hashes to another key"
        )
    return meta, None


def caller_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """An entry's metadata less the fields the cache itself writes (to store it again)."""
    return {k: v for k, v in meta.items() if k not in _RESERVED_META}


# -- reading --------------------------------------------------------------------------------
def read_archive(raw: IO[bytes], stage: pathlib.Path) -> Archive:
    """Check and stage every member of the archive open as `raw`; `ArchiveError` if any is
    not what ``lazytorch cache export`` writes or passes a cap.

    Files are written under `stage` (``stage/KEY/NAME``), which the caller removes.
    """
    try:
        return _read(_decompressed(raw), stage)
    except _STREAM_ERRORS as e:
        raise NotAnArchive(f"{type(e).__name__}: {e}") from None


def _decompressed(raw: IO[bytes]) -> IO[bytes]:
    """`raw` decompressed as its magic bytes say (gzip, bzip2, xz or none), read lazily."""
    magic = raw.read(6)
    raw.seek(0)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if magic.startswith(b"\xfd7zXZ\0"):
        return lzma.LZMAFile(raw)
    return raw


def _read(stream: IO[bytes], stage: pathlib.Path) -> Archive:
    archive = Archive(None, {})
    seen: set[str] = set()
    total = 0
    for count, (name, size, kind) in enumerate(_headers(stream)):
        if count >= MAX_MEMBERS:
            raise ArchiveError(f"more than {MAX_MEMBERS} members")
        if kind not in _REGULAR:
            what = _KINDS.get(kind, f"of unknown tar type {kind!r}")
            raise ArchiveError(f"member {name!r} is {what}, not a regular file; refusing it")
        match = _MEMBER_RE.fullmatch(name)
        if name != ARCHIVE_MANIFEST and match is None:
            raise ArchiveError(
                f"unexpected member {name!r}; a cache archive holds only {ARCHIVE_MANIFEST} "
                "and KEY/FILE (KEY: hex digits, FILE: a plain file name). Was it written by "
                "'lazytorch cache export'?"
            )
        if name in seen:
            raise ArchiveError(f"member {name!r} appears twice; refusing the archive")
        seen.add(name)
        total += size
        if total > MAX_TOTAL_BYTES:
            raise ArchiveError(f"it holds over {_mib(MAX_TOTAL_BYTES)}; refusing to read it")
        if match is None:
            archive.manifest = _read_small(stream, name, size, MAX_MANIFEST_BYTES)
            continue
        key, file_name = match.groups()
        limit = MAX_META_BYTES if file_name == META_NAME else MAX_FILE_BYTES
        if size > limit:
            raise ArchiveError(f"member {name!r} is {size} bytes, over {_mib(limit)}")
        entry = archive.entries.setdefault(key, ArchivedEntry())
        entry.size += size
        if entry.size > MAX_ENTRY_BYTES:
            raise ArchiveError(
                f"the files of entry {key[:16]} add up to over {_mib(MAX_ENTRY_BYTES)} "
                f"(at member {name!r}); refusing the archive"
            )
        if file_name == META_NAME:
            entry.meta = _read_small(stream, name, size, MAX_META_BYTES)
        else:
            entry.files[file_name] = _stage(stream, name, size, stage / key / file_name)
    return archive


def _headers(stream: IO[bytes]) -> Iterator[tuple[str, int, bytes]]:
    """(name, size, type flag) of each member; its contents and padding must be read
    (`_read_small`, `_stage`) before the next header is asked for. Extended headers
    (pax, GNU long names) are applied to the member they precede."""
    long_name: str | None = None
    pax: dict[str, str] = {}
    while True:
        block = _read_exact(stream, _BLOCK, "a header")
        if block is None or block == bytes(_BLOCK):
            return  # end of archive (a zero block), or a stream ending between members
        _check_sum(block)
        kind = block[156:157]
        size = _number(block[124:136])
        if kind in (b"x", b"g", b"L", b"K"):  # pax / global pax / GNU long name or link
            if size > MAX_EXTENDED_BYTES:
                raise ArchiveError(
                    f"an extended tar header of {size} bytes, over {MAX_EXTENDED_BYTES}; "
                    "refusing the archive"
                )
            data = _read_small(stream, "an extended header", size, MAX_EXTENDED_BYTES)
            if kind == b"x":
                pax.update(_pax_records(data))
            elif kind == b"L":
                long_name = data.split(b"\0", 1)[0].decode("utf-8", "replace")
            continue
        name = _text(block[0:100])
        if block[257:263] == b"ustar\x00" and block[345:500].strip(b"\0"):
            name = _text(block[345:500]) + "/" + name
        name = pax.get("path", long_name if long_name is not None else name)
        if "size" in pax:
            if not pax["size"].isdigit():
                raise ArchiveError(f"member {name!r} has an invalid size in its pax header")
            size = int(pax["size"])
        long_name, pax = None, {}
        yield name, size, kind


def _check_sum(block: bytes) -> None:
    stored = block[148:156].split(b"\0", 1)[0].strip()
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    try:
        ok = int(stored, 8) == unsigned
    except ValueError:
        ok = False
    if not ok:
        raise NotAnArchive("a tar header's checksum does not match")


def _number(field_bytes: bytes) -> int:
    """A numeric header field: octal text, or base-256 (GNU) when the top bit is set."""
    if field_bytes[0] & 0x80:
        if field_bytes[0] == 0xFF:
            raise ArchiveError("a tar header holds a negative number")
        return int.from_bytes(bytes([field_bytes[0] & 0x7F]) + field_bytes[1:], "big")
    text = field_bytes.split(b"\0", 1)[0].strip()
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise ArchiveError(f"a tar header holds an invalid number {text!r}") from None


def _text(field_bytes: bytes) -> str:
    return field_bytes.split(b"\0", 1)[0].decode("utf-8", "replace")


def _pax_records(data: bytes) -> dict[str, str]:
    """The ``LENGTH key=value\\n`` records of a pax extended header."""
    out: dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos:].strip(b"\0"):
        length_text, _, _ = data[pos : pos + 20].partition(b" ")
        if not length_text.isdigit() or int(length_text) <= len(length_text) + 1:
            raise ArchiveError("a pax extended header is malformed")
        record = data[pos : pos + int(length_text)]
        key, sep, value = record[len(length_text) + 1 :].rstrip(b"\n").partition(b"=")
        if not sep:
            raise ArchiveError("a pax extended header is malformed")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        pos += int(length_text)
    return out


def _read_exact(stream: IO[bytes], n: int, what: str) -> bytes | None:
    """Exactly `n` bytes (None if the stream ends right away); `ArchiveError` if it ends
    partway. Only for small reads: headers and padding."""
    data = stream.read(n)
    while len(data) < n:
        more = stream.read(n - len(data))
        if not more:
            if not data:
                return None
            raise NotAnArchive(f"it ends inside {what}: truncated")
        data += more
    return data


def _read_small(stream: IO[bytes], name: str, size: int, limit: int) -> bytes:
    """A member's contents in memory, after checking its declared size against `limit`."""
    if size > limit:
        raise ArchiveError(f"member {name!r} is {size} bytes, over {_mib(limit)}")
    data = _read_exact(stream, size, f"member {name!r}") or b""
    _read_exact(stream, -size % _BLOCK, f"the padding of member {name!r}")
    return data


def _stage(stream: IO[bytes], name: str, size: int, path: pathlib.Path) -> StagedFile:
    """Copy a member's contents to `path` in chunks, hashing them."""
    if size > MAX_FILE_BYTES:
        raise ArchiveError(f"member {name!r} is {size} bytes, over {_mib(MAX_FILE_BYTES)}")
    path.parent.mkdir(mode=0o700, exist_ok=True)
    h = hashlib.sha256()
    head = b""
    left = size
    with open(path, "xb") as out:
        while left:
            chunk = stream.read(min(left, _CHUNK))
            if not chunk:
                raise NotAnArchive(f"it ends inside member {name!r}: truncated")
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            h.update(chunk)
            out.write(chunk)
            left -= len(chunk)
    _read_exact(stream, -size % _BLOCK, f"the padding of member {name!r}")
    return StagedFile(path, size, h.hexdigest(), head)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"
