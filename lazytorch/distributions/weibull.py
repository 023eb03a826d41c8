"""``torch.distributions.weibull``: where torch defines Weibull (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import Weibull

__all__ = ["Weibull"]
