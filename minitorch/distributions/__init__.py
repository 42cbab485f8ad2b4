"""minitorch.distributions, as torch.distributions: parameterizable probability distributions
with sampling, log densities, entropies and KL divergences, written over tensor ops (as
PyTorch's are) so that gradients flow through log_prob, entropy and rsample."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .dirichlet import Dirichlet
from .gamma import Beta, Chi2, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Chi2", "Dirichlet", "Distribution", "Gamma", "Independent", "MultivariateNormal",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Uniform", "constraints",
    "kl_divergence", "register_kl",
]
