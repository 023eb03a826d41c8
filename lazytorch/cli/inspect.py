"""``lazytorch inspect DIR``: read a dump written by ``lazytorch dump`` (or LAZYTORCH_DUMP_DIR).

Without ``--program`` it prints one row per program: nodes, kernels, ops fused per kernel,
planned peak memory, compile time, cache outcome, guards, and the cause and line of the
cut. ``--program N`` prints one program in detail (timings, guards, schedule and IR);
``--format json`` and ``--format dot`` print the machine-readable forms instead.

    lazytorch dump --out /tmp/d train.py
    lazytorch inspect /tmp/d
    lazytorch inspect /tmp/d --program 3 --format dot | dot -Tpng -o p3.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lazytorch.cli import CliError

__all__ = ["add_parser", "load_index"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "inspect",
        help="summarize a dump directory, or show one program of it",
        description="Show the programs in a dump directory written by `lazytorch dump` or "
        "LAZYTORCH_DUMP_DIR: a table of all of them, or the detail of one (--program).",
    )
    p.add_argument("dir", metavar="DIR", help="the dump directory")
    p.add_argument("--program", metavar="N", help="show program N (its number, e.g. 3 or 003)")
    p.add_argument(
        "--format",
        choices=("text", "json", "dot"),
        default="text",
        help="text (default), json, or dot (Graphviz, with --program only)",
    )
    p.set_defaults(func=_inspect)


def load_index(path: str | Path) -> dict[str, Any]:
    """The dump's index.json; CliError with the fix when it is missing or damaged."""
    index = Path(path) / "index.json"
    if not Path(path).is_dir():
        raise CliError(f"{path} is not a directory")
    try:
        data = json.loads(index.read_text())
    except FileNotFoundError:
        raise CliError(
            f"{path} has no index.json: not a lazytorch dump (write one with "
            f"`lazytorch dump --out {path} SCRIPT`)"
        ) from None
    except ValueError as e:
        raise CliError(f"{index} is not valid JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("programs"), list):
        raise CliError(f"{index} has no 'programs' list")
    return data


def _inspect(args: argparse.Namespace) -> int:
    data = load_index(args.dir)
    rows = data["programs"]
    if args.program is None:
        if args.format == "dot":
            raise CliError("--format dot needs --program N")
        if args.format == "json":
            print(json.dumps(data, indent=1))
        else:
            print(_table(rows, args.dir))
        return 0
    number = _program_number(args.program)
    row = next((r for r in rows if r.get("program") == number), None)
    folder = Path(args.dir) / number
    if row is None or not folder.is_dir():
        known = ", ".join(r.get("program", "?") for r in rows[:20]) or "none"
        raise CliError(f"no program {args.program} in {args.dir} (programs: {known})")
    if args.format == "dot":
        sys.stdout.write(_read(folder / "graph.dot"))
    elif args.format == "json":
        detail = dict(row)
        for name in ("ir.json", "timings.json"):
            try:
                detail[name.split(".")[0]] = json.loads(_read(folder / name))
            except ValueError:
                detail[name.split(".")[0]] = None
        detail["guards"] = _read(folder / "guards.txt").splitlines()
        print(json.dumps(detail, indent=1))
    else:
        print(_detail(row, folder))
    return 0


def _program_number(raw: str) -> str:
    try:
        n = int(raw)
    except ValueError:
        raise CliError(f"--program takes a number, got {raw!r}") from None
    return f"{n:03d}"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _bytes(n: Any) -> str:
    if not isinstance(n, (int, float)):
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return "-"


def _fusion(row: dict[str, Any]) -> str:
    per = row.get("fused_ops_per_kernel")
    if not per:
        return "-"
    return f"{sum(per) / len(per):.1f} (max {max(per)})"


def _seconds(x: Any) -> str:
    return "-" if not isinstance(x, (int, float)) else f"{x:.2f} s"


def _table(rows: list[dict[str, Any]], path: str) -> str:
    if not rows:
        return f"{path}: no programs were dumped"
    head = tuple("prog nodes kernels ops/kernel peak compile cache guards runs cut".split())
    table = [head]
    for r in rows:
        peak = r.get("peak_bytes") or {}
        kernels = r.get("kernels")
        ext = r.get("extern_calls")
        table.append(
            (
                r.get("program", "?"),
                str(r.get("nodes", "-")),
                "-" if kernels is None else f"{kernels}" + (f" +{ext} ext" if ext else ""),
                _fusion(r),
                _bytes(peak.get("planned")),
                _seconds(r.get("compile_s")),
                str(r.get("cache") or "-"),
                str(r.get("guards") if r.get("guards") is not None else "-"),
                str(r.get("runs", 0)),
                f"{r.get('cause', '')} at {r.get('loc', '?')}",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(head) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1] for row in table]
    recompiles = [r for r in rows if r.get("recompile")]
    lines.append("")
    lines.append(
        f"{len(rows)} programs; kernels: generated kernels + extern (library) calls; "
        f"{len(recompiles)} recompiles"
    )
    for r in recompiles[:10]:
        lines.append(f"  {r['program']} recompiled at {r.get('loc')}: {r['recompile']}")
    return "\n".join(lines)


def _detail(row: dict[str, Any], folder: Path) -> str:
    out = [f"program {row.get('program')} ({folder})"]
    out.append(f"  cut: {row.get('cause')} at {row.get('loc')}")
    out.append(
        f"  backend {row.get('backend')}, cache {row.get('cache')}, key {str(row.get('key'))[:16]}, "
        f"{row.get('runs', 0)} runs"
    )
    if row.get("recompile"):
        out.append(f"  recompile: {row['recompile']}")
    try:
        t = json.loads(_read(folder / "timings.json") or "{}")
    except ValueError:
        t = {}
    order = (
        "record_s",
        "capture_s",
        "schedule_s",
        "codegen_s",
        "compile_s",
        "load_s",
        "run_s",
        "run_median_s",
    )
    parts = [f"{k[:-2]} {t[k] * 1e3:.2f} ms" for k in order if isinstance(t.get(k), (int, float))]
    if parts:
        out.append("  timings: " + ", ".join(parts))
    out.append("")
    out.append(_read(folder / "guards.txt").rstrip())
    out.append("")
    out.append(_read(folder / "schedule.txt").rstrip())
    out.append("")
    out.append(_read(folder / "ir.txt").rstrip())
    files = sorted(p.name for p in folder.iterdir())
    out.append("")
    out.append("files: " + ", ".join(files))
    return "\n".join(out)
