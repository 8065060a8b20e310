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


@pytest.mark.parametrize(
    "code",
    [
        # einsum's sublist form: a Tensor first means operands and subscript lists.
        "torch.einsum(torch.ones(2, 3), [0, 1], torch.ones(3, 4), [1, 2], [0, 2])",
        "torch.einsum(torch.ones(2, 3), [0, 1], torch.ones(3, 4), [1, 2])",
        "torch.einsum(torch.ones(2, 3), [0, Ellipsis], [Ellipsis])",
        "torch.einsum(torch.ones(2, 3), [0, 60])",
        "torch.einsum(torch.ones(3)[::2], torch.ones(2, 2))",
        "torch.einsum(torch.ones(4, dtype=torch.int8), torch.ones(2, 0, 3, dtype=torch.uint8))",
        "torch.einsum(torch.tensor([float('nan'), float('inf')]), torch.ones(3))",
        # Too few arguments, also after a list of operands is unpacked.
        "torch.einsum(True, ())",
        "torch.einsum('ij')",
        "torch.einsum(5, torch.ones(2))",
        "torch.einsum('ij,jk', [torch.ones(2, 3), torch.ones(3, 4)])",
    ],
)
def test_einsum_sublist_form(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # Tensor.unflatten tests sizes' truth value before the argument types.
        "torch.ones(2, 3, 4).unflatten((1, -2), False)",
        "torch.ones(1, 4, 1).unflatten((3,), torch.ones(2, 2, 3))",
        "torch.ones(1, 4, 1).unflatten(1, ())",
        "torch.ones(1, 4, 1).unflatten((3,), torch.ones(1))",
        "torch.ones(1, 4, 1).unflatten(dim=1, sizes=(2, -1))",
        "torch.ones(1, 4, 1).unflatten(5, (2, 2))",
    ],
)
def test_unflatten_tests_sizes_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # interpolate hands size and scale_factor to the operator unconverted:
        # the input's rank is checked first, the types by the operator.
        "F.upsample_bilinear(torch.ones(3, 1, dtype=torch.int8), scale_factor=torch.zeros(0, dtype=torch.bool))",
        "F.upsample_bilinear(torch.ones(0), torch.tensor([float('nan'), 1.5, -2.0]))",
        "F.upsample_nearest(torch.ones(3, dtype=torch.float16), scale_factor=torch.ones(2))",
        "F.interpolate(torch.ones(1, 1, 4), size=(6.5,))",
        "F.interpolate(torch.ones(1, 1, 4), size=torch.tensor(6))",
        "F.interpolate(torch.ones(1, 1, 4), size=(torch.tensor(6),))",
        "F.interpolate(torch.ones(1, 1, 4), scale_factor=2.5)",
        "F.interpolate(torch.ones(1, 1, 4, 4), size=[3, True], mode='bicubic')",
    ],
)
def test_interpolate_leaves_sizes_to_the_operator(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        "F.interpolate(torch.ones(1, 1, 4), size=6.5)",
        "F.interpolate(torch.ones(1, 1, 4), scale_factor=torch.tensor(2.0))",
        "F.interpolate(torch.ones(1, 1, 4), scale_factor='a')",
    ],
)
def test_interpolate_wrong_size_types_are_type_errors(code):
    # PyTorch's operator lists its overloads; Ember's names the argument.
    check_same(code, message=False)


@pytest.mark.parametrize(
    "code",
    [
        # tensordot reads dims first (PyTorch's Python code), then its operator
        # checks the operands' and the dimension lists' types.
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), 1)",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), ([1], [0]))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), torch.tensor([[1], [0]]))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), torch.tensor(1))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), torch.tensor(-1))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), torch.tensor([1, 0, 1]))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), 2.5)",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), ([1], [0], [2]))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), (1, 0))",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), ([1], 0))",
        "torch.tensordot(True, torch.ones(3), -2**62)",
        "torch.tensordot(-3, torch.ones(0), 2)",
        "torch.tensordot(torch.ones(3), 5)",
        "torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), 0)",
    ],
)
def test_tensordot_reads_dims_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # The Python losses read size_average/reduce (truth values) and the
        # reduction name before their binding checks the other arguments.
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), (1, 2), torch.ones(2))",
        "F.nll_loss(torch.ones(1), torch.ones(3), (1,), torch.ones(3))",
        "F.hinge_embedding_loss(torch.ones(3), torch.ones(3), reduce=torch.ones(2))",
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), reduction=torch.ones(2))",
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), reduction=None)",
        "F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 1]), None, False, -100, True)",
        "F.poisson_nll_loss(torch.ones(3), torch.ones(3), reduction='elementwise_mean')",
        "F.poisson_nll_loss(torch.ones(3), torch.ones(3), reduction=5)",
        "F.poisson_nll_loss(torch.ones(3), torch.ones(3), True, False, None, 1e-8, False, 'bad')",
        "F.kl_div(torch.ones(3), torch.ones(3), reduction='batchmean')",
        "F.ctc_loss(torch.int64, 1, None, 4, reduction='bad', zero_infinity=-2)",
        "F.triplet_margin_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), reduction='x', margin=-1)",
        "F.soft_margin_loss(torch.ones(3), 5, reduction='x')",
    ],
)
def test_python_losses_read_reduction_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # fractional_max_pool: sizes read by the Python code, then the
        # binding's types, then the rank.
        "F.fractional_max_pool3d(torch.ones(6), 2, 2, _random_samples=4)",
        "F.fractional_max_pool3d(torch.ones(6), 2, False)",
        "F.fractional_max_pool3d(torch.ones(3, 2), torch.ones(0), 2)",
        "F.fractional_max_pool2d_with_indices(torch.ones(3), 2, 2, _random_samples=0.5)",
        "F.fractional_max_pool2d_with_indices(torch.ones(3, 1), (3,), output_size=2, _random_samples=torch.float32)",
        "F.fractional_max_pool2d(torch.ones(1, 4, 4), 2, output_size=2, _random_samples=torch.rand(1, 1, 2))",
        "F.fractional_max_pool2d(torch.ones(4, 4), 2, output_size=2)",
    ],
)
def test_fractional_max_pool_checks_binding_types_before_rank(code):
    check_same(code)


MHA_REST = "4, 1, torch.ones(12, 4), None, None, None, False, 0.0, torch.ones(4, 4), None"


@pytest.mark.parametrize(
    "code",
    [
        # multi_head_attention_forward checks the ranks first (AssertionError).
        f"F.multi_head_attention_forward(torch.ones(4), torch.ones(4), torch.ones(4), {MHA_REST})",
        f"F.multi_head_attention_forward(torch.ones(2, 4), torch.ones(3, 2, 4), torch.ones(4), {MHA_REST})",
        f"F.multi_head_attention_forward(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4), {MHA_REST}, "
        "key_padding_mask=torch.ones(3))",
        f"F.multi_head_attention_forward(torch.ones(2, 4), torch.ones(2, 4), torch.ones(2, 4), {MHA_REST}, "
        "attn_mask=torch.ones(1, 3, 3))",
        f"F.multi_head_attention_forward(torch.ones(2, 4), torch.ones(2, 4), torch.ones(2, 4), {MHA_REST}, "
        "attn_mask=torch.ones(4))",
        "F.multi_head_attention_forward(1, 2, 3, 4, 1, None, None, None, None, False, 0.0, None, None)",
    ],
)
def test_attention_checks_ranks_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # torch.embedding_bag is a binding in PyTorch: argument types first.
        "torch.embedding_bag(torch.ones(3, 1, dtype=torch.int16), '', -3)",
        "torch.embedding_bag(torch.ones(3, 4, dtype=torch.float64), torch.ones(3), 5)",
        "torch.embedding_bag(torch.ones(1, 4, 1), torch.ones(3), torch.float32)",
        "torch.embedding_bag(torch.ones(()), torch.ones(3), torch.ones(2), (1,))",
        "torch.embedding_bag(torch.ones(4, 3), torch.tensor([0, 1, 2]), torch.tensor([0, 2]))[0]",
        "torch.embedding_bag(torch.ones(4, 3), torch.tensor([0, 1, 2]), torch.tensor([0, 2]), False, 1, False, None, "
        "False, None)[0]",
        "torch.embedding_bag(torch.ones(4, 3), torch.tensor([0, 1, 2]), torch.tensor([0, 2]), padding_idx=1)",
    ],
)
def test_embedding_bag_binding_types(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # unique(dim=): the binding's types, then dim's range, before the
        # missing kernel.
        "torch.unique(torch.ones(3), True, return_counts=True, dim=3)",
        "torch.unique(torch.ones(3, 4), sorted=False, dim=2**64)",
        "torch.unique(torch.ones(2, 3, 2, 2), sorted=True, dim=(-1, -3, 0))",
        "torch.ones(4).unique(torch.ones(0), dim=0)",
        "torch.unique(torch.ones(3, 4), dim=-3)",
        "torch.unique(torch.ones(()), dim=1)",
        # get_device_module takes a device, a string or None.
        "torch.get_device_module(device=torch.ones(4, dtype=torch.bool))",
        "torch.get_device_module((1, -1))",
        "torch.get_device_module([1])",
        "torch.get_device_module(1)",
        "torch.get_device_module('meta')",
    ],
)
def test_python_functions_check_types_first(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # triplet_margin_loss checks margin, grid_sample its mode names, in
        # Python before the binding's types.
        "F.triplet_margin_loss(torch.ones(3), (), (3, 2**63, -1), -2**63)",
        "F.triplet_margin_loss(torch.ones(3, 1), torch.ones(3, 1), torch.ones(3, 1), 0.0, [1])",
        "F.triplet_margin_loss(torch.ones(3, 1), torch.ones(3, 1), torch.ones(3, 1), margin=-1.5, swap=torch.ones(2))",
        "F.triplet_margin_loss(torch.ones(3, 1), torch.ones(3, 1), torch.ones(3, 1))",
        "F.grid_sample(torch.ones(3, 1), float('nan'), 1e300)",
        "F.grid_sample(torch.ones(2, 2), (2**63,), padding_mode=torch.ones(3))",
        "F.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), 'nearest', 'border', True)",
        # Complex inputs of the adaptive max pools: the kernel's dtype error.
        "F.adaptive_max_pool1d_with_indices(torch.ones(1, 4, 1, dtype=torch.complex64), 2)",
        "F.adaptive_max_pool2d(torch.ones(1, 4, 4, dtype=torch.complex128), 2)",
    ],
)
def test_python_value_checks_before_binding_types(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # l1/smooth_l1/huber/mse: sizes, legacy arguments, broadcasting, then
        # the reduction's name; broadcasting reports the last mismatching dim.
        "F.huber_loss(torch.ones(2, 3), torch.ones(2, 2, 3).transpose(0, -1), reduction=torch.ones(2))",
        "F.huber_loss(torch.ones(2, 0, 3), torch.ones(2, 3, 4), -2)",
        "F.huber_loss(torch.ones(()), torch.ones(3, 4), reduction=(2,))",
        "F.l1_loss(torch.ones(2, 3), torch.ones(4, 3), reduction='x')",
        "F.smooth_l1_loss(torch.ones(2, 3), torch.ones(4, 3), reduction='x')",
        "F.l1_loss(torch.ones(2, 3), torch.ones(2, 3), reduction='x')",
        "F.l1_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2), None)",
        "F.mse_loss(torch.ones(2, 3), torch.ones(2, 3), reduction='x')",
        "F.l1_loss(torch.ones(5, 2, 3), torch.ones(1, 3), reduction='none')",
    ],
)
def test_pointwise_losses_broadcast_before_reduction(code):
    check_same(code)
