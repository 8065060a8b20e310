"""CUDA random numbers, bit for bit against PyTorch's CUDA generator: the same
seed must give the same tensors, the generator the same offset and state."""

import pytest
import torch

import ember

pytestmark = pytest.mark.requires_cuda

SIZES = [1, 3, 4, 1000, 10**6 + 1]
FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "bool"]
BITS = {"float32": "int32", "float64": "int64", "float16": "int16", "bfloat16": "int16"}


@pytest.fixture(autouse=True)
def initialised():
    # Seeds given before initialisation are queued; start both runtimes first.
    ember.cuda.init()
    torch.cuda.init()


def as_torch(e):
    """An Ember tensor's values as a CPU torch tensor, through its bytes."""
    c = e.cpu().contiguous()
    dtype = str(c.dtype).split(".")[-1]
    if dtype in BITS:
        raw = c.view(getattr(ember, BITS[dtype])).numpy()
        return torch.from_numpy(raw.copy()).view(getattr(torch, dtype))
    return torch.from_numpy(c.numpy().copy())


def assert_same_bits(e, t):
    got = as_torch(e)
    want = t.cpu().contiguous()
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.is_floating_point:
        bits = getattr(torch, BITS[str(want.dtype).split(".")[-1]])
        mismatch = (got.view(bits) != want.view(bits)).nonzero()
        assert mismatch.numel() == 0, f"{mismatch.shape[0]} elements differ, first at {mismatch[0].tolist()}"
    else:
        assert torch.equal(got, want)


def run_both(seed, fn):
    """fn(lib) under the same seed for PyTorch and Ember; twice, so the
    generators' offsets are checked too."""
    torch.cuda.manual_seed(seed)
    ember.cuda.manual_seed(seed)
    for _ in range(2):
        assert_same_bits(fn(ember), fn(torch))


def empty(lib, n, dtype):
    return lib.empty(n, dtype=getattr(lib, dtype), device="cuda")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_uniform(n, dtype):
    run_both(123, lambda lib: empty(lib, n, dtype).uniform_(-2.0, 3.0))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_normal(n, dtype):
    run_both(7, lambda lib: empty(lib, n, dtype).normal_(0.5, 2.0))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_exponential(n, dtype):
    run_both(99, lambda lib: empty(lib, n, dtype).exponential_(1.5))


@pytest.mark.parametrize("n", [1, 1000, 10**6 + 1])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
def test_bernoulli_scalar(n, dtype):
    run_both(5, lambda lib: empty(lib, n, dtype).bernoulli_(0.3))


@pytest.mark.parametrize("n", [1, 3, 4, 1000, 10**6 + 1])
@pytest.mark.parametrize("p_dtype", FLOAT_DTYPES)
def test_bernoulli_tensor(n, p_dtype):
    probs = torch.linspace(0, 1, n, dtype=torch.float64)

    def fn(lib):
        p = lib.tensor(probs.numpy(), device="cuda").to(getattr(lib, p_dtype))
        return lib.bernoulli(p)

    run_both(11, fn)


@pytest.mark.parametrize("n", [1, 1000, 10**6 + 1])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES[:-1])
def test_random_bounded(n, dtype):
    run_both(3, lambda lib: empty(lib, n, dtype).random_(2, 100))


@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_random_wide_range(dtype):
    # A range of 2^32 or more takes 64-bit draws.
    run_both(3, lambda lib: empty(lib, 10**5 + 3, dtype).random_(0, 2**40 if dtype != "float32" else 2**24))
    run_both(3, lambda lib: empty(lib, 10**5 + 3, "int64").random_(-(2**40), 2**40))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
def test_random_unbounded(dtype):
    run_both(17, lambda lib: empty(lib, 10**4 + 1, dtype).random_())


def test_random_full_64_bit_range():
    run_both(17, lambda lib: empty(lib, 1001, "int64").random_(-(2**63), None))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_factories(dtype):
    run_both(21, lambda lib: lib.rand(10, 33, dtype=getattr(lib, dtype), device="cuda"))
    run_both(21, lambda lib: lib.randn(10, 33, dtype=getattr(lib, dtype), device="cuda"))
    run_both(21, lambda lib: lib.randint(-5, 9, (1000,), device="cuda"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_non_contiguous_outputs(dtype):
    def transposed(lib):
        x = lib.zeros(64, 33, dtype=getattr(lib, dtype), device="cuda").t()
        return x.uniform_()

    def strided(lib):
        x = lib.zeros(40, 50, dtype=getattr(lib, dtype), device="cuda")
        x[:, ::3].normal_()
        return x

    def column(lib):
        x = lib.zeros(300, 7, dtype=getattr(lib, dtype), device="cuda")
        x[:, 2].exponential_()
        return x

    def bernoulli_t(lib):
        p = lib.full((30, 20), 0.5, dtype=getattr(lib, dtype), device="cuda").t()
        out = lib.zeros(30, 20, device="cuda").t()
        return out.bernoulli_(p)

    for fn in (transposed, strided, column, bernoulli_t):
        run_both(8, fn)


def test_explicit_generator():
    tg = torch.Generator(device="cuda").manual_seed(1234)
    eg = ember.Generator(device="cuda").manual_seed(1234)
    assert str(eg.device) == str(tg.device)
    for _ in range(3):
        t = torch.empty(5000, device="cuda").normal_(generator=tg)
        e = ember.empty(5000, device="cuda").normal_(generator=eg)
        assert_same_bits(e, t)
    assert as_torch(eg.get_state()).tolist() == tg.get_state().tolist()


def test_rng_state_round_trip_and_layout():
    torch.cuda.manual_seed(42)
    ember.cuda.manual_seed(42)
    torch.rand(1000, device="cuda")
    ember.rand(1000, device="cuda")
    ts = torch.cuda.get_rng_state()
    es = ember.cuda.get_rng_state()
    assert es.dtype == ember.uint8
    assert es.shape == (16,)
    assert as_torch(es).tolist() == ts.tolist()
    a = ember.randn(77, device="cuda")
    ember.cuda.set_rng_state(es)
    b = ember.randn(77, device="cuda")
    assert_same_bits(a, as_torch(b))
    assert ember.cuda.initial_seed() == torch.cuda.initial_seed() == 42
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        ember.cuda.set_rng_state(ember.zeros(12, dtype=ember.uint8))


def test_manual_seed_seeds_cuda_and_fork_rng_restores():
    torch.manual_seed(5)
    ember.manual_seed(5)
    assert_same_bits(ember.rand(100, device="cuda"), torch.rand(100, device="cuda"))
    with ember.random.fork_rng():
        ember.rand(100, device="cuda")
    with torch.random.fork_rng():
        torch.rand(100, device="cuda")
    assert_same_bits(ember.rand(100, device="cuda"), torch.rand(100, device="cuda"))


def test_generator_of_another_device_is_refused():
    g = ember.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        ember.empty(3, device="cuda").uniform_(generator=g)
