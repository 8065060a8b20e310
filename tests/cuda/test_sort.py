"""sort/topk/kthvalue on CUDA (kernels/Sort.cu) and the operators composed of
CUDA kernels (cuda/ComposedOps.cpp: fill_ with a tensor, tril, triu, flip,
trace), beyond the operator database's rows: NaN and infinity ordering, ties
(stable), long lines, bool, in-place and out= forms. Skips, with the reason,
without a CUDA device."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="torch builds the samples")

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def with_specials(dtype, n=40, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(3, n, generator=gen, dtype=torch.float64) * 8 - 4).round()  # ties
    x[0, 3], x[1, 5], x[2, 7] = math.nan, math.inf, -math.inf
    x[0, 9] = -math.nan
    return x.to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_inf_and_ties(cuda_compare, dtype, descending):
    x = with_specials(dtype)
    cuda_compare(lambda m, a: m.sort(a, stable=True, descending=descending), x, exact=True)
    cuda_compare(lambda m, a: m.sort(a.t(), dim=0, stable=True, descending=descending), x, exact=True)


@pytest.mark.parametrize("n", [1, 33, 5000])
def test_sort_long_lines_and_ints(cuda_compare, n):
    gen = torch.Generator().manual_seed(n)
    x = torch.randint(-50, 50, (2, n), generator=gen)
    cuda_compare(lambda m, a: m.sort(a, stable=True), x, exact=True)
    cuda_compare(lambda m, a: m.argsort(a, dim=-1, descending=True, stable=True), x, exact=True)


def test_sort_bool(cuda_compare):
    x = torch.tensor([[True, False, True, False], [False, False, True, True]])
    cuda_compare(lambda m, a: m.sort(a, stable=True), x, exact=True)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_and_kthvalue(cuda_compare, largest):
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(4, 50, generator=gen)
    x[1, 7] = math.nan
    cuda_compare(lambda m, a: m.topk(a, 5, largest=largest), x, exact=True)
    cuda_compare(lambda m, a: m.kthvalue(a, 7, dim=1, keepdim=largest), x, exact=True)


def test_topk_bool_raises_the_cuda_error():
    import ember

    with pytest.raises(NotImplementedError, match="topk_out_cuda"):
        ember.topk(ember.ones(4, dtype=ember.bool, device="cuda"), 2)


@pytest.mark.parametrize("diagonal", [-1, 0, 2, 100, -100])
def test_tril_triu(cuda_compare, diagonal):
    x = torch.arange(2 * 4 * 5, dtype=torch.float32).reshape(2, 4, 5)
    cuda_compare(lambda m, a: m.tril(a, diagonal), x, exact=True)
    cuda_compare(lambda m, a: m.triu(a.transpose(-1, -2), diagonal), x, exact=True)
    cuda_compare(lambda m, a: a.clone().tril_(diagonal), x, exact=True)


def test_flip_trace_fill(cuda_compare):
    x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    cuda_compare(lambda m, a: m.flip(a, (0, 2)), x, exact=True)
    cuda_compare(lambda m, a: m.trace(a[0].to(m.float64)), x, exact=True)
    cuda_compare(lambda m, a: a.clone().fill_(m.tensor(7, dtype=a.dtype, device=a.device)), x, exact=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_median_and_nanmedian(cuda_compare, dtype):
    gen = torch.Generator().manual_seed(2)
    x = (torch.rand(4, 9, generator=gen, dtype=torch.float64) * 10).to(getattr(torch, dtype))
    if dtype != "int64":
        x[1, 2], x[1, 6], x[3, 1:] = math.nan, math.nan, math.nan
    for keepdim in (False, True):
        # The index among equal values follows torch's CUDA kernel (integers tie).
        cuda_compare(lambda m, a: m.median(a, dim=1, keepdim=keepdim), x, exact=True, cuda_order=True)
        cuda_compare(lambda m, a: m.nanmedian(a, dim=1, keepdim=keepdim), x, exact=True, cuda_order=True)
    cuda_compare(lambda m, a: m.median(a), x, exact=True)
    cuda_compare(lambda m, a: m.nanmedian(a[:3]), x, exact=True)


def test_repeat_interleave_of_a_tensor(cuda_compare):
    reps = torch.tensor([2, 0, 3, 1, 0])
    cuda_compare(lambda m, r: m.repeat_interleave(r), reps, exact=True)
    cuda_compare(lambda m, r: m.repeat_interleave(r, output_size=6), reps, exact=True)
    x = torch.arange(10.0).reshape(5, 2)
    cuda_compare(lambda m, a, r: m.repeat_interleave(a, r, dim=0), x, reps, exact=True)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted(cuda_compare, right):
    b = torch.tensor([1.0, 2.0, 2.0, 5.0, math.nan])
    v = torch.tensor([[0.0, 2.0, 3.0], [5.0, 9.0, math.nan]])
    cuda_compare(lambda m, s, x: m.searchsorted(s, x, right=right), b, v, exact=True)
    cuda_compare(lambda m, s, x: m.searchsorted(s, x, out_int32=True, side="right" if right else "left"), b, v)
    rows = torch.sort(torch.rand(3, 17, generator=torch.Generator().manual_seed(3)), dim=-1)[0]
    cuda_compare(lambda m, s, x: m.searchsorted(s, x, right=right), rows, torch.rand(3, 4), exact=True)


def test_masked_scatter(cuda_compare):
    gen = torch.Generator().manual_seed(4)
    x, src = torch.rand(3, 4, generator=gen), torch.rand(20, generator=gen)
    mask = torch.tensor([True, False, True, True])
    cuda_compare(lambda m, a, k, s: m.masked_scatter(a, k, s), x, mask, src, exact=True)
    cuda_compare(lambda m, a, k, s: a.clone().masked_scatter_(k, s), x.t(), mask[:3], src, exact=True)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(cuda_compare, accumulate):
    x = torch.arange(12.0).reshape(3, 4)
    index = torch.tensor([[0, -1], [5, 5]]) if accumulate else torch.tensor([[0, -1], [5, 7]])
    src = torch.tensor([[10.0, 20.0], [30.0, 40.0]])
    cuda_compare(lambda m, a, i, s: a.put(i, s, accumulate=accumulate), x, index, src, exact=True)
    cuda_compare(lambda m, a, i, s: a.t().clone().put_(i, s, accumulate=accumulate), x, index, src, exact=True)


def test_put_out_of_range_raises_the_cpu_error():
    import ember

    x = ember.zeros(4, device="cuda")
    with pytest.raises(IndexError, match="out of range: tried to access index 9 on a tensor of 4 elements"):
        x.put_(ember.tensor([1, 9], device="cuda"), ember.ones(2, device="cuda"))


def test_bincount(cuda_compare):
    x = torch.tensor([0, 1, 1, 4, 1])
    cuda_compare(lambda m, a: m.bincount(a), x, exact=True)
    cuda_compare(lambda m, a: m.bincount(a, minlength=8), x, exact=True)
    cuda_compare(lambda m, a, w: m.bincount(a, weights=w), x, torch.tensor([0.5, 1.0, 2.0, 3.0, 4.0]))
    cuda_compare(lambda m, a, w: m.bincount(a, weights=w), x, torch.arange(5, dtype=torch.int32))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_unique(cuda_compare, dtype):
    gen = torch.Generator().manual_seed(6)
    x = torch.randint(0, 4, (3, 5), generator=gen).to(getattr(torch, dtype))
    cuda_compare(lambda m, a: m.unique(a, return_inverse=True, return_counts=True), x, exact=True)
    cuda_compare(lambda m, a: m.unique_consecutive(a, return_inverse=True, return_counts=True), x, exact=True)
    cuda_compare(lambda m, a: m.unique(a), x[:0], exact=True)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce(cuda_compare, reduce):
    gen = torch.Generator().manual_seed(7)
    x, src = torch.rand(4, 5, generator=gen) + 0.5, torch.rand(5, 6, generator=gen) + 0.5
    index = torch.randint(0, 4, (3, 4), generator=gen)  # repeated targets
    cuda_compare(lambda m, a, i, s: m.scatter(a, 0, i, s, reduce=reduce), x, index, src)
    cuda_compare(lambda m, a, i: a.clone().scatter_(1, i, 1.5, reduce=reduce), x, index)
    cuda_compare(lambda m, a, i, s: m.scatter(a.t(), 1, i, s, reduce=reduce), x, index, src)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_scatter_reduce(cuda_compare, reduce, include_self, dtype):
    gen = torch.Generator().manual_seed(8)
    x = (torch.rand(4, 5, generator=gen) * 10).to(getattr(torch, dtype))
    src = (torch.rand(5, 6, generator=gen) * 10).to(getattr(torch, dtype))
    index = torch.randint(0, 4, (3, 4), generator=gen)
    cuda_compare(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, reduce, include_self=include_self), x, index, src)
    cuda_compare(
        lambda m, a, i, s: a.t().clone().scatter_reduce_(1, i, s, reduce, include_self=include_self), x, index, src
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc(cuda_compare, dtype):
    x = torch.tensor([0.0, 0.25, 0.5, 1.0, 1.0, -0.5, 3.0, 0.999], dtype=getattr(torch, dtype))
    cuda_compare(lambda m, a: m.histc(a, bins=4, min=0, max=1), x, exact=True)
    cuda_compare(lambda m, a: m.histc(a, bins=5), x, exact=True)  # the range from the data
    cuda_compare(lambda m, a: m.histc(a[:1], bins=3), x, exact=True)  # one value: [v - 1, v + 1]
