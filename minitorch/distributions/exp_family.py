"""ExponentialFamily, as torch.distributions.ExponentialFamily: densities of the form
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)), where a subclass gives its natural parameters
theta (`_natural_params`), its log normaliser F (`_log_normalizer`) and E[k(x)]
(`_mean_carrier_measure`). The entropy then follows from the Bregman divergence of F, with
F's gradient taken by autograd: H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
from __future__ import annotations

import minitorch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of the exponential families; its entropy serves any family that gives
    its natural parameters and log normaliser."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # The natural parameters become fresh leaves, so the result is a function of theta alone
        # (detached from the distribution's own parameters, as PyTorch's); create_graph keeps
        # it differentiable in theta.
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        with minitorch.enable_grad():
            log_norm = self._log_normalizer(*thetas)
            grads = minitorch.autograd.grad(log_norm.sum(), thetas, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for theta, grad in zip(thetas, grads):
            result = result - (theta * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
