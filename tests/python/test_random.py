"""Random sampling against PyTorch, bit for bit: the same seed must give the
same tensor (torch.equal) and leave the generator at the same point of its
stream, for every distribution, dtype, size and memory layout."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings

import pytest
from conftest import to_torch, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

SEEDS = [0, 1, 42, 2**40 + 5, -3, 2**64 - 1]
SIZES = [0, 1, 7, 15, 16, 17, 100, 1000, 4097]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
ALL = [
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


def exact(e, t):
    """Same dtype, shape and bits."""
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e)
    if not torch.equal(got, t):
        bad = (got != t).nonzero()[:5].tolist()
        raise AssertionError(
            f"{int((got != t).sum())} of {t.numel()} elements differ, first at {bad}"
        )


def same_stream(fn, seeds=SEEDS):
    """fn(module) under each seed in both libraries: equal results, and equal
    next draws (the same amount of the stream was consumed)."""
    for s in seeds:
        ember.manual_seed(s)
        torch.manual_seed(s)
        t = fn(torch)
        e = fn(ember)
        exact(e, t)
        exact(ember.rand(2, dtype=ember.float64), torch.rand(2, dtype=torch.float64))


def stream_or_error(fn, seeds=SEEDS):
    """same_stream, or the same exception when PyTorch refuses the call."""
    try:
        fn(torch)
    except Exception:  # noqa: BLE001
        same_error(fn)
        return
    same_stream(fn, seeds)


def same_error(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)


def dt(m, name):
    return getattr(m, name)


# ---- the known values of the reference ---------------------------------------------


def test_known_values():
    ember.manual_seed(0)
    assert ember.rand(5).tolist() == pytest.approx(
        [0.4963, 0.7682, 0.0885, 0.1320, 0.3074], abs=1e-4
    )
    ember.manual_seed(0)
    assert ember.randn(5).tolist() == pytest.approx(
        [1.5410, -0.2934, -2.1788, 0.5684, -1.0845], abs=1e-4
    )


# ---- continuous distributions, every size and float dtype -------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_rand_randn(dtype, n):
    same_stream(lambda m: m.rand(n, dtype=dt(m, dtype)))
    same_stream(lambda m: m.randn(n, dtype=dt(m, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_inplace_samplers(dtype, n):
    same_stream(lambda m: m.empty(n, dtype=dt(m, dtype)).uniform_(-1.2345, 3.3), seeds=SEEDS[:3])
    same_stream(lambda m: m.empty(n, dtype=dt(m, dtype)).normal_(0.3, 2.7), seeds=SEEDS[:3])
    same_stream(lambda m: m.empty(n, dtype=dt(m, dtype)).exponential_(3.7), seeds=SEEDS[:3])
    same_stream(lambda m: m.empty(n, dtype=dt(m, dtype)).bernoulli_(0.37), seeds=SEEDS[:3])
    same_stream(lambda m: m.empty(n, dtype=dt(m, dtype)).random_(), seeds=SEEDS[:3])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "bounds",
    [(0, 1), (-0.0883883476483184, 0.0883883476483184), (2.5, 7.1), (-100.3, 1e4), (1e6, 1e6 + 1)],
)
def test_uniform_bounds(dtype, bounds):
    # Includes ranges where the rounded result reaches `to` (then PyTorch returns `from`).
    stream_or_error(lambda m: m.empty(3000, dtype=dt(m, dtype)).uniform_(*bounds), seeds=[5, 7])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mean_std", [(0, 1), (0.5, 2.0), (-1.1, 0.37), (3.0, 0.0)])
def test_normal_fill_and_pair_paths(dtype, mean_std):
    # n >= 16 contiguous takes the block fill; non-contiguous and small the pair path.
    same_stream(lambda m: m.empty(100003, dtype=dt(m, dtype)).normal_(*mean_std), seeds=[9])
    same_stream(lambda m: m.empty(500, 2, dtype=dt(m, dtype)).T.normal_(*mean_std), seeds=[9])
    same_stream(lambda m: m.empty(15, dtype=dt(m, dtype)).normal_(*mean_std), seeds=[9])


@pytest.mark.parametrize("dtype", FLOATS)
def test_noncontiguous_outputs(dtype):
    # Draws follow memory order (PyTorch's TensorIterator sorts dims by stride).
    layouts = [
        lambda m: m.empty(30, 20, dtype=dt(m, dtype)).T,
        lambda m: m.zeros(30, 20, dtype=dt(m, dtype)).as_strided((30, 7), (20, 3)),
        lambda m: m.empty(2, 3, 40, dtype=dt(m, dtype)).permute(1, 2, 0),
        lambda m: (
            m.empty(4, 6, 5, dtype=dt(m, dtype)).permute(2, 0, 1).as_strided((5, 2, 6), (1, 60, 5))
        ),
        lambda m: m.empty_strided((3, 40), (1, 5), dtype=dt(m, dtype)),
    ]
    for mk in layouts:
        same_stream(lambda m, mk=mk: mk(m).uniform_(-2, 3), seeds=[0, 42])
        same_stream(lambda m, mk=mk: mk(m).normal_(1, 2), seeds=[0, 42])
        same_stream(lambda m, mk=mk: mk(m).exponential_(), seeds=[0])
        same_stream(lambda m, mk=mk: mk(m).bernoulli_(0.5), seeds=[0])
        same_stream(lambda m, mk=mk: mk(m).random_(0, 100), seeds=[0])


@st.composite
def strided(draw):
    """A shape and a permutation/step layout over a larger buffer."""
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 6)) for _ in range(nd)]
    perm = draw(st.permutations(list(range(nd))))
    step = draw(st.integers(1, 3))
    return shape, perm, step


@settings(max_examples=40, deadline=None)
@given(
    strided(),
    st.sampled_from(["uniform", "normal", "exponential", "bernoulli", "random"]),
    st.sampled_from(FLOATS),
)
def test_layouts_hypothesis(layout, dist, dtype):
    shape, perm, step = layout

    def make(m):
        base = m.empty(
            *[s * step if i == len(shape) - 1 else s for i, s in enumerate(shape)],
            dtype=dt(m, dtype),
        )
        strides = list(base.stride())
        strides[-1] *= step
        view = base.as_strided(shape, strides)
        return view.permute(*perm)

    ops = {
        "uniform": lambda t: t.uniform_(-1, 1),
        "normal": lambda t: t.normal_(0.5, 1.5),
        "exponential": lambda t: t.exponential_(2.0),
        "bernoulli": lambda t: t.bernoulli_(0.3),
        "random": lambda t: t.random_(-7, 9),
    }
    same_stream(lambda m: ops[dist](make(m)), seeds=[3])


# ---- integers ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
def test_random_overloads(dtype):
    warnings.simplefilter("ignore")
    same_stream(lambda m: m.empty(100, dtype=dt(m, dtype)).random_(), seeds=SEEDS[:3])
    for args in [
        (2,),
        (0, 1),
        (-3, 5),
        (5, None),
        (0, 2**28 - 1),
        (0, 2**28),
        (-5, 2**29),
        (0, 2**33),
        (3, 2**60),
        (-(2**62), 2**62),
        (-(2**63), None),
        (0, 300),
        (-200, 100),
    ]:
        try:
            torch.empty(1, dtype=dt(torch, dtype)).random_(*args)
        except Exception:  # noqa: BLE001
            same_error(lambda m, a=args: m.empty(50, dtype=dt(m, dtype)).random_(*a))
            continue
        same_stream(lambda m, a=args: m.empty(50, dtype=dt(m, dtype)).random_(*a), seeds=SEEDS[:3])


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [0, 1, 17, 1000])
def test_randint(dtype, n):
    hi = 2 if dtype == "bool" else 100
    lo = 0 if dtype in ("bool", "uint8") else -5
    same_stream(lambda m: m.randint(hi, (n,), dtype=dt(m, dtype)), seeds=SEEDS[:3])
    same_stream(lambda m: m.randint(lo, hi, (n, 2), dtype=dt(m, dtype)), seeds=SEEDS[:3])


def test_randint_forms():
    same_stream(lambda m: m.randint(10, (3, 4)))
    same_stream(lambda m: m.randint(3, 10, (5,)))
    same_stream(lambda m: m.randint(low=3, high=10, size=(5,)))
    same_stream(lambda m: m.randint(high=10, size=[2, 2]))
    same_stream(lambda m: m.randint(-(2**40), 2**40, (7,)))
    same_stream(lambda m: m.randint(0, 5, (6,), out=m.empty(2, dtype=m.int64)))
    same_stream(lambda m: m.randint_like(m.zeros(3, 4), 10))
    same_stream(lambda m: m.randint_like(m.zeros(3, 4, dtype=m.int32), -5, 10))
    same_stream(lambda m: m.randint_like(m.zeros(30, 4, dtype=m.int16).T, 7))


@pytest.mark.parametrize(
    "dtype", ["int64", "int32", "int16", "uint8", "float32", "float64", "float16", "bfloat16"]
)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 100, 255, 2049])
def test_randperm(dtype, n):
    try:
        torch.randperm(n, dtype=dt(torch, dtype))
    except Exception:  # noqa: BLE001
        same_error(lambda m: m.randperm(n, dtype=dt(m, dtype)))
        return
    same_stream(lambda m: m.randperm(n, dtype=dt(m, dtype)), seeds=SEEDS[:3])


def test_randperm_out_and_errors():
    same_stream(lambda m: m.randperm(6, out=m.empty(12, dtype=m.int64).as_strided((6,), (2,))))
    same_stream(lambda m: m.randperm(50000))
    same_error(lambda m: m.randperm(-1))
    same_error(lambda m: m.randperm(3, dtype=m.bool))
    same_error(lambda m: m.randperm(3000, dtype=m.float16))
    same_error(lambda m: m.randperm(300, dtype=m.uint8))
    same_error(lambda m: m.randperm(2**24 + 2, dtype=m.float32))


# ---- bernoulli -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
def test_bernoulli_tensor_p(dtype):
    same_stream(
        lambda m: m.empty(3, 40, dtype=dt(m, dtype)).bernoulli_(m.rand(40)), seeds=SEEDS[:3]
    )
    same_stream(
        lambda m: m.empty(99, dtype=dt(m, dtype)).bernoulli_(m.rand(99, dtype=m.float64)),
        seeds=SEEDS[:3],
    )
    same_stream(
        lambda m: m.empty(99, dtype=dt(m, dtype)).bernoulli_(m.rand(99, dtype=m.float16)),
        seeds=SEEDS[:1],
    )
    same_stream(
        lambda m: m.empty(5, 8, dtype=dt(m, dtype)).T.bernoulli_(m.rand(8, 5)), seeds=SEEDS[:1]
    )
    same_stream(lambda m: m.empty(33, dtype=dt(m, dtype)).bernoulli_(0.7), seeds=SEEDS[:3])


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_functional(dtype):
    same_stream(lambda m: m.bernoulli(m.rand(5, 40, dtype=dt(m, dtype))))
    same_stream(lambda m: m.bernoulli(m.rand(5, 40, dtype=dt(m, dtype)), 0.25))
    same_stream(lambda m: m.rand(7, dtype=dt(m, dtype)).bernoulli())
    same_stream(
        lambda m: m.bernoulli(m.rand(3, dtype=dt(m, dtype)), out=m.empty(7, dtype=dt(m, dtype)))
    )


def test_bernoulli_errors():
    same_error(lambda m: m.zeros(3).bernoulli_(1.5))
    same_error(lambda m: m.zeros(3).bernoulli_(-0.5))
    same_error(lambda m: m.zeros(3).bernoulli_(float("nan")))
    same_error(lambda m: m.zeros(3).bernoulli_(m.ones(3, dtype=m.int64)))
    same_error(lambda m: m.bernoulli(m.ones(3, dtype=m.int64)))
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        ember.bernoulli(ember.full((3,), 2.0))
    with pytest.raises(RuntimeError):
        ember.zeros(3).bernoulli_(ember.full((2, 3), 0.5))


# ---- multinomial ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_multinomial(dtype, replacement, k):
    same_stream(
        lambda m: m.multinomial(m.rand(4, 10, dtype=dt(m, dtype)), k, replacement), seeds=SEEDS[:3]
    )
    same_stream(
        lambda m: m.multinomial(m.rand(10, dtype=dt(m, dtype)), k, replacement), seeds=SEEDS[:2]
    )


def test_multinomial_more():
    same_stream(lambda m: m.multinomial(m.rand(1000), 300, True))
    same_stream(lambda m: m.multinomial(m.rand(1000), 10))
    same_stream(lambda m: m.multinomial(m.rand(10, 6).T, 3))
    same_stream(lambda m: m.multinomial(m.rand(10, 6).T, 3, True))
    # Ties among zero probabilities come out in PyTorch's topk order.
    same_stream(lambda m: m.multinomial(m.tensor([0.5, 0, 0, 0.5]), 3))
    same_stream(lambda m: m.multinomial(m.tensor([0.5, 0, 0, 0, 0, 0, 0.2, 0, 0.5]), 6))
    same_stream(lambda m: m.multinomial(m.cat([m.rand(10), m.zeros(700)]), 11))
    same_stream(lambda m: m.rand(3, 6).multinomial(2, generator=m.Generator().manual_seed(4)))
    same_stream(lambda m: m.multinomial(m.rand(3, 6), 2, out=m.empty(1, dtype=m.int64)))
    same_stream(lambda m: m.multinomial(m.ones(0, 3), 2))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.multinomial(m.tensor([0.5, -0.1]), 1),
        lambda m: m.multinomial(m.tensor([0.5, 0.5]), 0),
        lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
        lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
        lambda m: m.multinomial(m.tensor([0.0, 0.0]), 2, True),
        lambda m: m.multinomial(m.tensor([float("inf"), 1.0]), 1),
        lambda m: m.multinomial(m.tensor([float("inf"), 1.0]), 2, True),
        lambda m: m.multinomial(m.tensor([float("nan"), 1.0]), 2, True),
        lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 2, True),
        lambda m: m.multinomial(m.ones(2, 2, 2), 1),
        lambda m: m.multinomial(m.tensor(1.0), 1),
        lambda m: m.multinomial(m.ones(3, dtype=m.int64), 1),
        lambda m: m.multinomial(m.ones(0), 1),
    ],
)
def test_multinomial_errors(call):
    same_error(call)


# ---- normal overloads -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_overloads(dtype):
    d = lambda m: dt(m, dtype)
    same_stream(lambda m: m.normal(m.rand(5, 1, dtype=d(m)), m.rand(7, dtype=d(m))))
    same_stream(lambda m: m.normal(m.rand(5, 4, dtype=d(m)), 0.3))
    same_stream(lambda m: m.normal(m.rand(5, 4, dtype=d(m))))
    same_stream(lambda m: m.normal(0.7, m.rand(5, 4, dtype=d(m))))
    same_stream(lambda m: m.normal(0.7, 3.0, (5, 4), dtype=d(m)))
    same_stream(lambda m: m.normal(0.7, 3.0, size=(40,), dtype=d(m)))
    same_stream(lambda m: m.normal(m.zeros(3, dtype=d(m)), 1.0, out=m.empty(3, dtype=d(m))))
    same_stream(lambda m: m.normal(m.zeros(20, dtype=d(m)), m.ones(20, dtype=m.float64)))


def test_normal_errors():
    same_error(lambda m: m.normal(m.zeros(3), m.tensor([1.0, -1.0, 1.0])))
    same_error(lambda m: m.normal(m.zeros(3), -1.0))
    same_error(lambda m: m.normal(0.0, -1.0, (3,)))
    same_error(lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0))
    same_error(lambda m: m.normal(m.zeros(2), m.ones(3)))
    same_error(lambda m: m.zeros(3).normal_(0, -1))
    same_error(lambda m: m.zeros(3, dtype=m.int64).normal_())


# ---- checks of the in-place samplers ------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.zeros(3, dtype=m.int64).uniform_(),
        lambda m: m.zeros(3).uniform_(2, 1),
        lambda m: m.zeros(3).uniform_(0, float("inf")),
        lambda m: m.zeros(3).uniform_(-3e38, 3e38),
        lambda m: m.zeros(3, dtype=m.float16).uniform_(0, 1e5),
        lambda m: m.zeros(3, dtype=m.float16).uniform_(-6e4, 6e4),
        lambda m: m.zeros(3).uniform_(float("nan"), 1),
        lambda m: m.zeros(3).exponential_(0),
        lambda m: m.zeros(3).exponential_(-1),
        lambda m: m.zeros(3, dtype=m.int64).exponential_(),
        lambda m: m.zeros(3, dtype=m.int64).random_(5, 5),
        lambda m: m.zeros(3, dtype=m.int64).random_(0),
        lambda m: m.zeros(3, dtype=m.int8).random_(0, 1000),
        lambda m: m.zeros(3, dtype=m.uint8).random_(-1, 10),
        lambda m: m.zeros(3, dtype=m.bool).random_(0, 3),
        lambda m: m.zeros(3, dtype=m.float16).random_(0, 70000),
        lambda m: m.zeros(3, dtype=m.bool).random_(-(2**63), None),
        lambda m: m.zeros(3, dtype=m.int32).random_(-(2**63), None),
        lambda m: m.randint(5, 3, (3,)),
        lambda m: m.randint(0, (3,)),
        lambda m: m.rand(3, dtype=m.int64),
        lambda m: m.randn(3, dtype=m.int64),
        lambda m: m.rand(-1),
        lambda m: m.rand(3, out=m.empty(3), dtype=m.float64),
    ],
)
def test_sampler_errors(call):
    same_error(call)


def test_exponential_infinite_lambda():
    same_stream(lambda m: m.zeros(4).exponential_(float("inf")))
    same_stream(lambda m: m.zeros(4).normal_(float("inf"), 1))


# ---- generators, interleaving, state --------------------------------------------------------------


def test_interleaved_and_cached_normal():
    # The pair generator's second value survives across calls and other ops.
    def mix(m):
        return m.cat(
            [
                m.randn(1),
                m.rand(2),
                m.randn(1),
                m.randn(16),
                m.randn(3),
                m.randint(0, 9, (4,)).to(m.float32),
                m.normal(2.0, 3.0, (1,)),
                m.empty(3, dtype=m.float64).normal_().to(m.float32),
                m.randperm(5).to(m.float32),
                m.randn(17),
            ]
        )

    same_stream(mix)


def test_explicit_generators():
    def run(m):
        g1 = m.Generator().manual_seed(3)
        g2 = m.Generator()
        g2.manual_seed(3)
        a = m.randn(1, generator=g1)
        b = m.rand(5)  # the default generator is independent
        c = m.randn(1, generator=g1)  # g1's cached sample
        d = m.randn(3, generator=g2)
        e = m.empty(20).uniform_(generator=g2)
        f = m.randint(0, 100, (5,), generator=g1).to(m.float32)
        g = m.randperm(6, generator=g2).to(m.float32)
        h = m.bernoulli(m.rand(4), generator=g1)
        i = m.empty(4).exponential_(generator=g1)
        j = m.empty(4).random_(0, 7, generator=g2)
        k = m.rand_like(m.zeros(3), generator=g2)
        return m.cat([a, b, c, d, e, f, g, h, i, j, k])

    same_stream(run)


def test_generator_object():
    g = ember.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert str(g.device) == "cpu"
    assert ember.Generator("cpu").device.type == "cpu"
    assert g.manual_seed(7) is g
    assert g.initial_seed() == 7
    assert isinstance(ember.default_generator, ember.Generator)
    assert ember.manual_seed(1) is ember.default_generator
    s = ember.seed()
    assert isinstance(s, int) and ember.initial_seed() == s


def test_default_generator_starts_from_a_nondeterministic_seed():
    """PyTorch seeds its default CPU generator nondeterministically at start
    (a new Generator starts from 67280421310721): unseeded runs differ."""
    import subprocess
    import sys

    def first_seed(lib):
        code = f"import {lib}; print({lib}.initial_seed(), {lib}.Generator().initial_seed())"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        return [int(v) for v in out.split()]

    for lib in ("torch", "ember"):
        (a, fresh_a), (b, fresh_b) = first_seed(lib), first_seed(lib)
        assert fresh_a == fresh_b == 67280421310721
        assert a != b and 67280421310721 not in (a, b), lib


@pytest.mark.parametrize("seed", [0, -1, 2**64 - 1, -(2**63), 2**40 + 5, 1.5, "3", True])
def test_manual_seed_values(seed):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    assert ember.initial_seed() == torch.initial_seed()
    exact(ember.rand(3), torch.rand(3))


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_manual_seed_overflow(seed):
    same_error(lambda m: m.manual_seed(seed))
    same_error(lambda m: m.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", [1.5, "3", True])
def test_generator_manual_seed_types(seed):
    same_error(lambda m: m.Generator().manual_seed(seed))


def test_rng_state_bytes_and_round_trip():
    for s in [0, 5, 2**40 + 5]:
        torch.manual_seed(s)
        ember.manual_seed(s)
        torch.randn(3)  # leaves a cached normal sample
        ember.randn(3)
        ts, es = torch.get_rng_state(), ember.get_rng_state()
        exact(es, ts)
        a = ember.randn(5)
        ember.set_rng_state(es)
        exact(ember.randn(5), to_torch(a))
    # A state taken from PyTorch continues PyTorch's stream in Ember.
    torch.manual_seed(11)
    torch.rand(700)
    ember.set_rng_state(ember.tensor(torch.get_rng_state().tolist(), dtype=ember.uint8))
    exact(ember.randn(3), torch.randn(3))
    g = ember.Generator().manual_seed(4)
    st_ = g.get_state()
    x = ember.rand(4, generator=g)
    assert g.set_state(st_) is g
    exact(ember.rand(4, generator=g), to_torch(x))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.set_rng_state(m.zeros(10, dtype=m.uint8)),
        lambda m: m.set_rng_state(m.zeros(5056)),
        lambda m: m.set_rng_state(m.zeros(5056, dtype=m.uint8)),
        lambda m: m.set_rng_state([1, 2]),
        lambda m: m.Generator().set_state(m.zeros(5056)),
        lambda m: m.set_rng_state(m.get_rng_state().narrow(0, 0, 5048)),
    ],
)
def test_rng_state_errors(call):
    state = torch.get_rng_state()
    try:
        same_error(call)
    finally:
        torch.set_rng_state(state)


def test_fork_rng():
    ember.manual_seed(3)
    with ember.random.fork_rng():
        ember.rand(10)
    torch.manual_seed(3)
    exact(ember.rand(2), torch.rand(2))


# ---- *_like samplers ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_like_samplers(dtype):
    same_stream(lambda m: m.rand_like(m.zeros(3, 4, dtype=dt(m, dtype))))
    same_stream(lambda m: m.randn_like(m.zeros(40, dtype=dt(m, dtype))))
    # A permuted input keeps its strides, so the draws land in the same memory order.
    same_stream(lambda m: m.rand_like(m.zeros(30, 20, dtype=dt(m, dtype)).T))
    same_stream(lambda m: m.randn_like(m.zeros(2, 30, 4, dtype=dt(m, dtype)).permute(2, 0, 1)))
    same_stream(lambda m: m.rand_like(m.zeros(3, 4), dtype=dt(m, dtype)))
    e = ember.randn_like(ember.zeros(2, 3), requires_grad=True)
    assert e.requires_grad and e.is_leaf


# ---- autograd --------------------------------------------------------------------------------------


INPLACE = {
    "uniform_": lambda t: t.uniform_(),
    "normal_": lambda t: t.normal_(),
    "random_from": lambda t: t.random_(0, 5),
    "random_to": lambda t: t.random_(5),
    "random": lambda t: t.random_(),
    "exponential_": lambda t: t.exponential_(),
    "bernoulli_float": lambda t: t.bernoulli_(0.5),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_sampler_autograd(name):
    for m in (torch, ember):
        x = m.zeros(3, requires_grad=True)
        y = x * 2
        r = INPLACE[name](y)
        assert r.requires_grad
        if m is torch:
            want = type(r.grad_fn).__name__
        else:
            assert type(r.grad_fn).__name__ == want
        r.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            INPLACE[name](x)


def test_normal_and_bernoulli_autograd():
    for m in (torch, ember):
        mean = m.zeros(3, requires_grad=True)
        std = m.ones(3, requires_grad=True)
        names = [
            type(r.grad_fn).__name__
            for r in (m.normal(mean, 1.0), m.normal(0.0, std), m.normal(mean, std))
        ]
        assert names == ["NormalBackward1", "NormalBackward2", "NormalBackward3"]
        r = m.normal(mean, std)
        r.sum().backward()
        assert mean.grad.tolist() == [0, 0, 0] and std.grad.tolist() == [0, 0, 0]
        p = m.full((3,), 0.5, requires_grad=True)
        assert type(m.bernoulli(p).grad_fn).__name__ == "BernoulliBackward0"
        y = p * 1
        assert type(y.bernoulli_(m.full((3,), 0.5)).grad_fn).__name__ == "BernoulliBackward1"
        assert m.multinomial(p, 2).grad_fn is None
        assert m.normal(0.0, 1.0, (3,), requires_grad=True).is_leaf


# ---- nn.Linear initialisation -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, 1234])
@pytest.mark.parametrize("shape", [(1, 3), (10, 20), (64, 128), (7, 300)])
def test_linear_init_bit_exact(seed, shape):
    out_f, in_f = shape
    # kaiming_uniform_(a=sqrt(5)): gain = sqrt(2 / (1 + a^2)), bound = sqrt(3) * gain / sqrt(fan_in)
    gain = math.sqrt(2.0 / (1 + 5.0))
    bound = math.sqrt(3.0) * gain / math.sqrt(in_f)
    bias_bound = 1 / math.sqrt(in_f)

    def init(m):
        w = m.empty(out_f, in_f).uniform_(-bound, bound)
        b = m.empty(out_f).uniform_(-bias_bound, bias_bound)
        return m.cat([w.reshape(-1), b])

    same_stream(init, seeds=[seed])
    if hasattr(ember, "nn") and hasattr(ember.nn, "init"):
        torch.manual_seed(seed)
        ember.manual_seed(seed)
        tw = torch.nn.init.kaiming_uniform_(torch.empty(out_f, in_f), a=math.sqrt(5))
        ew = ember.nn.init.kaiming_uniform_(ember.empty(out_f, in_f), a=math.sqrt(5))
        exact(ew, tw)


# ---- the result does not depend on the CPU capability -------------------------------------------------


def test_cpu_capabilities_agree():
    script = (
        "import ember\n"
        "ember.manual_seed(7)\n"
        "parts = [ember.empty(4099, dtype=d).normal_(0.25, 1.75)\n"
        "         for d in (ember.float32, ember.float16, ember.bfloat16)]\n"
        "parts += [ember.empty(999).uniform_(-2, 3), ember.empty(333, dtype=ember.float64).normal_()]\n"
        "parts += [ember.arange(0.1, 7000.3, 1.1), ember.arange(0, 3000 * 0.3, 0.3, dtype=ember.float64),\n"
        "          ember.linspace(-3.3, 77.7, 7001), ember.arange(0.5, 900.5, 0.75, dtype=ember.float16)]\n"
        "print([x for p in parts for x in p.to(ember.float64).tolist()])\n"
    )
    outs = set()
    for cap in ("default", "avx2", "avx512"):
        env = dict(os.environ, EMBER_CPU_CAPABILITY=cap)
        r = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1
    torch.manual_seed(7)
    parts = [
        torch.empty(4099, dtype=d).normal_(0.25, 1.75)
        for d in (torch.float32, torch.float16, torch.bfloat16)
    ]
    parts += [torch.empty(999).uniform_(-2, 3), torch.empty(333, dtype=torch.float64).normal_()]
    parts += [
        torch.arange(0.1, 7000.3, 1.1),
        torch.arange(0, 3000 * 0.3, 0.3, dtype=torch.float64),
        torch.linspace(-3.3, 77.7, 7001),
        torch.arange(0.5, 900.5, 0.75, dtype=torch.float16),
    ]
    assert outs.pop().strip() == str([x for p in parts for x in p.to(torch.float64).tolist()])


# ---- draws taken from the stream in blocks --------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
def test_block_draws_across_twists(dtype):
    # Consecutive calls whose sizes straddle the 256-element blocks and the
    # 624-word twists, so blocks start at every offset of the engine.
    sizes = [311, 313, 1, 256, 257, 624, 625, 3, 5000]

    def run(m):
        outs = []
        for i, n in enumerate(sizes):
            t = m.empty(n, dtype=dt(m, dtype))
            outs.append(t.bernoulli_(0.37) if i % 2 else t.uniform_(-1, 2) if dtype != "int64" else t.random_(0, 9))
        return m.cat([o.to(m.float64) for o in outs])

    same_stream(run, seeds=[0, 11])


@pytest.mark.parametrize("p", [0.0, 1.0, 0.5, 2.0**-53, 1 - 2.0**-53, 0.1, 1 / 3])
def test_bernoulli_threshold(p):
    # u < p is decided on the 53-bit integer numerator of u.
    same_stream(lambda m: m.empty(2000, dtype=m.float64).bernoulli_(p), seeds=[1, 2])
    same_stream(lambda m: m.nn.functional.dropout(m.ones(3, 700), p, training=True), seeds=[4])
