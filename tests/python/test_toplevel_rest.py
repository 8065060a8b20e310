"""Top-level names beside the operators, against PyTorch: symbolic-size
helpers on plain numbers, build facts, control flow run eagerly,
empty_permuted, the copies of complex views, randomized low-rank SVD/PCA,
torch.functional and the exception and class aliases."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

LIBS = (torch, ember)


def same(fn):
    got = []
    for lib in LIBS:
        try:
            got.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]
    return got[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.sym_int(-3.7),
        lambda L: L.sym_float(3),
        lambda L: (L.sym_max(2, 5.0), L.sym_max(7, 5), L.sym_min(3, 2.5), L.sym_min(2, 3)),
        lambda L: (L.sym_not(True), L.sym_sqrt(4), L.sym_sum([1, 2, 3]), L.sym_sum((1.5, 2)), L.sym_ite(False, 1, 2)),
        lambda L: L.sym_fresh_size(3),
        lambda L: L.sym_constrain_range(5, min=0, max=3),
        lambda L: L.sym_constrain_range(5, min=0, max=10),
        lambda L: L.sym_constrain_range_for_size(5, min=0, max=10),
        lambda L: L.sym_max(L.tensor(1), 2),
        lambda L: (isinstance(3, L.SymInt), isinstance(3.0, L.SymFloat), isinstance(True, L.SymBool)),
    ],
)
def test_symbolic_size_helpers_on_numbers(call):
    same(call)


@pytest.mark.parametrize(
    "size,order",
    [((2, 3, 4), (2, 0, 1)), ((2, 0, 3), (2, 1, 0)), ((5,), (0,)), ((2, 3), (0,)), ((2, 3), (0, 2)), ((2, 3), (1, 1))],
)
def test_empty_permuted(size, order):
    def make(L):
        t = L.empty_permuted(size, order, dtype=L.float64, requires_grad=True)
        return tuple(t.shape), t.stride(), t.dtype.is_floating_point, t.is_leaf, t.requires_grad

    same(make)


def test_cond_and_while_loop_run_eagerly():
    same(lambda L: L.cond(L.tensor(True), lambda x: x + 1, lambda x: x - 1, (L.ones(2),)).tolist())
    same(lambda L: L.cond(False, lambda x: x + 1, lambda x: x - 1, [L.ones(2)]).tolist())
    same(lambda L: L.cond(L.ones(2), lambda: 1, lambda: 2))
    same(
        lambda L: [
            t.tolist() for t in L.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (L.tensor(0), L.ones(2)))
        ]
    )


def test_small_composites_and_facts():
    same(lambda L: L.adjoint(L.arange(6.0).reshape(2, 3)).tolist())
    same(lambda L: L.adjoint(L.tensor([[1 + 2j, 3j]])).resolve_conj().tolist())
    same(lambda L: L.view_as_real_copy(L.tensor([1 + 2j, 3 - 1j])).tolist())
    same(lambda L: L.view_as_complex_copy(L.tensor([[1.0, 2.0], [3.0, -1.0]])).tolist())
    same(lambda L: L.is_distributed(L.ones(2)))
    same(lambda L: (L.has_lapack, L.has_spectral, L.legacy_contiguous_format == L.contiguous_format))
    same(lambda L: L.get_device_module("cpu").__name__.split(".")[-1])
    same(lambda L: L.get_device_module("meta"))
    same(lambda L: L.init_num_threads())
    assert ember.has_mkl is False  # the BLAS is OpenBLAS
    assert ember.functional.einsum is ember.einsum and ember.functional.__all__ == torch.functional.__all__
    assert ember.GradScaler is ember.amp.GradScaler and ember.Future is ember.futures.Future
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError and issubclass(ember.AcceleratorError, RuntimeError)
    assert issubclass(ember.FatalError, Exception) and not issubclass(ember.FatalError, RuntimeError)


@pytest.mark.parametrize("shape,q", [((20, 30), 10), ((30, 12), 4), ((3, 16, 9), 5)])
def test_low_rank_svd_and_pca(shape, q):
    def run(L):
        L.manual_seed(0)
        A = L.randn(*shape, dtype=L.float64)
        U, S, V = L.svd_lowrank(A, q=q)
        Up, Sp, Vp = L.pca_lowrank(A, q=q)
        recon = float((U @ L.diag_embed(S) @ V.mT - A).norm())
        return [round(float(s), 8) for s in S.flatten()], [round(float(s), 8) for s in Sp.flatten()], round(recon, 6)

    same(run)
    same(lambda L: L.pca_lowrank(L.ones(3, 4), q=9))


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.gradient(L.tensor([1.0, 2, 4, 8, 16])),
        lambda L: L.gradient(L.tensor([[1.0, 2, 4], [8, 16, 32]]), spacing=2.0, dim=1, edge_order=2),
        lambda L: L.gradient(L.tensor([1.0, 2, 4, 8]), spacing=(L.tensor([0.0, 1, 1.5, 3.5]),)),
        lambda L: L.gradient(L.tensor([1.0, 2, 4, 8]), spacing=(L.tensor([0.0, 1, 1.5, 3.5]),), edge_order=2),
        lambda L: L.gradient(L.arange(12.0).reshape(3, 4) ** 2, spacing=[1.0, 0.5]),
        lambda L: L.gradient(L.arange(12.0).reshape(3, 4) ** 2, dim=(0,), spacing=3),
        lambda L: L.gradient(L.tensor([1, 4, 9, 16])),
        lambda L: L.gradient(L.ones(2), edge_order=2),
        lambda L: L.gradient(L.ones(3), edge_order=3),
        lambda L: L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
    ],
)
def test_gradient(call):
    same(lambda L: [(t.dtype.is_floating_point, t.tolist()) for t in call(L)])


def test_nonzero_static_and_index_reduce():
    same(lambda L: L.nonzero_static(L.tensor([[1.0, 2, 0], [0, 3, 4]]), size=6).tolist())
    same(lambda L: L.nonzero_static(L.tensor([[1.0, 2, 0], [0, 3, 4]]), size=2, fill_value=7).tolist())
    same(lambda L: L.tensor([0, 5, 0, 6]).nonzero_static(size=3).tolist())
    same(lambda L: L.nonzero_static(L.ones(2), size=-1))
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            same(
                lambda L, r=reduce, i=include_self: (
                    L.ones(3, 3)
                    .index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(1.0, 13).reshape(4, 3), r, include_self=i)
                    .tolist()
                )
            )
    same(lambda L: L.ones(3, 3).index_reduce(0, L.tensor([0, 1]), L.ones(2, 3), "sum"))

    def in_place(L):
        t = L.ones(3, 4)
        out = t.index_reduce_(1, L.tensor([3, 0]), L.full((3, 2), 5.0), "amax")
        return out is t, t.tolist()

    same(in_place)


def test_fork_and_wait_run_the_task_eagerly():
    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1

    same(lambda L: L.wait(L.fork(lambda a, b=1: a + b, 2, b=3)))
    same(lambda L: L.fork(lambda: L.ones(2) * 2).wait().tolist())
    same(lambda L: (lambda f: (f.done(), f.value()))(L.fork(lambda: None)))
    same(lambda L: L.fork(sorted, [3, 1, 2]).wait())
    same(lambda L: L.fork(3))
    same(lambda L: L.fork(lambda: 1 / 0))
    same(lambda L: L.wait(3))
    # a module is a callable task; its result is the library's tensor
    assert torch.fork(AddOne(), torch.ones(1)).wait().tolist() == [2.0]
    calls = []
    fut = ember.fork(calls.append, 1)
    assert calls == [1] and fut.done()
