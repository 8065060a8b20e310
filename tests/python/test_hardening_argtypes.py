"""Exception classes of Python-level argument checks, a fourth fuzzing round:
one test per class of "other exception type" findings of the differential
fuzzer (tools/fuzz/fuzz.py), each call compared with PyTorch (class, and
message where PyTorch's is fixed)."""

from __future__ import annotations

import pytest
import torch
from test_hardening import check_same

import ember

V = "torch.ones(3)"
M = "torch.ones(2, 3)"
EXPANDED = "torch.full((1,), 1.).expand((3, 3))"


@pytest.mark.parametrize(
    "code",
    [
        # outer and ger write through mul: the cast rule, resizing, overlap.
        f"torch.outer({V}, {V}, out=torch.empty(0))",
        f"torch.outer({V}, torch.ones(2), out=torch.empty(3, 2, dtype=torch.float64))",
        f"torch.ger({V}, {V}, out=torch.empty(3, 3, dtype=torch.int32))",
        f"torch.outer({V}, {V}, out={EXPANDED})",
        f"torch.outer({M}, {V}, out=torch.empty(3, 3, dtype=torch.int8))",
        f"torch.outer({V}, {V}, out=3)",
        # diag, take_along_dim and msort: the exact dtype, after the operator's own checks.
        f"torch.diag({V}, out=torch.empty(0))",
        f"torch.diag({V}, 1, out=torch.empty(0))",
        "torch.diag(torch.ones(3, dtype=torch.int64), out=torch.empty(3, 3, dtype=torch.bfloat16))",
        "torch.diag(torch.ones(3), out=torch.empty(3, 3, dtype=torch.int32))",
        "torch.diag(torch.ones(3, dtype=torch.bool), out=torch.empty(3))",
        f"torch.take_along_dim({V}, torch.tensor([0, 2]), out=torch.empty(0))",
        f"torch.take_along_dim({V}, torch.tensor([0, 2]), out=torch.empty(2, dtype=torch.float64))",
        f"torch.take_along_dim({V}, torch.tensor([0.5]), out=torch.empty(2, dtype=torch.float64))",
        f"torch.take_along_dim({V}, torch.tensor([0, 2]), out=torch.full((1,), 1.).expand(2))",
        f"torch.msort({M}, out=torch.empty(0))",
        "torch.msort(torch.ones(3, dtype=torch.int16), out=torch.empty(3, dtype=torch.float16))",
        "torch.msort(torch.ones(3, 1, dtype=torch.complex64), out=torch.empty(3, 1, dtype=torch.complex64))",
        # out= refuses arguments that require grad (the written op names itself).
        f"torch.msort({V}.requires_grad_(), out=torch.empty(3))",
        f"torch.outer({V}.requires_grad_(), {V}, out=torch.empty(3, 3))",
        f"torch.take_along_dim({V}.requires_grad_(), torch.tensor([0]), out=torch.empty(1))",
        f"torch.diag({V}.requires_grad_(), out=torch.empty(3, 3))",
    ],
)
def test_out_forms_of_composite_functions(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # The operator's own refusals come first (their messages are the operators').
        "torch.diag(torch.ones(2, 2, 2), out=torch.empty(3, 3, dtype=torch.int32))",
        "F.embedding(torch.ones(2, 3), torch.ones(2, 3, 2, 2), max_norm=2, sparse=True)",
    ],
)
def test_operator_checks_before_out_and_sparse(code):
    check_same(code, message=False)


def test_out_forms_write_into_out():
    for name, args in (
        ("outer", ([1.0, 2.0], [3.0, 4.0, 5.0])),
        ("diag", ([1.0, 2.0],)),
        ("msort", ([[3.0, 1.0], [2.0, 5.0]],)),
    ):
        results = []
        for lib in (torch, ember):
            out = lib.empty(0)
            returned = getattr(lib, name)(*(lib.tensor(a) for a in args), out=out)
            assert returned is out
            results.append(out.tolist())
        assert results[0] == results[1], name
    out = ember.empty(0)
    ember.take_along_dim(ember.tensor([4.0, 5.0, 6.0]), ember.tensor([2, 0]), out=out)
    assert out.tolist() == [6.0, 4.0]


@pytest.mark.parametrize(
    "code",
    [
        # The binding a dropout function ends in checks `training` (bool) and
        # `p` (float) after the Python check of p's range.
        f"F.dropout({V}, training=torch.ones(2))",
        f"F.dropout({V}, 0.5, 1)",
        f"F.dropout({V}, 1.5, torch.ones(2))",
        f"F.dropout({V}, 'a')",
        "F.dropout1d(torch.ones(2, 3), training=torch.ones(2))",
        "F.dropout2d(torch.ones(2, 2, 3), training=torch.ones(2))",
        "F.dropout2d(torch.ones(2, 2, 3), 0.5, False, inplace=True)",
        "F.dropout3d(torch.ones(3), training=torch.ones(3))",
        f"F.alpha_dropout({V}, training=3)",
        f"F.feature_alpha_dropout({M}, 0.2, None)",
        # rrelu's bounds are Scalars of its binding.
        f"F.rrelu({V}, lower=torch.ones(2))",
        f"F.rrelu({V}, upper=torch.ones(3), training=True)",
        f"F.rrelu({V}, 0.1, 0.2, 'yes')",
        # embedding: embedding_renorm_'s types, then embedding's (sparse is a bool).
        "F.embedding(torch.tensor([0]), torch.ones(2, 2), max_norm=1.0, norm_type=torch.ones(2))",
        "F.embedding(torch.tensor([0]), torch.ones(2, 2), sparse=1.5)",
        # lp pools: a tensor norm_type goes to pow; a short kernel tuple fails to unpack.
        "F.lp_pool2d(torch.ones(1, 4, 4), torch.ones(1), 2, True)",
        "F.lp_pool1d(torch.ones(2, 2, 3), torch.ones(3), 1)",
        "F.lp_pool3d(torch.ones(2, 2), torch.ones(1), (4,))",
        "F.lp_pool3d(torch.ones(1, 2, 2, 2), 2.0, 1, ceil_mode=float('inf'))",
        # hardtanh_ is a binding: no check of the bounds' order; complex bounds fail to convert.
        "F.hardtanh_(torch.ones(3, dtype=torch.complex64), 0.5 - 1j, float('inf'))",
        "F.hardtanh_(torch.ones(3, dtype=torch.int32), min_val=0.5 - 1j)",
    ],
)
def test_functional_checks_of_their_bindings(code):
    check_same(code)


def test_hardtanh_inplace_bounds_in_any_order():
    for values, dtype, bounds in (
        ([0, 1, -3, 7, 2, -1], "int8", (2,)),
        ([0.0, 1.0, -3.0, float("nan"), 2.0, 1.5], "float32", (2.0, 1.0)),
        ([0.0, 1.0, -3.0, 2.0], "float64", (-0.5, 0.5)),
    ):
        results = []
        for lib in (torch, ember):
            x = lib.tensor(values, dtype=getattr(lib, dtype))
            returned = lib.nn.functional.hardtanh_(x, *bounds)
            assert returned is x
            results.append(repr(x.tolist()))
        assert results[0] == results[1], (values, bounds)


@pytest.mark.parametrize(
    "code",
    [
        # Functions PyTorch writes in Python raise its AttributeError (no TypeError of a binding).
        f"torch.svd_lowrank({M}, 1, 2, -2)",
        "torch.ones(2).module_load((1,), 3)",
        # ... and those that end in a binding name the element or argument as the binding does.
        "torch.einsum('sum', float('nan'))",
        "torch.einsum('i,i', [torch.ones(2), 3])",
        "torch.chain_matmul((2,))",
        "torch.chain_matmul(torch.ones(2, 2), 4)",
        "torch.spmm(torch.ones(2, 2), 3)",
        "torch.spmm(-float('inf'), 0)",
        "torch.ones(2).type_as(1e300)",
        "torch.slice_inverse(torch.ones(3), None, ())",
        "torch.ones(3).slice_inverse(torch.ones(3), 'sum', None)",
        # None where a Tensor belongs is the binding's TypeError too.
        "torch.cosine_similarity(torch.ones(2), None)",
    ],
)
def test_python_functions_and_their_bindings(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # torch.cond / while_loop check their arguments in PyTorch's order.
        "torch.cond(torch.bool, torch.ones(1), torch.ones(1))",
        "torch.cond((3,), torch.ones(1), [])",
        "torch.cond(torch.ones(2), lambda: 1, lambda: 2)",
        "torch.cond(torch.tensor(True), -2, torch.ones(1))",
        "torch.cond(torch.tensor(True), lambda x: x, lambda x: x, (1,))",
        "torch.cond(False, lambda: 1, lambda: 2)",
        "torch.while_loop(torch.ones(3), torch.ones(2), (0, 1))",
        "torch.while_loop(lambda x: x < 3, lambda x: x + 1, (1.5,))",
        # Stacking nothing; broadcasting shapes as PyTorch's reference code.
        "torch.dstack([])",
        "torch.hstack(())",
        "torch.vstack([])",
        "torch.row_stack([])",
        "torch.column_stack([])",
        "torch.broadcast_shapes(1e300)",
        "torch.broadcast_shapes((0.5-1j))",
        "torch.broadcast_shapes(torch.tensor(3))",
        "torch.broadcast_shapes((1,), (-1,))",
        "torch.broadcast_shapes((2,), (-1,))",
        "torch.broadcast_shapes((2, 3), (4, 1, 2))",
        "torch.broadcast_shapes((2, 3), None, 3, (4, 1, 1))",
        "torch.broadcast_shapes()",
        # Factories written in Python check their parser's types.
        "torch.asarray(0.5, device=-1.5)",
        "torch.asarray(1, dtype=torch.float64, device=True, copy=torch.ones(2))",
        "torch.asarray(torch.ones(2), requires_grad=torch.ones(2))",
        "torch.sparse_coo_tensor(torch.ones(2), -2, size=5)",
        "torch.sparse_coo_tensor(torch.ones(1), torch.bool, dtype=torch.int8, check_invariants=(-1,))",
        "torch.sparse_coo_tensor(torch.zeros(1, 2, dtype=torch.int64), torch.ones(2), requires_grad=4)",
        "torch.tensor(True, requires_grad=-2**63-1)",
        # An object parameter takes None as any other object.
        "torch.tensor(None)",
        "torch.asarray(None)",
        "torch.tensor(1, dtype=3)",
        "torch.tensor([1.0], requires_grad=True).sum()",
        # The sync-batch-norm parts check their bindings' types (PyTorch's CPU build then has no kernel).
        "torch.batch_norm_stats(torch.ones(2, 3), [])",
        "torch.batch_norm_stats(torch.ones(2, 3), torch.ones(2))",
        "torch.batch_norm_update_stats(torch.ones(2, 3), None, None, 'a')",
        "torch.batch_norm_elemt(torch.ones(2, 3), None, None, torch.ones(3), 2, 1e-5)",
        "torch.batch_norm_gather_stats(torch.ones(2, 3), torch.ones(1, 3), torch.ones(1, 3), "
        "None, None, 0.1, 1e-5, 2.5)",
        # F.embedding is Python in PyTorch: an int weight fails at weight.size(0).
        "F.embedding(torch.ones(2, dtype=torch.int64), 2, 2, (3,), 2**62)",
        "F.embedding(3, torch.ones(2, 2))",
    ],
)
def test_python_level_argument_order(code):
    check_same(code, message="while_loop" not in code)


def test_sparse_coo_tensor_of_a_size():
    t = torch.sparse_coo_tensor((2, 3))
    e = ember.sparse_coo_tensor((2, 3))
    assert list(e.shape) == list(t.shape) and e._nnz() == t._nnz() == 0
    assert e.to_dense().tolist() == t.to_dense().tolist()


@pytest.mark.parametrize(
    "code",
    [
        # A single int stands for an int list only where the list is the one
        # positional parameter (the argument parser's varargs rule).
        "torch.full(3, 1.0)",
        "torch.ones(2, 3).new_full(3, 1.0)",
        "torch.empty_strided(3, 1)",
        "torch.ones(2, 3).as_strided(3, 1)",
        "torch.ones(2, 3).as_strided_(-1, (), 2)",
        "torch.zeros(2, 3).shape",
        "torch.ones(2, 3).view(6).shape",
        "torch.ones(2, 3).permute(1, 0).shape",
        "torch.ones(2, 3).new_zeros(3).shape",
        # torch.gradient's overloads: numbers, lists of numbers or of tensors as spacing.
        "torch.gradient(torch.ones(3), spacing=torch.bool)",
        "torch.gradient(torch.ones(3), edge_order=-float('inf'))",
        "torch.gradient(torch.ones(3, 3), spacing=torch.ones(3), dim=0)",
        "torch.gradient(torch.ones(4, 3), spacing=torch.ones(3))",
        "torch.gradient(torch.tensor([1.0, 4.0, 9.0]), spacing=[2.0])",
        "torch.gradient(torch.tensor([1.0, 4.0, 9.0]), spacing=2)",
        "torch.gradient(torch.ones(3, 3), spacing=(1, 2.5), dim=[0, 1])",
        "torch.gradient(torch.ones(3, 3), spacing=[torch.arange(3.0), torch.arange(3.0)])",
        "torch.gradient(torch.ones(3, 3), spacing=[1, torch.ones(3)])",
        "torch.gradient(torch.ones(3, 3), dim=(2**64,), spacing=torch.bool)",
    ],
)
def test_parser_int_lists_and_gradient_overloads(code):
    # Class only where Ember's binding is another function's (new_full is full's, as_strided_ as_strided's)
    # or PyTorch names the list's element.
    check_same(code, message=not any(name in code for name in ("new_full", "as_strided_", "[1, torch")))
