"""The lazy IR: dtypes, devices, symbolic sizes, nodes, the primitive table, programs.

This package imports nothing else from lazytorch: the scheduler and backends build on it,
never the other way round.
"""

from lazytorch.ir import prims as _prims  # registers every primitive
from lazytorch.ir.device import Device
from lazytorch.ir.dtypes import DType
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import PRIMITIVES, Primitive, get
from lazytorch.ir.program import Capture, Instr, Param, Program, capture

__all__ = [
    "PRIMITIVES",
    "Capture",
    "DType",
    "Device",
    "Instr",
    "Node",
    "Param",
    "Primitive",
    "Program",
    "capture",
    "get",
]
del _prims
