"""Random numbers: a counter-based generator whose draws are graph nodes.

A `Generator` is a (seed, offset) pair. Each draw of n numbers records one ``rand`` node
whose seed and offset are *scalar inputs* — so reseeding or advancing never changes the
program — and advances the offset by n. Values depend only on (seed, counter) (Philox4x32-
10, see `lazytorch.ir.philox`): reproducible from ``manual_seed``, identical in lazy and
sync mode, and on every backend.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir.primitives import make_node
from lazytorch.ops import complex as CX
from lazytorch.ops._core import (
    ComplexBase,
    P,
    cast,
    check_new_tensor,
    int_like,
    numel,
    scalar_node,
    shape_arg,
    tensor_arg,
    unpack_int64,
    wrap,
)
from lazytorch.ops.creation import (
    arange,
    complex_dtype,
    into_out,
    resolve_device,
    resolve_dtype,
    size_args,
    tensor,
    with_requires_grad,
)
from lazytorch.ops.shape import broadcast_shapes
from lazytorch.ops.views import assign
from lazytorch.runtime import implicit_point
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


@public()
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
        """Reset to `seed` (any int in [-2**63, 2**64); negatives wrap as in torch)."""
        if isinstance(seed, Tensor):
            seed = seed.item()
        if isinstance(seed, (bool, float)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not isinstance(seed, int):
            raise TypeError(f"manual_seed(): an integer is required, got {type(seed).__name__}")
        if not -(1 << 63) <= seed < 1 << 64:
            raise ValueError(f"manual_seed(): seed {seed} overflows 64 bits")
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


default_generator = public(torch="default_generator")(Generator())


@public()
def manual_seed(seed: Any) -> Generator:
    """Seed the default generator; returns it. Like torch, anything `int()` takes is a seed."""
    return default_generator.manual_seed(int(seed))


@public()
def seed() -> int:
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


@public()
def initial_seed() -> int:
    return default_generator.initial_seed()


@public()
def get_rng_state() -> Tensor:
    return default_generator.get_state()


@public()
def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def _signed64(x: int) -> int:
    return x - (1 << 64) if x >= 1 << 63 else x


# Called with (generator, op) before every draw while a `lazytorch.func.vmap` runs: vmap's
# randomness policy ('error' raises, 'same' replays the draws of its first sample).
draw_hooks: list[Any] = []


def _draw(
    shape: tuple[Any, ...], dtype: dt.DType, dist: str, generator: Any, device: Any, op: str
) -> Any:
    if not dtype.is_floating_point:
        # torch's kernels for these distributions exist for floating dtypes only.
        kernel = "check_uniform_bounds" if dist == "uniform" else "normal_kernel_cpu"
        raise op_error(
            NotImplementedError,
            op,
            f"\"{kernel}\" not implemented for '{dtype.legacy_name}'",
        )
    if generator is not None and not isinstance(generator, Generator):
        raise op_error(
            TypeError,
            op,
            f"generator must be a lazytorch.Generator, not {type(generator).__name__}",
        )
    g = generator or default_generator
    for hook in draw_hooks:
        hook(g, op)
    dev = resolve_device(device, op)
    s, off = g.draw(numel(shape))
    seed_n = scalar_node(_signed64(s), dt.int64, dev)
    off_n = scalar_node(_signed64(off), dt.int64, dev)
    return make_node(P.rand, (seed_n, off_n), (shape, dtype, dist), shape, dtype, dev)


def _complex_draw(
    shape: tuple[Any, ...], dtype: Any, dist: str, generator: Any, device: Any, op: str
) -> CX.ComplexTensor:
    """Draws of a complex dtype, as torch's: the real and imaginary parts independent,
    uniform in [0, 1) each, or normal with variance 1/2 each (so that E|z|^2 = 1)."""
    check_new_tensor((*shape, 2), dtype.real, op)
    pair = wrap(_draw((*shape, 2), dtype.real, dist, generator, device, op))
    return CX.ComplexTensor(pair * math.sqrt(0.5) if dist == "normal" else pair)


def _dtype_with_out(dtype: Any, out: Any, op: str) -> Any:
    """The dtype of a random factory given `out=`: out's, or `dtype` when it agrees (torch
    refuses a different one)."""
    if isinstance(out, ComplexBase):
        raise op_error(NotImplementedError, op, "out= is not supported for complex results")
    if complex_dtype(dtype) is not None:
        if out is not None:
            raise op_error(
                RuntimeError,
                op,
                f"dtype {dtype.legacy_name} does not match dtype of out parameter "
                f"({getattr(out.dtype, 'legacy_name', out.dtype)})",
            )
        return dtype
    d = resolve_dtype(dtype, op)
    if out is None:
        return d
    if not isinstance(out, Tensor):
        raise op_error(TypeError, op, f"out must be a Tensor, not {type(out).__name__}")
    if d is not None and d is not out.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"dtype {d.legacy_name} does not match dtype of out parameter "
            f"({out.dtype.legacy_name})",
        )
    return out.dtype


@public()
@with_requires_grad
def rand(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """Uniform samples in [0, 1). ``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``."""
    out = kwargs.pop("out", None)
    shape = size_args(size, kwargs, "rand")
    d = _dtype_with_out(dtype, out, "rand") or _config.get_default_dtype()
    if complex_dtype(d) is not None:
        return _complex_draw(shape, d, "uniform", generator, device, "rand")  # type: ignore[return-value]
    check_new_tensor(shape, d, "rand")
    return into_out(wrap(_draw(shape, d, "uniform", generator, device, "rand")), out, "rand")


@public()
@with_requires_grad
def randn(
    *size: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """Standard normal samples."""
    out = kwargs.pop("out", None)
    shape = size_args(size, kwargs, "randn")
    d = _dtype_with_out(dtype, out, "randn") or _config.get_default_dtype()
    if complex_dtype(d) is not None:
        return _complex_draw(shape, d, "normal", generator, device, "randn")  # type: ignore[return-value]
    check_new_tensor(shape, d, "randn")
    return into_out(wrap(_draw(shape, d, "normal", generator, device, "randn")), out, "randn")


_C_TYPES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
}


def _int_arg(x: Any, name: str) -> int:
    if isinstance(x, Tensor):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, int):
        raise op_error(TypeError, "randint", f"{name} must be an int, not {type(x).__name__}")
    unpack_int64(x, "randint")
    return x


@public()
@with_requires_grad
def randint(
    *args: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> Tensor:
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    ``low``, ``high`` and ``size`` may also be keywords, as in torch.
    """
    names = ("low", "high", "size") if len(args) + len(kwargs) >= 3 else ("high", "size")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in given:
            raise op_error(TypeError, "randint", f"unexpected or repeated argument '{k}'")
        given[k] = v
    if set(given) != set(names):
        raise op_error(
            TypeError, "randint", "expected randint(high, size) or randint(low, high, size)"
        )
    low = _int_arg(given.get("low", 0), "low")
    high = _int_arg(given["high"], "high")
    if high <= low:
        raise op_error(
            RuntimeError,
            "randint",
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}",
        )
    shape = shape_arg((given["size"],), "randint")
    d = _dtype_with_out(dtype, out, "randint") or dt.int64
    if complex_dtype(d) is not None:
        raise op_error(
            RuntimeError,
            "randint",
            "check_random_bounds handles only integral, floating-point and boolean types",
        )
    check_new_tensor(shape, d, "randint")
    if not d.is_floating_point:
        lo = -(1 << (d.bits - 1)) if d.is_signed else 0
        hi = (1 << (d.bits - 1 if d.is_signed else d.bits)) - 1 if d.category else 1
        if not lo <= low <= hi:
            raise op_error(RuntimeError, "randint", f"from is out of bounds for {_C_TYPES[d.name]}")
        if not lo <= high - 1 <= hi:
            raise op_error(
                RuntimeError, "randint", f"to - 1 is out of bounds for {_C_TYPES[d.name]}"
            )
    # floor(u * (high - low)) with 53-bit uniforms: exact and unbiased to 2**-53 per value.
    u = _draw(shape, dt.float64, "uniform", generator, device, "randint")
    dev = u.device
    span = make_node(
        P.mul, (u, scalar_node(high - low, dt.float64, dev)), (), shape, dt.float64, dev
    )
    floor = make_node(P.floor, (span,), (), shape, dt.float64, dev)
    ints = cast(floor, dt.int64)
    shifted = make_node(P.add, (ints, scalar_node(low, dt.int64, dev)), (), shape, dt.int64, dev)
    return into_out(wrap(cast(shifted, d)), out, "randint")


@public()
@with_requires_grad
def rand_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    generator: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return rand(
        input.shape, dtype=dtype or input.dtype, device=device or input.device, generator=generator
    )


@public()
@with_requires_grad
def randn_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    generator: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    return randn(
        input.shape, dtype=dtype or input.dtype, device=device or input.device, generator=generator
    )


@public()
@with_requires_grad
def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    generator: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        generator=generator,
    )


@public()
@with_requires_grad
def randperm(
    n: int,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    out: Any = None,
) -> Tensor:
    """A random permutation of 0..n-1 (argsort of uniform keys)."""
    unpack_int64(n, "randperm")
    (n,) = shape_arg((n,), "randperm")
    d = _dtype_with_out(dtype, out, "randperm") or dt.int64
    check_new_tensor((n,), d, "randperm")
    if d is dt.bool_:
        raise op_error(NotImplementedError, "randperm", "\"randperm\" not implemented for 'Bool'")
    if d.category == 1 and n > 0:
        hi = (1 << (d.bits - 1 if d.is_signed else d.bits)) - 1
        if n - 1 > hi:
            raise op_error(
                RuntimeError,
                "randperm",
                f"value cannot be converted to type {d.name} without overflow",
            )
    keys = _draw((n,), dt.float64, "uniform", generator, device, "randperm")
    order = make_node(P.argsort, (keys,), (0, False, "stable", 0), (n,), dt.int64, keys.device)
    return into_out(wrap(cast(order, d)), out, "randperm")


def categorical_draws(rows: Tensor, num_samples: int, *, generator: Any = None) -> Tensor:
    """`num_samples` category indices (int64, ``(rows, num_samples)``) per row of the 2-d
    non-negative float64 weights `rows`, drawn with replacement: each draw inverts the
    row's cumulative distribution at a uniform number. The weights are not checked (the
    caller does, or not: `multinomial` checks eagerly, a ``Categorical`` at construction).
    """
    nrows, k = rows.shape
    cdf = rows.cumsum(-1)
    cdf = cdf / cdf[:, -1:]  # the last entry is exactly 1: every u < 1 lands in a row
    u = rand(nrows, num_samples, dtype=dt.float64, generator=generator, device=rows.device)
    return (cdf.unsqueeze(1) <= u.unsqueeze(2)).sum(-1).clamp(max=k - 1)


@public(method=True)
def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
    out: Any = None,
) -> Tensor:
    """Draw `num_samples` category indices per row of the weights `input` (1-d or 2-d,
    non-negative, not necessarily normalized).

    With replacement, each draw inverts the row's cumulative distribution at a uniform
    number. Without, the categories race exponential clocks ``-log(u) / w`` and the first
    `num_samples` to finish win — the same law as drawing one at a time and removing the
    winner; zero-weight categories finish last (as in torch, they fill up when the row has
    fewer positive weights than samples).

    torch checks the weights' values eagerly, so this is a materialization point: one cut
    computes the check and the samples together (and anything live that shares their work).

    >>> import lazytorch
    >>> g = lazytorch.Generator().manual_seed(0)
    >>> lazytorch.multinomial(lazytorch.tensor([0.0, 1.0, 0.0]), 1, generator=g)
    tensor([1])
    >>> s = lazytorch.multinomial(lazytorch.ones(2, 5), 5, generator=g)
    >>> s.sort(dim=1).values.tolist()
    [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4]]
    """
    w = tensor_arg(input, "multinomial")
    if w.ndim not in (1, 2):
        raise op_error(RuntimeError, "multinomial", "prob_dist must be 1 or 2 dim")
    if not w.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "multinomial",
            f"multinomial only supports floating-point dtypes for input, got: "
            f"{w.dtype.legacy_name}",
        )
    num_samples = int_like(num_samples)
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise op_error(
            TypeError,
            "multinomial",
            f"num_samples must be an int, not {type(num_samples).__name__}",
        )
    if num_samples <= 0:
        raise op_error(RuntimeError, "multinomial", "cannot sample n_sample <= 0 samples")
    k = w.shape[-1]
    if not replacement and num_samples > k:
        raise op_error(
            RuntimeError,
            "multinomial",
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        )
    if k == 0:
        raise op_error(
            RuntimeError, "multinomial", "cannot sample from a distribution with no categories"
        )
    rows = w.reshape(-1, k).detach().to(dt.float64)
    nrows = rows.shape[0]
    if replacement:
        picks = categorical_draws(rows, num_samples, generator=generator)
    else:
        u = rand(nrows, k, dtype=dt.float64, generator=generator, device=w.device)
        finish = -u.log() / rows
        if num_samples == 1:
            picks = finish.argmin(-1, keepdim=True)
        else:
            picks = finish.argsort(-1)[:, :num_samples]
    if w.ndim == 1:
        picks = picks.reshape(num_samples)
    # 1: a negative, inf or NaN weight; 2: a row without positive weight
    bad = ~((rows >= 0) & (rows < math.inf)).all()
    empty = (rows.sum(-1) <= 0).any()
    status = bad.to(dt.int64) * 2 + (~bad & empty).to(dt.int64)
    implicit_point(status, "multinomial() weight check")
    code = status.item()
    if code >= 2:
        raise op_error(
            RuntimeError,
            "multinomial",
            "probability tensor contains either `inf`, `nan` or element < 0",
        )
    if code == 1:
        raise op_error(
            RuntimeError,
            "multinomial",
            "invalid multinomial distribution (sum of probabilities <= 0)",
        )
    return into_out(picks, out, "multinomial")


@public(method=True)
def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None, out: Any = None) -> Tensor:
    """1 with probability `input` (or the number `p`), else 0, in input's dtype.

    >>> import lazytorch
    >>> lazytorch.bernoulli(lazytorch.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        raise op_error(
            TypeError, "bernoulli", f"input must be a Tensor, not {type(input).__name__}"
        )
    prob = input.detach() if p is None else p
    d = input.dtype
    if not d.is_floating_point and p is None:
        raise op_error(
            NotImplementedError,
            "bernoulli",
            f"\"bernoulli_tensor_cpu_p_\" not implemented for '{d.legacy_name}'",
        )
    u = rand(input.shape, dtype=dt.float64, generator=generator, device=input.device)
    return into_out((u < prob).to(d), out, "bernoulli")


@public(torch=False, method=True)
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill this tensor (in place) with 1 at probability `p` (a number or a tensor), else 0."""
    u = rand(self.shape, dtype=dt.float64, generator=generator, device=self.device)
    return assign(self, (u < p).to(self.dtype)._node)


# -- Poisson counts ------------------------------------------------------------------------------
_POISSON_SMALL = 10.0  # rates below: CDF inversion; from here on: transformed rejection
_PTRS_ROUNDS = 4  # candidates proposed at once per entry (each accepted with p > 0.85)
_PTRS_BATCHES = 20  # at most this many batches of them before giving up


def _poisson_small(rate: Tensor, top: float, generator: Any) -> Tensor:
    """Counts for rates below `_POISSON_SMALL` (`top` the largest), by inverting the CDF:
    the number of k whose CDF lies below a uniform draw, over k up to ``top + 12 sqrt(top)
    + 16`` (at most 63 terms; the mass beyond is below 1e-30)."""
    kmax = int(top + 12 * math.sqrt(top) + 16)
    k = arange(kmax + 1, dtype=dt.float64, device=rate.device)
    r = rate.unsqueeze(-1)
    cdf = (k.xlogy(r) - r - (k + 1).lgamma()).exp().cumsum(-1)
    u = rand(tuple(rate.shape), dtype=dt.float64, generator=generator, device=rate.device)
    return (cdf < u.unsqueeze(-1)).sum(-1).to(dt.float64)


def first_accepted(
    propose: Callable[[], tuple[Tensor, Tensor]], batches: int, failure: Callable[[], Exception]
) -> Tensor:
    """Rejection sampling in batches: `propose()` gives (candidates, accepted), both
    (rounds, *shape), several rounds per entry at once (lazily); each entry keeps its first
    accepted candidate. The host checks whether any entry has none and then proposes a
    batch for all again, at most `batches` times, before raising `failure()`."""
    result = done = None
    for _ in range(batches):
        values, ok = propose()
        first = ok.to(dt.float64).argmax(0, keepdim=True)  # the first accepted round
        pick = values.gather(0, first).squeeze(0)
        got = ok.any(0)
        result = pick if result is None else result.where(done, pick)
        done = got if done is None else done | got
        if bool(done.all().item()):
            return result
    raise failure()


def _poisson_ptrs(rate: Tensor, generator: Any) -> Tensor:
    """Counts for rates of at least `_POISSON_SMALL`, by Hoermann's transformed rejection
    with squeeze (PTRS, 1993; NumPy's method for these rates): `_PTRS_ROUNDS` candidates per
    entry and batch, at most `_PTRS_BATCHES` batches (`first_accepted`)."""
    shape, dev = tuple(rate.shape), rate.device
    slam, loglam = rate.sqrt(), rate.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = (1.1239 + 1.1328 / (b - 3.4)).log()
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose() -> tuple[Tensor, Tensor]:
        draws = (_PTRS_ROUNDS, *shape)
        u = rand(draws, dtype=dt.float64, generator=generator, device=dev) - 0.5
        v = rand(draws, dtype=dt.float64, generator=generator, device=dev)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + rate + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        bound = -rate + k * loglam - (k + 1).lgamma()
        exact = v.log() + log_invalpha - (a / (us * us) + b).log() <= bound
        return k, quick | ((k >= 0) & ~((us < 0.013) & (v > us)) & exact)

    return first_accepted(
        propose,
        _PTRS_BATCHES,
        lambda: op_error(
            RuntimeError,
            "poisson",
            f"no proposal accepted for some entries after {_PTRS_BATCHES * _PTRS_ROUNDS} rounds",
        ),
    )


@public()
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson(`input`) counts, one per entry, in input's floating dtype. No gradient flows
    to the rates (torch's is zero, and so is this one).

    Rates below 10 invert the CDF (up to 63 terms per entry); larger ones use Hoermann's
    transformed rejection (PTRS), NumPy's method. The rates are checked on the host, so
    this is a materialization point: a negative or NaN rate raises as in torch, and so
    does an infinite one (torch returns a meaningless count).

    >>> import lazytorch
    >>> g = lazytorch.Generator().manual_seed(0)
    >>> lazytorch.poisson(lazytorch.tensor([0.0, 0.0]), g).tolist()
    [0.0, 0.0]
    >>> s = lazytorch.poisson(lazytorch.full((10000,), 50.0), g)
    >>> round(s.mean().item())
    50
    """
    x = tensor_arg(input, "poisson")
    d = x.dtype
    if not d.is_floating_point:
        raise op_error(
            NotImplementedError, "poisson", f"\"poisson_cpu\" not implemented for '{d.legacy_name}'"
        )
    rate = x.detach().to(dt.float64)
    if rate.numel() == 0:
        out = rate
    else:
        small = rate < _POISSON_SMALL
        stats = [
            (~(rate >= 0)).any().to(dt.float64),
            rate.max(),
            small.all().to(dt.float64),
            small.any().to(dt.float64),
            rate.where(small, 0.0).max(),
        ]
        implicit_point(stats[0], "poisson() rate check")
        bad, top, all_small, any_small, top_small = (float(t.item()) for t in stats)
        if bad:
            raise op_error(
                RuntimeError, "poisson", "invalid Poisson rate, expected rate to be non-negative"
            )
        if top == math.inf:
            raise op_error(
                RuntimeError, "poisson", "invalid Poisson rate, expected rate to be finite"
            )
        out = None
        if any_small:
            out = _poisson_small(rate.where(small, 0.0), top_small, generator)
        if not all_small:
            large = _poisson_ptrs(rate.where(~small, _POISSON_SMALL), generator)
            out = large if out is None else out.where(small, large)
    out = out.to(d)
    return out + x * 0 if x.requires_grad else out


# -- more distributions: transforms of uniform and normal draws -------------------------------
@public()
def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Normal samples with (broadcast) `mean` and `std`, each a tensor or a number; two
    numbers need `size`.

    >>> import lazytorch
    >>> lazytorch.normal(lazytorch.zeros(3), 0.0)
    tensor([0., 0., 0.])
    """
    if isinstance(mean, ComplexBase) and not isinstance(std, ComplexBase):
        # torch: mean + std * randn of mean's complex dtype (each part's variance std**2/2)
        if out is not None or dtype is not None or size is not None:
            raise op_error(
                TypeError, "normal", "a complex mean takes only std and generator arguments"
            )
        std_shape = std.shape if isinstance(std, Tensor) else ()
        shape = tuple(broadcast_shapes(mean.shape, std_shape))
        z = randn(shape, dtype=mean.dtype, generator=generator, device=mean.device)
        result = z * std + mean
        if requires_grad:
            result.requires_grad_()
        return result  # type: ignore[no-any-return]
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    # (a tensor std is not checked for negative entries: that would cut the graph per call)
    if not isinstance(std, Tensor) and std < 0:
        raise op_error(RuntimeError, "normal", f"normal expects std >= 0.0, but found std {std}")
    if tensors:
        shape = tuple(broadcast_shapes(*[t.shape for t in tensors]))
        d = tensors[0].dtype if dtype is None else resolve_dtype(dtype, "normal")
        dev = tensors[0].device
    else:
        if size is None:
            raise op_error(TypeError, "normal", "normal() with numbers for mean and std needs size")
        shape = shape_arg((size,), "normal")
        d = resolve_dtype(dtype, "normal") or _config.get_default_dtype()
        dev = device
    z = randn(shape, dtype=d, generator=generator, device=dev)
    result = z * std + mean
    if requires_grad:
        result.requires_grad_()
    return into_out(result, out, "normal")


def _fill_from(self: Tensor, values: Tensor) -> Tensor:
    return assign(self, values.to(self.dtype)._node)


def _uniform64(self: Tensor, generator: Any) -> Tensor:
    return rand(self.shape, dtype=dt.float64, generator=generator, device=self.device)


@public(torch=False, method=True)
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with exponential samples of rate `lambd` (in place)."""
    if lambd <= 0:
        raise op_error(
            RuntimeError,
            "exponential_",
            f"exponential_ expects lambda > 0.0, but found lambda={lambd}",
        )
    return _fill_from(self, -(-_uniform64(self, generator)).log1p() / lambd)


@public(torch=False, method=True)
def log_normal_(
    self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
) -> Tensor:
    """Fill with samples whose log is normal(mean, std) (in place)."""
    z = randn(self.shape, dtype=dt.float64, generator=generator, device=self.device)
    return _fill_from(self, (z * std + mean).exp())


@public(torch=False, method=True)
def cauchy_(
    self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
) -> Tensor:
    """Fill with Cauchy samples (in place)."""
    u = _uniform64(self, generator)
    return _fill_from(self, median + sigma * (math.pi * (u - 0.5)).tan())


@public(torch=False, method=True)
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (in place)."""
    if not 0 < p < 1:
        raise op_error(
            RuntimeError, "geometric_", f"geometric_ expects p to be in (0, 1), but got p={p}"
        )
    tail = (1 - _uniform64(self, generator)).log()  # log of a uniform in (0, 1]
    return _fill_from(self, (tail / math.log1p(-p)).ceil().clamp(min=1))


@public(torch=False, method=True)
def random_(
    self: Tensor, from_: int | None = None, to: int | None = None, *, generator: Any = None
) -> Tensor:
    """Fill with integers uniform in [from, to) (``random_(to)``: [0, to); no bound: up to
    the dtype's largest integer, or 2**mantissa for floats), in place."""
    if to is None and from_ is not None:  # random_(to)
        from_, to = 0, from_
    from_ = from_ or 0
    if to is None:
        d = self.dtype
        if d.is_floating_point:
            to = (1 << {16: 11, 32: 24, 64: 53}[d.bits]) + 1
        elif d is dt.bool_:
            to = 2
        else:
            to = (1 << (d.bits - 1 if d.is_signed else d.bits)) if d.bits < 64 else (1 << 63) - 1
    if to <= from_:
        raise op_error(
            RuntimeError,
            "random_",
            f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}",
        )
    u = _uniform64(self, generator)
    return _fill_from(self, (u * (to - from_)).floor().long() + from_)
