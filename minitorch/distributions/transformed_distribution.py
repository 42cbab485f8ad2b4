"""TransformedDistribution(base, transforms), as torch.distributions.TransformedDistribution:
draws are transforms applied to the base's draws, and the density is the base's at the
inverted value less each transform's log |Jacobian| (change of variables). Transforms that
widen the event (StickBreaking, Reshape) turn base batch dims into event dims."""
from __future__ import annotations

import minitorch

from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")

        chain = ComposeTransform(self.transforms)
        base_shape = minitorch.Size(base_distribution.batch_shape + base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least {chain.domain.event_dim}, "
                f"but got {base_shape}."
            )
        shape = chain.forward_shape(base_shape)
        # Parameters of the transforms may broadcast the base: expand it to what they need.
        needed = chain.inverse_shape(shape)
        if needed != base_shape:
            base_distribution = base_distribution.expand(needed[: len(needed) - base_event_dim])
        # The chain's input events may span base batch dims: those become event dims.
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution

        event_dim = max(chain.codomain.event_dim, base_event_dim + chain.codomain.event_dim - chain.domain.event_dim)
        cut = len(shape) - event_dim
        super().__init__(minitorch.Size(shape[:cut]), minitorch.Size(shape[cut:]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = minitorch.Size(batch_shape)
        base_shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            base_shape = t.inverse_shape(base_shape)
        new.base_dist = self.base_dist.expand(base_shape[: len(base_shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            value = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                value = t(value)
            return value

    def rsample(self, sample_shape=minitorch.Size()):
        value = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            value = t(value)
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # Walk back from the value to the base, subtracting each step's log |Jacobian| summed
        # over the event dims that step does not itself sum.
        event_dim = len(self.event_shape)
        total = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return total + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """The base's cdf turned into this one's: flipped where the transforms decrease."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value
