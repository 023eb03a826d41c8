"""Jobs that must fail, clearly: ``mpiexec -n 2 python faults.py MODE``.

* ``hang``: rank 1 never joins the first all_reduce; the collective timeout
  (``init_process_group(timeout=2)``) aborts the job naming rank 0, the collective and its
  sequence number.
* ``hang-env``: the same with the default timeout from LAZYTORCH_DISTRIBUTED_TIMEOUT.
* ``syncbn``: training a SyncBatchNorm on 2 ranks refuses (no cross-rank statistics yet).
* ``mismatch``: rank 0 records all_reduce, rank 1 broadcast; with
  LAZYTORCH_DISTRIBUTED_DEBUG=1 the check fails on both ranks, naming both sides.
"""

from __future__ import annotations

import datetime
import sys
import time

import lazytorch as lt
import lazytorch.distributed as dist

mode = sys.argv[1]
timeout = datetime.timedelta(seconds=2) if mode == "hang" else None
dist.init_process_group(timeout=timeout)
r = dist.get_rank()
x = lt.ones(4) * (r + 1)
dist.all_reduce(x)  # the first collective (#1) passes on every rank
x.numpy()
if mode.startswith("hang"):
    if r == 1:
        time.sleep(60)  # never joins the next collective
    y = lt.ones(3) * 2
    dist.all_reduce(y)
    y.numpy()
elif mode == "syncbn":  # statistics per rank would be silently wrong: it must refuse
    bn = lt.nn.SyncBatchNorm(3)
    bn.eval()(lt.ones(2, 3)).detach().numpy()  # evaluation uses the running statistics: fine
    bn.train()(lt.ones(2, 3))
elif mode == "mismatch":
    y = lt.ones(3) * 2
    if r == 0:
        dist.all_reduce(y)
    else:
        dist.broadcast(y, src=0)
    y.numpy()
print("unreachable: the job should have been aborted", flush=True)
