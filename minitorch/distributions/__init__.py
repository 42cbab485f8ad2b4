"""minitorch.distributions, as torch.distributions: parameterizable probability distributions
with sampling, log densities, entropies and KL divergences, written over tensor ops (as
PyTorch's are) so that gradients flow through log_prob, entropy and rsample."""
from . import constraints
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import Distribution
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .fishersnedecor import FisherSnedecor
from .gamma import Beta, Chi2, Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .studentT import StudentT
from .uniform import Uniform
from .von_mises import VonMises
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Chi2", "Dirichlet", "Distribution", "Gamma", "Independent", "MultivariateNormal",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Uniform", "constraints",
    "kl_divergence", "register_kl",
    # directly parameterised families
    "Binomial", "ContinuousBernoulli", "ExponentialFamily", "FisherSnedecor", "Geometric", "Laplace", "LKJCholesky",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "NegativeBinomial", "Poisson", "StudentT",
    "VonMises", "Wishart",
]
