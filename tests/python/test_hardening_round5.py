"""Findings of a fifth held-out fuzzing round (tools/fuzz/fuzz.py, new
seeds), one class each, compared with PyTorch: values, exception classes and
messages."""

from __future__ import annotations

import pytest
from test_hardening import check_same


# size()/stride() take PyTorch's "(int? dim=None)": a keyword, None, and
# the parser's int rules (no bool or float; a one-element integer tensor).
@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize(
    "args",
    [
        "",
        "1",
        "dim=1",
        "dim=-2",
        "None",
        "dim=None",
        "True",
        "1.0",
        "'a'",
        "dim='a'",
        "1, 2",
        "1, dim=1",
        "d=1",
        "5",
        "-3",
        "torch.tensor(1)",
        "dim=torch.tensor(-1)",
        "2**63",
    ],
)
def test_size_and_stride_arguments_as_torch(method, args):
    check_same(f"torch.zeros(2, 3)[:, ::2].{method}({args})", message=False)
    check_same(f"torch.zeros(2, 3).{method}({args})", message=args != "1, 2")


# A uint8 out= makes uint8 the reduction's dtype: the input is read as uint8
# (0.5, 256, NaN count as zero) unless a single element is reduced.
@pytest.mark.parametrize("fn", ["any", "all"])
@pytest.mark.parametrize(
    "x",
    [
        "torch.tensor([0.5, 0.0])",
        "torch.tensor([0.5, 2.0])",
        "torch.tensor([256, 1])",
        "torch.tensor([float('nan'), 1.0])",
        "torch.tensor([0.5])",
        "torch.tensor(0.5)",
        "torch.tensor([0.5] * 100)",
        "torch.tensor([True, False])",
        "torch.full((1,), 0.5).expand(2, 3, 4)",
        "torch.tensor([[0.5, 3.0], [1.0, 0.25]], dtype=torch.float64).t()",
    ],
)
def test_all_any_into_uint8_read_the_input_as_uint8(fn, x):
    check_same(f"torch.{fn}({x}, out=torch.zeros((), dtype=torch.uint8))")
    check_same(f"torch.{fn}({x}, out=torch.zeros((), dtype=torch.bool))")
    if "expand" not in x and x != "torch.tensor(0.5)":
        check_same(f"torch.{fn}({x}.reshape(-1, 1), 0, out=torch.zeros(1, dtype=torch.uint8))")


# A complex mean divides the sum by the count as a complex number.
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "call",
    [
        "torch.mean({x})",
        "{x}.mean(0)",
        "{x}.reshape(2, 3).mean(1, keepdim=True)",
        "torch.mean({x}[:0])",
        "torch.mean({x}, dtype=torch.complex128)",
    ],
)
def test_complex_mean_as_torch(call, dtype):
    x = f"torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0]).to(torch.{dtype})"
    check_same(call.format(x=x))
    # (sums the count divides exactly: Ember's complex division may differ from
    # PyTorch's in the last bit)
    x = f"(torch.tensor([float('inf'), 1.0, 2.0, 3.0, -1.0, 4.0]) + 3j).to(torch.{dtype})"
    check_same(call.format(x=x))


# Samplers visit a transposed or permuted tensor in memory order.
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("draw", ["cauchy_()", "log_normal_()", "geometric_(0.3)", "exponential_()", "uniform_()"])
@pytest.mark.parametrize(
    "view",
    [
        "torch.zeros(2, 3)",
        "torch.zeros(2, 3).t()",
        "torch.zeros(2, 3, 4).permute(2, 0, 1)[:, :, ::2]",
        "torch.zeros(20, 3).t()",
        "torch.zeros(4, 6)[::2].t()",
    ],
)
def test_samplers_fill_in_memory_order(dtype, draw, view):
    # (log_normal_'s double exp may differ from PyTorch's in the last bit: compared in float)
    tail = ".float()" if draw.startswith("log_normal_") else ""
    check_same(f"(torch.manual_seed(0), {view}.to(torch.{dtype}).{draw})[1]{tail}")


# Complex clamp: PyTorch's refusal of a complex self first, the loop's
# "not implemented" for a complex bound.
@pytest.mark.parametrize(
    "code",
    [
        "torch.clamp_min(torch.zeros(2), torch.zeros(2, dtype=torch.complex64))",
        "torch.clamp_min(torch.zeros(2, dtype=torch.complex64), torch.zeros(2))",
        "torch.clamp_max(torch.zeros(2, dtype=torch.complex64), torch.zeros(3))",
        "torch.clamp_max(torch.zeros(2), torch.zeros(2, dtype=torch.complex128))",
        "torch.clamp(torch.zeros(2), torch.zeros(2, dtype=torch.complex64), torch.zeros(2))",
        "torch.clamp(torch.zeros(2, dtype=torch.complex64), torch.zeros(3), torch.zeros(2))",
        "torch.clamp(torch.zeros(2), max=torch.zeros(2, dtype=torch.complex64))",
        "torch.clamp(torch.zeros(2), torch.zeros(2, dtype=torch.complex64), torch.zeros(3))",
        "torch.zeros(2).clamp_(torch.zeros(2, dtype=torch.complex64))",
        "torch.clamp(torch.zeros(0), torch.zeros(0, dtype=torch.complex64))",
        "torch.tensor(True).clip(torch.tensor(1j, dtype=torch.complex128))",
        "torch.zeros(2, dtype=torch.complex64).clip(torch.zeros(3, 1, dtype=torch.int8))",
        "torch.zeros(2, 3, dtype=torch.complex64).clamp_(min=torch.zeros(6))",
    ],
)
def test_complex_clamp_refusals_as_torch(code):
    check_same(code)


# ceil/floor/trunc/fix/sign refuse complex inputs before out= and overlap checks.
@pytest.mark.parametrize("fn", ["ceil", "floor", "trunc", "fix", "sign"])
@pytest.mark.parametrize(
    "call",
    [
        "torch.{fn}({z})",
        "torch.{fn}({z}, out=torch.zeros(2))",
        "torch.{fn}({z}.expand(2, 2), out=torch.zeros(1).expand(2, 2))",
        "{z}.expand(2, 2).{fn}_()",
        "{z}.{fn}_()",
        "torch.{fn}({z}[:0], out=torch.zeros(0, dtype=torch.complex128))",
    ],
)
def test_rounding_refuses_complex_first(fn, call):
    check_same(call.format(fn=fn, z="torch.zeros(2, dtype=torch.complex64)"))


# Python-level argument rules.
@pytest.mark.parametrize(
    "code",
    [
        "torch.zeros(2).new_tensor(1, pin_memory=False)",
        "torch.zeros(2).new_tensor((), dtype=torch.int64, device=None, layout=False)",
        "torch.zeros(2).new_tensor(data=1)",
        "torch.zeros(2).new_tensor(1, 2)",
        "torch.sym_constrain_range(torch.tensor(3))",
        "torch.sym_constrain_range(torch.tensor([3]))",
        "torch.sym_constrain_range(torch.tensor(3.5), max=2)",
        "torch.sym_constrain_range(torch.tensor([3.5]))",
        "torch.sym_constrain_range(3, max=2)",
        "torch.sym_constrain_range(3, min=5)",
        "torch.sym_constrain_range(3.5, max=2)",
        "torch.sym_constrain_range(torch.tensor(3j))",
        "torch.sym_constrain_range('a')",
        "torch.sym_constrain_range_for_size(torch.tensor([3.5]))",
        "torch.sym_constrain_range_for_size(3, max=2)",
        "torch.sym_constrain_range_for_size(-1)",
        "torch.sym_constrain_range_for_size(1)",
        "torch.sym_constrain_range_for_size(5, min=6)",
        "torch.is_distributed(-1)",
        "torch.is_distributed(None)",
        "torch.is_distributed(torch.zeros(1))",
        "torch.broadcast_tensors(())",
        "torch.broadcast_tensors([])",
        "torch.broadcast_tensors()",
        "torch.broadcast_tensors((torch.zeros(1),))",
        "torch.broadcast_tensors([torch.zeros(1), torch.zeros(2, 1)])",
        "torch.broadcast_tensors(torch.zeros(1), torch.zeros(2, 1))",
        "torch.pdist(torch.zeros(2, 3, dtype=torch.int8))",
        "torch.pdist(torch.zeros(2, 3, dtype=torch.int8), p=-1)",
        "torch.pdist(torch.zeros(2, 3, dtype=torch.bool))",
        "torch.pdist(torch.zeros(2, 3, dtype=torch.complex64))",
        "torch.pdist(torch.zeros(2, 3, dtype=torch.bfloat16))",
        "F.pdist(torch.zeros(3, 1, dtype=torch.float16))",
        "torch.pdist(torch.zeros(1, 3, dtype=torch.bfloat16))",
        "torch.pdist(torch.zeros(0, 3, dtype=torch.float16))",
        "torch.pdist(torch.zeros(3, dtype=torch.int8), p=-1)",
        "torch.pdist(torch.arange(6.).reshape(3, 2), p=0)",
    ],
)
def test_python_level_rules_as_torch(code):
    check_same(code)


# torch.lu / Tensor.lu read get_infos's truth value first.
@pytest.mark.parametrize(
    "code",
    [
        "torch.eye(3).lu(torch.ones(2, 2), torch.ones(3))",
        "torch.eye(3).lu(torch.ones(2, 2), torch.ones(0))",
        "torch.eye(3).lu(True, torch.ones(1))",
        "torch.lu(torch.eye(3), torch.ones(2, 2), torch.ones(3))",
        "torch.eye(3).lu(torch.ones(2, 2))",
    ],
)
def test_lu_reads_get_infos_first(code):
    check_same(code, message=False)


# Adaptive max pooling checks sizes (the parser's int64 range, the rank,
# empty planes, negative output sizes) before the dtype, as PyTorch.
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64", "complex64", "float32"])
@pytest.mark.parametrize(
    "call",
    [
        "F.adaptive_max_pool2d_with_indices({x}(2, 3, 4), -1)",
        "F.adaptive_max_pool2d_with_indices({x}(1), 2**64, return_indices=True)",
        "F.adaptive_max_pool2d({x}(()), -2**63-1)",
        "F.adaptive_max_pool2d({x}(2, 0, 3), -2**62)",
        "F.adaptive_max_pool2d({x}(2, 3, 4), (2, None))",
        "F.adaptive_max_pool2d({x}(2, 3, 4), 0)",
        "F.adaptive_max_pool1d({x}(2, 0, 3), (3,))",
        "F.adaptive_max_pool1d({x}(3, 2, 2).transpose(0, -1), -1, return_indices=True)",
        "F.adaptive_max_pool1d({x}(3, 1), -2)",
        "F.adaptive_max_pool1d({x}(3, 4), 2**63)",
        "F.adaptive_max_pool1d({x}(2, 3, 4), 2)",
        "F.adaptive_max_pool3d_with_indices({x}(3, 2), 2**63)",
        "F.adaptive_max_pool3d({x}(2, 3, 4, 5), -1)",
        "F.adaptive_max_pool3d({x}(2, 0, 4, 5), 2)",
        "F.adaptive_max_pool3d({x}(2, 3, 4, 5), (2, None, 3))",
    ],
)
def test_adaptive_max_pool_checks_in_torch_order(dtype, call):
    check_same(call.format(x=f"torch.ones(1, dtype=torch.{dtype}).expand").replace(".expand(())", ".reshape(())"))


# cosine_similarity checks eps first; renorm's maxnorm check refuses NaN.
@pytest.mark.parametrize(
    "code",
    [
        "F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), eps=-1.5)",
        "F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), eps=float('nan'))",
        "F.cosine_similarity(torch.ones(2, 3, dtype=torch.int8), torch.ones(2, 3), eps=-1.5)",
        "F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 4), eps=-1.5)",
        "F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), dim=5, eps=-1.5)",
        "F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), eps=0)",
        "torch.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), eps=-1)",
        "torch.ones(2, 3).renorm_(True, 2, float('nan'))",
        "torch.ones(2, 3).renorm(2, 0, float('nan'))",
        "torch.ones(2, 3).renorm(2, 0, -1)",
        "torch.ones(2, 3).renorm(2, 0, 0.5)",
    ],
)
def test_eps_and_maxnorm_checks_as_torch(code):
    check_same(code)


# binary_cross_entropy_with_logits computes in place into (1 - target), as
# PyTorch: the loss has the target's shape and dtype, and an input that
# broadcasts beyond it, or a result the target's dtype cannot hold, is
# PyTorch's in-place error.
@pytest.mark.parametrize(
    "code",
    [
        "{T}(torch.zeros(0), torch.arange(4.).reshape(1, 4, 1))",
        "{T}(torch.arange(4.).reshape(1, 4, 1), torch.tensor([0.0, 1.0, 0.5]))",
        "{T}(torch.arange(3.).reshape(3, 1), torch.linspace(0, 1, 6))",
        "{T}(torch.arange(6.).reshape(2, 3), torch.linspace(0, 1, 3), reduction=1)",
        "{T}(torch.linspace(-1, 1, 3), torch.linspace(0, 1, 6).reshape(2, 3))",
        "{T}(torch.linspace(-2, 2, 3).double(), torch.linspace(0, 1, 3))",
        "{T}(torch.linspace(-1, 1, 3), torch.linspace(0, 1, 3).double())",
        "{T}(torch.linspace(-2, 2, 6).half().reshape(2, 3), torch.tensor([0.5]).half(),"
        " torch.ones(3, dtype=torch.complex64))",
        "{F}(torch.tensor(0.5).double(), torch.tensor(1), torch.tensor(1), torch.bool)",
        "{F}(torch.linspace(-2, 2, 3), torch.tensor([1, 0, 1]))",
        "{F}(torch.linspace(-2, 2, 3), torch.linspace(0, 1, 3), pos_weight=torch.ones(2, 3))",
        "{F}(torch.linspace(-2, 2, 6).reshape(2, 3), torch.linspace(0, 1, 6).reshape(2, 3),"
        " weight=torch.tensor([1.0, 2.0, 0.5]), pos_weight=torch.tensor([2.0, 1.0, 3.0]))",
        "{F}(torch.linspace(-2, 2, 3), torch.linspace(0, 1, 3), weight=torch.ones(2, 3))",
        "(x := torch.linspace(-2, 2, 6, dtype=torch.float64).reshape(2, 3).requires_grad_(),"
        " t := torch.linspace(0, 1, 6, dtype=torch.float64).reshape(2, 3).requires_grad_(),"
        " torch.autograd.grad({F}(x, t, pos_weight=torch.tensor([2.0, 1.0, 3.0],"
        " dtype=torch.float64)), [x, t]))[2][1]",
    ],
)
def test_bce_with_logits_in_place_steps_as_torch(code):
    check_same(code.format(T="torch.binary_cross_entropy_with_logits", F="F.binary_cross_entropy_with_logits"))
