"""kl_divergence(p, q) and register_kl, as torch.distributions.kl: a registry of closed forms
keyed by the pair of types, looked up by the most specific match; PyTorch's formulas for the
pairs among the distributions minitorch has."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering

import minitorch
from minitorch.nn.functional import softplus

from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Beta, Gamma
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}  # the registered (type_p, type_q) -> function
_KL_MEMOIZE: dict = {}  # every (type(p), type(q)) looked up so far -> its match

inf = float("inf")


def register_kl(type_p, type_q):
    """Decorator registering a pairwise function with kl_divergence."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # the lookup order may have changed
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The most specific registered match (single inheritance assumed), warning when ambiguous."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=2,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p || q), batched over the batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _infinite_like(tensor):
    return minitorch.full_like(tensor, inf)


def _x_log_x(tensor):
    return minitorch.xlogy(tensor, tensor)  # 0 at x = 0


def _batch_trace_XXT(bmat):
    n, m = bmat.size(-1), bmat.size(-2)
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(bmat.shape[:-2])


# Same distributions


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1[q.probs == 0] = inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2[q.probs == 1] = inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * minitorch.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * minitorch.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * minitorch.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = minitorch.lgamma(sum_p_concentration) - minitorch.lgamma(sum_q_concentration)
    t2 = (minitorch.lgamma(p.concentration) - minitorch.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = minitorch.digamma(p.concentration) - minitorch.digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = minitorch.lgamma(q.concentration) - minitorch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * minitorch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with"
            "                          different event shapes cannot be computed"  # PyTorch's text, spaces and all
        )
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = minitorch.broadcast_shapes(qL.shape[:-2], pL.shape[:-2])
    n = p.event_shape[0]
    solved = minitorch.linalg.solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)), upper=False)
    term2 = _batch_trace_XXT(solved)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = inf
    return result


# Different distributions


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    E_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (p.concentration1 + p.concentration0 + 1) + E_beta.pow(2)) * 0.5
    t4 = q.loc * E_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = inf
    return result


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * minitorch.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration - p.concentration.lgamma()
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Normal, Beta)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = minitorch.log(common_term)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term) / common_term
    t4 = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = t3 + t4 - t1 - t2
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = inf
    return result


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    result[p.low < q.support.lower_bound] = inf
    return result


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


# Directly parameterised families

from .binomial import Binomial  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .exp_family import ExponentialFamily  # noqa: E402
from .geometric import Geometric  # noqa: E402
from .laplace import Laplace  # noqa: E402
from .lowrank_multivariate_normal import (  # noqa: E402
    LowRankMultivariateNormal, _batch_lowrank_logdet, _batch_lowrank_mahalanobis, _scaled_factor_t,
)
from .poisson import Poisson  # noqa: E402


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normaliser F between the natural parameters:
    F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>, the gradient by autograd."""
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be computed "
            "using Bregman divergences"
        )
    p_thetas = [t.detach().requires_grad_() for t in p._natural_params]
    q_thetas = q._natural_params
    with minitorch.enable_grad():
        p_log_norm = p._log_normalizer(*p_thetas)
        grads = minitorch.autograd.grad(p_log_norm.sum(), p_thetas, create_graph=True)
    result = q._log_normalizer(*q_thetas) - p_log_norm
    for p_theta, q_theta, grad in zip(p_thetas, q_thetas, grads):
        result = result - _sum_rightmost((q_theta - p_theta) * grad, len(q.event_shape))
    return result


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # finite only where the counts are equal; infinite where p can exceed q's count
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    per_trial = p.probs * (p.logits - q.logits) + minitorch.log1p(-p.probs) - minitorch.log1p(-q.probs)
    kl = p.total_count * per_trial
    return minitorch.where(p.total_count > q.total_count, inf, kl)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    cross = p.mean * (p.logits - q.logits)
    log_norms = p._cont_bern_log_norm() - q._cont_bern_log_norm()
    return cross + log_norms + minitorch.log1p(-p.probs) - minitorch.log1p(-q.probs)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # E_p[log q(x)] = E_p[x] log(1 - q) + log q, E_p[x] = (1 - p) / p
    return -p.entropy() - minitorch.log1p(-q.probs) / p.probs - q.logits


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -ratio.log() + distance / q.scale + ratio * minitorch.exp(-distance / p.scale) - 1


def _lowrank_inverse_factor(q):
    """C^-1 W^T D^-1 for q's capacitance factor C, batched over the broadcast batch shape."""
    scaled_t = _scaled_factor_t(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag)
    cap = q._capacitance_tril
    shape = minitorch.broadcast_shapes(cap.shape[:-2], scaled_t.shape[:-2])
    return minitorch.linalg.solve_triangular(
        cap.expand(shape + cap.shape[-2:]), scaled_t.expand(shape + scaled_t.shape[-2:]), upper=False
    )


def _lowrank_log_det(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_distance(q, p_loc):
    """(q.loc - p_loc)^T Sigma_q^-1 (q.loc - p_loc) by Woodbury."""
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p_loc,
                                      q._capacitance_tril)


def _same_event_shape(p, q, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    # 2 KL = log det Sigma_q - log det Sigma_p + tr(Sigma_q^-1 Sigma_p) + distance - n, with
    # Sigma_q^-1 = D_q^-1 - A^T A (A = C^-1 W^T D^-1) and Sigma_p = W_p W_p^T + D_p
    _same_event_shape(p, q, "Low Rank Multivariate Normals")
    Wp, Dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    Dq = q._unbroadcasted_cov_diag
    A = _lowrank_inverse_factor(q)
    trace = (
        (Dp / Dq).sum(-1)
        + _batch_trace_XXT(Wp * Dq.rsqrt().unsqueeze(-1))
        - _batch_trace_XXT(A * Dp.sqrt().unsqueeze(-2))
        - _batch_trace_XXT(minitorch.matmul(A, Wp))
    )
    log_dets = _lowrank_log_det(q) - _lowrank_log_det(p)
    return 0.5 * (log_dets + trace + _lowrank_distance(q, p.loc) - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    Lp = p._unbroadcasted_scale_tril
    A = _lowrank_inverse_factor(q)
    trace = _batch_trace_XXT(Lp * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(
        minitorch.matmul(A, Lp)
    )
    log_dets = _lowrank_log_det(q) - 2 * Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return 0.5 * (log_dets + trace + _lowrank_distance(q, p.loc) - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    # tr(Sigma_q^-1 Sigma_p) = |Lq^-1 W_p|^2 + |Lq^-1 D_p^1/2|^2 (Frobenius)
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    Lq = q._unbroadcasted_scale_tril
    Wp, Dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    n, m = p.event_shape[0], Wp.shape[-1]
    batch = minitorch.broadcast_shapes(Lq.shape[:-2], Wp.shape[:-2])
    Lq = Lq.expand(batch + (n, n))
    trace = _batch_trace_XXT(minitorch.linalg.solve_triangular(Lq, Wp.expand(batch + (n, m)), upper=False))
    root_dp = minitorch.diag_embed(Dp.sqrt()).expand(batch + (n, n))
    trace = trace + _batch_trace_XXT(minitorch.linalg.solve_triangular(Lq, root_dp, upper=False))
    log_dets = 2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_log_det(p)
    return 0.5 * (log_dets + trace + _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc) - n)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # E_p[log q(x)] = P(x = 1) log(rate) - rate (log 0! = log 1! = 0)
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - minitorch.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    # E_p[(x - m)^2] / (2 s^2) with E_p[x^2] = Var + mean^2
    log_norm = 0.5 * math.log(2.0 * math.pi) + minitorch.log(q.scale)
    second_moment = p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean + q.loc.pow(2)
    return -p.entropy() + log_norm + second_moment / (2.0 * q.scale.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # infinite where [0, 1] is not inside [low, high]
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return minitorch.where(outside, inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # E_p[log q(x)] = E_p[x] logit(q) + log(1 - q) + log C(q); infinite where [low, high] leaves [0, 1]
    result = -p.entropy() - p.mean * q.logits - minitorch.log1p(-q.probs) - q._cont_bern_log_norm()
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return minitorch.where(outside, inf, result)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    # E_p[(x - m)^2] = 2 b^2 + (mu - m)^2
    variance_ratio = (p.scale / q.scale).pow(2)
    distance = (p.loc - q.loc).pow(2) / (2 * q.scale.pow(2))
    return -0.5 * minitorch.log(2 * variance_ratio / math.pi) + variance_ratio + distance - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E_p|x - m| for x ~ N(mu, s): s sqrt(2 / pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2)), d = mu - m
    d = p.loc - q.loc
    mean_abs = p.scale * math.sqrt(2 / math.pi) * minitorch.exp(-0.5 * (d / p.scale).pow(2)) + d * minitorch.erf(
        d / (p.scale * math.sqrt(2))
    )
    return -p.entropy() + minitorch.log(2 * q.scale) + mean_abs / q.scale


@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Uniform)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_outside_support(p, q):
    """p puts mass where q has none."""
    return _infinite_like(p.mean)


# Transformed and heavy-tailed families


def _inf_where(mask, value):
    return minitorch.where(mask, inf, value)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019): log(((s_p + s_q)^2 + (m_p - m_q)^2) / (4 s_p s_q)).
    spread = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return spread.log() - (4 * p.scale * q.scale).log()


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    scale_ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    tail = minitorch.exp((1 + scale_ratio).lgamma() - shift)
    return shift - scale_ratio.log() + scale_ratio * euler_constant + tail - (1 + euler_constant)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # Equal bijections leave the divergence of the bases unchanged.
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return ratio - q.concentration * ratio.log() + q.concentration.lgamma() + (q.concentration - 1) * euler_constant - 1


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rs = p.rate * q.scale
    z = q.loc / q.scale
    return rs.log() - 1 - z + z.exp() * rs / (rs + 1) + rs.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    # E_p[(x - m)^2] = 2 / rate^2 - 2 m / rate + m^2, halved over the variance.
    second_moment = rate2.reciprocal() - q.loc / p.rate + 0.5 * q.loc.pow(2)
    return 0.5 * (2 * math.pi * rate2 * var).log() - 1 + second_moment / var


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a = p.concentration
    bs = p.rate * q.scale
    z = q.loc / q.scale
    neg_entropy_part = (a - 1) * a.digamma() - a.lgamma() - a
    return neg_entropy_part + bs.log() + a / bs + z.exp() * (1 + bs.reciprocal()).pow(-a) - z


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    centred = (p.mean - q.loc) / q.scale
    return (
        -(ratio / math.sqrt(2 * math.pi)).log()
        + (math.pi * ratio * 0.5).pow(2) / 3
        + 0.5 * centred.pow(2)
        - (euler_constant + 1)
    )


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    m = p.loc / q.scale
    v = (p.scale / q.scale).pow(2)
    z = q.loc / q.scale
    return m - z - 0.5 * v.log() + minitorch.exp(z - m + 0.5 * v) - 0.5 * (1 + math.log(2 * math.pi))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    a = p.alpha
    sr = p.scale * q.rate
    result = (a / sr).log() - a.reciprocal() + a * sr / (a - 1) - 1
    return _inf_where(a <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    a, k = p.alpha, q.concentration
    mean_log = p.scale.log() + a.reciprocal()  # E_p[log x]
    result = (
        a.log() - mean_log + k.lgamma() - k * q.rate.log() + (1 - k) * mean_log + q.rate * p.scale * a / (a - 1) - 1
    )
    return _inf_where(a <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    a = p.alpha
    per_alpha = p.scale / (a - 1)
    spread = a * per_alpha.pow(2) / (a - 2) + (a * per_alpha - q.loc).pow(2)  # E_p[(x - m)^2]
    result = (math.sqrt(2 * math.pi) * q.scale * a / p.scale).log() - a.reciprocal() + spread / (2 * q.scale.pow(2)) - 1
    return _inf_where(a <= 2, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * p.mean - ((p.high - p.low) * q.rate).log()
    return _inf_where(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    width_ratio = q.scale / (p.high - p.low)
    hi = (p.high - q.loc) / q.scale
    lo = (p.low - q.loc) / q.scale
    return width_ratio.log() + 0.5 * (hi + lo) - width_ratio * (minitorch.exp(-hi) - minitorch.exp(-lo))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    mean_log = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width  # E_p[log x]
    result = (q.alpha + 1) * mean_log - (q.alpha * q.scale.pow(q.alpha) * width).log()
    return _inf_where(p.low < q.support.lower_bound, result)


# Supports that q does not cover: p puts mass where q's density is 0.


@register_kl(Beta, Pareto)
@register_kl(Exponential, Beta)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
@register_kl(Gamma, Pareto)
@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Normal, Pareto)
@register_kl(Pareto, Beta)
@register_kl(Pareto, Uniform)
def _kl_support_not_covered(p, q):
    return _infinite_like(p.mean)  # any of p's batch-shaped tensors
