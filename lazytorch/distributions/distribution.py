"""`Distribution`: the base class, with torch's shapes, validation and sampling contract.

Everything a distribution computes is an ordinary lazytorch op: ``log_prob``, ``entropy``
and ``rsample`` record lazily and differentiate through autograd; draws come from the
default generator, so ``lazytorch.manual_seed`` makes them reproducible.

Argument validation (on by default, as torch's, and off under ``python -O`` or with
``Distribution.set_default_validate_args(False)``) needs the parameter values: checking
them is an implicit materialization, counted in ``lazytorch.metrics`` and refused in
strict mode — pass ``validate_args=False`` where a graph must not be cut.
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch.autograd import no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.utils import _EMPTY, lazy_property
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Size, Tensor

__all__ = ["Distribution"]


def _is_all_true(valid: Tensor, cause: str) -> bool:
    """Whether every entry of `valid` holds: a materialization named by `cause`."""
    ok = valid.all()
    implicit_point(ok, cause)
    return bool(ok)


class Distribution:
    """The abstract base class for probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: whether to validate arguments (None: the class default).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made from now on.

        >>> Distribution.set_default_validate_args(False)
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Any = _EMPTY,
        event_shape: Any = _EMPTY,
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue  # not made yet: the other parameterization was given
                value = getattr(self, param)
                valid = constraint.check(value)
                if not _is_all_true(valid, f"{type(self).__name__}() argument validation"):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution with the parameters expanded (not copied) to `batch_shape`."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each tensor argument must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        """A reparameterized sample: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = _EMPTY) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check `value`'s shape against batch and event shapes, and its values against the
        support (a materialization, as every validation)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        valid = support.check(value)
        if not _is_all_true(valid, f"{type(self).__name__}.log_prob() value validation"):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"
