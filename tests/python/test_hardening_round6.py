"""Findings of a sixth held-out fuzzing round (tools/fuzz/fuzz.py, new
seeds), one class each, compared with PyTorch: values, exception classes and
messages."""

from __future__ import annotations

import warnings

import pytest
import torch
from test_hardening import check_same

import ember

warnings.filterwarnings("ignore", message="Sparse (BSR|BSC|CSR|CSC) tensor support is in beta state")


# to_sparse_{csr,csc,bsr,bsc}: the argument parser's TypeErrors (int[2]
# blocksize, int? dense_dim), then PyTorch's IndexErrors for a tensor of too
# few dims (the block's dims, the nonzero indices' column).
@pytest.mark.parametrize(
    "call",
    [
        "to_sparse_csr(True)",
        "to_sparse_csr(dense_dim=True)",
        "to_sparse_csr(torch.ones(2))",
        "to_sparse_csr(dense_dim=torch.ones(2, 2))",
        "to_sparse_csr(1.5)",
        "to_sparse_csc((1,))",
        "to_sparse_csc(dense_dim='a')",
        "to_sparse_bsr(torch.ones(2))",
        "to_sparse_bsr([1.0, 1])",
        "to_sparse_bsr(1, torch.ones(2))",
        "to_sparse_bsr(1, (1,))",
        "to_sparse_bsr(2**63)",
        "to_sparse_bsr()",
        "to_sparse_bsc(torch.ones(3, 4))",
        "to_sparse_bsc((1, 1), 1.0)",
        "to_sparse_bsc([], torch.ones(0))",
        "to_sparse_bsc()",
        "to_sparse_bsc(1, 3)",
        "to_sparse_bsr(1, -3)",
        "to_sparse_bsc(1, -2)",
        "to_sparse_bsr((2, 2))",
        "to_sparse_csr(1)",
        "to_sparse_csc()",
    ],
)
def test_to_sparse_compressed_arguments_as_torch(call):
    check_same(f"torch.ones(2, 3).{call}.to_dense()")


@pytest.mark.parametrize("shape", ["()", "(3,)", "(0,)", "(2, 3)", "(2, 2, 4)"])
@pytest.mark.parametrize("fill", ["zeros", "ones"])
@pytest.mark.parametrize(
    "call",
    [
        "to_sparse_csr()",
        "to_sparse_csc()",
        "to_sparse_bsr(1)",
        "to_sparse_bsc((1, 1))",
        "to_sparse(layout=torch.sparse_csr)",
        "to_sparse(layout=torch.sparse_csc)",
        "to_sparse_csr(0)",
        "to_sparse_csc(1)",
        "to_sparse_bsr(1, 1)",
        "to_sparse_bsc(1, -1)",
        "to_sparse_bsr(1, -2)",
        "to_sparse_bsc(1, 0)",
    ],
)
def test_to_sparse_compressed_of_few_dims_as_torch(call, fill, shape):
    check_same(f"torch.{fill}({shape}).{call}.to_dense()")


# cross: the ranks, the lengths along dim (an IndexError for a dim out of
# range), the broadcast, out's dtype, then the operands' dtypes; torch.cross
# without dim takes input's first dim of size 3.
@pytest.mark.parametrize(
    "call",
    [
        "torch.linalg.cross(torch.ones(3, dtype=torch.bool), torch.ones(2, 3))",
        "torch.linalg.cross(torch.ones(3, dtype=torch.bool), torch.ones(4))",
        "torch.linalg.cross(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))",
        "torch.linalg.cross(torch.ones(3, dtype=torch.int32), torch.ones(3))",
        "torch.linalg.cross(torch.ones(3, dtype=torch.bool), torch.ones(3))",
        "torch.linalg.cross(torch.ones(3), torch.ones(3, dtype=torch.bool))",
        "torch.linalg.cross(torch.ones(3), torch.ones(3), dim=2)",
        "torch.linalg.cross(torch.ones(3), torch.ones(3), dim=-2)",
        "torch.linalg.cross(torch.ones(()), torch.ones(()))",
        "torch.linalg.cross(torch.ones(()), torch.ones(()), dim=3)",
        "torch.linalg.cross(torch.ones(2, 3), torch.ones(4, 3))",
        "torch.linalg.cross(torch.ones(2, 3), torch.ones(1, 3))",
        "torch.linalg.cross(torch.ones(2, 3), torch.ones(2, 3), out=torch.ones(2, 3, dtype=torch.int32))",
        "torch.linalg.cross(torch.ones(2, 3, dtype=torch.int32), torch.ones(2, 3), out=torch.ones(2, 3))",
        "torch.cross(torch.ones(2, 3), torch.ones(4, 3))",
        "torch.cross(torch.ones(2, 3), torch.ones(1, 3, 1))",
        "torch.cross(torch.ones(2, 2), torch.ones(2, 2))",
        "torch.cross(torch.ones(()), torch.ones(3, 1))",
        "torch.cross(torch.ones(3, 2), torch.ones(3, 2), out=torch.ones(3, 2, dtype=torch.int32))",
        "torch.cross(torch.ones(3, dtype=torch.complex64), torch.ones(0, dtype=torch.complex128), dim=3)",
        "torch.cross(torch.arange(6.).reshape(2, 3), torch.arange(6.).reshape(2, 3).flip(1))",
        "torch.cross(torch.arange(6.).reshape(3, 2), torch.ones(3, 1))",
        "torch.ones(1, 3).cross(torch.ones(1, 3, 1), dim=0)",
        "torch.ones(()).cross(torch.ones(2, 3, 2, 2), torch.tensor(-3))",
    ],
)
def test_cross_checks_in_torch_order(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call)


# binary_cross_entropy: the target's dtype, then the floating dispatch, before
# the input's values are read.
@pytest.mark.parametrize(
    "dtypes",
    [
        ("int16", "float32"),
        ("float32", "int16"),
        ("complex64", "complex64"),
        ("bool", "bool"),
        ("int32", "int32"),
        ("float16", "float16"),
        ("float64", "float64"),
    ],
)
@pytest.mark.parametrize("value", [3, 0.5])
def test_binary_cross_entropy_dtype_checks_first(dtypes, value):
    a, b = dtypes
    check_same(f"F.binary_cross_entropy(torch.full((2,), {value}).to(torch.{a}), torch.full((2,), 0.5).to(torch.{b}))")


# torch.clip(..., out=) is clamp's out= form.
@pytest.mark.parametrize(
    "call",
    [
        "torch.clip(torch.arange(6.) - 2, min=torch.zeros(6), out=torch.empty(6))",
        "torch.clip(torch.arange(6.) - 2, -1, 1, out=torch.empty(0))",
        "torch.clip(torch.arange(6.) - 2, max=torch.ones(1), out=torch.empty(6))",
        "torch.clip(torch.arange(6.), out=torch.empty(6))",
        "torch.clip(torch.ones(2, 3), min=torch.ones(4), out=torch.empty(6))",
        "torch.clip(torch.ones(3, dtype=torch.complex64), 0, 1, out=torch.empty(3))",
        "torch.clip(torch.ones(3, dtype=torch.uint8), torch.ones(()), out=torch.empty(3, dtype=torch.uint8))",
        "torch.clip(torch.ones(3), 0, 1)",
        "torch.clip(torch.ones(3), 'a', out=torch.empty(3))",
    ],
)
def test_clip_out_as_torch(call):
    check_same(call)


# max/min with a Tensor second argument are maximum/minimum; max/min of an
# empty tensor into out= give the reduction's identity.
@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize(
    "call",
    [
        "torch.{fn}(torch.arange(6.).reshape(2, 3), torch.full((3,), 2.5))",
        "torch.arange(6.).reshape(2, 3).{fn}(torch.full((2, 3), 2.5))",
        "torch.arange(6.).reshape(2, 3).{fn}(other=torch.tensor(2))",
        "torch.{fn}(torch.arange(6), torch.tensor(2.5))",
        "torch.{fn}(torch.ones(2, 3), torch.zeros(4))",
        "torch.{fn}(torch.ones(3), torch.ones(3), out=torch.ones(0))",
        "torch.{fn}(torch.ones(3), torch.ones(3), out=torch.ones(3, dtype=torch.int32))",
        "torch.{fn}(torch.ones(3, dtype=torch.complex64), torch.ones(3, dtype=torch.complex64))",
        "torch.{fn}(torch.ones(3), 'a')",
        "torch.ones(3).{fn}(dim=torch.tensor(0))",
        "torch.ones(3).{fn}(0)",
        "torch.ones(3).{fn}()",
    ],
)
def test_max_min_other_as_torch(call, fn):
    check_same(call.format(fn=fn))


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize(
    "call",
    [
        "torch.{fn}(torch.ones(0, dtype=torch.{dt}), out=torch.ones(2, dtype=torch.{dt}))",
        "torch.{fn}(torch.ones(0, dtype=torch.{dt}), out=torch.ones(0, dtype=torch.float32))",
        "torch.{fn}(torch.ones(0, dtype=torch.{dt}), out=torch.ones(0, dtype=torch.int32))",
        "torch.{fn}(torch.ones(0, dtype=torch.{dt}))",
        "torch.{fn}(torch.arange(4).to(torch.{dt}), out=torch.ones(0, dtype=torch.{dt}))",
    ],
)
@pytest.mark.parametrize("dt", ["bool", "uint8", "int8", "int64", "float16", "bfloat16", "float64", "complex64"])
def test_max_min_of_empty_into_out_as_torch(call, fn, dt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call.format(fn=fn, dt=dt))


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_other_gradients_as_torch(fn):
    grads = []
    for lib in (torch, ember):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        getattr(a, fn)(b).sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    assert grads[0] == grads[1]


# The argument parser: an int list is checked by its first element (named in
# the TypeError when given positionally), the others when unpacked; a
# function checked from Python names its missing arguments.
@pytest.mark.parametrize(
    "call",
    [
        "torch.ones(2,3).to_sparse_bsr([1, 1.0])",
        "torch.ones(2,3).to_sparse_bsr(blocksize=[1.0, 1])",
        "torch.ones(2,3).to_sparse_bsr([torch.tensor(1.), 1])",
        "torch.ones(2,3).to_sparse_bsr([torch.tensor(1), 1.0])",
        "torch.ones(2,3).view([2, 3.0])",
        "torch.ones(2,3).view([2.0, 3])",
        "torch.ones(2,3).view(2, 3.0)",
        "torch.ones(2,3).view(2.0, 3)",
        "torch.zeros([2, 'a'])",
        "torch.zeros(2, 'a')",
        "torch.zeros([True, 2])",
        "torch.zeros([2, True])",
        "torch.zeros([2, torch.tensor(1.5)])",
        "torch.zeros([2, torch.tensor([1,2])])",
        "torch.zeros([2, torch.tensor(2)])",
        "torch.ones(2,3).permute([0, None])",
        "torch.ones(2,3).permute([None, 0])",
        "torch.ones(2,3).permute(0, None)",
        "torch.ones(2,3).sum([0, 1.0])",
        "torch.ones(2,3).sum([0.5, 1])",
        "torch.ones(2,3).sum(dim=[0.5, 1])",
        "torch.ones(2,3).reshape([2, 3.0])",
        "torch.ones(2,3).expand([2, 3.0])",
        "torch.ones(2,3).repeat([1, 1.0])",
        "torch.ones(2,3).flip([0, 1.0])",
        "torch.ones(2,3).flip([0.0, 1])",
        "torch.empty_strided((2, 3), (3, 1.0))",
        "torch.nn.functional.avg_pool1d(torch.ones(1, 1, 4), [2, 2.0])",
        "torch.nn.functional.avg_pool1d(torch.ones(1, 1, 4), [2.0])",
        "torch.ones(2,3).amax([0, 'a'])",
        "torch.ones(2,3).std([0, 1.5])",
        "torch.ones(2,3).tile([2, 1.5])",
        "torch.ones(6).view(2, torch.tensor(3))",
        "torch.ones(6).view(2, True)",
        "torch.ones(6).view(2, 3, 'a')",
        "torch.ones(6).reshape(2, 3.0)",
        "torch.ones(6).repeat(2, 1.0)",
        "torch.ones(6).sum(0, 1.0)",
        "torch.ones(2, 3).transpose(0, 1.0)",
        "torch.ones(6).view(2, 3)",
        "torch.ones(6).expand(2, 6)",
        "torch.randn(2, 3.0)",
    ],
)
def test_int_list_arguments_as_torch(call):
    check_same(call)


# The samplers check their parameters before their dtypes.
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float32", "complex64", "float16"])
@pytest.mark.parametrize(
    "call",
    [
        "cauchy_(sigma=float('inf'))",
        "cauchy_()",
        "cauchy_(sigma=-1)",
        "log_normal_(std=-2)",
        "log_normal_()",
        "geometric_(2**64)",
        "geometric_(0.5)",
        "exponential_(-1)",
        "exponential_()",
    ],
)
@pytest.mark.parametrize("shape", ["(3,)", "(0,)"])
def test_sampler_checks_in_torch_order(call, dtype, shape):
    check_same(f"torch.ones({shape}, dtype=torch.{dtype}).{call}.dtype")


# max_unpool{1,2,3}d as torch.nn.functional writes them: its tuples (a tensor
# is iterable), the output size's checks (torch._check refuses a tensor
# condition), then the binding's argument checks and the kernel's.
@pytest.mark.parametrize(
    "call",
    [
        "F.max_unpool1d(torch.ones(1, 1, 2), torch.tensor([[[0, 3]]]), 2)",
        "F.max_unpool1d(torch.ones(1, 1, 2), torch.tensor([[[0, 4]]]), 2)",
        "F.max_unpool1d(torch.ones(1, 2), torch.tensor([[0, 3]], dtype=torch.int32), 2)",
        "F.max_unpool1d(torch.ones(3, 1, dtype=torch.int32), torch.ones(2, 3, 2, 2, dtype=torch.int32), 3, "
        "stride=-3, padding=(-2**63-1, -3))",
        "F.max_unpool1d(torch.ones(6, dtype=torch.uint8), torch.ones(2, 3, 2, 2, dtype=torch.uint8), 2, 2, "
        "torch.ones(2, 3, 2, 2, dtype=torch.uint8))",
        "F.max_unpool1d(torch.ones(2), torch.zeros(2, dtype=torch.int64), 2)",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2)",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2, output_size=(5, 5))",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2, output_size=(9, 9))",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2, output_size=(1, 4, 4))",
        "F.max_unpool2d(torch.ones(2, 0, 3, dtype=torch.int32), torch.ones(2, 0, 3, dtype=torch.int32), -2, "
        "padding=torch.ones(3, 0, 2, dtype=torch.bool))",
        "F.max_unpool2d(torch.ones(2, 0, 3, dtype=torch.int32), torch.ones(2, 0, 3), 2**64, padding=-1)",
        "F.max_unpool2d(torch.ones(2, 3, 4, dtype=torch.int64), torch.tensor(True), 2**63-1)",
        "F.max_unpool2d(torch.ones(2, 3, 2, 2), torch.ones(2, 3, 2, 2, dtype=torch.int16), (-2**63, 1), "
        "torch.ones(2, 2, dtype=torch.int64))",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), torch.tensor([2, 2]))",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2, padding=torch.tensor(1))",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[[0, 1], [2, 3]]]), 2, padding=3)",
        "F.max_unpool2d(torch.ones(2, 2), torch.tensor([[0, 1], [2, 3]]), 2)",
        "F.max_unpool2d(torch.ones(1, 2, 2, dtype=torch.int32), torch.tensor([[[0, 1], [2, 3]]]), 2)",
        "F.max_unpool2d(torch.ones(1, 2, 2), torch.tensor([[0, 1], [2, 3]]), 2)",
        "F.max_unpool3d(torch.ones(6, dtype=torch.bool), torch.ones(4, dtype=torch.bool), torch.ones(0, "
        "dtype=torch.bool), 0)",
        "F.max_unpool3d(torch.ones(6, dtype=torch.complex128), torch.ones(0, dtype=torch.int32), (-1,))",
        "F.max_unpool3d(torch.ones(1, 1, 2, 2, 2), torch.arange(8).reshape(1, 1, 2, 2, 2), 2)",
        "F.max_unpool3d(torch.ones(1, 2, 2, 2), torch.arange(8).reshape(1, 2, 2, 2), 2)",
        "F.max_unpool3d(torch.ones(1, 1, 2, 2, 2), torch.arange(8).reshape(1, 1, 2, 2, 2).int(), 2)",
        "F.max_unpool3d(torch.ones(2, 2, 2), torch.arange(8).reshape(2, 2, 2), 2)",
        "F.max_unpool3d(torch.ones(1, 1, 2, 2, 2), torch.arange(8).reshape(1, 1, 2, 2, 2), 2, output_size=[4, 4])",
    ],
)
def test_max_unpool_checks_as_torch(call):
    check_same(call)


# cartesian_prod's binding reads a tensor list first; linspace and logspace
# take 0-dim tensor bounds.
@pytest.mark.parametrize(
    "call",
    [
        "torch.cartesian_prod(torch.ones(2, 2), [1])",
        "torch.cartesian_prod(torch.ones(2, 2), torch.ones(2), 1.5)",
        "torch.cartesian_prod(torch.ones(2), 1)",
        "torch.cartesian_prod(torch.ones(2, 2), torch.ones(2))",
        "torch.cartesian_prod(torch.arange(2), torch.arange(3.))",
        "torch.linspace(torch.ones(2), torch.ones(3), 3)",
        "torch.linspace(torch.tensor(1.), torch.tensor(3.), 3)",
        "torch.linspace(1, torch.ones(1), 3)",
        "torch.linspace(torch.ones(1), 3, 3)",
        "torch.linspace(torch.tensor(1), 3, 4, dtype=torch.int8)",
        "torch.linspace(start=torch.tensor(1.), end=torch.tensor(2.), steps=3)",
        "torch.linspace(torch.tensor(1., requires_grad=True), 2, 3)",
        "torch.linspace(torch.tensor(0.), torch.tensor(1.), 5, out=torch.empty(0, dtype=torch.float64))",
        "torch.logspace(torch.tensor(1.), torch.ones(2, 2), 3)",
        "torch.logspace(torch.tensor(1.), torch.tensor(2.), 3, 2)",
        "torch.logspace(torch.ones(2, 2), 1, 3)",
    ],
)
def test_cartesian_prod_and_spaces_as_torch(call):
    check_same(call)


# nn.functional's Python checks come before the binding's: embedding_bag's
# kernel checks its dtypes after padding_idx; instance_norm and
# multi_margin_loss check their arguments' types as their bindings do;
# huber_loss compares weight's size; fractional max pooling reads its ratio
# as PyTorch's _pair/_triple, then the kernel refuses lengths other than the
# dims'.
@pytest.mark.parametrize(
    "call",
    [
        "F.embedding_bag(torch.tensor([[0, 1]], dtype=torch.complex64), torch.ones(3, 2, dtype=torch.int32))",
        "F.embedding_bag(torch.tensor([[0, 1]], dtype=torch.uint8), torch.ones(3, 2))",
        "F.embedding_bag(torch.tensor([0, 1]), torch.ones(3, 2, dtype=torch.int32), torch.tensor([0]), padding_idx=7)",
        "F.embedding_bag(torch.tensor([0, 1]), torch.ones(3, 2, dtype=torch.int32), torch.tensor([0]), sparse=True)",
        "F.embedding_bag(torch.tensor([0, 1]), torch.ones(3, 2, dtype=torch.int32), torch.tensor([0]), mode='max', "
        "per_sample_weights=torch.ones(2))",
        "F.embedding_bag(torch.ones(2, 2, 2, dtype=torch.bool), torch.ones(3, 1, dtype=torch.bool), mode=4)",
        "F.embedding_bag(torch.ones(3, 1, dtype=torch.bool), torch.ones(3, 1, dtype=torch.bool), -1, -2**63-1)",
        "F.embedding_bag(torch.ones(3, 1, dtype=torch.uint8), torch.ones(2, 3, dtype=torch.complex64), True)",
        "F.embedding_bag(torch.tensor([0, 1]), torch.ones(3, 2, dtype=torch.bool), torch.tensor([0]), mode='bad')",
        "F.embedding_bag(torch.tensor([0, 1]), torch.arange(6.).reshape(3, 2), torch.tensor([0]))",
        "F.instance_norm(torch.ones(2, 3, 2, 2, dtype=torch.bool), [])",
        "F.instance_norm(torch.ones(2, 3, 2, 2), use_input_stats=-2)",
        "F.instance_norm(torch.ones(2, 3, 2, 2), eps=0.5 - 1j)",
        "F.instance_norm(torch.ones(2, 3, 2, 2), weight=(1, 2, 3))",
        "F.instance_norm(torch.ones(2, 3, 2, 2), use_input_stats=False)",
        "F.instance_norm(torch.arange(24.).reshape(2, 3, 2, 2), momentum=0.5)",
        "F.multi_margin_loss(torch.ones(2, 0, 3), torch.ones(2, 0, 3, dtype=torch.int64), margin=torch.ones(6))",
        "F.multi_margin_loss(torch.ones(2, 3), (1, 2))",
        "F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 2]), margin='a')",
        "F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 2]), margin=torch.tensor(0.5))",
        "F.multi_margin_loss(torch.arange(6.).reshape(2, 3), torch.tensor([0, 2]), margin=2)",
        "F.huber_loss(torch.ones(1, dtype=torch.complex64), torch.ones(1, dtype=torch.int16), 'none', "
        "weight=torch.ones(2, 3))",
        "F.huber_loss(torch.ones(1, dtype=torch.uint8), torch.ones(2, 2, dtype=torch.int16), "
        "weight=torch.ones(2, 0, 3))",
        "F.huber_loss(torch.arange(3.), torch.zeros(3), weight=torch.ones(3))",
        "F.huber_loss(torch.arange(3.), torch.zeros(3), weight=torch.ones(1))",
        "F.fractional_max_pool2d(torch.ones(1, 1, 4, 4), (2,), output_size=2)",
        "F.fractional_max_pool2d(torch.ones(1, 1, 4, 4), 2, (2,))",
        "F.fractional_max_pool2d(torch.ones(1, 1, 4, 4), (2, 2, 2), 2)",
        "F.fractional_max_pool2d(torch.ones(2, 3, 2, 2), 1, (2,))",
        "F.fractional_max_pool3d(torch.ones(1, 1, 4, 4, 4), 2, (2, 2))",
        "F.fractional_max_pool3d(torch.ones(1, 1, 4, 4, 4), (2, 2), 2)",
        "F.fractional_max_pool2d(torch.ones(1, 1, 4, 4), 2, output_ratio=(0.5,))",
        "F.fractional_max_pool3d(torch.ones(1, 1, 4, 4, 4), 2, output_ratio=(0.5, 0.5))",
        "F.fractional_max_pool3d(torch.ones(1, 1, 4, 4, 4), 2, output_ratio=0.5).shape",
        "F.fractional_max_pool3d(torch.ones(2, 3, 4, dtype=torch.int64), 2, output_ratio=torch.ones(2, 3, 2, 2))",
    ],
)
def test_functional_checks_in_torch_order(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call)


# as_tensor's binding checks dtype= and device= first; binomial takes
# floating operands of one dtype, broadcast; a broadcast's message names the
# last mismatching dim.
@pytest.mark.parametrize(
    "call",
    [
        "torch.as_tensor([1, 2], device=torch.ones(3))",
        "torch.as_tensor(None, device=torch.ones(2))",
        "torch.as_tensor((-3, 2**63), device=torch.ones(3))",
        "torch.as_tensor([1, 2], dtype=3)",
        "torch.as_tensor([1, 2], 3)",
        "torch.as_tensor([1], device=1.5)",
        "torch.as_tensor()",
        "torch.as_tensor([1], foo=1)",
        "torch.as_tensor([1, 2], device='cpu')",
        "torch.as_tensor(torch.ones(2), dtype=torch.int64)",
        "torch.binomial(torch.ones(3, dtype=torch.int64), torch.ones(3))",
        "torch.binomial(torch.ones(3), torch.ones(3, dtype=torch.int64))",
        "torch.binomial(torch.ones(3, dtype=torch.complex64), torch.ones(3, dtype=torch.complex64))",
        "torch.binomial(torch.ones(3), torch.ones(3, dtype=torch.float64))",
        "torch.binomial(torch.ones(3, dtype=torch.float16), torch.ones(3, dtype=torch.float16))",
        "torch.binomial(torch.ones(3), torch.ones(2))",
        "torch.binomial(torch.ones(0, dtype=torch.int64), torch.ones(0))",
        "torch.binomial(torch.ones(3), torch.full((2, 3), 0.5)).shape",
        "torch.binomial(torch.ones(2, 3), torch.zeros(3))",
        "torch.clamp(torch.ones(2, 3), min=torch.ones(3, 2))",
        "torch.ones(2, 3, 4) + torch.ones(3, 3, 5)",
        "torch.where(torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 2), 0.0)",
    ],
)
def test_bindings_and_broadcasts_as_torch(call):
    check_same(call)


# Calls PyTorch refuses that were accepted: addr's input must expand to the
# outer product's shape; an overlapping out= of outer/ger is refused before
# it is resized; heaviside's out must share the dtype; isin refuses complex
# inputs; mvlgamma's arange refuses complex; logit's eps must fit the dtype;
# cholesky_solve checks ranks and shapes.
@pytest.mark.parametrize(
    "call",
    [
        "torch.addr(torch.ones(0, dtype=torch.int32), torch.ones(1), torch.ones(1))",
        "torch.addr(torch.ones(3), torch.ones(2), torch.ones(3))",
        "torch.addr(torch.ones(2, 1), torch.ones(2), torch.ones(3))",
        "torch.addr(torch.ones(2, 3, 1), torch.ones(2), torch.ones(3))",
        "torch.addr(torch.ones(3, 2), torch.ones(2), torch.ones(3))",
        "torch.ones(0, dtype=torch.int32).addr(torch.ones(1), torch.ones(1))",
        "torch.addr(torch.ones(()), torch.ones(2), torch.ones(3), beta=0)",
        "torch.ger(torch.ones(0, dtype=torch.int8), torch.ones(0, dtype=torch.int8), "
        "out=torch.ones(1, dtype=torch.int8).expand(3, 4))",
        "torch.outer(torch.ones(2), torch.ones(2), out=torch.ones(1).expand(2, 2))",
        "torch.outer(torch.ones(2), torch.ones(2), out=torch.ones(1).expand(4))",
        "torch.outer(torch.ones(2), torch.ones(2), out=torch.ones(0))",
        "torch.heaviside(torch.ones(2), torch.ones(1), out=torch.ones(2, dtype=torch.bfloat16))",
        "torch.heaviside(torch.ones(2), torch.ones(1), out=torch.ones(2, dtype=torch.complex64))",
        "torch.heaviside(torch.ones(2, 0, 3), torch.ones(1), out=torch.ones(2, 3, dtype=torch.bfloat16))",
        "torch.heaviside(torch.tensor([-1.0, 0.0, 2.0]), torch.ones(1), out=torch.ones(0))",
        "torch.ones(2).heaviside_(torch.ones(1, dtype=torch.float64))",
        "torch.isin(torch.ones(3, dtype=torch.complex64), torch.ones(0, dtype=torch.int64))",
        "torch.isin(torch.ones(3), torch.ones(2, dtype=torch.complex128))",
        "torch.isin(1, torch.ones(3, dtype=torch.complex64))",
        "torch.isin(torch.ones(3, dtype=torch.complex64), torch.ones(2, dtype=torch.bool))",
        "torch.isin(torch.arange(4), torch.tensor([1.0, 3.0]))",
        "torch.mvlgamma(torch.ones(3, dtype=torch.complex64) * 3, 1)",
        "torch.mvlgamma(torch.ones(0, dtype=torch.complex128), 4)",
        "torch.ones(4, dtype=torch.complex128).mvlgamma(1)",
        "torch.mvlgamma(torch.ones(3, dtype=torch.int16) * 3, 3, out=torch.ones(3, dtype=torch.complex64))",
        "torch.mvlgamma(torch.ones(3) * 3, 3, out=torch.ones(3, dtype=torch.int64))",
        "torch.mvlgamma(torch.ones(3) * 3, 3, out=torch.ones(3, dtype=torch.float16))",
        "torch.mvlgamma(torch.ones(3, dtype=torch.complex64), 0)",
        "torch.logit(torch.full((1,), 0.5).expand(2, 2), 1e300)",
        "torch.logit(torch.full((2, 2), 0.5, dtype=torch.float16), 70000.0)",
        "torch.logit(torch.full((2, 2), 0.5, dtype=torch.bfloat16), 3.5e38)",
        "torch.logit(torch.full((2, 2), 0.5, dtype=torch.float64), 1e300)",
        "torch.logit(torch.full((2, 2), 0.5), float('inf'))",
        "torch.logit(torch.full((2, 2), 0.25), 0.3)",
        "torch.logit(torch.ones(2, dtype=torch.int32), 1e300)",
        "torch.cholesky_solve(torch.ones(3, 0, 2, dtype=torch.complex64), torch.ones(1, dtype=torch.complex64))",
        "torch.cholesky_solve(torch.ones(2, 2, 3, dtype=torch.float64), torch.ones(1, 3, dtype=torch.float64))",
        "torch.cholesky_solve(torch.ones(()), torch.ones(2, 2))",
        "torch.cholesky_solve(torch.ones(2, 2), torch.ones(2, 3))",
        "torch.cholesky_solve(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))",
        "torch.cholesky_solve(torch.ones(2, 2, dtype=torch.int32), torch.ones(2, 2, dtype=torch.int32))",
        "torch.cholesky_solve(torch.ones(3, 2), torch.ones(2, 2))",
        "torch.cholesky_solve(torch.ones(2, 2, dtype=torch.float16), torch.ones(2, 2, dtype=torch.float16))",
        "torch.cholesky_solve(torch.ones(3, 2, 2), torch.eye(2) * 2)",
        "torch.cholesky_solve(torch.ones(3, 2, 2), torch.ones(2, 3, 3))",
        "torch.ones((), dtype=torch.complex64).cholesky_solve(torch.ones(1, dtype=torch.complex64))",
    ],
)
def test_refusals_as_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call)


# Calls PyTorch accepts that were refused: complex32's parts are float16
# views (chalf's results read back); where(condition) is nonzero(as_tuple);
# diff with n=0 reads no dim; dist checks the difference's dtype; addr takes
# float alpha/beta for complex results; the margin_ranking_loss operator
# broadcasts; samplers into an empty tensor draw nothing and dispatch no loop.
@pytest.mark.parametrize(
    "call",
    [
        "torch.ones(2, 3, dtype=torch.int64).chalf()",
        "torch.ones(0, dtype=torch.complex128).chalf()",
        "torch.full((1,), 0.5, dtype=torch.complex128).expand(2, 3, 4).chalf()",
        "torch.arange(6, dtype=torch.int16).reshape(2, 3).t().chalf()",
        "torch.view_as_complex(torch.ones(0, dtype=torch.float16))",
        "torch.view_as_complex(torch.arange(6.).reshape(3, 2).half())",
        "torch.view_as_real(torch.arange(3.).chalf())",
        "torch.arange(3.).chalf().real",
        "torch.arange(3.).chalf().imag",
        "torch.where(torch.arange(24).reshape(2, 3, 2, 2) % 3 == 0)",
        "torch.where(torch.full((1,), 0.5).to(torch.bfloat16).expand(3, 4))",
        "torch.where(condition=torch.tensor([0, 1, 2]))",
        "torch.where(torch.tensor(1))",
        "torch.where(3)",
        "torch.where(condition=3)",
        "torch.where(torch.tensor([True, False]), 1.0, 2.0)",
        "torch.where(torch.tensor([True, False]), torch.ones(2))",
        "torch.diff(torch.ones(2, 0, 3, dtype=torch.uint8), 0, 3)",
        "torch.diff(torch.arange(24, dtype=torch.int8).reshape(4, 2, 3)[::2], n=0, dim=3)",
        "torch.diff(torch.ones(2, 2, 3), n=0, dim=3, prepend=torch.ones(2, 2, 3))",
        "torch.diff(torch.ones(2, 2, 3), n=1, dim=3)",
        "torch.diff(torch.ones(()), n=0, dim=3)",
        "torch.dist(torch.tensor(1, dtype=torch.uint8), torch.ones(0, dtype=torch.float64), p=5)",
        "torch.dist(torch.tensor(1, dtype=torch.uint8), torch.ones(3, dtype=torch.int64))",
        "torch.dist(torch.arange(3.), torch.zeros(3, dtype=torch.complex64))",
        "torch.addr(torch.ones(1, dtype=torch.float64), torch.arange(3, dtype=torch.complex128), "
        "torch.arange(3, dtype=torch.float64), alpha=0.5)",
        "torch.addr(torch.ones(1, dtype=torch.int64), torch.ones(3, dtype=torch.int64), "
        "torch.ones(3, dtype=torch.int64), alpha=1.5)",
        "torch.margin_ranking_loss(torch.ones(2)[::2], torch.ones(2, 0, 3).transpose(0, -1), torch.ones(1))",
        "torch.margin_ranking_loss(torch.arange(3.), torch.ones(2, 3), torch.ones(1), 0.5)",
        "torch.margin_ranking_loss(torch.arange(3.), torch.ones(2, 3), torch.ones(1), 0.5, 2)",
        "torch.margin_ranking_loss(torch.arange(3.), torch.ones(2, 3), torch.ones(1), 0.5, 5)",
        "torch.margin_ranking_loss(torch.arange(3.), torch.ones(2, 4), torch.ones(1))",
        "F.margin_ranking_loss(torch.arange(3.), torch.ones(2, 3), torch.ones(1))",
        "torch.ones(0, dtype=torch.int16).normal_()",
        "torch.ones(2, dtype=torch.int16).normal_()",
        "torch.randn(0, out=torch.ones(2, 0, 3, dtype=torch.int16).transpose(0, -1))",
        "torch.randn(2, out=torch.ones(2, dtype=torch.int16))",
        "torch.ones(0, dtype=torch.complex64).bernoulli_(1)",
        "torch.ones(2, dtype=torch.complex64).bernoulli_(1)",
        "torch.ones(0, dtype=torch.complex64).bernoulli_(torch.ones(0))",
        "torch.ones(0, dtype=torch.complex64).bernoulli_(2)",
    ],
)
def test_acceptances_as_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call)


# Linear algebra: PyTorch checks ranks, squareness, sizes and dtype agreement
# before its kernels refuse a dtype (float16/bfloat16/integers).
_LINALG_CALLS = [
    "torch.linalg.eigh({A})",
    "torch.linalg.eigvalsh({A}, UPLO='X')",
    "torch.linalg.eig({A})",
    "torch.linalg.eigvals({A})",
    "torch.linalg.ldl_factor_ex({A})",
    "torch.linalg.lstsq({A}, torch.ones(3, 2, dtype=torch.{dt}))",
    "torch.linalg.lstsq({A}, torch.ones((), dtype=torch.{dt}))",
    "torch.linalg.lstsq({A}, torch.ones(3, dtype=torch.float32))",
    "torch.linalg.solve_ex({A}, torch.ones(2, dtype=torch.float32))",
    "torch.linalg.solve({A}, torch.ones(2, 2, dtype=torch.{dt}))",
    "torch.linalg.lu_factor({A})",
    "torch.linalg.lu_factor_ex({A})",
    "torch.lu({A})",
    "torch.orgqr({A}, torch.ones(1, dtype=torch.float64))",
    "torch.orgqr({A}, torch.ones(1, dtype=torch.{dt}))",
    "torch.ormqr({A}, torch.ones(1, dtype=torch.{dt}), torch.ones(2, 2, dtype=torch.{dt}))",
    "torch.ormqr({A}, torch.ones(3, dtype=torch.{dt}), torch.ones(3, dtype=torch.{dt}))",
    "torch.ormqr({A}, torch.ones(2, dtype=torch.{dt}), torch.ones(3, 3, dtype=torch.{dt}), left=False)",
    "torch.triangular_solve({A}, torch.ones(2, 2, dtype=torch.{dt}))",
    "torch.triangular_solve(torch.ones(2, 2, dtype=torch.complex64), {A})",
    "torch.linalg.solve_triangular({A}, torch.ones(2, 2, dtype=torch.{dt}), upper=True)",
    "torch.lu_unpack({A}, torch.ones(2, dtype=torch.int32))",
    "torch.linalg.qr({A})",
    "torch.linalg.svd({A})",
    "torch.linalg.svdvals({A})",
    "torch.linalg.matrix_rank({A})",
    "torch.linalg.matrix_rank({A}, torch.ones(3, 3, dtype=torch.{dt}))",
    "torch.linalg.matrix_rank({A}, atol=0.5)",
    "torch.linalg.matrix_rank({A}, rtol=0.5)",
    "torch.linalg.matrix_rank({A}, hermitian=True)",
    "torch.linalg.householder_product({A}, torch.ones(1, dtype=torch.{dt}))",
]


@pytest.mark.parametrize("call", _LINALG_CALLS)
@pytest.mark.parametrize("shape", ["(3,)", "()", "(2, 3)", "(3, 2)", "(2, 2)"])
@pytest.mark.parametrize("dt", ["int16", "float16", "bfloat16", "float32"])
def test_linalg_checks_in_torch_order(call, shape, dt):
    A = f"torch.ones({shape}, dtype=torch.{dt})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(call.format(A=A, dt=dt) + ".__class__.__name__", message=dt != "float32")


@pytest.mark.parametrize(
    "args",
    [
        "(2, 2), (1,), (2, 2)",
        "(3, 2), (2,), (2, 3)",
        "(3, 2), (3,), (3, 3)",
        "(2, 3), (3,), (2, 2)",
        "(2, 2), (2,), (2,)",
        "(2, 2), (), (2, 2)",
        "(2, 2, 2), (2,), (2, 2, 2)",
        "(2, 2), (2,), (2, 2, 2)",
        "(3, 3), (2,), (3, 1)",
        "(3, 2), (2,), (3, 3)",
    ],
)
@pytest.mark.parametrize("left", [True, False])
def test_ormqr_shape_checks_as_torch(args, left):
    a, t, o = (s.strip() + ")" if not s.strip().endswith(")") else s.strip() for s in args.split("), "))
    check_same(
        f"torch.ormqr(torch.eye(*{a}[-2:]).expand({a}).contiguous(), torch.full({t}, 0.5), torch.ones({o}), "
        f"left={left}).flatten().tolist()"
    )


# linspace/logspace with tensor bounds check the binding's other arguments
# first; isclose compares complex tensors as complex (not their real parts).
@pytest.mark.parametrize(
    "call",
    [
        "torch.linspace(torch.ones(2), 2, 'a')",
        "torch.linspace(torch.ones(2), torch.ones(()), 3, layout=-1.5)",
        "torch.linspace(torch.ones(2), 2, (0,), dtype=torch.int8)",
        "torch.linspace(2, torch.ones(4, 1), 3, device=(2, 0, 1))",
        "torch.logspace(torch.ones(2, 3), -2, -1, layout=-2**62)",
        "torch.logspace(torch.ones(2), 1, 3, base=[3])",
        "torch.logspace(torch.ones(2), 1, 3, requires_grad=torch.ones(2))",
        "torch.logspace(None, torch.ones(1), 3)",
        "torch.logspace(torch.ones(2), 1, 3, out=torch.ones(4).expand(4))",
        "torch.logspace(torch.tensor(0.0), 1, 3, base=2, dtype=torch.float64)",
        "torch.isclose(torch.tensor([1+1j, float('inf')+0j, float('nan')+0j]), "
        "torch.tensor([1+1.1j, float('inf')+0j, float('nan')+0j]), 0.5)",
        "torch.isclose(torch.tensor([1+1j, float('nan')+0j]), torch.tensor([1+1j, float('nan')+0j]), equal_nan=True)",
        "torch.isclose(torch.tensor([1+1j, complex(float('inf'), 1)]), "
        "torch.tensor([1.2+1j, complex(float('inf'), 1)]), 0.1, 0.1)",
        "torch.isclose(((torch.arange(6, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).reshape(6, 1)[::2], "
        "torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0]).to(torch.complex128), 0.5)",
    ],
)
def test_space_bindings_and_complex_isclose_as_torch(call):
    check_same(call)
