"""Where Ember's CUDA results follow torch's CUDA kernels rather than the CPU's:
the order of ties in unstable sorts of short lines (a bitonic network), the
index median returns among equal values, the roundings of 16-bit cumsum and
round(decimals=), gelu at infinities; and operators whose CUDA runs crashed
(a CPU number as pow's base, binary_cross_entropy). Skips, with the reason,
without a CUDA device; the comparisons with torch need its CUDA build."""

from __future__ import annotations

import math

import pytest
from cuda_compare import as_torch, assert_close, to_ember, to_torch_cuda

import ember

torch = pytest.importorskip("torch", reason="torch builds the inputs")

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def on_cuda(fn, *args, **kwargs):
    return fn(ember, *to_ember(args, "cuda"), **to_ember(kwargs, "cuda"))


def on_torch_cuda(torch_cuda, fn, *args, **kwargs):
    return fn(torch_cuda, *to_torch_cuda(args), **to_torch_cuda(kwargs))


def ties(dtype, shape, seed, high=3):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, high, shape, generator=gen).to(getattr(torch, dtype))


# ---- unstable sort of short lines ---------------------------------------------------


def test_sort_bool_order_of_ties_is_torchs():
    """The indices torch 2.11's CUDA sort gave for the database's bool sample."""
    x = torch.tensor([[True, True, True, True, False], [True] * 5, [True] * 5])
    values, indices = on_cuda(lambda m, a: m.sort(a), x)
    assert as_torch(indices).tolist() == [[4, 2, 3, 0, 1], [1, 0, 2, 4, 3], [1, 0, 2, 4, 3]]
    assert as_torch(values).tolist() == [[False, True, True, True, True], [True] * 5, [True] * 5]
    assert as_torch(on_cuda(lambda m, a: m.argsort(a), x)).tolist()[0] == [4, 2, 3, 0, 1]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", *FLOATS])
@pytest.mark.parametrize("n", [2, 3, 5, 16, 17, 32])
@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_short_lines(torch_cuda, dtype, n, descending):
    x = ties(dtype, (7, n), seed=n)
    if dtype in FLOATS:
        x[0, 0], x[1, n - 1], x[2, 0] = math.nan, -0.0, math.inf
    fn = lambda m, a: m.sort(a, dim=-1, descending=descending)  # noqa: E731
    assert_close(on_cuda(fn, x), on_torch_cuda(torch_cuda, fn, x), exact=True, where="sort")
    fn_t = lambda m, a: m.argsort(a.t(), dim=0, descending=descending)  # noqa: E731
    assert_close(on_cuda(fn_t, x), on_torch_cuda(torch_cuda, fn_t, x), exact=True, where="argsort")


@pytest.mark.parametrize("n", [5, 33])
def test_stable_sort_keeps_input_order(n):
    x = ties("int32", (3, n), seed=1)
    indices = as_torch(on_cuda(lambda m, a: m.sort(a, stable=True)[1], x))
    assert torch.equal(indices, torch.sort(x, stable=True)[1])


# ---- median among ties ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "float32", "bfloat16"])
def test_median_index_among_ties(torch_cuda, name, dtype):
    x = ties(dtype, (2, 9, 4), seed=3)
    if dtype in FLOATS:
        x[0, 2, 1] = math.nan
        x[1, :, 3] = math.nan
    for dim in (0, 1, 2):
        fn = lambda m, a: getattr(m, name)(a, dim)  # noqa: E731
        assert_close(on_cuda(fn, x), on_torch_cuda(torch_cuda, fn, x), exact=True, where=f"{name} dim {dim}")


def test_median_index_of_database_sample():
    """The indices torch 2.11's CUDA median gave for the database's int8 sample: the first equal value."""
    x = torch.tensor(
        [[[2, 0, 0, 1], [-3, 3, -1, 1], [2, -3, 3, 3]], [[-3, 3, 3, -1], [3, 2, 3, 2], [3, 3, 2, -3]]],
        dtype=torch.int8,
    )
    assert as_torch(on_cuda(lambda m, a: m.median(a, 1)[1], x)).tolist() == [[0, 0, 0, 0], [1, 0, 0, 0]]


# ---- 16-bit roundings -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
# Lines of several rows (a 1-D tensor is one cub scan in torch, whose order is cub's).
@pytest.mark.parametrize("shape,dim", [((2, 3, 4), 1), ((2, 3, 4), 2), ((3, 700), 1), ((5000, 3), 1), ((2, 40), 0)])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scan_matches_torch_exactly(torch_cuda, dtype, shape, dim, name):
    gen = torch.Generator().manual_seed(len(shape) + dim)
    low, high = (0.9, 1.1) if name == "cumprod" else (-2.0, 2.0)
    x = (torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low).to(getattr(torch, dtype))
    fn = lambda m, a: getattr(m, name)(a, dim)  # noqa: E731
    assert_close(on_cuda(fn, x), on_torch_cuda(torch_cuda, fn, x), exact=True, where=name)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("decimals", [-2, -1, 1, 2, 3])
def test_round_decimals_matches_torch_exactly(torch_cuda, dtype, decimals):
    gen = torch.Generator().manual_seed(decimals + 10)
    x = ((torch.rand(64, generator=gen, dtype=torch.float64) - 0.5) * 600).to(getattr(torch, dtype))
    fn = lambda m, a: m.round(a, decimals=decimals)  # noqa: E731
    assert_close(on_cuda(fn, x), on_torch_cuda(torch_cuda, fn, x), exact=True, where="round")


def test_round_decimals_bfloat16_database_sample():
    """torch 2.11's CUDA result for the database's sample: x * 10 rounds to bfloat16 before nearbyint."""
    x = torch.tensor([[-2.640625, -1.65625, -1.59375], [-1.9375, 0.3359375, -2.34375]], dtype=torch.bfloat16)
    got = as_torch(on_cuda(lambda m, a: m.round(a, decimals=1), x)).float().tolist()
    assert got == [[-2.59375, -1.6015625, -1.6015625], [-1.8984375, 0.30078125, -2.40625]]


def test_cumsum_bfloat16_database_sample():
    """torch 2.11's CUDA result: a scan over an outer dim keeps its running sum in bfloat16."""
    x = torch.tensor([[-1.640625, 1.0], [0.0498046875, 1.0], [1.5703125, 1.0]], dtype=torch.bfloat16)
    got = as_torch(on_cuda(lambda m, a: m.cumsum(a, 0), x))[:, 0].float().tolist()
    running = x[0, 0]
    expected = [running.item()]
    for v in x[1:, 0]:
        running = (running.float() + v.float()).to(torch.bfloat16)
        expected.append(running.item())
    assert got == expected


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_edges_match_torch_cuda(torch_cuda, dtype, approximate):
    """+inf gives inf on CUDA (the CPU's AVX-512 path gives NaN, as PyTorch's does)."""
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 0.5, -1.5, 1e-4, 2.0, -7.25, 30.0, -30.0])
    x = x.to(getattr(torch, dtype))
    fn = lambda m, a: m.nn.functional.gelu(a, approximate=approximate)  # noqa: E731
    got = on_cuda(fn, x)
    assert_close(got, on_torch_cuda(torch_cuda, fn, x), where="gelu")
    assert as_torch(got)[2].item() == math.inf


# ---- crashes of the first GPU run -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "float16", "float32"])
def test_number_as_first_operand(torch_cuda, dtype):
    """pow(2, t), 2 ** t, remainder(5, t): the number is the iterator's first
    input, a CPU tensor; the loop runs on t's device."""
    x = ties(dtype, (2, 3), seed=5) + 1
    for fn in (lambda m, a: m.pow(2, a), lambda m, a: 2**a, lambda m, a: m.remainder(5, a)):
        assert_close(on_cuda(fn, x), on_torch_cuda(torch_cuda, fn, x), where="number first")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy(torch_cuda, dtype, reduction):
    gen = torch.Generator().manual_seed(7)
    dt = getattr(torch, dtype)
    x = (torch.rand(3, 4, generator=gen, dtype=torch.float64) * 0.9 + 0.05).to(dt)
    t = torch.rand(3, 4, generator=gen, dtype=torch.float64).to(dt)
    w = (torch.rand(4, generator=gen, dtype=torch.float64) * 1.5 + 0.5).to(dt)
    x[0, 0], x[0, 1] = 0.0, 1.0  # log clamps at -100
    fn = lambda m, a, b, **kw: m.nn.functional.binary_cross_entropy(a, b, reduction=reduction, **kw)  # noqa: E731
    for kwargs in ({}, {"weight": w}):
        assert_close(on_cuda(fn, x, t, **kwargs), on_torch_cuda(torch_cuda, fn, x, t, **kwargs), where="bce")


def test_binary_cross_entropy_out_of_range_raises():
    x = torch.tensor([0.5, 1.5])
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        on_cuda(lambda m, a, b: m.nn.functional.binary_cross_entropy(a, b), x, torch.tensor([0.0, 1.0]))
