"""lazytorch.scheduler: canonical program -> kernels, extern calls and a memory plan.

Installed as ``lazytorch.scheduler`` (see setup.py's package mapping). It imports the IR
only and never writes source text: its output, a `Schedule`, is plain data that prints
readably and that each backend's codegen turns into code.

>>> import lazytorch as lt
>>> from lazytorch.scheduler import schedule
>>> x = lt.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> print(schedule(lt.debug.program(lt.softmax(x, 1))))   # doctest: +ELLIPSIS
schedule: 1 kernels, 0 extern calls; buffers: 1 inputs, 1 outputs, 0 temporaries
  k0 [reduction 2 | 2, 3 passes]: fused[reduce_max, sub, exp, reduce_sum, div]
...
"""

from lazytorch.scheduler.kernel import Buffer, Extern, Kernel, KVal, Reduce, Schedule, Store
from lazytorch.scheduler.schedule import SchedulingError, schedule

__all__ = [
    "Buffer",
    "Extern",
    "KVal",
    "Kernel",
    "Reduce",
    "Schedule",
    "SchedulingError",
    "Store",
    "schedule",
]
