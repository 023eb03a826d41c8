"""Random numbers: reproducibility, generators, distributions, and the Philox generator.

lazytorch's values are not torch's (a counter-based Philox generator, not torch's
Mersenne Twister), so values are tested by their properties. What torch does decide —
shapes, dtypes and which calls are errors — is compared through `check` (``x * 0`` keeps
a draw's dtype and shape while making its values comparable).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import ALL, DTYPE_PAIRS, FLOATS, INTS, check, check_raises
from lazytorch.ir import philox


def dt(lib, name):
    return DTYPE_PAIRS[name][0 if lib is lt else 1]


DRAWS = {
    "rand": lambda t, **kw: t.rand(3, 4, **kw),
    "randn": lambda t, **kw: t.randn(3, 4, **kw),
    "randint": lambda t, **kw: t.randint(0, 1000, (3, 4), **kw),
    "randperm": lambda t, **kw: t.randperm(12, **kw),
    "rand_like": lambda t, **kw: t.rand_like(t.ones(3, 4), **kw),
    "randn_like": lambda t, **kw: t.randn_like(t.ones(3, 4, dtype=t.float64), **kw),
    "randint_like": lambda t, **kw: t.randint_like(t.ones(3, 4), 1000, **kw),
    "uniform_": lambda t, **kw: t.zeros(3, 4).uniform_(-2, 3, **kw),
    "normal_": lambda t, **kw: t.zeros(3, 4).normal_(5, 2, **kw),
    # both of poisson's methods: rates below 10 (CDF inversion) and from 10 on (PTRS)
    "poisson": lambda t, **kw: t.poisson(t.tensor(POISSON_RATES).reshape(3, 4), **kw),
}
POISSON_RATES = [0.0, 0.5, 3.0, 9.99, 10.0, 20.0, 55.5, 1e4, 2.0, 0.1, 123.0, 7.0]


def values(x) -> np.ndarray:
    return x.numpy().copy()


# -- reproducibility --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(DRAWS))
def test_manual_seed_reproduces_values(name):
    draw = DRAWS[name]
    lt.manual_seed(123)
    a, b = values(draw(lt)), values(draw(lt))
    lt.manual_seed(123)
    a2, b2 = values(draw(lt)), values(draw(lt))
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    assert not np.array_equal(a, b)  # consecutive draws advance the generator
    lt.manual_seed(124)
    assert not np.array_equal(values(draw(lt)), a)  # another seed, other values


@pytest.mark.parametrize("name", list(DRAWS))
def test_lazy_and_sync_mode_draw_identical_values(name):
    draw = DRAWS[name]
    lt.manual_seed(7)
    with lt.sync_mode():
        sync = [values(draw(lt)) for _ in range(2)]
    lt.manual_seed(7)
    lazy = [draw(lt) for _ in range(2)]  # recorded first, computed together at the cut
    lt.materialize(*lazy)
    for s, z in zip(sync, lazy):
        np.testing.assert_array_equal(s, z.numpy())


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm", "uniform_", "normal_"])
def test_generator_objects(name):
    draw = DRAWS[name]
    g1 = lt.Generator().manual_seed(5)
    g2 = lt.Generator().manual_seed(5)
    lt.manual_seed(0)
    before = lt.default_generator.get_state().tolist()
    a, b = values(draw(lt, generator=g1)), values(draw(lt, generator=g2))
    np.testing.assert_array_equal(a, b)
    # A private generator leaves the default one untouched...
    assert lt.default_generator.get_state().tolist() == before
    # ...and its draws match the default generator given the same seed.
    lt.manual_seed(5)
    np.testing.assert_array_equal(values(draw(lt)), a)
    assert not np.array_equal(values(draw(lt, generator=g1)), a)


def test_generator_state_round_trip():
    g = lt.Generator().manual_seed(99)
    lt.rand(10, generator=g)
    state = g.get_state()
    a = values(lt.randn(5, generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(values(lt.randn(5, generator=g)), a)
    assert g.initial_seed() == 99
    assert lt.manual_seed(3) is lt.default_generator
    assert lt.initial_seed() == 3
    lt.set_rng_state(lt.get_rng_state())


def test_seed_arguments():
    # Like torch: negative seeds wrap to 64 bits; the module function takes anything int()
    # takes, Generator.manual_seed only ints.
    assert lt.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    assert lt.manual_seed(2**64 - 1).initial_seed() == 2**64 - 1
    assert lt.manual_seed(np.int64(3)).initial_seed() == 3
    assert lt.manual_seed(lt.tensor(4)).initial_seed() == 4
    for bad, exc in [(2**64, ValueError), (1.5, RuntimeError), (True, RuntimeError)]:
        with pytest.raises(exc):
            torch.Generator().manual_seed(bad)
        with pytest.raises(exc):
            lt.Generator().manual_seed(bad)
    s = lt.seed()
    assert lt.initial_seed() == s


def test_seed_changes_do_not_recompile():
    # The seed and offset are program inputs: a different seed reuses the compiled program.
    def run(seed):
        lt.manual_seed(seed)
        y = lt.rand(100) * 2 + lt.randn(100)
        lt.materialize(y)
        return values(y)

    a = run(1)
    assert lt.metrics.counters()["programs_built"] >= 1
    lt.metrics.reset()
    b = run(2)
    assert lt.metrics.counters().get("programs_built", 0) == 0
    assert not np.array_equal(a, b)
    lt.metrics.reset()
    np.testing.assert_array_equal(run(1), a)
    assert lt.metrics.counters().get("programs_built", 0) == 0


def test_programs_built_reads_zero_after_reset():
    # counters() promises that a counter nothing has incremented reads 0.
    lt.metrics.reset()
    assert lt.metrics.counters()["programs_built"] == 0


def test_draws_do_not_depend_on_shape_or_grouping():
    # Element i of a draw uses counter offset + i: one draw of 6 equals draws of 2 and 4,
    # whatever the shapes.
    lt.manual_seed(11)
    whole = values(lt.rand(6))
    lt.manual_seed(11)
    first, rest = values(lt.rand(1, 2)), values(lt.rand(2, 2))
    np.testing.assert_array_equal(np.concatenate([first.ravel(), rest.ravel()]), whole)


def test_unused_draws_still_advance_the_generator():
    # Recording a draw reserves its counters even if it is never computed, so later values
    # do not depend on which tensors a program happens to use.
    lt.manual_seed(3)
    lt.rand(5)
    a = values(lt.rand(4))
    lt.manual_seed(3)
    lt.materialize(lt.rand(5))
    np.testing.assert_array_equal(values(lt.rand(4)), a)


# -- shapes, dtypes and errors against torch ------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "fn",
    [
        lambda t, d: t.rand(2, 3, dtype=d),
        lambda t, d: t.randn((4,), dtype=d),
        lambda t, d: t.rand(size=(0, 2), dtype=d),
        lambda t, d: t.randn(t.Size([2, 1]), dtype=d),
        lambda t, d: t.rand_like(t.ones(2, dtype=d)),
        lambda t, d: t.randn_like(t.ones(2, 2, dtype=d)),
        lambda t, d: t.rand_like(t.ones(2, dtype=d), dtype=t.float64),
        lambda t, d: t.randint(0, 2, (3,), dtype=d),
        lambda t, d: t.randint(-3, 3, (3,), dtype=d),
        lambda t, d: t.randint(0, 300, (3,), dtype=d),
        lambda t, d: t.randint_like(t.ones(3, dtype=d), 2),
        lambda t, d: t.randperm(5, dtype=d),
        lambda t, d: t.randperm(300, dtype=d),
        lambda t, d: t.ones(3, dtype=d).uniform_(),
        lambda t, d: t.ones(3, dtype=d).normal_(),
    ],
)
def test_dtypes_shapes_and_errors_match_torch(fn, dtype):
    # rand/randn of an integer dtype, randint out of the dtype's range and randperm of bool
    # are errors in torch, and must be here (same exception type).
    check(lambda t: fn(t, dt(t, dtype)) * 0)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.rand(),
        lambda t: t.randn(2, -1),
        lambda t: t.rand(2.5),
        lambda t: t.randint(5),
        lambda t: t.randint(5, 5, (2,)),
        lambda t: t.randint(5, 2, (2,)),
        lambda t: t.randint(0.5, 4.5, (2,)),
        lambda t: t.randint(3, size=(2,)) * 0,
        lambda t: t.randint(low=1, high=3, size=(2,)) * 0,
        lambda t: t.randint(high=3, size=(2, 2)) * 0,
        lambda t: t.randperm(-1),
        lambda t: t.randperm(0),
        lambda t: t.rand(2, generator=t.Generator().manual_seed(1)) * 0,
        lambda t: t.rand(2, generator=3),
    ],
)
def test_argument_forms_and_errors(fn):
    check(fn)


# (poisson takes no device: its rates tensor has one)
@pytest.mark.parametrize("name", [n for n in DRAWS if not n.endswith("_") and n != "poisson"])
def test_cuda_device_is_refused(name):
    with pytest.raises(RuntimeError, match="cuda"):
        DRAWS[name](lt, device="cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        lt.Generator(device="cuda")


# -- distributions ---------------------------------------------------------------------------------
N = 100_000


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_is_uniform_in_0_1(dtype):
    lt.manual_seed(0)
    x = lt.rand(N, dtype=dt(lt, dtype))
    assert x.dtype is dt(lt, dtype)
    v = x.numpy().astype(np.float64)
    assert v.min() >= 0.0 and v.max() < 1.0  # never 1.0, even after rounding to float16
    # Mean 1/2 and variance 1/12, within 6 standard errors.
    assert abs(v.mean() - 0.5) < 6 * math.sqrt(1 / 12 / N)
    assert abs(v.var() - 1 / 12) < 6 * math.sqrt(1 / 180 / N)
    # Equal-width bins hold equal counts (chi-square, 99 degrees of freedom; p ~ 1e-6 bound).
    counts = np.histogram(v, bins=100, range=(0, 1))[0]
    chi2 = ((counts - N / 100) ** 2 / (N / 100)).sum()
    assert chi2 < 180, chi2


def test_rand_resolution():
    # float64 draws carry 53 random bits, float32 24 and float16 11: never a coarser grid.
    lt.manual_seed(1)
    for dtype, bits in [(lt.float64, 53), (lt.float32, 24), (lt.float16, 11)]:
        v = lt.rand(4096, dtype=dtype).numpy().astype(np.float64) * 2.0**bits
        np.testing.assert_array_equal(v, np.floor(v))  # on the 2**-bits grid
        assert len(np.unique(v)) > (4000 if bits > 20 else 1500)  # and using all of it
        odd = (v % 2 == 1).mean()
        assert 0.4 < odd < 0.6  # the lowest bit is random too


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_moments(dtype):
    lt.manual_seed(0)
    x = lt.randn(N, dtype=dt(lt, dtype))
    assert x.dtype is dt(lt, dtype)
    v = x.numpy().astype(np.float64)
    assert np.isfinite(v).all()
    assert abs(v.mean()) < 0.02
    assert abs(v.std() - 1) < 0.01
    assert abs(((v - v.mean()) ** 3).mean()) < 0.05  # skewness ~ 0
    assert abs(((v - v.mean()) ** 4).mean() / v.var() ** 2 - 3) < 0.1  # kurtosis ~ 3
    assert abs((np.abs(v) < 1).mean() - 0.6827) < 0.006
    assert abs((np.abs(v) < 2).mean() - 0.9545) < 0.004
    assert np.abs(v).max() > 3.5  # the tails are there


def test_uniform_and_normal_methods():
    lt.manual_seed(2)
    u = lt.empty(N).uniform_(-2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    z = lt.empty(N, dtype=lt.float64).normal_(5, 2).numpy()
    assert abs(z.mean() - 5) < 0.05 and abs(z.std() - 2) < 0.03


@pytest.mark.parametrize("dtype", (*INTS, "float32", "float64"))
def test_randint_range_and_dtype(dtype):
    lt.manual_seed(4)
    lo, hi = (-5, 7) if dtype != "uint8" else (3, 15)
    x = lt.randint(lo, hi, (20_000,), dtype=dt(lt, dtype))
    assert x.dtype is dt(lt, dtype)
    v = x.numpy()
    assert v.min() == lo and v.max() == hi - 1  # every value hit, `high` excluded
    counts = np.bincount((v - lo).astype(np.int64), minlength=hi - lo)
    expected = len(v) / (hi - lo)
    assert ((counts - expected) ** 2 / expected).sum() < 40  # 11 dof, p ~ 4e-5


def test_randint_forms():
    lt.manual_seed(5)
    assert lt.randint(3, (1000,)).numpy().max() == 2
    assert set(lt.randint(0, 2, (100,), dtype=lt.bool).tolist()) == {False, True}
    big = lt.randint(-(2**40), 2**40, (1000,)).numpy()
    assert big.min() < -(2**38) and big.max() > 2**38  # wide ranges are reachable
    x = lt.randint_like(lt.ones(2, 3, dtype=lt.int8), 5, 9)
    assert x.dtype is lt.int8 and tuple(x.shape) == (2, 3)
    assert set(x.numpy().ravel()) <= {5, 6, 7, 8}


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm_is_a_permutation(n):
    lt.manual_seed(n)
    p = lt.randperm(n)
    assert p.dtype is lt.int64 and tuple(p.shape) == (n,)
    np.testing.assert_array_equal(np.sort(p.numpy()), np.arange(n))
    if n >= 10:
        assert not np.array_equal(p.numpy(), np.arange(n))


def test_randperm_positions_are_uniform():
    # Over many permutations of 4, each value lands in each position 1/4 of the time.
    lt.manual_seed(0)
    perms = lt.stack([lt.randperm(4) for _ in range(2000)]).numpy()
    for pos in range(4):
        freq = np.bincount(perms[:, pos], minlength=4) / len(perms)
        assert np.abs(freq - 0.25).max() < 0.04, freq


def test_rand_like_keeps_shape_and_dtype():
    x = lt.ones(2, 0, 3, dtype=lt.float16)
    for fn in [lt.rand_like, lt.randn_like]:
        y = fn(x)
        assert tuple(y.shape) == (2, 0, 3) and y.dtype is lt.float16
        assert fn(x, dtype=lt.float64).dtype is lt.float64
    check_raises(lambda t: t.rand_like(t.ones(2, dtype=t.int64)))
    check_raises(lambda t: t.randn_like(t.ones(2, dtype=t.bool)))


# -- the Philox generator itself ----------------------------------------------------------------------
def _philox(counter, key):
    words = philox.rounds(
        tuple(np.array([c], dtype=np.uint64) for c in counter),
        tuple(np.array([k], dtype=np.uint64) for k in key),
    )
    return [int(w[0]) for w in words]


def test_philox_known_answers():
    # Known-answer vectors of Philox4x32-10 (Salmon et al., Random123's kat_vectors).
    assert _philox((0, 0, 0, 0), (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    m = 0xFFFFFFFF
    assert _philox((m, m, m, m), (m, m)) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    pi_ctr = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)
    pi_key = (0xA4093822, 0x299F31D0)
    assert _philox(pi_ctr, pi_key) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_philox_bits_are_balanced_and_independent():
    n = 1 << 16
    words = np.stack(philox.philox4x32(np.arange(n, dtype=np.uint64), seed=2024))
    assert words.dtype == np.uint64 and int(words.max()) < 1 << 32
    bits = ((words[..., None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(np.float64)
    # Every bit position of every output word is set half the time (6 standard errors).
    tol = 6 * math.sqrt(0.25 / n)
    assert np.abs(bits.mean(axis=1) - 0.5).max() < tol
    # Neighbouring counters are uncorrelated, bit by bit and as numbers.
    flat = bits.reshape(-1, 32)
    agree = (flat[:-1] == flat[1:]).mean(axis=0)
    assert np.abs(agree - 0.5).max() < tol
    w0 = words[0].astype(np.float64)
    assert abs(np.corrcoef(w0[:-1], w0[1:])[0, 1]) < 0.02
    # Bytes are uniform (chi-square with 255 degrees of freedom; p ~ 1e-6 bound).
    byte_counts = np.bincount((words.ravel() & np.uint64(0xFF)).astype(np.int64), minlength=256)
    expected = byte_counts.sum() / 256
    assert ((byte_counts - expected) ** 2 / expected).sum() < 380


def test_philox_depends_on_every_input_bit():
    # Avalanche: flipping one bit of the seed or the counter flips about half the output bits.
    base = np.array(philox.philox4x32(np.array([12345], dtype=np.uint64), seed=777))
    flips = []
    for bit in range(64):
        c = np.array([12345 ^ (1 << bit)], dtype=np.uint64)
        flips.append(np.array(philox.philox4x32(c, seed=777)))
        flips.append(
            np.array(philox.philox4x32(np.array([12345], dtype=np.uint64), seed=777 ^ (1 << bit)))
        )
    changed = [
        bin(int(a) ^ int(b)).count("1") for f in flips for a, b in zip(f.ravel(), base.ravel())
    ]
    assert 14 < np.mean(changed) < 18  # 16 of 32 bits on average
    assert min(changed) > 3


@pytest.mark.parametrize(
    "numel, seed, offset",
    [(0, 1, 0), (1, 0, 0), (37, 2024, 5), (1000, 2**64 - 1, 2**32 - 3), (9, 777, 2**64 - 4)],
)
def test_native_words_are_the_references(numel, seed, offset):
    # The interpreter draws through native/philox.cpp; the NumPy rounds are the reference
    # (known answers above): every word equal, across a 32-bit carry and the 64-bit wrap.
    native = philox._native_words()
    assert native is not None, "lazytorch._C has no philox_words: rebuild (pip install -e .)"
    got = native(numel, seed, offset)
    assert got.dtype == np.uint32 and got.shape == (2, numel)
    with np.errstate(over="ignore"):
        r0, r1, _, _ = philox.philox4x32(philox._counters(numel, offset), seed)
    np.testing.assert_array_equal(got[0], r0)
    np.testing.assert_array_equal(got[1], r1)
    assert [w.dtype for w in philox.words(numel, seed, offset)] == [np.uint64, np.uint64]


def test_uniform_and_normal_are_functions_of_seed_and_counter():
    u = philox.uniform(10, seed=5, offset=100, dtype=np.float32)
    np.testing.assert_array_equal(u[3:], philox.uniform(7, seed=5, offset=103, dtype=np.float32))
    z = philox.normal(10, seed=5, offset=100, dtype=np.float64)
    assert z.dtype == np.float64 and np.isfinite(z).all()
    assert not np.array_equal(u, philox.uniform(10, seed=6, offset=100, dtype=np.float32))


def test_random_factories_write_into_out():
    # ``torch.rand(2, 2, out=c)`` (the introyt tensors tutorial): out= takes the draw (and
    # gives its dtype, or is resized), and is returned; values differ between the libraries'
    # generators, so compare what torch fixes: identity, shape, dtype, range
    def run(lib):
        got = []
        for make, dtype, shape in (
            (lambda c: lib.rand(2, 3, out=c), lib.float64, (2, 3)),
            (lambda c: lib.rand((2, 2), out=c), lib.float32, (5,)),  # resized
            (lambda c: lib.randn(4, out=c), lib.float32, (4,)),
            (lambda c: lib.randint(3, 7, (2, 2), out=c), lib.int32, (2, 2)),
            (lambda c: lib.randperm(5, out=c), lib.int64, (5,)),
        ):
            c = lib.zeros(shape, dtype=dtype)
            r = make(c)
            got.append((r is c, tuple(c.shape), str(c.dtype).split(".")[-1]))
        c = lib.zeros(2, 3, dtype=lib.int32)
        got.append(int(lib.randint(3, 7, (2, 3), out=c).min()) >= 3)
        return got

    assert run(lt) == run(torch)
    x = np.zeros((2, 2), dtype="float64")
    check_raises(lambda t, c: t.rand(2, 2, out=c, dtype=t.float32), x)
    check_raises(lambda t, c: t.rand(2, 2, out=c.long()), x)


# -- poisson ------------------------------------------------------------------------------------
def _poisson_pmf(lam: float, k: np.ndarray) -> np.ndarray:
    return np.exp(k * math.log(lam) - lam - np.array([math.lgamma(v + 1) for v in k]))


@pytest.mark.parametrize("lam", [0.3, 4.0, 9.99, 10.0, 37.0, 1000.0, 2.5e5])
def test_poisson_counts_follow_the_distribution(lam):
    """200,000 draws per rate, on both sides of the method switch at 10: every count with
    at least 50 expected draws within 5 standard deviations of its expected frequency (a
    sampler with a wrong tail, skew or offset fails), and the mean within 5 of its."""
    n = 200_000
    s = lt.poisson(lt.full((n,), lam), lt.Generator().manual_seed(11)).numpy()
    assert s.dtype == np.float32 and (s == np.floor(s)).all() and (s >= 0).all()
    assert abs(s.mean() - lam) <= 5 * math.sqrt(lam / n)
    k = np.arange(int(lam + 12 * math.sqrt(lam) + 16))
    expected = n * _poisson_pmf(lam, k)
    seen = np.bincount(s.astype(np.int64), minlength=len(k))[: len(k)]
    bins = expected >= 50
    assert bins.sum() >= 3
    z = (seen[bins] - expected[bins]) / np.sqrt(expected[bins])
    assert np.abs(z).max() < 5, (lam, k[bins][np.argmax(np.abs(z))], np.abs(z).max())


def test_poisson_is_the_same_on_every_backend_and_in_sync_mode():
    rates = np.array(POISSON_RATES * 50, dtype=np.float64)
    got = []
    for mode in ("interpreter", "cpp", "sync"):
        g = lt.Generator().manual_seed(3)
        if mode == "sync":
            with lt.sync_mode():
                got.append(lt.poisson(lt.tensor(rates), g).numpy())
        else:
            with lt.backend(mode):
                got.append(lt.poisson(lt.tensor(rates), g).numpy())
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[0], got[2])
    assert (got[0][rates == 0] == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_poisson_dtypes_shapes_and_zero_gradient_match_torch(dtype):
    for shape in [(), (0,), (2, 3)]:
        ours = lt.poisson(lt.full(shape, 4.0, dtype=getattr(lt, dtype)))
        theirs = torch.poisson(torch.full(shape, 4.0, dtype=getattr(torch, dtype)))
        assert ours.dtype == dt(lt, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    x = lt.tensor([2.0, 30.0], requires_grad=True)
    y = lt.poisson(x)
    assert y.requires_grad  # as torch's: a zero gradient flows back
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize(
    "rates, match",
    [
        ([1.0, -1.0], "expected rate to be non-negative"),
        ([float("nan")], "expected rate to be non-negative"),
    ],
)
def test_poisson_bad_rates_raise_as_torch(rates, match):
    check_raises(lambda t, x: t.poisson(x), np.array(rates, dtype=np.float32), match=match)


def test_poisson_refuses_what_torch_cannot_compute():
    check_raises(lambda t, x: t.poisson(x), np.array([1, 2]), match="not implemented for 'Long'")
    # torch returns -9.2e18 for an infinite rate; lazytorch raises
    with pytest.raises(RuntimeError, match="expected rate to be finite"):
        lt.poisson(lt.tensor([1.0, float("inf")]))
