"""Findings of a held-out fuzzing run (tools/fuzz/fuzz.py with new seeds),
one class each, compared with PyTorch: values, exception classes and
messages."""

from __future__ import annotations

import pytest
from conftest import torch
from test_hardening import check_same

import ember

C128 = "((torch.arange(24, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).to(torch.complex128)"
SPECIAL = "torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0])"


@pytest.mark.parametrize(
    "code",
    [
        # 16-byte elements (complex128) moved as 8-byte ones: half of each
        # value, and past the end of the source.
        f"torch.take({C128}.reshape(2, 3, 2, 2), torch.tensor([[-3], [-2], [-1]]))",
        f"torch.take({C128}, torch.tensor([5, 0, 23]))",
        f"{C128}.gather(0, torch.tensor([5, 0, 23]))",
        f"{C128}.index_select(0, torch.tensor([5, 0, 23]))",
        f"{C128}[torch.tensor([5, 0, 23])]",
        f"{C128}.reshape(4, 6)[:, torch.tensor([5, 0])]",
        f"{C128}.index_put((torch.tensor([5, 0]),), torch.tensor([1j, 2.0], dtype=torch.complex128))",
        f"{C128}.masked_scatter(torch.arange(24) % 3 == 0, -{C128})",
        f"{C128}.put(torch.tensor([-1, 3]), torch.tensor([1j, 2.0], dtype=torch.complex128))",
    ],
)
def test_complex128_moves_whole_elements(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # a + alpha * b multiplies b by alpha as complex numbers even when
        # alpha is 1: an infinite part of b makes the other part nan.
        f"torch.add(torch.ones(6, dtype=torch.complex64) * (1 + 2j), {SPECIAL}.to(torch.complex64))",
        f"torch.ones(6, dtype=torch.complex128) + {SPECIAL}.to(torch.complex128)",
        f"{SPECIAL}.to(torch.complex64) + torch.ones(6, dtype=torch.complex64)",
        f"torch.ones(6, dtype=torch.complex64) - {SPECIAL}.to(torch.complex64)",
        f"torch.ones(6, dtype=torch.complex64).add({SPECIAL}.to(torch.complex64), alpha=2)",
    ],
)
def test_complex_add_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # sgn: complex64 divides by |z| + 0i as complex numbers, complex128
        # part by part (PyTorch's kernels), so inf gives nan + nan i or nan + 0i.
        f"torch.sgn({SPECIAL}.to(torch.complex64))",
        f"torch.sgn({SPECIAL}.to(torch.complex128))",
        "torch.sgn(torch.tensor([3 + 4j, complex(float('inf'), 1), complex(1, float('inf')), 1e-30 + 1e-30j]))",
    ],
)
def test_complex_sgn_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # 2**other in other's dtype, or in the complex result dtype.
        "torch.ldexp(torch.ones(3), torch.tensor([1.1, 2.0, 3.0]).to(torch.bfloat16))",
        "torch.ldexp(torch.ones(3, dtype=torch.float64), torch.tensor([1.1, 2.0, 3.0]).to(torch.bfloat16))",
        "torch.ldexp(torch.arange(3.0).to(torch.complex64), torch.tensor([0.3, 1.7, -2.2]).to(torch.bfloat16))",
        "torch.ones(3, dtype=torch.complex64).ldexp_(torch.tensor([1.1, 2.0, 3.0]).to(torch.bfloat16))",
        "torch.ldexp(torch.ones(3, dtype=torch.complex128), torch.tensor([1, 2, 3]))",
        "torch.ldexp(torch.tensor([1, 2]), torch.tensor([2, 3]))",
        "torch.ldexp(torch.tensor([1.5, 2.0], dtype=torch.float16), torch.tensor([2, -3]))",
        "torch.ldexp(torch.tensor([1.5, 2.0], dtype=torch.bfloat16), torch.tensor([2, -3]))",
    ],
)
def test_ldexp_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # Python conversions of a tensor of several elements: ValueError.
        "int(torch.ones(2))",
        "float(torch.ones(0))",
        "complex(torch.ones(2))",
        "float(torch.ones(2, dtype=torch.complex64))",
        "torch.sym_int(torch.ones(2, dtype=torch.bool))",
        "torch.sym_float(torch.ones(0))",
        "torch.sym_sqrt(torch.ones(3))",
        # The symbolic-size helpers outside tracing.
        "torch.sym_sum()",
        "torch.sym_sum(torch.arange(3))",
        "torch.sym_sum([1, 2])",
        "torch.sym_sum(1, 2, 3)",
        "torch.sym_ite(1, 2, 3)",
        "torch.sym_ite(True, 2, 3.0)",
        "torch.sym_ite(False, torch.ones(1), torch.ones(2))",
        "torch.sym_fresh_size((1,))",
        "torch.sym_fresh_size((1, 2))",
        "torch.sym_fresh_size(torch.tensor(2.5))",
        "torch.sym_fresh_size(None)",
        "torch.sym_fresh_size('')",
        "torch.sym_fresh_size((2**63, 1))",
        "torch.sym_constrain_range(torch.tensor(5), min=0, max=3)",
        "torch.sym_constrain_range(torch.tensor([5, 6]))",
        "torch.sym_constrain_range((1, 2))",
        "torch.sym_constrain_range(5.5, min=0, max=3)",
        "torch.sym_constrain_range(True)",
    ],
)
def test_python_level_helpers_as_torch(code):
    check_same(code)


@pytest.mark.parametrize("value", ["3", "''", "torch.int16", "torch.ones(1)", "None", "1.0"])
def test_set_warn_always_takes_only_a_bool(value):
    try:
        check_same(f"torch.set_warn_always({value})")
    finally:
        torch.set_warn_always(False)
        ember.set_warn_always(False)
    assert ember.is_warn_always_enabled() is False


@pytest.mark.parametrize(
    "code",
    [
        # Python-level functions with PyTorch's binding signatures: a wrong
        # argument type is the binding's TypeError.
        "torch.segment_reduce(torch.ones(0), 3, lengths=torch.float16)",
        "torch.segment_reduce(torch.ones(1), torch.ones(1), initial=[])",
        "torch.segment_reduce(torch.ones(2), 'sum', lengths=torch.tensor([1, 1]), initial=1.5)",
        "torch.ones(3).nonzero_static(size=(0,), fill_value=2.0)",
        "torch.nonzero_static(torch.ones(1), size=(-2, 2**62), fill_value=2.0)",
        "torch.ones(3).nonzero_static(size=4, fill_value=True)",
        "torch.nonzero_static(torch.ones(3), size=4, out=torch.ones(2, 1, dtype=torch.int64))",
        "torch.ones(3).index_reduce_(0, torch.tensor([0]), torch.ones(1), 'prod', include_self=1)",
        "torch.ones(3).index_reduce_(-2**63, torch.ones(0), torch.ones(6), 'prod')",
        "torch.ones(3).index_reduce_(1, torch.tensor([0]), torch.ones(1), 'prod')",
        "torch.index_reduce(torch.ones(3), 0, torch.tensor([0]), 2 * torch.ones(1), 'prod', out=torch.ones(3))",
        "torch.ones(0).to_sparse_coo(torch.ones(0, dtype=torch.int64))",
        "torch.ones(2).to_sparse_coo().to_dense()",
        # Tensor.resize multiplies its arguments as given: a tuple never matches.
        "torch.ones(4).resize(torch.ones(2, 3))",
        "torch.ones(4).resize((2, 2))",
        "torch.ones(4).resize(2, 2)",
        "torch.ones(4).resize(2, 3)",
        # index_select checks the dim, the index's rank and count, then its dtype.
        "torch.index_select(torch.ones(()), -2, torch.ones(3))",
        "torch.index_select(torch.ones(2, 3), 2**63 - 1, torch.ones(0))",
        "torch.index_select(torch.ones(2), 0, torch.ones(2, 2))",
        "torch.index_select(torch.ones(()), 0, torch.ones(3))",
    ],
)
@pytest.mark.filterwarnings("ignore")
def test_argument_checks_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # PyTorch's Python code reads sizes before the binding checks the rank.
        "F.fractional_max_pool3d(torch.ones(0), 2, output_size=1)",
        "F.fractional_max_pool2d(torch.ones(3), 2, output_size=1)",
        "F.fractional_max_pool2d(torch.ones(()), 2, output_size=1)",
        "F.fractional_max_pool2d(torch.ones(2, 3), 2, output_ratio=0.5)",
        "F.fractional_max_pool2d(torch.ones(2, 3), 2, output_ratio=(0.5, 0.5))",
        "F.fractional_max_pool3d(torch.ones(2, 3, 3), 2, output_size=1)",
        "F.fractional_max_pool2d_with_indices(torch.ones(3), 2, output_size=1)",
        "F.fractional_max_pool2d(torch.ones(1, 4, 4), 2, output_ratio=(0.5, 0.5), "
        "_random_samples=torch.full((1, 1, 2), 0.3))",
        # gradient checks its dims' range first (IndexError).
        "torch.gradient(torch.ones(0), dim=-2)",
        "torch.gradient(torch.ones(3, 3), dim=(0, -3))",
        "torch.gradient(torch.ones(3), dim=-1)",
        # to_dense's argument types.
        "torch.ones(2).to_dense(3)",
        "torch.ones(2).to_dense(None, masked_grad=1)",
        "torch.ones(2).to_dense(torch.complex64, masked_grad='mean')",
        "torch.ones(2).to_dense(torch.float64, masked_grad=True)",
    ],
)
def test_python_functional_checks_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # Argument types checked as PyTorch's bindings (and its Python
        # wrappers) check them, before any other error.
        "torch.ones(4).symeig(torch.ones(2), 0.5)",
        "torch.ones(4).symeig(True)",
        "torch.set_autocast_enabled(torch.ones(2))",
        "torch.set_autocast_enabled('cpu', 1)",
        "torch.set_autocast_enabled(True, True)",
        "torch.set_autocast_cpu_enabled(torch.ones(2))",
        "torch.set_autocast_cpu_enabled(1)",
        "torch.set_autocast_xla_enabled(1)",
        "torch.meshgrid(indexing=0.0)",
        "torch.meshgrid(torch.ones(2), indexing=0.0)",
        "torch.meshgrid(torch.ones(2), 3)",
        "torch.meshgrid([torch.ones(2), torch.ones(3)], indexing='xy')",
        "torch.ones(2, 2).indices([-1.5])",
        "torch.ones(2, 2).values(0.0, [-1])",
        "torch.ones(2, 2).coalesce(a=1)",
        "torch.ones(2, 2).coalesce()",
        "torch.ones(2).geometric_(torch.ones(3))",
        "torch.ones(2).geometric_(0.5, generator='')",
        "torch.ones(2).log_normal_(torch.ones(3))",
        "torch.ones(2).log_normal_(std=2).shape",
        "torch.empty_permuted((4,), torch.ones(2, 3), dtype=torch.float16)",
        "torch.empty_permuted((4, 2), (1, 0), dtype=torch.float16).stride()",
    ],
)
@pytest.mark.filterwarnings("ignore")
def test_binding_argument_types_as_torch(code):
    try:
        # Python names the method Tensor.symeig in PyTorch, symeig here.
        check_same(code, message="symeig" not in code)
    finally:
        torch.set_autocast_enabled("cpu", False)
        ember.set_autocast_enabled("cpu", False)


@pytest.mark.parametrize(
    "code",
    [
        # hinge_embedding_loss computes margin - input in input's dtype.
        "torch.hinge_embedding_loss(torch.tensor([1, -3, 2], dtype=torch.int32), "
        "torch.tensor([1, -1, 1], dtype=torch.int8))",
        "F.hinge_embedding_loss(torch.tensor([1, -3, 2], dtype=torch.int16), "
        "torch.tensor([1.0, -1, 1], dtype=torch.float64), reduction='none')",
        "F.hinge_embedding_loss(torch.tensor([1, -3, 2], dtype=torch.int16), torch.tensor([1.0, -1, 1]))",
        "F.hinge_embedding_loss(torch.tensor([1, -3, 2]), torch.tensor([1.0, -1, 1]), margin=0.7, reduction='sum')",
        "F.hinge_embedding_loss(torch.tensor([1.0, -3, 2]), torch.tensor([1.0, -1, 1]), margin=0.7)",
        # l1_loss with weight: the mean divides by the weights' sum.
        "F.l1_loss(torch.tensor([1.0, 2, 3]), torch.tensor([0.0, 0, 0]), weight=torch.tensor([1.0, 2, 3]))",
        "F.l1_loss(torch.tensor([1.5, -2.0], dtype=torch.float16), torch.tensor([1, -3], dtype=torch.int16), "
        "weight=torch.tensor([-3, 2], dtype=torch.int16))",
        "F.l1_loss(torch.tensor([1.0, 2, 3]), torch.tensor([0.0, 0, 0]), weight=torch.tensor([1.0, 2]))",
        # soft_margin_loss rounds each step to input's dtype.
        "F.soft_margin_loss(torch.ones(4, dtype=torch.float16), torch.ones(4, dtype=torch.bfloat16))",
        "F.soft_margin_loss(torch.tensor([0.3, -1.2]), torch.tensor([1.0, -1], dtype=torch.float64))",
        "F.soft_margin_loss(torch.tensor([3, -1]), torch.tensor([1.0, -1]))",
    ],
)
def test_loss_dtypes_as_torch(code):
    check_same(code)


@pytest.mark.parametrize("fn", ["soft_margin_loss", "hinge_embedding_loss"])
def test_loss_gradients_as_torch(fn):
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([0.3, -1.2, 2.5], requires_grad=True)
        getattr(lib.nn.functional, fn)(x, lib.tensor([1.0, -1.0, -1.0])).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1], rel=1e-6)


@pytest.mark.parametrize(
    "code",
    [
        # PyTorch's own refusals of complex operands (RuntimeError), checked
        # before broadcasting and the kernel's dtype check.
        "torch.full((1,), 0.5).to(torch.complex128).expand((4,)).deg2rad()",
        "torch.ones(2, dtype=torch.complex64).rad2deg_()",
        "torch.ones(0, dtype=torch.bool).fmax(torch.ones(0, dtype=torch.complex64))",
        "torch.fmin(torch.ones(2, dtype=torch.complex128), torch.ones(2))",
        "torch.minimum(torch.ones(2, dtype=torch.complex128), torch.ones(3, dtype=torch.complex128))",
        "torch.maximum(torch.ones(2), torch.ones(2, dtype=torch.complex64))",
        "torch.maximum(torch.ones(2), torch.ones(2), out=torch.ones(2, dtype=torch.complex64))",
        "torch.heaviside(torch.ones(2, dtype=torch.complex128), torch.ones(3))",
        "torch.ones(2).heaviside_(torch.ones(2, dtype=torch.complex64))",
    ],
)
def test_complex_refused_with_torch_text(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # nan_to_num replaces nan and infinities in both parts of complex values.
        "torch.nan_to_num(torch.tensor([complex(float('nan'), float('inf')), complex(float('-inf'), 2), 1 + 1j]))",
        "torch.nan_to_num(torch.tensor([complex(float('nan'), float('inf'))]), nan=1.5, posinf=2.0)",
        "torch.nan_to_num(torch.tensor([complex(float('nan'), float('inf'))], dtype=torch.complex128).conj())",
        "torch.tensor([complex(float('nan'), float('inf'))]).nan_to_num_()",
        # sum_to_size(()) is a full sum: integers widen to int64.
        "torch.tensor(3, dtype=torch.int8).sum_to_size(())",
        "torch.tensor([3], dtype=torch.int8).sum_to_size((1,))",
        "torch.ones(2, 3, dtype=torch.int8).sum_to_size(3)",
    ],
)
def test_values_found_held_out(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # alias_copy and slice_copy (Tensor has no alias() or slice()).
        "torch.alias_copy(torch.ones(2, 0, 3, dtype=torch.int32))",
        "torch.alias_copy(torch.ones(4).expand(2, 4))",
        "torch.slice_copy(torch.ones(2, 3), 4)",
        "torch.slice_copy(torch.ones(2, 3), 1, -5, 2)",
        "torch.slice_copy(torch.ones(2, 3), 1, None, None, 2)",
        "torch.slice_copy(torch.ones(2, 3), step=0)",
        "torch.slice_copy(torch.ones(2, 3), 1, 2**63 - 1)",
        "torch.slice_copy(torch.ones(()))",
        "torch.slice_copy(torch.arange(4).expand(2, 4), 1, 1)",
        # prelu refuses mixed dtypes before its shape checks.
        "torch.prelu(torch.ones(2, 3, 4), torch.arange(3) % 3 == 0)",
        "torch.prelu(torch.ones((), dtype=torch.float64), torch.ones(3))",
        "F.prelu(torch.ones(2, 3), torch.ones(1, dtype=torch.float16))",
        "F.prelu(-torch.ones(2, 3), torch.full((3,), 0.25))",
        # Complex dtypes in the messages of Python-level losses and similarities.
        "torch.cosine_similarity(torch.ones(2, 2, 3, dtype=torch.uint8), torch.ones(2, 2, 3, dtype=torch.complex128))",
    ],
)
def test_copies_and_messages_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # dim_order: a contiguous (or channels-last only) tensor has that
        # order whatever the strides of its size-1 dimensions.
        "torch.arange(3).reshape((3, 1)).transpose(0, -1).dim_order()",
        "torch.ones(2, 0, 3).transpose(0, -1).dim_order()",
        "torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last).dim_order()",
        "torch.ones(1, 3, 1, 1).dim_order()",
        "torch.ones(2, 1, 4, 5).to(memory_format=torch.channels_last).dim_order()",
        "torch.ones(2, 3, 4).permute(2, 0, 1).dim_order()",
        "torch.ones(3, 1).expand(3, 4).dim_order()",
    ],
)
def test_dim_order_as_torch(code):
    check_same(code)


_LDEXP_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
_LDEXP_X = "[0.0, -0.0, 1.0, -1.5, 3.25, 1e-30, -7e30, 1e-40, float('inf'), float('nan'), 5.0, 2.0, 2.0, 2.0, 0.75]"
_LDEXP_E = "[0, 1, -1, 5, -5, 60, -126, -149, -1070, 128, 1000, -151, 3, 2, -2]"


def _ldexp_operand(values, dtype):
    if dtype == "bool":
        return f"(torch.tensor({values}, dtype=torch.float64) != 0)"
    return f"torch.tensor({values}, dtype=torch.float64).to(torch.{dtype})"


@pytest.mark.parametrize("self_dtype", _LDEXP_DTYPES)
@pytest.mark.parametrize("other_dtype", _LDEXP_DTYPES)
def test_ldexp_routes_as_torch(self_dtype, other_dtype):
    # A floating input with an integral exponent is scaled exactly (no
    # under- or overflow of 2**other, inf * 2**-1070 is inf); everything
    # else is input * pow(2, other) in PyTorch's dtypes.
    if self_dtype == "complex64" and other_dtype in ("float16", "bfloat16"):
        pytest.skip("PyTorch computes 2**other in ComplexHalf there, a dtype Ember does not have")
    x = _ldexp_operand(_LDEXP_X, self_dtype)
    e = _ldexp_operand(_LDEXP_E, other_dtype)
    check_same(f"torch.ldexp({x}, {e})")
    check_same(f"torch.ldexp({x}[:1], {e})")
    check_same(f"{x}.ldexp_({e})")
    for out in ("float32", "float64", "int64", "float16"):
        # An out= dtype other than a floating input's, with an integral
        # exponent, fails an internal check in PyTorch: same class, own message.
        check_same(f"torch.ldexp({x}, {e}, out=torch.empty(15, dtype=torch.{out}))", message=False)


@pytest.mark.parametrize(
    "code",
    [
        # The exponent is converted to int: 2**31 + 5 wraps to a large negative one.
        "torch.ldexp(torch.ones(3), torch.tensor([2**31 + 5, -(2**33), 4]))",
        "torch.ldexp(torch.ones(3, 4).t(), torch.ones(4, 3, dtype=torch.int64)).stride()",
        "torch.ldexp(torch.ones(3, 4), torch.ones(4, 3, dtype=torch.int64).t()).stride()",
        "torch.ldexp(torch.ones(3, 1), torch.ones(1, 4, dtype=torch.int64)).stride()",
        "torch.ldexp(torch.ones(3), 2)",
    ],
)
def test_ldexp_exponent_wrap_strides_and_errors_as_torch(code):
    check_same(code)


@pytest.mark.parametrize("exponent", ["torch.tensor([1, -2, 3])", "torch.tensor([1.0, -2.0, 3.5], requires_grad=True)"])
def test_ldexp_gradients_as_torch(exponent):
    # LdexpBackward0: PyTorch's input gradient is grad * 2**other, in
    # integer arithmetic for an integral exponent (0 for a negative one).
    def run(lib):
        x = lib.tensor([1.5, 2.0, -3.0], requires_grad=True)
        other = eval(exponent, {"torch": lib})
        y = lib.ldexp(x, other)
        y.backward(lib.tensor([1.0, 0.5, 2.0]))
        grads = [x.grad.tolist(), other.grad.tolist() if other.requires_grad else None]
        return repr(y), type(y.grad_fn).__name__, grads

    assert run(ember) == run(torch)


@pytest.mark.parametrize(
    "code",
    [
        # diff of order 0 checks prepend/append, then copies the input alone.
        "torch.diff(torch.arange(3.0), n=0, append=torch.arange(3.0))",
        "torch.diff(torch.arange(3.0), n=0, prepend=torch.ones(2))",
        "torch.diff(torch.arange(3.0), n=0, append=torch.ones(2, 2))",
    ],
)
def test_diff_of_order_zero_as_torch(code):
    check_same(code, message=False)


@pytest.mark.parametrize("p", ["0", "0.5", "2", "3", "-2", "2**63-1", "-(2**63)", "1e300", "float('inf')"])
def test_vector_norm_of_one_element_per_result_as_torch(p):
    # One element per result: PyTorch's norm is its magnitude (no power and root).
    x = "torch.tensor([[1.9], [-3.0], [0.0], [1e200]], dtype=torch.float64)"
    check_same(f"torch.linalg.vector_norm({x}, {p}, dim=1)")
    check_same(f"torch.linalg.vector_norm({x}[1], {p})")
    check_same(f"torch.norm({x}[0, 0], p={p}, keepdim=True)")
