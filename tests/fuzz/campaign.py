"""The long fuzzing campaign: random programs and training steps until time runs out.

``python -m tests.fuzz --minutes 10 --seed 1`` alternates batches of random programs and
of training cases. Hypothesis draws each batch from a seeded random generator, so a seed
replays the same campaign. Each mismatch is shrunk by hypothesis (to a program that fails
the same way: same run, same kind of difference) and saved as a pytest file under
``tests/fuzz/regressions/``, named by a hash of what it replays.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .programs import Mismatch, Program, Refused, check_program, input_literal, programs
from .training import TrainingCase, check_training, training_cases

REGRESSIONS = Path(__file__).parent / "regressions"


@dataclass
class Stats:
    programs: int = 0
    refused: int = 0
    training_cases: int = 0
    training_steps: int = 0
    mismatches: int = 0
    saved: list[Path] = field(default_factory=list)

    def line(self, elapsed: float) -> str:
        return (
            f"[{elapsed / 60:5.1f} min] programs {self.programs} (refused by torch "
            f"{self.refused}) · training cases {self.training_cases} "
            f"({self.training_steps} steps) · mismatches {self.mismatches}"
        )


def _signature(found: list[Mismatch]) -> set[tuple[str, str]]:
    return {(m.run, m.kind) for m in found}


def _search(
    strategy: Any,
    check: Callable[[Any], list[Mismatch]],
    count: Callable[[Any], None],
    refused: Callable[[], None],
    seed: int,
    examples: int,
    shrink_seconds: float,
) -> tuple[Any, list[Mismatch]] | None:
    """Draw up to `examples` cases; shrink the first that fails to a minimal one that
    fails the same way. None if all pass."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    first: dict[str, Any] = {}
    failing: dict[str, list[Mismatch]] = {}

    def fails(case: Any) -> bool:
        key = repr(case)
        if key in failing:
            return True
        if "deadline" in first and time.monotonic() > first["deadline"]:
            return False  # out of shrinking time: accept no new candidate
        count(case)
        try:
            found = check(case)
        except Refused:
            refused()
            return False
        if not found:
            return False
        if "signature" not in first:
            first["signature"] = _signature(found)
            first["deadline"] = time.monotonic() + shrink_seconds
        elif not _signature(found) & first["signature"]:
            return False  # a different failure: not the one being shrunk
        failing[key] = found
        return True

    opts = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case = find(strategy, fails, settings=opts, random=random.Random(seed))
    except NoSuchExample:
        return None
    return case, failing[repr(case)]


def save_program(program: Program, found: list[Mismatch], origin: str) -> Path:
    inputs = ",\n        ".join(input_literal(i) for i in program.inputs)
    lines = "".join(f"        {json.dumps(line)},\n" for line in program.lines)
    body = (
        f"PROGRAM = Program(\n    inputs=[\n        {inputs},\n    ],\n"
        f"    lines=[\n{lines}    ],\n    outputs={json.dumps(program.outputs)},\n)\n\n\n"
        "def test_program():\n    assert_program(PROGRAM)\n"
    )
    head = (
        "import numpy as np\n\nfrom ..programs import Input, Program, assert_program\n\n"
        "# The program, as it runs on torch and on lazytorch:\n"
        + "".join(f"# {line}\n" for line in program.source().splitlines())
        + "\n"
    )
    return _write("program", head + body, found, origin)


def save_training(case: TrainingCase, found: list[Mismatch], origin: str) -> Path:
    body = (
        "from ..training import TrainingCase, assert_training\n\n"
        f"CASE = {case!r}\n\n\ndef test_training_step():\n    assert_training(CASE)\n"
    )
    return _write("training", body, found, origin)


def _write(kind: str, body: str, found: list[Mismatch], origin: str) -> Path:
    digest = hashlib.sha1(body.encode()).hexdigest()[:10]
    path = REGRESSIONS / f"test_{kind}_{digest}.py"
    what = "\n".join(
        textwrap.fill(str(m), 92, initial_indent="    ", subsequent_indent="      ")
        for m in found[:6]
    )
    doc = (
        f'"""Fuzz regression ({kind}), shrunk.\n\nFound by `python -m tests.fuzz {origin}`. '
        f"When found, lazytorch disagreed\nwith torch:\n\n{what}\n"
        '"""\n\n'
    )
    REGRESSIONS.mkdir(exist_ok=True)
    path.write_text(doc.replace("\\", "\\\\") + body)
    if shutil.which("ruff"):  # the repository's formatting, where ruff is at hand
        subprocess.run(["ruff", "format", "-q", str(path)], check=False)
    return path


def campaign(
    minutes: float,
    seed: int,
    kinds: tuple[str, ...] = ("programs", "training"),
    batch: int = 100,
    shrink_seconds: float = 180.0,
    save: bool = True,
    out: Any = sys.stdout,
) -> Stats:
    """Run batches until `minutes` have passed; print progress; save shrunk failures."""
    stats = Stats()
    start = time.monotonic()
    stop = start + 60 * minutes
    last_print = start
    b = 0

    def count_program(_p: Program) -> None:
        stats.programs += 1

    def count_refused() -> None:
        stats.refused += 1

    def count_training(c: TrainingCase) -> None:
        stats.training_cases += 1
        stats.training_steps += c.steps

    while time.monotonic() < stop:
        kind = kinds[b % len(kinds)]
        batch_seed = seed * 100_000 + b
        origin = f"--seed {seed} (batch {b}, {kind})"
        if kind == "programs":
            strategy, check, count, examples = programs(), check_program, count_program, batch
        else:
            strategy, check, count = training_cases(), check_training, count_training
            examples = max(batch // 5, 2)
        hit = _search(strategy, check, count, count_refused, batch_seed, examples, shrink_seconds)
        if hit is not None:
            case, found = hit
            stats.mismatches += 1
            print(f"MISMATCH {origin}:", *map(str, found[:4]), sep="\n  ", file=out)
            print(repr(case), file=out)
            if save:
                saver = save_program if kind == "programs" else save_training
                path = saver(case, found, origin)
                stats.saved.append(path)
                print(f"saved {path}", file=out)
        b += 1
        now = time.monotonic()
        if now - last_print > 20 or now >= stop:
            print(stats.line(now - start), file=out, flush=True)
            last_print = now
    print("done:", stats.line(time.monotonic() - start), file=out, flush=True)
    return stats
