"""flip along a contiguous last dim (vector-reversed rows, Note [Flip rows])
against PyTorch: every element size, row lengths around the vector width,
strided and sliced inputs, flips of several dims together."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int16", "bfloat16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(1,), (5,), (33,), (3, 7), (2, 3, 65), (4, 1, 64), (2, 3, 4, 5), (6, 40)]


def _numpy(t):
    return t.float().numpy() if t.dtype in (torch.bfloat16, ember.bfloat16) else t.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_flip_matches_torch(dtype, shape):
    a = np.random.default_rng(len(shape) * 31 + shape[-1]).standard_normal(shape) * 10
    t, e = torch.tensor(a).to(getattr(torch, dtype)), ember.tensor(a).to(getattr(ember, dtype))
    views = [(t, e)]
    if shape[-1] > 1:
        views.append((t[..., 1:], e[..., 1:]))
    if len(shape) > 1:
        views.append((t[::2, ..., 1:], e[::2, ..., 1:]))
    for dims in {(-1,), (0, -1) if len(shape) > 1 else (0,), tuple(range(len(shape)))}:
        for tv, ev in views:
            r, s = tv.flip(dims), ev.flip(dims)
            assert tuple(s.shape) == tuple(r.shape) and s.stride() == r.stride()
            np.testing.assert_array_equal(_numpy(s), _numpy(r))
