"""randperm on CUDA against PyTorch's CUDA generator: the same seed gives the
same permutation and leaves the generator at the same offset."""

from __future__ import annotations

import pytest
import torch
from _compare import DEVICE, cuda_only

import ember

pytestmark = pytest.mark.requires_cuda

torch_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs PyTorch with CUDA as the oracle")


def values(t):
    return t.cpu().tolist()


# 30000 is the last size with int32 keys, 40000 draws int64 keys.
SIZES = [1, 2, 5, 100, 4097, 30000, 40000, 300001]


@pytest.mark.parametrize("n", SIZES)
def test_randperm_is_a_permutation(n):
    ember.manual_seed(3)
    p = ember.randperm(n, device=DEVICE)
    assert p.dtype == ember.int64
    assert tuple(p.shape) == (n,)
    assert sorted(values(p)) == list(range(n))


@cuda_only
@torch_cuda
@pytest.mark.parametrize("n", SIZES)
def test_randperm_stream(n):
    ember.cuda.init()
    torch.cuda.init()
    for seed in (0, 12345):
        torch.cuda.manual_seed(seed)
        ember.cuda.manual_seed(seed)
        for _ in range(2):  # the second call checks the generator's offset
            assert values(ember.randperm(n, device="cuda")) == values(torch.randperm(n, device="cuda"))
        assert values(ember.rand(7, device="cuda")) == values(torch.rand(7, device="cuda"))


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "float32", "float64", "float16"])
def test_randperm_dtypes_and_generator(dtype):
    g_e = ember.Generator(device="cuda").manual_seed(7)
    g_t = torch.Generator(device="cuda").manual_seed(7)
    n = 200
    got = ember.randperm(n, generator=g_e, dtype=getattr(ember, dtype), device="cuda")
    want = torch.randperm(n, generator=g_t, dtype=getattr(torch, dtype), device="cuda")
    assert str(got.dtype) == str(want.dtype)
    assert values(got) == values(want)


@cuda_only
def test_randperm_out():
    out = ember.empty(3, dtype=ember.int64, device="cuda")
    ember.randperm(10, out=out)
    assert sorted(values(out)) == list(range(10))
    assert values(ember.randperm(0, device="cuda")) == []


@cuda_only
@torch_cuda
def test_randperm_errors():
    cases = [
        lambda lib: lib.randperm(5, dtype=lib.bool, device="cuda"),
        lambda lib: lib.randperm(5, dtype=lib.bfloat16, device="cuda"),
        lambda lib: lib.randperm(5, generator=lib.Generator(), device="cuda"),
        lambda lib: lib.randperm(3000, dtype=lib.float16, device="cuda"),
    ]
    for fn in cases:
        with pytest.raises(Exception) as want:
            fn(torch)
        with pytest.raises(Exception) as got:
            fn(ember)
        assert type(got.value) is type(want.value)
        assert str(got.value) == str(want.value)


def probabilities(shape, seed, dtype="float32"):
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(shape, generator=g, dtype=torch.float64) + 0.05
    p[..., 1] = 0  # an empty category is never drawn
    return p.to(getattr(torch, dtype))


def to_ember(t):
    return ember.from_numpy(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy().copy())


MULTINOMIAL = [
    ((7,), 1, False),
    ((7,), 5, False),
    ((7,), 40, True),
    ((4, 9), 1, True),
    ((4, 9), 6, False),
    ((4, 9), 300, True),
    ((3, 2000), 130, True),
]


@pytest.mark.parametrize("case", range(len(MULTINOMIAL)))
def test_multinomial_samples(case):
    shape, n, replacement = MULTINOMIAL[case]
    p = probabilities(shape, case)
    ember.manual_seed(case)
    got = ember.multinomial(to_ember(p).to(DEVICE), n, replacement)
    assert got.dtype == ember.int64
    assert tuple(got.shape) == shape[:-1] + (n,)
    rows = torch.tensor(values(got)).reshape(-1, n)
    assert bool(((rows >= 0) & (rows < shape[-1]) & (rows != 1)).all())
    if not replacement:
        assert all(len(set(r.tolist())) == n for r in rows)


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(MULTINOMIAL)))
def test_multinomial_stream(case, dtype):
    shape, n, replacement = MULTINOMIAL[case]
    p_t = probabilities(shape, case, dtype).cuda()
    p_e = to_ember(p_t.cpu()).to("cuda")
    torch.cuda.manual_seed(case)
    ember.cuda.manual_seed(case)
    for _ in range(2):  # the second call checks the generator's offset
        assert values(ember.multinomial(p_e, n, replacement)) == values(torch.multinomial(p_t, n, replacement))


@cuda_only
def test_multinomial_errors():
    """Ember checks on the host and raises the CPU's errors; torch's CUDA build
    checks these with device-side assertions, which break the CUDA context
    (shared with Ember in this process), so it is not asked."""
    bad = [
        (torch.tensor([0.5, -0.1, 0.2]), 1, False),
        (torch.tensor([0.5, float("inf"), 0.2]), 2, False),
        (torch.tensor([[0.5, 0.2], [0.0, 0.0]]), 1, False),
        (torch.tensor([0.5, -0.1, 0.2]), 3, True),
    ]
    for p, n, replacement in bad:
        with pytest.raises(RuntimeError) as want:
            torch.multinomial(p, n, replacement)
        with pytest.raises(RuntimeError) as got:
            ember.multinomial(to_ember(p).to("cuda"), n, replacement)
        assert str(got.value) == str(want.value)


FILLS = [
    ("cauchy_", dict(median=0.5, sigma=2.0)),
    ("log_normal_", dict(mean=0.2, std=0.7)),
    ("geometric_", dict(p=0.3)),
]


def bits_equal(e, t):
    got, want = e.cpu(), t.cpu()
    assert str(got.dtype) == str(want.dtype)
    if want.dtype == torch.bfloat16:
        assert got.float().tolist() == want.float().tolist()
    else:
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("case", range(len(FILLS)))
def test_random_fills_values(case):
    name, kw = FILLS[case]
    x = getattr(ember.empty(4000, device=DEVICE), name)(**kw)
    v = torch.tensor(values(x))
    assert bool(torch.isfinite(v).all())
    if name == "log_normal_":
        assert bool((v > 0).all())
    if name == "geometric_":
        assert bool((v >= 1).all()) and bool((v == v.round()).all())


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("n", [1, 5, 1000, 65537])
@pytest.mark.parametrize("case", range(len(FILLS)))
def test_random_fills_stream(case, n, dtype):
    name, kw = FILLS[case]
    if dtype == "int64" and name != "geometric_":
        pytest.skip("only geometric_ fills integer tensors")
    ember.cuda.init()
    torch.cuda.init()
    torch.cuda.manual_seed(11)
    ember.cuda.manual_seed(11)
    for _ in range(2):  # the second call checks the generator's offset
        e = getattr(ember.empty(n, dtype=getattr(ember, dtype), device="cuda"), name)(**kw)
        t = getattr(torch.empty(n, dtype=getattr(torch, dtype), device="cuda"), name)(**kw)
        bits_equal(e, t)
    # a transposed view draws in memory order
    e = getattr(ember.empty(40, 30, device="cuda").t(), name)(**kw)
    t = getattr(torch.empty(40, 30, device="cuda").t(), name)(**kw)
    bits_equal(e, t)


@cuda_only
@torch_cuda
def test_random_fills_errors():
    cases = [
        lambda lib: lib.empty(3, dtype=lib.int64, device="cuda").cauchy_(),
        lambda lib: lib.empty(3, device="cuda").cauchy_(sigma=-1.0),
        lambda lib: lib.empty(3, dtype=lib.int64, device="cuda").log_normal_(),
        lambda lib: lib.empty(3, dtype=lib.bool, device="cuda").geometric_(0.5),
        lambda lib: lib.empty(3, device="cuda").cauchy_(generator=lib.Generator()),
    ]
    for fn in cases:
        with pytest.raises(Exception) as want:
            fn(torch)
        with pytest.raises(Exception) as got:
            fn(ember)
        assert type(got.value) is type(want.value)
        assert str(got.value) == str(want.value)
