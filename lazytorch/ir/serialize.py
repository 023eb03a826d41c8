"""Programs as JSON: what graph dumps show and what ahead-of-time warm-up rebuilds from.

`program_to_json` writes a canonical `Program` as plain JSON data and `program_from_json`
reads it back into a program with the same `canonical_text` — hence the same compile-cache
key — so ``lazytorch warmup`` can compile, on another machine or in another process,
exactly what a real run materialized (``LAZYTORCH_RECORD``), without the user's script.

Attribute values are tagged where JSON would lose their type: a dtype is
``{"dtype": "float32"}``, a device ``{"device": "cpu"}``, a tuple ``{"tuple": [...]}`` and
a float ``{"float": "0x1.8p+1"}`` (hex, so every bit survives, NaN and infinities too);
ints, bools, strings and None are themselves.

>>> import lazytorch
>>> from lazytorch.debug import program
>>> p = program(lazytorch.ones(3) * 2.5)
>>> q = program_from_json(program_to_json(p))
>>> q.canonical_text() == p.canonical_text()
True
"""

from __future__ import annotations

from typing import Any

from lazytorch.ir.device import Device, as_device
from lazytorch.ir.dtypes import BY_NAME, DType
from lazytorch.ir.node import format_loc
from lazytorch.ir.primitives import PRIMITIVES
from lazytorch.ir.program import Instr, Param, Program
from lazytorch.ir.symbolic import SymInt

__all__ = ["FORMAT", "ProgramFormatError", "program_from_json", "program_to_json"]

FORMAT = 1
"""Version of the JSON layout; a reader refuses any other."""


class ProgramFormatError(ValueError):
    """A JSON program that cannot be read back (another format, an unknown op, bad data)."""


def program_to_json(prog: Program, *, locs: bool = True) -> dict[str, Any]:
    """`prog` as JSON-serializable data (see the module docstring for the encoding).

    Raises TypeError for a program with symbolic sizes or an attribute type that has no
    encoding (nothing is silently approximated). `locs` adds each instruction's user line
    (``"file:line"``), which readers ignore.
    """
    out: dict[str, Any] = {
        "format": FORMAT,
        "params": [
            {
                "kind": p.kind,
                "dtype": p.dtype.name,
                "shape": _shape(p.shape),
                "device": str(p.device),
            }
            for p in prog.params
        ],
        "instrs": [],
        "outputs": list(prog.outputs),
    }
    for ins in prog.instrs:
        row: dict[str, Any] = {
            "op": ins.op.name,
            "inputs": list(ins.inputs),
            "attrs": [_encode(v) for v in ins.attrs],
            "dtype": ins.dtype.name,
            "shape": _shape(ins.shape),
            "device": str(ins.device),
        }
        if locs and ins.loc is not None:
            row["loc"] = format_loc(ins.loc)
        out["instrs"].append(row)
    return out


def program_from_json(data: Any) -> Program:
    """The `Program` that `program_to_json` wrote; ProgramFormatError names what is wrong.

    Instructions get back their user lines when the JSON has them (for dumps and cache
    listings; they are not part of the program's identity).
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ProgramFormatError(f"not a lazytorch program in JSON format {FORMAT} (got {got!r})")
    try:
        params = [
            Param(p["kind"], _read_shape(p["shape"]), _dtype(p["dtype"]), as_device(p["device"]))
            for p in data["params"]
        ]
        instrs = []
        n = len(params)
        for j, row in enumerate(data["instrs"]):
            op = PRIMITIVES.get(row["op"])
            if op is None:
                raise ProgramFormatError(f"instruction {j}: unknown primitive {row['op']!r}")
            inputs = tuple(int(a) for a in row["inputs"])
            if any(not 0 <= a < n + j for a in inputs):
                raise ProgramFormatError(f"instruction {j} ({op.name}) reads a later value")
            attrs = tuple(_decode(v) for v in row["attrs"])
            instrs.append(
                Instr(
                    op,
                    inputs,
                    attrs,
                    _read_shape(row["shape"]),
                    _dtype(row["dtype"]),
                    as_device(row["device"]),
                    _read_loc(row.get("loc")),
                    j,
                )
            )
        outputs = [int(o) for o in data["outputs"]]
    except ProgramFormatError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise ProgramFormatError(f"malformed program JSON: {type(e).__name__}: {e}") from None
    if any(not 0 <= o < n + len(instrs) for o in outputs):
        raise ProgramFormatError("an output names a value the program does not have")
    return Program(params, instrs, outputs)


def _read_loc(raw: Any) -> tuple[str, int] | None:
    """``"file.py:12"`` -> ("file.py", 12); anything else (absent, malformed) -> None."""
    if not isinstance(raw, str):
        return None
    file, _, line = raw.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else None


def _shape(shape: tuple[Any, ...]) -> list[int]:
    if any(isinstance(d, SymInt) for d in shape):
        raise TypeError(f"program_to_json: symbolic shape {list(shape)} has no JSON form yet")
    return [int(d) for d in shape]


def _read_shape(raw: Any) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(type(d) is int and d >= 0 for d in raw):
        raise ProgramFormatError(f"bad shape {raw!r}")
    return tuple(raw)


def _dtype(name: Any) -> DType:
    d = BY_NAME.get(name) if isinstance(name, str) else None
    if d is None:
        raise ProgramFormatError(f"unknown dtype {name!r}")
    return d


def _encode(v: Any) -> Any:
    if v is None or (isinstance(v, (bool, int, str)) and not isinstance(v, SymInt)):
        return v
    if isinstance(v, float):
        return {"float": v.hex()}
    if isinstance(v, DType):
        return {"dtype": v.name}
    if isinstance(v, Device):
        return {"device": str(v)}
    if isinstance(v, (tuple, list)):
        return {"tuple": [_encode(x) for x in v]}
    raise TypeError(f"program_to_json: no JSON form for attribute {v!r} ({type(v).__name__})")


def _decode(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, dict) and len(v) == 1:
        ((tag, x),) = v.items()
        if tag == "float":
            return float.fromhex(x)
        if tag == "dtype":
            return _dtype(x)
        if tag == "device":
            return as_device(x)
        if tag == "tuple":
            return tuple(_decode(y) for y in x)
    raise ProgramFormatError(f"bad attribute encoding {v!r}")
