"""Constraints: the regions a distribution's parameters and samples live in.

A constraint's ``check(value)`` returns a bool tensor (lazy, like any op) saying where
`value` satisfies it, over ``value.shape`` less the constraint's ``event_dim`` rightmost
dimensions. Names and reprs are torch.distributions.constraints'.

>>> import lazytorch
>>> positive.check(lazytorch.tensor([1.0, -1.0]))
tensor([ True, False])
>>> simplex.check(lazytorch.tensor([0.25, 0.75]))
tensor(True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazytorch._dtype_info import finfo
from lazytorch.ir.dtypes import bool_
from lazytorch.ops import decomp as _linalg
from lazytorch.ops.creation import full
from lazytorch.ops.shape import cat as _cat
from lazytorch.ops.shape import stack as _stack

__all__ = [
    "Constraint",
    "MixtureSameFamilyConstraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A region over which a variable is valid; `is_discrete`, `event_dim` as torch's."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for variables whose support depends on other variables: not checked."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> _Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Any) -> Any:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether `constraint` is a dependent one (which validation skips)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@dependent_property``: a property on an instance, a dependent constraint on the
    class (a distribution's ``support`` that depends on its parameters)."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        is_discrete: Any = NotImplemented,
        event_dim: Any = NotImplemented,
    ) -> None:
        super().__init__(fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` over `reinterpreted_batch_ndims` more event dimensions: an event
    is valid where all its entries are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError(
                "reinterpreted_batch_ndims must be an int, got "
                f"{type(reinterpreted_batch_ndims).__name__}"
            )
        if reinterpreted_batch_ndims < 0:
            raise AssertionError(
                f"reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        keep = result.dim() - self.reinterpreted_batch_ndims
        return result.reshape((*result.shape[:keep], -1)).all(-1)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(Constraint):
    """A component distribution's support with the rightmost batch dimension (the
    components) added back before checking."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """The two values {0, 1}."""

    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors."""

    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Any:
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _IntegerInterval(Constraint):
    """The integers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _IntegerGreaterThan(Constraint):
    """The integers in ``[lower_bound, inf)``."""

    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line (everything but NaN)."""

    def check(self, value: Any) -> Any:
        return value == value  # False for NaNs


class _GreaterThan(Constraint):
    """``(lower_bound, inf]``."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    """``[lower_bound, inf)``."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """``[-inf, upper_bound)``."""

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _HalfOpenInterval(_Interval):
    """``[lower_bound, upper_bound)``."""

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """The unit simplex in the last dimension: ``x >= 0`` and ``x.sum(-1) == 1``."""

    event_dim = 1

    def check(self, value: Any) -> Any:
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _PositiveDefinite(Constraint):
    """Symmetric positive-definite matrices (every eigenvalue positive)."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        sym = (
            ((value - value.mT).abs() <= 1e-6 * (1 + value.abs()))
            .reshape(*value.shape[:-2], -1)
            .all(-1)
        )
        return sym & (_linalg.eigvalsh(value) > 0).all(-1)


class _Multinomial(Constraint):
    """Nonnegative values summing to at most `upper_bound` in the last dimension (torch's
    weaker check of a multinomial count vector)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Any) -> Any:
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        return (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)


class _CorrCholesky(Constraint):
    """Lower-Cholesky factors whose rows have unit length (of a correlation matrix)."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        tol = finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = (value.detach() ** 2).sum(-1).sqrt()
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        return full(
            tuple(value.shape[:-2]),
            value.shape[-2] == value.shape[-1],
            dtype=bool_,
            device=value.device,
        )


class _Symmetric(_Square):
    """Symmetric square matrices (to an absolute 1e-6 and torch's isclose rtol)."""

    def check(self, value: Any) -> Any:
        if value.shape[-2] != value.shape[-1]:
            return super().check(value)
        close = (value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()
        return close.all(-2).all(-1)


class _Cat(Constraint):
    """The constraints `cseq` applied to consecutive slices of `lengths` along `dim`, as
    ``torch.cat`` joins them."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        if lengths is None:
            lengths = [1] * len(self.cseq)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Any) -> Any:
        if not (-value.dim() <= self.dim < value.dim()):
            raise AssertionError(
                f"dim {self.dim} out of range for value with {value.dim()} dimensions"
            )
        checks = []
        start = 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start = start + length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """The constraints `cseq` applied to the slices along `dim`, as ``torch.stack``
    joins them."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value: Any) -> Any:
        if not (-value.dim() <= self.dim < value.dim()):
            raise AssertionError(
                f"dim {self.dim} out of range for value with {value.dim()} dimensions"
            )
        vs = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _stack([constr.check(v) for v, constr in zip(vs, self.cseq)], self.dim)


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
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
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
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
cat = _Cat
stack = _Stack
