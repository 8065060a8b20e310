"""The autograd nodes of torch.linalg and the linear-algebra functions, as
PyTorch records them: the name of every output's grad_fn (one node on the
inputs as given for solve with a vector or right-hand side, lu, lu_unpack,
householder_product, ormqr, cholesky_solve, triangular_solve; PyTorch's
views and reductions on top of multi_dot, inner, kron, matrix_norm, cond and
stft), the node's inputs, and for some the values and gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import torch

import ember

INF = float("inf")


def arrays(*shapes, complex_=False, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape)
        if complex_:
            a = a + 1j * rng.standard_normal(shape)
        out.append(a)
    return out


CREATED = []  # the leaves of the case being run


def tensors(lib, arrs, grad=True):
    """float64 (complex128) tensors of the arrays."""

    def make(a):
        dtype = lib.complex128 if np.iscomplexobj(a) else lib.float64
        t = lib.tensor(a.tolist(), dtype=dtype, requires_grad=grad)
        CREATED.append(t)
        return t

    return [make(a) if isinstance(a, np.ndarray) else a for a in arrs]


def well_conditioned(n, batch=(), seed=0, complex_=False):
    (a,) = arrays(batch + (n, n), complex_=complex_, seed=seed)
    return a + 3 * n * np.eye(n)


def spd(n, seed=0):
    (a,) = arrays((n, n), seed=seed)
    return a @ a.T + n * np.eye(n)


def chol(n, seed=0):
    return np.linalg.cholesky(spd(n, seed))


def qr_factors(lib, shape, seed=0):
    (a,) = arrays(shape, seed=seed)
    with lib.no_grad():
        h, tau = lib.geqrf(lib.tensor(a.tolist(), dtype=lib.float64))
    CREATED.extend([h.requires_grad_(), tau.requires_grad_()])
    return h, tau


A3, B32, B23, V3 = well_conditioned(3), *arrays((3, 2), (2, 3), (3,), seed=1)
M34, M43, M45, M52 = arrays((3, 4), (4, 3), (4, 5), (5, 2), seed=2)
L3 = chol(3)

# name -> fn(lib): the outputs (a tensor or a tuple of them)
CASES = {
    "solve_vector": lambda t: t.linalg.solve(*tensors(t, [A3, V3])),
    "solve_matrix": lambda t: t.linalg.solve(*tensors(t, [A3, B32])),
    "solve_left_false": lambda t: t.linalg.solve(*tensors(t, [A3, B23]), left=False),
    "solve_ex_vector": lambda t: t.linalg.solve_ex(*tensors(t, [A3, V3])),
    "solve_batched_vector": lambda t: t.linalg.solve(*tensors(t, [well_conditioned(3, (2,)), arrays((2, 3))[0]])),
    "solve_broadcast_vector": lambda t: t.linalg.solve(*tensors(t, [well_conditioned(3, (2,)), V3])),
    "solve_complex_vector": lambda t: t.linalg.solve(
        *tensors(t, [well_conditioned(3, complex_=True), arrays((3,), complex_=True)[0]])
    ),
    "lu": lambda t: t.linalg.lu(*tensors(t, [A3])),
    "lu_wide": lambda t: t.linalg.lu(*tensors(t, [M34])),
    "lu_tall_batched": lambda t: t.linalg.lu(*tensors(t, [arrays((2, 4, 3))[0]])),
    "lu_complex": lambda t: t.linalg.lu(*tensors(t, [well_conditioned(3, complex_=True)])),
    "lu_unpack": lambda t: t.lu_unpack(*t.linalg.lu_factor(*tensors(t, [A3]))),
    "lu_unpack_no_data": lambda t: t.lu_unpack(*t.linalg.lu_factor(*tensors(t, [A3])), unpack_data=False),
    "lu_unpack_no_pivots": lambda t: t.lu_unpack(*t.linalg.lu_factor(*tensors(t, [A3])), unpack_pivots=False),
    "matrix_norm_1": lambda t: t.linalg.matrix_norm(*tensors(t, [A3]), 1),
    "matrix_norm_-1": lambda t: t.linalg.matrix_norm(*tensors(t, [A3]), -1),
    "matrix_norm_inf": lambda t: t.linalg.matrix_norm(*tensors(t, [A3]), INF),
    "matrix_norm_-inf_batched": lambda t: t.linalg.matrix_norm(*tensors(t, [arrays((2, 3, 4))[0]]), -INF),
    "matrix_norm_1_dims_keepdim": lambda t: t.linalg.matrix_norm(
        *tensors(t, [arrays((2, 3, 4))[0]]), 1, dim=(2, 0), keepdim=True
    ),
    "matrix_norm_nuc_keepdim": lambda t: t.linalg.matrix_norm(
        *tensors(t, [arrays((2, 3, 4))[0]]), "nuc", dim=(2, 0), keepdim=True
    ),
    "norm_inf": lambda t: t.linalg.norm(*tensors(t, [A3]), INF),
    "cond": lambda t: t.linalg.cond(*tensors(t, [A3])),
    "cond_-2_batched": lambda t: t.linalg.cond(*tensors(t, [well_conditioned(3, (2,))]), -2),
    "cond_fro": lambda t: t.linalg.cond(*tensors(t, [A3]), "fro"),
    "cond_1": lambda t: t.linalg.cond(*tensors(t, [A3]), 1),
    "cond_-inf_complex": lambda t: t.linalg.cond(*tensors(t, [well_conditioned(3, complex_=True)]), -INF),
    "cond_nuc": lambda t: t.linalg.cond(*tensors(t, [A3]), "nuc"),
    "multi_dot_2": lambda t: t.linalg.multi_dot(tensors(t, [A3, M34])),
    "multi_dot_3": lambda t: t.linalg.multi_dot(tensors(t, [A3, M34, M45])),
    "multi_dot_3_tie": lambda t: t.linalg.multi_dot(tensors(t, [A3, A3, A3])),
    "multi_dot_vectors": lambda t: t.linalg.multi_dot(tensors(t, [V3, M34, M45, arrays((5,))[0]])),
    "chain_matmul": lambda t: t.chain_matmul(*tensors(t, [A3, M34, M45])),
    "householder_product": lambda t: t.linalg.householder_product(*tensors(t, arrays((4, 3), (2,)))),
    "orgqr": lambda t: t.orgqr(*tensors(t, arrays((4, 3), (3,)))),
    "ormqr": lambda t: t.ormqr(*qr_factors(t, (4, 3)), *tensors(t, [arrays((4, 2))[0]])),
    "ormqr_right_transpose": lambda t: t.ormqr(
        *qr_factors(t, (4, 3)), *tensors(t, [arrays((2, 4))[0]]), left=False, transpose=True
    ),
    "cholesky_solve": lambda t: t.cholesky_solve(*tensors(t, [B32, L3])),
    "cholesky_solve_broadcast": lambda t: t.cholesky_solve(*tensors(t, [arrays((2, 3, 2))[0], L3])),
    "cholesky_solve_upper": lambda t: t.cholesky_solve(*tensors(t, [B32, L3.T.copy()]), upper=True),
    "triangular_solve": lambda t: t.triangular_solve(*tensors(t, [B32, L3]), upper=False),
    "triangular_solve_transpose": lambda t: t.triangular_solve(*tensors(t, [B32, L3.T.copy()]), transpose=True),
    "inner_1d": lambda t: t.inner(*tensors(t, [V3, V3])),
    "inner_2d": lambda t: t.inner(*tensors(t, [A3, M43])),
    "tensordot_full": lambda t: t.tensordot(*tensors(t, [M34, M34]), 2),
    "kron_2x2": lambda t: t.kron(*tensors(t, arrays((2, 2), (2, 2)))),
    "kron_mixed": lambda t: t.kron(*tensors(t, arrays((2, 2), (3,)))),
    "stft": lambda t: t.stft(*tensors(t, arrays((64,))), 16, return_complex=True),
    "stft_batched_window": lambda t: t.stft(
        *tensors(t, arrays((2, 64))), 16, window=t.hann_window(16, dtype=t.float64), return_complex=True
    ),
    "stft_real_out": lambda t: t.stft(*tensors(t, arrays((64,))), 16, center=False, return_complex=False),
}


def run(lib, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = CASES[name](lib)
    return out if isinstance(out, tuple) else (out,)


def node_names(outs):
    return [None if o.grad_fn is None else type(o.grad_fn).__name__ for o in outs]


def input_nodes(outs):
    """The names of what each output's node reaches (its next_functions)."""
    return [
        None if o.grad_fn is None else [None if f is None else type(f).__name__ for f, _ in o.grad_fn.next_functions]
        for o in outs
    ]


@pytest.mark.parametrize(
    "name",
    sorted(CASES),
)
def test_node_names_match_torch(name):
    got, want = run(ember, name), run(torch, name)
    assert node_names(got) == node_names(want)
    assert [o.requires_grad for o in got] == [o.requires_grad for o in want]


@pytest.mark.parametrize(
    "name",
    [
        "solve_vector",
        "solve_left_false",
        "solve_broadcast_vector",
        "lu",
        "lu_unpack",
        "lu_unpack_no_data",
        "householder_product",
        "ormqr",
        "cholesky_solve",
        "triangular_solve",
        "inner_1d",
        "kron_2x2",
    ],
)
def test_node_inputs_match_torch(name):
    assert input_nodes(run(ember, name)) == input_nodes(run(torch, name))


def values_and_grads(lib, name):
    CREATED.clear()
    outs = run(lib, name)
    diff = [o for o in outs if o.requires_grad]
    leaves = list(CREATED)
    loss = sum(((o.abs() if o.is_complex() else o) * (i + 1)).sum() for i, o in enumerate(diff))
    grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    to_np = lambda t: None if t is None else t.detach().resolve_conj().numpy()  # noqa: E731
    return [to_np(o) for o in outs if o.numel()], [to_np(g) for g in grads]


@pytest.mark.parametrize(
    "name",
    [
        "solve_vector",
        "solve_left_false",
        "solve_batched_vector",
        "solve_broadcast_vector",
        "solve_complex_vector",
        "lu",
        "lu_wide",
        "lu_tall_batched",
        "lu_unpack",
        "matrix_norm_1_dims_keepdim",
        "matrix_norm_nuc_keepdim",
        "cond",
        "cond_fro",
        "cond_nuc",
        "multi_dot_3_tie",
        "multi_dot_vectors",
        "householder_product",
        "ormqr_right_transpose",
        "cholesky_solve",
        "cholesky_solve_upper",
        "cholesky_solve_broadcast",
        "triangular_solve_transpose",
        "inner_1d",
        "kron_mixed",
        "stft_batched_window",
    ],
)
def test_values_and_gradients_match_torch(name):
    if name == "cond_fro":  # PyTorch's backward refuses: its inverse is filled in place
        got = run(ember, name)[0]
        want = run(torch, name)[0]
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        return
    got_v, got_g = values_and_grads(ember, name)
    want_v, want_g = values_and_grads(torch, name)
    assert len(got_v) == len(want_v) and len(got_g) == len(want_g)
    for g, w in zip(got_v + got_g, want_v + want_g):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (lambda A, b: ember.linalg.solve(A, b), [well_conditioned(3, (2,)), V3]),
        (lambda A, B: ember.linalg.solve(A, B, left=False), [A3, B23]),
        (lambda A: ember.linalg.lu(A)[1:], [M43]),
        (lambda LU: ember.lu_unpack(LU, ember.tensor([2, 3, 3], dtype=ember.int32))[1:], [A3]),
        (lambda A, tau: ember.linalg.householder_product(A, tau), arrays((4, 3), (2,))),
        # the factor's gradient is the whole matrix's (as PyTorch's): checked through its triangle
        (lambda B, L: ember.cholesky_solve(B, L.tril()), [B32, L3]),
        (lambda B, U: ember.cholesky_solve(B, U.triu(), upper=True), [arrays((2, 3, 2))[0], L3.T.copy()]),
        (lambda B, A: ember.triangular_solve(B, A, upper=False), [B32, L3]),
        (lambda a, b: ember.kron(a, b), arrays((2, 2), (3,))),
    ],
)
def test_gradgradcheck(fn, shapes):
    inputs = tensors(ember, shapes)
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)


def test_forward_ad_through_named_nodes():
    import ember.autograd.forward_ad as fwAD

    A, b = tensors(ember, [A3, V3])
    tangent = ember.ones_like(b)
    with fwAD.dual_level():
        x = ember.linalg.solve(A, fwAD.make_dual(b, tangent))
        jvp = fwAD.unpack_dual(x).tangent
    np.testing.assert_allclose(jvp.numpy(), np.linalg.solve(A3, np.ones(3)), rtol=1e-12)
    h, tau = tensors(ember, arrays((4, 3), (2,)))
    with fwAD.dual_level():
        q = ember.linalg.householder_product(fwAD.make_dual(h, ember.ones_like(h)), tau)
        jvp = fwAD.unpack_dual(q).tangent
    eps = 1e-6
    with ember.no_grad():
        numeric = (ember.linalg.householder_product(h + eps, tau) - ember.linalg.householder_product(h - eps, tau)) / (
            2 * eps
        )
    np.testing.assert_allclose(jvp.detach().numpy(), numeric.numpy(), rtol=1e-6, atol=1e-8)


def test_stft_result_is_not_a_view_and_takes_in_place_ops():
    x = ember.tensor(arrays((64,))[0].tolist(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ember.stft(x, 16, return_complex=True)
        ref = torch.stft(torch.tensor(arrays((64,))[0].tolist(), dtype=torch.float64), 16, return_complex=True)
    assert out.stride() == ref.stride() and tuple(out.shape) == tuple(ref.shape)
    out.mul_(2)
    out.abs().sum().backward()
    assert x.grad is not None
