"""Probability distributions with sampling, log densities and
reparameterized samples (rsample) that gradients flow through, the
constraints their parameters live in, transforms between constrained
spaces, and KL divergences."""

from ember.distributions import constraints, transforms
from ember.distributions.constraint_registry import biject_to, transform_to
from ember.distributions.continuous import (
    Beta,
    Cauchy,
    Chi2,
    Dirichlet,
    Exponential,
    Gamma,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)
from ember.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.more import ContinuousBernoulli, GeneralizedPareto, VonMises
from ember.distributions.multivariate import LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart
from ember.distributions.transformed import (
    FisherSnedecor,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Independent,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogNormal,
    MixtureSameFamily,
    Pareto,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
    Weibull,
)
from ember.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
]


def _alias_modules():
    """PyTorch's one-module-per-distribution names (torch.distributions.normal,
    ...), as modules holding the same classes."""
    import sys
    import types

    layout = {
        "bernoulli": ["Bernoulli"],
        "beta": ["Beta"],
        "binomial": ["Binomial"],
        "categorical": ["Categorical"],
        "cauchy": ["Cauchy"],
        "chi2": ["Chi2"],
        "continuous_bernoulli": ["ContinuousBernoulli"],
        "dirichlet": ["Dirichlet"],
        "distribution": ["Distribution"],
        "exp_family": ["ExponentialFamily"],
        "exponential": ["Exponential"],
        "fishersnedecor": ["FisherSnedecor"],
        "gamma": ["Gamma"],
        "generalized_pareto": ["GeneralizedPareto"],
        "geometric": ["Geometric"],
        "gumbel": ["Gumbel"],
        "half_cauchy": ["HalfCauchy"],
        "half_normal": ["HalfNormal"],
        "independent": ["Independent"],
        "inverse_gamma": ["InverseGamma"],
        "kumaraswamy": ["Kumaraswamy"],
        "laplace": ["Laplace"],
        "lkj_cholesky": ["LKJCholesky"],
        "log_normal": ["LogNormal"],
        "logistic_normal": ["LogisticNormal"],
        "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
        "mixture_same_family": ["MixtureSameFamily"],
        "multinomial": ["Multinomial"],
        "multivariate_normal": ["MultivariateNormal"],
        "negative_binomial": ["NegativeBinomial"],
        "normal": ["Normal"],
        "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
        "pareto": ["Pareto"],
        "poisson": ["Poisson"],
        "relaxed_bernoulli": ["RelaxedBernoulli"],
        "relaxed_categorical": ["RelaxedOneHotCategorical"],
        "studentT": ["StudentT"],
        "transformed_distribution": ["TransformedDistribution"],
        "uniform": ["Uniform"],
        "von_mises": ["VonMises"],
        "weibull": ["Weibull"],
        "wishart": ["Wishart"],
    }
    package = sys.modules[__name__]
    for name, members in layout.items():
        module = types.ModuleType(f"{__name__}.{name}")
        for member in members:
            setattr(module, member, getattr(package, member))
        module.__all__ = list(members)
        sys.modules[module.__name__] = module
        setattr(package, name, module)


_alias_modules()
del _alias_modules
