"""Sparse compressed tensors (CSR, CSC, BSR, BSC) against PyTorch: construction,
invariant checks, printing, conversions, products, elementwise operators,
gradients, the *_copy functions, the legacy sparse products and checkpoints."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")
warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
warnings.filterwarnings("ignore", message=".*is in beta state")


def run(expr, lib):
    """expr evaluated with ``torch`` bound to lib; the result as text, or the
    exception's type and first line."""
    D = lib.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])  # noqa: N806
    E = lib.tensor([[0.0, 1.5, 0.0, 0.0], [2.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 5.0, 0.0]])  # noqa: N806
    B = lib.arange(6.0).reshape(3, 2)  # noqa: N806
    env = {"torch": lib, "D": D, "E": E, "B": B, "T": lib.tensor}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(expr, env)  # noqa: S307 - test expressions
        return ("ok", repr(r) if not isinstance(r, (bool, int, tuple, list)) else str(r))
    except Exception as e:  # noqa: BLE001 - the exception type is compared
        return (type(e).__name__, str(e).split("\n")[0][:160])


def same(expr):
    want = run(expr, torch)
    got = run(expr, ember)
    assert got == want, f"{expr}\n torch: {want}\n ember: {got}"


CONSTRUCTION = [
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0])",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], (2, 4))",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1, 2, 3])",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1, 2, 3], dtype=torch.float64)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], dtype=torch.int32)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], requires_grad=True)",
    "torch.sparse_csr_tensor(T([0, 1, 3], dtype=torch.int32), T([1, 0, 2], dtype=torch.int32), [1.0, 2, 3])",
    "torch.sparse_csr_tensor(T([0, 1, 3], dtype=torch.int32), T([1, 0, 2], dtype=torch.int32), [1.0, 2, 3])"
    ".crow_indices().dtype",
    "torch.sparse_csr_tensor(T([0, 0, 0]), T([], dtype=torch.int64), T([]))",
    "torch.sparse_csr_tensor(T([0, 0, 0]), T([], dtype=torch.int64), T([]), (2, 5))",
    "torch.sparse_csr_tensor([[0, 1, 3], [0, 2, 3]], [[1, 0, 2], [0, 1, 1]], [[1.0, 2, 3], [4, 5, 6]])",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [[1.0, 2], [3, 4], [5, 6]])",
    "torch.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0])",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3))",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3), (4, 6))",
    "torch.sparse_bsc_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3))",
    "torch.sparse_compressed_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), layout=torch.sparse_csc)",
    "torch.sparse_compressed_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3))",
    "torch.sparse_compressed_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), layout=torch.strided)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), layout=torch.sparse_csc)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), layout=torch.sparse_csr)",
    "torch.sparse_csr_tensor(1, [1, 0, 2], [1.0, 2, 3])",
    "torch.sparse_csr_tensor([0, 1], [0], T([1]), requires_grad=True)",
    "torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], requires_grad=True) * 2",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], requires_grad=True).sin()",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], dtype=torch.float16)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [True, False, True])",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], torch.arange(3.0) * 1e6 + 0.5)",
]

INVARIANTS = [
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 2), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 4], [1, 0, 2], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([1, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 2, 3], [1, 0, 2], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 2, 2], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, -1, 2], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (3,), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 3, 4), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0], [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (3, 3), check_invariants=True)",
    "torch.sparse_csr_tensor(T([0.0, 1, 3]), T([1, 0, 2]), [1.0, 2, 3], (2, 3), check_invariants=True)",
    "torch.sparse_csr_tensor(T([0, 1, 3], dtype=torch.int32), T([1, 0, 2]), [1.0, 2, 3], (2, 3), "
    "check_invariants=True)",
    "torch.sparse_csr_tensor(T([0, 1, 3], dtype=torch.int16), T([1, 0, 2], dtype=torch.int16), [1.0, 2, 3], (2, 3), "
    "check_invariants=True)",
    "torch.sparse_csr_tensor([[0, 1, 3]], [1, 0, 2], [1.0, 2, 3], check_invariants=True)",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3), (4, 5), check_invariants=True)",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3), (5, 6), check_invariants=True)",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2, 3), (4, 6), check_invariants=True)",
    "torch.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (3, 2), check_invariants=True)",
    "torch.sparse_csc_tensor([0, 2, 3], [1, 0, 2], [1.0, 2, 3], (3, 2), check_invariants=True)",
]

CONVERSIONS = [
    "D.to_sparse_csr()",
    "D.to_sparse_csc()",
    "D.to_sparse_bsr((1, 1))",
    "D.to_sparse_bsc((2, 1))",
    "D.to_sparse_bsr(1)",
    "E.to_sparse_bsr((2, 2))",
    "E.to_sparse_bsc((2, 2))",
    "E.to_sparse_bsr((2, 2)).to_dense()",
    "E.to_sparse_bsc((2, 1)).to_dense()",
    "D.to_sparse_bsr((1, 3))",
    "D.to_sparse_bsc()",
    "D.to_sparse(layout=torch.sparse_bsr)",
    "D.to_sparse(layout=torch.sparse_bsr, blocksize=(1, 1))",
    "D.to_sparse(layout=torch.sparse_csc)",
    "D.to_sparse(layout=torch.sparse_csr, blocksize=(1, 1))",
    "torch.stack([D, D * 2]).to_sparse_csr()",
    "torch.stack([D, D * 2]).to_sparse_csr().to_dense()",
    "T([[[1.0, 0]], [[0, 2.0]]]).to_sparse_csr(dense_dim=1)",
    "T([[[1.0, 0]], [[0, 2.0]]]).to_sparse_csr(dense_dim=1).to_dense()",
    "T([[[1.0, 0]], [[1, 2.0]]]).to_sparse_csr()",
    "D.to_sparse_csr(dense_dim=1)",
    "D.to_sparse().to_sparse_csr()",
    "D.to_sparse().to_sparse_csc()",
    "D.to_sparse().to_sparse_bsr((1, 1))",
    "D.to_sparse().to_sparse_bsc((1, 1))",
    "D.to_sparse().to_sparse(layout=torch.sparse_csr)",
    "D.to_sparse_csr().to_sparse()",
    "D.to_sparse_csr().to_sparse().is_coalesced()",
    "D.to_sparse_csc().to_sparse()",
    "D.to_sparse_bsr((1, 1)).to_sparse()",
    "D.to_sparse_csr().to_sparse(layout=torch.sparse_coo)",
    "D.to_sparse_csr().to_sparse(1)",
    "D.to_sparse_csr().to_sparse_csc()",
    "D.to_sparse_csc().to_sparse_csr()",
    "D.to_sparse_csr().to_sparse_csr()",
    "D.to_sparse_csr().to_sparse_csr(1)",
    "D.to_sparse_csr().to_sparse_bsr((2, 3))",
    "D.to_sparse_csr().to_sparse_bsc((1, 1))",
    "D.to_sparse_bsr((1, 1)).to_sparse_csr()",
    "E.to_sparse_bsr((2, 2)).to_sparse_bsc((2, 2))",
    "E.to_sparse_bsr((2, 2)).to_sparse_bsr((1, 1))",
    "E.to_sparse_bsr((2, 2)).to_sparse_csc()",
    "D.to_sparse_csr().to_dense()",
    "D.to_sparse_csc().to_dense()",
    "D.to_sparse_csr().to_dense(torch.float64)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [[1.0, 2], [3, 4], [5, 6]]).to_dense()",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.arange(12.0).reshape(2, 2, 3)).to_dense()",
    "torch.sparse_bsc_tensor([0, 1, 2], [1, 0], torch.arange(12.0).reshape(2, 2, 3)).to_dense()",
    "D.to_sparse_csr().to(torch.float64)",
    "D.to_sparse_csr().double()",
    "D.to_sparse_csr().int()",
    "D.to_sparse_csr().bool()",
    "D.to_sparse_csr().clone()",
    "D.to_sparse_csr().detach()",
]

ACCESSORS = [
    "D.to_sparse_csr().crow_indices()",
    "D.to_sparse_csr().col_indices()",
    "D.to_sparse_csr().values()",
    "D.to_sparse_csc().ccol_indices()",
    "D.to_sparse_csc().row_indices()",
    "D.to_sparse_csc().crow_indices()",
    "D.to_sparse_csr().ccol_indices()",
    "D.to_sparse_csr().row_indices()",
    "D.to_sparse_csr().indices()",
    "D.crow_indices()",
    "D.col_indices()",
    "D.ccol_indices()",
    "D.row_indices()",
    "D.to_sparse().crow_indices()",
    "(D.to_sparse_csr().layout, D.to_sparse_csc().layout, D.to_sparse_bsr(1).layout, D.to_sparse_bsc(1).layout)",
    "(D.to_sparse_csr().is_sparse, D.to_sparse_csr().is_sparse_csr, D.to_sparse_csc().is_sparse_csr, D.is_sparse_csr)",
    "(D.to_sparse_csr()._nnz(), D.to_sparse_csr().sparse_dim(), D.to_sparse_csr().dense_dim())",
    "(D.to_sparse_csr().shape, D.to_sparse_csr().dim(), D.to_sparse_csr().numel(), len(D.to_sparse_csr()))",
    "(E.to_sparse_bsr(2)._nnz(), E.to_sparse_bsr(2).dense_dim(), E.to_sparse_bsr(2).values().shape)",
    "D.to_sparse_csr().stride()",
    "D.to_sparse_csr().is_contiguous()",
    "D.to_sparse_csc().stride()",
    "D.to_sparse_csr().requires_grad",
    "D.to_sparse_csr().view(6)",
]

ARITHMETIC = [
    "D.to_sparse_csr() @ B",
    "torch.mm(D.to_sparse_csr(), B)",
    "torch.matmul(D.to_sparse_csr(), B)",
    "D.to_sparse_csr().matmul(B)",
    "D.to_sparse_csr() @ torch.ones(3)",
    "D.to_sparse_csc() @ B",
    "D.to_sparse_bsr((1, 1)) @ B",
    "E.to_sparse_bsr((2, 2)) @ torch.ones(4, 3)",
    "B.t() @ D.t().to_sparse_csr()",
    "torch.mm(torch.ones(2, 2), D.to_sparse_csr())",
    "D.to_sparse_csr() @ torch.ones(4, 2)",
    "torch.mm(D.to_sparse_csr(), B.double())",
    "D.to_sparse_csr().long() @ torch.ones(3, 2, dtype=torch.long)",
    "D.to_sparse_csr().half() @ torch.ones(3, 2).half()",
    "D.to_sparse_csr().to(torch.complex64) @ torch.ones(3, 2, dtype=torch.complex64)",
    "D.to_sparse_csr() @ D.t().to_sparse_csr()",
    "D.to_sparse_csr().double() @ B.double()",
    "torch.stack([D, D]).to_sparse_csr() @ torch.ones(2, 3, 2)",
    "torch.addmm(torch.ones(2, 2), D.to_sparse_csr(), B)",
    "torch.addmm(torch.ones(2, 2), D.to_sparse_csr(), B, beta=2, alpha=3)",
    "torch.addmm(D.to_sparse_csr(), B.t(), B)",
    "torch.sparse.mm(D.to_sparse_csr(), B)",
    "torch.sparse.addmm(torch.ones(2, 2), D.to_sparse_csr(), B)",
    "D.to_sparse_csr() * 2",
    "2 * D.to_sparse_csr()",
    "D.to_sparse_csr() * T(2.0)",
    "D.to_sparse_csr() * D.to_sparse_csr()",
    "D.to_sparse_csr() * D",
    "D * D.to_sparse_csr()",
    "D.to_sparse_csr() / 2",
    "D.to_sparse_csr() + D.to_sparse_csr()",
    "D.to_sparse_csr() + E[:2, :3].to_sparse_csr()",
    "D.to_sparse_csc() + E[:2, :3].to_sparse_csc()",
    "D.to_sparse_csr() + D.to_sparse_csc()",
    "D.to_sparse_csr() + D",
    "D + D.to_sparse_csr()",
    "D.to_sparse_csr() + D.to_sparse_csr().double()",
    "D.to_sparse_csr() - D.to_sparse_csr()",
    "torch.add(D.to_sparse_csr(), D.to_sparse_csr(), alpha=2)",
    "D.to_sparse_csr().add(2)",
    "D.to_sparse_csr().t()",
    "D.to_sparse_csc().t()",
    "D.to_sparse_csr().transpose(0, 1)",
    "D.to_sparse_bsr((1, 1)).t()",
    "D.to_sparse_csr().t_()",
    "D.to_sparse_csr().sum()",
    "D.to_sparse_csc().sum()",
    "D.to_sparse_csr().sum(dtype=torch.float64)",
    "D.to_sparse_csr().sum(0)",
    "D.to_sparse_csr().sum(0, keepdim=True)",
    "D.to_sparse_csr().sum(1, keepdim=True)",
    "torch.sparse.sum(D.to_sparse_csr())",
    "-D.to_sparse_csr()",
    "D.to_sparse_csr().neg()",
    "abs(-D.to_sparse_csr())",
    "D.to_sparse_csc().sin()",
    "D.to_sparse_bsr(1).sin()",
    "D.to_sparse_csr().isnan()",
    "D.to_sparse_csr().signbit()",
    "D.to_sparse_csr().cos()",
    "D.to_sparse_csr().exp()",
    "D.to_sparse_csr().mul_(2)",
    "D.to_sparse_csr().add_(D.to_sparse_csr())",
    "D.to_sparse_csr().sqrt_()",
    "D.to_sparse_csr().zero_()",
]

ZERO_KEEPING = (
    "abs angle asin asinh atan atanh ceil deg2rad erf erfinv expm1 fix floor frac log1p neg negative positive "
    "rad2deg relu round sgn sign sin sinh sqrt tan tanh trunc isinf isnan isneginf isposinf signbit"
).split()

COPIES_AND_LEGACY = [
    "torch.crow_indices_copy(D.to_sparse_csr())",
    "torch.col_indices_copy(D.to_sparse_csr())",
    "torch.ccol_indices_copy(D.to_sparse_csc())",
    "torch.row_indices_copy(D.to_sparse_csc())",
    "torch.values_copy(D.to_sparse_csr())",
    "torch.values_copy(D.to_sparse_bsr(1))",
    "torch.values_copy(D.to_sparse())",
    "torch.indices_copy(D.to_sparse())",
    "torch.indices_copy(D.to_sparse_csr())",
    "torch.values_copy(D)",
    "torch.crow_indices_copy(D.to_sparse_csc())",
    "torch.crow_indices_copy(D)",
    "torch.values_copy(D.to_sparse_csr()) is D",
    "torch.smm(D.to_sparse(), B)",
    "torch.smm(D.to_sparse_csr(), B)",
    "torch.smm(D, B)",
    "D.to_sparse().smm(B)",
    "torch.sspaddmm(torch.ones(2, 2).to_sparse(), D.to_sparse(), B)",
    "torch.sspaddmm(torch.ones(2, 2).to_sparse(), D.to_sparse(), B, beta=2, alpha=3)",
    "torch.sspaddmm(torch.ones(2, 2).to_sparse(), D.to_sparse_csr(), B)",
    "D.to_sparse().sspaddmm(D.to_sparse(), B.t())",
    "torch.saddmm(torch.ones(2, 2).to_sparse(), D.to_sparse(), B)",
    "torch.dsmm(D.to_sparse(), B)",
    "torch.dsmm(D.to_sparse_csr(), B)",
    "torch.dsmm(D, B)",
    "torch.hsmm(D.to_sparse(), B)",
    "torch.hspmm(D.to_sparse(), B)",
    "torch.hspmm(D.to_sparse_csr(), B)",
    "torch.hspmm(D, B)",
    "torch.hsmm(D.to_sparse_csr(), B)",
    "torch.resize_as_sparse_(torch.zeros(5, 5).to_sparse(), D.to_sparse())",
    "torch.resize_as_sparse_(D.to_sparse().coalesce(), torch.zeros(4, 6).to_sparse())",
    "torch.resize_as_sparse_(D.to_sparse().coalesce(), torch.zeros(1, 6).to_sparse())",
    "torch.resize_as_sparse_(D.to_sparse().coalesce(), torch.zeros(4, 6).to_sparse(1))",
    "torch.resize_as_sparse_(D.to_sparse_csr(), D.to_sparse())",
]


MORE = [
    "D.t().to_sparse_csr()",
    "D.t().to_sparse_csc()",
    "D.to_sparse_csr().t() @ torch.ones(2, 2)",
    "D.to_sparse_csr().t().to_dense()",
    "D.to_sparse_bsr(1).t().to_dense()",
    "E.to_sparse_bsr(2).t()",
    "E.to_sparse_bsr(2).t().to_dense()",
    "E.to_sparse_bsc(2).t()",
    "(D.to_sparse_csr().size(), D.to_sparse_csr().size(0), D.to_sparse_csr().dtype, D.to_sparse_csr().device, "
    "D.to_sparse_csr().is_cuda)",
    "(D.to_sparse_csr().nelement(), D.to_sparse_csr().element_size(), D.to_sparse_csr().is_floating_point(), "
    "D.to_sparse_csr().ndim)",
    "D.to_sparse_csr().float()",
    "D.to_sparse_csr().type(torch.float64)",
    "D.to_sparse_csr().to('cpu')",
    "D.to_sparse_csr().cpu()",
    "D.to_sparse_csr().tolist()",
    "D.to_sparse_csr().numpy()",
    "D.to_sparse_csr().contiguous()",
    "D.to_sparse_csr().sum(-1, keepdim=True)",
    "torch.stack([D, D]).to_sparse_csr().sum()",
    "torch.stack([D, D]).to_sparse_bsr(1)",
    "torch.stack([D, D]).to_sparse_csc()",
    "torch.stack([D, D]).to_sparse_csc().to_dense()",
    "torch.stack([D, D]).to_sparse_csr().to_sparse()",
    "torch.stack([D, D]).to_sparse_csr().transpose(1, 2)",
    "torch.stack([D, D]).to_sparse_csr().transpose(0, 1)",
    "T([[[1.0, 0]], [[0, 2.0]]]).to_sparse_csr(dense_dim=1).t()",
    "T([[[1.0, 0]], [[0, 2.0]]]).to_sparse_csr(dense_dim=1).to_sparse()",
    "T([[[1.0, 0]], [[0, 2.0]]]).to_sparse_csr(dense_dim=1) @ torch.ones(1, 2)",
    "D.to_sparse().to_sparse_csr(dense_dim=1)",
    "torch.zeros(3, 4).to_sparse_csr()",
    "torch.zeros(3, 4).to_sparse_csr() @ torch.ones(4, 2)",
    "torch.zeros(0, 4).to_sparse_csr()",
    "torch.zeros(3, 4).to_sparse_bsr(2)",
    "D.to_sparse_csr().values().is_contiguous()",
    "D.to_sparse_csr() == D.to_sparse_csr()",
    "D.to_sparse_csr().mul(2.5)",
    "D.to_sparse_csr().mul(T([2.0, 3.0, 4.0]))",
    "D.to_sparse_csr() * True",
    "D.to_sparse_csr().long() * 2.5",
    "D.to_sparse_csr().relu_()",
    "D.to_sparse_csr().neg_()",
    "D.to_sparse_csr().pow(2)",
    "D.to_sparse_csr().square()",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0]).to_sparse_csr()",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], check_invariants=True)",
    "torch.sparse_bsr_tensor([0, 1, 2], [1, 0], torch.ones(2, 2))",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], size=(2, 3), dtype=torch.float64)",
    "torch.sparse_csr_tensor(crow_indices=[0, 1, 3], col_indices=[1, 0, 2], values=[1.0, 2.0, 3.0], size=(2, 3))",
    "torch.sparse_csc_tensor(ccol_indices=[0, 1, 3], row_indices=[1, 0, 2], values=[1.0, 2.0, 3.0], size=(3, 2))",
    "torch.sparse_compressed_tensor(compressed_indices=[0, 1, 3], plain_indices=[1, 0, 2], values=[1.0, 2.0, 3.0], "
    "size=(2, 3), layout=torch.sparse_csr)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], (2, 3), None)",
    "torch.addmm(torch.ones(2, 2), D.to_sparse_csr(), B, beta=0)",
    "torch.addmm(torch.ones(2), D.to_sparse_csr(), B)",
    "D.to_sparse_csr().addmm(B.t(), B)",
    "torch.matmul(D.to_sparse_csr(), D.to_sparse_csr().t())",
    "D.to_sparse_csc() @ D.t().to_sparse_csc()",
    "D.to_sparse_coo().to_sparse_csr().crow_indices().dtype",
    "D.to_sparse(layout=torch.sparse_csr).col_indices().dtype",
    "D.to_sparse_csr() + 1",
    "D.to_sparse_csr().add(D, alpha=2)",
    "D.add(D.to_sparse_csr(), alpha=2)",
    "torch.sparse.mm(B.t(), D.t().to_sparse_csr())",
    "D.to_sparse_csr().requires_grad_().grad",
    "D.to_sparse_csr().is_leaf",
    "torch.crow_indices_copy(D.to_sparse_bsr(1))",
    "torch.ccol_indices_copy(D.to_sparse_bsc(1))",
    "torch.values_copy(D.to_sparse_csr(), out=torch.zeros(3))",
    "torch.sparse_csr_tensor(1, 2, 3, 4, 5, 6)",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], 'a')",
    "torch.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], (3, 2), dtype=3)",
    "torch.sspaddmm(1, 2, 3)",
    "torch.crow_indices_copy(1)",
    "D.to_sparse_csc().sum(0, keepdim=True)",
    "D.to_sparse_csc().sum(1, keepdim=True)",
    "D.to_sparse_bsr(1).sum()",
    "D.to_sparse_bsr(1).sum(0, keepdim=True)",
    "D.bool().to_sparse_csr()",
    "D.long().to_sparse_csc()",
    "D.half().to_sparse_csr()",
    "D.to_sparse_csr().half().to_dense()",
    "D.to_sparse_csr().to_sparse(layout=torch.sparse_coo)",
    "D.to_sparse_csr().to_sparse(layout=torch.sparse_bsc, blocksize=(1, 1))",
    "D.to_sparse_csr().to_sparse(layout=torch.sparse_bsr)",
    "D.to_sparse().to_sparse(layout=torch.sparse_bsr, blocksize=(2, 1))",
    "T([[[1.0, 2], [0, 0]], [[0, 0], [3, 4]]]).to_sparse(2).to_sparse_csr()",
    "T([[[1.0, 2], [0, 0]], [[0, 0], [3, 4]]]).to_sparse(2).to_sparse_csc()",
    "T([[[1.0, 2], [0, 0]], [[0, 0], [3, 4]]]).to_sparse().to_sparse_csr()",
    "torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0]).to(torch.float64)",
    "D.to_sparse_csr().values().dtype",
    "E.to_sparse_bsr(2) * 3",
    "E.to_sparse_bsr(2) * E.to_sparse_bsr(2)",
    "E.to_sparse_bsr(2) @ torch.ones(4, 2)",
    "E.to_sparse_bsc(2) @ torch.ones(4, 2)",
    "torch.ones(2, 4) @ E.to_sparse_bsr(2)",
    "E.to_sparse_csr().to_sparse_bsr(2) @ torch.ones(4, 1)",
    "D.to_sparse_csr().abs_()",
    "D.to_sparse_csr().sin_()",
    "D.to_sparse_csr().cos_()",
    "D.to_sparse_csr().exp_()",
    "D.to_sparse_csr().fill_(1)",
    "D.to_sparse_csr().copy_(D.to_sparse_csr())",
    "D.to_sparse_csr().max()",
    "D.to_sparse_csr().reshape(6)",
    "D.to_sparse_csr().flatten()",
    "D.to_sparse_csr().unsqueeze(0)",
    "D.to_sparse_csr().select(0, 1)",
    "D.to_sparse_csr().narrow(0, 0, 1)",
    "torch.cat([D.to_sparse_csr(), D.to_sparse_csr()])",
    "torch.nn.functional.linear(B.t(), D.to_sparse_csr())",
    "torch.nn.functional.relu(D.to_sparse_csr())",
    "D.to_sparse_csr().to_dense().requires_grad",
    "D.to_sparse_csr().requires_grad_(True).to_dense().requires_grad",
    "D.to_sparse_csr()[1]",
    "D.to_sparse_csr()[:, 1]",
    "D.to_sparse_csr().select(1, 2)",
    "D.to_sparse_csc().select(0, 1)",
    "D.to_sparse_csr().select(0, 1).is_coalesced()",
    "E.to_sparse_bsr(2).select(0, 1)",
    "D.to_sparse_csr().select(0, 5)",
    "D.to_sparse_csr().copy_(D.to_sparse_csr() * 2)",
    "D.to_sparse_csr().copy_(torch.eye(2, 3).to_sparse_csr())",
    "D.to_sparse_csr().copy_(D)",
    "D.to_sparse_csr().zero_().fill_(3)",
    "torch.ones(2, 4) @ E.to_sparse_bsc(2)",
    "torch.nn.functional.linear(torch.ones(2, 5, 3), D.to_sparse_csr(), torch.ones(2))",
    "torch.resize_as_sparse_(torch.eye(4).to_sparse_csr(), D.to_sparse_csr())",
    "torch.resize_as_sparse_(D.to_sparse_csr(), torch.eye(4).to_sparse_csc())",
    "torch.resize_as_sparse_(D.to_sparse_csr(), torch.eye(4).to_sparse_csr()).to_dense()[:, :3].shape",
    "torch.smm(1, D.to_sparse())",
    "torch.smm(D.to_sparse(), 'a')",
    "torch.smm(D, D.to_sparse_csr())",
    "torch.smm(D.to_sparse_csr(), D.to_sparse_csr())",
    "torch.hspmm(D.to_sparse(), [0, 1, 3])",
    "torch.hspmm(D.to_sparse(), D.to_sparse_csr())",
    "torch.hsmm(1, D)",
    "torch.dsmm('a', D.to_sparse())",
    "torch.resize_as_sparse_(D, D)",
    "torch.resize_as_sparse_(D.to_sparse(), 1)",
    "torch.resize_as_sparse_(D.to_sparse(), D.to_sparse_csr())",
    "torch.crow_indices_copy(D.to_sparse())",
    "torch.row_indices_copy(D.to_sparse())",
    "torch.indices_copy(D.to_sparse())",
    "torch.sparse_csr_tensor(D, D, D)",
    "torch.sparse_csr_tensor(D, D, T(1.0))",
    "torch.sparse_csr_tensor(D, T(1.0), D)",
    "torch.sparse_csr_tensor(D, None, 'a')",
    "torch.sparse_csr_tensor(D, 'a', None)",
    "torch.sparse_csr_tensor([0, 0, 0], [], [])",
    "torch.sparse_bsr_tensor([0, 1], [0], T([1.0, 2.0]))",
    "torch.sparse_csr_tensor(torch.zeros(0), T([0, 1, 2]), D)",
    "torch.sparse_csc_tensor(torch.zeros(0, dtype=torch.long), T([0, 1, 2]), torch.ones(3))",
    "torch.mm(D.to_sparse_csr(), torch.ones(3))",
    "D.to_sparse_csr().mm(torch.ones(3))",
    "torch.mm(D.to_sparse_csr(), T(1.0))",
    "torch.mm(torch.ones(3), D.to_sparse_csr())",
    "torch.mm(T(1.0), D.to_sparse_csr())",
    "torch.matmul(torch.ones(2), D.to_sparse_csr())",
    "torch.mm(D.to_sparse_csr(), torch.ones(3, 2, 1))",
    "D.to_sparse_csr() @ torch.ones(3, 2, 1)",
]


@pytest.mark.parametrize("expr", MORE)
def test_more_behaviours(expr):
    same(expr)


@pytest.mark.parametrize("expr", CONSTRUCTION)
def test_construction(expr):
    same(expr)


@pytest.mark.parametrize("expr", INVARIANTS)
def test_invariant_checks(expr):
    same(expr)


def test_invariant_checks_switch():
    for lib in (torch, ember):
        with lib.sparse.check_sparse_tensor_invariants():
            assert lib.sparse.check_sparse_tensor_invariants.is_enabled()
            with pytest.raises(RuntimeError, match="col_indices < ncols"):
                lib.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2, 3], (2, 2))
        assert not lib.sparse.check_sparse_tensor_invariants.is_enabled()


@pytest.mark.parametrize("expr", CONVERSIONS)
def test_conversions(expr):
    same(expr)


@pytest.mark.parametrize("expr", ACCESSORS)
def test_accessors(expr):
    same(expr)


@pytest.mark.parametrize("expr", ARITHMETIC)
def test_arithmetic(expr):
    same(expr)


@pytest.mark.parametrize("name", ZERO_KEEPING)
def test_zero_keeping_unary(name):
    same(f"torch.{name}(T([[0.5, 0, -0.25], [0, 0.75, 0]]).to_sparse_csr())")
    same(f"T([[0.5, 0, -0.25], [0, 0.75, 0]]).to_sparse_csc().{name}()")


@pytest.mark.parametrize("expr", COPIES_AND_LEGACY)
def test_copies_and_legacy_products(expr):
    same(expr)


def test_printing_options():
    for expr in ("torch.sparse_csr_tensor([0, 2, 4], [0, 1, 0, 1], torch.arange(4.0) / 3)",
                 "torch.arange(40.0).reshape(4, 10).to_sparse_csr()"):  # fmt: skip
        same(expr)
    for lib in (torch, ember):
        lib.set_printoptions(precision=2)
    try:
        same("torch.sparse_csr_tensor([0, 2, 4], [0, 1, 0, 1], torch.arange(4.0) / 3)")
    finally:
        for lib in (torch, ember):
            lib.set_printoptions(profile="default")


# --- gradients -------------------------------------------------------------------------


def _grads(fn):
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib))
    return out


def test_sparse_mm_gradients():
    def fn(lib):
        c = lib.tensor([[1.0, 0, 2], [0, 3, 0]]).to_sparse_csr().requires_grad_()
        b = lib.arange(6.0).reshape(3, 2).requires_grad_()
        r = lib.sparse.mm(c, b)
        (r * lib.tensor([[1.0, 2], [3, 4]])).sum().backward()
        return r.tolist(), c.grad.to_dense().tolist(), str(c.grad.layout), b.grad.tolist()

    want, got = _grads(fn)
    assert got == want


def test_to_dense_backward_and_values_gradient():
    def fn(lib):
        c = lib.tensor([[1.0, 0, 2], [0, 3, 0]]).to_sparse_csr().requires_grad_()
        r = c.to_dense()
        (r * lib.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
        v = lib.tensor([1.0, 2, 3]).requires_grad_()
        cv = lib.sparse_csr_tensor(lib.tensor([0, 2, 3]), lib.tensor([0, 2, 1]), v, (2, 3))
        (cv @ lib.arange(6.0).reshape(3, 2)).sum().backward()
        leaves = (c.is_leaf, cv.is_leaf, cv.requires_grad, (c * 2).is_leaf)
        return c.grad.to_dense().tolist(), str(c.grad.layout), v.grad.tolist(), c.is_leaf, c.requires_grad, leaves

    want, got = _grads(fn)
    assert got == want


def test_addmm_and_dense_to_csr_gradients():
    def fn(lib):
        b = lib.arange(6.0).reshape(3, 2).requires_grad_()
        c = lib.tensor([[1.0, 0, 2], [0, 3, 0]]).to_sparse_csr()
        r = lib.addmm(lib.ones(2, 2), c, b, beta=0.5, alpha=2)
        r.sum().backward()
        d = lib.tensor([[1.0, 0, 2], [0, 3, 0]], requires_grad=True)
        d.to_sparse_csr().to_dense().sum().backward()
        m = (c * 2).to_dense()
        return r.tolist(), b.grad.tolist(), d.grad.tolist(), m.tolist()

    want, got = _grads(fn)
    assert got == want


def test_mm_gradients_double_match_finite_differences():
    # gradcheck through the C++ kernel and its backward (values and dense)
    crow, col = ember.tensor([0, 2, 3, 3]), ember.tensor([0, 2, 1])
    values = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    dense = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)

    def f(v, d):
        return ember.sparse_csr_tensor(crow, col, v, (3, 3)) @ d

    assert ember.autograd.gradcheck(f, (values, dense))


# --- checkpoints ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc", "coo"])
def test_save_load_both_ways(layout):
    def make(lib):
        e = lib.tensor([[0.0, 1.5, 0.0, 0.0], [2.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 5.0, 0.0]])
        if layout == "coo":
            return e.to_sparse()
        if layout in ("bsr", "bsc"):
            return getattr(e, f"to_sparse_{layout}")((2, 2))
        return getattr(e, f"to_sparse_{layout}")()

    for src, dst in ((torch, ember), (ember, torch), (ember, ember)):
        buf = io.BytesIO()
        src.save({"m": make(src)}, buf)
        buf.seek(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = dst.load(buf)["m"]
        assert repr(loaded) == repr(make(dst))


# --- generated shapes and densities ------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 9),
    cols=st.integers(1, 9),
    n=st.integers(1, 5),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["csr", "csc"]),
)
def test_generated_products_and_conversions(rows, cols, n, density, seed, layout):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((rows, cols)) * (rng.random((rows, cols)) < density)
    other = rng.standard_normal((cols, n))
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = getattr(lib.tensor(dense), f"to_sparse_{layout}")()
            v = s.values().clone().requires_grad_()
            s2 = lib.sparse_compressed_tensor(
                s.crow_indices() if layout == "csr" else s.ccol_indices(),
                s.col_indices() if layout == "csr" else s.row_indices(),
                v,
                s.shape,
                layout=s.layout,
            )
            b = lib.tensor(other).requires_grad_()
            r = s2 @ b
            r.pow(2).sum().backward()
            results.append((repr(s), r.detach().numpy(), v.grad.numpy(), b.grad.numpy(), repr(s.to_sparse()),
                            repr(s.t()), repr(s + s) if layout == "csr" else ""))  # fmt: skip
    want, got = results
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12, atol=1e-12)
    assert got[4:] == want[4:]


@settings(max_examples=15, deadline=None)
@given(
    rb=st.integers(1, 4),
    cb=st.integers(1, 4),
    bh=st.integers(1, 3),
    bw=st.integers(1, 3),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["bsr", "bsc"]),
)
def test_generated_block_layouts(rb, cb, bh, bw, density, seed, layout):
    rng = np.random.default_rng(seed)
    mask = np.kron(rng.random((rb, cb)) < density, np.ones((bh, bw)))
    dense = rng.standard_normal((rb * bh, cb * bw)) * mask
    got = []
    for lib in (torch, ember):
        s = getattr(lib.tensor(dense), f"to_sparse_{layout}")((bh, bw))
        got.append((repr(s), repr(s.to_dense()), repr(s.to_sparse())))
    assert got[1] == got[0]


@settings(max_examples=15, deadline=None)
@given(
    batch=st.integers(1, 3),
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    dense=st.integers(0, 2),
    fill=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["csr", "csc"]),
)
def test_generated_batched_and_hybrid(batch, rows, cols, dense, fill, seed, layout):
    # the same number of specified elements in every batch, as the layouts require
    rng = np.random.default_rng(seed)
    k = int(round(fill * rows * cols))
    values = np.zeros((batch, rows * cols) + (2,) * dense)
    for b in range(batch):
        where = rng.permutation(rows * cols)[:k]
        values[b, where] = rng.standard_normal((k,) + (2,) * dense) + 3.0
    x = values.reshape((batch, rows, cols) + (2,) * dense)
    got = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = getattr(lib.tensor(x), f"to_sparse_{layout}")(dense_dim=dense or None)
            got.append((repr(s), repr(s.to_dense()), s._nnz(), s.dense_dim(), tuple(s.values().shape)))
    assert got[1] == got[0]


def test_leaf_gradients_dense_through_mm_pattern_through_sparse_mm():
    # A compressed leaf gets PyTorch's dense gradient through mm/@/addmm (MmBackward0,
    # AddmmBackward0) and one on its pattern through sparse.mm and to_dense.
    def fn(lib):
        d = lib.tensor([[1.0, 0, 2], [0, 3, 0]])
        b = lib.arange(6.0).reshape(3, 2)
        out = []

        def grad_of(c):
            g = c.grad
            return (str(g.layout), g.to_dense().tolist() if g.layout != lib.strided else g.tolist())

        c = d.to_sparse_csr().requires_grad_()
        (c @ b).sum().backward()
        out.append(grad_of(c))
        c = d.to_sparse_csr().requires_grad_()
        lib.addmm(lib.ones(2, 2), c, b, alpha=2).sum().backward()
        out.append(grad_of(c))
        c = d.to_sparse_csr().requires_grad_()
        (b @ c).sum().backward()
        out.append(grad_of(c))
        c = d.to_sparse_csc().requires_grad_()
        (c @ b).pow(2).sum().backward()
        out.append(grad_of(c))
        c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 2, 3], requires_grad=True)
        (c @ b).sum().backward()
        (c @ b).sum().backward()
        out.append(grad_of(c))
        c.grad = None
        out.append(c.grad)
        c = d.to_sparse_csr().requires_grad_()
        lib.sparse.mm(c, b).sum().backward()
        out.append(grad_of(c))
        return out

    want, got = _grads(fn)
    assert got == want


def test_gcn_training_with_a_csr_adjacency_matches_pytorch():
    # A two-layer graph convolution over a CSR normalised adjacency, as graph
    # programs write it: sparse.mm and @ in the forward pass, Adam, 15 steps.
    rng = np.random.default_rng(7)
    n, f, h, c = 60, 12, 16, 3
    adj = (rng.random((n, n)) < 0.08).astype("float64")
    adj = np.maximum(adj, adj.T) + np.eye(n)
    adj = adj / adj.sum(1, keepdims=True)
    feats = rng.standard_normal((n, f))
    labels = rng.integers(0, c, n)
    w1, w2 = rng.standard_normal((f, h)) * 0.3, rng.standard_normal((h, c)) * 0.3
    losses = []
    for lib in (torch, ember):
        a = lib.tensor(adj).to_sparse_csr()
        x, y = lib.tensor(feats), lib.tensor(labels)
        p1, p2 = lib.tensor(w1).requires_grad_(), lib.tensor(w2).requires_grad_()
        opt = lib.optim.Adam([p1, p2], lr=0.05)
        run_losses = []
        for _ in range(15):
            opt.zero_grad()
            hidden = lib.relu(lib.sparse.mm(a, x @ p1))
            out = a @ (hidden @ p2)
            loss = lib.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            run_losses.append(loss.item())
        losses.append(run_losses)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-10)
