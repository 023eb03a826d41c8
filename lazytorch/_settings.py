"""Every ``LAZYTORCH_*`` environment variable, declared once and parsed by one parser.

A `Setting` records a variable's name, kind, default, one-line doc and when lazytorch
reads it; `env_value` is the only way the library reads one. Reading the table is how to
learn what a variable does (``docs/backends.md``'s table is rendered from it by
`render_table`, and a test keeps the two equal).

Kinds (`KINDS`) and what they accept; an empty or all-blank value means "unset" (the
default), anything else that does not parse raises `ValueError` naming the variable, the
value and what is accepted:

* ``bool``: ``1/0``, ``true/false``, ``yes/no``, ``on/off`` (any case);
* ``positive int`` / ``count``: an integer > 0 / >= 0;
* ``seconds``: a positive finite number;
* ``choice``: one of the setting's `choices`;
* ``text`` / ``path``: any string (surrounding blanks removed).

When it is read (`WHEN`): ``import`` settings are read once by ``import lazytorch`` (a bad
value makes the import fail); the others are read when used, so a bad value fails the
first operation that needs it and ``import lazytorch`` still works.

This module imports nothing of lazytorch, so every layer (the IR's verifier and the C++
compiler driver included) can read its settings here without importing upwards.

>>> from lazytorch._settings import SETTINGS
>>> s = SETTINGS["LAZYTORCH_DISK_CACHE"]
>>> s.kind, s.default, s.when
('bool', True, 'use')
>>> s.parse("off"), s.parse(""), s.parse("YES")
(False, True, True)
>>> s.parse("maybe")
Traceback (most recent call last):
  ...
ValueError: LAZYTORCH_DISK_CACHE must be a boolean (1/0, true/false, yes/no or on/off), got 'maybe'
"""

from __future__ import annotations

import math
import os
from typing import Any

__all__ = [
    "KINDS",
    "PREFIX",
    "SETTINGS",
    "WHEN",
    "Setting",
    "declare",
    "env_value",
    "environment",
    "raw_value",
    "render_table",
    "unknown_names",
]

PREFIX = "LAZYTORCH_"

KINDS = ("bool", "positive int", "count", "seconds", "choice", "text", "path")

WHEN = {
    "import": "at import",
    "use": "at each use",
    "compile": "at the first compile",
    "start": "at the first materialization",
    "native": "by the C++ runtime, at its first allocation",
    "program": "by each compiled program, at its first bfloat16 product",
    "tests": "by the test suite",
}
"""When a setting is read: key -> the words `render_table` prints."""

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class Setting:
    """One environment variable: see the module docstring."""

    __slots__ = ("choices", "default", "doc", "kind", "name", "when")

    def __init__(
        self,
        name: str,
        kind: str,
        default: Any,
        doc: str,
        *,
        when: str,
        choices: tuple[str, ...] = (),
    ) -> None:
        if not name.startswith(PREFIX):
            raise ValueError(f"setting {name!r}: the name must start with {PREFIX}")
        if kind not in KINDS:
            raise ValueError(f"setting {name}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
        if when not in WHEN:
            raise ValueError(f"setting {name}: unknown 'when' {when!r}; known: {', '.join(WHEN)}")
        if (kind == "choice") != bool(choices):
            raise ValueError(f"setting {name}: choices go with kind 'choice' and only with it")
        self.name = name
        self.kind = kind
        self.default = default
        self.doc = doc
        self.when = when
        self.choices = choices

    def __repr__(self) -> str:
        return f"Setting({self.name}, {self.kind}, default={self.default!r})"

    def parse(self, raw: str | None) -> Any:
        """The value `raw` (the variable's text, None when unset) stands for."""
        text = (raw or "").strip()
        if not text:
            return self.default
        kind = self.kind
        if kind in ("text", "path"):
            return text
        if kind == "bool":
            low = text.lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE
            return self._bad(raw, "a boolean (1/0, true/false, yes/no or on/off)")
        if kind == "choice":
            if text in self.choices:
                return text
            import difflib  # only on this error path: it costs a millisecond at import

            close = difflib.get_close_matches(text, self.choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return self._bad(raw, f"one of {', '.join(self.choices)}", hint)
        if kind == "seconds":
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not (value > 0 and math.isfinite(value)):
                return self._bad(raw, "a positive number of seconds")
            return value
        try:  # positive int, count
            number = int(text)
        except ValueError:
            number = -1
        least = 1 if kind == "positive int" else 0
        if number < least:
            return self._bad(raw, "a positive integer" if least else "an integer >= 0")
        return number

    def _bad(self, raw: str | None, accepted: str, hint: str = "") -> Any:
        raise ValueError(f"{self.name} must be {accepted}, got {raw!r}{hint}")


SETTINGS: dict[str, Setting] = {}


def declare(
    name: str,
    kind: str,
    default: Any,
    doc: str,
    *,
    when: str,
    choices: tuple[str, ...] = (),
) -> Setting:
    """Add a setting to the table; a name declared twice is refused."""
    if name in SETTINGS:
        raise ValueError(f"setting {name} is declared twice")
    setting = Setting(name, kind, default, doc, when=when, choices=choices)
    SETTINGS[name] = setting
    return setting


def _setting(name: str) -> Setting:
    try:
        return SETTINGS[name]
    except KeyError:
        raise KeyError(f"{name} is not a declared setting (see lazytorch._settings)") from None


def env_value(name: str) -> Any:
    """The parsed value of the environment variable `name` now (its default when unset).

    Unknown names raise `KeyError`: a setting is declared before it is read.

    >>> from lazytorch._settings import env_value
    >>> type(env_value("LAZYTORCH_DISK_CACHE")), type(env_value("LAZYTORCH_RECOMPILE_LIMIT"))
    (<class 'bool'>, <class 'int'>)
    """
    return _setting(name).parse(os.environ.get(name))


def raw_value(name: str) -> str | None:
    """The variable's text as set (None when unset or blank), for messages."""
    raw = os.environ.get(_setting(name).name, "")
    return raw if raw.strip() else None


def environment() -> dict[str, str]:
    """Every ``LAZYTORCH_*`` variable set in the environment, declared or not, by name."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(PREFIX)}


def unknown_names() -> dict[str, str]:
    """Set ``LAZYTORCH_*`` names that no setting declares -> a hint (a close declared name)."""
    import difflib

    out = {}
    for name in environment():
        if name not in SETTINGS:
            close = difflib.get_close_matches(name, SETTINGS, n=1)
            out[name] = f"did you mean {close[0]}?" if close else "no such setting"
    return out


def render_table() -> str:
    """The markdown table of every setting (``docs/backends.md`` holds this text)."""
    lines = ["| variable | kind | default | read | effect |", "| --- | --- | --- | --- | --- |"]
    for s in SETTINGS.values():
        kind = " / ".join(f"`{c}`" for c in s.choices) if s.kind == "choice" else s.kind
        if s.kind == "bool":
            default = "on" if s.default else "off"
        elif s.default in ("", None):
            default = "unset"
        elif isinstance(s.default, float):
            default = f"`{s.default:g}`"
        else:
            default = f"`{s.default}`"
        lines.append(f"| `{s.name}` | {kind} | {default} | {WHEN[s.when]} | {s.doc} |")
    return "\n".join(lines) + "\n"


# -- the table -----------------------------------------------------------------------------
# Execution switches (lazytorch._config reads them once, at import).
declare(
    "LAZYTORCH_SYNC",
    "bool",
    False,
    "sync mode: every op runs as soon as it is recorded",
    when="import",
)
declare(
    "LAZYTORCH_STRICT",
    "bool",
    False,
    "implicit materializations (`.item()`, `print`...) raise instead of running",
    when="import",
)
declare(
    "LAZYTORCH_MAX_PENDING_NODES",
    "positive int",
    100_000,
    "auto-cut threshold: nodes recorded since the last cut",
    when="import",
)
declare(
    "LAZYTORCH_BACKEND",
    "choice",
    "auto",
    "what runs programs: `auto` is `cpp` when a C++ compiler works, else `interpreter`",
    when="import",
    choices=("auto", "cpp", "interpreter"),
)
declare(
    "LAZYTORCH_TIERED",
    "bool",
    True,
    "the `auto` backend runs a first-seen program on the interpreter while it compiles in the background",
    when="import",
)
declare(
    "LAZYTORCH_DETERMINISTIC",
    "bool",
    False,
    "deterministic algorithms (`use_deterministic_algorithms`)",
    when="import",
)
declare(
    "LAZYTORCH_MAX_AUTOTUNE",
    "bool",
    False,
    "the triton backend times candidate block sizes once per kernel and keeps the fastest on disk",
    when="import",
)
declare(
    "LAZYTORCH_LOG",
    "text",
    "",
    "loggers printed to stderr, comma-separated: `graphs`, `syncs`, `recompiles`, `fusion`, `cache`, `compile` or `all` ([inspection.md](inspection.md))",
    when="import",
)
# Inspection and recording.
declare(
    "LAZYTORCH_DUMP_DIR",
    "path",
    "",
    "dump every program built into this directory ([inspection.md](inspection.md))",
    when="start",
)
declare(
    "LAZYTORCH_RECORD",
    "path",
    "",
    "append every compiled program to this warm-up manifest ([serving.md](serving.md))",
    when="start",
)
declare(
    "LAZYTORCH_RECOMPILE_LIMIT",
    "count",
    8,
    "recompiles at one cut location before a `RecompileWarning` (0: never warn)",
    when="use",
)
declare(
    "LAZYTORCH_DYNAMIC",
    "bool",
    True,
    "compile over symbolic sizes when a cut location sees a new size ([dynamic_shapes.md](dynamic_shapes.md))",
    when="use",
)
declare(
    "LAZYTORCH_VERIFY",
    "bool",
    False,
    "check the IR and the kernel plan after every pass (on in the test suite)",
    when="use",
)
# The compile cache and the compiler.
declare(
    "LAZYTORCH_CACHE_DIR",
    "path",
    "",
    "where compiled programs are kept (unset: `$XDG_CACHE_HOME/lazytorch` or `~/.cache/lazytorch`)",
    when="use",
)
declare(
    "LAZYTORCH_DISK_CACHE",
    "bool",
    True,
    "keep compiled programs on disk (off: in a temporary directory only)",
    when="use",
)
declare(
    "LAZYTORCH_CACHE_LOCK_TIMEOUT",
    "seconds",
    300.0,
    "seconds to wait for another process compiling the same program",
    when="use",
)
declare(
    "LAZYTORCH_CXX",
    "text",
    "",
    "the C++ compiler (a name on PATH or a path; unset: `g++`, else `c++`)",
    when="compile",
)
declare(
    "LAZYTORCH_COMPILE_WORKER",
    "bool",
    True,
    "background compiles run in a child process, not a thread of this one ([concepts.md](concepts.md))",
    when="use",
)
declare(
    "LAZYTORCH_COMPILE_CORES",
    "count",
    0,
    "translation units a program is split into, compiled in parallel (0: one per core; the background compile child uses one core fewer)",
    when="compile",
)
declare(
    "LAZYTORCH_CXXFLAGS",
    "text",
    "",
    "extra compiler flags, split like a shell command line (part of the cache key)",
    when="compile",
)
declare(
    "LAZYTORCH_BLAS",
    "choice",
    "auto",
    "the library the cpp backend's float32/float64 GEMMs call: `openblas` (scipy-openblas32, a dependency) or `mkl` (Intel's, `pip install lazytorch[mkl]`: 8-18% faster per thread than OpenBLAS on the training benchmarks' shapes on an AVX-512 Xeon, torch's own CPU GEMM); `auto` takes MKL where its wheel is installed; part of the cache key",
    when="compile",
    choices=("auto", "openblas", "mkl"),
)
declare(
    "LAZYTORCH_POOL_MB",
    "count",
    1024,
    "MiB of freed output blocks kept for reuse (0 turns the pool off); checked when the native runtime loads",
    when="native",
)
declare(
    "LAZYTORCH_BF16_GEMM",
    "choice",
    "auto",
    "the cpp backend's bfloat16 matmul: `auto` takes AMX tiles, else AVX512-BF16, else float32 copies and sgemm; naming a path the CPU lacks gets the best below it; checked when the cpp backend starts",
    when="program",
    choices=("auto", "amx", "avx512", "widened"),
)
declare(
    "LAZYTORCH_DEVICE_BACKEND_AUTOLOAD",
    "bool",
    True,
    "discover device backend plugins (entry points)",
    when="use",
)
declare(
    "LAZYTORCH_DISTRIBUTED_TIMEOUT",
    "seconds",
    1800.0,
    "default time limit of one collective (`init_process_group(timeout=)` overrides it); past it the job ends naming the collective",
    when="use",
)
declare(
    "LAZYTORCH_DISTRIBUTED_DEBUG",
    "bool",
    False,
    "before each collective the ranks compare sequence number, op, shape and dtype, and a difference fails naming both sides",
    when="use",
)
# Read by tests/, declared so that `lazytorch doctor` knows them.
declare(
    "LAZYTORCH_TEST_CPP",
    "choice",
    "sample",
    "which `check()` cases also run on `cpp`",
    when="tests",
    choices=("all", "sample", "none"),
)
declare(
    "LAZYTORCH_TEST_GPU",
    "text",
    "",
    "`1`: a missing GPU fails the GPU tests instead of skipping them",
    when="tests",
)
