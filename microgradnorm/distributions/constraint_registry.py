"""``biject_to`` and ``transform_to`` (``torch.distributions.constraint_registry``): for a
constraint, a transform from the unconstrained reals onto it, what optimizers of
constrained parameters and variational families use (optimize x freely, use
``transform_to(c)(x)``). ``biject_to`` gives a bijection (``StickBreakingTransform`` onto
the simplex); ``transform_to`` any such map (``SoftmaxTransform``). Both are
``ConstraintRegistry`` objects: ``register(constraint_class)(factory)`` adds a family.

Example:
    >>> t = transform_to(constraints.positive); scale = t(unconstrained)      # exp, shifted
"""

from . import constraints
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform,
                         identity_transform)
from .transforms_more import (IndependentTransform, LowerCholeskyTransform,
                              SoftmaxTransform, StickBreakingTransform)
from .utils import is_number

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A map from constraint classes to factories of transforms onto them.

    Example:
        >>> registry = ConstraintRegistry()
        >>> registry.register(constraints.positive, lambda c: ExpTransform())
    """

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Register ``factory(constraint) -> Transform`` for ``constraint``'s class (a
        decorator without ``factory``)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      f"constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*constraint_list):
    # register one factory for each constraint in both registries
    def decorator(factory):
        for constraint in constraint_list:
            biject_to.register(constraint, factory)
            transform_to.register(constraint, factory)
        return factory
    return decorator


@_both(constraints.real)
def _transform_to_real(constraint):
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return IndependentTransform(biject_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return IndependentTransform(transform_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@_both(constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint):
    return ExpTransform()


@_both(constraints.greater_than, constraints.greater_than_eq)   # positive too, as torch
def _transform_to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _transform_to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if is_number(lower) and lower == 0 and is_number(upper) and upper == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return LowerCholeskyTransform()
