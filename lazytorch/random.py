"""torch.random: the default generator's seed and state, and `fork_rng`.

>>> import lazytorch
>>> _ = lazytorch.random.manual_seed(0)
>>> with lazytorch.random.fork_rng():
...     inside = lazytorch.rand(2)
>>> bool((lazytorch.rand(2) == inside).all())  # the draw inside did not move the generator
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lazytorch.ops.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: Any = None,
) -> Iterator[None]:
    """Restore the default generator's state on exit, so draws inside leave it where it
    was. lazytorch has one generator for every device, so `devices` and `device_type` name
    nothing more to save."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
