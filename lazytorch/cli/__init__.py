"""The ``lazytorch`` command: run scripts under lazytorch settings, dump and inspect what
was captured and compiled, manage and warm the compile cache, and check the machine.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and
``main(args) -> int`` (the exit status); `main` dispatches. See docs/inspection.md and
docs/serving.md for walkthroughs.

>>> from lazytorch.cli import main
>>> main(["--version"])  # doctest: +ELLIPSIS
lazytorch ...
0
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from lazytorch._version import __version__

__all__ = ["CliError", "main"]

# Subcommand name -> module under lazytorch.cli (imported only when that command runs).
COMMANDS = {
    "run": "run",
    "dump": "run",
    "inspect": "inspect",
    "cache": "cache",
    "warmup": "warmup",
    "doctor": "doctor",
}


class CliError(Exception):
    """A user error a subcommand reports as ``lazytorch <cmd>: error: ...`` with status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lazytorch",
        description="Run, inspect, dump and warm up lazytorch programs.",
        epilog="Run 'lazytorch COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"lazytorch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in dict.fromkeys(COMMANDS.values()):
        importlib.import_module(f"lazytorch.cli.{module}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: ``sys.argv[1:]``), run the subcommand, return its status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors exit through argparse
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CliError as e:
        print(f"lazytorch {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lazytorch {args.command}: interrupted", file=sys.stderr)
        return 130
