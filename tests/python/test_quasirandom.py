"""torch.quasirandom.SobolEngine against PyTorch: the same points (bit for bit) plain and scrambled, through
draw, draw_base2, fast_forward and reset; the direction numbers of every dimension; errors."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def _run(m, dim, scramble, seed):
    e = m.quasirandom.SobolEngine(dim, scramble=scramble, seed=seed)
    out = [e.draw(1), e.draw(5)]
    e.fast_forward(7)
    out.append(e.draw(3, dtype=m.float64))
    e.reset()
    out += [e.draw(4, dtype=m.float64), e.draw_base2(2), e.draw(3)]
    e.fast_forward(1000)
    out += [e.draw(300), e.quasi, e.shift, e.sobolstate]
    return [t.tolist() for t in out], [str(t.dtype).split(".")[1] for t in out], e.num_generated, repr(e)


@pytest.mark.parametrize(("dim", "scramble", "seed"), [(1, False, None), (5, False, None), (7, True, 3), (40, True, 0)])
def test_points_match_pytorch(dim, scramble, seed):
    assert _run(ember, dim, scramble, seed) == _run(torch, dim, scramble, seed)


def test_direction_numbers_of_every_dimension():
    e = ember.quasirandom.SobolEngine(ember.quasirandom.SobolEngine.MAXDIM)
    state = torch.zeros(e.MAXDIM, e.MAXBIT, dtype=torch.long)
    torch._sobol_engine_initialize_state_(state, e.MAXDIM)
    assert torch.equal(torch.from_numpy(e.sobolstate.numpy()), state)


def test_out_and_first_point_dtype():
    out = ember.empty(0)
    e = ember.quasirandom.SobolEngine(2)
    assert e.draw(2, out=out) is out and out.shape == (2, 2)
    first = ember.quasirandom.SobolEngine(3, scramble=True, seed=9).draw(1, dtype=ember.float64)
    ref = torch.quasirandom.SobolEngine(3, scramble=True, seed=9).draw(1, dtype=torch.float64)
    assert first.tolist() == ref.tolist()  # the first point goes through the default dtype, as in PyTorch


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.quasirandom.SobolEngine(0),
        lambda m: m.quasirandom.SobolEngine(21202),
        lambda m: m.quasirandom.SobolEngine(2).draw(0),
        lambda m: (lambda e: (e.draw(3), e.draw_base2(2)))(m.quasirandom.SobolEngine(2)),
    ],
)
def test_errors(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_first_draw_in_each_dtype_under_each_default(default):
    results = []
    for m in (ember, torch):
        previous = m.get_default_dtype()
        m.set_default_dtype(getattr(m, default))
        try:
            got = []
            for dtype in (None, m.float32, m.float64):
                e = m.quasirandom.SobolEngine(6, scramble=True, seed=11)
                got.append(e.draw(9, dtype=dtype).tolist() + e.draw(2, dtype=dtype).tolist())
        finally:
            m.set_default_dtype(previous)
        results.append(got)
    assert results[0] == results[1]


@pytest.mark.parametrize("scramble", [False, True])
def test_long_draws_across_blocks_match_pytorch(scramble):
    # draws that start and end inside blocks of 1024 points and span several of them
    out = []
    for m in (ember, torch):
        e = m.quasirandom.SobolEngine(6, scramble=scramble, seed=11)
        pts = [e.draw(5000, dtype=m.float32), e.draw(3000)]
        e.fast_forward(777)
        pts += [e.draw(1), e.quasi, e.draw(2048)]
        out.append([t.tolist() for t in pts])
    assert out[0] == out[1]
