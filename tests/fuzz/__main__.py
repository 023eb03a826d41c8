"""``python -m tests.fuzz --minutes N [--seed S]``: the fuzzing campaign (see campaign.py)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

# As in the test suite: verify the IR after every pass; compiled programs in a fresh cache.
os.environ.setdefault("LAZYTORCH_VERIFY", "1")
os.environ.setdefault("LAZYTORCH_RECOMPILE_LIMIT", "0")
os.environ.setdefault("LAZYTORCH_CACHE_DIR", tempfile.mkdtemp(prefix="lazytorch-fuzz-cache-"))


def main(argv: list[str] | None = None) -> int:
    from .campaign import campaign

    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--minutes", type=float, default=10.0, help="how long to run")
    p.add_argument("--seed", type=int, default=0, help="replays the same campaign")
    p.add_argument(
        "--only", choices=["programs", "training"], help="fuzz only programs or only training"
    )
    p.add_argument("--shrink-seconds", type=float, default=180.0, help="per failure")
    p.add_argument("--no-save", action="store_true", help="do not write regression files")
    args = p.parse_args(argv)
    kinds = (args.only,) if args.only else ("programs", "training")
    stats = campaign(
        args.minutes, args.seed, kinds, shrink_seconds=args.shrink_seconds, save=not args.no_save
    )
    for path in stats.saved:
        print(f"regression test: {os.path.relpath(path)}")
    return 1 if stats.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
