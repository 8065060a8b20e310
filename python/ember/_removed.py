"""Names PyTorch removed but still answers: the linalg functions removed in 1.9 (calling one raises PyTorch's
RuntimeError, which says what replaces it: torch.solve -> torch.linalg.solve, ...), Tensor.reinforce and
Tensor.volatile (always False, with PyTorch's warning)."""

from __future__ import annotations

import warnings

from ember._warnings import user_stacklevel

__all__ = ["eig", "lstsq", "matrix_rank", "solve", "symeig"]
METHODS = ["eig", "lstsq", "reinforce", "solve", "volatile"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def solve(input, A, *, out=None):  # noqa: A002
    raise RuntimeError(
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
        "arguments reversed and does not return the LU factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)"
    )


def lstsq(input, A, *, out=None):  # noqa: A002
    raise RuntimeError(
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the returned tuple "
        "(although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of "
        "the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of "
        "the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution"
    )


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"
    )


def symeig(input, eigenvectors=False, upper=True, *, out=None):  # noqa: A002
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by "
        "default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


def matrix_rank(input, tol=None, symmetric=False, *, out=None):  # noqa: A002
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was "
        "renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    )


def reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\n"
        "See https://pytorch.org/docs/main/distributions.html\n\n"
        "Instead of:\n\nprobs = policy_network(state)\naction = probs.multinomial()\n"
        "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
        "Use:\n\nprobs = policy_network(state)\n"
        "# NOTE: categorical is equivalent to what used to be called multinomial\n"
        "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
        "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\nloss.backward()\n"
    )


def _get_volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=user_stacklevel())
    return False


def _set_volatile(self, value):
    warnings.warn(
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", stacklevel=user_stacklevel()
    )


volatile = property(_get_volatile, _set_volatile, doc="Always False: volatile was removed (use no_grad).")
