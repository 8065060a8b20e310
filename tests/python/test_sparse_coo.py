"""Sparse COO tensors against PyTorch: construction, printing, coalescing,
conversions, the operators graph networks use, their errors and gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")


def both(fn):
    """fn(lib) under each library; results as text for comparison."""
    out = []
    for lib in (torch, ember):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001 - the exception type is compared
            out.append((type(e).__name__, str(e).split("\n")[0][:120]))
    return out


def same(fn):
    want, got = both(fn)
    assert got == want


def sample(lib, dtype=None):
    i = lib.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = lib.tensor([3.0, 4.0, 5.0, 1.0])
    return lib.sparse_coo_tensor(i, v, (2, 3), dtype=dtype)


@pytest.mark.parametrize(
    "expr",
    [
        "str(s)",
        "repr(s.coalesce())",
        "str(lib.sparse_coo_tensor(s._indices(), s._values(), (2, 3), dtype=lib.int64))",
        "str(s.double())",
        "(s.is_coalesced(), s.coalesce().is_coalesced(), s._nnz(), str(s.layout), s.is_sparse, tuple(s.shape))",
        "(str(s.dtype), s.sparse_dim(), s.dense_dim(), s.dim(), s.ndim, str(s.device), s.requires_grad)",
        "str(s.to_dense())",
        "str(s.coalesce().indices()) + str(s.coalesce().values())",
        "s.indices()",
        "str(lib.eye(2, 3) + s)",
        "str(lib.eye(2, 3) + lib.sparse_coo_tensor(s._indices(), lib.ones(4), (2, 3), dtype=lib.int64))",
        "s + lib.ones(2, 3)",
        "str(s @ lib.arange(6.0).reshape(3, 2))",
        "str(lib.mm(s, lib.arange(6.0).reshape(3, 2)))",
        "str(lib.spmm(s, lib.arange(6.0).reshape(3, 2)))",
        "str(lib.sparse.mm(s, lib.arange(6.0).reshape(3, 2)))",
        "str(lib.arange(4.0).reshape(2, 2) @ s)",
        "s @ lib.ones(2, 2)",
        "str(lib.diag(lib.tensor([1.0, 0.0, 2.0])).to_sparse())",
        "str(lib.tensor([[0.0, 1.5], [0.0, 0.0], [2.0, 3.0]]).to_sparse())",
        "str(lib.tensor([[0.0, 1.5], [0.0, 0.0], [2.0, 3.0]]).to_sparse(1))",
        "s.view(6)",
        "str(s.sum()) + str(lib.sparse.sum(s, 1)) + str(lib.sparse.sum(s, 0))",
        "str(s * 2) + str(-s) + str(2 * s)",
        "str(s.t()) + str(s.transpose(0, 1))",
        "str(s + s)",
        "str(s + lib.sparse_coo_tensor([[1], [1]], [7.0], (2, 3)))",
        "str(lib.sparse_coo_tensor([[1], [1]], [7.0], (2, 3)) + s)",
        "str(s.coalesce() + lib.sparse_coo_tensor([[1], [1]], [7.0], (2, 3)))",
        "lib.mm(lib.ones(3, 3), s)",
        "str((s + s).coalesce())",
        "str(lib.sparse_coo_tensor([[0, 2]], [1.0, 2.0]))",
        "str(lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 2)))",
        "lib.sparse_coo_tensor([[0, 1]], [1.0], (2,))",
        "str(s.to_dense().is_sparse) + str(lib.ones(2).to_dense())",
        "str(s.float()) + str(s.to(lib.float64))",
        "lib.ones(2).coalesce()",
        "lib.ones(2).indices()",
        "lib.ones(2).values()",
        "lib.ones(2)._nnz()",
        "lib.ones(2)._indices()",
        "lib.ones(2).is_coalesced()",
        "(lib.ones(2, 3).sparse_dim(), lib.ones(2, 3).dense_dim(), lib.ones(2).is_sparse, str(lib.ones(2).layout))",
    ],
)
def test_behaves_as_torch(expr):
    same(lambda lib: eval(expr, {"lib": lib, "s": sample(lib)}))


def test_gradient_through_sparse_times_dense():
    grads = []
    for lib in (torch, ember):
        s = sample(lib)
        w = lib.arange(6.0).reshape(3, 2).requires_grad_()
        m = lib.arange(4.0).reshape(2, 2).requires_grad_()
        ((s @ w).sum() * 2 + (m @ s).pow(2).sum()).backward()
        grads.append((w.grad.tolist(), m.grad.tolist()))
    assert grads[1] == grads[0]


def test_graph_convolution_training_matches_torch():
    """Two graph-convolution layers over a normalised sparse adjacency, Adam, a few steps."""
    rs = np.random.RandomState(0)
    n, f, h, c = 40, 8, 6, 3
    edges = rs.randint(n, size=(2, 120))
    feats = (rs.rand(n, f) < 0.3).astype(np.float32)
    labels = rs.randint(c, size=n)
    w1, w2 = rs.randn(f, h).astype(np.float32) * 0.3, rs.randn(h, c).astype(np.float32) * 0.3
    losses = []
    for lib in (torch, ember):
        adj = lib.eye(n) + lib.sparse_coo_tensor(lib.tensor(edges), lib.ones(edges.shape[1]), (n, n))
        deg = lib.diag(lib.sqrt(1 / adj.sum(1))).to_sparse()
        adj = (deg @ adj @ deg).to_sparse()
        x = lib.tensor(feats).to_sparse()
        k1, k2 = lib.tensor(w1).requires_grad_(), lib.tensor(w2).requires_grad_()
        opt = lib.optim.Adam([k1, k2], lr=0.05)
        y = lib.tensor(labels)
        run = []
        for _ in range(10):
            opt.zero_grad()
            hidden = lib.relu(lib.spmm(adj, lib.mm(x, k1)))
            out = lib.nn.functional.log_softmax(lib.spmm(adj, lib.mm(hidden, k2)), dim=1)
            loss = lib.nn.functional.nll_loss(out, y)
            loss.backward()
            opt.step()
            run.append(round(loss.item(), 4))
        losses.append(run)
    assert losses[1] == losses[0]


_PRODUCT_OPERANDS = {
    "s2": lambda L: L.tensor([[1.0, 2, 0], [0, 3, 4], [5, 0, 6]]).to_sparse(),
    "s1": lambda L: L.tensor([1.0, 0, 2]).to_sparse(),
    "s3": lambda L: L.ones(2, 3, 3).to_sparse(),
    "d2": lambda L: L.arange(9.0).reshape(3, 3),
    "d1": lambda L: L.tensor([1.0, 2, 3]),
    "d0": lambda L: L.tensor(1.0),
}


@pytest.mark.parametrize(
    "call", ["L.mm(a, b)", "L.sparse.mm(a, b)", "L.hsmm(a, b)", "L.smm(a, b)", "a @ b", "L.sspaddmm(c, a, b)"]
)
def test_products_of_mismatched_ranks_as_torch(call):
    """Values, or the exception type and message PyTorch gives, for every pairing
    of sparse and dense operands of 0 to 3 dims."""

    def run(L, ka, kb):
        names = {"L": L, "a": _PRODUCT_OPERANDS[ka](L), "b": _PRODUCT_OPERANDS[kb](L), "c": L.eye(3).to_sparse()}
        try:
            r = eval(call, names)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)[:80]
        return "ok", (r.to_dense() if r.layout != L.strided else r).tolist()

    for ka in _PRODUCT_OPERANDS:
        for kb in ("s2", "s1", "d2", "d1", "d0"):
            if ka.startswith("s") or kb.startswith("s"):
                assert run(ember, ka, kb) == run(torch, ka, kb), (call, ka, kb)


# ---- autograd nodes, softmax, sparse gradients ----------------------------------------


def _graph_inputs(lib):
    i = lib.tensor([[0, 1, 1, 2, 0, 2], [2, 0, 2, 1, 0, 2]])
    v = lib.tensor([0.5, -1.25, 2.0, 0.75, -0.5, 1.5], dtype=lib.float64, requires_grad=True)
    d = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).div(7).requires_grad_()
    return i, v, d


GRAPH_CASES = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "matmul": lambda L, s, d: s @ d,
    "dense_mm_sparse": lambda L, s, d: L.mm(d[:, :3].t(), s),
    "sparse.addmm": lambda L, s, d: L.sparse.addmm(d, s, d, beta=0.5, alpha=2),
    "addmm": lambda L, s, d: L.addmm(d, s, d),
    "mv": lambda L, s, d: L.mv(s, d[:, 0]),
    "softmax": lambda L, s, d: L.sparse.softmax(s, 1),
    "log_softmax": lambda L, s, d: L.sparse.log_softmax(s, 0),
    "to_dense": lambda L, s, d: s.to_dense(),
    "coalesce": lambda L, s, d: s.coalesce(),
    "sum_dim": lambda L, s, d: L.sparse.sum(s, 1),
    "mul": lambda L, s, d: s * 3,
    "add_related": lambda L, s, d: s + s * 3,
    "dense_add": lambda L, s, d: d[:, :3] + s,
    "t": lambda L, s, d: s.t(),
    "neg": lambda L, s, d: -s,
    "sparse_mask": lambda L, s, d: d[:, :3].sparse_mask(s.coalesce()),
    "creation": lambda L, s, d: s,
}


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_nodes_printing_and_gradients_as_pytorch(name):
    def program(lib):
        i, v, d = _graph_inputs(lib)
        s = lib.sparse_coo_tensor(i, v, (3, 3))
        out = GRAPH_CASES[name](lib, s, d)
        dense = out.to_dense() if out.layout == lib.sparse_coo else out
        dense.sin().sum().backward()
        grads = [None if g is None else [round(x, 10) for x in g.flatten().tolist()] for g in (v.grad, d.grad)]
        return str(out.layout), type(out.grad_fn).__name__, out.is_leaf, str(out), grads

    same(program)


def test_sparse_leaf_gradient_is_sparse():
    def program(lib):
        i, _, _ = _graph_inputs(lib)
        leaf = lib.sparse_coo_tensor(i, lib.ones(6), (3, 3), requires_grad=True)
        lib.sparse.mm(leaf, lib.ones(3, 2)).sum().backward()
        return str(leaf.grad), leaf.is_leaf, leaf.grad_fn

    same(program)


def test_softmax_with_dense_dims_as_pytorch():
    def program(lib):
        i = lib.tensor([[0, 0, 1], [1, 1, 0]])
        s = lib.sparse_coo_tensor(i, lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (2, 2, 2))
        return [str(f(s, d)) for f in (lib.sparse.softmax, lib.sparse.log_softmax) for d in (0, 1, 2, -1)]

    same(program)


def test_invariant_and_beta_warnings_once_as_pytorch():
    code = (
        "import warnings, sys\n"
        "warnings.simplefilter('always')\n"
        "lib = __import__(sys.argv[1])\n"
        "i = lib.tensor([[0]]); v = lib.tensor([1.0])\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    lib.ones(2, 2).to_sparse()\n"
        "    lib.sparse_coo_tensor(i, v, (2,)); lib.sparse_coo_tensor(i, v, (2,))\n"
        "    lib.ones(2, 2).to_sparse_csr(); lib.ones(2, 2).to_sparse_csc()\n"
        "    lib.sparse.check_sparse_tensor_invariants.disable()\n"
        "print([str(x.message).split(' (Triggered')[0].split('.')[0] for x in w])\n"
    )
    import subprocess
    import sys

    runs = [
        subprocess.run([sys.executable, "-c", code, lib], capture_output=True, text=True, check=True).stdout
        for lib in ("torch", "ember")
    ]
    assert runs[0] == runs[1]
