"""``lazytorch cache``: list, check, clear, export and import the on-disk compile cache.

The cache (`lazytorch.runtime.disk_cache`) holds compiled programs keyed by a hash of the
program and of the toolchain that built it. These commands look at it without loading
anything, and move it between machines: ``export`` writes the verified entries to one
tar.gz, ``import`` stores those of an archive that this machine can use (built by the same
lazytorch, compiler, flags and CPU features, filed under the key of their own program) and
refuses the others, saying why. The archive format, its writer, the checks of an archived
entry and the streaming reader are in `lazytorch.runtime.cache_archive`; this module opens
files and prints.

Usage::

    lazytorch cache ls                        # one row per entry
    lazytorch cache info                      # totals, versions, how many are usable here
    lazytorch cache verify                    # re-hash every entry; exit 1 if one is corrupt
    lazytorch cache export programs.tar.gz    # e.g. on a build machine ...
    lazytorch cache import programs.tar.gz    # ... then on each serving replica
    lazytorch cache clear --cache-dir /tmp/c  # every subcommand takes --cache-dir

The same from Python (the return value is the exit status):

>>> import tempfile
>>> from lazytorch.cli import main
>>> with tempfile.TemporaryDirectory() as d:
...     main(["cache", "verify", "--cache-dir", d])
0 entries verified, all intact (...)
0
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import pathlib
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

from lazytorch._version import __version__
from lazytorch.cli import CliError
from lazytorch.runtime.cache_archive import (
    ARCHIVE_FORMAT,
    ARCHIVE_MANIFEST,
    ArchivedEntry,
    ArchiveError,
    NotAnArchive,
    caller_meta,
    check_entry,
    read_archive,
    write_archive,
)
from lazytorch.runtime.disk_cache import KEY_FILE, CacheDirError, DiskCache, default_cache_dir

if TYPE_CHECKING:
    from lazytorch.codegen.compiler import Toolchain
    from lazytorch.runtime.disk_cache import DiskCache

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    """Register ``lazytorch cache`` and its subcommands with the top-level parser."""
    p = subparsers.add_parser(
        "cache",
        help="list, check, clear, export and import the compile cache",
        description="Manage the on-disk cache of compiled programs. It lives in "
        "LAZYTORCH_CACHE_DIR, else $XDG_CACHE_HOME/lazytorch, else ~/.cache/lazytorch; "
        "every subcommand takes --cache-dir to name another one.",
        epilog="Run 'lazytorch cache SUBCOMMAND --help' for a subcommand's options.",
    )
    p.set_defaults(func=lambda args: _usage(p))
    sub = p.add_subparsers(dest="cache_command", metavar="SUBCOMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=pathlib.Path,
        help="the cache directory (default: LAZYTORCH_CACHE_DIR, else the XDG cache "
        f"directory; here: {_default_dir_text()})",
    )

    ls = sub.add_parser(
        "ls",
        parents=[common],
        help="list the entries",
        description="List the cache's entries, one row each: key (first 16 hex digits), "
        "size, creation time, IR nodes, kernels, input shapes and the line that recorded "
        "the program's first op. Files are not hashed (see 'verify').",
    )
    ls.add_argument(
        "--json", action="store_true", help="print a JSON list of entries (full keys, metadata)"
    )
    ls.set_defaults(func=_ls)

    info = sub.add_parser(
        "info",
        parents=[common],
        help="summarize the cache",
        description="Show the cache directory, entry count and total size, entries by "
        "lazytorch version, compiler and ISA, how many were built by this machine's "
        "toolchain (usable here), and the oldest and newest entry.",
    )
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(func=_info)

    verify = sub.add_parser(
        "verify",
        parents=[common],
        help="re-hash every entry and report corrupt ones",
        description="Check every entry's files against the SHA-256 checksums in its "
        "meta.json, and meta.json against its seal (so an edited manifest or an entry "
        "moved to another key shows). Prints each corrupt entry's key and reason and exits "
        "1 if there is one, else exits 0. Deletes nothing: lazytorch drops a corrupt entry "
        "when it looks it up, and recompiles the program.",
    )
    verify.set_defaults(func=_verify)

    clear = sub.add_parser(
        "clear",
        parents=[common],
        help="delete every entry",
        description="Delete every entry of the cache (programs recompile on next use). "
        "Lock files nobody holds are removed too; writes in progress are left alone.",
    )
    clear.set_defaults(func=_clear)

    export = sub.add_parser(
        "export",
        parents=[common],
        help="write the verified entries to a tar.gz archive",
        description="Write every intact entry (meta.json, program.so, program.cpp under "
        f"KEY/) plus {ARCHIVE_MANIFEST} (lazytorch version, compiler, ISA, toolchain "
        "fingerprint, keys) to FILE, a gzip-compressed tar archive. Corrupt entries are "
        "skipped. FILE is replaced atomically. Load it elsewhere with 'lazytorch cache "
        "import FILE'.",
    )
    export.add_argument("file", metavar="FILE", type=pathlib.Path, help="the archive to write")
    export.set_defaults(func=_export)

    imp = sub.add_parser(
        "import",
        parents=[common],
        help="add the usable entries of an exported archive",
        description="Read FILE, written by 'lazytorch cache export', and store each entry "
        "whose checksums and seal match, whose key recomputed from its key.txt is the key "
        "it is filed under, and that was built for this machine (same lazytorch "
        "version, compiler, flags, runtime headers and CPU features: the toolchain "
        "fingerprint). Other entries are refused with the reason; entries already in the "
        "cache are kept. Exits 1 if any entry was refused. An archive holding anything but "
        "regular files named KEY/NAME and lazytorch-cache.json, or more than 256 MiB in a "
        "file or 512 MiB in an entry, is rejected as a whole (it is read in one pass, "
        "with bounded memory).",
    )
    imp.add_argument("file", metavar="FILE", type=pathlib.Path, help="the archive to read")
    imp.set_defaults(func=_import)


def _usage(parser: argparse.ArgumentParser) -> int:
    """``lazytorch cache`` without a subcommand: show what there is, fail like a usage error."""
    parser.print_help()
    return 2


def _default_dir_text() -> str:
    """The default cache directory as it resolves now, for --help."""
    # argparse %-formats help strings, so a '%' in the path must be escaped.
    return str(default_cache_dir()).replace("%", "%%")


# -- opening the cache -------------------------------------------------------------------------
def _root(args: argparse.Namespace) -> pathlib.Path:
    """The cache directory the command works on: --cache-dir, else the default."""
    root = args.cache_dir if args.cache_dir is not None else default_cache_dir()
    return pathlib.Path(root).expanduser().absolute()


def _open(root: pathlib.Path, *, create: bool) -> DiskCache | None:
    """The `DiskCache` at `root`, or None when it does not exist and `create` is False.

    Read-only commands do not create a directory just to report that it is empty.
    """
    if not create and not os.path.lexists(root):
        return None
    try:
        return DiskCache(root)
    except CacheDirError as e:
        raise CliError(str(e)) from None


def _toolchain(root: pathlib.Path) -> tuple[Toolchain | None, str | None]:
    """This machine's `Toolchain` (None if there is no compiler) and the reason if not."""
    # lazy: import time (cli --help)
    from lazytorch.codegen.compiler import ToolchainError, toolchain

    try:
        return toolchain(root), None
    except ToolchainError as e:  # CompilerMissing included
        return None, str(e)


# -- formatting --------------------------------------------------------------------------------
def format_size(n: float) -> str:
    """A byte count for people: ``812 B``, ``16.0 KiB``, ``1.2 MiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{int(n)} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _when(t: float | None) -> str:
    """A Unix time as local time to the minute, or ``-``."""
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _entries(n: int) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{n} entry" if n == 1 else f"{n} entries"


def _shorten(text: str, width: int) -> str:
    """`text` cut to `width` characters, with an ellipsis if cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _shorten_path(text: str, width: int) -> str:
    """Keep a location's end (file name and line), the part that tells entries apart."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _table(rows: list[list[str]]) -> str:
    """Left-aligned columns separated by two spaces (the last column is not padded)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join([*(c.ljust(w) for c, w in zip(r[:-1], widths)), r[-1]]).rstrip() for r in rows
    )


def _entry_size(path: pathlib.Path) -> int:
    """Bytes of an entry's regular files, meta.json included."""
    total = 0
    with contextlib.suppress(OSError), os.scandir(path) as it:
        for item in it:
            with contextlib.suppress(OSError):
                if item.is_file(follow_symlinks=False):
                    total += item.stat(follow_symlinks=False).st_size
    return total


def _created(meta: dict[str, Any]) -> float | None:
    """When the entry was stored (Unix time), if meta.json says."""
    t = meta.get("created")
    return float(t) if isinstance(t, (int, float)) else None


def _summary(meta: dict[str, Any]) -> dict[str, Any]:
    """The entry's ``summary`` (absent in entries written before lazytorch recorded it)."""
    s = meta.get("summary")
    return s if isinstance(s, dict) else {}


def _kernels(meta: dict[str, Any]) -> int | None:
    """The number of compiled kernels in the entry's manifest, if recorded."""
    manifest = meta.get("manifest")
    k = manifest.get("kernels") if isinstance(manifest, dict) else None
    return k if isinstance(k, int) else None


def _text(value: Any) -> str:
    """A table cell: ``-`` for an unrecorded value."""
    return "-" if value is None else str(value)


# -- ls ----------------------------------------------------------------------------------------
def _ls(args: argparse.Namespace) -> int:
    """``lazytorch cache ls``: a table (or JSON list) of the entries."""
    root = _root(args)
    cache = _open(root, create=False)
    entries = cache.entries() if cache is not None else []
    if args.json:
        out = []
        for e in entries:
            s = _summary(e.meta)
            created = _created(e.meta)
            out.append(
                {
                    "key": e.key,
                    "path": str(e.path),
                    "size_bytes": _entry_size(e.path),
                    "created": created,
                    "created_local": _when(created) if created is not None else None,
                    "lazytorch": e.meta.get("lazytorch"),
                    "compiler": e.meta.get("compiler"),
                    "isa": e.meta.get("isa"),
                    "toolchain": e.meta.get("toolchain"),
                    "kernels": _kernels(e.meta),
                    "nodes": s.get("nodes"),
                    "inputs": s.get("inputs"),
                    "outputs": s.get("outputs"),
                    "ops": s.get("ops"),
                    "first_recorded_at": s.get("first_recorded_at"),
                    "deterministic": s.get("deterministic"),
                    "files": sorted(e.meta.get("files", {})),
                }
            )
        print(json.dumps(out, indent=1))
        return 0
    if not entries:
        suffix = "" if cache is not None else " (the directory does not exist yet)"
        print(f"no entries in {root}{suffix}")
        return 0
    rows = [["KEY", "SIZE", "CREATED", "NODES", "KERNELS", "INPUTS", "FIRST RECORDED AT"]]
    for e in entries:
        s = _summary(e.meta)
        inputs = s.get("inputs")
        if isinstance(inputs, list):
            shown = ", ".join(map(str, inputs)) if inputs else "(none)"
            shown = _shorten(shown, 40)
        else:
            shown = "-"
        rows.append(
            [
                e.key[:16],
                format_size(_entry_size(e.path)),
                _when(_created(e.meta)),
                _text(s.get("nodes")),
                _text(_kernels(e.meta)),
                shown,
                _shorten_path(_text(s.get("first_recorded_at")), 48),
            ]
        )
    print(_table(rows))
    print(f"{_entries(len(entries))} in {root}")
    return 0


# -- info --------------------------------------------------------------------------------------
def _info(args: argparse.Namespace) -> int:
    """``lazytorch cache info``: totals, versions, and how many entries this machine can use."""
    root = _root(args)
    cache = _open(root, create=False)
    entries = cache.entries() if cache is not None else []
    tc, missing = _toolchain(cache.root if cache is not None else root)
    here = tc.fingerprint if tc is not None else None
    usable = other = unknown = 0
    for e in entries:
        fp = e.meta.get("toolchain")
        if not isinstance(fp, str) or here is None:
            unknown += 1
        elif fp == here:
            usable += 1
        else:
            other += 1
    times = [t for e in entries if (t := _created(e.meta)) is not None]

    def count(field: str) -> dict[str, int]:
        c = collections.Counter(
            str(e.meta[field]) if e.meta.get(field) is not None else "(not recorded)"
            for e in entries
        )
        return dict(c.most_common())

    data = {
        "cache_dir": str(root),
        "exists": cache is not None,
        "entries": len(entries),
        "size_bytes": cache.size_bytes() if cache is not None else 0,
        "usable_here": usable,
        "other_toolchain": other,
        "toolchain_unknown": unknown,
        "toolchain": here,
        "oldest": min(times) if times else None,
        "newest": max(times) if times else None,
        "by_lazytorch": count("lazytorch"),
        "by_compiler": count("compiler"),
        "by_isa": count("isa"),
    }
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    rows = [
        ["cache directory", str(root) + ("" if cache is not None else " (does not exist yet)")],
        ["entries", f"{len(entries)} ({format_size(data['size_bytes'])})"],
    ]
    if here is None:
        rows.append(["usable here", f"unknown: {missing}"])
    else:
        rows.append(["usable here", f"{usable} (built by this machine's toolchain {here[:12]})"])
        rows.append(
            [
                "other toolchain",
                f"{other} (another compiler, flags, CPU or lazytorch build: never loaded here)",
            ]
        )
        if unknown:
            rows.append(["not recorded", f"{unknown} (written by an older lazytorch)"])
    rows += [["oldest entry", _when(data["oldest"])], ["newest entry", _when(data["newest"])]]
    print(_table(rows))
    for title, field in (("lazytorch version", "by_lazytorch"), ("compiler", "by_compiler")):
        _print_counts(f"by {title}:", data[field])
    _print_counts("by ISA:", data["by_isa"])
    if entries:
        print("(files are not hashed here: run 'lazytorch cache verify' to check them)")
    return 0


def _print_counts(title: str, counts: dict[str, int]) -> None:
    """A titled two-column table of counts (nothing if there are none)."""
    if not counts:
        return
    print(title)
    print(_table([[f"  {n:>5}", name] for name, n in counts.items()]))


# -- verify ------------------------------------------------------------------------------------
def _verify(args: argparse.Namespace) -> int:
    """``lazytorch cache verify``: exit 1 and name each corrupt entry, deleting nothing."""
    root = _root(args)
    cache = _open(root, create=False)
    if cache is None:
        print(f"no entries in {root} (the directory does not exist yet)")
        return 0
    bad = cache.verify()
    keys = {e.key for e in cache.entries()} | {k for k, _ in bad}
    if not bad:
        print(f"{_entries(len(keys))} verified, all intact ({root})")
        return 0
    for key, reason in bad:
        print(f"corrupt  {key}  {reason}")
    print(
        f"{len(bad)} of {_entries(len(keys))} {'is' if len(bad) == 1 else 'are'} corrupt "
        f"in {root}. Nothing was deleted: lazytorch drops a corrupt entry when it "
        "looks it up and recompiles the program (with a RuntimeWarning). To remove them "
        "now, run 'lazytorch cache clear' (all entries)."
    )
    return 1


# -- clear -------------------------------------------------------------------------------------
def _clear(args: argparse.Namespace) -> int:
    """``lazytorch cache clear``: delete every entry."""
    root = _root(args)
    cache = _open(root, create=False)
    try:
        n = cache.clear() if cache is not None else 0
    except OSError as e:  # e.g. a read-only cache
        raise CliError(f"cannot clear {root}: {e}") from None
    print(f"removed {_entries(n)} from {root}")
    return 0


# -- export ------------------------------------------------------------------------------------
def _export(args: argparse.Namespace) -> int:
    """``lazytorch cache export FILE``: the intact entries and a manifest, as one tar.gz."""
    from lazytorch.runtime.cpp_backend import isa_summary  # lazy: import time (cli --help)

    root = _root(args)
    cache = _open(root, create=False)
    if cache is None:
        raise CliError(f"there is no cache at {root}: nothing to export (check --cache-dir)")
    target = args.file.expanduser().absolute()
    if target.is_dir():
        raise CliError(f"{target} is a directory; give the archive's file name, e.g. cache.tar.gz")
    if not target.parent.is_dir():
        raise CliError(f"cannot write {target}: directory {target.parent} does not exist")
    tc, _ = _toolchain(cache.root)
    origin = {
        "lazytorch": __version__,
        "compiler": tc.version if tc is not None else None,
        "isa": isa_summary(),
        "toolchain": tc.fingerprint if tc is not None else None,
    }
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise CliError(f"cannot write {target}: {e.strerror}") from None
    tmp = pathlib.Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            written = write_archive(raw, cache.entries(), origin, time.time())
            # after the tarfile closed: its end blocks and the gzip trailer are written then
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, target)
    except OSError as e:
        raise CliError(f"cannot write {target}: {e}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    skipped = written.skipped
    for key, reason in skipped:
        print(f"skipped corrupt entry {key}: {reason}", file=sys.stderr)
    print(
        f"exported {_entries(len(written.keys))} "
        f"({format_size(written.total)} uncompressed, "
        f"{format_size(target.stat().st_size)} archive) "
        f"from {root} to {target}" + (f"; skipped {len(skipped)} corrupt" if skipped else "")
    )
    return 0


def _umask() -> int:
    """The process's umask (reading it means setting it, so it is set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- import ------------------------------------------------------------------------------------
def _foreign_reason(meta: dict[str, Any], tc: Toolchain) -> str | None:
    """Why an intact entry cannot be used on this machine, or None if it can."""
    from lazytorch.runtime.cpp_backend import isa_summary  # lazy: import time (cli --help)

    theirs = meta.get("toolchain")
    if not isinstance(theirs, str):
        return (
            "written by a lazytorch that did not record its toolchain fingerprint; "
            "recompile it here instead"
        )
    reasons = []
    if meta.get("lazytorch") != __version__:
        reasons.append(f"built by lazytorch {meta.get('lazytorch')}, this is {__version__}")
    if meta.get("compiler") != tc.version:
        reasons.append(
            f"built with compiler {meta.get('compiler')!r}, this machine has {tc.version!r}"
        )
    isa = isa_summary()
    if meta.get("isa") is not None and meta.get("isa") != isa:
        reasons.append(f"built for ISA {meta.get('isa')!r}, this CPU is {isa!r}")
    if reasons:
        return "; ".join(reasons)
    if theirs != tc.fingerprint:
        return (
            "same lazytorch version, compiler and ISA, but the toolchain fingerprint differs: "
            "the compiler flags (LAZYTORCH_CXXFLAGS), runtime headers, CPU features or code "
            "generator differ"
        )
    return None


def _key_reason(entry: ArchivedEntry, tc: Toolchain) -> str | None:
    """Why an entry's key, recomputed from its key source, is not one this machine computes
    (another lazytorch or toolchain), or None."""
    from lazytorch.runtime.cpp_backend import key_source_fields  # lazy: import time (cli --help)

    fields = key_source_fields(entry.files[KEY_FILE].head)
    if fields is None:
        return f"damaged: its {KEY_FILE} is not a lazytorch key source"
    if fields["lazytorch"] != __version__:
        return f"its key was computed by lazytorch {fields['lazytorch']}, this is {__version__}"
    if fields["toolchain"] != tc.fingerprint:
        return (
            "its key was computed for another toolchain (compiler, flags, runtime headers, "
            "CPU features or code generator)"
        )
    return None


def _import(args: argparse.Namespace) -> int:
    """``lazytorch cache import FILE``: store the archive's usable entries; 1 if any refused."""
    path = args.file.expanduser().absolute()
    if not path.is_file():
        raise CliError(f"no such archive: {path}")
    root = _root(args)
    cache = _open(root, create=True)
    assert cache is not None
    try:
        with open(path, "rb") as raw, cache.scratch_dir() as stage:
            try:
                archive = read_archive(raw, stage)
            except NotAnArchive as e:
                raise CliError(
                    f"{path} is not a readable tar.gz archive or is damaged ({e}); export it again"
                ) from None
            except ArchiveError as e:
                raise CliError(f"{path}: {e}") from None
            manifest = _check_manifest(path, archive.manifest)
            tc, missing = _toolchain(cache.root)
            if tc is None:
                raise CliError(f"cannot tell which entries this machine can use: {missing}")
            return _import_entries(path, archive.entries, manifest, cache, tc)
    except OSError as e:  # e.g. a full disk while storing, or a read-only cache
        raise CliError(f"cannot import {path} into {root}: {e}") from None


def _check_manifest(path: pathlib.Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        raise CliError(
            f"{path} has no {ARCHIVE_MANIFEST}: it was not written by 'lazytorch cache export'"
        )
    try:
        manifest = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise CliError(f"{path}: {ARCHIVE_MANIFEST} is not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != ARCHIVE_FORMAT:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        raise CliError(
            f"{path}: archive format {fmt!r}, this lazytorch reads format {ARCHIVE_FORMAT}; "
            "export it again with this version"
        )
    return manifest


def _import_entries(
    path: pathlib.Path,
    entries: dict[str, ArchivedEntry],
    manifest: dict[str, Any],
    cache: DiskCache,
    tc: Toolchain,
) -> int:
    """Check and store each entry, print what happened; the exit status."""
    imported = present = 0
    refused: dict[str, list[str]] = collections.defaultdict(list)
    listed = manifest.get("keys")
    for key in listed if isinstance(listed, list) else []:
        if isinstance(key, str) and key not in entries:
            refused["listed in the archive's manifest but missing from the archive"].append(key)
    for key, entry in entries.items():
        meta, problem = check_entry(key, entry)
        if meta is not None:
            problem = _foreign_reason(meta, tc) or _key_reason(entry, tc)
        if problem is not None:
            refused[problem].append(key)
            continue
        assert meta is not None
        keep = caller_meta(meta)
        with cache.lock(key):
            if cache.lookup(key) is not None:
                present += 1
                continue
            with contextlib.ExitStack() as files:
                opened = {
                    n: files.enter_context(open(f.path, "rb")) for n, f in entry.files.items()
                }
                cache.store(key, opened, keep)
            imported += 1
    n_refused = sum(map(len, refused.values()))
    origin = ", ".join(
        str(manifest[k]) for k in ("lazytorch", "compiler") if manifest.get(k) is not None
    )
    print(f"archive {path}" + (f" (from lazytorch {origin})" if origin else ""))
    print(
        f"imported {imported}, already present {present}, refused {n_refused} (into {cache.root})"
    )
    for reason, keys in refused.items():
        print(f"refused {_entries(len(keys))}: {reason}")
        for key in keys[:5]:
            print(f"  {key[:16]}")
        if len(keys) > 5:
            print(f"  ... and {len(keys) - 5} more")
    if n_refused:
        print(
            "refused entries were not stored; their programs compile here on first use "
            "(to ship usable entries, export from a machine with the same lazytorch, "
            "compiler, flags and CPU features)"
        )
    return 1 if n_refused else 0
