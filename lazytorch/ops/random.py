"""Random numbers: a counter-based generator whose draws are graph nodes.

A `Generator` is a (seed, offset) pair. Each draw of n numbers records one ``rand`` node
whose seed and offset are *scalar inputs* — so reseeding or advancing never changes the
program — and advances the offset by n. Values depend only on (seed, counter) (Philox4x32-
10, see `lazytorch.ir.philox`): reproducible from ``manual_seed``, identical in lazy and
sync mode, and on every backend.
"""

from __future__ import annotations

import os
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.primitives import make_node
from lazytorch.ops._core import P, cast, numel, scalar_node, shape_arg, wrap
from lazytorch.ops.creation import resolve_device, resolve_dtype
from lazytorch.tensor import Tensor

__all__ = [
    "Generator",
    "default_generator",
    "initial_seed",
    "manual_seed",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
]

_DEFAULT_SEED = 67280421310721  # torch's default, for familiarity


class Generator:
    """Random state: a 64-bit seed and a counter offset.

    >>> import lazytorch
    >>> g = lazytorch.Generator().manual_seed(0)
    >>> a = lazytorch.rand(3, generator=g)
    >>> b = lazytorch.rand(3, generator=lazytorch.Generator().manual_seed(0))
    >>> bool((a == b).all())
    True
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = resolve_device(device, "Generator")
        self._seed = _DEFAULT_SEED
        self._offset = 0

    def manual_seed(self, seed: int) -> Generator:
        if isinstance(seed, Tensor):
            seed = int(seed.item())
        if not isinstance(seed, int):
            raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        from lazytorch.ops.creation import tensor

        return tensor(
            [self._seed - (1 << 64) if self._seed >= 1 << 63 else self._seed, self._offset]
        )

    def set_state(self, state: Tensor) -> Generator:
        s, off = state.tolist()
        self._seed = int(s) & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = int(off)
        return self

    def draw(self, n: Any) -> tuple[int, int]:
        """Reserve `n` counters: returns (seed, offset) for the draw."""
        off = self._offset
        self._offset += int(n) if not isinstance(n, int) else n
        return self._seed, off


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _signed64(x: int) -> int:
    return x - (1 << 64) if x >= 1 << 63 else x


def _draw(
    shape: tuple[Any, ...], dtype: dt.DType, dist: str, generator: Any, device: Any, op: str
) -> Any:
    if not dtype.is_floating_point:
        raise op_error(TypeError, op, f"expected a floating-point dtype, got {dtype}")
    g = generator or default_generator
    dev = resolve_device(device, op)
    s, off = g.draw(numel(shape))
    seed_n = scalar_node(_signed64(s), dt.int64, dev)
    off_n = scalar_node(_signed64(off), dt.int64, dev)
    return make_node(P.rand, (seed_n, off_n), (shape, dtype, dist), shape, dtype, dev)


def rand(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform samples in [0, 1)."""
    shape = shape_arg(size, "rand")
    d = resolve_dtype(dtype, "rand") or _config.get_default_dtype()
    return wrap(_draw(shape, d, "uniform", generator, device, "rand"))


def randn(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal samples."""
    shape = shape_arg(size, "randn")
    d = resolve_dtype(dtype, "randn") or _config.get_default_dtype()
    return wrap(_draw(shape, d, "normal", generator, device, "randn"))


def randint(
    *args: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise op_error(
            TypeError, "randint", "expected randint(high, size) or randint(low, high, size)"
        )
    if high <= low:
        raise op_error(
            RuntimeError,
            "randint",
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}",
        )
    shape = shape_arg((size,), "randint")
    d = resolve_dtype(dtype, "randint") or dt.int64
    u = _draw(shape, dt.float64, "uniform", generator, device, "randint")
    dev = u.device
    span = make_node(
        P.mul, (u, scalar_node(high - low, dt.float64, dev)), (), shape, dt.float64, dev
    )
    floor = make_node(P.floor, (span,), (), shape, dt.float64, dev)
    ints = cast(floor, dt.int64)
    shifted = make_node(P.add, (ints, scalar_node(low, dt.int64, dev)), (), shape, dt.int64, dev)
    return wrap(cast(shifted, d))


def rand_like(
    input: Tensor, *, dtype: Any = None, device: Any = None, generator: Any = None
) -> Tensor:
    return rand(
        input.shape, dtype=dtype or input.dtype, device=device or input.device, generator=generator
    )


def randn_like(
    input: Tensor, *, dtype: Any = None, device: Any = None, generator: Any = None
) -> Tensor:
    return randn(
        input.shape, dtype=dtype or input.dtype, device=device or input.device, generator=generator
    )


def randint_like(
    input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None, device: Any = None
) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(
        low, high, input.shape, dtype=dtype or input.dtype, device=device or input.device
    )


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A random permutation of 0..n-1 (argsort of uniform keys)."""
    keys = _draw((n,), dt.float64, "uniform", generator, device, "randperm")
    order = make_node(P.argsort, (keys,), (0, False), (n,), dt.int64, keys.device)
    return wrap(cast(order, resolve_dtype(dtype, "randperm") or dt.int64))
