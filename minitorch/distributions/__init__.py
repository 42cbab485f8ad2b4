"""minitorch.distributions, as torch.distributions: parameterizable probability distributions
with sampling, log densities, entropies and KL divergences, written over tensor ops (as
PyTorch's are) so that gradients flow through log_prob, entropy and rsample."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Beta, Chi2, Gamma
from .generalized_pareto import GeneralizedPareto
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - the transforms are public here too, as in PyTorch
from .uniform import Uniform
from .weibull import Weibull

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution", "Exponential", "Gamma",
    "GeneralizedPareto", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
    "LogNormal", "LogisticNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "TransformedDistribution", "Uniform", "Weibull", "biject_to", "constraints", "kl_divergence", "register_kl",
    "transform_to", "transforms",
]
__all__.extend(transforms.__all__)
