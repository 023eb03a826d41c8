"""``torch.distributions.half_cauchy``: where torch defines HalfCauchy (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import HalfCauchy

__all__ = ["HalfCauchy"]
