"""biject_to and transform_to, as torch.distributions.constraint_registry: for a constraint, a
transform from unconstrained reals onto it. biject_to's are bijections (for reparameterising a
sampler or an optimiser's variables); transform_to's need only reach the set (softmax for the
simplex, L L^T for positive definite matrices). Both are keyed by the constraint's class."""
from __future__ import annotations

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories `factory(constraint) -> Transform`."""

    def __init__(self) -> None:
        self._registry: dict = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Registers factory for the constraint's class (an instance stands for its class); used
        bare it is a decorator."""
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint_list):
    """Registers the decorated factory in both registries for every constraint listed."""

    def decorator(factory):
        for constraint in constraint_list:
            biject_to.register(constraint, factory)
            transform_to.register(constraint, factory)
        return factory

    return decorator


@_both([constraints.real])
def _onto_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    inner = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(inner, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    inner = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(inner, constraint.reinterpreted_batch_ndims)


# positive and nonnegative are instances of the greater_than classes, so the (lower_bound,
# 1)-shifted exponential below serves them too, as in PyTorch.
@_both([constraints.greater_than, constraints.greater_than_eq])
def _onto_above(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


@_both([constraints.less_than])
def _onto_below(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


@_both([constraints.interval, constraints.half_open_interval])
def _onto_interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, Number) and low == 0 and isinstance(high, Number) and high == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_both([constraints.corr_cholesky])
def _onto_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
