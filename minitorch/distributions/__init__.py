"""minitorch.distributions, as torch.distributions: parameterizable probability distributions
with sampling, log densities, entropies and KL divergences, written over tensor ops (as
PyTorch's are) so that gradients flow through log_prob, entropy and rsample."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import Distribution
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Beta, Chi2, Gamma
from . import beta, chi2  # noqa: F401,E402  (Beta's and Chi2's public modules, named by them)
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - the transforms are public here too, as in PyTorch
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
    "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution",
    "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence", "register_kl",
    "transform_to", "transforms",
]
__all__.extend(transforms.__all__)
