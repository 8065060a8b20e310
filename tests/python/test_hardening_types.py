"""Exception classes of argument checks, as PyTorch raises them: one test per
class of "other exception type" findings of the differential fuzzer
(tools/fuzz/fuzz.py), each compared with PyTorch (class and message)."""

from __future__ import annotations

import pytest
from test_hardening import check_same

X = "torch.ones(3)"
M = "torch.ones(2, 3)"


@pytest.mark.parametrize(
    "code",
    [
        # A float parameter takes bools and 0-dim tensors that do not
        # require grad, as PyTorch's argument parser does.
        f"{X}.isclose({X}, torch.tensor(1))",
        f"{X}.isclose({X}, torch.tensor(True), torch.tensor(0.5))",
        f"{X}.isclose({X}, True)",
        f"{X}.nan_to_num(True, posinf=torch.tensor(7.5), neginf=False)",
        f"F.cosine_similarity({X}, {X}, 0, torch.tensor(0.5))",
        "torch.full((1,), 0.5).expand((2, 2)).nan_to_num_(posinf=False, neginf=2.0)",
        # A complex 0-dim tensor passes the check and fails the conversion.
        f"{X}.isclose({X}, torch.tensor(1+2j))",
        # Still refused: more than one element, or requiring grad.
        f"{X}.nan_to_num(torch.tensor([7.5]))",
        f"{X}.nan_to_num(torch.tensor(7.5, requires_grad=True))",
    ],
)
def test_float_arguments_take_bools_and_0dim_tensors(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # PyTorch picks these functions' forms by a flag's truth value first:
        # a tensor of several elements raises RuntimeError there.
        "torch.unique_consecutive(torch.ones(3, 1), True, torch.ones(6))",
        "torch.unique_consecutive(torch.ones(3), torch.ones(2))",
        "torch.ones(3, 1).unique_consecutive(torch.ones(3, 1), True, dim=3)",
        "torch.unique(torch.ones(3), True, torch.ones(2))",
        "torch.ones(3).unique(return_counts=torch.zeros(0))",
        "F.max_pool2d(torch.ones(1, 4, 4), 2, return_indices=torch.ones(2))",
        "F.max_pool1d(torch.ones(1, 4), 2, 2, 0, 1, False, torch.ones(2))",
        "F.adaptive_max_pool2d(torch.ones(1, 4, 4), 2, torch.ones(2))",
        "F.fractional_max_pool2d(torch.ones(1, 4, 4), 2, output_size=2, return_indices=torch.ones(2))",
        # A one-element flag passes; the binding then refuses the Tensor.
        "torch.unique(torch.ones(3), True, torch.tensor(1))",
        "F.max_pool2d(torch.ones(1, 4, 4), 2, return_indices=torch.ones(1))",
        # *_with_indices never reads return_indices.
        "F.max_pool2d_with_indices(torch.ones(1, 4, 4), 2, return_indices=torch.ones(2))",
        "F.max_pool2d_with_indices(torch.ones(1, 4, 4), (-2, 3, 2**31), padding=(1, 2, 2), "
        "return_indices=torch.ones(3))",
    ],
)
def test_boolean_dispatch_flags_tested_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # Losses and samplers that PyTorch writes in Python around one
        # binding: a wrong type is the binding's TypeError, before any shape
        # check.
        f"F.cross_entropy({X}, {X}, (1, 2))",
        "F.nll_loss(torch.ones(3, 2), torch.tensor([0, 1, 1]), -1.5, ())",
        f"F.cosine_embedding_loss({X}, {X}, {M}, torch.ones(2))",
        f"F.hinge_embedding_loss({X}, {X}, torch.ones(2))",
        f"F.poisson_nll_loss({X}, {X}, torch.ones(2))",
        f"F.kl_div({X}, 2)",
        f"F.multilabel_margin_loss({X}, 5)",
        "F.grid_sample(torch.ones(1, 1, 2, 2), 0)",
        # What the Python code reads itself keeps its own error, or none.
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), reduction=3)",
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), None, None, -100, None, 'mean', 0.1)",
        f"F.soft_margin_loss({X}, {X}, True, False)",
        f"F.triplet_margin_loss({M}, {M}, {M}, margin=-1)",
        "F.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), 'bad')",
    ],
)
def test_python_losses_check_binding_types(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        f"F.triplet_margin_loss({M}, {M}, {M}, swap=torch.ones(2))",
        "F.ctc_loss(False, (1, 4, -2), torch.ones(3), torch.ones(6), 'none')",
    ],
)
def test_python_losses_check_binding_types_class_only(code):
    # The message names the same argument; PyTorch's also lists the
    # arguments the Python code added.
    check_same(code, message=False)


@pytest.mark.parametrize(
    "fn", ["torch.det", "torch.logdet", "torch.linalg.slogdet", "torch.linalg.cholesky", "torch.cholesky"]
)
@pytest.mark.parametrize(
    "arg",
    [
        "torch.ones(2, 3, dtype=torch.float16)",
        "torch.ones(2, 2, dtype=torch.float16)",
        "torch.ones(3, dtype=torch.bfloat16)",
        "torch.ones(2, 3, dtype=torch.int64)",
        "torch.ones(3, dtype=torch.bool)",
    ],
)
def test_lu_and_cholesky_check_shape_before_low_precision_dtypes(fn, arg):
    # PyTorch's order: the matrix shape, then integer dtypes, then the
    # kernel's dtypes (logdet and slogdet name low-precision dtypes).
    check_same(f"{fn}({arg})")


@pytest.mark.parametrize(
    "arg",
    [
        "torch.ones(2, 3, dtype=torch.float16)",
        "torch.ones(3, dtype=torch.int64)",
        "torch.ones(2, 2, dtype=torch.int64)",
    ],
)
def test_cholesky_inverse_checks_shape_then_dtype(arg):
    check_same(f"torch.cholesky_inverse({arg})")
