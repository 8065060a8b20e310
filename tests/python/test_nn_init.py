"""nn.init against PyTorch: sparse_, the deprecated aliases (values and warnings),
calculate_gain for every nonlinearity, and the errors of the fills."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, same_error
from conftest import torch

import ember

GAINS = [
    ("linear", None),
    ("conv1d", None),
    ("conv2d", None),
    ("conv3d", None),
    ("conv_transpose1d", None),
    ("conv_transpose2d", None),
    ("conv_transpose3d", None),
    ("sigmoid", None),
    ("tanh", None),
    ("relu", None),
    ("leaky_relu", None),
    ("leaky_relu", 0.2),
    ("leaky_relu", 3),
    ("selu", None),
]


@pytest.mark.parametrize("name,param", GAINS)
def test_calculate_gain(name, param):
    got = ember.nn.init.calculate_gain(name, param)
    want = torch.nn.init.calculate_gain(name, param)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("name,param", [("gelu", None), ("leaky_relu", True), ("leaky_relu", "x")])
def test_calculate_gain_errors(name, param):
    same_error(lambda: ember.nn.init.calculate_gain(name, param), lambda: torch.nn.init.calculate_gain(name, param))


@pytest.mark.parametrize("shape,sparsity,std", [((6, 4), 0.5, 0.01), ((5, 3), 0.1, 1.0), ((3, 7), 0.9, 0.3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_draws_same_numbers(shape, sparsity, std, dtype):
    te = ember.empty(*shape, dtype=getattr(ember, dtype))
    tt = torch.empty(*shape, dtype=getattr(torch, dtype))
    ember.manual_seed(11)
    torch.manual_seed(11)
    assert ember.nn.init.sparse_(te, sparsity, std) is te
    torch.nn.init.sparse_(tt, sparsity, std)
    close(te, tt, rtol=0, atol=0)
    same_error(lambda: ember.nn.init.sparse_(ember.empty(3), 0.5), lambda: torch.nn.init.sparse_(torch.empty(3), 0.5))


ALIASES = [
    ("uniform", (-1.0, 2.0)),
    ("normal", (0.5, 2.0)),
    ("constant", (0.25,)),
    ("eye", ()),
    ("xavier_uniform", ()),
    ("xavier_normal", (1.5,)),
    ("kaiming_uniform", ()),
    ("kaiming_normal", ()),
    ("orthogonal", ()),
    ("sparse", (0.3,)),
    ("dirac", ()),
]


@pytest.mark.parametrize("name,args", ALIASES)
def test_deprecated_aliases(name, args):
    shape = (4, 2, 3) if name == "dirac" else (5, 4)
    te, tt = ember.empty(*shape), torch.empty(*shape)
    results = []
    for lib, t in ((torch, tt), (ember, te)):
        lib.manual_seed(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(lib.nn.init, name)(t, *args)
        results.append([(w.category, str(w.message)) for w in caught])
    assert results[0] == results[1]
    assert getattr(ember.nn.init, name).__name__ == getattr(torch.nn.init, name).__name__
    close(te, tt, atol=2e-5 if name == "orthogonal" else 0, rtol=0)


def test_public_names_match():
    def public(m):
        return {n for n in dir(m) if not n.startswith("_") and callable(getattr(m, n))}

    typing_names = {"Callable", "Literal", "ParamSpec", "Tensor", "TypeVar"}
    assert public(torch.nn.init) - typing_names <= public(ember.nn.init)
