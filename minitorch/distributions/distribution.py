"""Distribution: the base class of torch.distributions, with its shapes, argument and sample
validation (PyTorch's ValueError texts) and the defaults subclasses override."""
from __future__ import annotations

import operator
import warnings
from numbers import Number

import minitorch

from . import constraints
from .utils import broadcast_all, lazy_property

__all__ = ["Distribution"]


def _alias(path: str) -> property:
    """A read-only property that is another attribute of the distribution (a dotted path): a
    Normal's mean and mode are its loc, an Independent's mean is its base distribution's."""
    return property(operator.attrgetter(path))


class Distribution:
    """The abstract base class for probability distributions, as torch.distributions.Distribution."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=minitorch.Size(), event_shape=minitorch.Size(), validate_args=None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    + "Please set `arg_constraints = {}` or initialize the distribution "
                    + "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # not computed yet
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=minitorch.Size()):
        raise NotImplementedError

    def sample_n(self, n: int):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(minitorch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return minitorch.exp(self.entropy())

    def _extended_shape(self, sample_shape=minitorch.Size()):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, minitorch.Size):
            sample_shape = minitorch.Size(sample_shape)
        return minitorch.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """The checks of log_prob/cdf/icdf's value: a tensor, the event shape on the right,
        broadcastable with batch_shape + event_shape, inside the support."""
        if not isinstance(value, minitorch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = minitorch.Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                + "sample validation. Please initialize the distribution with "
                + "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, batch_shape, _instance, names=(), event_shape=minitorch.Size()):
        """expand's common body: a new instance of batch_shape and event_shape, unvalidated, whose
        `names` parameters (those self has) are expanded views; the caller sets the rest."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = minitorch.Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"


class _LocScale:
    """The loc and scale of a location-scale family (Normal, Cauchy, Laplace), broadcast together;
    numbers for both give a 0-d batch."""

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(minitorch.Size() if scalar else self.loc.size(), validate_args=validate_args)
