"""Compile modes and the typed options ``compile(options=...)`` accepts."""

from __future__ import annotations

import difflib
import enum
import typing
from dataclasses import dataclass, fields
from typing import Any


# -- mode and options -----------------------------------------------------------------------
class CompileMode(str, enum.Enum):
    """How hard compilation tries; torch's mode strings are accepted.

    ``default`` and ``reduce-overhead`` do the same thing: trace replay *is* the overhead
    reduction. ``max-autotune`` also lets the programs cut inside the call time candidate
    block sizes for their Triton kernels (`lazytorch.runtime.triton_backend.Tuner`); the
    cpp backend has nothing to tune, so there it is the same as the others.

    >>> from lazytorch import CompileMode
    >>> CompileMode("reduce-overhead") is CompileMode.REDUCE_OVERHEAD
    True
    >>> CompileMode("max_autotune")
    <CompileMode.MAX_AUTOTUNE: 'max-autotune'>
    """

    DEFAULT = "default"
    REDUCE_OVERHEAD = "reduce-overhead"
    MAX_AUTOTUNE = "max-autotune"

    @classmethod
    def _missing_(cls, value: object) -> CompileMode:
        if isinstance(value, str):
            norm = value.strip().lower().replace("_", "-")
            for m in cls:
                if m.value == norm:
                    return m
        valid = [m.value for m in cls]
        close = difflib.get_close_matches(str(value), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown compile mode {value!r}{hint}; valid modes: {', '.join(valid)}")


@dataclass(frozen=True)
class CompileOptions:
    """The ``options=`` that `compile` honours; an unknown key or a wrong type is an error.

    * ``cache_size_limit`` — signatures traced per compiled function; past it a new
      signature warns once and calls the function uncompiled (torch's limit is 8 too).
    * ``trace_cache`` — False: never replay, always run the Python (the other options
      still apply).
    * ``materialize_outputs`` — compute the outputs before returning (a graph cut at the
      function boundary, on the compile's backend); default False keeps them lazy so they
      fuse with the caller.
    * ``deterministic`` — run the call (and its materializations) with deterministic
      algorithms on or off (`lazytorch.deterministic_algorithms`); None: as the caller.
    * ``step_capture`` — False: a function that cannot be replayed as a graph (a training
      step: backward, in-place updates, ``opt.step()``) is not captured as a whole step
      either (`lazytorch._compile.step`); it runs its Python on every call.

    >>> from lazytorch._compile import CompileOptions
    >>> CompileOptions.from_dict({"cache_size_limit": 2}).cache_size_limit
    2
    >>> CompileOptions.from_dict({"cache_size_limt": 2})
    Traceback (most recent call last):
    ...
    ValueError: unknown compile option 'cache_size_limt' (did you mean 'cache_size_limit'?); valid options: cache_size_limit, deterministic, materialize_outputs, step_capture, trace_cache
    """

    cache_size_limit: int = 8
    trace_cache: bool = True
    materialize_outputs: bool = False
    deterministic: bool | None = None
    step_capture: bool = True

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in fields(self):
            value = getattr(self, f.name)
            expected = typing.get_args(hints[f.name]) or (hints[f.name],)
            if not any(_is_instance(value, t) for t in expected):
                names = " or ".join("None" if t is type(None) else t.__name__ for t in expected)
                raise TypeError(
                    f"compile option {f.name!r} expects {names}, got {type(value).__name__} "
                    f"({value!r})"
                )
        if self.cache_size_limit < 1:
            raise ValueError(
                f"compile option 'cache_size_limit' must be at least 1, got {self.cache_size_limit}"
            )

    @classmethod
    def from_dict(cls, options: Any) -> CompileOptions:
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {type(options).__name__}")
        valid = sorted(f.name for f in fields(cls))
        for key in options:
            if key not in valid:
                if key in ("backend", "mode", "fullgraph", "dynamic", "disable"):
                    hint = f" (pass it as compile(..., {key}=...))"
                else:
                    close = difflib.get_close_matches(str(key), valid, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"unknown compile option {key!r}{hint}; valid options: {', '.join(valid)}"
                )
        return cls(**options)


def _is_instance(value: Any, t: type) -> bool:
    if t is int:  # a bool is an int to Python, never to an option
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, t)
