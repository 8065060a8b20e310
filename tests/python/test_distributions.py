"""ember.distributions against torch.distributions: the same samples for
the same seed (and the generator left at the same point), the same
log_prob/entropy/cdf/icdf/moments, gradients of rsample and log_prob,
shapes, constraints, transforms, KL divergences and validation errors."""

from __future__ import annotations

import math

import pytest
from conftest import to_torch, torch

import ember

SEEDS = [0, 1, 7]


def tensors(lib, params, dtype, requires_grad=False):
    out = {}
    for k, v in params.items():
        if isinstance(v, list):
            t = lib.tensor(v, dtype=getattr(lib, dtype))
            if requires_grad and t.dtype.is_floating_point:
                t.requires_grad_(True)
            out[k] = t
        else:
            out[k] = v
    return out


def close(e, t, rtol=None, exact=False):
    """Ember result e against torch result t (values, dtype, shape)."""
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e.detach())
    if exact or not t.dtype.is_floating_point:
        assert torch.equal(got.nan_to_num(1e30), t.detach().nan_to_num(1e30)), f"{got} != {t}"
        return
    if rtol is None:
        rtol = 1e-5 if t.dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got, t.detach(), rtol=rtol, atol=rtol, equal_nan=True)


def both(fn):
    """fn(lib) under torch and under ember; exceptions are results too."""
    out = []
    for lib in (torch, ember):
        try:
            out.append(fn(lib))
        except Exception as exc:  # noqa: BLE001
            out.append(exc)
    t, e = out
    if isinstance(t, Exception) or isinstance(e, Exception):
        assert type(t) is type(e), f"torch: {t!r}, ember: {e!r}"
        return None, None
    return e, t


# name, constructor, params, dtype, has exact samples, value for log_prob (None: use a sample)
CASES = [
    ("Normal", lambda D, p: D.Normal(p["loc"], p["scale"]), {"loc": [0.0, 1.5, -2.0], "scale": [1.0, 0.5, 3.0]}),
    ("Normal_b", lambda D, p: D.Normal(p["loc"], p["scale"]), {"loc": [[0.0], [1.0]], "scale": [0.5, 1.0, 2.0]}),
    ("Normal_scalar", lambda D, p: D.Normal(0.5, 2.0), {}),
    ("Uniform", lambda D, p: D.Uniform(p["low"], p["high"]), {"low": [0.0, -1.0], "high": [1.0, 3.0]}),
    ("Exponential", lambda D, p: D.Exponential(p["rate"]), {"rate": [0.5, 1.0, 4.0]}),
    ("Laplace", lambda D, p: D.Laplace(p["loc"], p["scale"]), {"loc": [0.0, 2.0], "scale": [1.0, 0.3]}),
    ("Cauchy", lambda D, p: D.Cauchy(p["loc"], p["scale"]), {"loc": [0.0, 2.0], "scale": [1.0, 0.3]}),
    ("Gamma", lambda D, p: D.Gamma(p["c"], p["r"]), {"c": [0.3, 1.0, 2.5, 12.0], "r": [1.0, 2.0, 0.5, 3.0]}),
    ("Gamma_b", lambda D, p: D.Gamma(p["c"], p["r"]), {"c": [[0.5], [3.0]], "r": [1.0, 2.0, 0.5]}),
    ("Chi2", lambda D, p: D.Chi2(p["df"]), {"df": [0.5, 3.0, 10.0]}),
    ("Beta", lambda D, p: D.Beta(p["a"], p["b"]), {"a": [0.5, 2.0, 8.0], "b": [0.7, 3.0, 9.0]}),
    ("Beta_b", lambda D, p: D.Beta(p["a"], p["b"]), {"a": [[0.5], [4.0]], "b": [0.7, 3.0]}),
    ("Dirichlet", lambda D, p: D.Dirichlet(p["c"]), {"c": [[0.5, 1.0, 2.0], [3.0, 7.0, 1.5]]}),
    (
        "StudentT",
        lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
        {"df": [1.5, 3.0, 30.0], "loc": [0.0, 1.0, -1.0], "scale": [1.0, 2.0, 0.5]},
    ),
    ("Bernoulli", lambda D, p: D.Bernoulli(probs=p["p"]), {"p": [0.1, 0.5, 0.9]}),
    ("Bernoulli_logits", lambda D, p: D.Bernoulli(logits=p["l"]), {"l": [-2.0, 0.0, 3.0]}),
    ("Categorical", lambda D, p: D.Categorical(probs=p["p"]), {"p": [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]}),
    ("Categorical_logits", lambda D, p: D.Categorical(logits=p["l"]), {"l": [1.0, -1.0, 0.5, 2.0]}),
    ("OneHotCategorical", lambda D, p: D.OneHotCategorical(probs=p["p"]), {"p": [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]}),
    ("Poisson", lambda D, p: D.Poisson(p["rate"]), {"rate": [0.5, 4.0, 25.0]}),
    ("Geometric", lambda D, p: D.Geometric(probs=p["p"]), {"p": [0.2, 0.5, 0.9]}),
    ("Binomial", lambda D, p: D.Binomial(p["n"], probs=p["p"]), {"n": [5.0, 20.0, 100.0], "p": [0.3, 0.6, 0.05]}),
    ("Multinomial", lambda D, p: D.Multinomial(6, probs=p["p"]), {"p": [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]}),
    ("NegativeBinomial", lambda D, p: D.NegativeBinomial(p["n"], probs=p["p"]), {"n": [3.0, 10.0], "p": [0.3, 0.6]}),
    ("LogNormal", lambda D, p: D.LogNormal(p["loc"], p["scale"]), {"loc": [0.0, 1.0], "scale": [0.5, 1.0]}),
    ("Gumbel", lambda D, p: D.Gumbel(p["loc"], p["scale"]), {"loc": [0.0, 1.0], "scale": [0.5, 2.0]}),
    ("HalfNormal", lambda D, p: D.HalfNormal(p["scale"]), {"scale": [0.5, 2.0]}),
    ("HalfCauchy", lambda D, p: D.HalfCauchy(p["scale"]), {"scale": [0.5, 2.0]}),
    ("Pareto", lambda D, p: D.Pareto(p["scale"], p["alpha"]), {"scale": [1.0, 2.0], "alpha": [3.0, 5.0]}),
    ("Weibull", lambda D, p: D.Weibull(p["scale"], p["k"]), {"scale": [1.0, 2.0], "k": [0.7, 3.0]}),
    ("Kumaraswamy", lambda D, p: D.Kumaraswamy(p["a"], p["b"]), {"a": [0.7, 2.0], "b": [1.5, 3.0]}),
    (
        "LogisticNormal",
        lambda D, p: D.LogisticNormal(p["loc"], p["scale"]),
        {"loc": [0.0, 1.0, -1.0], "scale": [1.0, 0.5, 2.0]},
    ),
    ("RelaxedBernoulli", lambda D, p: D.RelaxedBernoulli(p["t"], probs=p["p"]), {"t": [0.5], "p": [0.2, 0.7]}),
    (
        "RelaxedOneHotCategorical",
        lambda D, p: D.RelaxedOneHotCategorical(p["t"], probs=p["p"]),
        {"t": [0.7], "p": [0.2, 0.3, 0.5]},
    ),
    ("InverseGamma", lambda D, p: D.InverseGamma(p["c"], p["r"]), {"c": [2.5, 4.0], "r": [1.0, 2.0]}),
    ("FisherSnedecor", lambda D, p: D.FisherSnedecor(p["d1"], p["d2"]), {"d1": [3.0, 10.0], "d2": [5.0, 12.0]}),
    ("VonMises", lambda D, p: D.VonMises(p["loc"], p["k"]), {"loc": [0.0, 1.0], "k": [0.5, 4.0]}),
    ("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(probs=p["p"]), {"p": [0.2, 0.5, 0.8]}),
    (
        "GeneralizedPareto",
        lambda D, p: D.GeneralizedPareto(p["loc"], p["scale"], p["c"]),
        {"loc": [0.0, 1.0], "scale": [1.0, 2.0], "c": [0.2, -0.3]},
    ),
    (
        "MultivariateNormal",
        lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["L"]),
        {"loc": [0.0, 1.0, -1.0], "L": [[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]]},
    ),
    (
        "MultivariateNormal_cov",
        lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["S"]),
        {"loc": [[0.0, 1.0], [2.0, -1.0]], "S": [[2.0, 0.3], [0.3, 1.0]]},
    ),
    (
        "LowRankMultivariateNormal",
        lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["d"]),
        {"loc": [0.0, 1.0, -1.0], "W": [[1.0], [0.5], [-0.2]], "d": [1.0, 0.5, 2.0]},
    ),
    ("LKJCholesky", lambda D, p: D.LKJCholesky(3, p["c"]), {"c": [0.5, 2.0]}),
    (
        "Wishart",
        lambda D, p: D.Wishart(p["df"], covariance_matrix=p["S"]),
        {"df": [4.0, 6.0], "S": [[2.0, 0.3], [0.3, 1.0]]},
    ),
    (
        "Independent",
        lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
        {"loc": [[0.0, 1.0], [2.0, 3.0]], "scale": [[1.0, 2.0], [0.5, 0.1]]},
    ),
    (
        "MixtureSameFamily",
        lambda D, p: D.MixtureSameFamily(D.Categorical(probs=p["w"]), D.Normal(p["loc"], p["scale"])),
        {"w": [0.3, 0.7], "loc": [-1.0, 2.0], "scale": [0.5, 1.0]},
    ),
]

NAMES = [c[0] for c in CASES]
GAMMAINC = set()


def make(case, lib, dtype="float32", requires_grad=False):
    _, ctor, params = case
    return ctor(lib.distributions, tensors(lib, params, dtype, requires_grad))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_samples_match_torch(case, dtype):
    for seed in SEEDS:

        def draw(lib):
            lib.manual_seed(seed)
            d = make(case, lib, dtype)
            s = d.sample((5,))
            s2 = d.sample()
            s3 = d.sample((2, 2))
            return s, s2, s3, lib.rand(3)  # the generator must end at the same point

        (es, es2, es3, enext), (ts, ts2, ts3, tnext) = both(draw)
        close(es3, ts3, rtol=1e-5 if dtype == "float32" else 1e-12)
        close(es, ts, rtol=1e-5 if dtype == "float32" else 1e-12)
        close(es2, ts2, rtol=1e-5 if dtype == "float32" else 1e-12)
        close(enext, tnext, exact=True)


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_statistics_match_torch(case):
    torch.manual_seed(3)
    td = make(case, torch, "float64")
    value = td.sample((4,))
    ed = make(case, ember, "float64")
    ev = ember.tensor(value.tolist(), dtype=getattr(ember, str(value.dtype).split(".")[1]))
    close(ed.batch_shape, td.batch_shape)
    close(ed.event_shape, td.event_shape)
    assert repr(make(case, ember, "float64")) == repr(make(case, torch, "float64"))
    e, t = both(lambda lib: make(case, lib, "float64").log_prob(ev if lib is ember else value))
    if t is not None:
        close(e, t)
    for name in ("mean", "variance", "stddev", "mode"):
        e, t = both(lambda lib, name=name: getattr(make(case, lib, "float64"), name))
        if t is not None:
            close(e, t)
    for name in ("entropy", "perplexity"):
        e, t = both(lambda lib, name=name: getattr(make(case, lib, "float64"), name)())
        if t is not None:
            close(e, t)
    if td.event_shape == torch.Size() and case[0] not in GAMMAINC:
        e, t = both(lambda lib: make(case, lib, "float64").cdf(ev if lib is ember else value))
        if t is not None:
            close(e, t)
        q = [0.1, 0.5, 0.8]
        e, t = both(
            lambda lib: make(case, lib, "float64").icdf(
                lib.tensor(q, dtype=lib.float64).reshape(3, *([1] * len(td.batch_shape)))
            )
        )
        if t is not None:
            close(e, t)
    e, t = both(lambda lib: make(case, lib, "float64").expand((2,) + tuple(td.batch_shape)).sample((2,)).shape)
    if t is not None:
        close(e, t)


@pytest.mark.parametrize("case", [c for c in CASES], ids=NAMES)
def test_gradients_match_torch(case):
    def grads(lib):
        lib.manual_seed(11)
        params = tensors(lib, case[2], "float64", requires_grad=True)
        d = case[1](lib.distributions, params)
        if d.has_rsample:
            x = d.rsample((3,))
        else:
            x = d.sample((3,))
        loss = d.log_prob(x.detach()).sum()
        if d.has_rsample:
            loss = loss + (x * x).sum()
        leaves = [v for v in params.values() if hasattr(v, "requires_grad") and v.requires_grad]
        g = lib.autograd.grad(loss, leaves, allow_unused=True)
        return [lib.zeros(()) if a is None else a for a in g], d.has_rsample

    e, t = both(grads)
    if t is None:
        return
    (eg, erg), (tg, trg) = e, t
    assert erg == trg
    for a, b in zip(eg, tg):
        close(a, b, rtol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_constraints_match_torch(case):
    td, ed = make(case, torch), make(case, ember)
    assert td.has_rsample == ed.has_rsample
    assert td.has_enumerate_support == ed.has_enumerate_support
    tc, ec = td.arg_constraints, ed.arg_constraints
    assert sorted(tc) == sorted(ec)
    for k in tc:
        assert type(tc[k]).__name__ == type(ec[k]).__name__
    assert type(td.support).__name__ == type(ed.support).__name__
    if not isinstance(td.support, torch.distributions.constraints._Dependent):
        assert repr(ed.support) == repr(td.support)


def test_rsample_gradients_of_gamma_beta_dirichlet():
    for lib_pair in [(torch, ember)]:
        del lib_pair

    def run(lib, kind):
        lib.manual_seed(5)
        a = lib.tensor([0.4, 1.0, 3.0, 9.5, 30.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.2, 0.3, 2.0, 8.0, 25.0], dtype=lib.float64, requires_grad=True)
        D = lib.distributions
        d = {
            "gamma": lambda: D.Gamma(a, b),
            "beta": lambda: D.Beta(a, b),
            "dirichlet": lambda: D.Dirichlet(lib.stack([a, b], -1)),
        }[kind]()
        x = d.rsample((4,))
        ga, gb = lib.autograd.grad((x * lib.arange(x.numel(), dtype=x.dtype).reshape(x.shape)).sum(), [a, b])
        return x, ga, gb

    for kind in ("gamma", "beta", "dirichlet"):
        (ex, ega, egb), (tx, tga, tgb) = both(lambda lib, kind=kind: run(lib, kind))
        close(ex, tx, exact=True)
        close(ega, tga, rtol=1e-12)
        close(egb, tgb, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sampling_primitives_bit_exact(dtype):
    for seed in [0, 3, 99]:

        def prims(lib):
            lib.manual_seed(seed)
            dt = getattr(lib, dtype)
            alpha = lib.tensor([[0.05, 0.7, 1.0], [2.0, 9.0, 150.0]], dtype=dt)
            g = lib._standard_gamma(alpha)
            d = lib._sample_dirichlet(alpha)
            p = lib.poisson(lib.tensor([0.0, 0.3, 5.0, 9.99, 10.0, 400.0], dtype=dt))
            n = lib.tensor([0.0, 4.0, 30.0, 30.0, 1000.0, 17.0], dtype=dt)
            q = lib.tensor([0.5, 0.9, 0.2, 0.8, 0.45, 1.0], dtype=dt)
            b = lib.binomial(n, q)
            c = lib.empty(5, dtype=dt).cauchy_(1.0, 2.0)
            grad = lib._standard_gamma_grad(alpha, g)
            dg = lib._dirichlet_grad(d, alpha, alpha.sum(-1, True).expand_as(alpha))
            return g, d, p, b, c, grad, dg, lib.rand(2)

        e, t = both(prims)
        for a, b in zip(e, t):
            close(a, b, exact=True)


def test_sampling_primitive_errors():
    for fn in (
        lambda lib: lib._standard_gamma(lib.ones(2, dtype=lib.float16)),
        lambda lib: lib._sample_dirichlet(lib.ones(2, dtype=lib.float16)),
        lambda lib: lib.binomial(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16)),
        lambda lib: lib.poisson(-lib.ones(3)),
        lambda lib: lib.empty(3).cauchy_(0.0, -1.0),
    ):
        e, t = both(fn)
        assert e is None and t is None


@pytest.fixture
def validation_on():
    """Arguments validated by default in both libraries (torch.compile turns
    PyTorch's default off for the rest of the process)."""
    saved = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    ember.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(saved)


def test_validation_errors_match_torch(validation_on):
    def cases(lib):
        D = lib.distributions
        return [
            lambda: D.Normal(lib.tensor([0.0]), lib.tensor([-1.0])),
            lambda: D.Normal(0.0, 1.0).log_prob(lib.tensor([[1.0, 2.0]]).expand(2, 2) * 0 + lib.tensor(math.nan)),
            lambda: D.Categorical(probs=lib.tensor(0.3)),
            lambda: D.Categorical(),
            lambda: D.Bernoulli(probs=lib.tensor([1.5])),
            lambda: D.Bernoulli(probs=lib.tensor([0.5])).log_prob(lib.tensor([0.5])),
            lambda: D.Exponential(lib.tensor([1.0, 2.0])).log_prob(lib.tensor([1.0, 2.0, 3.0])),
            lambda: D.Dirichlet(lib.tensor([1.0, 2.0])).log_prob(lib.tensor([0.5, 0.5, 0.5])),
            lambda: D.Dirichlet(lib.tensor(1.0)),
            lambda: D.Uniform(lib.tensor([1.0]), lib.tensor([0.0])),
            lambda: D.MultivariateNormal(lib.zeros(2)),
            lambda: D.Normal(0.0, 1.0).log_prob(1.0),
            lambda: D.Independent(D.Normal(lib.zeros(2), 1.0), 2),
            lambda: D.Geometric(probs=lib.tensor([0.0, 0.5])),
        ]

    t_cases, e_cases = cases(torch), cases(ember)
    for tc, ec in zip(t_cases, e_cases):
        texc = eexc = None
        try:
            tc()
        except Exception as exc:  # noqa: BLE001
            texc = exc
        try:
            ec()
        except Exception as exc:  # noqa: BLE001
            eexc = exc
        assert type(texc) is type(eexc), (texc, eexc)
        if texc is not None:
            assert str(eexc) == str(texc)


def test_default_validate_args():
    for lib in (torch, ember):
        D = lib.distributions
        try:
            D.Distribution.set_default_validate_args(False)
            D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))  # no error
            with pytest.raises(ValueError):
                D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=True)
            with pytest.raises(ValueError):
                D.Distribution.set_default_validate_args(3)
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))


TRANSFORMS = [
    ("Exp", lambda D, T, lib: T.ExpTransform(), [[-1.0, 0.5, 2.0]]),
    ("Sigmoid", lambda D, T, lib: T.SigmoidTransform(), [[-1.0, 0.5, 2.0]]),
    ("Tanh", lambda D, T, lib: T.TanhTransform(), [[-1.0, 0.5, 2.0]]),
    ("Softplus", lambda D, T, lib: T.SoftplusTransform(), [[-1.0, 0.5, 2.0]]),
    ("Abs", lambda D, T, lib: T.AbsTransform(), [[-1.0, 0.5, 2.0]]),
    ("Power", lambda D, T, lib: T.PowerTransform(lib.tensor(2.5)), [[0.3, 0.5, 2.0]]),
    ("Affine", lambda D, T, lib: T.AffineTransform(1.0, lib.tensor([2.0, -1.0, 0.5])), [[-1.0, 0.5, 2.0]]),
    (
        "AffineEvent",
        lambda D, T, lib: T.AffineTransform(1.0, lib.tensor([2.0, -1.0, 0.5]), event_dim=1),
        [[-1.0, 0.5, 2.0]],
    ),
    ("Softmax", lambda D, T, lib: T.SoftmaxTransform(), [[-1.0, 0.5, 2.0]]),
    ("StickBreaking", lambda D, T, lib: T.StickBreakingTransform(), [[-1.0, 0.5, 2.0]]),
    (
        "Compose",
        lambda D, T, lib: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.5, 2.0)]),
        [[-1.0, 0.5, 2.0]],
    ),
    ("Independent", lambda D, T, lib: T.IndependentTransform(T.ExpTransform(), 1), [[-1.0, 0.5, 2.0]]),
    ("Reshape", lambda D, T, lib: T.ReshapeTransform((2, 2), (4,)), [[[1.0, 2.0], [3.0, 4.0]]]),
    ("LowerCholesky", lambda D, T, lib: T.LowerCholeskyTransform(), [[[1.0, 2.0], [3.0, 0.5]]]),
    ("PositiveDefinite", lambda D, T, lib: T.PositiveDefiniteTransform(), [[[1.0, 2.0], [3.0, 0.5]]]),
    ("CorrCholesky", lambda D, T, lib: T.CorrCholeskyTransform(), [[0.3, -0.5, 1.2]]),
    (
        "Cat",
        lambda D, T, lib: T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], 0, [1, 2]),
        [[0.1, 0.5, 2.0]],
    ),
    ("Stack", lambda D, T, lib: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], 0), [[0.1, 0.5]]),
    ("CDF", lambda D, T, lib: T.CumulativeDistributionTransform(D.Normal(0.0, 2.0)), [[-1.0, 0.5, 2.0]]),
    ("Inverse", lambda D, T, lib: T.ExpTransform().inv, [[0.3, 0.5, 2.0]]),
]


@pytest.mark.parametrize("spec", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms_match_torch(spec):
    _, build, (x,) = spec

    def run(lib):
        t = build(lib.distributions, lib.distributions.transforms, lib)
        xs = lib.tensor(x, dtype=lib.float64)
        y = t(xs)
        out = [y, repr(t), t.domain.event_dim, t.codomain.event_dim, t.bijective]
        if t.bijective or isinstance(t, (lib.distributions.transforms.SoftmaxTransform,)):
            out.append(t.inv(y))
        if t.bijective:
            out.append(t.log_abs_det_jacobian(xs, y))
            out.append(tuple(t.forward_shape(xs.shape)))
            out.append(tuple(t.inverse_shape(y.shape)))
        return out

    e, t = both(run)
    for a, b in zip(e, t):
        if isinstance(b, str):
            assert a == b
        else:
            close(a, b)


def test_constraint_registry_matches_torch():
    names = [
        "real",
        "positive",
        "nonnegative",
        "unit_interval",
        "simplex",
        "lower_cholesky",
        "corr_cholesky",
        "positive_definite",
        "real_vector",
    ]
    for name in names:
        for reg in ("biject_to", "transform_to"):
            e, t = both(
                lambda lib, name=name, reg=reg: repr(
                    getattr(lib.distributions, reg)(getattr(lib.distributions.constraints, name))
                )
            )
            if t is not None:
                assert e == t
    e, t = both(lambda lib: repr(lib.distributions.transform_to(lib.distributions.constraints.interval(-1.0, 3.0))))
    assert e == t
    e, t = both(
        lambda lib: lib.distributions.biject_to(lib.distributions.constraints.interval(-1.0, 3.0))(
            lib.tensor([0.3, -2.0], dtype=lib.float64)
        )
    )
    close(e, t)


def test_constraints_check_and_repr():
    values = [[0.5, 0.5], [1.0, -1.0], [0.0, 2.0], [math.nan, 1.0]]

    def run(lib):
        C = lib.distributions.constraints
        objs = [
            C.real,
            C.positive,
            C.nonnegative,
            C.unit_interval,
            C.boolean,
            C.nonnegative_integer,
            C.positive_integer,
            C.simplex,
            C.real_vector,
            C.greater_than(0.2),
            C.less_than(1.0),
            C.interval(0.0, 1.0),
            C.half_open_interval(0.0, 1.0),
            C.integer_interval(0, 2),
            C.independent(C.positive, 1),
            C.one_hot,
            C.multinomial(2),
            C.greater_than_eq(0.0),
        ]
        v = lib.tensor(values)
        return [(repr(c), c.check(v), c.event_dim, c.is_discrete) for c in objs]

    e, t = both(run)
    for (er, ec, ee, ed), (tr, tc, te, tdisc) in zip(e, t):
        assert er == tr
        close(ec, tc)
        assert (ee, ed) == (te, tdisc)


KL_PAIRS = [
    ("Normal", "Normal"),
    ("Normal", "Laplace"),
    ("Normal", "Gumbel"),
    ("Uniform", "Normal"),
    ("Uniform", "Uniform"),
    ("Exponential", "Exponential"),
    ("Exponential", "Gamma"),
    ("Gamma", "Gamma"),
    ("Gamma", "Normal"),
    ("Beta", "Beta"),
    ("Bernoulli", "Bernoulli"),
    ("Categorical", "Categorical"),
    ("Poisson", "Poisson"),
    ("Dirichlet", "Dirichlet"),
    ("Laplace", "Laplace"),
    ("Gumbel", "Gumbel"),
    ("Cauchy", "Cauchy"),
    ("Pareto", "Pareto"),
    ("MultivariateNormal", "MultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("HalfNormal", "HalfNormal"),
    ("Independent", "Independent"),
    ("Normal", "Beta"),
    ("LogNormal", "LogNormal"),
    ("Binomial", "Binomial"),
    ("Geometric", "Geometric"),
    ("ContinuousBernoulli", "ContinuousBernoulli"),
    ("OneHotCategorical", "OneHotCategorical"),
]
BY_NAME = {c[0]: c for c in CASES}


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[f"{a}-{b}" for a, b in KL_PAIRS])
def test_kl_divergence_matches_torch(pair):
    p_case, q_case = BY_NAME[pair[0]], BY_NAME[pair[1]]

    def kl(lib):
        p = make(p_case, lib, "float64")
        q = make(q_case, lib, "float64")
        q_params = {
            k: (list(reversed(v)) if isinstance(v, list) and not isinstance(v[0], list) else v)
            for k, v in q_case[2].items()
        }
        if pair[0] == pair[1]:
            q = q_case[1](lib.distributions, tensors(lib, q_params, "float64"))
        return lib.distributions.kl_divergence(p, q)

    e, t = both(kl)
    if t is not None:
        close(e, t, rtol=1e-9)


def test_register_kl_and_errors():
    for lib in (torch, ember):
        D = lib.distributions

        class MyNormal(D.Normal):
            pass

        @D.register_kl(MyNormal, MyNormal)
        def _kl(p, q):
            return lib.tensor(42.0)

        assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)).item() == 42.0
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.5
    e, t = both(
        lambda lib: lib.distributions.kl_divergence(lib.distributions.Poisson(1.0), lib.distributions.Normal(0.0, 1.0))
    )
    assert e is None and t is None


def test_public_names_cover_torch():
    import types

    def public(mod):
        return {n for n in dir(mod) if not n.startswith("_") and not isinstance(getattr(mod, n), types.ModuleType)}

    pairs = [
        (torch.distributions, ember.distributions),
        (torch.distributions.constraints, ember.distributions.constraints),
        (torch.distributions.transforms, ember.distributions.transforms),
        (torch.distributions.kl, ember.distributions.kl),
        (torch.distributions.constraint_registry, ember.distributions.constraint_registry),
        (torch.distributions.utils, ember.distributions.utils),
    ]
    wanted = have = 0
    for t, e in pairs:
        names = public(t)
        wanted += len(names)
        have += len(names & public(e))
    assert have / wanted >= 0.9, (have, wanted)
    assert sorted(torch.distributions.__all__) == sorted(ember.distributions.__all__)


def test_mixture_and_transformed_shapes():
    def run(lib):
        lib.manual_seed(2)
        D = lib.distributions
        comp = D.Independent(D.Normal(lib.randn(3, 4, 2), lib.rand(3, 4, 2) + 0.5), 1)
        mix = D.MixtureSameFamily(D.Categorical(logits=lib.randn(3, 4)), comp)
        s = mix.sample((5,))
        return s, mix.log_prob(s), mix.mean, mix.variance, mix.batch_shape, mix.event_shape

    e, t = both(run)
    for a, b in zip(e, t):
        close(a, b)


def test_lazy_probs_logits_and_enumerate_support():
    def run(lib):
        D = lib.distributions
        c = D.Categorical(logits=lib.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]]))
        b = D.Bernoulli(logits=lib.tensor([0.3, -1.0]))
        n = D.Binomial(4, probs=lib.tensor([0.3, 0.6]))
        return (
            c.probs,
            c.logits,
            b.probs,
            c.enumerate_support(),
            b.enumerate_support(False),
            n.enumerate_support(),
            D.OneHotCategorical(probs=lib.tensor([0.2, 0.8])).enumerate_support(),
            c.param_shape,
        )

    e, t = both(run)
    for a, b in zip(e, t):
        close(a, b)


def test_sample_n():
    def run(lib):
        lib.manual_seed(4)
        with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
            return lib.distributions.Normal(lib.zeros(2), 1.0).sample_n(3)

    e, t = both(run)
    close(e, t, exact=True)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_gamma_rsample_second_derivative_raises(lib):
    """_standard_gamma_grad has no derivative: the first derivative of a Gamma
    sample has a graph, differentiating it raises PyTorch's NotImplementedError."""
    alpha = lib.tensor([1.5, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    lib.manual_seed(0)
    (g,) = lib.autograd.grad(lib.distributions.Gamma(alpha, 1.0).rsample().sum(), alpha, create_graph=True)
    assert g.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for '_standard_gamma_grad' is not implemented"):
        lib.autograd.grad(g.sum(), alpha)
