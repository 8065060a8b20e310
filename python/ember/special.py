"""torch.special: special functions under the names PyTorch gives them."""

from __future__ import annotations

from ember import _C
from ember._tensor import Tensor  # noqa: F401  (torch.special has the name too)

_VF = _C._VariableFunctions

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]


# The bindings take PyTorch's arguments, out= included: plain aliases.
digamma = psi = _VF.digamma
gammaln = _VF.lgamma
erf = _VF.erf
erfc = _VF.erfc
erfinv = _VF.erfinv
exp2 = _VF.exp2
expit = _VF.sigmoid
expm1 = _VF.expm1
log1p = _VF.log1p
i0 = _VF.i0
i1 = _VF.special_i1
sinc = _VF.sinc
polygamma = _VF.polygamma
logit = _VF.logit
xlogy = _VF.xlogy
xlog1py = _VF.special_xlog1py
logsumexp = _VF.logsumexp
i0e = _VF.special_i0e
i1e = _VF.special_i1e
entr = _VF.special_entr
erfcx = _VF.special_erfcx
log_ndtr = _VF.special_log_ndtr
modified_bessel_i0 = _VF.special_modified_bessel_i0
modified_bessel_i1 = _VF.special_modified_bessel_i1
spherical_bessel_j0 = _VF.special_spherical_bessel_j0
airy_ai = _VF.special_airy_ai
bessel_j0 = _VF.special_bessel_j0
bessel_j1 = _VF.special_bessel_j1
bessel_y0 = _VF.special_bessel_y0
bessel_y1 = _VF.special_bessel_y1
modified_bessel_k0 = _VF.special_modified_bessel_k0
modified_bessel_k1 = _VF.special_modified_bessel_k1
scaled_modified_bessel_k0 = _VF.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _VF.special_scaled_modified_bessel_k1
zeta = _VF.special_zeta
ndtri = _VF.special_ndtri
gammainc = _VF.igamma
gammaincc = _VF.igammac
chebyshev_polynomial_t = _VF.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _VF.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _VF.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _VF.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _VF.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _VF.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _VF.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _VF.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _VF.special_hermite_polynomial_h
hermite_polynomial_he = _VF.special_hermite_polynomial_he
laguerre_polynomial_l = _VF.special_laguerre_polynomial_l
legendre_polynomial_p = _VF.special_legendre_polynomial_p


def ndtr(input, *, out=None):  # noqa: A002
    """The standard normal distribution function, (1 + erf(x / sqrt 2)) / 2, as PyTorch composes it."""
    from ember.autograd.function import _add_scalar, _mul_scalar

    # mul.Scalar and add.Scalar, recorded as PyTorch's MulBackward1/AddBackward1
    half_erf = _add_scalar(_VF.erf(_mul_scalar(input, 0.7071067811865476)), 1)
    return _mul_scalar(half_erf, 0.5) if out is None else _VF.mul(half_erf, 0.5, out=out)


def multigammaln(input, p, *, out=None):  # noqa: A002
    return _VF.mvlgamma(input, p) if out is None else _VF.mvlgamma(input, p, out=out)


def round(input, *, decimals=0, out=None):  # noqa: A001,A002
    if out is None:
        return _VF.round(input, decimals=decimals)
    return _VF.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.log_softmax(input, dim, dtype)


def _install_special_module(namespace):
    """Every function here is one of ember._C._special, named special_<name>
    as PyTorch's are: __torch_function__, fx and pickling see those names."""
    import functools
    import sys
    import types

    module = types.ModuleType("ember._C._special")
    for name in __all__:
        fn, qualified = namespace[name], "special_" + name
        if isinstance(fn, types.BuiltinFunctionType):
            fn = _C._renamed_builtin(fn, qualified, module, module.__name__)
        else:

            @functools.wraps(fn)
            def fn(input, *args, _impl=fn, _qualified=qualified, **kwargs):  # noqa: A002
                if _C._has_torch_function((input,), {}):
                    from ember.overrides import handle_torch_function

                    return handle_torch_function(getattr(module, _qualified), (input,), input, *args, **kwargs)
                return _impl(input, *args, **kwargs)

            fn.__name__ = fn.__qualname__ = qualified
            fn.__module__ = module.__name__
        namespace[name] = fn

    def lookup(qualified):  # the namespace's function, as later wrapping left it
        if qualified.startswith("special_") and qualified[8:] in __all__:
            return namespace[qualified[8:]]
        raise AttributeError(f"module {module.__name__!r} has no attribute {qualified!r}")

    module.__getattr__ = lookup
    _C._special = sys.modules[module.__name__] = module


_install_special_module(globals())
