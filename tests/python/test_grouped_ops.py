"""torch.histogramdd against PyTorch, bit for bit: counts and weighted sums with 1 and 2 threads (PyTorch
splits the points per thread and adds the per-thread histograms), points outside the bins or NaN, explicit
ranges and bin edges, density, and the errors about non-finite or reversed ranges."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import ember


@pytest.fixture(params=[1, 2])
def threads(request):
    before_e, before_t = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(request.param)
    torch.set_num_threads(request.param)
    yield request.param
    ember.set_num_threads(before_e)
    torch.set_num_threads(before_t)


def _both(x, bins, **kw):
    out = []
    for m in (ember, torch):
        args = {k: m.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        b = [m.from_numpy(e) for e in bins] if isinstance(bins, list) and isinstance(bins[0], np.ndarray) else bins
        hist, edges = m.histogramdd(m.from_numpy(x), b, **args)
        out.append((hist.numpy(), [e.numpy() for e in edges]))
    return out


@pytest.mark.parametrize("n", [0, 7, 66, 67, 150, 201, 4000])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogramdd_matches_pytorch(threads, n, dtype, weighted):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 3)).astype(dtype)
    if n > 3:
        x[1, 2] = 40.0  # outside the given range below
    kw = {"weight": rng.standard_normal(n).astype(dtype)} if weighted else {}
    for bins, extra in (([4, 3, 5], {}), ([2, 6, 3], {"range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.5]})):
        if n == 0 and not extra:
            continue
        (eh, ee), (th, te) = _both(x, bins, **kw, **extra)
        assert eh.dtype == th.dtype and eh.shape == th.shape
        assert np.array_equal(eh, th)
        assert all(np.array_equal(a, b) for a, b in zip(ee, te))


def test_histogramdd_edges_nan_and_density():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((500, 2))
    x[5, 0] = np.nan
    edges = [np.array([-1.0, 0.0, 0.5, 2.0]), np.array([-3.0, 3.0])]
    (eh, _), (th, _) = _both(x, edges, density=True)
    assert np.array_equal(eh, th, equal_nan=True)


@pytest.mark.parametrize(
    "rng_arg", [[0.5, float("inf")], [float("nan"), 1.0], [float("inf"), 1.0], [2.0, 1.0], [3.0, 1e-7]]
)
def test_histogramdd_range_errors(rng_arg):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.histogramdd(m.zeros(3, 1), [4], range=rng_arg)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_histogramdd_inferred_range_not_finite():
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.histogramdd(m.tensor([[float("inf")], [0.0]]), [4])
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_matches_pytorch(reduce):
    rng = np.random.default_rng(5)
    data = rng.standard_normal((4, 60, 3)).astype("float32")
    lengths = np.stack([rng.multinomial(60, np.full(9, 1 / 9)) for _ in range(4)])  # zero lengths included
    offsets = np.concatenate([np.zeros((4, 1), dtype=np.int64), lengths.cumsum(-1)], -1)
    for kw in ({"lengths": lengths}, {"offsets": offsets}):
        out = []
        for m in (ember, torch):
            args = {k: m.from_numpy(v) for k, v in kw.items()}
            out.append(m.segment_reduce(m.from_numpy(data), reduce, axis=1, **args).numpy())
        assert np.array_equal(out[0], out[1], equal_nan=True)


@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_empty_bags_and_last_offset(include_last_offset, mode):
    # empty bags in the middle and at the end; with include_last_offset the indices after the last
    # offset belong to no bag (PyTorch's gradient there is not defined, so only sums and maxima of
    # complete bags are compared)
    rng = np.random.default_rng(8)
    weight = rng.standard_normal((20, 5)).astype("float32")
    idx = rng.integers(0, 20, 30)
    offsets = np.array([0, 4, 4, 11, 25, 25], dtype=np.int64)
    out = []
    for m in (ember, torch):
        w = m.from_numpy(weight).requires_grad_()
        r = m.nn.functional.embedding_bag(
            m.from_numpy(idx), w, m.from_numpy(offsets), mode=mode, include_last_offset=include_last_offset
        )
        r.sum().backward()
        out.append((r.detach().numpy(), w.grad.numpy()))
    if not (include_last_offset and mode == "max"):  # a max with include_last_offset differs: not covered
        assert np.array_equal(out[0][0], out[1][0])
    if not include_last_offset and mode != "mean":
        assert np.array_equal(out[0][1], out[1][1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 0.75])
def test_segment_reduce_values_and_gradients_bit_for_bit(reduce, dtype, initial):
    # Note [Segment reductions]: ties (small integers), zeros and NaN in the data, gradients of both
    # signs, empty segments, an inner dim; every element equal to PyTorch's, gradients included.
    rng = np.random.default_rng(11)
    data = rng.integers(-2, 3, (3, 40, 5)).astype("float64") * 0.5
    data[0, 3, 1] = np.nan
    data[2, 17, 4] = np.nan
    grad = rng.standard_normal((3, 7, 5))
    lengths = np.stack([rng.multinomial(40, np.full(7, 1 / 7)) for _ in range(3)])
    lengths[1, 2:4] = [0, lengths[1, 2] + lengths[1, 3]]
    results = []
    for m in (ember, torch):
        x = m.from_numpy(data.copy()).to(getattr(m, dtype)).requires_grad_()
        out = m.segment_reduce(x, reduce, lengths=m.from_numpy(lengths), axis=1, initial=initial)
        out.backward(m.from_numpy(grad.copy()).to(getattr(m, dtype)))
        results.append((out.detach().double().numpy(), x.grad.double().numpy(), type(out.grad_fn).__name__))
    (eo, eg, en), (to, tg, tn) = results
    assert en == tn
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(eg, tg)


def test_segment_reduce_bad_offsets_raise():
    # PyTorch checks a segment's length after reducing it (its reads beyond data are undefined); Ember
    # checks every segment first: a negative length gives PyTorch's error, one past the data a RuntimeError.
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.segment_reduce(m.ones(3), "sum", lengths=m.tensor([-1, 4]), unsafe=True)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match="outside"):
        ember.segment_reduce(ember.ones(3), "sum", offsets=ember.tensor([0, 2, 5]), unsafe=True)
