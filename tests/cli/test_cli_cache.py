"""``lazytorch cache``: ls, info, verify, clear, export and import, against real entries.

A module-wide cache is populated once by a subprocess that compiles two small programs;
each test works on its own copy. Programs then run in fresh processes to show what the
commands did to the cache (a corrupt entry recompiles; an imported one loads).
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable

import pytest

import lazytorch
from lazytorch.cli import main
from lazytorch.runtime.disk_cache import DiskCache, seal_of

SCRIPT = """\
import lazytorch as lt
x = lt.arange(6.0).reshape(2, 3)
print((x * 2 + 1).sum().item())
print((x - 3).abs().max().item())
c = lt.metrics.counters()
print("compiles", c["compiles"], "cache_hits_disk", c["cache_hits_disk"])
"""
TIMEOUT = 120


def run_script(script: pathlib.Path, cache_dir: pathlib.Path) -> tuple[list[str], str]:
    """Run `script` in a fresh process on `cache_dir`: (stdout lines, stderr)."""
    env = {**os.environ, "LAZYTORCH_CACHE_DIR": str(cache_dir), "LAZYTORCH_BACKEND": "cpp"}
    res = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines(), res.stderr


def counts(lines: list[str]) -> dict[str, int]:
    words = lines[-1].split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def cli(capsys: pytest.CaptureFixture[str], *argv: str | os.PathLike[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("script") / "prog.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture(scope="module")
def populated(script: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("populated") / "cache"
    lines, _ = run_script(script, root)
    assert lines[:2] == ["36.0", "3.0"]
    assert counts(lines)["compiles"] == 2
    return root


@pytest.fixture
def cache_dir(populated: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    """A private copy of the populated cache (modes are copied: the copy stays 0o700)."""
    return pathlib.Path(shutil.copytree(populated, tmp_path / "cache", symlinks=True))


def keys_of(root: pathlib.Path) -> list[str]:
    return [e.key for e in DiskCache(root).entries()]


def flip_byte(path: pathlib.Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def rewrite_archive(
    src: pathlib.Path, dst: pathlib.Path, edit: Callable[[str, bytes], bytes]
) -> None:
    """Copy the archive `src` to `dst`, passing each member's contents through `edit`."""
    with tarfile.open(src, "r:gz") as tin, tarfile.open(dst, "w:gz") as tout:
        for m in tin.getmembers():
            f = tin.extractfile(m)
            assert f is not None
            data = edit(m.name, f.read())
            info = tarfile.TarInfo(m.name)
            info.size, info.mode = len(data), m.mode
            tout.addfile(info, io.BytesIO(data))


def edit_meta(key: str, *, reseal: bool = True, **changes: str) -> Callable[[str, bytes], bytes]:
    """An `edit` changing fields of `key`'s meta.json (still valid JSON, files untouched).

    With `reseal`, the seal is recomputed: the entry reads as one genuinely written that way
    (e.g. by another lazytorch version).
    """

    def edit(name: str, data: bytes) -> bytes:
        if name != f"{key}/meta.json":
            return data
        meta = json.loads(data)
        meta.update(changes)
        if reseal:
            meta["seal"] = seal_of(key, meta)
        return json.dumps(meta, indent=1, sort_keys=True).encode()

    return edit


# -- ls, info ----------------------------------------------------------------------------------
def test_ls_info_on_empty_and_missing_cache(capsys, tmp_path):
    missing = tmp_path / "nothing"
    status, out, _ = cli(capsys, "cache", "ls", "--cache-dir", missing)
    assert (
        status == 0 and out.strip() == f"no entries in {missing} (the directory does not exist yet)"
    )
    assert not missing.exists()  # read-only commands create nothing

    empty = tmp_path / "empty"
    DiskCache(empty)
    status, out, _ = cli(capsys, "cache", "ls", "--cache-dir", empty)
    assert status == 0 and out.strip() == f"no entries in {empty}"
    status, out, _ = cli(capsys, "cache", "ls", "--json", "--cache-dir", empty)
    assert status == 0 and json.loads(out) == []
    status, out, _ = cli(capsys, "cache", "info", "--cache-dir", empty)
    assert status == 0
    assert f"cache directory  {empty}" in out
    assert "entries          0 (0 B)" in out
    status, out, _ = cli(capsys, "cache", "verify", "--cache-dir", empty)
    assert status == 0 and "0 entries verified, all intact" in out


def test_ls_populated(capsys, cache_dir):
    status, out, _ = cli(capsys, "cache", "ls", "--cache-dir", cache_dir)
    assert status == 0
    lines = out.splitlines()
    header = lines[0].split()
    assert header[:6] == ["KEY", "SIZE", "CREATED", "NODES", "KERNELS", "INPUTS"]
    rows = lines[1:-1]
    assert len(rows) == 2
    keys = keys_of(cache_dir)
    for row, key in zip(rows, keys):
        assert row.startswith(key[:16] + "  ")
        assert "KiB" in row and row.endswith("prog.py:2") and "f32[]" in row
    # aligned: every row's columns start where the header's do
    start = lines[0].index("INPUTS")
    assert all(row[start - 2 : start] == "  " and row[start] != " " for row in rows)
    assert lines[-1] == f"2 entries in {cache_dir}"


def test_ls_json(capsys, cache_dir, script):
    status, out, _ = cli(capsys, "cache", "ls", "--json", "--cache-dir", cache_dir)
    assert status == 0
    rows = json.loads(out)
    assert [r["key"] for r in rows] == keys_of(cache_dir)
    for r in rows:
        assert r["lazytorch"] == lazytorch.__version__
        assert r["kernels"] >= 1 and r["nodes"] > 0 and r["size_bytes"] > 0
        assert r["first_recorded_at"] == f"{script}:2"
        assert sorted(r["files"]) == ["key.txt", "program.cpp", "program.so"]


def test_ls_tolerates_entries_without_summary(capsys, tmp_path):
    """Entries written before lazytorch recorded isa/toolchain/summary still list."""
    root = tmp_path / "old"
    DiskCache(root).store("ab" * 8, {"program.so": b"x"}, {"manifest": {"kernels": 3}})
    status, out, _ = cli(capsys, "cache", "ls", "--cache-dir", root)
    row = out.splitlines()[1].split()
    assert status == 0 and row[0] == "abababababababab" and row[5:] == ["-", "3", "-", "-"]
    status, out, _ = cli(capsys, "cache", "info", "--cache-dir", root)
    assert status == 0 and "not recorded     1" in out


def test_info(capsys, cache_dir):
    from lazytorch.codegen.compiler import toolchain

    status, out, _ = cli(capsys, "cache", "info", "--cache-dir", cache_dir)
    assert status == 0
    assert f"cache directory  {cache_dir}" in out
    assert "entries          2 (" in out
    assert "usable here      2 (built by this machine's toolchain" in out
    assert "other toolchain  0" in out
    assert toolchain(DiskCache(cache_dir).root).version in out
    assert f"      2  {lazytorch.__version__}" in out
    status, out, _ = cli(capsys, "cache", "info", "--json", "--cache-dir", cache_dir)
    data = json.loads(out)
    assert (data["entries"], data["usable_here"], data["other_toolchain"]) == (2, 2, 0)


# -- verify, clear -----------------------------------------------------------------------------
def test_verify_intact(capsys, cache_dir):
    status, out, _ = cli(capsys, "cache", "verify", "--cache-dir", cache_dir)
    assert status == 0 and out.startswith("2 entries verified, all intact")


def test_verify_corrupt_then_recompile(capsys, cache_dir, script):
    bad = keys_of(cache_dir)[0]
    flip_byte(cache_dir / "v1" / bad[:2] / bad / "program.so")
    status, out, _ = cli(capsys, "cache", "verify", "--cache-dir", cache_dir)
    assert status == 1
    assert f"corrupt  {bad}  checksum mismatch for 'program.so'" in out
    assert "1 of 2 entries is corrupt" in out and "Nothing was deleted" in out
    assert len(keys_of(cache_dir)) == 2  # verify deleted nothing

    lines, err = run_script(script, cache_dir)
    assert lines[:2] == ["36.0", "3.0"]
    assert counts(lines) == {"compiles": 1, "cache_hits_disk": 1}
    assert "RuntimeWarning" in err and f"entry {bad}" in err and "is invalid" in err
    status, out, _ = cli(capsys, "cache", "verify", "--cache-dir", cache_dir)
    assert status == 0, out  # the lookup replaced the corrupt entry


def test_clear(capsys, cache_dir):
    status, out, _ = cli(capsys, "cache", "clear", "--cache-dir", cache_dir)
    assert status == 0 and out.strip() == f"removed 2 entries from {cache_dir}"
    assert keys_of(cache_dir) == []
    status, out, _ = cli(capsys, "cache", "ls", "--cache-dir", cache_dir)
    assert out.strip() == f"no entries in {cache_dir}"


# -- export, import ----------------------------------------------------------------------------
def test_export_import_roundtrip(capsys, cache_dir, script, tmp_path):
    archive = tmp_path / "programs.tar.gz"
    status, out, _ = cli(capsys, "cache", "export", archive, "--cache-dir", cache_dir)
    assert status == 0 and out.startswith("exported 2 entries (")
    keys = keys_of(cache_dir)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        f = tar.extractfile("lazytorch-cache.json")
        assert f is not None
        manifest = json.loads(f.read())
    assert sorted(names) == sorted(
        ["lazytorch-cache.json"]
        + [f"{k}/{n}" for k in keys for n in ("meta.json", "program.so", "program.cpp", "key.txt")]
    )
    assert manifest["keys"] == keys and manifest["format"] == 1
    assert manifest["lazytorch"] == lazytorch.__version__ and manifest["toolchain"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # temp file renamed

    new = tmp_path / "new"
    status, out, _ = cli(capsys, "cache", "import", archive, "--cache-dir", new)
    assert status == 0, out
    assert "imported 2, already present 0, refused 0" in out
    assert keys_of(new) == keys
    lines, _ = run_script(script, new)
    assert lines[:2] == ["36.0", "3.0"]
    c = counts(lines)
    assert c["compiles"] == 0 and c["cache_hits_disk"] >= 1

    # importing again changes nothing
    status, out, _ = cli(capsys, "cache", "import", archive, "--cache-dir", new)
    assert status == 0 and "imported 0, already present 2, refused 0" in out
    assert keys_of(new) == keys


def test_export_skips_corrupt_entries(capsys, cache_dir, tmp_path):
    bad, good = keys_of(cache_dir)
    flip_byte(cache_dir / "v1" / bad[:2] / bad / "program.cpp", 10)
    archive = tmp_path / "a.tar.gz"
    status, out, err = cli(capsys, "cache", "export", archive, "--cache-dir", cache_dir)
    assert status == 0 and out.startswith("exported 1 entry (") and "skipped 1 corrupt" in out
    assert f"skipped corrupt entry {bad}: checksum mismatch for 'program.cpp'" in err
    with tarfile.open(archive) as tar:
        assert {n.split("/")[0] for n in tar.getnames()} == {good, "lazytorch-cache.json"}


@pytest.fixture
def archive(capsys, cache_dir, tmp_path) -> pathlib.Path:
    path = tmp_path / "programs.tar.gz"
    assert cli(capsys, "cache", "export", path, "--cache-dir", cache_dir)[0] == 0
    return path


def test_import_refuses_another_version_and_compiler(capsys, cache_dir, archive, tmp_path):
    foreign, ok = keys_of(cache_dir)
    edited = tmp_path / "foreign.tar.gz"
    rewrite_archive(
        archive, edited, edit_meta(foreign, lazytorch="0.0.1", compiler="clang version 99.0.0")
    )
    new = tmp_path / "new"
    status, out, _ = cli(capsys, "cache", "import", edited, "--cache-dir", new)
    assert status == 1
    assert "imported 1, already present 0, refused 1" in out
    assert f"built by lazytorch 0.0.1, this is {lazytorch.__version__}" in out
    assert "built with compiler 'clang version 99.0.0', this machine has" in out
    assert f"  {foreign[:16]}" in out
    assert keys_of(new) == [ok]


def test_import_refuses_another_toolchain(capsys, cache_dir, archive, tmp_path):
    foreign, ok = keys_of(cache_dir)
    edited = tmp_path / "foreign.tar.gz"
    rewrite_archive(archive, edited, edit_meta(foreign, toolchain="0" * 64))
    new = tmp_path / "new"
    status, out, _ = cli(capsys, "cache", "import", edited, "--cache-dir", new)
    assert status == 1
    assert "same lazytorch version, compiler and ISA, but the toolchain fingerprint differs" in out
    assert "compiler flags" in out
    assert keys_of(new) == [ok]


def test_import_refuses_damaged_entry(capsys, cache_dir, archive, tmp_path):
    damaged, ok = keys_of(cache_dir)
    edited = tmp_path / "damaged.tar.gz"

    def edit(name: str, data: bytes) -> bytes:
        return data[:-1] if name == f"{damaged}/program.so" else data

    rewrite_archive(archive, edited, edit)
    new = tmp_path / "new"
    status, out, _ = cli(capsys, "cache", "import", edited, "--cache-dir", new)
    assert status == 1
    assert "refused 1 entry: damaged: checksum mismatch for 'program.so'" in out
    assert keys_of(new) == [ok]


def _evil_member(kind: str, key: str) -> tarfile.TarInfo:
    if kind == "symlink":
        info = tarfile.TarInfo(f"{key}/program.so")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif kind == "hardlink":
        info = tarfile.TarInfo(f"{key}/program.so")
        info.type, info.linkname = tarfile.LNKTYPE, "lazytorch-cache.json"
    elif kind == "directory":
        info = tarfile.TarInfo(key)
        info.type = tarfile.DIRTYPE
    elif kind == "device":
        info = tarfile.TarInfo(f"{key}/program.so")
        info.type = tarfile.CHRTYPE
    else:  # a regular file with a hostile name
        info = tarfile.TarInfo(kind)
        info.size = 4
    return info


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("../evil", "unexpected member '../evil'"),
        ("/tmp/evil", "unexpected member '/tmp/evil'"),
        ("KEY/../../evil", "/../../evil'"),
        ("KEY/.hidden", "/.hidden'"),
        ("symlink", "/program.so' is a symbolic link"),
        ("hardlink", "/program.so' is a hard link"),
        ("directory", "is a directory"),
        ("device", "is a device or special file"),
    ],
)
def test_import_rejects_unsafe_archive(capsys, cache_dir, archive, tmp_path, kind, message):
    key = keys_of(cache_dir)[0]
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(archive) as tin, tarfile.open(evil, "w:gz") as tout:
        for m in tin.getmembers():
            tout.addfile(m, tin.extractfile(m))
        info = _evil_member(kind.replace("KEY", key), key)
        tout.addfile(info, io.BytesIO(b"evil") if info.isreg() else None)
    new = tmp_path / "sub" / "new"
    status, _, err = cli(capsys, "cache", "import", evil, "--cache-dir", new)
    assert status == 2
    assert err.startswith("lazytorch cache: error: ") and message.replace("KEY", key) in err
    assert not (tmp_path / "evil").exists() and not (tmp_path / "sub" / "evil").exists()
    assert not new.exists() or keys_of(new) == []  # rejected whole: nothing imported


def test_import_rejects_non_archives(capsys, tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive at all")
    status, _, err = cli(capsys, "cache", "import", junk, "--cache-dir", tmp_path / "c")
    assert status == 2 and f"{junk} is not a readable tar.gz archive" in err
    status, _, err = cli(capsys, "cache", "import", tmp_path / "nope.tar.gz")
    assert status == 2 and "no such archive" in err

    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        tar.addfile(tarfile.TarInfo("ab" * 8 + "/meta.json"), io.BytesIO(b""))
    status, _, err = cli(capsys, "cache", "import", plain, "--cache-dir", tmp_path / "c")
    assert status == 2 and "has no lazytorch-cache.json" in err


def test_unsafe_cache_dir_is_a_cli_error(capsys, tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    status, _, err = cli(capsys, "cache", "ls", "--cache-dir", root)
    assert status == 2
    assert "lazytorch cache: error:" in err and "world-writable" in err and "Fix:" in err


def test_help(capsys):
    for sub in ("ls", "info", "verify", "clear", "export", "import"):
        status, out, _ = cli(capsys, "cache", sub, "--help")
        assert status == 0 and "--cache-dir DIR" in out
    status, out, _ = cli(capsys, "cache")
    assert status == 2 and "SUBCOMMAND" in out


def test_cli_entry_point(populated):
    """The same through ``python -m lazytorch`` (argument parsing, exit status)."""
    res = subprocess.run(
        [sys.executable, "-m", "lazytorch", "cache", "ls", "--json", "--cache-dir", str(populated)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)) == 2
