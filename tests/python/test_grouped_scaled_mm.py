"""torch._grouped_mm / F.grouped_mm (values, strides, gradients, errors) and
F.scaled_mm / torch._scaled_mm of float8 operands, against PyTorch."""

import numpy as np
import pytest
import torch

import ember


def _run(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e).split("\n")[0]
    return str(r.dtype).split(".")[-1], tuple(r.shape), tuple(r.stride()), r.float().numpy()


def _same(fn):
    expected, got = _run(torch, fn), _run(ember, fn)
    assert got[:3] == expected[:3]
    if len(expected) == 4:
        np.testing.assert_array_equal(got[3], expected[3])


def _t(lib, arr, dtype="float32"):
    return lib.tensor(arr, dtype=getattr(lib, dtype))


RNG = np.random.default_rng(0)
A2, B3, OFFS = RNG.standard_normal((12, 16)), RNG.standard_normal((3, 16, 8)), [3, 7, 12]


def _offs(lib, ends=OFFS):
    return lib.tensor(ends, dtype=lib.int32)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize(
    "case",
    [
        lambda lib, d: lib._grouped_mm(_t(lib, A2, d), _t(lib, B3, d), _offs(lib)),  # 2-d x 3-d
        lambda lib, d: lib._grouped_mm(_t(lib, A2, d), _t(lib, B3, d), _offs(lib, [3, 3, 10]))[
            :10
        ],  # empty group; rows past 10 unwritten
        lambda lib, d: lib._grouped_mm(
            _t(lib, A2, d), _t(lib, B3, d).transpose(1, 2).contiguous().transpose(1, 2), _offs(lib)
        ),
        lambda lib, d: lib._grouped_mm(_t(lib, A2, d).t().contiguous(), _t(lib, A2[:, :8], d), _offs(lib)),  # 2-d x 2-d
        lambda lib, d: lib._grouped_mm(
            _t(lib, B3, d).transpose(1, 2).contiguous(),
            _t(lib, A2[:, :16], d).t().contiguous().t()[:16],
            _offs(lib, [8, 16, 16]),
        ),
        lambda lib, d: lib._grouped_mm(_t(lib, B3[:, :8], d), _t(lib, B3, d)),  # 3-d x 3-d
        lambda lib, d: lib.nn.functional.grouped_mm(
            _t(lib, A2, d), _t(lib, B3, d), offs=_offs(lib), out_dtype=getattr(lib, d)
        ),
    ],
)
def test_grouped_mm_values(case, dtype):
    _same(lambda lib: case(lib, dtype))


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3), lib.tensor(OFFS)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3), _offs(lib)[None]),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3), _offs(lib)[:2]),
        lambda lib: lib._grouped_mm(_t(lib, A2, "float64"), _t(lib, B3, "float64"), _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, A2).int(), _t(lib, B3), _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3[:, :12]), _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, A2)[None, None], _t(lib, B3), _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3), _offs(lib), bias=lib.zeros(8)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3), _offs(lib), out_dtype=lib.bfloat16),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3[..., :5]), _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, B3)[:, ::2], _offs(lib)),
        lambda lib: lib._grouped_mm(_t(lib, B3[:2]), _t(lib, B3)),
        lambda lib: lib._grouped_mm(_t(lib, A2, "bfloat16"), _t(lib, B3), _offs(lib)),
    ],
)
def test_grouped_mm_errors(case):
    expected, got = _run(torch, case), _run(ember, case)
    assert got[:3] == expected[:3]


def test_grouped_mm_padded_output_stride():
    """The output's rows are padded to 16 bytes, as PyTorch's grouped GEMM output."""
    b = np.random.default_rng(4).standard_normal((3, 5, 16))
    _same(lambda lib: lib._grouped_mm(_t(lib, A2), _t(lib, b).transpose(1, 2), _offs(lib)))


@pytest.mark.parametrize("mode", ["2d3d", "2d2d", "3d2d", "3d3d"])
def test_grouped_mm_gradients(mode):
    rng = np.random.default_rng(1)
    shapes = {
        "2d3d": ((12, 16), (3, 16, 8)),
        "2d2d": ((8, 12), (12, 16)),
        "3d2d": ((3, 8, 16), (16, 12)),
        "3d3d": ((3, 8, 16), (3, 16, 8)),
    }[mode]
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    ends = [3, 7, 12]
    results = []
    for lib in (torch, ember):
        A, B = _t(lib, a).requires_grad_(), _t(lib, b).requires_grad_()
        out = lib._grouped_mm(A, B, None if mode == "3d3d" else _offs(lib, ends))
        g = _t(lib, np.random.default_rng(2).standard_normal(tuple(out.shape)))
        out.backward(g)
        results.append((type(out.grad_fn).__name__, A.grad.numpy(), B.grad.numpy()))
    assert results[1][0] == results[0][0]
    for e, r in zip(results[0][1:], results[1][1:]):
        np.testing.assert_array_equal(r, e)


FP8 = ["float8_e4m3fn", "float8_e5m2"]


def _fp8(lib, arr, dtype):
    return lib.tensor(arr, dtype=lib.float32).to(getattr(lib, dtype))


@pytest.mark.parametrize("da", FP8)
@pytest.mark.parametrize("out", ["bfloat16", "float32", "float16", "float8_e4m3fn", None])
@pytest.mark.parametrize("shape", [(16, 32, 24), (64, 256, 48)])
@pytest.mark.parametrize("recipe", ["TensorWise", "RowWise"])
def test_scaled_mm_values(da, out, shape, recipe):
    m, k, n = shape
    rng = np.random.default_rng(m + k)
    a, b = rng.standard_normal((m, k)) * 3, rng.standard_normal((n, k)) * 3
    bias = rng.standard_normal(n)
    sa, sb = (0.37, 1.73) if recipe == "TensorWise" else (rng.random((m, 1)) + 0.5, rng.random((1, n)) + 0.5)

    def call(lib, with_bias):
        F = lib.nn.functional
        kind = getattr(F.ScalingType, recipe)
        return F.scaled_mm(
            _fp8(lib, a, da),
            _fp8(lib, b, "float8_e4m3fn").t(),
            lib.tensor(sa, dtype=lib.float32),
            kind,
            lib.tensor(sb, dtype=lib.float32),
            kind,
            bias=lib.tensor(bias, dtype=lib.bfloat16) if with_bias else None,
            output_dtype=None if out is None else getattr(lib, out),
        )

    _same(lambda lib: call(lib, False))
    _same(lambda lib: call(lib, True))


@pytest.mark.parametrize("out", ["bfloat16", "float32"])
def test_scaled_mm_v1_rowwise(out):
    """torch._scaled_mm with row-wise scales (the float32 product of the scaled operands)."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((32, 64)) * 3, rng.standard_normal((16, 64)) * 3
    sa, sb = rng.random((32, 1)) + 0.5, rng.random((1, 16)) + 0.5
    _same(
        lambda lib: lib._scaled_mm(
            _fp8(lib, a, "float8_e4m3fn"),
            _fp8(lib, b, "float8_e4m3fn").t(),
            lib.tensor(sa, dtype=lib.float32),
            lib.tensor(sb, dtype=lib.float32),
            out_dtype=getattr(lib, out),
        )
    )


def test_scaling_enums():
    for lib in (torch, ember):
        F = lib.nn.functional
        assert [(k, int(v)) for k, v in F.ScalingType.__members__.items()] == [
            ("TensorWise", 0),
            ("RowWise", 1),
            ("BlockWise1x16", 2),
            ("BlockWise1x32", 3),
            ("BlockWise1x128", 4),
            ("BlockWise128x128", 5),
        ]
        assert [(k, int(v)) for k, v in F.SwizzleType.__members__.items()] == [("NO_SWIZZLE", 0), ("SWIZZLE_32_4_4", 1)]
        assert repr(F.ScalingType.RowWise) == "<_ScalingType.RowWise: 1>"
        assert str(F.SwizzleType.SWIZZLE_32_4_4) == "_SwizzleType.SWIZZLE_32_4_4"
