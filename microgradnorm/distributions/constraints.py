"""The regions a distribution's parameters and samples live in
(``torch.distributions.constraints``): each constraint's ``check(value)`` is a bool tensor
of the value's shape less its ``event_dim`` rightmost dims, True where an event is valid.
``Distribution`` checks its parameters against ``arg_constraints`` and, with
``validate_args``, each value given to ``log_prob`` against its ``support``.

Example:
    >>> constraints.positive.check(mg.tensor([1.0, -1.0]))        # tensor([ True, False])
    >>> constraints.simplex.check(mg.tensor([0.25, 0.75]))        # tensor(True)
"""

from ..factories import full
from ..linalg import cholesky_ex, eigvalsh
from ..ops.logical import isclose

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval",
           "interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
           "MixtureSameFamilyConstraint", "multinomial",
           "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
           "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex",
           "square", "symmetric", "unit_interval"]


class Constraint:
    """A region of values: ``check(value)`` says which events of ``value`` are in it;
    ``is_discrete`` and ``event_dim`` (the rightmost dims one event spans) describe it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of value's shape less ``event_dim`` dims: True where valid."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """The place of a parameter whose region depends on the others (checked by nobody)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        """Whether the region is discrete, when it was given."""
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        """The event's dims, when they were given."""
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        """Refused: a dependent region has no check of its own."""
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """True for a dependent constraint (one ``Distribution`` does not check)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on an instance (``Uniform(0, 1).support``), a dependent constraint on the
    class (``Uniform.support``): torch's ``@constraints.dependent_property``."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A constraint whose last ``reinterpreted_batch_ndims`` dims are part of one event:
    valid where every entry of the event is."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        """The base constraint's."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        """The base constraint's, plus the reinterpreted dims."""
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        """The base check, all over the reinterpreted dims."""
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = result.dim() - self.reinterpreted_batch_ndims
        return result.reshape(result.shape[:kept] + (-1,)).all(-1)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value):
        """Each entry 0 or 1."""
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors: entries 0 or 1 summing to 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        """Each row of 0s and 1s with one 1."""
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & value.sum(-1).eq(1)


class _Bounded(Constraint):
    # the repr of a constraint with bounds: Interval(lower_bound=0.0, upper_bound=1.0)
    bounds = ()

    def __repr__(self):
        given = ", ".join(f"{name}={getattr(self, name)}" for name in self.bounds)
        return f"{self.__class__.__name__[1:]}({given})"


class _Above(_Bounded):
    # a region bounded below
    bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound


class _Between(_Bounded):
    # a region bounded on both sides
    bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound


class _IntegerInterval(_Between):
    """The integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        """Whole and within the bounds."""
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Above):
    """The integers from lower_bound up."""

    is_discrete = True

    def check(self, value):
        """Whole and at least the bound."""
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended real line: anything but NaN."""

    def check(self, value):
        """False at NaN."""
        return value == value


class _GreaterThan(_Above):
    """(lower_bound, inf]."""

    def check(self, value):
        """Strictly above the bound."""
        return self.lower_bound < value


class _GreaterThanEq(_Above):
    """[lower_bound, inf)."""

    def check(self, value):
        """At least the bound."""
        return self.lower_bound <= value


class _LessThan(_Bounded):
    """[-inf, upper_bound)."""

    bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        """Strictly below the bound."""
        return value < self.upper_bound


class _Interval(_Between):
    """[lower_bound, upper_bound]."""

    def check(self, value):
        """Within the bounds, both included."""
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Between):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        """Within the bounds, the upper one excluded."""
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Probability vectors: entries >= 0 summing to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        """Non-negative rows whose sum is 1 within 1e-6."""
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Counts: non-negative entries summing to at most ``upper_bound`` (torch checks the
    sum's upper bound only)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        """Non-negative rows whose sum is at most the bound."""
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: the component's constraint checked on the value with the
    component dim put back, every component valid.

    Args:
        base_constraint: the component distribution's support.

    Example:
        >>> MixtureSameFamilyConstraint(positive).check(mg.tensor([1.0, -1.0]))
    """

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        """The component's."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        """The component's."""
        return self.base_constraint.event_dim

    def check(self, value):
        """The component's check of value unsqueezed at the component dim, all of it."""
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(result.shape[:keep] + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value):
        """Zero above the diagonal."""
        return (value.tril() == value).reshape(value.shape[:-2] + (-1,)).all(-1)


class _LowerCholesky(_LowerTriangular):
    """Lower-triangular matrices with a positive diagonal: a Cholesky factor."""

    def check(self, value):
        """Lower triangular, and positive on the diagonal."""
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return super().check(value) & positive_diagonal


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        """As many rows as columns (one answer for the whole batch)."""
        return full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=bool,
                    device=value.device)


class _Symmetric(_Square):
    """Symmetric matrices (within an absolute 1e-6)."""

    def check(self, value):
        """Square, and equal to the transpose within 1e-6."""
        square = super().check(value)
        if not square.all():
            return square
        return isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are >= 0."""

    def check(self, value):
        """Symmetric, with no negative eigenvalue."""
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor (eigenvalues > 0)."""

    def check(self, value):
        """Symmetric, and a Cholesky factorization succeeds."""
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return cholesky_ex(value).info.eq(0)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
multinomial = _Multinomial
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
# the constraints built of others, and Cholesky factors of correlation matrices
from .constraints_more import cat, corr_cholesky, stack  # noqa: E402
__all__ += ["cat", "corr_cholesky", "stack"]
